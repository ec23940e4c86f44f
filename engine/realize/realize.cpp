// run_linear: compile every kernel of a schedule (deduplicated by content), then execute the calls in order,
// printing the reference's DEBUG lines and recording each call for the trace.
#include "engine/realize/realize.h"
#include "engine/runtime/compiler_hook.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <tuple>
#include <set>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "engine/codegen/to_program.h"
#include "engine/device/device.h"
#include "engine/realize/compile_jobs.h"
#include "engine/realize/realize_internal.h"
#include "engine/runtime/allocator.h"
#include "engine/schedule/multi.h"
#include "engine/schedule/schedule.h"
#include "engine/tensor/tensor.h"
#include "engine/trace/recorder.h"
#include "engine/uop/buffer.h"
#include "engine/uop/error.h"
#include "engine/uop/print.h"
#include "engine/uop/rewrite.h"

namespace ts {

// the lock over the run state: the call log, the compiled programs, the capture (realize_internal.h)
std::mutex g_mu;

namespace {

std::deque<CallRecord> g_calls;  // the latest kCallLogSize calls
uint64_t g_calls_total = 0;
int g_counter = 0;
int g_graph_calls = 0;  // graph calls run so far (their records' CallRecord::graph)
int g_runs = 0;            // run_schedule calls so far (CallRecord::run)
int g_last_schedule = 0;   // the schedule_index of the last recorded schedule that ran
double g_time_sum = 0;
WorkTotals g_work;

// compiled programs by (ast, device): the same kernel on two devices is two programs
std::map<std::pair<const UOp*, std::string>, std::shared_ptr<Compiled>> g_programs;
std::unordered_map<const UOp*, bool> g_seen_program;
std::set<std::string> g_seen_copies;

// The device that runs a kernel whose buffers are in `memory`: for host memory the run's device when it computes on
// the host (CPU, CPU:LLVM, INTERP), else the host's first; otherwise the device that owns that memory.
Device& kernel_device(const std::string& memory) {
  if (is_host_memory(memory)) {
    Device& run = get_device(realize_config().device);
    return run.host_memory() ? run : memory_device("CPU");
  }
  return memory_device(memory);
}

// a buffer's bytes on the host, and back, through its memory's device (host memory: a memcpy)
std::vector<uint8_t> read_bytes(const Buffer& b) {
  std::vector<uint8_t> out(b.nbytes());
  memory_device(b.device).copy_out(out.data(), b, out.size());
  return out;
}
void write_bytes(Buffer& b, const std::vector<uint8_t>& bytes) { memory_device(b.device).copy_in(b, bytes.data(), bytes.size()); }

std::string size_to_str(int64_t s) {
  char buf[64];
  if (s >= (1 << 30)) std::snprintf(buf, sizeof buf, "%.2f GB", s / double(1 << 30));
  else if (s >= (1 << 20)) std::snprintf(buf, sizeof buf, "%.2f MB", s / double(1 << 20));
  else if (s >= (1 << 10)) std::snprintf(buf, sizeof buf, "%.2f KB", s / double(1 << 10));
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(s));
  return buf;
}
std::string colored(const std::string& s, const char* code) {
  if (!code) return s;
  return std::string("\x1b[") + code + "m" + s + "\x1b[0m";
}
size_t ansilen(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b') { while (i < s.size() && s[i] != 'm') ++i; continue; }
    ++n;
  }
  return n;
}
std::string dev_name(const std::string& d) { return d.substr(0, 7); }

// a buffer whose allocation and free the trace records (its memory events, recorder.h: record_memory)
std::shared_ptr<Buffer> traced_buffer(std::shared_ptr<Buffer> buf, uint64_t id) {
  trace::MemoryEvent e{true, buf->device, buf->nbytes(), id, trace::clock_seconds()};
  trace::record_memory(e);
  Buffer* raw = buf.get();
  return std::shared_ptr<Buffer>(raw, [buf = std::move(buf), e](Buffer*) mutable {
    trace::MemoryEvent freed = e;
    freed.alloc = false;
    freed.t = trace::clock_seconds();
    buf.reset();
    trace::record_memory(freed);
  });
}

Buffer& ensure_buffer(const UOpRef& b) {
  if (!b->buffer) {
    const ParamArg& pa = b->as<ParamArg>();
    std::shared_ptr<Buffer> buf = memory_device(pa.device).allocate(b->dtype, pa.size);
    b->buffer = trace::recording_calls() ? traced_buffer(std::move(buf), b->id) : std::move(buf);
  }
  return *buffer_of(*b);
}

// what the trace records (engine/trace/records.h) of a host value (a ProgramSpec is a trace::ProgramRecord, a ScheduleItem
// a trace::ScheduleItem)
trace::HostValues host_values(const HostData& h) { return {h.shape, h.dtype, h.f, h.i}; }

