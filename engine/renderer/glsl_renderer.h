#pragma once
// GLSL 4.50 compute shaders for Vulkan, the third instance of the C-style renderer (cstyle.h):
//   #version 450 + the explicit-arithmetic-type and 8/16-bit storage extensions the program's dtypes need
//   layout(local_size_x = L0, local_size_y = L1, local_size_z = L2) in;
//   layout(std430, set = 0, binding = SLOT) restrict [readonly] buffer buf_SLOT { float data0_4[]; };
//   layout(push_constant) uniform vars_t { layout(offset = 8*k) int dataN_; ... };   (Variables, 8 bytes apart)
//   void main() { ... }
// One storage-buffer binding per buffer slot (set 0, binding = slot); bool buffers hold one byte per element
// (uint8_t). gidx/lidx SPECIALs are gl_WorkGroupID / gl_LocalInvocationID, BARRIER is barrier(), local memory is a
// `shared` array. The C semantics of program.h hold: integer division, shifts and float -> int are rendered with the
// same guards as C (GLSL leaves them undefined), a signed remainder is a-(a/b)*b.
#include <string>

#include "engine/codegen/program.h"
#include "engine/renderer/renderer.h"

namespace ts {

// spec.lowered (a LINEAR, after the renderer's linear passes) as a shader (and which UOp each line renders, into *lines
// when given)
std::string render_glsl(const ProgramSpec& spec, SourceLines* lines = nullptr);

// A kernel under the TC opt (engine/codegen/tensor_core.h) as a GL_NV_cooperative_matrix shader: each work group
// stages its A and B tiles for TcLayout::stage K blocks at a time in shared memory (rows padded by 8 elements; the
// next fill's tiles are read into registers while the current one is multiplied), each subgroup multiplies its
// fragments and stores its accumulators straight to the output (converted to the output's dtype).
struct TcLayout;
std::string render_glsl_tensor_core(const ProgramSpec& spec, const TcLayout& layout);

// How many of the program's work groups one Vulkan work group runs (1: each its own). A program of small work groups
// (under 128 lanes, one dimension) without barriers or local memory and with constant launch dims gets several packed
// into one of up to 256 lanes: NVIDIA keeps few work groups in flight per multiprocessor, so 32-lane ones leave it
// mostly idle. A grid is packed only as far as it keeps 1,024 work groups (a smaller one is not packed), so that the
// packed groups still spread over every multiprocessor. The shader recovers each lane's gidx0/lidx0; the launch divides the x group count by this.
int glsl_group_packing(const ProgramSpec& spec);

// Whether a program of two-dimensional work groups has its lanes ordered by lidx1 first (lidx1 is
// gl_LocalInvocationID.x), so that a subgroup's consecutive lanes take consecutive lidx1: the last LOCAL axis is the
// one nearest the contiguous end of row-major tensors, so its neighbours read and write neighbouring addresses (the
// default fp32 matmul 4096 on an H200: 7.3 TFLOP/s with lidx0 fastest, as the reference's CUDA lanes, 18.4 with lidx1).
// Names and the lowered program are unchanged; GLSL_LANES_SWAP=0 keeps lidx0 fastest.
bool glsl_swaps_lanes(const ProgramSpec& spec);

// A clear Error when a dtype cannot be used in GLSL on a device without the feature (names the dtype and the device);
// `features` holds the device's: "float16", "int8", "int16", "int64", "float64".
void check_glsl_dtypes(const ProgramSpec& spec, const std::vector<std::string>& features, const std::string& device);

// the Vulkan devices' GLSL renderer
const Renderer& glsl_renderer();

}  // namespace ts
