#pragma once
// Kernel optimizations (the reference's codegen/opt): Opt application by splitting ranges, the CPU hand-coded
// heuristics and the kernel name. Works on the kernel AST (SINK of END/STORE over RANGEs).
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/uop/error.h"
#include "engine/uop/print.h"  // ansistrip
#include "engine/uop/uop.h"

namespace ts {

// The opts BEAM searches: the reference's actions, or those and more (TS_OPTS=extended; engine/device/search.h)
enum class OptSpace { reference, extended };

enum class OptOps { TC, UPCAST, UNROLL, LOCAL, THREAD, GROUP, GROUPTOP, NOLOCALS, PADTO, SWAP };
std::string_view opt_op_name(OptOps op);

struct Opt {
  OptOps op;
  int axis = 0;
  int64_t arg = 0;
  // "Opt(op=OptOps.UPCAST, axis=0, arg=4)", as the reference's repr (NOLOCALS has neither: "axis=None, arg=None")
  std::string str() const;
};
// an opt's op by its name ("UPCAST"), or nullopt
std::optional<OptOps> opt_op_named(const std::string& name);
// an Opt from its str() (the trace's applied_opts), or nullopt
std::optional<Opt> opt_from_str(const std::string& text);

// an opt that does not apply to this kernel (the reference's KernelOptError)
struct KernelOptError : Error {
  using Error::Error;
};

// A tensor core (the reference's renderer.tensor_cores entry): one subgroup of `threads` lanes multiplies an m x k
// matrix of dtype_in by a k x n one and adds the m x n product to an accumulator of dtype_out. On Vulkan it is a
// cooperative-matrix shape of the device (fcoopmatNV<16, subgroup, m, k> x <k, n> + <32, m, n>).
struct TensorCore {
  int64_t m = 0, n = 0, k = 0;
  DType dtype_in = nullptr, dtype_out = nullptr;
  int64_t threads = 32;
  // a Vulkan device's VK_KHR_cooperative_matrix shape (bf16 among them), its GLSL's NV matrices rewritten to the KHR
  // instructions in SPIR-V; else a VK_NV_cooperative_matrix shape
  bool khr = false;
  // VK_NV_cooperative_matrix2: the device also holds matrices of these types at workgroup scope, any multiple of
  // wg_m x wg_n x wg_k up to wg_max rows or columns, in work groups of exactly one of wg_lanes invocations (empty: it
  // has none). A kernel whose work-group tile fits is rendered with one such matrix (TcLayout::workgroup_scope).
  int64_t wg_m = 0, wg_n = 0, wg_k = 0, wg_max = 0;
  std::vector<int64_t> wg_lanes{};
  std::string str() const;  // "16x8x16 half -> float"
};

// What the optimizer needs to know about the device: the reference Renderer's properties (renderer/__init__.py).
// global_max/local_max are in (x, y, z) order, the order get_grouped_dims reads them in.
struct OptTarget {
  bool has_local = false;        // LOCAL / GROUP / GROUPTOP opts and gidx/lidx launch dims
  bool has_shared = true;        // shared memory (the mat-vec heuristic needs it)
  bool has_threads = true;       // the CPU THREAD opt (a core_id Variable instead of launch dims)
  std::array<int64_t, 3> global_max{8, 0, 0};  // CPU: max threads in [0] (NUM_CPU_THREADS); GPU: work-groups per dim
  std::array<int64_t, 3> local_max{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};  // lanes per work-group, per dim
  int64_t shared_max = 32768;    // bytes of local memory a GROUP/GROUPTOP may use
  // bytes of local memory the tensor-core shader's tiles may use: the device's whole limit (the reference has no such
  // shader, so no name depends on it); 0: shared_max
  int64_t tc_shared_max = 0;
  int64_t tc_shared_limit() const { return tc_shared_max > 0 ? tc_shared_max : shared_max; }
  bool supports_float4 = true;
  // a reduce loop whose few lanes each read rows of their own is read a row at a time by the whole work group
  // (engine/codegen/row_reads.h): memory that serves a work group's adjacent reads best (a GPU's, not a CPU's)
  bool coalesce_row_reads = false;
  int max_upcast = 16;
  std::vector<TensorCore> tensor_cores;  // in the order the TC opt tries them (tc_select indexes it)
  // an fp32 matmul kernel whose lanes share the rows and columns they read is rendered with its tiles staged in shared
  // memory (tensor_core.h, staged_matmul_layout; STAGE_MATMUL=0 keeps its lowered program): a Vulkan device's
  bool stage_matmul = false;
};
// The CPU target (the reference's ClangRenderer): no locals, threads up to NUM_CPU_THREADS (env, default 8).
OptTarget cpu_opt_target();
// The reference's generic GPU renderer (the Renderer class defaults, what DEV=PYTHON runs): locals and shared
// memory, no threads, global_max = local_max = 0x8FFFFFFF per dim, shared_max 32768, float4. A real device's limits
// are smaller (a Vulkan device: maxComputeWorkGroupCount/Size, maxComputeWorkGroupInvocations,
// maxComputeSharedMemorySize); the heuristics below only read local_max/global_max in add gpudims (splitting and
// merging launch dims) and shared_max in the GROUP/GROUPTOP check, so with these defaults names follow the
// reference's GPU corpus. Decisions a device limit would change: a GROUP/GROUPTOP whose buffer exceeds a smaller
// shared_max is refused (the kernel then upcasts/locals instead); LOCAL opts are never checked against local_max
// (the reference does not either: the heuristic's product <= 128 keeps them small, MV uses 4 x 8 = 32 lanes,
// GROUPTOP 16 lanes); a launch dim over a smaller global_max/local_max is split or merged by add gpudims.
OptTarget gpu_opt_target();
int num_cpu_threads();

// The reference's codegen tuning variables (NUM_CPU_THREADS, NOOPT, NOLOCALS, MV, MV_BLOCKSIZE, MV_THREADS_PER_ROW,
// MV_ROWS_PER_THREAD): the program's entry point fills them (from its environment) before anything is compiled; the
// engine never reads the environment itself. A name not set takes the reference's default.
std::map<std::string, std::string>& codegen_options();
int64_t codegen_option(const std::string& name, int64_t dflt);
// every name codegen_options() takes (the entry point reads each from its environment; Context sets them in a script)
const std::vector<std::string>& codegen_option_names();
// the options set now, as one text: part of a compiled program's cache key (a program made under NOOPT=1 is another
// program than the default opts' one)
std::string codegen_options_key();

// position of an axis type in names and axis order (DEVICE -2, WEAK/LOOP -1, GLOBAL/THREAD 0, ...)
int axis_to_pos(AxisType t);
// tinygrad's colored(): "\x1b[90m_\x1b[0m" for ("_", "BLACK"); color names as the reference ("yellow", "WHITE")
std::string colored(std::string_view s, std::string_view color);
std::string_view axis_color(AxisType t);
// tinygrad's time_to_str(): seconds as "%{w}.2f" us, ms or "s " ("inf" for no time)
std::string time_to_str(double t, int w);
// ANSI stripped; characters outside [A-Za-z0-9_] as two hex digits
std::string to_function_name(std::string_view name);

// The reference's Scheduler: the AST plus the opts applied so far.
class Scheduler {
 public:
  Scheduler(UOpRef ast, OptTarget target);