// A kernel's program for its device: lowered, rendered and compiled, or found among those made before. With `jobs`,
// a device whose loads may run on other threads compiles it there (the program is returned before it is compiled:
// jobs->wait() before it runs); its trace context ends when the compile does.
std::shared_ptr<Compiled> get_program(const UOpRef& ast, Device& dev, CompileJobs* jobs = nullptr, size_t order = 0) {
  // a program found by BEAM=N, or made under other codegen options (NOOPT=1 in a Context), is another program than the
  // default opts' one
  const std::string pkey = (realize_config().beam >= 1 ? dev.compiler_key() + " " + beam_label() : dev.compiler_key()) + codegen_options_key();
  auto it = g_programs.find({ast.get(), pkey});
  if (it != g_programs.end()) return it->second;
  auto c = std::make_shared<Compiled>();
  c->ast = ast;
  c->device = &dev;
  char key[32];
  std::snprintf(key, sizeof key, "%016zx", ast->hash);
  c->key = key;
  if (realize_config().debug >= 5) std::printf("%s", render_graph(ast).c_str());
  const bool background = jobs && dev.concurrent_loads();
  int context = -1;  // the kernel's trace context, while its compile runs in the background
  {
    trace::ContextScope scope(trace::ContextKind::Kernel, "");
    if (std::optional<std::vector<Opt>> set = kernel_opts_override(c->key)) {
      // opts set by hand (KERNEL_OPTS): exactly these, in order; one that does not apply is the run's error
      try {
        c->spec = to_program(ast, dev.renderer(), dev.opt_target(), *set);
      } catch (const KernelOptError& e) {
        throw KernelOptError("KERNEL_OPTS for kernel " + c->key + ": " + e.what());
      }
      c->spec.opts_source = set->empty() ? "none (KERNEL_OPTS)" : "set by KERNEL_OPTS";
    } else if (realize_config().beam >= 1) {
      const BeamResult r = search_opts(ast, dev);
      c->spec = to_program(ast, dev.renderer(), dev.opt_target(), r.opts);
      if (realize_config().beam_lines) print_beam_line(r.final, c->spec);
      const std::string b = beam_label();
      char what[160];
      std::snprintf(what, sizeof what, " search: %zu candidates timed in %.1f s, %s with the default opts -> %s", r.final.timed, r.final.elapsed_s,
                    time_to_str(r.final.default_s, 0).c_str(), time_to_str(r.final.best_s, 0).c_str());
      c->spec.opts_source = r.final.cached ? b + ", from the cache" : !std::isfinite(r.final.best_s) ? b + ": no candidate could be timed" : b + what;
    } else {
      c->spec = to_program(ast, dev.renderer(), dev.opt_target());
      c->spec.opts_source = codegen_option("NOOPT", 0) ? "none (NOOPT=1)" : "hand-coded heuristics";
    }
    scope.rename(c->spec.colored_name);
    if (trace::level() != trace::Level::Off) trace::record_program(c->spec, c->key);
    if (realize_config().debug >= 4) std::printf("%s\n", c->spec.src.c_str());
    // compiled inside the kernel's context: the trace times it (its "compile")
    const bool stamp = trace::level() != trace::Level::Off;
    if (background) {
      context = scope.defer_end();
    } else {
      const double c0 = stamp ? trace::clock_seconds() : 0;
      compile_wait_seconds() = 0;
      c->exe = dev.load(c->spec);
      if (stamp) scope.set_compile(c0 + compile_wait_seconds(), trace::clock_seconds(), c->exe->statistics.get());
    }
  }
  // (in flight until jobs->wait(); compile_all takes a program whose compile failed out again)
  g_programs[{ast.get(), pkey}] = c;
  if (background)
    jobs->start(order, [c, &dev, context] {
      const double c0 = context >= 0 ? trace::clock_seconds() : 0;
      compile_wait_seconds() = 0;
      try {
        c->exe = dev.load(c->spec);
      } catch (...) {
        trace::finish_compile(context, false, 0, 0);
        throw;
      }
      trace::finish_compile(context, true, c0 + compile_wait_seconds(), context >= 0 ? trace::clock_seconds() : 0, c->exe->statistics.get());
    });
  return c;
}

// the memory a schedule item's output lives in
const std::string& item_memory(const ScheduleItem& it) { return it.bufs[0]->as<ParamArg>().device; }

void print_line(const CallRecord& r, bool first, int nbufs, double total_s) {
  // the header: magenta for a TinyJit replay's call, green for a program's first run
  double et = r.seconds;
  std::string head = "*** " + dev_name(r.device);
  head.resize(std::max<size_t>(head.size(), 11), ' ');
  char num[16];
  std::snprintf(num, sizeof num, " %4d", r.counter);
  head += num;
  std::string name = r.colored_name;
  size_t pad = ansilen(name) < 46 ? 46 - ansilen(name) : 0;
  char rest[256];
  std::string ptm = colored(time_to_str(et, 9), et > 0.01 ? "33" : nullptr);
  double flops = r.estimates.ops / (et ? et : 1e-20), mem = r.estimates.mem / (et ? et : 1e-20), lds = r.estimates.lds / (et ? et : 1e-20);
  std::snprintf(rest, sizeof rest, " arg %2d mem %6.2f GB tm %s/%9.2fms (%7.0f GFLOPS %4.0f|%-6.0f GB/s)", nbufs,
                allocated_bytes() / 1e9, ptm.c_str(), total_s * 1e3, flops * 1e-9, mem * 1e-9, lds * 1e-9);
  std::printf("%s %s%s%s\n", colored(head, r.jit ? "35" : first ? "32" : nullptr).c_str(), name.c_str(), std::string(pad, ' ').c_str(), rest);
  std::fflush(stdout);
}

// the reference's "memory reduced from A MB -> B MB, n -> m bufs" (DEBUG>=1) for the planned intermediates
void print_memory_plan(const Schedule& sched, const std::unordered_map<const UOp*, size_t>& last_use) {
  std::unordered_map<const UOp*, size_t> first_use;
  for (size_t i = 0; i < sched.items.size(); ++i)
    for (auto& b : sched.items[i].bufs)
      if (last_use.count(b.get())) first_use.emplace(b.get(), i);
  double total = 0, live = 0, peak = 0;
  size_t live_n = 0, peak_n = 0;
  for (size_t i = 0; i < sched.items.size(); ++i) {
    for (auto& [b, f] : first_use)
      if (f == i) { live += b->as<ParamArg>().size * b->dtype->itemsize(); total += b->as<ParamArg>().size * b->dtype->itemsize(); ++live_n; }
    peak = std::max(peak, live);
    peak_n = std::max(peak_n, live_n);
    for (auto& [b, l] : last_use)
      if (l == i) { live -= b->as<ParamArg>().size * b->dtype->itemsize(); --live_n; }
  }
  if (peak < total)
    std::printf("memory reduced from %.2f MB -> %.2f MB, %zu -> %zu bufs\n", total / 1e6, peak / 1e6, first_use.size(), peak_n);
}

