// The CPU backend's devices: CPU (C, the reference's CLANG renderer) and CPU:LLVM (LLVM IR), compiled in-process by
// the JIT the executable installs (compiler_hook); CPU:N, another CPU with a memory of its own, made when first named.
#include <algorithm>
#include <cctype>

#include "engine/device/device.h"
#include "engine/renderer/c_renderer.h"
#include "engine/renderer/llvm_renderer.h"
#include "engine/runtime/compiler_hook.h"
#include "engine/runtime/program_runner.h"
#include "engine/uop/error.h"

namespace ts {

namespace {

class CpuDevice final : public Device {
 public:
  // own_memory: a second CPU (the reference's CPU:1, CPU:2, ...) has a memory of its own, so its tensors are copied
  // to and from the CPU's by copy calls, as between two devices (its buffers are still host addressable)
  // compiler: what makes machine code of the renderer's source, as `tinyscope devices` says it
  CpuDevice(std::string name, const Renderer& renderer, std::string compiler, bool own_memory = false)
      : Device(std::move(name)), renderer_(renderer), compiler_(std::move(compiler)), own_memory_(own_memory) {}
  std::string memory() const override { return own_memory_ ? name() : "CPU"; }
  const Renderer& renderer() const override { return renderer_; }
  OptTarget opt_target() const override { return cpu_opt_target(); }
  std::vector<std::pair<std::string, std::string>> properties() const override {
    if (!compiler_hook()) return {{"compiler", "none: this build has no CPU JIT (its kernels cannot run here)"}};
    return {{"compiler", compiler_},
            {"threads", std::to_string(num_cpu_threads())}};
  }
  std::shared_ptr<Executable> load(const ProgramSpec& spec) override {
    if (!compiler_hook()) throw Error("no compiler is installed for " + name() + " (this build has no CPU JIT)");
    auto e = std::make_shared<HostEntry>();
    e->entry = reinterpret_cast<KernelEntry>(compiler_hook()(spec.lang, spec.src, entry_symbol(spec)));
    return e;
  }
  // kernels compile on workers while the next ones are lowered (the JIT's front ends run one at a time, cpu_jit.cpp's
  // frontend_mutex; code generation and loads on any thread at once)
  bool concurrent_loads() const override { return true; }
  double launch(const ProgramSpec& spec, Executable& exe, std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
    return run_host(spec, static_cast<HostEntry&>(exe).entry, bufs, vars);
  }

 private:
  const Renderer& renderer_;
  std::string compiler_;
  bool own_memory_;
};

// CPU:N (N = 1..9999)
bool another_cpu(const std::string& d) {
  return d.size() > 4 && d.size() <= 8 && d.compare(0, 4, "CPU:") == 0 && d[4] != '0' &&
         std::all_of(d.begin() + 4, d.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
}

constexpr const char* kClang = "clang 16 (in-process) of C99";

}  // namespace

void register_cpu_devices() {
  register_device(std::make_unique<CpuDevice>("CPU", clang_renderer(), kClang));
  register_device(std::make_unique<CpuDevice>("CPU:LLVM", llvm_renderer(), "LLVM 16 ORC JIT of LLVM IR"));
  register_device_alias("LLVM", "CPU:LLVM");
  register_device_factory([](const std::string& d) {
    if (!another_cpu(d)) return false;
    register_device(std::make_unique<CpuDevice>(d, clang_renderer(), kClang, true));
    return true;
  });
}

}  // namespace ts
