#pragma once
// Kernel optimizations (the reference's codegen/opt): Opt application by splitting ranges, the CPU hand-coded
// heuristics and the kernel name. Works on the kernel AST (SINK of END/STORE over RANGEs).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/uop/error.h"
#include "engine/uop/uop.h"

namespace ts {

enum class OptOps { TC, UPCAST, UNROLL, LOCAL, THREAD, GROUP, GROUPTOP, NOLOCALS, PADTO, SWAP };
std::string_view opt_op_name(OptOps op);

struct Opt {
  OptOps op;
  int axis = 0;
  int64_t arg = 0;
  // "Opt(op=OptOps.UPCAST, axis=0, arg=4)", as the reference's repr
  std::string str() const;
};

// an opt that does not apply to this kernel (the reference's KernelOptError)
struct KernelOptError : Error {
  using Error::Error;
};

// What the optimizer needs to know about the device (the reference Renderer's properties).
struct OptTarget {
  bool has_local = false;
  bool has_threads = true;
  int global_max0 = 8;  // max threads (CPU: NUM_CPU_THREADS)
  int max_upcast = 16;
};
// The CPU target: no locals, threads up to NUM_CPU_THREADS (env, default 8).
OptTarget cpu_opt_target();
int num_cpu_threads();

// position of an axis type in names and axis order (DEVICE -2, WEAK/LOOP -1, GLOBAL/THREAD 0, ...)
int axis_to_pos(AxisType t);
// tinygrad's colored(): "\x1b[90m_\x1b[0m" for ("_", "BLACK"); color names as the reference ("yellow", "WHITE")
std::string colored(std::string_view s, std::string_view color);
std::string_view axis_color(AxisType t);
std::string ansistrip(std::string_view s);
// ANSI stripped; characters outside [A-Za-z0-9_] as two hex digits
std::string to_function_name(std::string_view name);

// The reference's Scheduler: the AST plus the opts applied so far.
class Scheduler {
 public:
  Scheduler(UOpRef ast, OptTarget target);

  UOpRef ast;
  OptTarget target;
  std::vector<Opt> applied_opts;

  // optimizable ranges (size > 1) sorted by (axis_to_pos, id)
  std::vector<UOpRef> rngs() const;
  std::vector<std::optional<int64_t>> full_shape() const;  // nullopt for symbolic sizes
  std::vector<AxisType> axis_types() const;
  std::vector<int> axes_of(std::initializer_list<AxisType> types) const;
  std::vector<UOpRef> ranges_of(std::initializer_list<AxisType> types) const;
  std::vector<int> upcastable_dims() const;
  std::vector<int> unrollable_dims() const;
  int64_t upcast_size() const;
  int upcasted() const;
  bool has_reduce() const;
  std::vector<UOpRef> bufs() const;  // INDEX nodes, reverse toposort
  std::vector<UOpRef> output_rngs() const;
  std::vector<UOpRef> globalizable_rngs() const;
  std::vector<std::string> colors() const;

  // splits rng into (rng' * amount + new) or, with top, (new * old_size + rng'); returns (rng', new)
  std::pair<UOpRef, UOpRef> shift_to(const UOpRef& rng, int64_t amount, AxisType new_type, bool top = false);
  void apply_opt(const Opt& opt, bool append = true);

  // names the kernel and returns the optimized AST (SINK arg = KernelInfo{name, colored_name, applied_opts})
  UOpRef get_optimized_ast();
  std::string colored_name() const;

 private:
  int64_t next_range_id_;
};

// The CPU hand-coded heuristics (heuristic.py), applied to a copy.
void hand_coded_optimizations(Scheduler& k);

// Full optimizer step of codegen: hand-coded opts unless NOOPT=1, then naming. Plain function, not a rewrite.
UOpRef apply_opts(const UOpRef& sink, const OptTarget& target);

}  // namespace ts
