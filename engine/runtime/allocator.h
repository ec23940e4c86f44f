#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "engine/uop/buffer.h"

namespace ts {

// Host memory for a device, with the reference's LRU reuse: a freed block of the same size is handed back
// as-is (so Tensor.empty is not zeroed), which also keeps repeated realizes from hitting malloc.
std::shared_ptr<Buffer> allocate_buffer(const std::string& device, DType dt, int64_t size);
size_t allocated_bytes();  // bytes currently held by live buffers, on every device
// a device with memory of its own counts its buffers here too (+n when allocated, -n when freed)
void count_device_bytes(std::ptrdiff_t n);
void free_cached_buffers();

}  // namespace ts
