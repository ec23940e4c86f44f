#include "engine/device/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "engine/codegen/to_program.h"
#include "engine/device/device.h"
#include "engine/runtime/thread_pool.h"
#include "engine/uop/atomic_file.h"
#include "engine/uop/error.h"
#include "engine/uop/print.h"
#include "engine/uop/rewrite.h"

namespace ts {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<Opt> make_actions(OptSpace space) {
  std::vector<Opt> a;
  // tensor cores (the reference's TC actions; this engine pads nothing, so its tc_opt levels are one)
  for (int axis = 0; axis < 9; ++axis) a.push_back({OptOps::TC, axis, -1});
  for (int64_t amt : {0, 2, 3, 4, 5, 7})
    for (int axis = 0; axis < 8; ++axis) a.push_back({OptOps::UPCAST, axis, amt});
  for (int64_t amt : {0, 4, 7})
    for (int axis = 0; axis < 5; ++axis) a.push_back({OptOps::UNROLL, axis, amt});
  for (int64_t amt : {2, 3, 4, 8, 13, 16, 29})
    for (int axis = 0; axis < 6; ++axis) a.push_back({OptOps::LOCAL, axis, amt});
  for (int64_t amt : {13, 16, 28, 29, 32, 49, 64, 256})
    for (int axis = 0; axis < 3; ++axis) a.push_back({OptOps::GROUPTOP, axis, amt});
  for (int64_t amt : {0, 4, 8, 16})
    for (int axis = 0; axis < 3; ++axis) a.push_back({OptOps::GROUP, axis, amt});
  a.push_back({OptOps::LOCAL, 0, 32});
  a.push_back({OptOps::LOCAL, 6, 2});
  for (int a0 = 0; a0 < 5; ++a0)
    for (int a1 = a0 + 1; a1 < 5; ++a1) a.push_back({OptOps::SWAP, a0, a1});
  for (int64_t amt : {2, 3, 4, 5, 8, 12, 16, 24, 32, 64})
    for (int axis = 0; axis < 3; ++axis) a.push_back({OptOps::THREAD, axis, amt});
  if (space == OptSpace::extended) {
    // register tiles in one step: an upcast or unroll as wide as a vector register (16 floats on AVX-512; an upcast
    // is at most 16, the target's max_upcast), which the reference reaches only through several rounds of 2..7, if
    // its beam keeps the steps between
    for (int64_t amt : {6, 8, 16})
      for (int axis = 0; axis < 8; ++axis) a.push_back({OptOps::UPCAST, axis, amt});
    for (int64_t amt : {2, 8, 16})
      for (int axis = 0; axis < 5; ++axis) a.push_back({OptOps::UNROLL, axis, amt});
  }
  return a;
}

// The axis of full_shape an action addresses (the reference's real_axis), or -1 when there is none. Worked out once
// per scheduler for all the actions tried on it.
struct RealAxes {
  std::vector<int> unrollable, reduce;
  int shape_len;
  RealAxes(const Scheduler& s, size_t shape_len)
      : unrollable(s.unrollable_dims()), reduce(s.axes_of({AxisType::REDUCE})), shape_len(static_cast<int>(shape_len)) {}
  int of(const Opt& o) const {
    auto pick = [&](const std::vector<int>& v) { return o.axis >= 0 && o.axis < static_cast<int>(v.size()) ? v[o.axis] : -1; };
    if (o.op == OptOps::TC) return 0;  // its axis picks one of the matmul's (m, n, k) choices, not a range
    if (o.op == OptOps::UNROLL) return pick(unrollable);
    if (o.op == OptOps::GROUP || o.op == OptOps::GROUPTOP) return pick(reduce);
    return o.axis >= 0 && o.axis < shape_len ? o.axis : -1;
  }
};

bool same_opt(const Opt& a, const Opt& b) { return a.op == b.op && a.axis == b.axis && a.arg == b.arg; }

// the compile pool: codegen and the device's compiler for the candidates of a round
ThreadPool& compile_pool() {
  static ThreadPool pool(static_cast<int>(std::max(2u, std::thread::hardware_concurrency())) - 1);
  return pool;
}

// graph_rewrites of the search are not passes of the kernel being traced
struct NoListener {
  RewriteListener* saved = rewrite_listener();
  NoListener() { rewrite_listener() = nullptr; }
  ~NoListener() { rewrite_listener() = saved; }
};

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string device_identity(const Device& dev) {
  std::string id = dev.name();
  for (auto& [k, v] : dev.properties())
    if (k == "device") id += " " + v;
  return id;
}

struct DiskCache {
  std::filesystem::path file;
  std::string key;