// The buffers a kernel writes that it (or its other arguments) also reads, with a copy of their bytes: re-running
// such a kernel would read its own output, so timing repeats restore these first.
std::vector<std::pair<Buffer*, std::vector<uint8_t>>> in_place_buffers(const ProgramSpec& spec, const std::vector<Buffer*>& bufs) {
  std::vector<std::pair<Buffer*, std::vector<uint8_t>>> out;
  for (int o : spec.outs) {
    if (o < 0 || static_cast<size_t>(o) >= bufs.size()) continue;
    bool read = false;
    for (int i : spec.ins)
      if (i >= 0 && static_cast<size_t>(i) < bufs.size() && bufs[i] == bufs[o]) read = true;
    if (!read) continue;
    out.emplace_back(bufs[o], read_bytes(*bufs[o]));
  }
  return out;
}

// a COPY call: bytes between two buffers through their devices' memories (host staging between two devices)
void copy_buffer(Buffer& dst, const Buffer& src) {
  const size_t n = std::min(dst.nbytes(), src.nbytes());
  if (dst.ptr) memory_device(src.device).copy_out(dst.ptr, src, n);
  else if (src.ptr) memory_device(dst.device).copy_in(dst, src.ptr, n);
  else {
    std::vector<uint8_t> staging(n);
    memory_device(src.device).copy_out(staging.data(), src, n);
    memory_device(dst.device).copy_in(dst, staging.data(), n);
  }
}

// n elements of h.dtype at p, appended to h.f (float dtypes) or h.i (the others)
void decode_values(const uint8_t* p, int64_t n, HostData& h) {
  const DType dt = h.dtype;
  for (int64_t i = 0; i < n; ++i) {
    const void* s = p + i * dt->itemsize();
    if (dt == dtypes::float32) { float v; std::memcpy(&v, s, 4); h.f.push_back(v); }
    else if (dt == dtypes::float64) { double v; std::memcpy(&v, s, 8); h.f.push_back(v); }
    else if (dt == dtypes::float16) { _Float16 v; std::memcpy(&v, s, 2); h.f.push_back(static_cast<double>(v)); }
    else if (dt == dtypes::bfloat16) {
      uint16_t v;
      std::memcpy(&v, s, 2);
      uint32_t bits = uint32_t{v} << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      h.f.push_back(static_cast<double>(f));
    }
    else if (is_fp8(dt)) { h.f.push_back(fp8_to_float(*static_cast<const uint8_t*>(s), dt)); }
    else if (dt == dtypes::bool_) { h.i.push_back(*static_cast<const uint8_t*>(s) != 0); }
    else {
      int64_t v = 0;
      switch (dt->itemsize()) {
        case 1: v = is_unsigned(dt) ? static_cast<int64_t>(*static_cast<const uint8_t*>(s)) : static_cast<int64_t>(*static_cast<const int8_t*>(s)); break;
        case 2: { int16_t x; uint16_t y; std::memcpy(&x, s, 2); std::memcpy(&y, s, 2); v = is_unsigned(dt) ? static_cast<int64_t>(y) : static_cast<int64_t>(x); break; }
        case 4: { int32_t x; uint32_t y; std::memcpy(&x, s, 4); std::memcpy(&y, s, 4); v = is_unsigned(dt) ? static_cast<int64_t>(y) : static_cast<int64_t>(x); break; }
        default: std::memcpy(&v, s, 8);
      }
      h.i.push_back(v);
    }
  }
}

// a buffer's first `max` elements, read back to the host (a snapshot of what a call wrote): only those are copied
HostData read_buffer_head(Buffer& b, size_t max) {
  HostData h;
  h.shape = {static_cast<int64_t>(b.size)};
  h.dtype = b.dtype;
  const size_t n = std::min(static_cast<size_t>(b.size), max);
  if (n == 0) return h;
  std::vector<uint8_t> staged;
  if (!b.ptr) {
    staged.resize(n * b.dtype->itemsize());
    memory_device(b.device).copy_out(staged.data(), b, staged.size());
  }
  decode_values(static_cast<const uint8_t*>(b.ptr ? b.ptr : staged.data()), static_cast<int64_t>(n), h);
  return h;
}

}  // namespace

// Kernels are lowered in order on this thread; those of devices with concurrent loads compile on the workers
// meanwhile. The error raised is the one of the first kernel that failed, as if they compiled one after another: a
// compile's error before a later kernel's lowering error; no kernel is lowered once a compile has failed.
std::vector<std::shared_ptr<Compiled>> compile_all(const Schedule& sched) {
  std::vector<std::shared_ptr<Compiled>> progs(sched.items.size());
  CompileJobs jobs;
  std::exception_ptr lowering_error;
  try {
    for (size_t i = 0; i < sched.items.size() && !jobs.failed(); ++i)
      if (sched.items[i].kind == ScheduleItem::Kind::Kernel) progs[i] = get_program(sched.items[i].ast, kernel_device(item_memory(sched.items[i])), &jobs, i);
  } catch (...) {
    lowering_error = std::current_exception();
  }
  std::exception_ptr error = jobs.wait();
  if (error) {
    // a program whose compile failed is not kept: the next realize of its kernel tries again, as after a failure here
    for (auto it = g_programs.begin(); it != g_programs.end();)
      it = !it->second->exe && it->second->device->concurrent_loads() ? g_programs.erase(it) : std::next(it);
    std::rethrow_exception(error);
  }
  if (lowering_error) std::rethrow_exception(lowering_error);
  return progs;
}

