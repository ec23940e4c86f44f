#pragma once
// Runs a compiled (or interpreted) kernel: once per core_id in [0, spec.threads).
#include <cstdint>
#include <span>
#include <string>

#include "engine/codegen/program.h"

namespace ts {

// every rendered kernel exports `void NAME_entry(void** bufs, const long long* vars, int core_id)`
// (see to_program.h); obtain it with ts::cpu::compile(kind, spec.src, spec.function_name + "_entry")
using KernelEntry = void (*)(void**, const long long*, int);

// Runs a program over its buffers (indexed by slot) and Variable values (in spec.vars order): core_id
// 0..threads-1 on the persistent thread pool, or through the interpreter when entry is null (which records what each
// stored value was computed from while record_provenance is on: interp/provenance.h).
void run_program(const ProgramSpec& spec, KernelEntry entry, std::span<void*> bufs, std::span<const int64_t> vars);


struct Buffer;
// run_program over host buffers (an Error names the kernel when one is not in host memory); the kernel's seconds
double run_host(const ProgramSpec& spec, KernelEntry entry, std::span<Buffer* const> bufs, std::span<const int64_t> vars);
}  // namespace ts
