#pragma once
// A folder of compiled kernels kept across processes: the CPU JIT's object code and Vulkan's SPIR-V. Each entry is one
// file named by a hash of its key (SHA-256), holding the whole key, the payload and a SHA-256 of both:
//   magic (8 bytes, the format's version) | u64 key length | key | u64 payload length | payload | SHA-256 of all before
// A file that is not exactly that (cut, garbage, a flipped bit, another format version, another key that hashed the
// same) is a miss: the caller compiles again and the entry is rewritten, never trusted. Entries are written whole or
// not at all (atomic_file.h), so processes may share the folder. The entries' total size is bounded: past the bound,
// the least recently used (a hit sets an entry's access time) are removed until the rest fill at most 90% of it.
// Thread-safe. A folder that cannot be written costs only the next process its compiles: put() says why, and the
// failures of every cache in the process are counted for one note at its end (disk_cache_write_errors).
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace ts {

// The bound on each cache's entries in bytes, for the caches made after it is set (the command line sets it from
// TINYSCOPE_CACHE_MB); 256 MiB unless set.
void set_disk_cache_max_bytes(uint64_t bytes);
uint64_t disk_cache_max_bytes();

struct DiskCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;    // no entry, or one not trusted (counted in rejected too)
  uint64_t rejected = 0;  // entries present but not whole, not this format, another key's or failing their checksum
  uint64_t writes = 0;
  uint64_t write_errors = 0;
  uint64_t evicted = 0;   // entries this process removed to keep the bound
  std::string last_write_error;
};

class DiskCache {
 public:
  // dir: the entries' folder, created at the first write; ext: the end of their file names (".o", ".spv"), which no
  // other file in `dir` may have; magic: the 8 bytes every entry opens with (a new format gets new ones); what: an
  // entry in messages ("the SPIR-V cache entry"); max_bytes: the bound (0: disk_cache_max_bytes()).
  DiskCache(std::string dir, std::string ext, std::string_view magic, std::string what, uint64_t max_bytes = 0);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // The payload kept under `key`, or nothing (a miss). A hit marks the entry as used now.
  std::optional<std::string> get(std::string_view key);
  // Keeps `payload` under `key`, then removes the least recently used entries past the bound (an entry larger than the
  // whole bound is not kept). "" when written, else why not ("cannot write the SPIR-V cache entry ...: No space left on
  // device").
  std::string put(std::string_view key, std::string_view payload);

  std::string path_of(std::string_view key) const;  // the file of `key`'s entry
  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }
  DiskCacheStats stats() const;

 private:
  void keep_bound(uint64_t written);
  std::string dir_, ext_, magic_, what_;
  uint64_t max_bytes_;
  mutable std::mutex mu_;  // stats_
  DiskCacheStats stats_;
  std::mutex bound_mu_;    // one scan of the folder at a time in this process
  bool total_known_ = false;
  uint64_t total_ = 0;     // the entries' bytes as this process last counted them, plus what it wrote since
};

// The writes that failed in this process, over every DiskCache; *last: the last one's reason.
uint64_t disk_cache_write_errors(std::string* last = nullptr);

}  // namespace ts