namespace {

// One run of a schedule's calls: compiled first (all kernels of a LINEAR before the first one runs), then each call
// in order on its device, its record finished (timed, counted, printed at DEBUG=2, traced) in order.
class ScheduleRun {
 public:
  ScheduleRun(const Schedule& sched, bool update_stats, const RunOverrides& over);
  // a failing schedule still submits (or drops) what it recorded, and waits for its graph calls
  ~ScheduleRun() {
    if (done_) return;
    try { flush(); } catch (...) {}
    try { wait_graphs(); } catch (...) {}
  }
  ScheduleRun(const ScheduleRun&) = delete;
  ScheduleRun& operator=(const ScheduleRun&) = delete;
  void run();

 private:
  // Graph calls (a TinyJit replay's batches): each starts its device's Graph and runs while the host goes on to the
  // next one; they are waited for, in order, before any other call and at the end, and their kernels' records are
  // finished then
  struct RunningGraph {
    const GraphCall* call;
    std::vector<std::pair<size_t, CallRecord>> recs;
  };
  // a call's buffer as this run sees it (a replay's inputs replace the capture's)
  const UOpRef& arg(const UOpRef& b) const {
    if (over_.sub)
      if (auto f = over_.sub->find(b.get()); f != over_.sub->end()) return f->second;
    return b;
  }
  void finish(size_t i, CallRecord rec);
  void flush();
  void wait_graphs();
  void print_graph_line(const RunningGraph& rg, const std::vector<double>& times) const;
  std::vector<int64_t> kernel_vars(const Compiled& c) const;
  void kernel_record(CallRecord& rec, const Compiled& c, const ScheduleItem& it, size_t nbufs) const;
  void call_buffers(const ScheduleItem& it, std::vector<Buffer*>& out, CallRecord& rec);
  void release_last_uses(const ScheduleItem& it, size_t i);
  void stamp_buffers(CallRecord& rec, size_t i) const;
  void start_graph(const GraphCall& g);
  void run_call(size_t i);

