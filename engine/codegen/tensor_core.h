#pragma once
// Kernels under the TC opt: a matmul whose inner m x n x k block is one tensor-core operation of a subgroup.
//
// A GPU's cooperative matrices (Vulkan's GL_NV_cooperative_matrix) are opaque: a subgroup loads a fragment from
// memory with a row stride, multiplies and adds fragments, and stores one; which lane holds which element is the
// driver's. So the reference's WMMA lowering (each lane's elements as upcast vectors) has no counterpart, and a TC
// kernel is instead read as a layout: every range of the optimized AST has a role, and each of the three buffers an
// affine index over the ranges. Roles:
//   the TC ranges m, n, k     one fragment: rows of A (the first MUL operand) and C, columns of B and C, the reduce
//   GLOBAL                    work groups (ranges of A and C, of B and C, or of all three: a batch)
//   LOCAL (of A or B)         subgroups of the work group: each takes its own rows (or columns) of the tile
//   UPCAST (of A or B)        fragments per subgroup: FM x FN accumulators
//   REDUCE                    the loop over K blocks
//   UNROLL (of the reduce)    k fragments per K block
// Anything else (a gate, a non-affine index, a range of one buffer only, an epilogue other than a cast) is not a
// tensor-core kernel: the TC opt refuses it with a KernelOptError, before it changes the kernel.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/codegen/opt.h"
#include "engine/codegen/program.h"
#include "engine/codegen/to_program.h"

namespace ts {

struct TcRange {
  int64_t id = 0, size = 1;
  AxisType type = AxisType::WEAK;
  int64_t ca = 0, cb = 0, cc = 0;  // its coefficient in A's, B's and C's element index
};

struct TcLayout {
  int64_t tm = 0, tn = 0, tk = 0, threads = 32;
  bool khr = false;  // the tensor core is a KHR cooperative-matrix shape (TensorCore::khr)
  DType dtype_in = nullptr, dtype_acc = nullptr, dtype_out = nullptr;
  int64_t slot_a = 0, slot_b = 0, slot_c = 0;
  int64_t base_a = 0, base_b = 0, base_c = 0;  // the indexes with every range 0
  TcRange rm, rn, rk;
  std::vector<TcRange> globals;             // work-group ranges, the last the fastest
  std::vector<TcRange> locals;              // subgroup ranges (of A or of B), the last the fastest
  std::vector<TcRange> upcast_m, upcast_n;  // fragment ranges
  std::vector<TcRange> reduces, unrolls;    // K blocks and the k fragments in one
  // K blocks staged in shared memory at a time (a divisor of k_blocks): one pair of barriers per `stage` blocks, the
  // multiply-adds in the same order (block by block). Chosen by tc_layout within the shared-memory and register
  // budgets; TC_STAGE=N asks for N. (Workgroup scope: K blocks a load and multiply-add, where the whole K is one run.)
  int64_t stage = 1;
  // The work group's whole tile as one workgroup-scope matrix (TensorCore::wg_lanes; TC_WG=0 keeps subgroup scope):
  // its A and B tiles loaded straight from the buffers (the compiler stages them through shared memory), one
  // multiply-add a K block. Chosen when the tile's rows, columns and K block are each one contiguous run of the
  // buffers (in one order for both), each 16-byte aligned, and the work group has a size the device lists.
  bool workgroup_scope = false;
  int64_t a_stride = 0, b_stride = 0, c_stride = 0;  // (workgroup scope) the tiles' row (column-major: column) strides
  bool a_col = false, b_col = false, c_col = false;  // column-major tiles
  // No tensor core (staged_matmul_layout): each lane multiplies and adds an FM x FN block of fp32 outputs of its own
  // (tm = tn = tk = 1, threads = 1: a lane is a "subgroup"), the work group's A and B tiles staged in shared memory
  bool simt = false;
  // (simt) each GLOBAL and LOCAL range's value as the reference's launch dims give it (get_grouped_dims: gidx reversed,
  // merged or split to fit the device), over SPECIALs gidxN / lidxN and integer + * // %: the kernel launches as the
  // lowered one would
  std::vector<UOpRef> global_idx, local_idx;
  // derived sizes
  int64_t subgroups() const;
  int64_t tile_m() const;  // rows of the work group's tile: tm x its LOCAL and UPCAST ranges of A
  int64_t tile_n() const;
  int64_t block_k() const;  // tk x the UNROLL ranges
  int64_t work_groups() const;
  int64_t k_blocks() const;
  int64_t staged_k() const { return block_k() * stage; }  // the k extent of the tiles in shared memory
  int64_t shared_bytes() const;  // the A and B tiles in shared memory (staged_k deep), rows padded by 8
  int64_t prefetch_words() const;  // 32-bit registers per lane holding the next tiles while the current ones are used
};

// The layout of an optimized kernel AST whose KernelInfo (or `ids`) names TC ranges; KernelOptError when it is not one
// `target` can run (the reason in the message).
TcLayout tc_layout(const UOpRef& ast, const TensorCore& tc, const std::vector<int64_t>& ids, const OptTarget& target);

// An fp32 matmul kernel whose lanes (its LOCAL ranges) share the rows of A and the columns of B they read: its layout
// with every range in a role (no tensor-core ranges), as many K blocks staged in shared memory at a time as make a
// fill 16 deep within the shared-memory and register budgets (TC_STAGE=N asks for N). KernelOptError when it is not
// such a kernel: other dtypes, fewer than 32 lanes or 16 outputs a lane, no reduce loop, a gate, a local buffer, ...
TcLayout staged_matmul_layout(const UOpRef& ast, const OptTarget& target);

// The program of a TC kernel (GLSL only): launch dims from its layout, the source from render_glsl_tensor_core.
ProgramSpec lower_tensor_core_program(const UOpRef& kernel_ast, const UOpRef& sink, const TcLayout& layout, const Renderer& renderer);

}  // namespace ts
