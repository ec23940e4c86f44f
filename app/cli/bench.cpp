// Workloads written in C++ against the engine; every figure is relative to limits measured in the same run
// (memory bandwidth with a STREAM-like add and read, compute with an FMA loop), both compiled by the same JIT
// that compiles the kernels.
#include "app/cli/bench.h"
#include "app/cli/bench_external.h"
#include "app/cli/bench_run.h"
#include "app/cli/cli.h"
#include "app/cli/limits_cache.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/trace/trace.h"
#include "engine/runtime/allocator.h"
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/tensor/tensor.h"

extern char** environ;

namespace tscli {

namespace {


struct Limits {
  double add_gbs = 0, read_gbs = 0, fma_gflops = 0;
  int threads = 1;
};

// run fn(t) on `n` threads at once, return the wall time
double parallel(int n, const std::function<void(int)>& fn) {
  auto t0 = clk::now();
  std::vector<std::thread> ts;
  for (int i = 1; i < n; ++i) ts.emplace_back(fn, i);
  fn(0);
  for (auto& t : ts) t.join();
  return seconds_since(t0);
}

Limits measure_limits() {
  Limits l;
  l.threads = std::max(1u, std::thread::hardware_concurrency());
  const char* csrc = R"(
typedef float f16 __attribute__((ext_vector_type(16)));
void add_kernel(float* restrict a, const float* restrict b, const float* restrict c, long lo, long hi) {
  for (long i = lo; i < hi; i++) a[i] = b[i] + c[i];
}
float read_kernel(const float* restrict b, long lo, long hi) {
  f16 acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0;
  for (long i = lo; i + 64 <= hi; i += 64) {
    acc0 += *(const f16*)(b + i); acc1 += *(const f16*)(b + i + 16); acc2 += *(const f16*)(b + i + 32); acc3 += *(const f16*)(b + i + 48);
  }
  f16 s = acc0 + acc1 + acc2 + acc3;
  float r = 0; for (int k = 0; k < 16; k++) r += s[k];
  return r;
})";
  // 8 independent 16-wide fma chains per iteration: 8*16*2 flops
  const char* ir = R"(
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
define float @fma_kernel(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%in, %loop]
  %a0 = phi <16 x float> [zeroinitializer, %entry], [%b0, %loop]
  %a1 = phi <16 x float> [zeroinitializer, %entry], [%b1, %loop]
  %a2 = phi <16 x float> [zeroinitializer, %entry], [%b2, %loop]
  %a3 = phi <16 x float> [zeroinitializer, %entry], [%b3, %loop]
  %a4 = phi <16 x float> [zeroinitializer, %entry], [%b4, %loop]
  %a5 = phi <16 x float> [zeroinitializer, %entry], [%b5, %loop]
  %a6 = phi <16 x float> [zeroinitializer, %entry], [%b6, %loop]
  %a7 = phi <16 x float> [zeroinitializer, %entry], [%b7, %loop]
  %b0 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a0, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %b1 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a1, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %b2 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a2, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %b3 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a3, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %b4 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a4, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %b5 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a5, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %b6 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a6, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %b7 = call <16 x float> @llvm.fma.v16f32(<16 x float> %a7, <16 x float> <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>, <16 x float> <float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0, float 1.0>)
  %in = add i64 %i, 1
  %done = icmp eq i64 %in, %n
  br i1 %done, label %exit, label %loop
exit:
  %s01 = fadd <16 x float> %b0, %b1
  %s23 = fadd <16 x float> %b2, %b3
  %s45 = fadd <16 x float> %b4, %b5
  %s67 = fadd <16 x float> %b6, %b7
  %s03 = fadd <16 x float> %s01, %s23
  %s47 = fadd <16 x float> %s45, %s67
  %s = fadd <16 x float> %s03, %s47
  %r = extractelement <16 x float> %s, i32 0
  ret float %r
})";
  using AddFn = void (*)(float*, const float*, const float*, long, long);
  using ReadFn = float (*)(const float*, long, long);
  using FmaFn = float (*)(long);
  auto add = reinterpret_cast<AddFn>(ts::cpu::compile(ts::cpu::SourceKind::C, csrc, "add_kernel"));
  auto rd = reinterpret_cast<ReadFn>(ts::cpu::compile(ts::cpu::SourceKind::C, csrc, "read_kernel"));
  auto fma = reinterpret_cast<FmaFn>(ts::cpu::compile(ts::cpu::SourceKind::LlvmIr, ir, "fma_kernel"));
  const long n = 16l << 20;
  std::vector<float> a(n, 0.f), b(n, 1.f), c(n, 2.f);
  int T = l.threads;
  auto chunk = [&](int t) { return std::make_pair(n / T * t, t == T - 1 ? n : n / T * (t + 1)); };
  double best = 1e9;
  // best of 10 and 20: on a shared machine one pass can read a third of what the next reads
  for (int rep = 0; rep < 10; ++rep)
    best = std::min(best, parallel(T, [&](int t) { auto [lo, hi] = chunk(t); add(a.data(), b.data(), c.data(), lo, hi); }));
  l.add_gbs = 12.0 * n / best / 1e9;
  best = 1e9;
  volatile float sink = 0;
  for (int rep = 0; rep < 20; ++rep)
    best = std::min(best, parallel(T, [&](int t) { auto [lo, hi] = chunk(t); sink = sink + rd(b.data(), lo, hi); }));
  l.read_gbs = 4.0 * n / best / 1e9;
  const long iters = 20000000;
  best = 1e9;
  for (int rep = 0; rep < 3; ++rep) best = std::min(best, parallel(T, [&](int) { sink = sink + fma(iters); }));
  l.fma_gflops = 8.0 * 16 * 2 * iters * T / best / 1e9;
  return l;
}

