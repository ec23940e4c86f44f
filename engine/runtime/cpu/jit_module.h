#pragma once
// The CPU JIT as a module the executable loads at run time with its symbols kept local (dlopen RTLD_LOCAL): clang's
// library exports LLVM template instances without symbol versions, and in the global scope they would replace those
// of the LLVM that Mesa's lavapipe (a Vulkan driver) links, which then crashes. jit_module.cpp is the module's one
// export; app/cli/cpu_module.cpp loads it and implements ts::cpu's functions by calling through this table.
#include <string>

#include "engine/runtime/cpu/cpu_jit.h"

namespace ts::cpu {

struct JitApi {
  int version;
  void* (*compile)(SourceKind kind, const std::string& source, const std::string& symbol);
  std::string (*assembly)(SourceKind kind, const std::string& source);
  std::string (*target_description)();
  std::string (*compile_object)(SourceKind kind, const std::string& source);
  void* (*load_object)(const std::string& object, const std::string& symbol);
  std::string (*object_key)();
};
constexpr int kJitApiVersion = 2;
constexpr const char* kJitModuleName = "libtinyscope_cpu_jit.so";
constexpr const char* kJitApiSymbol = "tinyscope_cpu_jit_api";

}  // namespace ts::cpu
