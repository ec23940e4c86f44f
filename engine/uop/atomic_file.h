#pragma once
// A file written whole or not at all. The bytes go to a temporary file beside the target (TARGET.tmp.PID.N), which is
// renamed over the target once every byte is written, so a reader (another process sharing a cache, a viewer, the next
// run) sees the old file, no file, or the whole new one, never a torn one. A failure (a full disk, a file size limit,
// a missing directory) removes the temporary file, leaves the target as it was, and throws ts::Error naming the target
// and the cause ("cannot write the trace t.json: No space left on device"). A process killed while writing leaves the
// target as it was (and its temporary file, which the next durable write of that target removes).
#include <cstdio>
#include <string>
#include <string_view>

namespace ts {

class AtomicFile {
 public:
  // `what` names the file in errors ("the trace", "the SPIR-V cache entry"). `durable`: flushed to the disk (fsync)
  // before the rename, so a power cut cannot leave an empty target either. A target that exists and is not a regular
  // file (/dev/stdout, /dev/full, a FIFO) is written in place: it cannot be renamed over.
  AtomicFile(std::string path, std::string what, bool durable = false);
  ~AtomicFile();  // without commit(): the temporary file is removed, the target untouched
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);  // buffered; a failure is reported by commit() (or here when it is certain)
  void write(const void* data, size_t n) { write(std::string_view(static_cast<const char*>(data), n)); }
  void commit();  // flush, close, rename over the target; throws ts::Error on any failure

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(int err);
  std::string path_, what_, target_, tmp_;
  std::FILE* f_ = nullptr;
  int slot_ = -1;  // in the table remove_unfinished_files() reads
  int err_ = 0;
  bool durable_ = false, in_place_ = false, done_ = false;
};

// Writes `bytes` to `path` whole or not at all (AtomicFile).
void write_file_atomically(const std::string& path, const std::string& what, std::string_view bytes, bool durable = false);

// Removes the temporary files of every AtomicFile being written now. Async-signal-safe: for a handler that ends the
// process at once (a second SIGINT), so it leaves no temporary file behind.
void remove_unfinished_files();

}  // namespace ts
