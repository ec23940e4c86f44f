#include "engine/runtime/disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include "engine/uop/atomic_file.h"
#include "engine/uop/error.h"
#include "engine/uop/sha256.h"

namespace ts {
namespace {

std::atomic<uint64_t> g_max_bytes{256ull << 20};

std::mutex g_errors_mu;
uint64_t g_write_errors = 0;
std::string g_last_write_error;

constexpr size_t kMagic = 8, kSum = 32;
constexpr uint64_t kLargestEntry = 1ull << 30;  // a larger file is no entry of ours
constexpr time_t kStaleTemporary = 3600;        // a writer's temporary file this old was left by a killed process

void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}

// the whole file, or nothing; `fd` stays open for the caller (to mark the entry used)
std::optional<std::string> read_whole(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > kLargestEntry) return std::nullopt;
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  return bytes;
}

// the payload of an entry's bytes when they are exactly the format for this magic and key
std::optional<std::string> parse_entry(const std::string& b, const std::string& magic, std::string_view key) {
  if (b.size() < kMagic + 8 + 8 + kSum || b.compare(0, kMagic, magic) != 0) return std::nullopt;
  const uint64_t klen = get_u64(b, kMagic);
  if (klen != key.size() || klen > b.size() - (kMagic + 16 + kSum)) return std::nullopt;
  if (b.compare(kMagic + 8, klen, key) != 0) return std::nullopt;
  const size_t at = kMagic + 8 + klen;
  const uint64_t plen = get_u64(b, at);
  if (plen != b.size() - (at + 8 + kSum)) return std::nullopt;
  const auto sum = sha256(std::string_view(b.data(), b.size() - kSum));
  if (std::memcmp(sum.data(), b.data() + b.size() - kSum, kSum) != 0) return std::nullopt;
  return b.substr(at + 8, plen);
}

struct Entry {
  timespec used;  // the access time: a hit sets it
  timespec written;
  uint64_t bytes;
  std::string name;
};

bool before(const timespec& a, const timespec& b) { return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec; }

// The entries of `dir` (the files whose names end in `ext`), and the removal of temporary files of entries that a
// killed writer left more than an hour ago.
std::vector<Entry> scan(const std::string& dir, const std::string& ext) {
  std::vector<Entry> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  const int dfd = ::dirfd(d);
  const std::string tmp_mark = ext + ".tmp.";
  const time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st;
    if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
      out.push_back({st.st_atim, st.st_mtim, static_cast<uint64_t>(st.st_size), name});
    } else if (name.find(tmp_mark) != std::string::npos && now - st.st_mtim.tv_sec > kStaleTemporary) {
      ::unlinkat(dfd, name.c_str(), 0);
    }
  }
  ::closedir(d);
  return out;
}

}  // namespace

void set_disk_cache_max_bytes(uint64_t bytes) { g_max_bytes = bytes; }
uint64_t disk_cache_max_bytes() { return g_max_bytes; }

DiskCache::DiskCache(std::string dir, std::string ext, std::string_view magic, std::string what, uint64_t max_bytes)
    : dir_(std::move(dir)), ext_(std::move(ext)), magic_(magic), what_(std::move(what)),
      max_bytes_(max_bytes ? max_bytes : disk_cache_max_bytes()) {
  if (magic_.size() != kMagic) throw Error("a disk cache's magic is 8 bytes, not '" + magic_ + "'");
}

std::string DiskCache::path_of(std::string_view key) const {
  const auto h = Sha256().update(magic_).update(key).digest();
  return dir_ + "/" + to_hex(h, 16) + ext_;
}

std::optional<std::string> DiskCache::get(std::string_view key) {
  const std::string path = path_of(key);
  std::optional<std::string> payload;
  bool present = false;
  if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    present = true;
    if (auto bytes = read_whole(fd)) payload = parse_entry(*bytes, magic_, key);
    if (payload) {
      const timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};  // used now; its write time stays
      ::futimens(fd, times);
    }
    ::close(fd);
  }
  std::lock_guard lock(mu_);
  if (payload) {
    stats_.hits++;
  } else {
    stats_.misses++;
    if (present) stats_.rejected++;
  }
  return payload;
}

std::string DiskCache::put(std::string_view key, std::string_view payload) {
  std::string head(magic_);
  put_u64(head, key.size());
  const uint64_t bytes = head.size() + key.size() + 8 + payload.size() + kSum;
  if (bytes > max_bytes_) return {};  // it would only push every other entry out, then itself
  std::string err;
  try {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw Error("cannot create the cache directory " + dir_ + ": " + ec.message());
    std::string mid;
    put_u64(mid, payload.size());
    const auto sum = Sha256().update(head).update(key).update(mid).update(payload).digest();
    AtomicFile f(path_of(key), what_);
    f.write(head);
    f.write(key);
    f.write(mid);
    f.write(payload);
    f.write(sum.data(), sum.size());
    f.commit();
  } catch (const Error& e) {
    err = e.what();
  }
  {
    std::lock_guard lock(mu_);
    if (err.empty()) {
      stats_.writes++;
    } else {
      stats_.write_errors++;
      stats_.last_write_error = err;
    }
  }
  if (!err.empty()) {
    std::lock_guard lock(g_errors_mu);
    g_write_errors++;
    g_last_write_error = err;
    return err;
  }
  keep_bound(bytes);
  return {};
}

// Counts the folder's entries at this process's first write and whenever its count passes the bound (other processes
// write there too), then removes the least recently used until the rest fill at most 90% of the bound, so a full
// cache is scanned again only after a tenth of it was written anew.
void DiskCache::keep_bound(uint64_t written) {
  std::lock_guard lock(bound_mu_);
  total_ += written;
  if (total_known_ && total_ <= max_bytes_) return;
  std::vector<Entry> entries = scan(dir_, ext_);
  total_ = 0;
  for (const Entry& e : entries) total_ += e.bytes;
  total_known_ = true;
  if (total_ <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (before(a.used, b.used) || before(b.used, a.used)) return before(a.used, b.used);
    if (before(a.written, b.written) || before(b.written, a.written)) return before(a.written, b.written);
    return a.name < b.name;
  });
  const uint64_t target = max_bytes_ / 10 * 9;
  uint64_t removed = 0;
  for (const Entry& e : entries) {
    if (total_ <= target) break;
    // another process may have removed it first: it is gone either way
    const bool gone = ::unlink((dir_ + "/" + e.name).c_str()) == 0;
    if (gone || errno == ENOENT) total_ -= e.bytes;
    removed += gone;
  }
  std::lock_guard s(mu_);
  stats_.evicted += removed;
}

DiskCacheStats DiskCache::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

uint64_t disk_cache_write_errors(std::string* last) {
  std::lock_guard lock(g_errors_mu);
  if (last) *last = g_last_write_error;
  return g_write_errors;
}

}  // namespace ts