  const Schedule& sched_;
  const bool update_stats_;
  const RunOverrides& over_;
  const std::map<std::string, int64_t>& var_vals_;
  const bool jit_;
  std::vector<std::shared_ptr<Compiled>> compiled_now_;
  const std::vector<std::shared_ptr<Compiled>>* progs_ = nullptr;
  const int run_;
  int sidx_ = 0;
  // memory planning: an intermediate's storage goes back to the allocator right after its last reader, so a later
  // intermediate of the same size reuses it (the reference packs them into one arena; the peak is what matters)
  std::unordered_map<const UOp*, size_t> last_use_;
  // Kernels of a device that batches (VULKAN) go into one command buffer, submitted when something else needs the
  // memory (a copy, another device, a timing repeat, the end): their records wait for the batch's times, then are
  // finished in order like every other call
  Device* batch_dev_ = nullptr;
  std::vector<std::pair<size_t, CallRecord>> pending_;
  bool timed_ = true;   // whether a batch measures each kernel's own time: only when something shows it
  bool snap_ = false;   // every call's output read back right after it ran (RealizeConfig::snapshots): calls run one
                        // at a time, unbatched, so each one's buffer holds what that call wrote
  bool repeats_ = false;  // timing repeats (RealizeConfig::repeat)
  bool stamp_ = false;    // the trace records the calls: each gets its launch time and the buffers it writes and reads
  std::vector<RunningGraph> running_;
  std::vector<Buffer*> bufs_;  // (one item's, its storage reused)
  bool done_ = false;
};

ScheduleRun::ScheduleRun(const Schedule& sched, bool update_stats, const RunOverrides& over)
    : sched_(sched), update_stats_(update_stats), over_(over), var_vals_(over.var_vals ? *over.var_vals : sched.var_vals),
      jit_(sched.jit || over.jit), run_(g_runs++) {
  if (sched.programs.size() != sched.items.size()) compiled_now_ = compile_all(sched);
  progs_ = sched.programs.size() == sched.items.size() ? &sched.programs : &compiled_now_;
  // the trace's schedule these calls belong to: a replay's is the captured LINEAR's, a realize's its own
  sidx_ = over.trace_schedule >= 0 ? over.trace_schedule : sched.trace_schedule;
  if (sidx_ < 0) sidx_ = g_last_schedule;
  g_last_schedule = sidx_;
  for (auto& b : sched.intermediates) last_use_[b.get()] = 0;
  for (size_t i = 0; i < sched.items.size(); ++i)
    for (auto& b : sched.items[i].bufs)
      if (auto lu = last_use_.find(b.get()); lu != last_use_.end()) lu->second = i;
  if (realize_config().debug >= 1 && !last_use_.empty()) print_memory_plan(sched, last_use_);
  const RealizeConfig& rc = realize_config();
  timed_ = rc.time_kernels || rc.debug >= 2 || rc.repeat > 1 || trace::recording_calls();
  snap_ = update_stats && rc.snapshots && trace::recording_calls();
  repeats_ = update_stats && rc.repeat > 1;
  stamp_ = update_stats && trace::recording_calls();
}

void ScheduleRun::finish(size_t i, CallRecord rec) {
  const ScheduleItem& it = sched_.items[i];
  g_time_sum += rec.seconds;
  g_work.ops += rec.estimates.ops;
  g_work.mem += rec.estimates.mem;
  rec.counter = ++g_counter;
  rec.schedule_index = sidx_;
  rec.run = run_;
  bool first = false;
  if (it.kind == ScheduleItem::Kind::Kernel) {
    first = !g_seen_program[(*progs_)[i]->ast.get()];
    g_seen_program[(*progs_)[i]->ast.get()] = true;
  } else {
    // a copy's body is keyed by its size and devices, as the reference's first-run cache sees it
    first = g_seen_copies.insert(rec.name).second;
  }
  rec.first_run = first;
  rec.jit = jit_;
  if (realize_config().debug >= 2) print_line(rec, first, rec.num_args, g_time_sum);
  trace::record_call(rec);
  g_calls.push_back(std::move(rec));
  ++g_calls_total;
  if (g_calls.size() > kCallLogSize) g_calls.pop_front();
}

void ScheduleRun::flush() {
  if (!batch_dev_) return;
  Device* d = batch_dev_;
  batch_dev_ = nullptr;
  const double submitted = stamp_ ? trace::clock_seconds() : -1;  // the batch's kernels start on the device from here
  std::vector<double> times = d->end_batch();
  if (times.size() != pending_.size())
    throw Error("device " + d->name() + " returned " + std::to_string(times.size()) + " times for " + std::to_string(pending_.size()) + " kernels");
  for (size_t k = 0; k < pending_.size(); ++k) {
    pending_[k].second.seconds = times[k];
    pending_[k].second.timed = timed_;
    pending_[k].second.launched = submitted;
    if (update_stats_) finish(pending_[k].first, std::move(pending_[k].second));
  }
  pending_.clear();
}

// the reference's DEBUG=2 line of a graph call ("batched N"), printed before its kernels' own lines
void ScheduleRun::print_graph_line(const RunningGraph& rg, const std::vector<double>& times) const {
  CallRecord head;
  head.name = "batched " + std::to_string(rg.recs.size());
  head.colored_name = colored(head.name, "36");
  head.device = rg.recs[0].second.device;
  head.counter = g_counter + 1;
  head.jit = jit_;
  std::unordered_set<const UOp*> args;
  for (size_t k = rg.call->begin; k < rg.call->end; ++k)
    for (auto& b : sched_.items[k].bufs) args.insert(b.get());
  for (size_t k = 0; k < times.size(); ++k) {
    head.seconds += times[k];
    head.estimates.ops += rg.recs[k].second.estimates.ops;
    head.estimates.mem += rg.recs[k].second.estimates.mem;
    head.estimates.lds += rg.recs[k].second.estimates.lds;
  }
  print_line(head, false, static_cast<int>(args.size()), g_time_sum + head.seconds);
}

void ScheduleRun::wait_graphs() {
  std::vector<RunningGraph> todo = std::move(running_);
  running_.clear();
  for (RunningGraph& rg : todo) {
    std::vector<double> times = rg.call->graph->wait();
    if (times.size() != rg.recs.size())
      throw Error("a graph call returned " + std::to_string(times.size()) + " times for " + std::to_string(rg.recs.size()) + " kernels");
    const int number = ++g_graph_calls;
    if (update_stats_ && realize_config().debug >= 2) print_graph_line(rg, times);
    for (size_t k = 0; k < rg.recs.size(); ++k) {
      CallRecord& r = rg.recs[k].second;
      r.seconds = times[k];
      r.timed = timed_;
      r.graph = number;
      if (update_stats_) finish(rg.recs[k].first, std::move(r));
    }
  }
}

// the Variable values a kernel reads, in its spec's order
std::vector<int64_t> ScheduleRun::kernel_vars(const Compiled& c) const {
  std::vector<int64_t> vars;
  for (auto& name : c.spec.vars) {
    auto v = var_vals_.find(name);
    if (v == var_vals_.end()) throw Error("kernel " + c.spec.name + " needs a value for Variable " + name);
    vars.push_back(v->second);
  }
  return vars;
}

void ScheduleRun::kernel_record(CallRecord& rec, const Compiled& c, const ScheduleItem& it, size_t nbufs) const {
  rec.kind = "kernel";
  rec.name = c.spec.name;
  rec.colored_name = c.spec.colored_name;
  rec.device = buffer_of(*arg(it.bufs[0]))->device;
  rec.global_size = c.spec.global_size;
  rec.applied_opts = c.spec.applied_opts;
  rec.program_key = c.key;
  rec.statistics = c.exe ? c.exe->statistics : nullptr;
  rec.estimates = c.spec.estimates;
  rec.num_args = static_cast<int>(nbufs);
}

// a call's buffers, allocated where they are not yet: a call's input that nothing wrote yet (Tensor.empty) reads as
// zeros on the host, not as whatever memory the allocator hands back (a program's results do not depend on what ran
// before it)
void ScheduleRun::call_buffers(const ScheduleItem& it, std::vector<Buffer*>& out, CallRecord& rec) {
  for (size_t k = 0; k < it.bufs.size(); ++k) {
    const UOpRef& b = arg(it.bufs[k]);
    const bool unwritten = k > 0 && !b->buffer;
    Buffer& buf = ensure_buffer(b);
    if (unwritten && buf.ptr) std::memset(buf.ptr, 0, buf.nbytes());
    out.push_back(&buf);
    rec.arg_sizes.push_back({buf.size, buf.dtype->name});
  }
}

// the buffers a call writes and reads, by BUFFER uop id (the trace's flows go from a buffer's writer to its readers)
void ScheduleRun::stamp_buffers(CallRecord& rec, size_t i) const {
  const ScheduleItem& it = sched_.items[i];
  auto ids = [&](const std::vector<int>& slots, std::vector<uint64_t>& out) {
    for (int k : slots)
      if (k >= 0 && static_cast<size_t>(k) < it.bufs.size()) out.push_back(arg(it.bufs[k])->id);
  };
  if (it.kind == ScheduleItem::Kind::Copy) {
    ids({0}, rec.writes);
    ids({1}, rec.reads);
    return;
  }
  ids((*progs_)[i]->spec.outs, rec.writes);
  ids((*progs_)[i]->spec.ins, rec.reads);
}

void ScheduleRun::release_last_uses(const ScheduleItem& it, size_t i) {
  for (auto& b : it.bufs)
    if (auto lu = last_use_.find(b.get()); lu != last_use_.end() && lu->second == i) b->buffer.reset();
}

void ScheduleRun::start_graph(const GraphCall& g) {
  flush();
  RunningGraph rg{&g, {}};
  std::vector<GraphKernel> kernels(g.end - g.begin);
  std::vector<CallRecord> recs(g.end - g.begin);
  for (size_t j = g.begin; j < g.end; ++j) {
    const Compiled& c = *(*progs_)[j];
    GraphKernel& k = kernels[j - g.begin];
    call_buffers(sched_.items[j], k.bufs, recs[j - g.begin]);
    k.spec = &c.spec;
    k.exe = c.exe.get();
    k.vars = kernel_vars(c);
  }
  const double started = stamp_ ? trace::clock_seconds() : -1;
  g.graph->start(kernels, timed_);
  // the records are made while the device runs the graph
  for (size_t j = g.begin; j < g.end; ++j) {
    kernel_record(recs[j - g.begin], *(*progs_)[j], sched_.items[j], kernels[j - g.begin].bufs.size());
    if (stamp_) {
      recs[j - g.begin].launched = started;
      stamp_buffers(recs[j - g.begin], j);
    }
    rg.recs.emplace_back(j, std::move(recs[j - g.begin]));
  }
  running_.push_back(std::move(rg));
  // (the graph keeps what it runs on alive until it is waited for)
  for (size_t j = g.begin; j < g.end; ++j) release_last_uses(sched_.items[j], j);
}

// one call on its own: a copy, or a kernel (recorded into its device's open batch where the device batches)
void ScheduleRun::run_call(size_t i) {
  const ScheduleItem& it = sched_.items[i];
  bufs_.clear();
  if (!running_.empty()) wait_graphs();
  CallRecord rec;
  Device* runner = it.kind == ScheduleItem::Kind::Kernel ? (*progs_)[i]->device : nullptr;
  if (batch_dev_ && (runner != batch_dev_ || repeats_ || snap_)) flush();
  if (!batch_dev_ && runner && runner->batches() && !repeats_ && !snap_) {
    runner->begin_batch(timed_);
    batch_dev_ = runner;
  }
  call_buffers(it, bufs_, rec);
  if (stamp_) {
    stamp_buffers(rec, i);
    rec.launched = trace::clock_seconds();
  }
  auto t0 = std::chrono::steady_clock::now();
  if (it.kind == ScheduleItem::Kind::Copy) {
    Buffer& dst = *buffer_of(*arg(it.bufs[0]));
    Buffer& src = *buffer_of(*arg(it.bufs[1]));
    copy_buffer(dst, src);
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rec.kind = "copy";
    char nm[128];
    std::snprintf(nm, sizeof nm, "copy %10s, %7s <- %-7s", size_to_str(dst.nbytes()).c_str(), dev_name(dst.device).c_str(),
                  dev_name(src.device).c_str());
    rec.name = nm;
    rec.colored_name = colored(nm, "33");
    rec.device = dst.device;
    rec.estimates.mem = rec.estimates.lds = static_cast<double>(dst.nbytes());
    rec.num_args = 2;
  } else {
    const Compiled& c = *(*progs_)[i];
    const std::vector<int64_t> vars = kernel_vars(c);
    // the state of every buffer this kernel both writes and reads, taken before it first runs (timing repeats only)
    std::vector<std::pair<Buffer*, std::vector<uint8_t>>> before;
    if (repeats_) before = in_place_buffers(c.spec, bufs_);
    rec.seconds = c.device->launch(c.spec, *c.exe, bufs_, vars);  // -1: recorded into the open batch
    // timing repeats must not change any buffer: a kernel that writes memory it reads (an RNG counter bumped in
    // place, an assign that accumulates into its target) is re-run on its inputs as they were before the first run,
    // restored from a copy, so every repeat computes what the first run computed
    if (repeats_) {
      const int repeat = realize_config().repeat;
      std::vector<std::pair<Buffer*, std::vector<uint8_t>>> saved = std::move(before);
      rec.repeat_mode = saved.empty() ? "rerun" : "restored";
      rec.repeat_seconds.push_back(rec.seconds);
      for (int k = 1; k < repeat; ++k) {
        for (auto& [b, bytes] : saved) write_bytes(*b, bytes);
        rec.repeat_seconds.push_back(c.device->launch(c.spec, *c.exe, bufs_, vars));
      }
    }
    kernel_record(rec, c, it, bufs_.size());
  }
  // what the call wrote, before memory planning hands its storage on (a kernel's outputs, a copy's destination)
  struct Written {
    int arg;
    size_t count;
    HostData head;
  };
  std::vector<Written> written;
  if (snap_) {
    std::vector<int> outs = it.kind == ScheduleItem::Kind::Copy ? std::vector<int>{0} : (*progs_)[i]->spec.outs;
    size_t left = trace::snapshot_values_left();
    for (int o : outs)
      if (o >= 0 && static_cast<size_t>(o) < bufs_.size()) {
        const size_t n = static_cast<size_t>(bufs_[o]->size);
        written.push_back({o, n, read_buffer_head(*bufs_[o], left)});
        left -= std::min(left, n);
      }
  }
  // (a batch keeps the buffers it recorded alive until it is submitted)
  release_last_uses(it, i);
  if (batch_dev_ && rec.seconds < 0) {
    pending_.emplace_back(i, std::move(rec));
    return;
  }
  if (update_stats_) finish(i, std::move(rec));
  for (auto& w : written) trace::record_snapshot(host_values(w.head), w.arg, w.count);
}

void ScheduleRun::run() {
  const bool plain = repeats_ || snap_;  // every call on its own (no graph calls)
  size_t next_graph = 0;
  for (size_t i = 0; i < sched_.items.size(); ++i) {
    if (next_graph < sched_.graphs.size() && sched_.graphs[next_graph].begin == i && !plain) {
      const GraphCall& g = sched_.graphs[next_graph++];
      start_graph(g);
      i = g.end - 1;
      continue;
    }
    run_call(i);
  }
  flush();
  wait_graphs();
  done_ = true;
}

}  // namespace

