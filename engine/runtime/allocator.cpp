#include "engine/runtime/allocator.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "engine/uop/error.h"

namespace ts {

namespace {
std::mutex g_mu;
size_t g_live = 0;
std::map<std::pair<std::string, size_t>, std::vector<void*>>& cache() {
  static auto* c = new std::map<std::pair<std::string, size_t>, std::vector<void*>>();
  return *c;
}
}  // namespace

std::shared_ptr<Buffer> allocate_buffer(const std::string& device, DType dt, int64_t size) {
  const auto item = static_cast<int64_t>(dt->itemsize());
  if (size < 0 || (item > 0 && size > PTRDIFF_MAX / item))
    throw Error("a buffer of " + std::to_string(size) + " " + dt->name + " elements on " + device +
                " has more bytes than this machine can address",
                Error::Kind::Overflow);
  auto b = std::make_shared<Buffer>();
  b->device = device;
  b->dtype = dt;
  b->size = size;
  size_t nbytes = std::max<size_t>(b->nbytes(), 1);
  void* p = nullptr;
  {
    std::lock_guard lk(g_mu);
    auto& v = cache()[{device, nbytes}];
    if (!v.empty()) { p = v.back(); v.pop_back(); }
    g_live += nbytes;
  }
  if (!p) {
    size_t rounded = (nbytes + 63) / 64 * 64;
    p = std::aligned_alloc(64, rounded);
    if (!p) {
      std::lock_guard lk(g_mu);
      g_live -= nbytes;
      throw Error("out of memory allocating " + std::to_string(nbytes) + " bytes on " + device);
    }
  }
  b->ptr = p;
  b->release = [device](void* ptr, size_t n) {
    std::lock_guard lk(g_mu);
    n = std::max<size_t>(n, 1);
    g_live -= n;
    cache()[{device, n}].push_back(ptr);
  };
  return b;
}

void count_device_bytes(std::ptrdiff_t n) {
  std::lock_guard lk(g_mu);
  g_live = static_cast<size_t>(static_cast<std::ptrdiff_t>(g_live) + n);
}

size_t allocated_bytes() {
  std::lock_guard lk(g_mu);
  return g_live;
}

void free_cached_buffers() {
  std::lock_guard lk(g_mu);
  for (auto& [k, v] : cache())
    for (void* p : v) std::free(p);
  cache().clear();
}

}  // namespace ts
