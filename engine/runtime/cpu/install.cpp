#include "engine/runtime/compiler_hook.h"
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/runtime/cpu/install.h"

namespace ts::cpu {
void install() {
  compiler_hook() = [](const std::string& lang, const std::string& src, const std::string& symbol) {
    return compile(lang == "llvm" ? SourceKind::LlvmIr : SourceKind::C, src, symbol);
  };
}
}  // namespace ts::cpu
