#pragma once
// In-process CPU JIT: C99 (clang's library) or LLVM IR text -> host machine code via one ORC LLJIT.
// Implementation in cpu_jit.cpp, the only translation unit with LLVM/clang headers.
#include <string>

namespace ts::cpu {

enum class SourceKind { C, LlvmIr };

// Compiles `source` (C99 text, or LLVM IR text) and returns the address of the function `symbol` it defines:
// load_object(compile_object(kind, source), symbol). Thread-safe (front ends run one at a time, see cpu_jit.cpp; code
// generation and loads concurrently). Throws std::runtime_error whose what() holds the compiler's diagnostics on
// failure. The returned code stays valid for the lifetime of the process (nothing is ever unloaded, nothing is cached
// here: install.cpp keeps object code on disk).
void* compile(SourceKind kind, const std::string& source, const std::string& symbol);

// The object code (a relocatable ELF object) clang and LLVM make of `source` for this machine. Throws like compile().
std::string compile_object(SourceKind kind, const std::string& source);

// Links object code made by compile_object (in this process, or in another whose object_key() was the same) into the
// JIT and returns the address of `symbol`. Every call gets its own JITDylib, so different objects may define the same
// symbol name. Throws std::runtime_error naming the symbol when it cannot be linked or is not defined.
void* load_object(const std::string& object, const std::string& symbol);

// What object code depends on besides its source: LLVM's version, the target triple, CPU and features, clang's cc1
// arguments, the IR pipeline and the code generator's options (a disk cache of objects keys its entries by it).
std::string object_key();

// Host assembly (AT&T) of the same source, for display. Throws like compile().
std::string assembly(SourceKind kind, const std::string& source);

// "x86-64 +avx2 +fma ..." style description of the target used, for logs.
std::string target_description();

}  // namespace ts::cpu
