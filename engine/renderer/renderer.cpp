// The Renderer defaults.
#include "engine/renderer/renderer.h"

#include "engine/uop/error.h"

namespace ts {

void Renderer::render_tensor_core(ProgramSpec& spec, const TcLayout&) const {
  throw Error("kernel " + spec.name + ": tensor cores (the TC opt) are not rendered by " + name() + ", only as GLSL");
}

}  // namespace ts
