#pragma once
// In-process CPU JIT: C99 (clang's library) or LLVM IR text -> host machine code via one ORC LLJIT.
// Implementation in cpu_jit.cpp, the only translation unit with LLVM/clang headers.
#include <string>

namespace ts::cpu {

enum class SourceKind { C, LlvmIr };

// Compiles `source` (C99 text, or LLVM IR text) and returns the address of the function `symbol` it defines.
// Thread-safe. Throws std::runtime_error whose what() holds the compiler's diagnostics on failure.
// Every call gets its own JITDylib, so different sources may define the same symbol name; the returned
// code stays valid for the lifetime of the process (nothing is ever unloaded, nothing is cached here).
void* compile(SourceKind kind, const std::string& source, const std::string& symbol);

// Host assembly (AT&T) of the same source, for display. Throws like compile().
std::string assembly(SourceKind kind, const std::string& source);

// "x86-64 +avx2 +fma ..." style description of the target used, for logs.
std::string target_description();

}  // namespace ts::cpu
