// Opts, the codegen options and the optimizer's targets (the reference's codegen/opt/__init__.py), and the helpers
// of kernel names (colored, axis colors, to_function_name). The Scheduler is in postrange.cpp, the hand-coded
// heuristics in heuristic.cpp.
#include "engine/codegen/opt.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace ts {

// ---- small helpers ------------------------------------------------------------------------------
std::string_view opt_op_name(OptOps op) {
  static const char* n[] = {"TC", "UPCAST", "UNROLL", "LOCAL", "THREAD", "GROUP", "GROUPTOP", "NOLOCALS", "PADTO", "SWAP"};
  return n[static_cast<int>(op)];
}

std::string Opt::str() const {
  if (op == OptOps::NOLOCALS) return "Opt(op=OptOps.NOLOCALS, axis=None, arg=None)";
  // the reference's TC arg is (tc_select, tc_opt, use_tensor_cores); this engine has tc_opt 0 and use_tensor_cores 1
  if (op == OptOps::TC) return "Opt(op=OptOps.TC, axis=" + std::to_string(axis) + ", arg=(" + std::to_string(arg) + ", 0, 1))";
  return "Opt(op=OptOps." + std::string(opt_op_name(op)) + ", axis=" + std::to_string(axis) + ", arg=" + std::to_string(arg) + ")";
}

std::optional<OptOps> opt_op_named(const std::string& name) {
  static const std::map<std::string, OptOps> names = {
      {"TC", OptOps::TC},         {"UPCAST", OptOps::UPCAST}, {"UNROLL", OptOps::UNROLL},     {"LOCAL", OptOps::LOCAL},
      {"THREAD", OptOps::THREAD}, {"GROUP", OptOps::GROUP},   {"GROUPTOP", OptOps::GROUPTOP}, {"NOLOCALS", OptOps::NOLOCALS},
      {"PADTO", OptOps::PADTO},   {"SWAP", OptOps::SWAP}};
  auto it = names.find(name);
  return it == names.end() ? std::nullopt : std::optional<OptOps>(it->second);
}

std::optional<Opt> opt_from_str(const std::string& text) {
  const std::string head = "Opt(op=OptOps.";
  if (text.rfind(head, 0) != 0) return std::nullopt;
  const size_t comma = text.find(',', head.size());
  if (comma == std::string::npos) return std::nullopt;
  std::optional<OptOps> op = opt_op_named(text.substr(head.size(), comma - head.size()));
  if (!op) return std::nullopt;
  Opt o{*op};
  if (*op == OptOps::NOLOCALS) return text == o.str() ? std::optional<Opt>(o) : std::nullopt;
  long long axis = 0, arg = 0;
  char tail[8] = {};
  const std::string rest = text.substr(comma);
  const int n = *op == OptOps::TC ? std::sscanf(rest.c_str(), ", axis=%lld, arg=(%lld, 0, 1)%7s", &axis, &arg, tail)
                                  : std::sscanf(rest.c_str(), ", axis=%lld, arg=%lld%7s", &axis, &arg, tail);
  if (n != 3) return std::nullopt;
  o.axis = static_cast<int>(axis);
  o.arg = arg;
  return o.str() == text ? std::optional<Opt>(o) : std::nullopt;  // (what str() writes, nothing else)
}

std::map<std::string, std::string>& codegen_options() {
  static std::map<std::string, std::string> o;
  return o;
}

const std::vector<std::string>& codegen_option_names() {
  static const std::vector<std::string> names{"NUM_CPU_THREADS", "NOOPT", "NOLOCALS", "MV", "MV_BLOCKSIZE", "MV_THREADS_PER_ROW",
                                              "MV_ROWS_PER_THREAD", "BEAM_UOPS_MAX", "BEAM_UPCAST_MAX", "BEAM_LOCAL_MAX",
                                              "BEAM_MIN_PROGRESS", "BEAM_PATIENCE", "USE_TC", "TC_SELECT", "TC_STAGE", "TC_VEC8", "TC_KHR", "TC_WG",
                                              "GLSL_LANES_SWAP", "FP_CONTRACT", "JAM", "JAM2", "PACK", "PREFETCH", "TRANSPOSE", "VECACC", "ROW_READS", "STAGE_MATMUL",
                                              "KERNEL_OPTS"};
  return names;
}

