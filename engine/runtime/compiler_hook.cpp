#include "engine/runtime/compiler_hook.h"

namespace ts {
CompileFn& compiler_hook() {
  static CompileFn f;
  return f;
}
}  // namespace ts
