#include "engine/runtime/compiler_hook.h"
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/runtime/cpu/install.h"

#include <exception>

namespace ts::cpu {
void install() {
  compiler_hook() = [](const std::string& lang, const std::string& src, const std::string& symbol) {
    return compile(lang == "llvm" ? SourceKind::LlvmIr : SourceKind::C, src, symbol);
  };
}

void warm_up() {
  try {
    compile(SourceKind::C, "int tinyscope_warm_up(void) { return 1; }", "tinyscope_warm_up");
  } catch (const std::exception&) {
    // the first real kernel reports the problem
  }
}
}  // namespace ts::cpu
