#include "engine/renderer/llvm_renderer.h"

#include "engine/uop/error.h"

namespace ts {
std::string render_llvm(const ProgramSpec& spec) { throw Error("LLVM renderer: not implemented yet"); }
}  // namespace ts