// what measure_limits() measured, as the limits cache keeps it: the add bandwidth is the roof's slope (it counts
// every byte read and written, as the kernels' estimated memory does), the FMA loop its flat part
MeasuredLimits cpu_limits_entry(const Limits& l) {
  MeasuredLimits m;
  m.device = "CPU";
  m.machine = cpu_machine();
  m.measured_at = utc_now();
  const std::string threads = std::to_string(l.threads) + (l.threads == 1 ? " thread" : " threads");
  m.bandwidth_gbs = l.add_gbs;
  m.bandwidth_label = "add bandwidth GB/s (STREAM-like add a[i] = b[i] + c[i] over 3 x 64 MiB fp32, 12 bytes an element, " +
                      threads + ", C compiled by the JIT)";
  m.peak_gflops = l.fma_gflops;
  m.peak_label = "FMA peak GFLOP/s fp32 (8 independent chains of 16-wide FMA, 2 FLOP an FMA, " + threads + ", LLVM IR compiled by the JIT)";
  m.figures.push_back({"read bandwidth", l.read_gbs, "GB/s", "read bandwidth GB/s (a 16-wide sum over 64 MiB fp32, " + threads + ")"});
  return m;
}

ts::Tensor filled(const ts::Shape& s, double v = 1.0) { return ts::Tensor::full(s, v).realize(); }

// a goal of the workload table: a ratio to a measured limit (or to the reference's time), at least `at_least`
struct Goal {
  double at_least = 0;  // 0: no goal in this column
  bool vs_reference = false;  // the ratio is the reference's time over this one's (the figure is "Nx the reference's")
};
struct Workload {
  std::string name;
  double bytes = 0, flops = 0;  // per run
  std::function<ts::Tensor()> build;
  // the closed form of every output element (the inputs are constant fills), or of element i
  std::function<double(int64_t)> expect;
  int reps = 5;  // timed runs after the first (the figure is the best of them)
  // the goals of the default opts, BEAM=N, and BEAM=N with TS_OPTS=extended; max_search_s: BEAM=N's search time
  Goal goal[3] = {{}, {}, {}};  // (initialized here, as least_s and passes: most rows leave them out)
  double max_search_s = 0;
  // where the kernel split itself bounds the figure: the least time its passes over memory take at the machine's
  // limits, and what those passes are
  std::function<double(const Limits&)> least_s{};
  std::string passes{};
};

// "ok", or where the output differs from the closed form (relative tolerance for float accumulation orders)
std::string verify(const ts::Tensor& t, const std::function<double(int64_t)>& expect) {
  ts::HostData h = t.data();
  for (size_t i = 0; i < h.f.size(); ++i) {
    const double e = expect(static_cast<int64_t>(i)), a = h.f[i];
    if (!(std::fabs(a - e) <= 1e-4 * std::max(1.0, std::fabs(e)))) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "WRONG at [%zu]: %g, expected %g", i, a, e);
      return buf;
    }
  }
  return "ok";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// what one column of a row measured
struct Measured {
  bool ran = false;
  std::string why;        // not run: the error
  double best = 0;        // seconds, the kernels of the schedule summed, best of the timed runs
  double rate = 0;        // GB/s or GFLOP/s
  int nkernels = 0;
  double setup = 0;       // schedule + codegen + compile (+ search) of the first run
  double search = 0;      // BEAM: seconds searching, summed over the kernels searched
  int searched = 0, cached = 0;
  std::string check, each;
};