  UOpRef ast;
  OptTarget target;
  std::vector<Opt> applied_opts;
  bool dont_use_locals = false;  // set by NOLOCALS: launch dims become idx0.. (no lidx), GLOBAL axes named BLUE
  // set by TC: the tensor core and the ids of its three ranges (m: the first MUL operand's rows, n: the second's
  // columns, k: the reduce), which later opts leave whole; tc_ranges is empty without TC
  TensorCore tc;
  int64_t tc_index = -1;  // its place in target.tensor_cores
  std::vector<int64_t> tc_ranges;

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
  std::vector<UOpRef> reduceops() const;  // REDUCE nodes in toposort order
  // full_shape with the reduce axes (REDUCE, UNROLL, GROUP_REDUCE) as 1
  std::vector<std::optional<int64_t>> output_shape() const;
  int group_for_reduces() const;  // number of GROUP_REDUCE axes

  // renderers with locals: output WEAK ranges that are globalizable become GLOBAL (the reference runs it first)
  void convert_loop_to_global();

  // splits rng into (rng' * amount + new) or, with top, (new * old_size + rng'); returns (rng', new)
  std::pair<UOpRef, UOpRef> shift_to(const UOpRef& rng, int64_t amount, AxisType new_type, bool top = false);
  void apply_opt(const Opt& opt, bool append = true);
  // TC: the ranges the tensor core's axes were split from, outer parts (the reference's return of apply_opt TC):
  // [the second MUL operand's axis, the first's, the reduce]
  std::vector<UOpRef> apply_tc_opt(const Opt& opt);
  // the index in rngs() of the range with this id (-1 if none)
  int axis_of_range(int64_t id) const;

  // names the kernel (or gives it *name_override: a search names every candidate alike) and returns the optimized
  // AST (SINK arg = KernelInfo{name, colored_name, applied_opts})
  UOpRef get_optimized_ast(const std::string* name_override = nullptr);
  std::string colored_name() const;
  // the axis sizes, each right-aligned in 4 columns and coloured by its type (the reference's colored_shape)
  std::string colored_shape() const;

 private:
  void apply_split_opt(const Opt& opt, bool append);
  int64_t next_range_id_;
};

// The hand-coded heuristics (heuristic.py): mat-vec, GROUPTOP, upcasts, unrolls, then locals (GPU) or threads (CPU).
// tc_select: the tensor core to try (the TC_SELECT option when unset; -1 = the first that fits)
void hand_coded_optimizations(Scheduler& k, std::optional<int64_t> tc_select = std::nullopt);
// the heuristics' last step on the CPU: a THREAD opt on the first loop over outputs that divides, about 128K ops a thread
void threads_opt(Scheduler& k);

// The opts a kernel gets without BEAM: the hand-coded ones, unless NOOPT=1 or the kernel has several blocks (STAGE).
void default_opts(Scheduler& k);

// Full optimizer step of codegen: hand-coded opts unless NOOPT=1, then naming. Plain function, not a rewrite.
UOpRef apply_opts(const UOpRef& sink, const OptTarget& target);

}  // namespace ts
