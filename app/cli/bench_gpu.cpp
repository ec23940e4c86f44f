// `tinyscope bench --dev VULKAN`: the engine's kernels on a GPU beside what hand-written GLSL reaches on the same
// device in the same run (the practical limit) and the datasheet's figures where the device is known. Every input is
// a pattern (never constants), every output is checked against its closed form, and every figure is a median of the
// kernels' own timestamps with the spread beside it.
#include "app/cli/bench.h"
#include "app/cli/bench_gpu_internal.h"
#include "app/cli/bench_run.h"
#include "app/cli/limits_cache.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/runtime/vulkan/vulkan.h"
#include "engine/schedule/schedule.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/error.h"

namespace tscli {

namespace {

// 0, 1, .. n-1 as int32 on the device (arange alone is deviceless until used with a tensor that has one)
ts::Tensor iota(const std::string& dev, int64_t n) {
  return ts::Tensor::arange(0, static_cast<double>(n), 1, ts::dtypes::int32).add(ts::Tensor::zeros({n}, ts::dtypes::int32, dev));
}

// an int pattern on the device: (arange(n) * mul + add) % mod as float, times scale
ts::Tensor pattern(const std::string& dev, int64_t n, int64_t mul, int64_t add, int64_t mod, double scale, ts::DType dt = ts::dtypes::float32) {
  ts::Tensor i = iota(dev, n);
  ts::Tensor v = i.mul(ts::Tensor::scalar(static_cast<double>(mul), ts::dtypes::weakint)).add(ts::Tensor::scalar(static_cast<double>(add), ts::dtypes::weakint));
  v = v.mod(ts::Tensor::scalar(static_cast<double>(mod), ts::dtypes::weakint));
  return v.cast(ts::dtypes::float32).mul(ts::Tensor::scalar(scale, ts::dtypes::weakfloat)).cast(dt).contiguous().realize();
}

// one row of the engine's table: what it computes, the hand-written limit it is a percentage of, its check
struct Work {
  std::string name;
  double work;  // bytes or flops a run
  size_t limit;  // index into limits
  std::function<ts::Tensor()> build;
  std::function<std::string(const ts::Tensor&)> check;
};

// One run of the GPU bench: the device, its sizes and hand-written limits, and the engine's rows measured beside them
struct GpuBench {
  std::string dev, only;
  std::shared_ptr<ts::vk::Context> ctx;
  Sizes z;
  int reps = 0;
  std::vector<Limit> limits;
  // BEAM's reports of the kernels searched during a row's first realize
  std::vector<ts::BeamProgress> searched;