const char* limit_name(const Workload& w) { return w.flops > 0 ? "FMA peak" : w.name.rfind("add", 0) == 0 ? "add bw" : "read bw"; }
double limit_of(const Workload& w, const Limits& l) { return w.flops > 0 ? l.fma_gflops : w.name.rfind("add", 0) == 0 ? l.add_gbs : l.read_gbs; }

Measured measure(const Workload& w, std::vector<ts::BeamProgress>& searched) {
  Measured m;
  RealizeRun cold;
  searched.clear();
  try {
    // the output is checked, then let go before the timed runs (so they reuse its memory, as a program would)
    ts::Tensor out;
    cold = realize_timed(w.build, &out);
    m.check = verify(out, w.expect);
    out = ts::Tensor();
    const auto warm_from = clk::now();
    for (int n = 0; n < 2 || seconds_since(warm_from) < kWarmSeconds; ++n) realize_timed(w.build);
    double best = 1e9;
    RealizeRun warm;
    for (int i = 0; i < w.reps; ++i) {
      RealizeRun r = realize_timed(w.build);
      if (r.kernels < best) { best = r.kernels; warm = r; }
    }
    m.ran = true;
    m.best = best;
    m.nkernels = warm.nkernels;
    m.each = warm.each;
  } catch (const std::exception& e) {  // a device that cannot run it says why (the figure is missing, not made up)
    m.why = e.what();
    return m;
  }
  m.setup = cold.wall - cold.kernels;
  m.rate = (w.flops > 0 ? w.flops : w.bytes) / m.best / 1e9;
  for (auto& p : searched) {
    if (p.cached) ++m.cached;
    else ++m.searched, m.search += p.elapsed_s;
  }
  return m;
}

void print_measured(const std::string& label, const Workload& w, const Measured& m, const Limits& l) {
  if (!m.ran) {
    std::printf("%-28s %-10s not run: %s\n", label.c_str(), "", m.why.c_str());
    return;
  }
  std::printf("%-28s %10.3f ms  %8.1f %s  %5.1f%% of %-8s  kernels %2d  first-run setup %7.1f ms  output %s\n", label.c_str(), m.best * 1e3,
              m.rate, w.flops > 0 ? "GFLOP/s" : "GB/s   ", 100 * m.rate / limit_of(w, l), limit_name(w), m.nkernels, m.setup * 1e3, m.check.c_str());
  if (m.searched || m.cached) {
    std::printf("%-28s BEAM searched %d kernel%s in %.1f s%s\n", "", m.searched, m.searched == 1 ? "" : "s", m.search,
                m.cached ? (" (" + std::to_string(m.cached) + " from the cache)").c_str() : "");
    std::printf("%-28s kernels: %s\n", "", m.each.c_str());
  }
  std::fflush(stdout);
}


std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "tinyscope";
  buf[n] = 0;
  return buf;
}

double time_process(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  auto t0 = clk::now();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) return -1;
  int st = 0;
  waitpid(pid, &st, 0);
  posix_spawn_file_actions_destroy(&fa);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? seconds_since(t0) : -1;
}

}  // namespace

void save_measured_limits(const MeasuredLimits& l, bool required) {
  const std::string path = limits_cache_path();
  try {
    write_limits(path, l);
    std::printf("limits of %s written to %s\n", l.device.c_str(), path.c_str());
  } catch (const std::exception& e) {
    if (required) throw;
    std::printf("(the limits are not kept: %s)\n", e.what());
  }
  std::fflush(stdout);
}

double seconds_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

RealizeRun realize_timed(const std::function<ts::Tensor()>& build, ts::Tensor* out) {
  uint64_t before = ts::call_count();
  auto t0 = clk::now();
  ts::Tensor t = build();
  t.realize();
  RealizeRun r;
  r.wall = seconds_since(t0);
  if (out) *out = t;
  const auto& log = ts::call_log();
  size_t n = std::min<uint64_t>(ts::call_count() - before, log.size());
  for (size_t i = log.size() - n; i < log.size(); ++i)
    if (log[i].kind == "kernel") {
      r.kernels += log[i].seconds;
      r.nkernels++;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %.1f us", r.each.empty() ? "" : ", ", log[i].name.c_str(), log[i].seconds * 1e6);
      r.each += buf;
      if (log[i].statistics && !log[i].statistics->empty()) {
        r.compiled += (r.compiled.empty() ? "" : "; ") + log[i].name + ":";
        for (auto& [name, value] : *log[i].statistics) r.compiled += " " + name + " " + value + ",";
        r.compiled.pop_back();
      }
    }
  return r;
}

