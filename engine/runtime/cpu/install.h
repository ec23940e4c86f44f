#pragma once
#include <string>

namespace ts::cpu {
// Makes DEV=CPU and DEV=CPU:LLVM compile through the in-process JIT. With a `cache_dir`, the object code of every
// kernel is kept in cache_dir/cpu (a DiskCache: HASH.o, keyed by the language, the entry symbol, the JIT's
// object_key() and the source), and a kernel compiled before, by this process or another, is linked from there
// without clang or LLVM's code generator.
void install(const std::string& cache_dir = {});
// Initialises the JIT and clang now (one trivial compile) instead of at the first kernel.
void warm_up();
}