  DiskCache(const BeamConfig& c, const Device& dev, const UOpRef& ast) {
    if (c.cache_dir.empty()) return;
    // the codegen options set (NOOPT, TC_STAGE, GLSL_LANES_SWAP, ...) change what opts make of a kernel, so opts
    // found under some are kept apart from those found under others; version 2: lanes ordered lidx1 first; 3:
    // tensor-core tiles as workgroup-scope matrices where the device has them; 4: fp32 matmuls staged on Vulkan
    std::string options;
    for (auto& [k, v] : codegen_options()) options += " " + k + "=" + v;
    key = "tinyscope beam 4\ndevice: " + device_identity(dev) + "\nwidth: " + std::to_string(c.width) + "\nspace: " +
          opt_space_name(c.space) + "\noptions:" + options + "\n" + render_graph(ast);
    char name[40];
    std::snprintf(name, sizeof name, "%016llx.txt", static_cast<unsigned long long>(fnv1a(key)));
    file = std::filesystem::path(c.cache_dir) / "beam" / name;
  }
  // the entry: the key, the opts, and an end line, so a cut file is a miss (searched again), never fewer opts
  static constexpr std::string_view kSep = "\n--- opts\n", kEnd = "--- end\n";
  std::optional<std::vector<Opt>> get() const {
    if (file.empty()) return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const size_t head = key.size() + kSep.size();
    if (text.size() < head + kEnd.size() || text.compare(0, key.size(), key) != 0 || text.compare(key.size(), kSep.size(), kSep) != 0 ||
        text.compare(text.size() - kEnd.size(), kEnd.size(), kEnd) != 0)
      return std::nullopt;  // another kernel with the same hash, an older format, a cut or damaged file
    try {
      return parse_opts(text.substr(head, text.size() - head - kEnd.size()));
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  // best effort: a cache that cannot be written only costs the next run a search; whole or not at all
  // (atomic_file.h), so processes sharing the directory never read a torn entry
  void put(const std::vector<Opt>& opts) const {
    if (file.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    std::string text = key;
    text += kSep;
    text += format_opts(opts);
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += kEnd;
    try {
      write_file_atomically(file.string(), "the BEAM cache entry", text);
    } catch (const Error&) {
    }
  }
};

struct Candidate {
  explicit Candidate(Scheduler sched, bool dflt = false, bool tile = false) : s(std::move(sched)), is_default(dflt), is_tile(tile) {}
  Scheduler s;
  bool is_default = false;  // the hand-coded opts: a candidate of round 1 whose time is also reported
  // a register tile of the extended space's first round: not held to uops_max (its accumulators are vectors: the
  // source is many times smaller than the count of scalar instructions)
  bool is_tile = false;
  ProgramSpec spec;
  std::shared_ptr<Executable> exe;
  bool ok = false;
  std::vector<double> times;
  double best() const { return times.empty() ? kInf : *std::min_element(times.begin(), times.end()); }
};

// Scratch buffers and Variable values for timing a kernel's programs (the reference's args_from_ast: fresh buffers
// of each param's size, every Variable at the middle of its range).
struct Scratch {
  std::vector<std::shared_ptr<Buffer>> owned;
  std::vector<Buffer*> bufs;
  std::map<std::string, int64_t> var_values;

  Scratch(Device& dev, const UOpRef& ast) {
    std::map<int64_t, std::pair<DType, int64_t>> slots;
    for (auto& u : ast->toposort()) {
      if (u->op != Ops::PARAM) continue;
      const ParamArg& pa = u->as<ParamArg>();
      if (pa.addrspace == AddrSpace::ALU) var_values[pa.name] = (pa.vmin + pa.vmax) / 2;
      else slots[pa.slot] = {u->dtype, std::max<int64_t>(pa.size, 1)};
    }
    const int64_t n = slots.empty() ? 0 : slots.rbegin()->first + 1;
    for (int64_t i = 0; i < n; ++i) {
      auto it = slots.find(i);
      owned.push_back(it == slots.end() ? dev.allocate(dtypes::int32, 1) : dev.allocate(it->second.first, it->second.second));
      bufs.push_back(owned.back().get());
      // host memory is written once: a fresh mapping reads as the kernel's one shared zero page, which is always in
      // cache, and would time a memory-bound candidate many times faster than it runs on real buffers (zeros: an
      // index read from a buffer stays in bounds)
      if (dev.host_memory() && owned.back()->ptr) std::memset(owned.back()->ptr, 0, owned.back()->nbytes());
    }
  }
  std::vector<int64_t> vars_for(const ProgramSpec& spec) const {
    std::vector<int64_t> v;
    for (auto& n : spec.vars) {
      auto it = var_values.find(n);
      v.push_back(it == var_values.end() ? 0 : it->second);
    }
    return v;
  }
};

// the opts this run would use without BEAM (default_opts: none under NOOPT)
Scheduler default_scheduler(const Scheduler& s0) {
  Scheduler d = s0;
  default_opts(d);
  return d;
}

// Register tiles in one step (the extended space's first round): 16 or 32 columns of outputs (one or two AVX-512
// vectors of a read along them) by rows of 4 or 8 outputs along one other loop, or 4x4 or 8x2 along two (a conv2d's x
// and y), then the heuristics' threads, each with and without the heuristics' whole unrolls (a conv2d's 3x3 taps). A tile
// of 8 x 32 is 16 vector accumulators, each updated by one fma an iteration: as many independent chains as the FMA
// units need to stay busy. One opt at a time, a narrow beam rarely reaches one: its first step (a single 16-wide
// column) is slow.
}  // namespace

std::vector<Scheduler> register_tiles(const Scheduler& s0, int64_t max_upcast) {
  // (the whole of a small reduce axis only, a conv2d's taps: part of a long one, a matmul's k by 4, makes each
  // accumulator a chain of that many fmas an iteration, with that many more operands live: a 8x32 tile spilled)
  std::vector<Opt> unrolls;
  for (const Opt& o : default_scheduler(s0).applied_opts)
    if (o.op == OptOps::UNROLL && o.arg == 0) unrolls.push_back(o);
  std::vector<Scheduler> out;
  const std::vector<int> axes = s0.axes_of({AxisType::WEAK, AxisType::GLOBAL});
  for (int cols_axis : axes) {
    std::vector<int> others;
    for (int a : axes)
      if (a != cols_axis) others.push_back(a);
    // (cols, rows along each of up to two other loops)
    std::vector<std::pair<int64_t, std::vector<std::pair<int, int64_t>>>> tiles;
    for (int a : others)
      for (int64_t cols : {16, 32})
        for (int64_t rows : {4, 8}) tiles.push_back({cols, {{a, rows}}});
    for (size_t x = 0; x < others.size(); ++x)
      for (size_t y = 0; y < others.size(); ++y)
        if (x != y)
          for (auto [rx, ry] : {std::pair<int64_t, int64_t>{4, 4}, {8, 2}})
            if (rx != ry || x < y) tiles.push_back({16, {{others[x], rx}, {others[y], ry}}});
    for (auto& [cols, rows] : tiles) {
      int64_t n = cols;
      for (auto& r : rows) n *= r.second;
      if (n > max_upcast) continue;
      for (bool unroll : {false, true}) {
        if (unroll && unrolls.empty()) continue;
        Scheduler s = s0;
        try {
          s.apply_opt({OptOps::UPCAST, cols_axis, 16});
          if (cols == 32) s.apply_opt({OptOps::UPCAST, cols_axis, 2});
          for (auto& [axis, amt] : rows) s.apply_opt({OptOps::UPCAST, axis, amt});
          if (unroll)
            for (const Opt& o : unrolls) s.apply_opt(o);
        } catch (const KernelOptError&) {
          continue;
        }
        threads_opt(s);
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

namespace {

void check_cancel(const BeamConfig& c, const std::string& kernel) {
  if (c.cancel && c.cancel->load()) throw Error("BEAM search of " + kernel + " cancelled");
}

}  // namespace

const std::vector<Opt>& beam_actions(OptSpace space) {
  static const std::vector<Opt> reference = make_actions(OptSpace::reference), extended = make_actions(OptSpace::extended);
  return space == OptSpace::extended ? extended : reference;
}

const char* opt_space_name(OptSpace space) { return space == OptSpace::extended ? "extended" : "reference"; }

std::vector<Scheduler> kernel_actions(const Scheduler& s, int64_t max_upcast, int64_t max_local, OptSpace space) {
  std::vector<Scheduler> out;
  const auto& acts = beam_actions(space);
  const auto fs = s.full_shape();
  const RealAxes axes(s, fs.size());
  for (const Opt& a : acts) {
    const int ax = axes.of(a);
    if (ax < 0) continue;
    // an amount equal to the axis is the same as its 0 ("all of it") when the list has that
    if (a.arg != 0 && fs[ax] && *fs[ax] == a.arg && a.op != OptOps::SWAP &&
        std::any_of(acts.begin(), acts.end(), [&](const Opt& b) { return same_opt(b, Opt{a.op, a.axis, 0}); }))
      continue;
    Scheduler s2 = s;
    try {
      s2.apply_opt(a);
    } catch (const KernelOptError&) {
      continue;
    }
    int64_t up = 1, lcl = 1;
    const auto fs2 = s2.full_shape();
    const auto at = s2.axis_types();
    const auto rs2 = s2.rngs();
    for (size_t i = 0; i < fs2.size(); ++i) {
      // a tensor core's fragment is not upcast into registers
      if (std::count(s2.tc_ranges.begin(), s2.tc_ranges.end(), rs2[i]->as<RangeArg>().id)) continue;
      if (at[i] == AxisType::UPCAST || at[i] == AxisType::UNROLL) up *= fs2[i].value_or(1);
      else if (at[i] == AxisType::WARP || at[i] == AxisType::LOCAL || at[i] == AxisType::GROUP_REDUCE) lcl *= fs2[i].value_or(1);
    }
    if (up > max_upcast || lcl > max_local) continue;
    out.push_back(std::move(s2));
  }
  return out;
}

std::string format_opts(const std::vector<Opt>& opts) {
  std::string out;
  for (auto& o : opts) out += std::string(opt_op_name(o.op)) + " " + std::to_string(o.axis) + " " + std::to_string(o.arg) + "\n";
  return out;
}

std::vector<Opt> parse_opts(const std::string& text) {
  std::vector<Opt> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string op;
    Opt o{};
    std::optional<OptOps> named;
    if (!(ls >> op >> o.axis >> o.arg) || !(named = opt_op_named(op))) throw Error("not an opt: '" + line + "'");
    o.op = *named;
    out.push_back(o);
  }
  return out;
}

std::map<std::string, std::vector<Opt>> parse_kernel_opts(const std::string& text) {
  std::map<std::string, std::vector<Opt>> out;
  auto split = [](const std::string& s, char sep) {
    std::vector<std::string> parts;
    size_t b = 0;
    for (size_t e; (e = s.find(sep, b)) != std::string::npos; b = e + 1) parts.push_back(s.substr(b, e - b));
    parts.push_back(s.substr(b));
    return parts;
  };
  if (text.empty()) return out;
  for (const std::string& kernel : split(text, '|')) {
    const size_t colon = kernel.find(':');
    const std::string key = kernel.substr(0, colon);
    if (colon == std::string::npos || key.size() != 16 || key.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw Error("KERNEL_OPTS: '" + kernel + "' is not KEY:OPTS (KEY a kernel's program key, 16 hex digits)");
    std::vector<Opt>& opts = out[key];
    const std::string list = kernel.substr(colon + 1);
    if (list.empty()) continue;
    for (const std::string& one : split(list, ';')) {
      const std::vector<std::string> f = split(one, ',');
      Opt o{};
      std::optional<OptOps> named = f.size() == 3 ? opt_op_named(f[0]) : std::nullopt;
      char* end = nullptr;
      if (named) {
        o.axis = static_cast<int>(std::strtol(f[1].c_str(), &end, 10));
        if (f[1].empty() || *end) named.reset();
        o.arg = std::strtoll(f[2].c_str(), &end, 10);
        if (f[2].empty() || *end) named.reset();
      }
      if (!named) throw Error("KERNEL_OPTS: '" + one + "' (kernel " + key + ") is not an opt (OP,AXIS,ARG, e.g. UPCAST,0,4)");
      o.op = *named;
      opts.push_back(o);
    }
  }
  return out;
}

std::string format_kernel_opts(const std::map<std::string, std::vector<Opt>>& opts) {
  std::string out;
  for (const auto& [key, list] : opts) {
    if (!out.empty()) out += "|";
    out += key + ":";
    for (size_t i = 0; i < list.size(); ++i)
      out += (i ? ";" : "") + std::string(opt_op_name(list[i].op)) + "," + std::to_string(list[i].axis) + "," + std::to_string(list[i].arg);
  }
  return out;
}

std::optional<std::vector<Opt>> kernel_opts_override(const std::string& program_key) {
  auto it = codegen_options().find("KERNEL_OPTS");
  if (it == codegen_options().end() || it->second.empty()) return std::nullopt;
  const auto all = parse_kernel_opts(it->second);
  auto k = all.find(program_key);
  return k == all.end() ? std::nullopt : std::optional<std::vector<Opt>>(k->second);
}

std::string codegen_option_problem(const std::string& name, const std::string& value) {
  const auto& names = codegen_option_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return name + " is no codegen variable";
  if (value.empty()) return {};
  if (name == "KERNEL_OPTS") {
    if (value.size() > 4096) return "KERNEL_OPTS: more than 4096 characters";
    try {
      parse_kernel_opts(value);
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  if (value.size() > 32 || value.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.:-") != std::string::npos)
    return name + ": the value must be a short word or number, not '" + value + "'";
  return {};
}

namespace {

// the progress a search reports, and the time since it started
struct Progress {
  explicit Progress(const BeamProgressFn& f) : fn(f) {}
  const BeamProgressFn& fn;
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  BeamProgress rep;
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  void report() {
    rep.elapsed_s = elapsed();
    if (fn) fn(rep);
  }
};

// the opts of the disk cache when they still apply to the kernel (opts of an older engine may not: search again)
std::optional<BeamResult> cached_result(const DiskCache& cache, const Scheduler& s0, Progress& p) {
  auto opts = cache.get();
  if (!opts) return std::nullopt;
  Scheduler s = s0;
  try {
    for (auto& o : *opts) s.apply_opt(o);
  } catch (const KernelOptError&) {
    return std::nullopt;
  }
  p.rep.finished = p.rep.cached = true;
  p.rep.best_opts = *opts;
  p.rep.best_shape = s.colored_shape();
  p.rep.best_s = 0;
  p.report();
  return BeamResult{*opts, p.rep};
}

// One search of a kernel's opts: rounds that widen each kernel of the beam by one opt, compile the candidates in
// parallel, time them, and keep the fastest `width` as the next beam; then the finalists timed again side by side.
class BeamSearch {
 public:
  BeamSearch(const UOpRef& ast, Device& d, const BeamConfig& c, const OptTarget& t, const Scheduler& s, Progress& p)
      : best{s, kInf}, kernel_ast(ast), dev(d), cfg(c), target(t), s0(s), progress(p), rep(p.rep), scratch(d, ast), renderer(d.renderer()),
        beam{{s, kInf}} {}

  // the search's rounds, then the finalists; best: the fastest kernel
  void run() {
    if (cfg.debug >= 2) std::printf("   0.00s:                from   1 ->   1 actions %s\n", s0.colored_shape().c_str());
    for (int round = 1;; ++round) {
      check_cancel(cfg, rep.kernel);
      std::vector<Candidate> cands = candidates(round);
      rep.round = round;
      rep.done = 0;
      rep.total = cands.size();
      progress.report();
      compile_pool().parallel_for(static_cast<int>(cands.size()), [&](int i) {
        if (!(cfg.cancel && cfg.cancel->load())) compile(cands[i]);
      });
      check_cancel(cfg, rep.kernel);
      time_round(to_time(cands));
      if (next_beam(cands)) break;
    }
    if (finalists.size() > 1) retime_finalists();
  }

  std::pair<Scheduler, double> best;  // the fastest kernel timed so far

 private:
  const UOpRef& kernel_ast;
  Device& dev;
  const BeamConfig& cfg;
  const OptTarget& target;
  const Scheduler& s0;
  Progress& progress;
  BeamProgress& rep;
  Scratch scratch;
  const Renderer& renderer;
  const std::string test_name = "test";
  std::vector<std::pair<Scheduler, double>> beam;
  int stale = 0;  // rounds in a row that did not beat the best
  // The fastest kernels of the whole search (kFinalists), timed again side by side at its end: each round's times
  // were taken minutes apart on a machine whose speed moves by a third within minutes, and a kernel timed in a fast
  // moment would otherwise win over a faster one timed in a slow moment. Their new times, taken in turns, decide.
  static constexpr size_t kFinalists = 4;
  std::vector<Candidate> finalists;
  std::optional<Candidate> default_kernel;  // (timed in the same turns: what the search gained is measured fairly)
  std::set<std::string> seen;

  void keep_finalist(const Candidate& c) {
    if (c.is_default) default_kernel = c;
    for (auto& f : finalists)
      if (f.spec.src == c.spec.src) {
        if (c.best() < f.best()) f.times = c.times;
        return;
      }
    finalists.push_back(c);
    std::stable_sort(finalists.begin(), finalists.end(), [](const Candidate& a, const Candidate& b) { return a.best() < b.best(); });
    if (finalists.size() > kFinalists) finalists.pop_back();
  }

  void compile(Candidate& c) {
    try {
      Scheduler k = c.s;
      UOpRef opt = k.get_optimized_ast(&test_name);
      c.spec = lower_program(kernel_ast, opt, renderer, target);
      // (the default's kernel is what the search must beat: timed whatever its size)
      if (cfg.uops_max > 0 && static_cast<int64_t>(c.spec.lowered->src.size()) >= cfg.uops_max && !c.is_tile && !c.is_default) return;
      c.exe = dev.load(c.spec);
      c.ok = true;
    } catch (const std::exception&) {
      // an opt combination this device cannot compile (a limit, a dtype): not a candidate
    }
  }

  // runs `runs` launches of each candidate of `cs`, a chunk of them per submission
  void time_pass(const std::vector<Candidate*>& cs, int runs) {
    constexpr size_t kChunk = 16;
    for (size_t b = 0; b < cs.size(); b += kChunk) {
      check_cancel(cfg, rep.kernel);
      const size_t e = std::min(cs.size(), b + kChunk);
      std::vector<std::pair<Candidate*, double>> launched;
      if (dev.batches()) dev.begin_batch(true);
      try {
        for (size_t i = b; i < e; ++i) {
          const auto vars = scratch.vars_for(cs[i]->spec);
          for (int r = 0; r < runs; ++r) {
            try {
              launched.emplace_back(cs[i], dev.launch(cs[i]->spec, *cs[i]->exe, scratch.bufs, vars));
            } catch (const Error&) {
              cs[i]->ok = false;  // refused at launch (a limit): recorded nothing
              break;
            }
          }
        }
      } catch (...) {
        if (dev.batches()) dev.end_batch();
        throw;
      }
      if (dev.batches()) {
        std::vector<double> t = dev.end_batch();
        if (t.size() != launched.size()) throw Error("BEAM: " + dev.name() + " returned " + std::to_string(t.size()) + " times for " + std::to_string(launched.size()) + " launches");
        for (size_t i = 0; i < t.size(); ++i) launched[i].second = t[i];
      }
      for (auto& [c, t] : launched)
        if (c->ok) c->times.push_back(t);
      rep.done += e - b;
      progress.report();
    }
  }

  // each kernel of the beam with one more opt; round 1 adds the register tiles (extended space, CPU), the default
  // opts and the hand-coded opts after each of the device's tensor cores
  std::vector<Candidate> candidates(int round) {
    std::vector<Candidate> cands;
    for (auto& [s, t] : beam)
      for (auto& s2 : kernel_actions(s, cfg.upcast_max, cfg.local_max, cfg.space)) cands.emplace_back(std::move(s2));
    if (round != 1) return cands;
    if (cfg.space == OptSpace::extended && target.has_threads)  // (the CPU's vector registers)
      for (auto& t : register_tiles(s0, cfg.upcast_max)) cands.emplace_back(std::move(t), false, true);
    Scheduler d = default_scheduler(s0);
    const int64_t default_tc = d.tc_index;
    cands.emplace_back(std::move(d), true);
    // (the default tries only the first tensor core that fits)
    if (codegen_option("NOOPT", 0) == 0)
      for (int64_t i = 0; i < static_cast<int64_t>(target.tensor_cores.size()); ++i) {
        Scheduler t = s0;
        hand_coded_optimizations(t, i);
        if (!t.tc_ranges.empty() && t.tc_index != default_tc) cands.emplace_back(std::move(t));
      }
    return cands;
  }

  // identical programs are timed once; one that does 1000x the work of the cheapest is not timed
  std::vector<Candidate*> to_time(std::vector<Candidate>& cands) {
    std::vector<Candidate*> out;
    double least_ops = kInf;
    for (auto& c : cands) {
      if (!c.ok) { ++rep.done; continue; }
      if (!seen.insert(c.spec.src).second && !c.is_default) { c.ok = false; ++rep.done; continue; }
      least_ops = std::min(least_ops, c.spec.estimates.ops);
    }
    for (auto& c : cands) {
      if (!c.ok) continue;
      if (!c.is_default && least_ops * 1000 < c.spec.estimates.ops) { c.ok = false; ++rep.done; continue; }
      out.push_back(&c);
    }
    return out;
  }

  // every candidate once; the ones within 3x of the beam's best again (the reference's early stop)
  void time_round(const std::vector<Candidate*>& to_time) {
    const size_t done_before = rep.done;
    time_pass(to_time, 1);
    if (cfg.runs <= 1) return;
    // (in round 1 nothing was timed before: the bar is this round's fastest first run)
    double round_best = kInf;
    for (auto* c : to_time) round_best = std::min(round_best, c->best());
    const double early_stop = std::min(best.second, round_best) * 3;
    std::vector<Candidate*> again;
    for (auto* c : to_time)
      if (c->ok && c->best() <= early_stop) again.push_back(c);
    rep.done = done_before;
    rep.total = done_before + again.size();
    time_pass(again, cfg.runs - 1);
  }

  // the round's timed candidates: the fastest become the next beam (and the best, when it gained); true when the
  // search ends here
  bool next_beam(const std::vector<Candidate>& cands) {
    std::vector<std::pair<Scheduler, double>> timed;
    for (auto& c : cands) {
      if (!c.ok || c.times.empty()) continue;
      if (c.is_default) rep.default_s = c.best();
      timed.emplace_back(c.s, c.best());
      ++rep.timed;
      keep_finalist(c);
    }
    std::stable_sort(timed.begin(), timed.end(), [](auto& a, auto& b) { return a.second < b.second; });
    const size_t n_timed = timed.size();
    // the reference ends at the first round that gains less than min_progress; here a round that gains nothing still
    // hands its best to the next one, up to `patience` such rounds in a row (a plateau within the timings' noise is
    // not mistaken for the end), and the result is the best kernel timed in any round
    bool exiting = timed.empty() || timed[0].second < cfg.min_progress_s;
    if (exiting && !timed.empty() && timed[0].second < best.second) best = timed[0];
    if (!exiting) {
      if (best.second - timed[0].second >= cfg.min_progress_s) {
        best = timed[0];
        stale = 0;
      } else {
        exiting = ++stale > cfg.patience;
      }
    }
    if (!exiting) {
      if (timed.size() > static_cast<size_t>(std::max(cfg.width, 1))) timed.erase(timed.begin() + std::max(cfg.width, 1), timed.end());
      beam = std::move(timed);
    }
    rep.best_s = best.second;
    rep.best_shape = best.first.colored_shape();
    rep.best_opts = best.first.applied_opts;
    if (cfg.debug >= 2) {
      std::printf("%7.2fs: %s from %3zu -> %3zu actions\x1b[K %s\n", progress.elapsed(),
                  (exiting ? colored(time_to_str(rep.best_s, 12), "green") : time_to_str(rep.best_s, 12)).c_str(), cands.size(),
                  n_timed, rep.best_shape.c_str());
      std::fflush(stdout);
    }
    return exiting;
  }

  // the finalists (and the default) timed again in turns: the fastest of those times wins
  void retime_finalists() {
    if (default_kernel && std::none_of(finalists.begin(), finalists.end(), [&](const Candidate& f) { return f.spec.src == default_kernel->spec.src; }))
      finalists.push_back(*default_kernel);
    std::vector<Candidate*> again;
    for (auto& f : finalists) {
      f.times.clear();
      again.push_back(&f);
    }
    rep.done = 0;
    rep.total = again.size() * static_cast<size_t>(std::max(cfg.runs, 3));
    for (int r = 0; r < std::max(cfg.runs, 3); ++r) time_pass(again, 1);
    const Candidate* win = nullptr;
    for (auto& f : finalists)
      if (f.ok && !f.times.empty() && (!win || f.best() < win->best())) win = &f;
    if (!win) return;
    best = {win->s, win->best()};
    rep.best_s = best.second;
    rep.best_shape = best.first.colored_shape();
    rep.best_opts = best.first.applied_opts;
    for (auto& f : finalists)
      if (f.spec.src == (default_kernel ? default_kernel->spec.src : std::string()) && f.ok && !f.times.empty()) rep.default_s = f.best();
  }
};

}  // namespace

BeamResult beam_search(const UOpRef& kernel_ast, Device& dev, const BeamConfig& cfg, const BeamProgressFn& progress) {
  NoListener quiet;
  Progress p(progress);
  const OptTarget target = dev.opt_target();
  const Scheduler s0 = opt_scheduler(kernel_ast, target);
  p.rep.best_s = kInf;
  p.rep.kernel = default_scheduler(s0).colored_name();

  const DiskCache cache(cfg, dev, kernel_ast);
  if (!cfg.ignore_cache)
    if (auto r = cached_result(cache, s0, p)) return *r;

  BeamSearch search(kernel_ast, dev, cfg, target, s0, p);
  search.run();
  p.rep.finished = true;
  p.report();
  if (std::isfinite(search.best.second)) cache.put(p.rep.best_opts);  // a search that timed nothing keeps nothing
  return {p.rep.best_opts, p.rep};
}

}  // namespace ts
