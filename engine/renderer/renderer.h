#pragma once
// A Renderer: what a device's programs are written in. Codegen (engine/codegen/to_program.h) runs the common passes,
// asks the device's renderer for its own (the passes it lists), and hands it the linearized program to render. Each
// device owns one (Device::renderer()); nothing outside a renderer asks which language it is.
#include <string>

#include "engine/codegen/program.h"

namespace ts {

struct OptTarget;
struct TcLayout;

class Renderer {
 public:
  virtual ~Renderer() = default;
  // its name, as the reference's renderer class and `tinyscope devices` say it: "CLANG", "LLVM", "GLSL", "INTERP"
  virtual std::string name() const = 0;
  // the language of ProgramSpec::src, as the trace and `tinyscope asm --lang` name it: "c", "llvm", "glsl", "interp"
  virtual std::string lang() const = 0;
  // the renderer's own passes over the lowered kernel, run after "final symbolic" (each a traced pass)
  virtual UOpRef lowered_passes(const UOpRef& sink, const OptTarget& target) const { return sink; }
  // the renderer's own passes over the linearized program (the LINEAR it renders), each a traced pass
  virtual UOpRef linear_passes(const UOpRef& linear, const OptTarget&) const { return linear; }
  // whether EXP2/LOG2 become polynomials first ("transcendental decompositions"): a language without fast ones
  virtual bool decomposes_transcendentals() const { return false; }
  // which of EXP2, LOG2 and SIN that pass decomposes: those the language lacks, or computes slowly or imprecisely (by
  // default EXP2 and LOG2 when decomposes_transcendentals())
  // (float64: EXP2, LOG2, SIN and POW of float64 all decomposed, for a language without float64 builtins for them)
  struct Transcendentals {
    bool exp2 = false, log2 = false, sin = false, float64 = false;
  };
  virtual Transcendentals decomposed_transcendentals() const { return {decomposes_transcendentals(), decomposes_transcendentals(), false}; }
  // spec.src (and spec.source_lines: which UOp each line renders) for the linearized spec.lowered
  virtual void render(ProgramSpec& spec) const = 0;
  // spec.src for a kernel under the TC opt (engine/codegen/tensor_core.h); a renderer without tensor cores throws
  virtual void render_tensor_core(ProgramSpec& spec, const TcLayout& layout) const;
};

}  // namespace ts