std::string codegen_options_key() {
  std::string key;
  for (const auto& [k, v] : codegen_options())
    if (!v.empty()) key += " " + k + "=" + v;
  return key;
}

int64_t codegen_option(const std::string& name, int64_t dflt) {
  auto it = codegen_options().find(name);
  return it == codegen_options().end() || it->second.empty() ? dflt : std::atoll(it->second.c_str());
}

int num_cpu_threads() {
  const int64_t v = codegen_option("NUM_CPU_THREADS", 0);
  if (v > 0) return static_cast<int>(v);
  // the reference's default: one thread per core (the corpus pins NUM_CPU_THREADS=8)
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

OptTarget cpu_opt_target() {
  OptTarget t;
  t.global_max = {num_cpu_threads(), 0, 0};
  return t;
}

OptTarget gpu_opt_target() {
  OptTarget t;
  t.has_local = true;
  t.has_shared = true;
  t.has_threads = false;
  t.global_max = {0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  t.local_max = {0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
  t.shared_max = 32768;
  t.supports_float4 = true;
  return t;
}

int axis_to_pos(AxisType t) {
  switch (t) {
    case AxisType::DEVICE: return -2;
    case AxisType::WEAK: case AxisType::LOOP: return -1;
    case AxisType::THREAD: case AxisType::GLOBAL: return 0;
    case AxisType::WARP: return 1;
    case AxisType::LOCAL: case AxisType::GROUP_REDUCE: return 2;
    case AxisType::UPCAST: return 3;
    case AxisType::REDUCE: return 4;
    case AxisType::UNROLL: return 5;
    default: return 6;
  }
}

std::string colored(std::string_view s, std::string_view color) {
  static const char* names[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};
  std::string lower(color);
  bool upper = true;
  for (auto& c : lower) {
    if (c >= 'a' && c <= 'z') upper = false;
    c = static_cast<char>(std::tolower(c));
  }
  int idx = 0;
  for (int i = 0; i < 8; ++i)
    if (lower == names[i]) idx = i;
  int code = 60 * upper + 30 + idx;
  return "\x1b[" + std::to_string(code) + "m" + std::string(s) + "\x1b[0m";
}

std::string time_to_str(double t, int w) {
  char buf[64];
  if (!std::isfinite(t)) std::snprintf(buf, sizeof buf, "%*s", w + 2, "inf");
  else if (t > 10) std::snprintf(buf, sizeof buf, "%*.2fs ", w, t);
  else if (t > 10e-3) std::snprintf(buf, sizeof buf, "%*.2fms", w, t * 1e3);
  else std::snprintf(buf, sizeof buf, "%*.2fus", w, t * 1e6);
  return buf;
}

std::string_view axis_color(AxisType t) {
  switch (t) {
    case AxisType::DEVICE: return "green";
    case AxisType::GLOBAL: return "blue";
    case AxisType::THREAD: return "BLUE";
    case AxisType::LOCAL: return "cyan";
    case AxisType::WARP: return "CYAN";
    case AxisType::WEAK: case AxisType::LOOP: return "WHITE";
    case AxisType::UPCAST: return "yellow";
    case AxisType::GROUP_REDUCE: return "RED";
    case AxisType::REDUCE: return "red";
    case AxisType::UNROLL: return "magenta";
    default: return "white";
  }
}

std::string to_function_name(std::string_view name) {
  std::string out;
  for (char c : ansistrip(name)) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') out += c;
    else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%02X", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  return out;
}

}  // namespace ts
