// The interpreter backend: INTERP (the CPU's optimizer properties) and INTERP:GPU (the reference's generic GPU renderer
// properties, its DEV=PYTHON: the GPU path of codegen run lane by lane on any machine). Its "source" is the printed
// instruction list; the interpreter runs the linearized program itself, every access bounds-checked.
#include "engine/runtime/interp/interp_device.h"

#include "engine/codegen/linearize.h"
#include "engine/device/device.h"
#include "engine/runtime/program_runner.h"

namespace ts {

namespace {

class InterpRenderer final : public Renderer {
 public:
  std::string name() const override { return "INTERP"; }
  std::string lang() const override { return "interp"; }
  void render(ProgramSpec& spec) const override {
    spec.src = print_linear(spec.lowered);
    for (size_t i = 0; i < spec.lowered->src.size(); ++i) spec.source_lines.emplace_back(static_cast<int>(i) + 1, spec.lowered->src[i]);
  }
};

class InterpDevice final : public Device {
 public:
  // the target is made when asked for (NUM_CPU_THREADS may be set after the devices are registered)
  InterpDevice(std::string name, OptTarget (*target)()) : Device(std::move(name)), target_(target) {}
  const Renderer& renderer() const override { return interp_renderer(); }
  OptTarget opt_target() const override { return target_(); }
  std::string compiler_key() const override { return name(); }
  std::vector<std::pair<std::string, std::string>> properties() const override {
    return {{"compiler", "none: the linearized program is interpreted, every access bounds-checked"}};
  }
  std::shared_ptr<Executable> load(const ProgramSpec&) override { return std::make_shared<HostEntry>(); }
  double launch(const ProgramSpec& spec, Executable&, std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
    return run_host(spec, nullptr, bufs, vars);
  }

 private:
  OptTarget (*target_)();
};

}  // namespace

const Renderer& interp_renderer() {
  static const InterpRenderer r;
  return r;
}

void register_interp_devices() {
  register_device(std::make_unique<InterpDevice>("INTERP", &cpu_opt_target));
  register_device(std::make_unique<InterpDevice>("INTERP:GPU", &gpu_opt_target));
}

}  // namespace ts
