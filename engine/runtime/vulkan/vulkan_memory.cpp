// The Vulkan runtime's buffers and memory, frames and submissions, and the Context's buffers, copies and waits
#include "engine/runtime/vulkan/vulkan_internal.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace ts::vk {

// ---- buffers and memory ------------------------------------------------------------------------------------------

VkResult Context::Impl::make_buffer(uint64_t size, uint32_t type, bool map, VkBuffer* buf, VkDeviceMemory* mem,
                                    void** ptr) {
  *buf = VK_NULL_HANDLE;
  *mem = VK_NULL_HANDLE;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = fn.vkCreateBuffer(device, &bi, nullptr, buf);
  if (r != VK_SUCCESS) return r;
  VkMemoryRequirements req{};
  fn.vkGetBufferMemoryRequirements(device, *buf, &req);
  if (!(req.memoryTypeBits & (1u << type))) {  // unusual: pick again among the types this buffer allows
    VkMemoryPropertyFlags want = mem_props.memoryTypes[type].propertyFlags;
    type = pick_memory_type(req.memoryTypeBits, {want, want & ~VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                                                 want & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)});
    if (type == UINT32_MAX) {
      fn.vkDestroyBuffer(device, *buf, nullptr);
      *buf = VK_NULL_HANDLE;
      return VK_ERROR_FEATURE_NOT_PRESENT;
    }
  }
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  r = fn.vkAllocateMemory(device, &ai, nullptr, mem);
  if (r == VK_SUCCESS) r = fn.vkBindBufferMemory(device, *buf, *mem, 0);
  if (r == VK_SUCCESS && map) r = fn.vkMapMemory(device, *mem, 0, VK_WHOLE_SIZE, 0, ptr);
  if (r != VK_SUCCESS) {
    destroy_buffer(*buf, *mem);
    *buf = VK_NULL_HANDLE;
    *mem = VK_NULL_HANDLE;
  }
  return r;
}

void Context::Impl::release_buffer(VkBuffer b, VkDeviceMemory m, uint64_t bytes, uint64_t last_serial) {
  std::lock_guard lock(state_mu);
  stats.buffers--;
  stats.buffer_bytes -= bytes;
  if (last_serial > completed.load())
    deferred.push_back({last_serial, b, m});
  else
    destroy_buffer(b, m);
}

// ---- frames and submissions -------------------------------------------------------------------------------------

std::unique_ptr<Frame> Context::Impl::acquire_frame() {
  {
    std::lock_guard lock(state_mu);
    if (!free_frames.empty()) {
      auto f = std::move(free_frames.back());
      free_frames.pop_back();
      return f;
    }
  }
  auto f = std::make_unique<Frame>();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.queueFamilyIndex = info.compute_queue_family;
  VkResult r = fn.vkCreateCommandPool(device, &pi, nullptr, &f->pool);
  if (r == VK_SUCCESS) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = f->pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    r = fn.vkAllocateCommandBuffers(device, &ai, &f->cmd);
  }
  if (r == VK_SUCCESS) {
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = fn.vkCreateFence(device, &fi, nullptr, &f->fence);
  }
  if (r != VK_SUCCESS) {
    destroy_frame(*f);
    check(r, "creating a command buffer");
  }
  return f;
}

void Context::Impl::destroy_frame(Frame& f) {
  if (f.staging.buf) destroy_buffer(f.staging.buf, f.staging.mem);
  f.staging = {};
  if (f.queries) fn.vkDestroyQueryPool(device, f.queries, nullptr);
  if (f.descs) fn.vkDestroyDescriptorPool(device, f.descs, nullptr);
  if (f.fence) fn.vkDestroyFence(device, f.fence, nullptr);
  if (f.pool) fn.vkDestroyCommandPool(device, f.pool, nullptr);  // frees its command buffer
  f = Frame{};
}

void Context::Impl::recycle_frame(std::unique_ptr<Frame> f) {
  if (!f) return;
  if (f->staging.buf) {  // staging buffers belong to the transfer frame only
    destroy_buffer(f->staging.buf, f->staging.mem);
    f->staging = {};
  }
  if (f->serial) fn.vkResetFences(device, 1, &f->fence);
  f->serial = 0;
  if (free_frames.size() < 16)
    free_frames.push_back(std::move(f));
  else
    destroy_frame(*f);
}