namespace {

// the command line of `tinyscope bench`
struct BenchArgs {
  bool quick = false, limits_only = false;
  std::string only, reference;
  ts::RealizeConfig config = tscli::realize_config_from_env();
};

BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs args;
  auto& [quick, limits_only, only, reference, config] = args;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--limits") limits_only = true;
    else if (a == "--dev" && i + 1 < argc) config.device = argv[++i];
    else if (a == "--beam" && i + 1 < argc) config.beam = std::max(0, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--reference" && i + 1 < argc) reference = argv[++i];
    else throw std::runtime_error("unknown argument '" + a +
                                  "' (usage: tinyscope bench [--quick] [--dev DEV] [--beam N] [--only TEXT] [--reference TINYGRAD_DIR] | --limits [--dev DEV])");
  }
  return args;
}

// `bench --limits` on a host device: the limits alone, into the limits cache
int run_cpu_limits(const std::string& dev) {
  std::printf("tinyscope bench --limits  device %s (%s)\n", dev.c_str(), cpu_machine().c_str());
  std::fflush(stdout);
  const Limits l = measure_limits();
  const MeasuredLimits m = cpu_limits_entry(l);
  std::printf("  %s: %.1f\n  %s: %.1f\n  %s: %.1f\n", m.bandwidth_label.c_str(), m.bandwidth_gbs, m.figures[0].label.c_str(),
              m.figures[0].value, m.peak_label.c_str(), m.peak_gflops);
  save_measured_limits(m, /*required=*/true);
  std::printf("limits: %s\n", limits_summary(m).c_str());
  return 0;
}

// the header: the target, the device and the machine's limits (kept in the limits cache)
Limits print_machine(const std::string& dev) {
  std::printf("tinyscope bench  (target %s)\n", ts::cpu::target_description().substr(0, 60).c_str());
  std::printf("device %s", dev.c_str());
  for (auto& [k, v] : ts::get_device(dev).properties())
    if (k == "device" || k == "compiler") std::printf(": %s", v.c_str());
  std::printf("\n");
  Limits l = measure_limits();
  std::printf("machine limits (%d threads): add %.1f GB/s, read %.1f GB/s, FMA peak %.1f GFLOP/s\n", l.threads, l.add_gbs,
              l.read_gbs, l.fma_gflops);
  save_measured_limits(cpu_limits_entry(l), /*required=*/false);
  std::printf("\n");
  return l;
}

// the rows of the setup times: a cold process, a new small kernel, a program of 200 kernels
void bench_setup_rows(const std::string& dev, bool host) {
  // tutorial example, cold process: start to printed result
  std::string src = TINYSCOPE_SOURCE_DIR;
  std::vector<double> cold;
  setenv("DEV", dev.c_str(), 1);
  for (int i = 0; i < 3; ++i) cold.push_back(time_process({self_exe(), "run", src + "/resources/examples/tutorial.py"}));
  std::printf("tutorial example, cold process start to result (DEV=%s): median %.0f ms (target <= 500 ms)\n", dev.c_str(), median(cold) * 1e3);

  // a new small kernel's schedule + codegen + compile, per renderer (the host ones, or the device's)
  const std::vector<std::string> setup_devs = host ? std::vector<std::string>{"CPU", "CPU:LLVM"} : std::vector<std::string>{dev};
  for (const std::string& d : setup_devs) {
    ts::realize_config().device = d;
    ts::Tensor x = filled({64});
    std::vector<double> setup;
    for (int k = 0; k < 25; ++k) {
      double c = 1.0 + k * 0.125;
      RealizeRun r = realize_timed([&] { return x.mul(ts::Tensor::scalar(c, ts::dtypes::weakfloat)).add(ts::Tensor::scalar(k, ts::dtypes::weakint)).contiguous(); });
      setup.push_back(r.wall - r.kernels);
    }
    std::printf("new small kernel, schedule+codegen+compile (%s): median %.2f ms over 25 (target %s)\n", d.c_str(), median(setup) * 1e3,
                d == "CPU:LLVM" ? "<= 10 ms" : "<= 20 ms");
  }
  ts::realize_config().device = dev;

  // a program of 200 distinct tiny kernels, compiled once, then run again with everything cached
  {
    ts::Tensor x = filled({16});
    auto prog = [&] {
      ts::Tensor y = x;
      for (int k = 0; k < 200; ++k) y = y.mul(ts::Tensor::scalar(1.0 + k / 1024.0, ts::dtypes::weakfloat)).contiguous();
      return y;
    };
    RealizeRun first = realize_timed(prog);
    std::vector<double> again;
    for (int i = 0; i < 3; ++i) again.push_back(realize_timed(prog).wall);
    std::printf("200-kernel program: first run %.1f ms, cached %.3f ms per kernel (target <= 0.1 ms)\n\n", first.wall * 1e3,
                median(again) * 1e3 / 200);
  }
}

