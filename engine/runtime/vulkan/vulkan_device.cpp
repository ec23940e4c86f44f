#include "engine/runtime/vulkan/vulkan_device.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "engine/device/device.h"
#include "engine/runtime/allocator.h"
#include "engine/renderer/glsl_renderer.h"
#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"

namespace ts::vk {

namespace {

std::mutex g_mu;
std::vector<std::weak_ptr<Context>> g_opened;

struct VkExecutable : Executable {
  Program program;
  uint32_t push_bytes = 0;
  // loop iterations of one invocation when every loop bound is a constant (the launch evaluates symbolic ones)
  std::optional<double> loop_iterations;
  int group_packing = 1;  // the program's work groups one dispatched work group runs (glsl_group_packing)
  std::optional<LaunchDims> dims;  // a program without Variables launches the same grid every time
};

// a Buffer's device memory: the DeviceBuffer behind Buffer::handle
DeviceBuffer& device_buffer(const Buffer& b) {
  if (!b.handle) throw Error("a buffer on " + b.device + " has no device memory");
  return *static_cast<DeviceBuffer*>(b.handle.get());
}

class VulkanDevice final : public Device {
 public:
  std::shared_ptr<Context> shared_ctx() {
    ctx();
    return ctx_;
  }
  // logical > 0: another logical device of the same physical one (a Context of its own)
  VulkanDevice(std::string name, DeviceInfo info, DeviceOptions options, int logical = 0)
      : Device(std::move(name)), info_(std::move(info)), options_(std::move(options)), logical_(logical),
        // workgroup-scope tensor cores only with TC_WG=1 when the device opens: loaded as glslang 12 can write them, far
        // slower than subgroup scope on the H100 (README, Tensor cores)
        workgroup_matrices_(info_.cooperative_matrix_workgroup && codegen_option("TC_WG", 0) > 0) {}

