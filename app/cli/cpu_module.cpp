// ts::cpu's compile / assembly / target_description for the executable: the JIT lives in a module loaded with its
// symbols local (see engine/runtime/cpu/jit_module.h), next to the executable.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <mutex>
#include <stdexcept>
#include <string>

#include "engine/runtime/cpu/jit_module.h"

namespace ts::cpu {

namespace {

const JitApi& api() {
  static const JitApi* a = nullptr;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string dir = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
    dir = dir.substr(0, dir.rfind('/') + 1);
    // next to the executable (tinyscope), or one folder up (the tests in build/tests)
    std::string path = dir + kJitModuleName;
    if (access(path.c_str(), R_OK) != 0 && access((dir + "../" + kJitModuleName).c_str(), R_OK) == 0) path = dir + "../" + kJitModuleName;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = std::string("the CPU compiler module cannot be loaded: ") + dlerror();
      return;
    }
    auto fn = reinterpret_cast<const JitApi* (*)()>(dlsym(h, kJitApiSymbol));
    if (!fn || fn()->version != kJitApiVersion) {
      error = "the CPU compiler module " + path + " is not this build's";
      return;
    }
    a = fn();
  });
  if (!a) throw std::runtime_error(error);
  return *a;
}

}  // namespace

void* compile(SourceKind kind, const std::string& source, const std::string& symbol) { return api().compile(kind, source, symbol); }
std::string assembly(SourceKind kind, const std::string& source) { return api().assembly(kind, source); }
std::string target_description() { return api().target_description(); }
std::string compile_object(SourceKind kind, const std::string& source) { return api().compile_object(kind, source); }
void* load_object(const std::string& object, const std::string& symbol) { return api().load_object(object, symbol); }
std::string object_key() { return api().object_key(); }

}  // namespace ts::cpu