void Context::Impl::retire_or_park(std::unique_ptr<Frame> f) {
  if (!f) return;
  std::lock_guard lock(state_mu);
  if (f->serial > completed.load())
    pending.push_back(std::move(f));
  else
    recycle_frame(std::move(f));
}

uint64_t Context::Impl::submit(Frame& f, const std::vector<BufferImpl*>& buffers) {
  std::lock_guard lock(queue_mu);
  check_alive();
  if (f.serial) {  // a frame submitted before (and finished: completed >= serial) is reset first
    fn.vkResetFences(device, 1, &f.fence);
  }
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &f.cmd;
  VkResult r = fn.vkQueueSubmit(queue, 1, &si, f.fence);
  check(r, "vkQueueSubmit");
  f.serial = ++next_serial;
  for (BufferImpl* b : buffers) b->last_serial.store(f.serial);
  {
    std::lock_guard s(state_mu);
    stats.submissions++;
  }
  return f.serial;
}

Context::Impl::Wait Context::Impl::wait(Frame& f, double timeout_s) {
  VkResult r = fn.vkWaitForFences(device, 1, &f.fence, VK_TRUE, timeout_ns(timeout_s));
  if (r == VK_SUCCESS && options.lose_device_at_wait > 0 && ++waits == options.lose_device_at_wait) {
    fn.vkDeviceWaitIdle(device);  // the loss is simulated with nothing left running: a lost device is not waited for
    r = VK_ERROR_DEVICE_LOST;
  }
  if (r == VK_TIMEOUT) return Wait::Timeout;
  if (r == VK_ERROR_DEVICE_LOST) {
    lost = true;
    return Wait::Lost;
  }
  check(r, "vkWaitForFences");
  mark_completed(f.serial);
  return Wait::Done;
}

void Context::Impl::mark_completed(uint64_t serial) {
  std::lock_guard lock(state_mu);
  if (serial > completed.load()) completed.store(serial);
  const uint64_t done = completed.load();
  for (size_t i = 0; i < deferred.size();) {
    if (deferred[i].serial <= done) {
      destroy_buffer(deferred[i].buf, deferred[i].mem);
      deferred[i] = deferred.back();
      deferred.pop_back();
    } else {
      i++;
    }
  }
  for (size_t i = 0; i < pending.size();) {
    if (pending[i]->serial <= done) {
      recycle_frame(std::move(pending[i]));
      pending[i] = std::move(pending.back());
      pending.pop_back();
    } else {
      i++;
    }
  }
}

// Submissions finish in order (a fence signal covers every earlier submission of the queue): the newest signalled
// pending fence completes everything up to its serial.
void Context::Impl::reap() {
  uint64_t best = 0;
  {
    std::lock_guard lock(state_mu);
    for (auto& f : pending) {
      VkResult r = fn.vkGetFenceStatus(device, f->fence);
      if (r == VK_SUCCESS) best = std::max(best, f->serial);
      if (r == VK_ERROR_DEVICE_LOST) lost = true;
    }
  }
  if (best) mark_completed(best);
}

bool Context::Impl::in_use(const BufferImpl& b) {
  if (b.last_serial.load() <= completed.load()) return false;
  reap();
  return b.last_serial.load() > completed.load();
}

void Context::Impl::ensure_staging(Frame& f, uint64_t bytes) {
  // grows (doubling) up to options.staging_bytes; larger transfers go in chunks of that size
  const uint64_t cap = std::max<uint64_t>(options.staging_bytes, 4096);
  const uint64_t want = std::min<uint64_t>(std::max<uint64_t>(bytes, 1 << 16), cap);
  if (f.staging.buf && f.staging.size >= want) return;
  const uint64_t size = std::min<uint64_t>(std::max(want, f.staging.size * 2), cap);
  if (f.staging.buf) destroy_buffer(f.staging.buf, f.staging.mem);
  f.staging = {};
  void* p = nullptr;
  VkResult r = make_buffer(size, staging_type, true, &f.staging.buf, &f.staging.mem, &p);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    fail("out of memory allocating a staging buffer of " + bytes_text(size));
  check(r, "allocating a staging buffer");
  f.staging.map = p;
  f.staging.size = size;
  std::lock_guard lock(state_mu);
  stats.staging_bytes = size;
}

