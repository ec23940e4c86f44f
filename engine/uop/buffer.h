#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/uop/uop.h"

namespace ts {

// Device storage behind a BUFFER node (the reference keeps it in a side table; we hang it on the node).
// Host-addressable on every device this engine runs (PYTHON, CPU, INTERP).
struct Buffer {
  std::string device;
  DType dtype = nullptr;
  int64_t size = 0;  // elements
  void* ptr = nullptr;
  std::function<void(void*, size_t)> release;  // returns the memory to its allocator
  size_t nbytes() const { return static_cast<size_t>(size) * dtype->itemsize(); }
  ~Buffer() {
    if (release && ptr) release(ptr, nbytes());
  }
};

// The Buffer of a BUFFER node, or nullptr if not allocated yet.
inline Buffer* buffer_of(const UOp& u) { return static_cast<Buffer*>(u.buffer.get()); }

}  // namespace ts
