#include "app/cli/cli.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/bench.h"
#include "app/cli/limits_cache.h"
#include "app/cli/report.h"
#include "app/gui/gui_main.h"
#include "app/python/interpreter.h"
#include "engine/codegen/opt.h"
#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/runtime/cpu/install.h"
#include "engine/runtime/disk_cache.h"
#include "engine/runtime/vulkan/vulkan.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "engine/trace/chrome_trace.h"
#include "engine/trace/trace.h"

namespace tscli {

namespace {
constexpr const char* kUsage =
    "usage: tinyscope <command> [args]\n"
    "\n"
    "commands:\n"
    "  run SCRIPT.py [--json TRACE.json] [--chrome-trace OUT.json] [--trace off|passes|matches] [--repeat N]\n"
    "         [--snapshots] [-- ARGS...]\n"
    "                      run a tinygrad program on the engine; --json writes the trace (calls, result, ...);\n"
    "                      --chrome-trace writes its timeline as Chrome's Trace Event JSON (Perfetto and\n"
    "                      chrome://tracing open it): a process per device and the host, an event per call\n"
    "                      at its recorded time, flows from the call that wrote a buffer to the calls reading it;\n"
    "                      --trace sets what it records of the rewrites (default: passes with --json, else off);\n"
    "                      --repeat N runs each kernel N times and records every timing (their spread)\n"
    "                      --snapshots keeps every call's output buffer in the trace, read back right after the\n"
    "                      call ran (calls run one at a time)\n"
    "  [SCRIPT.py | TRACE.json] [--dev DEV] [--compare DEV | --compare-trace T.json] [--run | --runs N] [--snapshots]\n"
    "         [--beam N [--extended]] [--measure] [--select TEXT] [--step N] [--tour N] [--lesson N]\n"
    "         [--whatif A=1,A=,...] [--colour METRIC] [--pane NAME] [--screenshot OUT.png]\n"
    "                      open the window on a script or a saved trace; --run runs the script at once (--runs:\n"
    "                      N times, each once the last settled); --compare also runs it on a second device;\n"
    "                      --compare-trace puts a saved trace beside the one opened or run (File > Compare);\n"
    "                      --beam N searches each kernel's opts (BEAM=N; --extended: TS_OPTS=extended) for the\n"
    "                      window's runs, as its toolbar's BEAM and extended do (not saved);\n"
    "                      --measure prints each run's Run-to-all-panes time and longest UI-thread stall;\n"
    "                      --step N opens the rewrite stepper at step N of the selected context;\n"
    "                      --tour N opens the tour of the pipeline at stop N (1-9, Help > Tour), or a lesson's step N;\n"
    "                      --colour call|time|share|flops|bytes|roofline|ratio colours the graphs' nodes by a metric\n"
    "                      of the call computing them (the graphs' colour menu);\n"
    "                      --whatif A=1,A=,... once the runs settled, each step of Run > What if in turn (a\n"
    "                      codegen variable set, or unset with an empty value), each run compared with the one before;\n"
    "                      --lesson N plays lesson N (Help > Lessons; or a lesson file): runs its script, then\n"
    "                      asks its first question;\n"
    "                      --pane NAME puts that dock in front (roofline, values, timings, ...);\n"
    "                      --screenshot writes the window to a PNG once the runs and the graph layouts are done;\n"
    "                      --export-access DIR writes the Access pane's frames as Play steps (a PNG each), then exits\n"
    "  SCRIPT.py --run     without a display (no DISPLAY/WAYLAND_DISPLAY, or QT_QPA_PLATFORM=offscreen):\n"
    "                      same as `run SCRIPT.py` with DEBUG=2 (one line per executed kernel/copy)\n"
    "  TRACE.json          without a display: checks the trace (its error and exit 1 if it is corrupt), else exit 2\n"
    "  report (SCRIPT.py | TRACE.json) -o REPORT.html [--dev DEV] [--compare DEV | --compare TRACE2.json]\n"
    "         [--repeat N] [--save-trace TRACE.json] [-- ARGS...]\n"
    "                      one self-contained HTML page of a run: summary, script, tensor and kernel graphs,\n"
    "                      schedule, sources, timings (each call run N times, default 5: the warm median is the\n"
    "                      headline) and, with --compare, the same calls on a second device side by side; a\n"
    "                      script runs in a child process on each device in turn; --save-trace T.json keeps\n"
    "                      the run's trace (and the compared run's in T.DEV.json)\n"
    "  trace TRACE.json [--list] [-c CONTEXT [-p PASS [--rewrites]] [--uops] [--program]] [-t [N]]\n"
    "         [--calls] [--memory] [--json]\n"
    "                      a saved trace on the command line: its summary; --list its contexts and their\n"
    "                      passes; -c (a context's number or part of its name) -p (a pass's number or name)\n"
    "                      the pass's graph, with --rewrites its rewrites; --uops a kernel's linearized\n"
    "                      program, --program its source; -t the top N calls by time (default 20); --calls\n"
    "                      every call; --memory the allocations and frees; --json one JSON object a line\n"
      "  lesson LESSON.md [--dev DEV] [--json] [--answers A,B,...] [--trace-out T.json]\n"
    "                      a lesson (resources/lessons) without the window: its script runs, and each step's\n"
    "                      question is printed with the answer the run gives; --answers checks yours in order\n"
    "  bench [--quick] [--dev DEV] [--beam N] [--only TEXT] [--reference TINYGRAD_DIR]\n"
    "                      the benchmark table against this machine's measured limits, each\n"
    "                      output checked against its closed form (DEV: the device the workloads run on, default\n"
    "                      CPU; --beam N: the rows again with each kernel's opts searched by BEAM=N, and on a\n"
    "                      host device by BEAM=N over TS_OPTS=extended; --only: the rows whose name holds TEXT;\n"
    "                      --reference: a tinygrad checkout's CPU figures beside (numpy's too where installed),\n"
    "                      and the goals table)\n"
    "  bench --limits [--dev DEV]  measure only the device's limits (memory bandwidth, peak GFLOP/s; a few\n"
    "                      seconds) into ~/.cache/tinyscope/limits.json: a run's trace then carries them (the\n"
    "                      Roofline pane's roof); the full bench keeps its limits there too\n"
    "  devices [--json]    every device DEV can name, with its renderer, memory and limits\n"
    "  asm --lang c|llvm|glsl FILE   the host assembly the CPU JIT makes of a kernel's C or LLVM IR source, or\n"
    "                      the SPIR-V (disassembled) of a Vulkan kernel's GLSL\n"
    "  serve               (the window's warm child) start Python and the JIT, then run the script named by one\n"
    "                      JSON line on stdin: {\"script\", \"json\", \"trace\", \"dev\", \"args\", \"repeat\", \"beam\", \"snapshots\"}\n"
    "  --help              this text\n"
    "\n"
    "environment:\n"
    "  DEV=CPU|CPU:LLVM|INTERP|VULKAN  device (default CPU: C source compiled in-process by clang)\n"
    "  DEBUG=N                   1: device/schedule info, 2: one line per call, 4: generated source, 5: kernel ASTs\n"
    "  BEAM=N                    search each kernel's opts by timing candidates on its device, keeping the N best\n"
    "                            each round (a line per kernel on stderr; found opts cached in ~/.cache/tinyscope/beam,\n"
    "                            IGNORE_BEAM_CACHE=1 searches again)\n"
    "  CACHELEVEL=0              keep nothing on disk: no compiled kernels (CPU objects, SPIR-V), no BEAM opts\n"
    "  TINYSCOPE_CACHE_MB=N      the most each compiled-kernel cache keeps in ~/.cache/tinyscope (default 256)\n"
    "\n"
    "Without a command the window opens (without a display this text is printed instead).\n";

// the window was asked for and cannot open: a clear message and the usage, exit 2 (never Qt's abort)
int no_display(const std::string& hint) {
  std::fprintf(stderr,
               "tinyscope: no display to open the window on (no DISPLAY or WAYLAND_DISPLAY, or QT_QPA_PLATFORM=offscreen);\n"
               "  %s\n\n", hint.c_str());
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parse_count(const std::string& s, int max, int* out) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  const long v = std::strtol(s.c_str(), nullptr, 10);
  if (v < 1 || v > max) return false;
  *out = static_cast<int>(v);
  return true;
}
std::string script_problem(const std::string& script) {
  std::error_code ec;
  const auto st = std::filesystem::status(script, ec);
  if (ec || !std::filesystem::exists(st)) return "no such script: '" + script + "'";
  if (std::filesystem::is_directory(st)) return "'" + script + "' is a directory, not a script";
  if (!std::filesystem::is_regular_file(st)) return "'" + script + "' is not a regular file";
  return {};
}

namespace {
// the reference's CACHELEVEL=0: nothing kept on disk (no compiled kernels, no BEAM opts)
bool cache_level_zero() {
  const char* d = std::getenv("CACHELEVEL");
  return d && *d && std::atoi(d) == 0;
}

std::string kernel_cache_dir() { return cache_level_zero() ? std::string() : cache_dir(); }

void read_cache_bound() {
  const char* v = std::getenv("TINYSCOPE_CACHE_MB");
  if (!v || !*v) return;
  char* end = nullptr;
  const double mb = std::strtod(v, &end);
  if (end == v || *end || !(mb > 0) || mb > 1e9) {
    std::fprintf(stderr, "tinyscope: TINYSCOPE_CACHE_MB must be a number of MiB above 0, not '%s'; each kernel cache keeps "
                 "at most the default %llu MiB\n", v, static_cast<unsigned long long>(ts::disk_cache_max_bytes() >> 20));
    return;
  }
  ts::set_disk_cache_max_bytes(std::max<uint64_t>(1, static_cast<uint64_t>(mb * 1048576.0)));
}

bool g_vk_validation = false;
int g_vk_lose_at_wait = 0;
std::string g_vk_fault_error;  // a TINYSCOPE_VK_FAULT this build does not know: an error before anything runs

// TINYSCOPE_VK_FAULT, a testing hook: "device_lost" (the first batch a Vulkan device waits for reports
// VK_ERROR_DEVICE_LOST) or "device_lost:N" (the N-th); unset or empty: none
void read_vulkan_fault() {
  const char* f = std::getenv("TINYSCOPE_VK_FAULT");
  if (!f || !*f) return;
  const std::string v = f, prefix = "device_lost";
  int n = 0;
  if (v == prefix) n = 1;
  else if (v.rfind(prefix + ":", 0) == 0 && !parse_count(v.substr(prefix.size() + 1), 1 << 30, &n)) n = 0;
  if (n < 1) g_vk_fault_error = "TINYSCOPE_VK_FAULT must be device_lost or device_lost:N (N from 1), not '" + v + "'";
  g_vk_lose_at_wait = n;
}

}

void install_vulkan() {
  ts::register_host_devices();  // first: the order devices are listed in
  g_vk_validation = std::getenv("TINYSCOPE_VK_VALIDATION") && std::string(std::getenv("TINYSCOPE_VK_VALIDATION")) == "1";
  read_vulkan_fault();
  ts::register_device_provider([] {
    ts::vk::DeviceOptions o;
    o.validation = g_vk_validation;
    o.cache_dir = kernel_cache_dir();
    o.lose_device_at_wait = g_vk_lose_at_wait;
    if (const char* l = std::getenv("TINYSCOPE_VK_LOGICAL")) o.logical_devices = std::max(0, std::atoi(l));
    ts::vk::register_vulkan_devices(o);
  });
}

int vulkan_checked_exit(int code) {
  // a compiled kernel that could not be kept (a full disk, a folder that cannot be written) costs only the next run its
  // compile: said once, not an error
  std::string why;
  if (const uint64_t n = ts::disk_cache_write_errors(&why))
    std::fprintf(stderr, "tinyscope: %llu compiled kernel(s) could not be kept in the cache, and will be compiled again next time: %s\n",
                 static_cast<unsigned long long>(n), why.c_str());
  if (!g_vk_validation) return code;
  std::string last;
  if (uint64_t n = ts::vk::validation_message_count(&last); n > 0) {
    std::fprintf(stderr, "tinyscope: the Vulkan validation layer reported %llu message(s); the last: %s\n",
                 static_cast<unsigned long long>(n), last.c_str());
    return code ? code : 3;
  }
  return code;
}

const char* usage() { return kUsage; }

void codegen_options_from_env() {
  for (const std::string& v : ts::codegen_option_names())
    if (const char* e = std::getenv(v.c_str()); e && *e) ts::codegen_options()[v] = e;
}

ts::RealizeConfig realize_config_from_env() {
  codegen_options_from_env();  // the reference's codegen tuning variables go to the engine here too
  ts::RealizeConfig c;
  if (const char* d = std::getenv("DEV"); d && *d) c.device = d;
  if (const char* d = std::getenv("DEBUG"); d && *d) c.debug = std::atoi(d);
  if (const char* d = std::getenv("TINYSCOPE_REPEAT"); d && *d) c.repeat = std::max(1, std::atoi(d));
  if (const char* d = std::getenv("TINYSCOPE_SNAPSHOTS"); d && *d) c.snapshots = std::atoi(d) != 0;
  if (const char* d = std::getenv("BEAM"); d && *d) c.beam = std::max(0, std::atoi(d));
  if (const char* d = std::getenv("IGNORE_BEAM_CACHE"); d && *d) c.beam_ignore_cache = std::atoi(d) != 0;
  // DEFAULT_FLOAT / DEFAULT_INT (the reference's, any case: DEFAULT_FLOAT=HALF)
  for (const char* v : {"DEFAULT_FLOAT", "DEFAULT_INT"})
    if (const char* e = std::getenv(v); e && *e) {
      std::string name = e;
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const bool f = std::string_view(v) == "DEFAULT_FLOAT";
      const ts::DType dt = ts::dtypes::from_name(name);
      if (!dt) throw std::runtime_error(std::string(v) + "=" + e + " is not a" + (f ? " float" : "n int") + " dtype");
      ts::dtypes::set_default(dt, f);
    }
  if (const char* d = std::getenv("TS_OPTS"); d && *d) {
    const std::string v = d;
    if (v == "extended") c.opt_space = ts::OptSpace::extended;
    else if (v != "reference") throw std::runtime_error("TS_OPTS=" + v + ": the opt spaces BEAM searches are 'reference' and 'extended'");
  }
  c.beam_cache_dir = kernel_cache_dir();
  return c;
}

namespace {

// The limits `tinyscope bench` measured for this device on this machine (the limits cache), into the trace as its
// "limits"; nothing when there are none (a run never makes them up).
void add_cached_limits(const std::string& device) {
  try {
    const std::string key = limits_device_key(device);
    if (key.empty()) return;
    const std::string machine = key == "CPU" ? cpu_machine() : vulkan_machine_of(device);
    if (auto l = read_limits(limits_cache_path(), key, machine)) ts::trace::set_field("limits", limits_trace_json(*l));
  } catch (const std::exception&) {  // a device that cannot be opened now has no limits in the trace, and the trace is written
  }
}

int run_script(const std::string& script, const std::string& json_path, const std::vector<std::string>& args,
               ts::trace::Level level = ts::trace::Level::Off, const std::string& chrome_path = {}) {
  ts::trace::set_level(level);
  ts::trace::record_calls(!json_path.empty() || !chrome_path.empty());  // nothing reads the trace of a run without them
  try {
    ts::RealizeConfig config = realize_config_from_env();
    config.time_kernels = false;  // (DEBUG>=2, --json and repeats time them: realize.h)
    ts::install_realize(config);
  } catch (const std::exception& e) {  // DEV names no device: never run on another one
    std::fprintf(stderr, "tinyscope: %s\n", e.what());
    return 2;
  }
  tsp::ScriptRun run;
  run.script = script;
  run.args = args;
  run.json_path = json_path;
  run.device = ts::realize_config().device;
  run.before_save = [device = run.device] { add_cached_limits(device); };
  const auto began = std::filesystem::file_time_type::clock::now();
  int code = tsp::run_script(run);
  if (!chrome_path.empty()) {
    try {
      // the trace this run's --json wrote, when it did (the same events, though buffers are freed after it was written)
      std::error_code ec;
      const bool wrote = !json_path.empty() && std::filesystem::last_write_time(json_path, ec) >= began && !ec;
      nlohmann::json trace = wrote ? ts::trace::load(json_path) : ts::trace::to_json();
      trace[ts::trace::key::kScript] = script;
      trace[ts::trace::key::kDevice] = run.device;
      ts::trace::write_chrome_trace(trace, chrome_path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tinyscope: %s\n", e.what());
      if (!code) code = 1;
    }
  }
  return vulkan_checked_exit(code);
}

// run SCRIPT.py [--json TRACE.json] [--chrome-trace OUT.json] [--] [ARGS...]: everything after the script that is not
// an option goes to sys.argv
int cmd_run(const std::vector<std::string>& a) {
  std::string script, json_path, trace_level, chrome_path;
  std::vector<std::string> rest;
  bool passthrough = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!passthrough && a[i] == "--repeat") {
      int n = 0;
      if (i + 1 >= a.size() || !parse_count(a[i + 1], kMaxRepeat, &n)) {
        if (i + 1 >= a.size()) std::fputs("tinyscope run: --repeat needs a value\n", stderr);
        else std::fprintf(stderr, "tinyscope run: --repeat must be a whole number from 1 to %d, not '%s'\n", kMaxRepeat, a[i + 1].c_str());
        return 2;
      }
      setenv("TINYSCOPE_REPEAT", std::to_string(n).c_str(), 1);
      ++i;
    } else if (!passthrough && a[i] == "--snapshots") {
      setenv("TINYSCOPE_SNAPSHOTS", "1", 1);
    } else if (!passthrough && (a[i] == "--json" || a[i] == "--trace" || a[i] == "--chrome-trace")) {
      if (i + 1 >= a.size()) {
        std::fprintf(stderr, "tinyscope run: %s needs a value\n", a[i].c_str());
        return 2;
      }
      (a[i] == "--json" ? json_path : a[i] == "--trace" ? trace_level : chrome_path) = a[i + 1];
      ++i;
    } else if (!passthrough && a[i] == "--") {
      passthrough = true;
    } else if (script.empty()) {
      script = a[i];
    } else {
      rest.push_back(a[i]);
    }
  }
  if (script.empty()) {
    std::fputs("tinyscope run: no script given\n\n", stderr);
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (const std::string why = script_problem(script); !why.empty()) {
    std::fprintf(stderr, "tinyscope run: %s\n", why.c_str());
    return 2;
  }
  ts::trace::Level level = json_path.empty() && chrome_path.empty() ? ts::trace::Level::Off : ts::trace::Level::Passes;
  if (trace_level == "off") level = ts::trace::Level::Off;
  else if (trace_level == "passes") level = ts::trace::Level::Passes;
  else if (trace_level == "matches") level = ts::trace::Level::Matches;
  else if (!trace_level.empty()) {
    std::fprintf(stderr, "tinyscope run: --trace must be off, passes or matches, not '%s'\n", trace_level.c_str());
    return 2;
  }
  return run_script(script, json_path, rest, level, chrome_path);
}

bool parse_level(const std::string& s, ts::trace::Level* out) {
  if (s == "off") *out = ts::trace::Level::Off;
  else if (s == "passes") *out = ts::trace::Level::Passes;
  else if (s == "matches") *out = ts::trace::Level::Matches;
  else return false;
  return true;
}

// serve: the window keeps one of these started ahead of time, so Run does not wait for Python and LLVM
int cmd_serve() {
  bool bad_request = false;
  // a request the engine refuses (an unknown "dev", an unwritable "stream") ends the child with the reason
  try {
  const int code = tsp::serve([&bad_request](tsp::ScriptRun& run) {
    ts::cpu::warm_up();
    std::string line;
    if (!std::getline(std::cin, line)) return false;
    // the request is untrusted text: every field is checked here, before anything is set
    std::string dev, stream;
    int repeat = 1, beam = -1;
    std::string opts;  // "reference" or "extended": TS_OPTS for the run (empty: as the environment says)
    bool snapshots = false;
    std::vector<std::pair<std::string, std::string>> env;
    ts::trace::Level level = ts::trace::Level::Off;
    try {
      const nlohmann::json req = nlohmann::json::parse(line);
      if (!req.is_object()) throw std::runtime_error("the request is not a JSON object");
      auto text = [&req](const char* key) -> std::string {
        if (!req.contains(key)) return {};
        if (!req[key].is_string()) throw std::runtime_error(std::string("\"") + key + "\" must be a string, not " + req[key].dump());
        return req[key].get<std::string>();
      };
      if (!req.contains("script")) throw std::runtime_error("no \"script\"");
      run.script = text("script");
      run.json_path = text("json");
      dev = text("dev");
      stream = text("stream");
      if (req.contains("args")) {
        if (!req["args"].is_array()) throw std::runtime_error("\"args\" must be an array of strings");
        for (const auto& a : req["args"]) {
          if (!a.is_string()) throw std::runtime_error("\"args\" must be an array of strings, not " + a.dump());
          run.args.push_back(a.get<std::string>());
        }
      }
      if (req.contains("repeat")) {
        const auto& r = req["repeat"];
        if (!r.is_number_integer() || r.get<long long>() < 1 || r.get<long long>() > kMaxRepeat)
          throw std::runtime_error("\"repeat\" must be a whole number from 1 to " + std::to_string(kMaxRepeat) + ", not " + r.dump());
        repeat = r.get<int>();
      }
      if (req.contains("snapshots")) {
        if (!req["snapshots"].is_boolean()) throw std::runtime_error("\"snapshots\" must be true or false, not " + req["snapshots"].dump());
        snapshots = req["snapshots"].get<bool>();
      }
      if (req.contains("beam")) {
        const auto& b = req["beam"];
        if (!b.is_number_integer() || b.get<long long>() < 0 || b.get<long long>() > 16)
          throw std::runtime_error("\"beam\" must be a whole number from 0 to 16, not " + b.dump());
        beam = b.get<int>();
      }
      if (req.contains("opts")) {
        const auto& o = req["opts"];
        if (!o.is_string() || (o.get<std::string>() != "reference" && o.get<std::string>() != "extended"))
          throw std::runtime_error("\"opts\" must be \"reference\" or \"extended\" (the opt space BEAM searches), not " + o.dump());
        opts = o.get<std::string>();
      }
      // "env": codegen variables for this run ({"NOOPT": "1"}), only the names the engine reads
      if (req.contains("env")) {
        if (!req["env"].is_object()) throw std::runtime_error("\"env\" must be an object of codegen variables, not " + req["env"].dump());
        for (const auto& [k, v] : req["env"].items()) {
          if (!v.is_string() || v.get<std::string>().empty()) throw std::runtime_error("\"env\": " + k + " must be a word or number, not " + v.dump());
          if (const std::string why = ts::codegen_option_problem(k, v.get<std::string>()); !why.empty())
            throw std::runtime_error("\"env\": " + why);
          env.emplace_back(k, v.get<std::string>());
        }
      }
      level = run.json_path.empty() ? ts::trace::Level::Off : ts::trace::Level::Passes;
      if (req.contains("trace") && (!req["trace"].is_string() || !parse_level(req["trace"].get<std::string>(), &level)))
        throw std::runtime_error("\"trace\" must be \"off\", \"passes\" or \"matches\", not " + req["trace"].dump());
      if (const std::string why = script_problem(run.script); !why.empty()) throw std::runtime_error(why);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tinyscope serve: bad request: %s\n", e.what());
      bad_request = true;
      return false;
    }
    if (!dev.empty()) setenv("DEV", dev.c_str(), 1);
    setenv("TINYSCOPE_REPEAT", std::to_string(repeat).c_str(), 1);
    setenv("TINYSCOPE_SNAPSHOTS", snapshots ? "1" : "0", 1);
    if (beam >= 0) setenv("BEAM", std::to_string(beam).c_str(), 1);
    if (!opts.empty()) setenv("TS_OPTS", opts.c_str(), 1);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    ts::trace::set_level(level);
    // "stream": the trace also goes to this file line by line as it is recorded (a killed run keeps it)
    if (!stream.empty()) ts::trace::stream_to(stream);
    ts::install_realize(realize_config_from_env());  // throws on an unknown dev: the child ends with the reason (exit 2)
    run.device = ts::realize_config().device;
    run.before_save = [device = run.device] { add_cached_limits(device); };
    return true;
  });
  return bad_request ? 2 : vulkan_checked_exit(code);  // no request at all (stdin closed) is a normal end
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tinyscope serve: %s\n", e.what());
    return 2;
  }
}

// devices [--json]
int cmd_devices(const std::vector<std::string>& a) {
  bool json = false;
  for (const auto& x : a) {
    if (x == "--json") json = true;
    else {
      std::fprintf(stderr, "tinyscope devices: unknown argument '%s' (usage: tinyscope devices [--json])\n", x.c_str());
      return 2;
    }
  }
  codegen_options_from_env();  // the options a device reads as it opens (TC_KHR, TC_WG, USE_TC: its tensor_cores line)
  ts::device_names();          // registers the devices
  std::fputs(ts::describe_devices(json).c_str(), stdout);
  return 0;
}

// asm --lang c|llvm|glsl FILE (glsl: the SPIR-V glslang makes of it, disassembled)
int cmd_asm(const std::vector<std::string>& a) {
  std::string lang = "c", file;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--lang" && i + 1 < a.size()) lang = a[++i];
    else file = a[i];
  }
  std::FILE* f = file.empty() ? nullptr : std::fopen(file.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "tinyscope asm: cannot open '%s'\n", file.c_str());
    return 2;
  }
  std::string src;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) src.append(buf, n);
  std::fclose(f);
  try {
    std::string text = lang == "glsl" ? ts::vk::glsl_assembly(src, file)
                                      : ts::cpu::assembly(lang == "llvm" ? ts::cpu::SourceKind::LlvmIr : ts::cpu::SourceKind::C, src);
    std::fputs(text.c_str(), stdout);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tinyscope asm: %s\n", e.what());
    return 1;
  }
}
}  // namespace