// One staging round trip of at most the staging buffer's size: upload (staging -> buffer) or download.
void Context::Impl::transfer_chunk(Frame& f, const BufferImpl& b, uint64_t offset, uint64_t bytes, bool upload) {
  check(fn.vkResetCommandPool(device, f.pool, 0), "vkResetCommandPool");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  fn.vkBeginCommandBuffer(f.cmd, &bi);
  VkBufferCopy region{upload ? 0 : offset, upload ? offset : 0, bytes};
  if (upload)
    fn.vkCmdCopyBuffer(f.cmd, f.staging.buf, b.buf, 1, &region);
  else
    fn.vkCmdCopyBuffer(f.cmd, b.buf, f.staging.buf, 1, &region);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  fn.vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                              VK_PIPELINE_STAGE_TRANSFER_BIT,
                          0, 1, &mb, 0, nullptr, 0, nullptr);
  check(fn.vkEndCommandBuffer(f.cmd), "vkEndCommandBuffer");
  submit(f, {const_cast<BufferImpl*>(&b)});
  Wait w = wait(f, options.transfer_timeout_s);
  std::string what = std::string(upload ? "an upload" : "a download") + " of " + bytes_text(bytes);
  if (w == Wait::Lost) fail("device lost during " + what);
  if (w == Wait::Timeout) {
    auto parked = std::move(transfer);  // the frame (and its staging memory) stays with the device until it ends
    retire_or_park(std::move(parked));
    fail(what + " did not finish within " + seconds_text(options.transfer_timeout_s) +
         " (it waits behind batches still running)");
  }
}

DeviceBuffer Context::alloc(uint64_t bytes) {
  Impl& I = *impl_;
  I.check_alive();
  const DeviceInfo& d = I.info;
  if (bytes > d.max_storage_buffer_range)
    I.fail("a buffer of " + bytes_text(bytes) + " exceeds the device's maxStorageBufferRange of " +
           bytes_text(d.max_storage_buffer_range) + " (the most one storage-buffer binding can address)");
  if (bytes > d.max_allocation_size)
    I.fail("a buffer of " + bytes_text(bytes) + " exceeds the device's maxMemoryAllocationSize of " +
           bytes_text(d.max_allocation_size));
  {
    std::lock_guard lock(I.state_mu);
    if (I.stats.buffers + 8 >= d.max_allocation_count)
      I.fail("a buffer of " + bytes_text(bytes) + ": " + std::to_string(I.stats.buffers) +
             " buffers are allocated, at the device's maxMemoryAllocationCount of " +
             std::to_string(d.max_allocation_count));
  }
  auto b = std::make_shared<BufferImpl>();
  b->ctx = shared_from_this();
  b->size = bytes;
  b->vk_size = std::max<uint64_t>(bytes, 4);
  void* map = nullptr;
  VkResult r = I.make_buffer(b->vk_size, I.device_type, I.direct, &b->buf, &b->mem, &map);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    ContextStats s = stats();
    I.fail("out of device memory allocating a buffer of " + bytes_text(bytes) + " (" + std::to_string(s.buffers) +
           " buffers of " + bytes_text(s.buffer_bytes) + " allocated by this context; device-local heap " +
           bytes_text(d.device_local_heap_size) + ")");
  }
  I.check(r, ("allocating a buffer of " + bytes_text(bytes)).c_str());
  b->map = static_cast<uint8_t*>(map);
  {
    std::lock_guard lock(I.state_mu);
    I.stats.buffers++;
    I.stats.buffer_bytes += bytes;
  }
  DeviceBuffer h;
  h.impl_ = std::move(b);
  return h;
}

uint64_t DeviceBuffer::size() const { return impl_ ? impl_->size : 0; }

namespace {
void check_copy_args(Context::Impl& I, const char* what, const DeviceBuffer& b, const void* host, uint64_t bytes,
                     uint64_t offset, const Context* self, const BufferImpl* impl) {
  if (!b) I.fail(std::string(what) + ": an empty buffer");
  if (impl->ctx.get() != self) I.fail(std::string(what) + ": the buffer belongs to another Vulkan context");
  if (offset > b.size() || bytes > b.size() - offset)
    I.fail(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
           " is outside the " + std::to_string(b.size()) + "-byte buffer");
  if (bytes && !host) I.fail(std::string(what) + ": a null host pointer");
}
}  // namespace

