#pragma once
namespace ts::cpu {
// Makes DEV=CPU and DEV=CPU:LLVM compile through the in-process JIT.
void install();
// Initialises the JIT and clang now (one trivial compile) instead of at the first kernel.
void warm_up();
}
