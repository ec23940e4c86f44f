// The Vulkan runtime's batches: dispatches and copies with the barriers they need, recorded into one command buffer
#include "engine/runtime/vulkan/vulkan_internal.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_set>

namespace ts::vk {

namespace {
struct Op {
  enum Kind { Dispatch, CopyCmd } kind = Dispatch;
  std::shared_ptr<ProgramImpl> program;
  std::vector<std::shared_ptr<BufferImpl>> buffers;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // per buffer: the bound offset and size (empty: whole buffers)
  std::vector<uint8_t> push;
  std::array<uint32_t, 3> groups{};
  VkBufferCopy region{};  // CopyCmd: buffers = {dst, src}
  bool barrier_before = false;
  std::string name;
};
}  // namespace

// ---- batches -------------------------------------------------------------------------------------------------------

struct BatchImpl {
  std::shared_ptr<Context> ctx;
  BatchOptions opts;
  std::vector<Op> ops;
  uint32_t barriers = 0;
  // byte ranges [lo, hi) of each buffer written and read since the last barrier
  // (flat lists: few operations come between two barriers, and clearing one keeps its storage for the next)
  struct Range {
    const BufferImpl* buf;
    uint64_t lo, hi;
  };
  using Ranges = std::vector<Range>;
  Ranges written, read;
  std::unique_ptr<Frame> frame;
  bool recorded = false;
  bool in_flight = false;  // submitted, not yet waited for
  std::chrono::steady_clock::time_point submitted_at;

