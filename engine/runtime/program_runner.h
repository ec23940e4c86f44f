#pragma once
#include <cstdint>
#include <span>

#include "engine/codegen/program.h"

namespace ts {

// every rendered kernel exports `void NAME_entry(void** bufs, const long long* vars, int core_id)`
using KernelEntry = void (*)(void**, const long long*, int);

// Runs a program over its buffers: core_id 0..threads-1 on the thread pool, or through the interpreter when
// entry is null.
void run_program(const ProgramSpec& spec, KernelEntry entry, std::span<void*> bufs, std::span<const int64_t> vars);

}  // namespace ts