  std::string memory() const override { return name(); }
  const Renderer& renderer() const override { return glsl_renderer(); }
  // the reference's generic GPU renderer (so kernel names follow it on every device), its limits clipped to the
  // device's own: work-groups per dim, lanes per dim, shared memory
  OptTarget opt_target() const override {
    OptTarget t = gpu_opt_target();
    for (int d = 0; d < 3; ++d) {
      t.global_max[d] = std::min<int64_t>(t.global_max[d], info_.max_workgroup_count[d]);
      t.local_max[d] = std::min<int64_t>(t.local_max[d], std::min(info_.max_workgroup_size[d], info_.max_workgroup_invocations));
    }
    t.shared_max = std::min<int64_t>(t.shared_max, info_.max_shared_memory);
    t.tc_shared_max = info_.max_shared_memory;
    t.coalesce_row_reads = info_.type != "cpu";
    t.stage_matmul = true;
    // tensor cores: the device's VK_KHR_cooperative_matrix subgroup shapes, fp16 and bf16 (with
    // VK_KHR_shader_bfloat16) x itself + fp32, in its order, the NV SPIR-V glslang makes rewritten to the KHR
    // instructions (vulkan.h, khr_cooperative_matrix; on the H200 fp16 runs at 240 TFLOP/s this way against 161 through
    // the NV extension, every bench layout's output checked). Without the KHR extension, or with TC_KHR=0: its
    // fp16 x fp16 + fp32 shapes of GL_NV_cooperative_matrix (what the GLSL compiler has)
    const bool khr = codegen_option("TC_KHR", 1) != 0 && info_.cooperative_matrix;
    for (const auto& c : khr ? info_.cooperative_matrix_shapes : info_.cooperative_matrix_nv_shapes) {
      if (!(info_.cooperative_matrix_nv || khr) || c.a_type != c.b_type || c.c_type != "float32" || c.result_type != "float32" || c.scope != "subgroup" ||
          c.saturating)
        continue;
      DType in = c.a_type == "float16" ? dtypes::float16 : c.a_type == "bfloat16" && khr && info_.bfloat16_cooperative_matrix ? dtypes::bfloat16 : nullptr;
      if (!in) continue;
      TensorCore tc{c.m, c.n, c.k, in, dtypes::float32, info_.subgroup_size, khr};
      // the same types as workgroup-scope matrices (VK_NV_cooperative_matrix2): their granules and work-group sizes
      for (const auto& f : info_.cooperative_matrix_flexible_shapes) {
        if (!workgroup_matrices_ || !khr || f.scope != "workgroup" || f.a_type != c.a_type || f.b_type != c.a_type || f.c_type != "float32" ||
            f.result_type != "float32" || f.saturating || !f.workgroup_invocations)
          continue;
        tc.wg_m = std::max<int64_t>(tc.wg_m, f.m), tc.wg_n = std::max<int64_t>(tc.wg_n, f.n), tc.wg_k = std::max<int64_t>(tc.wg_k, f.k);
        tc.wg_max = info_.cooperative_matrix_flexible_max_dimension;
        if (std::find(tc.wg_lanes.begin(), tc.wg_lanes.end(), f.workgroup_invocations) == tc.wg_lanes.end()) tc.wg_lanes.push_back(f.workgroup_invocations);
      }
      t.tensor_cores.push_back(tc);
    }
    return t;
  }
  std::string compiler_key() const override { return "GLSL"; }
  std::vector<std::string> dtypes() const override {
    std::vector<std::string> out{"bool", "int", "unsigned int", "float"};
    if (info_.int8 && info_.storage_buffer_8bit)
      out.insert(out.end(), {"signed char", "unsigned char", "float8_e4m3", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"});
    if (info_.int16 && info_.storage_buffer_16bit) out.insert(out.end(), {"short", "unsigned short", "__bf16"});
    if (info_.float16 && info_.storage_buffer_16bit) out.push_back("half");
    if (info_.int64) out.insert(out.end(), {"long", "unsigned long"});
    if (info_.float64) out.push_back("double");
    return out;
  }
  std::vector<std::pair<std::string, std::string>> properties() const override {
    auto u = [](uint64_t v) { return std::to_string(v); };
    return {{"device", info_.name + " (" + info_.type + ", Vulkan " + info_.api_version + ", " + info_.driver_name + " " + info_.driver_info + ")"},
            {"index", std::to_string(info_.index) + (logical_ ? " (logical device " + std::to_string(logical_) + " of it: memory of its own)" : "")},
            {"subgroup_size", u(info_.subgroup_size)},
            {"max_workgroup_invocations", u(info_.max_workgroup_invocations)},
            {"max_workgroup_size", u(info_.max_workgroup_size[0]) + "x" + u(info_.max_workgroup_size[1]) + "x" + u(info_.max_workgroup_size[2])},
            {"max_workgroup_count", u(info_.max_workgroup_count[0]) + "x" + u(info_.max_workgroup_count[1]) + "x" + u(info_.max_workgroup_count[2])},
            {"shared_memory", u(info_.max_shared_memory) + " B"},
            {"max_buffer", u(info_.max_storage_buffer_range) + " B (one storage-buffer binding)"},
            {"device_memory", u(info_.device_local_heap_size) + " B"},
            {"timestamps", info_.compute_timestamps ? "yes (" + std::to_string(info_.timestamp_period_ns) + " ns per tick)" : "no"},
            {"float_modes", float_modes_text()},
            {"cooperative_matrix", coop_text()},
            {"tensor_cores", tc_text()}};
  }

  // the denormal and rounding modes a shader may ask for, per float width (the GLSL renderer asks for neither: the
  // driver's default applies; it asks for signed zeros, infinities and NaNs kept): "f16: denormals preserve/flush-to-zero,
  // rounding RTE/RTZ; f32: ..."
  std::string float_modes_text() const {
    if (!info_.float_controls) return "unknown (Vulkan before 1.2)";
    const char* width[] = {"f16", "f32", "f64"};
    std::string out;
    for (int i = 0; i < 3; ++i) {
      auto list = [](std::initializer_list<std::pair<bool, const char*>> xs) {
        std::string s;
        for (const auto& [on, name] : xs)
          if (on) s += (s.empty() ? "" : "/") + std::string(name);
        return s.empty() ? std::string("none") : s;
      };
      out += (i ? "; " : "") + std::string(width[i]) + ": denormal modes " +
             list({{info_.denorm_preserve[i], "preserve"}, {info_.denorm_flush[i], "flush-to-zero"}}) + ", rounding " +
             list({{info_.round_rte[i], "RTE"}, {info_.round_rtz[i], "RTZ"}}) +
             (info_.signed_zero_inf_nan[i] ? ", signed zero/inf/nan kept" : "");
    }
    return out + " (what a shader may ask for; tinyscope's GLSL asks for signed zeros, infinities and NaNs kept, and for no "
                 "denormal or rounding mode: the driver's default applies)";
  }

  // the shapes the TC opt uses, in the order it tries them: "16x16x16 half -> float, ...", or "none"
  std::string tc_text() const {
    std::string out;
    for (const auto& t : opt_target().tensor_cores) {
      out += (out.empty() ? "" : ", ") + t.str();
      if (!t.wg_lanes.empty()) {  // and as workgroup-scope matrices
        out += " (work-group tiles in multiples of " + std::to_string(t.wg_m) + "x" + std::to_string(t.wg_n) + "x" + std::to_string(t.wg_k) +
               " up to " + std::to_string(t.wg_max) + ", work groups of";
        for (int64_t l : t.wg_lanes) out += " " + std::to_string(l);
        out += ")";
      }
    }
    return out.empty() ? "none (no fp16 x fp16 + fp32 subgroup shape of GL_NV_cooperative_matrix)" : out;
  }
  // "KHR: 3 shapes, NV: 2 shapes (16x8x16 float16 -> float32, ...); workgroup scope (...): ...", or "no"
  std::string coop_text() const {
    std::string out;
    if (info_.cooperative_matrix) out = "KHR: " + std::to_string(info_.cooperative_matrix_shapes.size()) + " shapes";
    if (info_.cooperative_matrix_nv) {
      out += (out.empty() ? "" : ", ") + std::string("NV: ") + std::to_string(info_.cooperative_matrix_nv_shapes.size()) + " shapes (";
      for (size_t i = 0; i < info_.cooperative_matrix_nv_shapes.size(); ++i) {
        const auto& c = info_.cooperative_matrix_nv_shapes[i];
        out += (i ? ", " : "") + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " + c.a_type + " -> " + c.result_type;
      }
      out += ")";
    }
    // VK_NV_cooperative_matrix2: its limits and the shapes it takes at workgroup scope (TC_WG=1 uses them)
    if (info_.cooperative_matrix_workgroup) {
      out += "; workgroup scope (VK_NV_cooperative_matrix2): work groups of up to " + std::to_string(info_.cooperative_matrix_workgroup_max_size) +
             ", dimensions up to " + std::to_string(info_.cooperative_matrix_flexible_max_dimension) + ", granules";
      bool any = false;
      for (const auto& c : info_.cooperative_matrix_flexible_shapes) {
        if (c.scope != "workgroup") continue;
        out += std::string(any ? "," : "") + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " + c.a_type + " -> " +
               c.result_type + " (" + std::to_string(c.workgroup_invocations) + " invocations)";
        any = true;
      }
      if (!any) out += " none";
    }
    return out.empty() ? "no" : out;
  }

  std::shared_ptr<Buffer> allocate(DType dt, int64_t size) override {
    auto b = std::make_shared<Buffer>();
    b->device = memory();
    b->dtype = dt;
    b->size = size;
    if (size < 0 || (dt->itemsize() && static_cast<uint64_t>(size) > UINT64_MAX / dt->itemsize()))
      throw Error("a buffer of " + std::to_string(size) + " " + dt->name + " elements is too large for " + name(), Error::Kind::Overflow);
    // the reference's LRU reuse, as on the host: a freed buffer of the same size is handed back as it is (so
    // Tensor.empty is not zeroed, and repeated realizes do not allocate)
    DeviceBuffer db;
    {
      std::lock_guard lk(mu_);
      auto& v = free_[b->nbytes()];
      if (!v.empty()) {
        db = v.back();
        v.pop_back();
      }
    }
    if (!db) db = ctx().alloc(b->nbytes());
    count_device_bytes(static_cast<std::ptrdiff_t>(b->nbytes()));
    b->handle = std::shared_ptr<DeviceBuffer>(new DeviceBuffer(db), [this, n = b->nbytes()](DeviceBuffer* p) {
      {
        std::lock_guard lk(mu_);
        free_[n].push_back(*p);
      }
      count_device_bytes(-static_cast<std::ptrdiff_t>(n));
      delete p;
    });
    return b;
  }
  void copy_in(Buffer& dst, const void* src, size_t bytes) override {
    if (bytes) ctx().copy_in(device_buffer(dst), src, bytes);
  }
  void copy_out(void* dst, const Buffer& src, size_t bytes) override {
    if (bytes) ctx().copy_out(dst, device_buffer(src), bytes);
  }

  std::shared_ptr<Executable> load(const ProgramSpec& spec) override {
    std::vector<std::string> features;
    if (info_.float16 && info_.storage_buffer_16bit) features.push_back("float16");
    if (info_.int8 && info_.storage_buffer_8bit) features.push_back("int8");
    if (info_.int16 && info_.storage_buffer_16bit) features.push_back("int16");
    if (info_.int64) features.push_back("int64");
    if (info_.float64) features.push_back("float64");
    check_glsl_dtypes(spec, features, name());
    auto e = std::make_shared<VkExecutable>();
    e->push_bytes = push_bytes(spec);
    e->group_packing = glsl_group_packing(spec);
    if (spec.vars.empty()) e->dims = launch_dims(spec, {});
    if (info_.loop_iteration_limit) {
      e->loop_iterations = loop_iterations(spec, nullptr);
      if (e->loop_iterations) check_loop_limit(spec, *e->loop_iterations);
    }
    SpirvBinary spirv = ctx().compile_glsl(spec.src, spec.name);
    e->program = ctx().program(spirv, spec.name, static_cast<uint32_t>(spec.num_buffers), e->push_bytes);
    if (!e->program.statistics().empty()) {
      auto st = std::make_shared<trace::ProgramStatistics>();
      for (const PipelineStatistic& p : e->program.statistics()) st->emplace_back(p.name, p.value);
      e->statistics = std::move(st);
    }
    return e;
  }

  double launch(const ProgramSpec& spec, Executable& exe, std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
    auto& vx = static_cast<VkExecutable&>(exe);
    thread_local std::vector<DeviceBuffer> dbs;  // (its storage is kept between launches: no allocation per kernel)
    dbs.clear();
    for (Buffer* b : bufs) dbs.push_back(device_buffer(*b));
    std::vector<uint8_t> push;
    std::array<uint32_t, 3> groups{};
    // an empty output (a dimension of 0) has nothing to run: no dispatch (Vulkan has no work-group count of 0)
    if (!dispatch_args(spec, vx, vars, push, groups)) return 0.0;
    if (batch_) {  // recorded into the open batch
      batch_->dispatch(vx.program, dbs, push, groups, spec.name);
      dbs.clear();  // (the batch holds the buffers now)
      // a long schedule is submitted in growing pieces as it is recorded, so the device starts on its first kernels
      // while the host records the rest (each piece begins with a barrier that orders it after the earlier ones)
      if (batch_->size() >= chunk_) {
        const auto t0 = std::chrono::steady_clock::now();
        batch_->submit();
        submit_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        running_.push_back(std::move(batch_));
        chunk_ = std::min(2 * chunk_, kLastChunk);
        BatchOptions o;
        o.after_previous = true;
        o.timestamps = timed_;
        batch_ = std::make_unique<Batch>(ctx().batch(o));
      }
      return -1;
    }
    Batch batch = ctx().batch();
    batch.dispatch(vx.program, dbs, push, groups, spec.name);
    dbs.clear();
    BatchResult r = batch.submit_and_wait(options_.timeout_s);
    return r.gpu_seconds.empty() ? r.wall_seconds : r.gpu_seconds[0];
  }

  bool batches() const override { return true; }
  std::shared_ptr<Graph> make_graph() override { return std::make_shared<VkGraph>(*this); }
  std::string graph_name() const override { return "VulkanGraph"; }
  BatchHostTimes last_batch_host_times() const override { return host_times_; }
  void begin_batch(bool timed) override {
    running_.clear();
    timed_ = timed;
    BatchOptions o;
    o.timestamps = timed;
    batch_ = std::make_unique<Batch>(ctx().batch(o));
    chunk_ = kFirstChunk;
    submit_s_ = 0;
  }
  std::vector<double> end_batch() override {
    std::vector<std::unique_ptr<Batch>> parts = std::move(running_);
    running_.clear();
    if (batch_ && batch_->size()) {
      const auto t0 = std::chrono::steady_clock::now();
      batch_->submit();
      submit_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      parts.push_back(std::move(batch_));
    }
    batch_.reset();
    if (parts.empty()) return {};
    const auto submitted = std::chrono::steady_clock::now();
    std::vector<double> times;
    for (auto& b : parts) {
      const size_t n = b->size();
      BatchResult r = b->wait(options_.timeout_s);
      // without timestamps each kernel is shown an equal share of its piece's wall time
      if (r.gpu_seconds.size() != n) r.gpu_seconds.assign(n, r.wall_seconds / static_cast<double>(n));
      times.insert(times.end(), r.gpu_seconds.begin(), r.gpu_seconds.end());
    }
    host_times_.record_s = submit_s_;
    host_times_.submit_to_fence_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted).count();
    return times;
  }

 private:
  // The push constants and work-group counts of one dispatch of `spec` for these Variable values; false when it has
  // nothing to run (a dimension of 0)
  bool dispatch_args(const ProgramSpec& spec, const VkExecutable& vx, std::span<const int64_t> vars, std::vector<uint8_t>& push,
                     std::array<uint32_t, 3>& groups) {
    push.assign(vx.push_bytes, 0);
    for (size_t k = 0; k < spec.vars.size() && k < vars.size(); ++k) {
      // every Variable at 8*k (glsl_renderer.h); int32 ones take the low 4 bytes
      const size_t width = std::min<size_t>(8, push.size() - 8 * k);
      std::memcpy(push.data() + 8 * k, &vars[k], width);
    }
    if (info_.loop_iteration_limit && !vx.loop_iterations) check_loop_limit(spec, *loop_iterations(spec, &vars));
    // work-groups per dim for these Variable values; a program without locals runs one lane per work-group
    const LaunchDims dims = vx.dims ? *vx.dims : launch_dims(spec, vars);
    if (std::find(dims.global_size.begin(), dims.global_size.end(), 0) != dims.global_size.end()) return false;
    for (int d = 0; d < 3; ++d) {
      if (dims.global_size[d] < 1 || dims.global_size[d] > info_.max_workgroup_count[d])
        throw Error("kernel " + spec.name + ": " + std::to_string(dims.global_size[d]) + " work-groups in dimension " + std::to_string(d) +
                    " exceed " + name() + "'s limit of " + std::to_string(info_.max_workgroup_count[d]));
      groups[d] = static_cast<uint32_t>(dims.global_size[d]);
    }
    groups[0] = static_cast<uint32_t>((groups[0] + vx.group_packing - 1) / vx.group_packing);
    return true;
  }

  // A graph call on Vulkan: its kernels recorded once into one command buffer (with the barriers their buffers
  // need) and submitted again as it is at every replay; recorded again only when a kernel's buffers, Variable
  // values or timestamps differ from the recorded ones (a replay with other input buffers)
  class VkGraph final : public Graph {
   public:
    explicit VkGraph(VulkanDevice& dev) : dev_(dev) {}
    std::vector<double> run(const std::vector<GraphKernel>& kernels, bool timed) override {
      start(kernels, timed);
      return wait();
    }
    void start(const std::vector<GraphKernel>& kernels, bool timed) override {
      std::vector<DeviceBuffer> bufs;
      std::vector<int64_t> vars;
      for (const GraphKernel& k : kernels) {
        for (Buffer* b : k.bufs) bufs.push_back(device_buffer(*b));
        vars.insert(vars.end(), k.vars.begin(), k.vars.end());
      }
      recorded_ = !batch_ || timed != timed_ || bufs != bufs_ || vars != vars_ || kernels.size() != op_of_.size();
      if (recorded_) {
        BatchOptions o;
        o.timestamps = timed;
        o.after_previous = true;  // after whatever ran before it (another graph call still running)
        batch_ = std::make_unique<Batch>(dev_.ctx().batch(o));
        op_of_.assign(kernels.size(), -1);
        std::vector<DeviceBuffer> kb;
        std::vector<uint8_t> push;
        std::array<uint32_t, 3> groups{};
        for (size_t i = 0; i < kernels.size(); ++i) {
          const GraphKernel& k = kernels[i];
          auto& vx = static_cast<VkExecutable&>(*k.exe);
          if (!dev_.dispatch_args(*k.spec, vx, k.vars, push, groups)) continue;
          kb.clear();
          for (Buffer* b : k.bufs) kb.push_back(device_buffer(*b));
          op_of_[i] = static_cast<int>(batch_->size());
          batch_->dispatch(vx.program, kb, push, groups, k.spec->name);
        }
        bufs_ = std::move(bufs);
        vars_ = std::move(vars);
        timed_ = timed;
      }
      if (batch_->size()) batch_->submit();
    }
    std::vector<double> wait() override {
      std::vector<double> times(op_of_.size(), 0.0);
      if (!batch_ || !batch_->size()) return times;
      BatchResult r = batch_->wait(dev_.options_.timeout_s);
      const size_t n = batch_->size();
      // without timestamps each kernel is shown an equal share of the call's wall time
      if (r.gpu_seconds.size() != n) r.gpu_seconds.assign(n, r.wall_seconds / static_cast<double>(n));
      for (size_t i = 0; i < op_of_.size(); ++i)
        if (op_of_[i] >= 0) times[i] = r.gpu_seconds[static_cast<size_t>(op_of_[i])];
      return times;
    }
    std::string last_run() const override { return recorded_ ? "recorded its command buffer" : "resubmitted its command buffer"; }

   private:
    VulkanDevice& dev_;
    std::unique_ptr<Batch> batch_;
    std::vector<DeviceBuffer> bufs_;  // what the recorded command buffer binds, kernel after kernel
    std::vector<int64_t> vars_;
    std::vector<int> op_of_;          // each kernel's dispatch in the batch (-1: nothing to run)
    bool timed_ = false, recorded_ = false;
  };

  // lavapipe (Mesa's llvmpipe driver) stops an invocation after 65,535 loop iterations in all (its loop limiter)
  // and drops the rest of its work without an error: such a kernel is refused rather than run wrong.
  // The iterations one invocation runs: every loop's trip count times its enclosing ones', summed; a bound over
  // Variables takes their values (none given: nullopt for such a program)
  static std::optional<double> loop_iterations(const ProgramSpec& spec, const std::span<const int64_t>* vars) {
    double total = 0;
    std::vector<double> trips{1};
    for (auto& u : spec.lowered->src) {
      if (u->op == Ops::RANGE) {
        const UOpRef& n = u->src[0];
        if (n->op != Ops::CONST && !vars) return std::nullopt;
        const int64_t size = n->op == Ops::CONST ? n->const_int() : eval_index_expr(n, spec, *vars);
        trips.push_back(trips.back() * static_cast<double>(std::max<int64_t>(size, 0)));
        total += trips.back();
      } else if (u->op == Ops::END && trips.size() > 1) {
        trips.pop_back();
      }
    }
    return total;
  }
  void check_loop_limit(const ProgramSpec& spec, double total) const {
    if (total > static_cast<double>(info_.loop_iteration_limit))
      throw Error("kernel " + spec.name + " runs " + std::to_string(static_cast<long long>(total)) + " loop iterations in one invocation; " +
                  name() + " (" + info_.driver_name + ") stops an invocation after " + std::to_string(info_.loop_iteration_limit) +
                  " and would return wrong data");
  }
  static uint32_t push_bytes(const ProgramSpec& spec) {
    if (spec.vars.empty()) return 0;
    // the last Variable's width: its PARAM's dtype in the program
    uint32_t last = 4;
    for (auto& u : spec.lowered->src)
      if (u->op == Ops::PARAM && u->as<ParamArg>().addrspace == AddrSpace::ALU &&
          u->as<ParamArg>().slot == spec.num_buffers + static_cast<int64_t>(spec.vars.size()) - 1)
        last = static_cast<uint32_t>(u->dtype->itemsize());
    return static_cast<uint32_t>(8 * (spec.vars.size() - 1)) + last;
  }
  Context& ctx() {
    std::lock_guard lk(mu_);
    if (!ctx_) {
      OpenOptions o;
      o.validation = options_.validation;
      o.cache_dir = options_.cache_dir;
      o.logical = logical_;
      o.lose_device_at_wait = options_.lose_device_at_wait;
      o.workgroup_matrices = workgroup_matrices_;
      ctx_ = open_device(info_.index, o);
      std::lock_guard g(g_mu);
      g_opened.push_back(ctx_);
    }
    return *ctx_;
  }

  DeviceInfo info_;
  DeviceOptions options_;
  int logical_ = 0;
  bool workgroup_matrices_ = false;  // VK_NV_cooperative_matrix2 enabled: its tensor-core tiles offered (TC_WG=1)
  std::mutex mu_;
  std::shared_ptr<Context> ctx_;
  std::map<size_t, std::vector<DeviceBuffer>> free_;  // freed buffers by size, for reuse
  std::unique_ptr<Batch> batch_;                      // the open batch (begin_batch .. end_batch)
  std::vector<std::unique_ptr<Batch>> running_;       // its pieces submitted so far, in order
  // pieces of 8, 16, then 32 operations: the device starts early, and after the last submit it has at most 32 left
  // (a 200-kernel chain on an H200 with pieces growing to 256: 1.7-2.7 us a kernel waited for after the last submit)
  static constexpr size_t kFirstChunk = 8, kLastChunk = 32;
  size_t chunk_ = kFirstChunk;                        // the open piece is submitted at this many operations
  double submit_s_ = 0;                               // host time recording and submitting the pieces
  bool timed_ = true;                                 // the open batch records timestamps
  BatchHostTimes host_times_;
};

}  // namespace

int register_vulkan_devices(const DeviceOptions& options, std::string* reason) {
#if defined(__SANITIZE_ADDRESS__)
  // a sanitizer build keeps the driver and the layer loaded, so what they keep until exit stays attributable to them
  // by name (tests/sanitizers/lsan.supp): the loader would unload them with the instance
  for (const char* lib : {"/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so", "libVkLayer_khronos_validation.so"}) dlopen(lib, RTLD_NOW | RTLD_NODELETE);
#endif
  std::vector<DeviceInfo> devs = enumerate_devices(reason);
  const int def = default_device_index(devs);
  for (const auto& d : devs) {
    const std::string nm = d.index == def ? "VULKAN" : "VULKAN:" + std::to_string(d.index);
    register_device(std::make_unique<VulkanDevice>(nm, d, options));
    if (d.index == def) register_device_alias("VULKAN:" + std::to_string(d.index), "VULKAN");
  }
  for (int k = 1; k <= options.logical_devices && def >= 0 && def < static_cast<int>(devs.size()); ++k)
    register_device(std::make_unique<VulkanDevice>("VULKAN:" + std::to_string(static_cast<int>(devs.size()) + k - 1), devs[def], options, k));
  return static_cast<int>(devs.size());
}

std::shared_ptr<Context> device_context(const std::string& device) {
  auto* d = dynamic_cast<VulkanDevice*>(&get_device(device));
  if (!d) throw Error(device + " is not a VULKAN device");
  return d->shared_ctx();
}

uint64_t validation_message_count(std::string* last) {
  std::lock_guard lk(g_mu);
  uint64_t n = 0;
  for (auto& w : g_opened)
    if (auto c = w.lock()) {
      ValidationMessages m = c->validation_messages();
      n += m.count();
      if (last && !m.last.empty()) *last = m.last.back();
    }
  return n;
}

std::string glsl_assembly(const std::string& glsl, const std::string& name) {
  static Compiler compiler;
  return disassemble(compiler.compile_glsl(glsl, name));
}

}  // namespace ts::vk