  std::function<bool(const std::string&)> wanted;  // the rows and limits --only names
  void print_limits(bool quick);
  void watch_beam();
  void section(const std::string& what, const std::function<void()>& fn);
  void row(const Work& w);
  void engine_rows();
  void tensor_core_layouts();
  void chain_rows();
  void add_again();
};

// the device, the sizes, datasheet figures where the device is known, and the hand-written limits (kept in the limits
// cache by a full run)
void GpuBench::print_limits(bool quick) {
  const auto& info = ctx->info();
  std::printf("tinyscope bench  device %s: %s (%s %s)\n", dev.c_str(), info.name.c_str(), info.driver_name.c_str(),
              info.driver_info.c_str());
  // 2^28 floats (1 GiB) where a binding holds that, else the largest power of two that fits
  z.n_vec = int64_t{1} << 28;
  while (z.n_vec * 4 > static_cast<int64_t>(info.max_storage_buffer_range) || (quick && z.n_vec > (int64_t{1} << 22))) z.n_vec /= 2;
  z.n_mat = info.type == "cpu" || quick ? 512 : 4096;
  reps = quick ? 3 : 10;
  std::printf("sizes: add/sum %lld fp32, matmul %lld; each figure the median of %d runs (min-max), timestamps\n\n",
              static_cast<long long>(z.n_vec), static_cast<long long>(z.n_mat), reps);

  // datasheet figures of devices this bench knows (labelled as such; the hand-written shaders are the measured limit)
  struct Sheet { const char* match; double bw, fp32, fp16; };
  const Sheet sheets[] = {{"H200", 4.8e12, 66.9e12, 989e12}, {"H100", 3.35e12, 66.9e12, 989e12}};
  for (const Sheet& s : sheets)
    if (info.name.find(s.match) != std::string::npos)
      std::printf("datasheet (%s): memory %.2f TB/s, fp32 %.1f TFLOP/s, fp16 dense tensor cores %.0f TFLOP/s\n", s.match, s.bw / 1e12,
                  s.fp32 / 1e12, s.fp16 / 1e12);

  std::printf("hand-written GLSL (the practical limit):\n");
  if (!only.empty()) std::printf("only the workloads whose name holds '%s'\n", only.c_str());
  limits = hand_written(*ctx, z, reps, wanted);
  auto unit = [](const std::string& name, const Stats& s) {
    return name.find("matmul") != std::string::npos ? spread(s, 1e-9, "GFLOP/s") : spread(s, 1e-9, "GB/s   ");
  };
  for (auto& l : limits)
    std::printf("  %-28s %s  output %s\n", l.name.c_str(), l.value ? unit(l.name, *l.value).c_str() : "(none)", l.check.c_str());
  // the full-size limits are kept for the Roofline pane (a --quick or --only run's are not: smaller or partial)
  if (!quick && only.empty())
    if (std::optional<MeasuredLimits> m = gpu_limits_entry(info, z, limits)) save_measured_limits(*m, /*required=*/false);
  std::printf("\n");
}

// BEAM's reports of the kernels searched during a row's first realize, kept for the row
void GpuBench::watch_beam() {
  ts::realize_config().beam_lines = false;  // the rows print them
  ts::realize_config().beam_progress = [&](const ts::BeamProgress& p) {
    if (p.finished) searched.push_back(p);
    else if (p.done == 0)  // a round starts
      std::fprintf(stderr, "  BEAM %s: round %d, %zu candidates, best so far %.1f us, %.1f s\n", ts::ansistrip(p.kernel).c_str(), p.round,
                   p.total, p.best_s * 1e6, p.elapsed_s);
  };
}

// a part of the table, left out when --only does not name it, and a line saying why when it fails
void GpuBench::section(const std::string& what, const std::function<void()>& fn) {
  // ("inputs" holds the add and sum rows, each filtered by its own name)
  if (what == "inputs" ? !wanted("add") && !wanted("sum") : !wanted(what)) return;
  try {
    fn();
  } catch (const std::exception& e) {
    std::printf("  %-28s not run: %s\n", what.c_str(), e.what());
  }
}

void GpuBench::row(const Work& w) {
  if (!wanted(w.name)) return;
  section(w.name, [&] {
    ts::Tensor out;
    searched.clear();
    RealizeRun cold = realize_timed(w.build, &out);
    std::string check = w.check(out);
    out = ts::Tensor();
    for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) realize_timed(w.build);  // warm, as the hand-written ones
    std::vector<double> rate;
    int nk = cold.nkernels;
    std::string each, compiled;
    for (int r = 0; r < reps; ++r) {
      RealizeRun e = realize_timed(w.build);
      rate.push_back(w.work / e.kernels);
      nk = e.nkernels;
      each = e.each;
      compiled = e.compiled;
    }
    Stats s = stats(rate);
    const bool flops = w.name.find("matmul") != std::string::npos;
    // a workload without a hand-written counterpart (fp16 where the device has no cooperative matrices) gets no percentage
    const double lim = w.limit < limits.size() && limits[w.limit].value ? limits[w.limit].value->median : 0;
    char pct[48];
    if (lim > 0) std::snprintf(pct, sizeof pct, "%5.1f%% of hand-written", 100 * s.median / lim);
    else std::snprintf(pct, sizeof pct, "(no hand-written limit)");
    std::printf("  %-28s %s  %s  kernels %d  first run %.1f ms  output %s\n", w.name.c_str(),
                flops ? spread(s, 1e-9, "GFLOP/s").c_str() : spread(s, 1e-9, "GB/s   ").c_str(), pct, nk, cold.wall * 1e3, check.c_str());
    if (nk > 1 || ts::realize_config().beam) std::printf("  %-28s (the last run's kernels: %s)\n", "", each.c_str());
    if (!compiled.empty()) std::printf("  %-28s (compiled: %s)\n", "", compiled.c_str());
    for (auto& p : searched) {
      std::string opts;  // what it chose, as KERNEL_OPTS takes them
      for (const ts::Opt& o : p.best_opts) opts += (opts.empty() ? "" : ", ") + o.str();
      if (p.cached) std::printf("  %-28s BEAM %s: opts from the cache (no search)\n", "", ts::ansistrip(p.kernel).c_str());
      else
        std::printf("  %-28s BEAM %s: searched in %.1f s, %zu candidates timed in %d rounds; default opts %.1f us -> %.1f us\n", "",
                    ts::ansistrip(p.kernel).c_str(), p.elapsed_s, p.timed, p.round, p.default_s * 1e6, p.best_s * 1e6);
      std::printf("  %-28s   opts: %s\n", "", opts.empty() ? "none" : opts.c_str());
    }
    std::fflush(stdout);
  });
}

// the add and sum rows and the matmuls (fp32, fp16)
void GpuBench::engine_rows() {
  const int64_t n = z.n_vec, m = z.n_mat;
  section("inputs", [&] {
    ts::Tensor a = pattern(dev, n, 1, 0, 16, 0.0625), b = pattern(dev, n, 1, 0, 7, 0.125);
    row({"add " + std::to_string(n) + " fp32", 12.0 * n, 0, [=] { return a.add(b).contiguous(); }, [&](const ts::Tensor& t) {
           ts::HostData h = t.data();
           for (int64_t i = 0; i < n; ++i)
             if (h.f[i] != static_cast<double>(pat_a(i) + pat_b(i))) return "WRONG at [" + std::to_string(i) + "]";
           return std::string("ok");
         }});
    row({"sum " + std::to_string(n) + " fp32 (schedule)", 4.0 * n, 1, [=] { return a.sum(); }, [&](const ts::Tensor& t) {
           double e = 0;
           for (int64_t i = 0; i < n; ++i) e += pat_a(i);
           double got = t.data().f.at(0);
           return std::fabs(got - e) <= 1e-5 * e ? std::string("ok") : "WRONG: " + std::to_string(got) + ", expected " + std::to_string(e);
         }});
  });
  auto matmul_check = [m](ts::Tensor t, double tol) {
    ts::HostData h = t.cast(ts::dtypes::float32).data();
    for (int64_t s = 0; s < 97; ++s) {
      int64_t i = (s * 7919) % m, j = (s * 104729) % m;
      double e = 0;
      for (int64_t k = 0; k < m; ++k) e += static_cast<double>(mat_a(i, k)) * mat_b(k, j);
      if (std::fabs(h.f[i * m + j] - e) > tol * std::max(1.0, std::fabs(e)))
        return "WRONG at [" + std::to_string(i) + "," + std::to_string(j) + "]: " + std::to_string(h.f[i * m + j]) + ", expected " + std::to_string(e);
    }
    return std::string("ok");
  };
  // (bf16 where the device has bf16 tensor cores: VK_KHR_cooperative_matrix with VK_KHR_shader_bfloat16)
  std::vector<ts::DType> dts{ts::dtypes::float32, ts::dtypes::float16};
  for (const auto& tc : ts::get_device(dev).opt_target().tensor_cores)
    if (tc.dtype_in == ts::dtypes::bfloat16 && dts.size() < 3) dts.push_back(ts::dtypes::bfloat16);
  for (ts::DType dt : dts) {
    const std::string dn = dt == ts::dtypes::float32 ? "fp32" : dt == ts::dtypes::float16 ? "fp16" : "bf16";
    section("matmul " + std::to_string(m) + " " + dn, [&] {
      // A[i,k] = ((i + 2k) % 9 - 4) / 4, B[k,j] = ((3k + j) % 7 - 3) / 4, from 2-D aranges
      auto idx = [&](int64_t ci, int64_t cj, int64_t mod) {
        ts::Tensor r = iota(dev, m);
        ts::Tensor v = r.reshape({m, 1}).mul(ts::Tensor::scalar(ci, ts::dtypes::weakint)).add(r.reshape({1, m}).mul(ts::Tensor::scalar(cj, ts::dtypes::weakint)));
        return v.mod(ts::Tensor::scalar(mod, ts::dtypes::weakint)).sub(ts::Tensor::scalar((mod - 1) / 2, ts::dtypes::weakint)).cast(ts::dtypes::float32)
            .mul(ts::Tensor::scalar(0.25, ts::dtypes::weakfloat)).cast(dt).contiguous().realize();
      };
      ts::Tensor A = idx(1, 2, 9), B = idx(3, 1, 7);
      const double tol = dt == ts::dtypes::float32 ? 0 : dt == ts::dtypes::float16 ? 2e-3 : 8e-3;  // (bf16 out: 8 bits)
      row({"matmul " + std::to_string(m) + " " + dn, 2.0 * m * m * m, dt == ts::dtypes::float32 ? size_t{2} : dt == ts::dtypes::float16 ? size_t{3} : size_t{4}, [=] { return A.matmul(B); },
           [&](const ts::Tensor& t) { return matmul_check(t, tol); }});
    });
  }
}

// the TC opt on more layouts than the bench's matmul (odd sizes, transposed operands, a batch): each output element
// checked against the host's sum (the inputs are quarters, the products exact; the half output rounds)
void GpuBench::tensor_core_layouts() {
  std::vector<ts::DType> dts;
  for (const auto& tc : ts::get_device(dev).opt_target().tensor_cores)
    if (std::find(dts.begin(), dts.end(), tc.dtype_in) == dts.end()) dts.push_back(tc.dtype_in);
  for (ts::DType dt : dts) {
    const std::string dn = dt == ts::dtypes::bfloat16 ? "bf16" : "fp16";
    if (!wanted("tensor-core layouts " + dn + " @")) continue;
    std::printf("engine, tensor-core layouts %s (default opts; every output element checked):\n", dn.c_str());
    struct Case { int64_t batch, m, k, n; bool at, bt; };
    for (const Case& c : {Case{1, 192, 320, 256, false, false}, Case{1, 128, 256, 384, false, true}, Case{1, 128, 256, 64, true, false},
                          Case{2, 128, 64, 128, false, false}}) {
      const std::string nm = (c.batch > 1 ? std::to_string(c.batch) + " x " : "") + std::to_string(c.m) + "x" + std::to_string(c.k) + (c.at ? " (A^T)" : "") +
                             " @ " + std::to_string(c.k) + "x" + std::to_string(c.n) + (c.bt ? " (B^T)" : "");
      section("tensor-core layouts " + dn + " @ " + nm, [&] {
        auto host = [&](int64_t r, int64_t cdim, int64_t mul, int64_t mod, bool transposed) {
          ts::HostData h;
          h.dtype = dt;
          h.shape = transposed ? ts::Shape{c.batch, cdim, r} : ts::Shape{c.batch, r, cdim};
          const int64_t n = c.batch * r * cdim;
          for (int64_t i = 0; i < n; ++i) h.f.push_back(static_cast<double>((i * mul + 3) % mod - mod / 2) * 0.25);
          return h;
        };
        const ts::HostData ha = host(c.m, c.k, 5, 9, c.at), hb = host(c.k, c.n, 3, 7, c.bt);
        auto a_at = [&](int64_t b, int64_t i, int64_t k) { return ha.f[c.at ? (b * c.k + k) * c.m + i : (b * c.m + i) * c.k + k]; };
        auto b_at = [&](int64_t b, int64_t k, int64_t j) { return hb.f[c.bt ? (b * c.n + j) * c.k + k : (b * c.k + k) * c.n + j]; };
        ts::Tensor A = ts::Tensor::from_host(ha, dev).realize(), B = ts::Tensor::from_host(hb, dev).realize();
        if (c.at) A = A.permute({0, 2, 1});
        if (c.bt) B = B.permute({0, 2, 1});
        ts::Tensor out;
        RealizeRun r = realize_timed([&] { return A.matmul(B); }, &out);
        bool tc = false;
        const auto& log = ts::call_log();
        for (size_t i = log.size() - std::min<size_t>(log.size(), static_cast<size_t>(r.nkernels)); i < log.size(); ++i)
          if (!log[i].applied_opts.empty() && log[i].applied_opts[0].rfind("Opt(op=OptOps.TC", 0) == 0) tc = true;
        ts::HostData h = out.cast(ts::dtypes::float32).data();
        std::string check = "ok";
        for (int64_t b = 0; b < c.batch && check == "ok"; ++b)
          for (int64_t i = 0; i < c.m && check == "ok"; ++i)
            for (int64_t j = 0; j < c.n; ++j) {
              double e = 0;
              for (int64_t k = 0; k < c.k; ++k) e += a_at(b, i, k) * b_at(b, k, j);
              const double got = h.f[(b * c.m + i) * c.n + j];
              if (std::fabs(got - e) > (dt == ts::dtypes::bfloat16 ? 8e-3 : 1e-3) * std::max(1.0, std::fabs(e))) {
                check = "WRONG at [" + std::to_string(b) + "," + std::to_string(i) + "," + std::to_string(j) + "]: " + std::to_string(got) +
                        ", expected " + std::to_string(e);
                break;
              }
            }
        std::printf("  %-28s %s  tensor cores %s  output %s\n", nm.c_str(), r.each.c_str(), tc ? "yes" : "NO", check.c_str());
        std::fflush(stdout);
      });
    }
  }
}

// 200 dependent small kernels, compiled once, then run again: host wall time per kernel (submit to result)
void GpuBench::chain_rows() {
  section("200 dependent small kernels", [&] {
    ts::Tensor x = pattern(dev, 1024, 1, 0, 16, 0.0625);
    auto prog = [&] {
      ts::Tensor y = x;
      for (int k = 0; k < 200; ++k) y = y.mul(ts::Tensor::scalar(1.0 + k / 4096.0, ts::dtypes::weakfloat)).contiguous();
      return y;
    };
    ts::Tensor first;
    realize_timed(prog, &first);
    ts::HostData h = first.data();
    double f = 1;
    for (int k = 0; k < 200; ++k) f *= static_cast<float>(1.0 + k / 4096.0);
    std::string check = "ok";
    for (int64_t i = 0; i < 1024 && check == "ok"; ++i)
      if (std::fabs(h.f[i] - pat_a(i) * f) > 1e-4 * std::max(1.0, pat_a(i) * f)) check = "WRONG at [" + std::to_string(i) + "]";
    // the wall time as `tinyscope run` sees it (no kernel times asked for: no timestamps), then with every kernel
    // timed as DEBUG=2 and the window do
    std::vector<double> wall, wall_timed, gpu;
    ts::realize_config().time_kernels = false;
    for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) realize_timed(prog);
    for (int r = 0; r < reps; ++r) wall.push_back(realize_timed(prog).wall / 200);
    ts::realize_config().time_kernels = true;
    for (int r = 0; r < reps; ++r) {
      RealizeRun e = realize_timed(prog);
      wall_timed.push_back(e.wall / 200);
      gpu.push_back(e.kernels / 200);
    }
    Stats s = stats(wall);
    std::printf("  %-28s %s per kernel, wall (realize to result, cached programs, kernels untimed as in tinyscope run; each kernel timed: "
                "%.2f us, the kernels' own time %.2f us)  output %s\n",
                "200 dependent small kernels", spread(s, 1e6, "us").c_str(), stats(wall_timed).median * 1e6, stats(gpu).median * 1e6, check.c_str());
    // where the wall time goes, per kernel (medians): the graph's construction, the (cached) schedule, the launches
    // recorded, the command buffer recorded, its submit to the fence, and the rest of run_linear (the call records)
    std::vector<double> build, sched, run, rec, fence;
    ts::Device& d = ts::get_device(dev);
    ts::realize_config().time_kernels = false;
    for (int r = 0; r < reps; ++r) {
      auto t0 = clk::now();
      ts::Tensor y = prog();
      auto t1 = clk::now();
      auto linear = ts::schedule_linear({y});
      auto t2 = clk::now();
      ts::run_linear(*linear);
      auto t3 = clk::now();
      build.push_back(std::chrono::duration<double>(t1 - t0).count() / 200);
      sched.push_back(std::chrono::duration<double>(t2 - t1).count() / 200);
      run.push_back(std::chrono::duration<double>(t3 - t2).count() / 200);
      rec.push_back(d.last_batch_host_times().record_s / 200);
      fence.push_back(d.last_batch_host_times().submit_to_fence_s / 200);
    }
    ts::realize_config().time_kernels = true;
    const double m_run = stats(run).median, m_rec = stats(rec).median, m_fence = stats(fence).median;
    ChainFloor fl = hand_chain(*ctx, reps);
    std::printf("  %-28s hand-written chain of 200 dependent dispatches, submit to fence: %s per dispatch with timestamps, %s without, "
                "%s without and each its own pipeline, %s without and each its own output buffer, %s without in pieces of 8, 16, 32 "
                "(the timed dispatches' own time %.2f us)  output %s\n", "",
                spread(fl.wall_ts, 1e6, "us").c_str(), spread(fl.wall_plain, 1e6, "us").c_str(), spread(fl.wall_distinct, 1e6, "us").c_str(),
                spread(fl.wall_buffers, 1e6, "us").c_str(), spread(fl.wall_pieces, 1e6, "us").c_str(), fl.own.median * 1e6, fl.check.c_str());
    std::printf("  %-28s the same link in the engine's shape (8 groups of 32 lanes, vec4): %s per dispatch untimed, its own time %.2f us timed\n", "",
                spread(fl.wall_engine, 1e6, "us").c_str(), fl.own_engine.median * 1e6);
    std::printf("  %-28s host per kernel: build %.2f us, schedule %.2f us, run %.2f us (command buffers recorded and submitted %.2f us, "
                "last submit to fence %.2f us, the rest %.2f us)\n",
                "", stats(build).median * 1e6, stats(sched).median * 1e6, m_run * 1e6, m_rec * 1e6, m_fence * 1e6,
                (m_run - m_rec - m_fence) * 1e6);
    // the same chain as TinyJit runs it (the engine's capture, compiled once; what Python's TinyJit calls): replayed
    // in graph calls (JIT_BATCH_SIZE 32, doubling: 32 + 64 + 104 kernels, each one command buffer recorded once and
    // submitted again) and, as JIT=2, one call each; wall per kernel from the replay to the result read back
    auto jit_row = [&](int graph_batch, const char* label) {
      ts::begin_capture();
      ts::Tensor y = prog();
      y.realize();
      auto [captured, n] = ts::end_capture();
      (void)n;
      ts::compile_captured(*captured, graph_batch);
      ts::realize_config().time_kernels = false;
      std::vector<double> jw, jr;
      ts::HostData out;
      for (auto t0 = clk::now(); seconds_since(t0) < 1.0;) ts::replay(*captured, {}, {}, {});
      for (int r = 0; r < reps; ++r) {
        auto t0 = clk::now();
        ts::replay(*captured, {}, {}, {});
        jw.push_back(seconds_since(t0) / 200);
        out = y.data();
        jr.push_back(seconds_since(t0) / 200);
      }
      ts::realize_config().time_kernels = true;
      // how the graph calls ran at the last replay (each submitted again as recorded, or recorded again)
      std::map<std::string, int> how;
      for (const ts::GraphCall& g : captured->graphs) ++how[g.graph->last_run()];
      std::string graphs;
      for (auto& [what, n] : how) graphs += (graphs.empty() ? "" : ", ") + std::to_string(n) + " " + what;
      std::string ok = "ok";
      for (int64_t i = 0; i < 1024 && ok == "ok"; ++i)
        if (std::fabs(out.f[i] - pat_a(i) * f) > 1e-4 * std::max(1.0, pat_a(i) * f)) ok = "WRONG at [" + std::to_string(i) + "]";
      std::printf("  %-28s TinyJit replay, %s: %s per kernel, wall (replay to its last fence, kernels untimed, as the hand-written chain; goal "
                  "<= 3 us), %.2f us with the result read back%s%s  output %s\n", "", label, spread(stats(jw), 1e6, "us").c_str(), stats(jr).median * 1e6,
                  graphs.empty() ? "" : "; graph calls at the last replay: ", graphs.c_str(), ok.c_str());
      std::fflush(stdout);
    };
    jit_row(32, "graph calls of 32, 64, 104 kernels");
    jit_row(-1, "one call a kernel (JIT=2)");
  });
}