// TinyJit: the same Python in a child tinyscope (and in the reference beside it), wall time realize to result
// (--only TinyJit: these rows alone)
void bench_tinyjit_rows(const std::string& dev, bool quick, const std::string& reference) {
  const int jreps = quick ? 2 : 5;
  ExternalFigures mine = jit_figures("DEV=" + dev, "'" + self_exe() + "' run", jreps, "tinyscope");
  ExternalFigures ref = reference.empty() ? ExternalFigures{} : reference_jit_figures(reference, jreps);
  auto fig = [](const ExternalFigures& f, const char* name) -> double {
    auto it = f.secs.find(name);
    return it == f.secs.end() ? 0 : it->second;
  };
  std::printf("TinyJit (DEV=%s; wall time, realize to result, best of the timed runs)\n", dev.c_str());
  if (!mine.error.empty()) std::printf("  not run: %s\n", mine.error.c_str());
  const double jc = fig(mine, "jit chain"), sc = fig(mine, "scheduled chain"), rjc = fig(ref, "jit chain");
  if (jc > 0) {
    std::printf("  200 dependent small kernels replayed: %.2f us per kernel (scheduled without the JIT: %.2f us)", jc * 1e6, sc * 1e6);
    if (rjc > 0) std::printf("; the reference's TinyJit: %.2f us -> %.1fx (goal >= 5x) %s", rjc * 1e6, rjc / jc, rjc / jc >= 5 ? "met" : "MISSED");
    else std::printf("; the reference: %s", reference.empty() ? "needs --reference (goal >= 5x)" : ref.error.c_str());
    std::printf("\n");
  }
  const double first = fig(mine, "mlp step first"), sched = fig(mine, "mlp step scheduled"), rep = fig(mine, "mlp step replayed");
  if (rep > 0) {
    std::printf("  2-layer MLP training step (64-128-10, batch 32, Adam): first call %.1f ms, scheduled again %.3f ms, replayed %.3f ms "
                "-> %.0fx the first call (goal >= 10x) %s, %.1fx the scheduled one\n",
                first * 1e3, sched * 1e3, rep * 1e3, first / rep, first / rep >= 10 ? "met" : "MISSED", sched / rep);
    if (const double rrep = fig(ref, "mlp step replayed"); rrep > 0)
      std::printf("  the reference's MLP step: first %.1f ms, scheduled again %.3f ms, replayed %.3f ms (%.1fx tinyscope's replay)\n",
                  fig(ref, "mlp step first") * 1e3, fig(ref, "mlp step scheduled") * 1e3, rrep * 1e3, rrep / rep);
  }
  std::printf("\n");
}

