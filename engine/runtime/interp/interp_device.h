#pragma once
// The interpreter's renderer: no source, the printed instruction list (the interpreter runs ProgramSpec.lowered).
#include "engine/renderer/renderer.h"

namespace ts {

const Renderer& interp_renderer();

}  // namespace ts