// the limit measured again at the end: a figure that moved says the device's state changed during the run
void GpuBench::add_again() {
  if (wanted("add")) {
    std::vector<float> ha(z.n_vec), hb(z.n_vec);
    for (int64_t i = 0; i < z.n_vec; ++i) { ha[i] = pat_a(i); hb[i] = pat_b(i); }
    Limit again = hand_add(*ctx, ha, hb, reps);
    std::printf("\nhand-written add again, at the end: %s  output %s\n", spread(*again.value, 1e-9, "GB/s").c_str(), again.check.c_str());
  }
}

}  // namespace

int run_gpu_bench(const std::string& dev, bool quick, int beam, const std::string& only) {
  GpuBench b;
  b.dev = dev;
  b.only = only;
  b.wanted = [&](const std::string& name) { return only.empty() || name.find(only) != std::string::npos; };
  b.ctx = ts::vk::device_context(dev);
  b.print_limits(quick);

  ts::realize_config().device = dev;
  b.watch_beam();
  std::printf("engine, default opts (kernel time from timestamps; %% of the hand-written shader):\n");
  b.engine_rows();
  b.tensor_core_layouts();
  b.chain_rows();
  if (beam > 0) {
    ts::realize_config().beam = beam;
    std::printf("\nengine, BEAM=%d (opts searched on this device; the first run includes the search):\n", beam);
    b.engine_rows();
    ts::realize_config().beam = 0;
  }
  ts::realize_config().beam_progress = nullptr;
  b.add_again();
  return 0;
}

}  // namespace tscli