// the workloads; inputs a device cannot make leave their rows out with the reason (the figures are missing, not
// made up)
std::vector<Workload> bench_workloads(bool quick, int reps, const std::string& only) {
  const int64_t M16 = 16 << 20;
  std::vector<Workload> ws;
  auto add_rows = [&](const char* what, const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::printf("%-28s not run: %s\n", what, e.what());
    }
  };
  add_rows("add/sum 16M", [&] {
    ts::Tensor a = filled({M16}), b = filled({M16}, 2.0);
    ws.push_back({"add 16M", 12.0 * M16, 0, [=] { return a.add(b).contiguous(); }, [](int64_t) { return 3.0; }, reps, {{0.9}}});
    ws.push_back({"add fused chain 16M", 12.0 * M16, 0,
                  [=] { return a.mul(b).add(a).mul(ts::Tensor::scalar(0.5, ts::dtypes::weakfloat)).relu().add(b).contiguous(); },
                  [](int64_t) { return 3.5; }, reps});
    ws.push_back({"sum 16M", 4.0 * M16, 0, [=] { return a.sum(); }, [=](int64_t) { return static_cast<double>(M16); }, reps, {{0.85}}});
  });
  add_rows("sum axis 1 4096x4096", [&] {
    ts::Tensor s = filled({4096, 4096});
    ws.push_back({"sum axis 1 4096x4096", 4.0 * 4096 * 4096, 0, [=] { return s.sum(std::vector<int64_t>{1}); }, [](int64_t) { return 4096.0; }, reps});
  });
  add_rows("softmax 4096x1024", [&] {
    ts::Tensor s = filled({4096, 1024});
    ws.push_back({"softmax 4096x1024", 4.0 * 4096 * 1024 * 2, 0, [=] { return s.softmax(-1).contiguous(); }, [](int64_t) { return 1.0 / 1024; },
                  reps, {{0.5}, {0.7}}});
    // (the reference's split: max, sum of exps, quotient; the bytes counted are the input and output once each)
    const double n = 4096.0 * 1024;
    ws.back().least_s = [n](const Limits& l) { return 2 * 4 * n / (l.read_gbs * 1e9) + 8 * n / (l.add_gbs * 1e9); };
    ws.back().passes = "its three kernels (max, sum of exps, quotient) read the input three times and write the output once: two reads "
                       "at the read bandwidth and a read with a write at the add bandwidth";
  });
  for (int64_t n : {512, 1024, 2048}) {
    if (quick && n > 512) break;
    add_rows(("matmul " + std::to_string(n)).c_str(), [&] {
      ts::Tensor a = filled({n, n}), b = filled({n, n});
      Workload w{"matmul " + std::to_string(n), 0, 2.0 * n * n * n, [=] { return a.matmul(b); }, [=](int64_t) { return static_cast<double>(n); },
                 n == 2048 ? 1 : reps};
      if (n == 1024) w.goal[0] = {3.0, true}, w.goal[1] = {0.3}, w.goal[2] = {0.7}, w.max_search_s = 15;
      ws.push_back(w);
    });
  }
  if (!quick) {
    add_rows("conv2d 8x64x56x56 3x3", [&] {
      ts::Tensor x = filled({8, 64, 56, 56}), w = filled({64, 64, 3, 3});
      // ones through a 3x3 kernel with padding 1: 64 channels times the in-bounds taps of each output pixel
      auto taps = [](int64_t i) {
        const int64_t c = i % 56, r = (i / 56) % 56;
        return 64.0 * (3 - (r == 0) - (r == 55)) * (3 - (c == 0) - (c == 55));
      };
      ws.push_back({"conv2d 8x64x56x56 3x3", 0, 2.0 * 8 * 64 * 56 * 56 * 64 * 9, [=] { return x.conv2d(w, std::nullopt, 1, {1}, {1}, {1}); }, taps,
                    reps, {{2.0, true}, {0.3}, {0.5}}});
    });
  }
  std::erase_if(ws, [&](const Workload& w) { return !only.empty() && w.name.find(only) == std::string::npos; });
  return ws;
}

  // the columns: the default opts, then (--beam N) BEAM=N, then BEAM=N over the extended opt space
struct Column {
  std::string label;
  int beam = 0;
  bool extended = false;
};

std::vector<Column> bench_columns(int beam) {
  std::vector<Column> cols{{"default opts"}};
  if (beam > 0) {
    cols.push_back({"BEAM=" + std::to_string(beam), beam});
    cols.push_back({"BEAM=" + std::to_string(beam) + " + TS_OPTS=extended", beam, true});
  }
  return cols;
}

// each column's rows measured and printed
std::vector<std::vector<Measured>> measure_columns(const std::vector<Workload>& ws, const std::vector<Column>& cols, const std::string& only,
                                                   const Limits& l) {
  std::vector<ts::BeamProgress> searched;
  ts::realize_config().beam_lines = false;  // the rows print what was searched
  ts::realize_config().beam_progress = [&](const ts::BeamProgress& p) {
    if (p.finished) searched.push_back(p);
    else if (p.done == 0)  // a round starts
      std::fprintf(stderr, "  BEAM %s: round %d, %zu candidates, best so far %.1f us, %.1f s\n", ts::ansistrip(p.kernel).c_str(), p.round,
                   p.total, p.best_s * 1e6, p.elapsed_s);
  };
  // a search is timed every run (the cache would hide it), unless IGNORE_BEAM_CACHE=0 asks for the cache
  const char* ibc = std::getenv("IGNORE_BEAM_CACHE");
  const bool beam_ignores_cache = !(ibc && *ibc && std::atoi(ibc) == 0), ignore_cache = ts::realize_config().beam_ignore_cache;
  std::vector<std::vector<Measured>> got(cols.size(), std::vector<Measured>(ws.size()));
  for (size_t c = 0; c < cols.size(); ++c) {
    const Column& col = cols[c];
    ts::realize_config().beam = col.beam;
    ts::realize_config().opt_space = col.extended ? ts::OptSpace::extended : ts::OptSpace::reference;
    ts::realize_config().beam_ignore_cache = col.beam > 0 ? beam_ignores_cache : ignore_cache;
    std::printf("%s%s (each the best of the timed runs; the first run is checked against the closed form)\n", c ? "\n" : "", col.label.c_str());
    for (size_t i = 0; i < ws.size(); ++i) {
      // BEAM columns: the rows with a goal there (every row when --only picks them)
      if (c > 0 && !ws[i].goal[c].at_least && only.empty()) continue;
      got[c][i] = measure(ws[i], searched);
      print_measured(ws[i].name, ws[i], got[c][i], l);
    }
  }
  ts::realize_config().beam = 0;
  ts::realize_config().opt_space = ts::OptSpace::reference;
  ts::realize_config().beam_progress = nullptr;
  return got;
}