void Context::copy_in(const DeviceBuffer& dst, const void* src, uint64_t bytes, uint64_t offset) {
  Impl& I = *impl_;
  I.check_alive();
  check_copy_args(I, "copy_in", dst, src, bytes, offset, this, dst.impl_.get());
  if (bytes == 0) return;
  const BufferImpl& b = *dst.impl_;
  if (I.in_use(b)) I.fail("copy_in: the buffer is in use by a batch still running on the device");
  if (I.direct) {
    std::memcpy(b.map + offset, src, bytes);
    if (!I.device_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkFlushMappedMemoryRanges(I.device, 1, &mr), "vkFlushMappedMemoryRanges");
    }
    return;
  }
  std::lock_guard lock(I.transfer_mu);
  if (!I.transfer) I.transfer = I.acquire_frame();
  I.ensure_staging(*I.transfer, bytes);
  const auto* p = static_cast<const uint8_t*>(src);
  for (uint64_t done = 0; done < bytes;) {
    uint64_t n = std::min<uint64_t>(bytes - done, I.transfer->staging.size);
    std::memcpy(I.transfer->staging.map, p + done, n);
    if (!I.staging_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, I.transfer->staging.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkFlushMappedMemoryRanges(I.device, 1, &mr), "vkFlushMappedMemoryRanges");
    }
    I.transfer_chunk(*I.transfer, b, offset + done, n, true);
    done += n;
  }
}

void Context::copy_out(void* dst, const DeviceBuffer& src, uint64_t bytes, uint64_t offset) {
  Impl& I = *impl_;
  I.check_alive();
  check_copy_args(I, "copy_out", src, dst, bytes, offset, this, src.impl_.get());
  if (bytes == 0) return;
  const BufferImpl& b = *src.impl_;
  if (I.in_use(b)) I.fail("copy_out: the buffer is in use by a batch still running on the device");
  if (I.direct) {
    if (!I.device_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkInvalidateMappedMemoryRanges(I.device, 1, &mr), "vkInvalidateMappedMemoryRanges");
    }
    std::memcpy(dst, b.map + offset, bytes);
    return;
  }
  std::lock_guard lock(I.transfer_mu);
  if (!I.transfer) I.transfer = I.acquire_frame();
  I.ensure_staging(*I.transfer, bytes);
  auto* p = static_cast<uint8_t*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    uint64_t n = std::min<uint64_t>(bytes - done, I.transfer->staging.size);
    I.transfer_chunk(*I.transfer, b, offset + done, n, false);
    if (!I.staging_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, I.transfer->staging.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkInvalidateMappedMemoryRanges(I.device, 1, &mr), "vkInvalidateMappedMemoryRanges");
    }
    std::memcpy(p + done, I.transfer->staging.map, n);
    done += n;
  }
}

bool Context::wait_idle(double timeout_s) {
  Impl& I = *impl_;
  checked_timeout(timeout_s, "wait_idle");
  I.check_alive();
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    uint64_t newest = 0;
    VkResult r = VK_SUCCESS;
    {
      // pending frames are recycled only under state_mu: waiting in short steps under it keeps their fences alive
      std::lock_guard lock(I.state_mu);
      if (I.pending.empty()) return true;
      std::vector<VkFence> fences;
      for (auto& f : I.pending) {
        fences.push_back(f->fence);
        newest = std::max(newest, f->serial);
      }
      double left = timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      r = I.fn.vkWaitForFences(I.device, static_cast<uint32_t>(fences.size()), fences.data(), VK_TRUE,
                               timeout_ns(std::clamp(left, 0.0, 0.002)));
    }
    if (r == VK_SUCCESS) {
      I.mark_completed(newest);
      continue;
    }
    if (r == VK_ERROR_DEVICE_LOST) {
      I.lost = true;
      I.fail("device lost (VK_ERROR_DEVICE_LOST) while waiting for it to finish its work");
    }
    if (r != VK_TIMEOUT) I.check(r, "vkWaitForFences");
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= timeout_s) return false;
  }
}

}  // namespace ts::vk
