#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/uop/uop.h"

namespace ts {

// Device storage behind a BUFFER node (the reference keeps it in a side table; we hang it on the node).
// Host memory (ptr) for PYTHON and the host devices; a device with its own memory keeps its object in handle.
struct Buffer {
  std::string device;
  DType dtype = nullptr;
  int64_t size = 0;  // elements
  void* ptr = nullptr;        // host memory (PYTHON, CPU); null for a device's own memory
  std::shared_ptr<void> handle;  // a device's own memory object (a VULKAN buffer), freed with the Buffer
  std::function<void(void*, size_t)> release;  // returns the memory to its allocator
  size_t nbytes() const { return static_cast<size_t>(size) * dtype->itemsize(); }
  ~Buffer() {
    if (release && ptr) release(ptr, nbytes());
  }
};

// The Buffer of a BUFFER node, or nullptr if not allocated yet.
inline Buffer* buffer_of(const UOp& u) { return static_cast<Buffer*>(u.buffer.get()); }

}  // namespace ts