// the others, on the same machine in the same run: the reference (--reference) and numpy, beside this run's rows
std::vector<ExternalFigures> print_beside(const std::vector<Workload>& ws, const std::string& reference, int reps,
                                          const std::vector<std::vector<Measured>>& got, const Limits& l) {
  std::vector<std::string> names;
  for (auto& w : ws) names.push_back(w.name);
  std::vector<ExternalFigures> ext;
  if (!reference.empty()) ext.push_back(reference_figures(reference, names, reps));
  ext.push_back(numpy_figures(names, reps));
  std::printf("\nbeside (the same workloads, best of %d):\n", reps);
  for (auto& e : ext) {
    if (!e.error.empty()) {
      std::printf("  %s\n", e.error.c_str());
      continue;
    }
    std::printf("  %s\n", e.label.c_str());
    for (size_t i = 0; i < ws.size(); ++i) {
      auto it = e.secs.find(ws[i].name);
      if (it == e.secs.end()) {
        auto nr = e.not_run.find(ws[i].name);
        std::printf("    %-26s not run%s\n", ws[i].name.c_str(), nr == e.not_run.end() ? "" : (": " + nr->second).c_str());
        continue;
      }
      const double rate = (ws[i].flops > 0 ? ws[i].flops : ws[i].bytes) / it->second / 1e9;
      std::printf("    %-26s %10.3f ms  %8.1f %s  %5.1f%% of %-8s", ws[i].name.c_str(), it->second * 1e3, rate,
                  ws[i].flops > 0 ? "GFLOP/s" : "GB/s   ", 100 * rate / limit_of(ws[i], l), limit_name(ws[i]));
      if (got[0][i].ran) std::printf("  tinyscope's default opts %.2fx its speed", it->second / got[0][i].best);
      std::printf("\n");
    }
  }
  return ext;
}

