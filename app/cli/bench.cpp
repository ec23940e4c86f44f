// Workloads written in C++ against the engine; every figure is relative to limits measured in the same run
// (memory bandwidth with a STREAM-like add and read, compute with an FMA loop), both compiled by the same JIT
// that compiles the kernels.
#include "app/cli/bench.h"
#include "app/cli/bench_run.h"
#include "app/cli/cli.h"
#include "app/cli/limits_cache.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
  for (int rep = 0; rep < 5; ++rep)
    best = std::min(best, parallel(T, [&](int t) { auto [lo, hi] = chunk(t); add(a.data(), b.data(), c.data(), lo, hi); }));
  l.add_gbs = 12.0 * n / best / 1e9;
  best = 1e9;
  volatile float sink = 0;
  for (int rep = 0; rep < 5; ++rep)
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

struct Workload {
  std::string name;
  double bytes = 0, flops = 0;  // per run
  std::function<ts::Tensor()> build;
  // the closed form of every output element (the inputs are constant fills), or of element i
  std::function<double(int64_t)> expect;
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

void row(const Workload& w, const Limits& l, int reps) {
  RealizeRun cold;
  std::string check;
  try {
    // the output is checked, then let go before the timed runs (so they reuse its memory, as a program would)
    ts::Tensor out;
    cold = realize_timed(w.build, &out);
    check = verify(out, w.expect);
  } catch (const std::exception& e) {  // a device that cannot run it says why (the figure is missing, not made up)
    std::printf("%-28s not run: %s\n", w.name.c_str(), e.what());
    return;
  }
  double best = 1e9;
  RealizeRun warm;
  for (int i = 0; i < reps; ++i) {
    RealizeRun r = realize_timed(w.build);
    if (r.kernels < best) { best = r.kernels; warm = r; }
  }
  double setup = cold.wall - cold.kernels;  // schedule + codegen + compile of the first run
  std::string perf;
  char buf[160];
  if (w.flops > 0) {
    double gf = w.flops / best / 1e9;
    std::snprintf(buf, sizeof buf, "%8.1f GFLOP/s  %5.1f%% of FMA peak", gf, 100 * gf / l.fma_gflops);
  } else {
    double gb = w.bytes / best / 1e9;
    std::snprintf(buf, sizeof buf, "%8.1f GB/s     %5.1f%% of %s", gb, 100 * gb / (w.name.rfind("add", 0) == 0 ? l.add_gbs : l.read_gbs),
                  w.name.rfind("add", 0) == 0 ? "add bw" : "read bw");
  }
  perf = buf;
  std::printf("%-28s %10.3f ms  %s  kernels %2d  first-run setup %7.1f ms (%5.1f ms/kernel)  output %s\n", w.name.c_str(), best * 1e3,
              perf.c_str(), warm.nkernels, setup * 1e3, setup * 1e3 / std::max(1, cold.nkernels), check.c_str());
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
    }
  return r;
}

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
  bool quick = false, limits_only = false;
  std::string only;
  ts::RealizeConfig config = tscli::realize_config_from_env();
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--limits") limits_only = true;
    else if (a == "--dev" && i + 1 < argc) config.device = argv[++i];
    else if (a == "--beam" && i + 1 < argc) config.beam = std::max(0, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else throw std::runtime_error("unknown argument '" + a + "' (usage: tinyscope bench [--quick] [--dev DEV] [--beam N] [--only TEXT] | --limits [--dev DEV])");
  }
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
  const int beam = config.beam;
  ts::realize_config().beam = 0;  // the default opts first; a GPU bench runs its rows again under BEAM=N
  if (!host) return run_gpu_bench(dev, quick, beam, only);
  if (!only.empty()) throw std::runtime_error("--only selects workloads of the GPU bench (a VULKAN device)");
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

  // a section whose inputs a device cannot make says why and the bench goes on (the figures are missing, not made up)
  auto section = [](const char* what, const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::printf("%-28s not run: %s\n", what, e.what());
    }
  };
  const int64_t M16 = 16 << 20;
  int reps = quick ? 1 : 3;
  section("add/sum 16M", [&] {
    std::vector<Workload> ws;
    ts::Tensor a = filled({M16}), b = filled({M16}, 2.0);
    ws.push_back({"add 16M", 12.0 * M16, 0, [=] { return a.add(b).contiguous(); }, [](int64_t) { return 3.0; }});
    ws.push_back({"add fused chain 16M", 12.0 * M16, 0, [=] { return a.mul(b).add(a).mul(ts::Tensor::scalar(0.5, ts::dtypes::weakfloat)).relu().add(b).contiguous(); },
                  [](int64_t) { return 3.5; }});
    ws.push_back({"sum 16M", 4.0 * M16, 0, [=] { return a.sum(); }, [=](int64_t) { return static_cast<double>(M16); }});
    for (auto& w : ws) row(w, l, reps);
  });
  section("sum axis 1 4096x4096", [&] {
    ts::Tensor s = filled({4096, 4096});
    row({"sum axis 1 4096x4096", 4.0 * 4096 * 4096, 0, [=] { return s.sum(std::vector<int64_t>{1}); }, [](int64_t) { return 4096.0; }}, l, reps);
  });
  section("softmax 4096x1024", [&] {
    ts::Tensor s = filled({4096, 1024});
    row({"softmax 4096x1024", 4.0 * 4096 * 1024 * 2, 0, [=] { return s.softmax(-1).contiguous(); }, [](int64_t) { return 1.0 / 1024; }}, l, reps);
  });
  for (int64_t n : {512, 1024, 2048}) {
    if (quick && n > 512) break;
    section(("matmul " + std::to_string(n)).c_str(), [&] {
      ts::Tensor a = filled({n, n}), b = filled({n, n});
      row({"matmul " + std::to_string(n), 0, 2.0 * n * n * n, [=] { return a.matmul(b); }, [=](int64_t) { return static_cast<double>(n); }}, l,
          n == 2048 ? 1 : reps);
    });
  }
  if (!quick) {
    section("conv2d 8x64x56x56 3x3", [&] {
      ts::Tensor x = filled({8, 64, 56, 56}), w = filled({64, 64, 3, 3});
      // ones through a 3x3 kernel with padding 1: 64 channels times the in-bounds taps of each output pixel
      auto taps = [](int64_t i) {
        const int64_t c = i % 56, r = (i / 56) % 56;
        return 64.0 * (3 - (r == 0) - (r == 55)) * (3 - (c == 0) - (c == 55));
      };
      row({"conv2d 8x64x56x56 3x3", 0, 2.0 * 8 * 64 * 56 * 56 * 64 * 9, [=] { return x.conv2d(w, std::nullopt, 1, {1}, {1}, {1}); }, taps}, l, 1);
    });
  }
  return 0;
}

}  // namespace tscli
