#pragma once
#include <functional>
#include <string>

namespace ts {

// Compiles kernel source to a callable entry. Installed by the executable (engine/runtime/cpu links LLVM,
// the engine library does not). lang: "c" or "llvm".
using CompileFn = std::function<void*(const std::string& lang, const std::string& src, const std::string& symbol)>;
CompileFn& compiler_hook();

// The seconds this thread has waited, in the compile it is running, for a compiler another thread held (the CPU's
// clang front end compiles one kernel at a time): whoever times a compile zeroes it first, and its span starts after
// the wait (the trace's "compile" is the kernel's own).
inline double& compile_wait_seconds() {
  thread_local double seconds = 0;
  return seconds;
}

}  // namespace ts
