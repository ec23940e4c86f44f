#include "engine/uop/atomic_file.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "engine/uop/error.h"

namespace ts {
namespace {

// The temporary files being written, for remove_unfinished_files(): fixed slots a signal handler can read without
// locks or allocation. A slot is taken (1) while its name is copied in and armed (2) once the name is whole.
constexpr int kSlots = 16;
constexpr size_t kPathMax = 4096;
std::atomic<int> g_state[kSlots];
char g_names[kSlots][kPathMax];

int take_slot(const std::string& tmp) {
  if (tmp.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_names[i], tmp.c_str(), tmp.size() + 1);
    g_state[i].store(2);
    return i;
  }
  return -1;  // more files at once than slots: that one is not removed by a signal handler
}

void free_slot(int i) {
  if (i >= 0) g_state[i].store(0);
}

std::atomic<unsigned long long> g_counter{0};

// The temporary files of `target` that a process killed while writing left (TARGET.tmp.PID.N whose PID no longer
// runs): the next write of the target removes them.
void remove_stale_temporaries(const std::string& target) {
  const std::filesystem::path t(target);
  const std::string prefix = t.filename().string() + ".tmp.";
  std::error_code ec;
  std::filesystem::directory_iterator it(t.has_parent_path() ? t.parent_path() : std::filesystem::path("."), ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || *end != '.' || pid == ::getpid()) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to ask)
    std::error_code rm;
    std::filesystem::remove(it->path(), rm);
  }
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string what, bool durable) : path_(std::move(path)), what_(std::move(what)), durable_(durable) {
  struct stat st;
  in_place_ = ::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (in_place_) {
    f_ = std::fopen(path_.c_str(), "wb");
    if (!f_) fail(errno);
    return;
  }
  // a symbolic link keeps pointing where it did: its target is the file replaced
  target_ = path_;
  if (::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    if (char* real = ::realpath(path_.c_str(), nullptr)) target_ = real, std::free(real);
  if (durable_) remove_stale_temporaries(target_);
  tmp_ = target_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_counter++);
  slot_ = take_slot(tmp_);
  // O_EXCL: never through a file or link someone else put there
  f_ = std::fopen(tmp_.c_str(), "wbx");
  if (!f_) {
    const int e = errno;
    tmp_.clear();  // not ours to remove
    fail(e);
  }
}

AtomicFile::~AtomicFile() {
  if (f_) std::fclose(f_);
  if (!done_ && !in_place_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  free_slot(slot_);
}

void AtomicFile::write(std::string_view bytes) {
  if (err_ || bytes.empty()) return;
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size()) err_ = errno ? errno : EIO;
}

void AtomicFile::commit() {
  if (done_) return;
  int e = err_;
  errno = 0;
  if (!e && std::fflush(f_) != 0) e = errno ? errno : EIO;
  if (!e && durable_ && !in_place_ && ::fsync(::fileno(f_)) != 0) e = errno;
  const int closed = std::fclose(f_);
  f_ = nullptr;
  if (!e && closed != 0) e = errno ? errno : EIO;
  if (e) fail(e);
  if (!in_place_ && std::rename(tmp_.c_str(), target_.c_str()) != 0) fail(errno);
  done_ = true;
  free_slot(slot_);
  slot_ = -1;
}

void AtomicFile::fail(int err) {
  if (f_) std::fclose(f_);
  f_ = nullptr;
  if (!in_place_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  free_slot(slot_);
  slot_ = -1;
  done_ = true;  // nothing left to remove
  std::string msg = "cannot write " + what_ + " " + path_ + ": " + std::strerror(err);
  if (!in_place_) msg += " (the file there before, if any, is unchanged)";
  throw Error(msg);
}

void write_file_atomically(const std::string& path, const std::string& what, std::string_view bytes, bool durable) {
  AtomicFile f(path, what, durable);
  f.write(bytes);
  f.commit();
}

void remove_unfinished_files() {
  for (int i = 0; i < kSlots; ++i)
    if (g_state[i].load() == 2) ::unlink(g_names[i]);
}

}  // namespace ts