// the goals, each column's figure against its goal
void print_goals(const std::vector<Workload>& ws, const std::vector<Column>& cols, const std::vector<std::vector<Measured>>& got,
                 const Limits& l, const ExternalFigures* ref) {
  // the limits again: a goal's ratio is to the higher of the two readings (a machine shared with others reads less
  // at times, and a ratio to its slower moment would flatter every figure)
  const Limits again = measure_limits();
  std::printf("\nmachine limits again at the end: add %.1f GB/s, read %.1f GB/s, FMA peak %.1f GFLOP/s\n", again.add_gbs, again.read_gbs,
              again.fma_gflops);
  Limits hi = l;
  hi.add_gbs = std::max(l.add_gbs, again.add_gbs);
  hi.read_gbs = std::max(l.read_gbs, again.read_gbs);
  hi.fma_gflops = std::max(l.fma_gflops, again.fma_gflops);
  std::printf("\ngoals (ratios of this run, to the higher reading of each limit: add %.1f GB/s, read %.1f GB/s, FMA %.1f GFLOP/s):\n",
              hi.add_gbs, hi.read_gbs, hi.fma_gflops);
  std::printf("  %-24s", "workload");
  for (auto& col : cols) std::printf(" | %-52s", col.label.c_str());
  std::printf("\n");
  for (size_t i = 0; i < ws.size(); ++i) {
    bool any = false;
    for (auto& g : ws[i].goal) any |= g.at_least > 0;
    if (!any) continue;
    std::printf("  %-24s", ws[i].name.c_str());
    for (size_t c = 0; c < cols.size(); ++c) {
      const Goal& g = ws[i].goal[c];
      const Measured& m = got[c][i];
      char cell[160];
      if (!g.at_least) std::snprintf(cell, sizeof cell, "-");
      else if (!m.ran) std::snprintf(cell, sizeof cell, "not run");
      else if (g.vs_reference) {
        const double* ref_s = nullptr;
        if (ref)
          if (auto it = ref->secs.find(ws[i].name); it != ref->secs.end()) ref_s = &it->second;
        if (!ref_s) std::snprintf(cell, sizeof cell, "needs --reference (goal >= %.1fx)", g.at_least);
        else {
          const double x = *ref_s / m.best;
          std::snprintf(cell, sizeof cell, "%.2fx the reference (>= %.1fx) %s", x, g.at_least, x >= g.at_least ? "met" : "MISSED");
        }
      } else {
        // (the search-time goal is BEAM=N's, the reference's opt space)
        const double ratio = m.rate / limit_of(ws[i], hi);
        const bool ok = ratio >= g.at_least && (!ws[i].max_search_s || c != 1 || m.search <= ws[i].max_search_s);
        char s[120];
        std::snprintf(s, sizeof s, "%.2f of %s (>= %.2f)", ratio, limit_name(ws[i]), g.at_least);
        if (c > 0) std::snprintf(s + std::strlen(s), sizeof s - std::strlen(s), ", search %.1f s", m.search);
        if (c == 1 && ws[i].max_search_s) std::snprintf(s + std::strlen(s), sizeof s - std::strlen(s), " (<= %.0f s)", ws[i].max_search_s);
        std::snprintf(cell, sizeof cell, "%s %s", s, ok ? "met" : "MISSED");
      }
      std::printf(" | %-52s", cell);
    }
    std::printf("\n");
  }
  // what the kernel split allows at these limits, whatever the kernels' code
  for (const Workload& w : ws)
    if (w.least_s && std::any_of(std::begin(w.goal), std::end(w.goal), [](const Goal& g) { return g.at_least > 0; })) {
      const double t = w.least_s(hi);
      std::printf("  %s: %s take at least %.3f ms at these limits, %.2f of %s at most\n", w.name.c_str(), w.passes.c_str(), t * 1e3,
                  w.bytes / t / 1e9 / limit_of(w, hi), limit_name(w));
    }
}

}  // namespace

int run_bench_impl(int argc, char** argv);

int run_bench(int argc, char** argv) {
  try {
    return run_bench_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tinyscope bench: %s\n", e.what());
    return 1;
  }
}

int run_bench_impl(int argc, char** argv) {
  auto [quick, limits_only, only, reference, config] = parse_bench_args(argc, argv);
  if (!std::getenv("DEBUG")) config.debug = 0;  // DEBUG=N set by hand shows the kernels as a run does
  ts::trace::record_calls(false);  // as `tinyscope run` without --json: no trace is read, so no call is recorded in one
  ts::install_realize(config);  // an unknown device is an error here
  const std::string dev = ts::realize_config().device;
  const bool host = ts::get_device(dev).host_memory();
  if (limits_only) {
    if (quick || !only.empty()) throw std::runtime_error("--limits measures the limits alone (no --quick or --only)");
    if (limits_device_key(dev).empty())
      throw std::runtime_error("--limits: " + dev + " interprets its kernels; limits are measured for CPU, CPU:LLVM and VULKAN devices");
    if (!host) return run_gpu_limits(dev);
    return run_cpu_limits(dev);
  }
  const int beam = config.beam;
  ts::realize_config().beam = 0;  // the default opts first; a GPU bench runs its rows again under BEAM=N
  if (!host) {
    if (!reference.empty()) throw std::runtime_error("--reference compares the host devices' figures (CPU, CPU:LLVM)");
    return run_gpu_bench(dev, quick, beam, only);
  }
  const Limits l = print_machine(dev);

  if (only.empty()) bench_setup_rows(dev, host);  // (--only: just the workload rows)

  // (--only TinyJit: the TinyJit rows alone)
  if (only.empty() || std::string("TinyJit").find(only) != std::string::npos) bench_tinyjit_rows(dev, quick, reference);

  const int reps = quick ? 2 : 5;
  const std::vector<Workload> ws = bench_workloads(quick, reps, only);
  const std::vector<Column> cols = bench_columns(beam);
  const std::vector<std::vector<Measured>> got = measure_columns(ws, cols, only, l);
  const std::vector<ExternalFigures> ext = print_beside(ws, reference, reps, got, l);
  print_goals(ws, cols, got, l, reference.empty() ? nullptr : &ext[0]);
  return 0;
}

}  // namespace tscli