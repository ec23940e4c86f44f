#pragma once
// Textual LLVM IR (LLVM 16, opaque pointers) for a linearized program: the same kernel as the C renderer, with
// loop counters and accumulators in allocas (O2 turns them into registers), plus the same uniform entry
//   define void @NAME_entry(ptr %bufs, ptr %vars, i32 %core_id)
#include <string>

#include "engine/codegen/program.h"
#include "engine/renderer/renderer.h"

namespace ts {

// renders spec.lowered (a LINEAR) under spec.function_name
// (and which UOp each line renders, into *lines when given)
std::string render_llvm(const ProgramSpec& spec, SourceLines* lines = nullptr);

// the CPU's LLVM IR renderer (LLVM)
const Renderer& llvm_renderer();

}  // namespace ts