int main(int argc, char** argv) {
  read_cache_bound();
#if TINYSCOPE_HAS_CPU_JIT
  ts::cpu::install(kernel_cache_dir());  // DEV=CPU and CPU:LLVM compile through the in-process JIT, objects kept on disk
#endif
  install_vulkan();
  if (!g_vk_fault_error.empty()) {
    std::fprintf(stderr, "tinyscope: %s\n", g_vk_fault_error.c_str());
    return 2;
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    if (tsgui::display_available()) return tsgui::main(argc, argv);
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::string& cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "run") return cmd_run({args.begin() + 1, args.end()});
  if (cmd == "bench") return run_bench(argc, argv);
  if (cmd == "serve") return cmd_serve();
  if (cmd == "asm") return cmd_asm({args.begin() + 1, args.end()});
  if (cmd == "devices") return cmd_devices({args.begin() + 1, args.end()});
  if (cmd == "report") return cmd_report({args.begin() + 1, args.end()});
  if (cmd == "trace") return cmd_trace({args.begin() + 1, args.end()});
  if (cmd == "lesson") return cmd_lesson({args.begin() + 1, args.end()});
  bool gui_flag = false;
  for (const auto& a : args)
    gui_flag = gui_flag || a == "--screenshot" || a.starts_with("--screenshot=") || a == "--export-access" || a.starts_with("--export-access=");
  const bool is_json = ends_with(cmd, ".json"), is_py = ends_with(cmd, ".py");
  if (is_json || cmd == "--dev" || cmd == "--screenshot" || cmd == "--lesson" || (is_py && gui_flag) || (is_py && tsgui::display_available())) {
    if (gui_flag || tsgui::display_available()) return tsgui::main(argc, argv);
    // no display: the window cannot open (Qt would abort); say so, and still check a trace
    if (is_json) {
      std::string error;
      if (!tsgui::check_trace_file(cmd, &error)) {
        std::fprintf(stderr, "tinyscope: cannot open the trace %s\n", error.c_str());
        return 1;
      }
    }
    return no_display(std::string("add --screenshot OUT.png to render the window to a picture") +
                      (is_json ? " (the trace itself is valid)" : ""));
  }
  if (is_py) {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    bool headless = false;
    std::vector<std::string> script_args;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == "--run") headless = true;
      else if (rest[i] == "--dev" && i + 1 < rest.size()) setenv("DEV", rest[++i].c_str(), 1);
      else script_args.push_back(rest[i]);
    }
    if (!headless) return no_display("add --run to run " + cmd + " here, or --screenshot OUT.png to render the window to a picture");
    if (const std::string why = script_problem(cmd); !why.empty()) {
      std::fprintf(stderr, "tinyscope: %s\n", why.c_str());
      return 2;
    }
    setenv("DEBUG", "2", /*overwrite=*/0);
    return run_script(cmd, "", script_args);
  }
  std::fprintf(stderr, "tinyscope: unknown command '%s'\n\n", cmd.c_str());
  std::fputs(kUsage, stderr);
  return 2;
}

}  // namespace tscli
