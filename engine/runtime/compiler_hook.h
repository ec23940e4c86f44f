#pragma once
#include <functional>
#include <string>

namespace ts {

// Compiles kernel source to a callable entry. Installed by the executable (engine/runtime/cpu links LLVM,
// the engine library does not). lang: "c" or "llvm".
using CompileFn = std::function<void*(const std::string& lang, const std::string& src, const std::string& symbol)>;
CompileFn& compiler_hook();

}  // namespace ts
