#include "engine/runtime/cpu/install.h"

#include <exception>
#include <memory>
#include <mutex>

#include "engine/runtime/compiler_hook.h"
#include "engine/runtime/cpu/cpu_jit.h"
#include "engine/runtime/disk_cache.h"

namespace ts::cpu {
namespace {

// 01: the first format of object entries (disk_cache.h's layout)
constexpr const char* kObjectMagic = "TSOBJ01\n";

// the JIT's object_key(), asked once (it is the same for the whole process)
const std::string& jit_key() {
  static std::once_flag once;
  static std::string key;
  std::call_once(once, [] { key = object_key(); });
  return key;
}

void* compile_cached(DiskCache& cache, const std::string& lang, const std::string& src, const std::string& symbol) {
  const SourceKind kind = lang == "llvm" ? SourceKind::LlvmIr : SourceKind::C;
  const std::string key = jit_key() + "\nlanguage " + lang + "\nsymbol " + symbol + "\nsource\n" + src;
  if (std::optional<std::string> object = cache.get(key)) {
    try {
      return load_object(*object, symbol);
    } catch (const std::exception&) {
      // an object that does not link here is compiled again below (and its entry rewritten)
    }
  }
  const std::string object = compile_object(kind, src);
  void* entry = load_object(object, symbol);  // kept only once it links and defines the symbol
  cache.put(key, object);                     // a failure is counted for the note at the process's end
  return entry;
}

}  // namespace

void install(const std::string& cache_dir) {
  std::shared_ptr<DiskCache> cache;
  if (!cache_dir.empty()) cache = std::make_shared<DiskCache>(cache_dir + "/cpu", ".o", kObjectMagic, "the CPU kernel cache entry");
  compiler_hook() = [cache](const std::string& lang, const std::string& src, const std::string& symbol) {
    if (cache) return compile_cached(*cache, lang, src, symbol);
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
