#pragma once
namespace ts::cpu {
// Makes DEV=CPU and DEV=CPU:LLVM compile through the in-process JIT.
void install();
}