  Context::Impl& I() { return *ctx->impl_; }
  struct Use {
    const BufferImpl* buf;
    Access access;
    uint64_t lo, hi;
  };
  void add(Op op, const std::vector<Use>& uses);
  void record();
  const char* label_of(const Op& op) const { return op.name.c_str(); }
  std::string kernel_list() const;
  ~BatchImpl() {
    if (frame) I().retire_or_park(std::move(frame));
  }
};

void BatchImpl::add(Op op, const std::vector<Use>& uses) {
  if (in_flight) I().fail("operation '" + op.name + "' added to a batch that is running (wait for it first)");
  auto overlaps = [](const Ranges& m, const Use& u) {
    for (const Range& r : m)
      if (r.buf == u.buf && r.lo < u.hi && u.lo < r.hi) return true;
    return false;
  };
  // (a batch that continues earlier submissions starts with a barrier: it orders everything submitted before it)
  bool hazard = (opts.serialize && !ops.empty()) || (opts.after_previous && ops.empty());
  for (const Use& u : uses) {
    if (overlaps(written, u)) hazard = true;                         // read after write, write after write
    if (u.access != Access::Read && overlaps(read, u)) hazard = true;  // write after read
  }
  if (hazard) {
    op.barrier_before = true;
    barriers++;
    written.clear();
    read.clear();
  }
  for (const Use& u : uses) {
    if (u.access != Access::Write) read.push_back({u.buf, u.lo, u.hi});
    if (u.access != Access::Read) written.push_back({u.buf, u.lo, u.hi});
  }
  ops.push_back(std::move(op));
  recorded = false;
}

std::string BatchImpl::kernel_list() const {
  std::vector<std::string> names;
  for (const Op& op : ops)
    if (std::find(names.begin(), names.end(), op.name) == names.end()) names.push_back(op.name);
  std::string s;
  for (size_t i = 0; i < names.size() && i < 8; i++) s += (i ? ", " : "") + names[i];
  if (names.size() > 8) s += " and " + std::to_string(names.size() - 8) + " more";
  return s;
}

void BatchImpl::record() {
  Context::Impl& C = I();
  auto& fn = C.fn;
  if (frame && frame->serial > C.completed.load()) {  // still running (cannot happen after a wait; be safe)
    C.retire_or_park(std::move(frame));
  }
  if (!frame) frame = C.acquire_frame();
  Frame& f = *frame;
  const uint32_t n = static_cast<uint32_t>(ops.size());
  const bool ts = opts.timestamps && C.info.compute_timestamps;
  if (ts && f.query_cap < 2 * n) {
    if (f.queries) fn.vkDestroyQueryPool(C.device, f.queries, nullptr);
    f.queries = VK_NULL_HANDLE;
    f.query_cap = 0;
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = std::max(2 * n, 64u);
    C.check(fn.vkCreateQueryPool(C.device, &qi, nullptr, &f.queries), "vkCreateQueryPool");
    f.query_cap = qi.queryCount;
  }
  uint32_t sets = 0, descs = 0;
  for (const Op& op : ops)
    if (op.kind == Op::Dispatch && op.program->num_buffers && !op.program->push_descriptors) {
      sets++;
      descs += op.program->num_buffers;
    }
  if (sets && (f.set_cap < sets || f.desc_cap < descs)) {  // the pool grows (doubling) to fit the batch
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(descs, 2 * f.desc_cap + 64)};
    VkDescriptorPoolCreateInfo di{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    di.maxSets = std::max(sets, 2 * f.set_cap + 16);
    if (f.descs) fn.vkDestroyDescriptorPool(C.device, f.descs, nullptr);
    f.descs = VK_NULL_HANDLE;
    f.set_cap = f.desc_cap = 0;
    di.poolSizeCount = 1;
    di.pPoolSizes = &ps;
    C.check(fn.vkCreateDescriptorPool(C.device, &di, nullptr, &f.descs), "vkCreateDescriptorPool");
    f.set_cap = di.maxSets;
    f.desc_cap = ps.descriptorCount;
  }
  if (f.descs) C.check(fn.vkResetDescriptorPool(C.device, f.descs, 0), "vkResetDescriptorPool");
  C.check(fn.vkResetCommandPool(C.device, f.pool, 0), "vkResetCommandPool");

  VkCommandBuffer cb = f.cmd;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  C.check(fn.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  if (ts) fn.vkCmdResetQueryPool(cb, f.queries, 0, 2 * n);
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  VkPipeline bound = VK_NULL_HANDLE;
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  for (uint32_t i = 0; i < n; i++) {
    const Op& op = ops[i];
    if (op.barrier_before) fn.vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    if (ts) fn.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, f.queries, 2 * i);
    if (op.kind == Op::CopyCmd) {
      fn.vkCmdCopyBuffer(cb, op.buffers[1]->buf, op.buffers[0]->buf, 1, &op.region);
    } else {
      const ProgramImpl& p = *op.program;
      if (p.pipeline != bound) {
        fn.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
        bound = p.pipeline;
      }
      if (p.num_buffers) {
        VkDescriptorSet set = VK_NULL_HANDLE;
        if (!p.push_descriptors) {
          VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
          ai.descriptorPool = f.descs;
          ai.descriptorSetCount = 1;
          ai.pSetLayouts = &p.set_layout;
          C.check(fn.vkAllocateDescriptorSets(C.device, &ai, &set), "vkAllocateDescriptorSets");
        }
        infos.assign(p.num_buffers, {});
        writes.assign(p.num_buffers, {});
        for (uint32_t b = 0; b < p.num_buffers; b++) {
          infos[b] = op.ranges.empty() ? VkDescriptorBufferInfo{op.buffers[b]->buf, 0, op.buffers[b]->vk_size}
                                       : VkDescriptorBufferInfo{op.buffers[b]->buf, op.ranges[b].first,
                                                                op.ranges[b].second};
          writes[b].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
          writes[b].dstSet = set;
          writes[b].dstBinding = b;
          writes[b].descriptorCount = 1;
          writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
          writes[b].pBufferInfo = &infos[b];
        }
        if (p.push_descriptors) {
          C.push_descriptors(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, p.num_buffers, writes.data());
        } else {
          fn.vkUpdateDescriptorSets(C.device, p.num_buffers, writes.data(), 0, nullptr);
          fn.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
        }
      }
      if (p.push_bytes)
        fn.vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_bytes, op.push.data());
      fn.vkCmdDispatch(cb, op.groups[0], op.groups[1], op.groups[2]);
    }
    if (ts) fn.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, f.queries, 2 * i + 1);
  }
  // Everything the batch wrote becomes visible to the host and to later submissions.
  VkMemoryBarrier end{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  end.srcAccessMask = mb.srcAccessMask;
  end.dstAccessMask = mb.dstAccessMask | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  fn.vkCmdPipelineBarrier(cb, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &end, 0, nullptr, 0, nullptr);
  C.check(fn.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  recorded = true;
}

Batch::Batch() = default;
Batch::~Batch() = default;
Batch::Batch(Batch&&) noexcept = default;
Batch& Batch::operator=(Batch&&) noexcept = default;

size_t Batch::size() const { return impl_ ? impl_->ops.size() : 0; }
uint32_t Batch::barrier_count() const { return impl_ ? impl_->barriers : 0; }

void Batch::dispatch(const Program& program, const std::vector<DeviceBuffer>& buffers, std::span<const uint8_t> push,
                     std::array<uint32_t, 3> groups, const std::string& name) {
  if (!impl_) throw Error("dispatch on an empty Batch (make one with Context::batch())");
  if (!program) throw Error("dispatch of an empty Program");
  Context::Impl& C = impl_->I();
  const ProgramImpl& p = *program.impl_;
  auto who = [&] { return "kernel '" + (name.empty() ? p.name : name) + "'"; };  // (built only for an error)
  if (p.owner != impl_->ctx.get()) C.fail(who() + ": the program belongs to another Vulkan context");
  if (buffers.size() != p.num_buffers)
    C.fail(who() + ": " + std::to_string(buffers.size()) + " buffers given, the program takes " +
           std::to_string(p.num_buffers));
  if (push.size() != p.push_bytes)
    C.fail(who() + ": " + std::to_string(push.size()) + " push-constant bytes given, the program takes " +
           std::to_string(p.push_bytes));
  for (int i = 0; i < 3; i++)
    if (groups[i] < 1 || groups[i] > C.info.max_workgroup_count[i])
      C.fail(who() + ": group count " + std::to_string(groups[0]) + "x" + std::to_string(groups[1]) + "x" +
             std::to_string(groups[2]) + " is outside 1.." + std::to_string(C.info.max_workgroup_count[0]) + "x" +
             std::to_string(C.info.max_workgroup_count[1]) + "x" + std::to_string(C.info.max_workgroup_count[2]));
  Op op;
  op.kind = Op::Dispatch;
  op.program = program.impl_;
  op.push.assign(push.begin(), push.end());
  op.groups = groups;
  op.name = name.empty() ? p.name : name;
  std::vector<BatchImpl::Use> uses;
  for (size_t i = 0; i < buffers.size(); i++) {
    if (!buffers[i]) C.fail(who() + ": buffer " + std::to_string(i) + " is empty");
    if (buffers[i].impl_->ctx.get() != impl_->ctx.get())
      C.fail(who() + ": buffer " + std::to_string(i) + " belongs to another Vulkan context");
    op.buffers.push_back(buffers[i].impl_);
    if (p.used[i]) uses.push_back({buffers[i].impl_.get(), p.access[i], 0, buffers[i].impl_->vk_size});
  }
  impl_->add(std::move(op), uses);
}

void Batch::copy(const DeviceBuffer& dst, uint64_t dst_offset, const DeviceBuffer& src, uint64_t src_offset,
                 uint64_t bytes) {
  if (!impl_) throw Error("copy on an empty Batch (make one with Context::batch())");
  Context::Impl& C = impl_->I();
  if (!dst || !src) C.fail("copy: an empty buffer");
  if (dst.impl_->ctx.get() != impl_->ctx.get() || src.impl_->ctx.get() != impl_->ctx.get())
    C.fail("copy: a buffer of another Vulkan context");
  auto range_ok = [](uint64_t off, uint64_t n, uint64_t size) { return off <= size && n <= size - off; };
  if (!range_ok(dst_offset, bytes, dst.size()) || !range_ok(src_offset, bytes, src.size()))
    C.fail("copy of " + std::to_string(bytes) + " bytes from offset " + std::to_string(src_offset) + " of a " +
           std::to_string(src.size()) + "-byte buffer to offset " + std::to_string(dst_offset) + " of a " +
           std::to_string(dst.size()) + "-byte buffer is out of bounds");
  if (bytes == 0) return;
  if (dst == src && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes)
    C.fail("copy within one buffer: the ranges [" + std::to_string(src_offset) + ", " +
           std::to_string(src_offset + bytes) + ") and [" + std::to_string(dst_offset) + ", " +
           std::to_string(dst_offset + bytes) + ") overlap");
  Op op;
  op.buffers = {dst.impl_, src.impl_};
  op.name = "copy " + std::to_string(bytes) + " B";
  // what each side touches: the copy's bytes, or for the copy shader the bound ranges (from the offset rounded down
  // to minStorageBufferOffsetAlignment), so copies into disjoint parts of one buffer need no barrier
  uint64_t dst_lo = dst_offset, src_lo = src_offset;
  if ((dst_offset | src_offset | bytes) % 4 == 0) {
    const bool vec4 = (dst_offset | src_offset | bytes) % 16 == 0;
    const uint64_t unit = vec4 ? 16 : 4, count = bytes / unit;
    const uint64_t align = std::max<uint64_t>(C.info.min_storage_buffer_offset_alignment, 1);
    dst_lo = dst_offset / align * align;
    src_lo = src_offset / align * align;
    op.kind = Op::Dispatch;
    op.program = C.copy_program(vec4);
    op.ranges = {{dst_lo, dst_offset + bytes - dst_lo}, {src_lo, src_offset + bytes - src_lo}};
    PushConstants pc;
    pc.u32(static_cast<uint32_t>((src_offset - src_lo) / unit)).u32(static_cast<uint32_t>((dst_offset - dst_lo) / unit));
    pc.u32(static_cast<uint32_t>(count));
    op.push.assign(pc.bytes().begin(), pc.bytes().end());
    uint64_t groups = std::min<uint64_t>((count + 255) / 256, std::min<uint32_t>(C.info.max_workgroup_count[0], 65535));
    op.groups = {static_cast<uint32_t>(groups), 1, 1};
  } else {
    op.kind = Op::CopyCmd;
    op.region = VkBufferCopy{src_offset, dst_offset, bytes};
  }
  impl_->add(std::move(op), {{dst.impl_.get(), Access::Write, dst_lo, dst_offset + bytes},
                             {src.impl_.get(), Access::Read, src_lo, src_offset + bytes}});
}

void Batch::submit() {
  if (!impl_) throw Error("submit of an empty Batch (make one with Context::batch())");
  BatchImpl& B = *impl_;
  Context::Impl& C = B.I();
  if (B.in_flight) C.fail("the batch was submitted and not waited for (Batch::wait) before its next submit");
  C.check_alive();
  if (B.ops.empty()) return;
  if (!B.recorded) B.record();
  std::vector<BufferImpl*> bufs;
  {
    std::unordered_set<BufferImpl*> seen;
    for (const Op& op : B.ops)
      for (auto& b : op.buffers)
        if (seen.insert(b.get()).second) bufs.push_back(b.get());
  }
  B.submitted_at = std::chrono::steady_clock::now();
  C.submit(*B.frame, bufs);
  B.in_flight = true;
}

BatchResult Batch::wait(double timeout_s) {
  if (!impl_) throw Error("wait for an empty Batch (make one with Context::batch())");
  BatchImpl& B = *impl_;
  Context::Impl& C = B.I();
  checked_timeout(timeout_s, "wait");
  BatchResult res;
  res.barriers = B.barriers;
  for (const Op& op : B.ops) res.names.push_back(op.name);
  if (B.ops.empty()) return res;
  if (!B.in_flight) C.fail("wait for a batch that was not submitted");
  B.in_flight = false;
  const Context::Impl::Wait w = C.wait(*B.frame, timeout_s);
  auto what = [&] {
    size_t n = B.ops.size();
    return "the batch of " + std::to_string(n) + (n == 1 ? " operation (" : " operations (") + B.kernel_list() + ")";
  };
  if (w == Context::Impl::Wait::Lost) C.fail("device lost (VK_ERROR_DEVICE_LOST) while running " + what() + "; nothing more runs on it in this process");
  if (w == Context::Impl::Wait::Timeout) {
    C.retire_or_park(std::move(B.frame));
    B.recorded = false;
    C.fail(what() + " did not finish within " + seconds_text(timeout_s) +
           "; it is still running on the device and its buffers stay in use until it ends (Context::wait_idle)");
  }
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - B.submitted_at).count();
  if (B.opts.timestamps && C.info.compute_timestamps) {
    const uint32_t n = static_cast<uint32_t>(B.ops.size());
    std::vector<uint64_t> q(2 * n);
    C.check(C.fn.vkGetQueryPoolResults(C.device, B.frame->queries, 0, 2 * n, q.size() * 8, q.data(), 8,
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
    const uint32_t bits = C.info.timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    for (uint32_t i = 0; i < n; i++)
      res.gpu_seconds.push_back(double((q[2 * i + 1] - q[2 * i]) & mask) * C.info.timestamp_period_ns * 1e-9);
  }
  return res;
}

BatchResult Batch::submit_and_wait(double timeout_s) {
  checked_timeout(timeout_s, "submit_and_wait");
  submit();
  return wait(timeout_s);
}

Batch Context::batch(const BatchOptions& options) {
  impl_->check_alive();
  Batch b;
  b.impl_ = std::make_unique<BatchImpl>();
  b.impl_->ctx = shared_from_this();
  b.impl_->opts = options;
  return b;
}

PushConstants& PushConstants::put(const void* v, size_t n) {
  size_t off = (bytes_.size() + n - 1) / n * n;
  bytes_.resize(off + n);
  std::memcpy(bytes_.data() + off, v, n);
  return *this;
}

}  // namespace ts::vk