void run_schedule(const Schedule& sched, bool update_stats, const RunOverrides& over) {
  ScheduleRun r(sched, update_stats, over);
  r.run();
}

namespace {

void apply_becomes(const Schedule& s) {
  if (s.becomes.empty()) return;
  for (auto& t : live_tensors()) {
    UOpRef n = substitute(t->uop, s.becomes);
    if (n != t->uop) t->uop = n;
  }
}

// a node the multi pass rewrote became what its rewrite became: an MSTACK of its shards' buffers, or the buffer of
// the one-device value it became (a gather)
void compose_multi_becomes(Schedule& sched, const std::unordered_map<const UOp*, UOpRef>& lowered) {
  auto became = [&](const UOpRef& u) -> UOpRef {
    if (auto it = sched.becomes.find(u.get()); it != sched.becomes.end()) return it->second;
    return buffer_base(u.get()) ? u : nullptr;
  };
  std::vector<std::pair<const UOp*, UOpRef>> add;
  for (auto& [orig, low] : lowered) {
    if (orig == low.get()) continue;
    UOpRef to;
    if (low->op == Ops::MSTACK) {
      UOps bufs;
      for (auto& s : low->src) {
        if (UOpRef b = became(s)) bufs.push_back(b);
        else break;
      }
      if (bufs.size() == low->src.size()) to = mstack(std::move(bufs), multi_axis(low));
    } else {
      to = became(low);
    }
    if (to) add.emplace_back(orig, to);
  }
  for (auto& [orig, to] : add) {
    sched.becomes[orig] = to;
    sched.keep_alive.push_back(orig->ref());
  }
}

// apply: the tensors become their buffers now (else the caller applies the schedule's `becomes`)
Schedule make_schedule(const std::vector<std::shared_ptr<TensorData>>& ts, bool apply = true) {
  UOps outs;
  for (auto& t : ts) outs.push_back(t->uop);
  Schedule sched;
  {
    trace::ContextScope scope(trace::ContextKind::Schedule, "Schedule");
    trace::snapshot_tensor_graph(outs);
    // multi-device values: one graph per device first; what each multi-device node became is its shards' buffers
    std::unordered_map<const UOp*, UOpRef> lowered;
    UOps per_device;
    for (auto& l : lower_multi(outs, &lowered)) {
      if (l->op != Ops::MSTACK) per_device.push_back(l);
      else
        for (auto& s : l->src)
          if (!buffer_base(s.get())) per_device.push_back(s);
    }
    if (!per_device.empty()) sched = create_schedule(per_device);
    compose_multi_becomes(sched, lowered);
    int nk = 0;
    for (auto& it : sched.items) nk += it.kind == ScheduleItem::Kind::Kernel;
    // named like the reference's VIZ, plus the script line that asked for it (the forward and the backward realize
    // of a training step read apart at a glance)
    std::string where = caller_location_hook() ? caller_location_hook()() : std::string();
    // (one TinyJit captures runs later, as a whole: its own schedule)
    scope.rename("Schedule " + std::to_string(nk) + (nk == 1 ? " Kernel" : " Kernels") + (capturing() ? " · captured by TinyJit" : "") +
                 (where.empty() ? "" : " · " + where));
    if (trace::level() != trace::Level::Off) sched.trace_schedule = trace::record_schedule(sched.items);
  }
  if (apply) apply_becomes(sched);
  return sched;
}

// the reference's "scheduled N kernels" line: DEBUG>=3, or DEBUG>=1 when a schedule has more than one call
void print_scheduled(const Schedule& sched, double seconds) {
  const int debug = realize_config().debug;
  if (!(debug >= 3 || (debug >= 1 && sched.items.size() > 1))) return;
  std::string where = caller_location_hook() ? caller_location_hook()() : std::string();
  std::printf("scheduled %5zu kernels in %8.2f ms | %10s %08zx | %7zu uops in cache | %s\n", sched.items.size(), seconds * 1e3,
              sched.cache_hit ? "cache hit" : "CACHE MISS", sched.cache_key & 0xffffffffu, live_uop_count(), where.c_str());
  std::fflush(stdout);
}

struct CaptureState {
  bool open = false;
  bool paused = false;
  std::vector<Schedule> schedules;
};
CaptureState& capture_state() {
  static CaptureState c;
  return c;
}

void realize_tensors(const std::vector<std::shared_ptr<TensorData>>& ts) {
  std::lock_guard lk(g_mu);
  auto t0 = std::chrono::steady_clock::now();
  Schedule sched = make_schedule(ts, false);
  print_scheduled(sched, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (capturing()) {  // TinyJit keeps it; it runs when the capture ends
    apply_becomes(sched);
    capture_state().schedules.push_back(std::move(sched));
    return;
  }
  // compiled before the tensors become their buffers: a kernel that cannot compile (a dtype the device lacks, a driver
  // that cannot build the pipeline) leaves every tensor as it was, its value still computable, not a buffer that
  // nothing wrote (read as zeros)
  sched.programs = compile_all(sched);
  apply_becomes(sched);
  run_schedule(sched, true);
}

HostData read_buffer(const UOpRef& view, bool raw) {
  const UOp* u = view.get();
  int64_t offset = 0;
  while (u->op == Ops::RESHAPE || (u->op == Ops::SHRINK && u->src.size() == 1)) {
    if (u->op == Ops::SHRINK) offset += u->as<Shape>()[0];
    u = u->src[0].get();
  }
  if (u->op != Ops::BUFFER) throw Error("internal: read of a non-buffer (" + std::string(op_name(u->op)) + ")");
  Buffer& b = ensure_buffer(u->ref());
  HostData h;
  h.shape = view->shape;
  h.dtype = b.dtype;
  std::vector<uint8_t> staged;
  if (!b.ptr) staged = read_bytes(b);
  const uint8_t* p = static_cast<const uint8_t*>(b.ptr ? b.ptr : staged.data()) + offset * b.dtype->itemsize();
  if (raw) h.raw.assign(p, p + view->numel() * b.dtype->itemsize());
  else decode_values(p, view->numel(), h);
  return h;
}


}  // namespace

std::function<std::string()>& caller_location_hook() {
  static std::function<std::string()> h;
  return h;
}

RealizeConfig& realize_config() {
  static RealizeConfig c;
  return c;
}

std::vector<std::string> device_names() {
  ensure_host_devices();
  return registered_device_names();
}

std::string require_device(const std::string& name) {
  ensure_host_devices();
  return canonical_device(name);
}

void install_realize(RealizeConfig config) {
  ensure_host_devices();
  config.device = require_device(config.device);
  config.repeat = std::max(1, config.repeat);
  realize_config() = config;
  // CPU, CPU:LLVM and INTERP all compute on host memory: their tensors live on "CPU" and the device picks the
  // renderer; a device with its own memory (VULKAN) is where new tensors live
  set_default_device(get_device(config.device).memory());
  realize_hook() = realize_tensors;
  trace_scope_hook() = [](const std::string& name) -> std::shared_ptr<void> {
    std::string where = caller_location_hook() ? caller_location_hook()() : std::string();
    return std::make_shared<trace::ContextScope>(trace::ContextKind::Schedule, where.empty() ? name : name + " · " + where);
  };
  trace_graph_hook() = [](const UOps& graph) { trace::snapshot_tensor_graph(graph); };
  read_hook() = [](const UOpRef& v, bool raw) {
    if (capturing()) throw Error("cannot access tensor data during JIT capture, the value will be baked in", Error::Kind::Jit);
    std::lock_guard lk(g_mu);
    HostData h = read_buffer(v, raw);
    // what the script reads is what a comparison of two devices compares
    if (trace::recording_calls()) {
      HostData values = raw ? read_buffer(v, false) : HostData{};
      trace::record_output(host_values(raw ? values : h), caller_location_hook() ? caller_location_hook()() : std::string());
    }
    return h;
  };
}

const std::deque<CallRecord>& call_log() { return g_calls; }
uint64_t call_count() { return g_calls_total; }
WorkTotals work_totals() { return g_work; }

void compile_schedule(const Schedule& linear) {
  std::lock_guard lk(g_mu);
  compile_all(linear);
}

std::shared_ptr<Schedule> schedule_linear(const std::vector<Tensor>& tensors) {
  std::lock_guard lk(g_mu);
  std::vector<std::shared_ptr<TensorData>> todo;
  for (auto& t : tensors)
    if (!t.device().empty() && !is_weak(t.dtype()) && !t.is_realized()) todo.push_back(t.data_ptr());
  auto s = std::make_shared<Schedule>();
  if (!todo.empty()) *s = make_schedule(todo);
  return s;
}

void run_linear(const Schedule& linear) {
  std::lock_guard lk(g_mu);
  run_schedule(linear, true);
}

void begin_capture() {
  std::lock_guard lk(g_mu);
  CaptureState& c = capture_state();
  if (c.open) throw Error("having TinyJit inside another TinyJit is not supported");
  c.open = true;
  c.schedules.clear();
}

std::pair<std::shared_ptr<Schedule>, size_t> end_capture() {
  std::lock_guard lk(g_mu);
  CaptureState& c = capture_state();
  auto out = std::make_shared<Schedule>();
  for (auto& s : c.schedules) {
    out->items.insert(out->items.end(), s.items.begin(), s.items.end());
    out->intermediates.insert(out->intermediates.end(), s.intermediates.begin(), s.intermediates.end());
    for (auto& [k, v] : s.var_vals) out->var_vals[k] = v;
  }
  const size_t n = c.schedules.size();
  c.schedules.clear();
  c.open = false;
  return {out, n};
}

bool capturing() { return capture_state().open && !capture_state().paused; }
bool& capture_paused() { return capture_state().paused; }

}  // namespace ts
