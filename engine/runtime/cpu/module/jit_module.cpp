// The CPU JIT module's export (see jit_module.h).
#include "engine/runtime/cpu/jit_module.h"

extern "C" __attribute__((visibility("default"))) const ts::cpu::JitApi* tinyscope_cpu_jit_api() {
  static const ts::cpu::JitApi api{ts::cpu::kJitApiVersion, &ts::cpu::compile, &ts::cpu::assembly, &ts::cpu::target_description,
                                     &ts::cpu::compile_object,   &ts::cpu::load_object, &ts::cpu::object_key};
  return &api;
}
