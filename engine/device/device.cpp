#include "engine/device/device.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "engine/runtime/allocator.h"
#include "engine/runtime/compiler_hook.h"
#include "engine/runtime/program_runner.h"
#include "engine/uop/error.h"

namespace ts {

namespace {

std::mutex g_mu;
// memory name -> its device, as found (every buffer allocation and copy asks; registering a device clears it)
std::unordered_map<std::string, Device*>& memory_owners() {
  static auto* m = new std::unordered_map<std::string, Device*>();
  return *m;
}

std::vector<std::unique_ptr<Device>>& registry() {
  static auto* r = new std::vector<std::unique_ptr<Device>>();
  return *r;
}
std::vector<std::function<void()>>& providers() {
  static auto* p = new std::vector<std::function<void()>>();
  return *p;
}
// runs the pending providers (outside the lock: they register devices)
void run_providers() {
  std::vector<std::function<void()>> todo;
  {
    std::lock_guard lk(g_mu);
    todo.swap(providers());
  }
  for (auto& p : todo) p();
}
std::vector<std::pair<std::string, std::string>>& aliases() {
  static auto* a = new std::vector<std::pair<std::string, std::string>>();
  return *a;
}

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// ---- host devices -------------------------------------------------------------------------------

struct HostEntry : Executable {
  KernelEntry entry = nullptr;  // null: interpreted
};

double run_host(const ProgramSpec& spec, KernelEntry entry, std::span<Buffer* const> bufs, std::span<const int64_t> vars) {
  std::vector<void*> ptrs;
  for (Buffer* b : bufs) {
    if (!b->ptr && b->nbytes()) throw Error("kernel " + spec.name + ": a buffer on " + b->device + " is not in host memory");
    ptrs.push_back(b->ptr);
  }
  auto t0 = std::chrono::steady_clock::now();
  run_program(spec, entry, std::span<void*>(ptrs), vars);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU (C source) and CPU:LLVM (LLVM IR): compiled in-process by the JIT the executable installs (compiler_hook)
class CpuDevice final : public Device {
 public:
  // own_memory: a second CPU (the reference's CPU:1, CPU:2, ...) has a memory of its own, so its tensors are copied
  // to and from the CPU's by copy calls, as between two devices (its buffers are still host addressable)
  CpuDevice(std::string name, Lang lang, bool own_memory = false) : Device(std::move(name)), lang_(lang), own_memory_(own_memory) {}
  std::string memory() const override { return own_memory_ ? name() : "CPU"; }
  std::string renderer() const override { return lang_ == Lang::LLVM ? "LLVM" : "CLANG"; }
  Lang lang() const override { return lang_; }
  OptTarget opt_target() const override { return cpu_opt_target(); }
  std::vector<std::pair<std::string, std::string>> properties() const override {
    if (!compiler_hook()) return {{"compiler", "none: this build has no CPU JIT (its kernels cannot run here)"}};
    return {{"compiler", lang_ == Lang::LLVM ? "LLVM 16 ORC JIT of LLVM IR" : "clang 16 (in-process) of C99"},
            {"threads", std::to_string(num_cpu_threads())}};
  }
  std::shared_ptr<Executable> load(const ProgramSpec& spec) override {
    if (!compiler_hook()) throw Error("no compiler is installed for " + name() + " (this build has no CPU JIT)");
    auto e = std::make_shared<HostEntry>();
    e->entry = reinterpret_cast<KernelEntry>(compiler_hook()(spec.lang, spec.src, entry_symbol(spec)));
    return e;
  }
  double launch(const ProgramSpec& spec, Executable& exe, std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
    return run_host(spec, static_cast<HostEntry&>(exe).entry, bufs, vars);
  }

 private:
  Lang lang_;
  bool own_memory_;
};

// INTERP: the reference interpreter of linearized programs on the CPU's optimizer properties
class InterpDevice final : public Device {
 public:
  // the target is made when asked for (NUM_CPU_THREADS may be set after the devices are registered)
  InterpDevice(std::string name, OptTarget (*target)()) : Device(std::move(name)), target_(target) {}
  std::string renderer() const override { return "INTERP"; }
  Lang lang() const override { return Lang::INTERP; }
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

std::string join_names() {
  std::string list;
  for (const auto& d : registry()) list += (list.empty() ? "" : ", ") + d->name();
  return list;
}

Device* find_locked(const std::string& canon) {
  for (auto& d : registry())
    if (d->name() == canon) return d.get();
  return nullptr;
}

}  // namespace

// ---- Device defaults: host memory ---------------------------------------------------------------

std::shared_ptr<Buffer> Device::allocate(DType dt, int64_t size) { return allocate_buffer(memory(), dt, size); }

// the host devices' graph call: the kernels back to back on the host, each timed, in one call
namespace {
class HostGraph final : public Graph {
 public:
  explicit HostGraph(Device& dev) : dev_(dev) {}
  std::vector<double> run(const std::vector<GraphKernel>& kernels, bool) override {
    std::vector<double> times;
    times.reserve(kernels.size());
    for (const GraphKernel& k : kernels) times.push_back(dev_.launch(*k.spec, *k.exe, k.bufs, k.vars));
    return times;
  }

 private:
  Device& dev_;
};
}  // namespace
std::shared_ptr<Graph> Device::make_graph() { return std::make_shared<HostGraph>(*this); }

void Device::copy_in(Buffer& dst, const void* src, size_t bytes) {
  if (bytes > dst.nbytes()) throw Error("copy of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(dst.nbytes()));
  if (bytes) std::memcpy(dst.ptr, src, bytes);
}

void Device::copy_out(void* dst, const Buffer& src, size_t bytes) {
  if (bytes > src.nbytes()) throw Error("copy of " + std::to_string(bytes) + " bytes out of a buffer of " + std::to_string(src.nbytes()));
  if (bytes) std::memcpy(dst, src.ptr, bytes);
}

// ---- registry -----------------------------------------------------------------------------------

void register_device(std::unique_ptr<Device> d) {
  std::lock_guard lk(g_mu);
  // the first stays: compiled programs and buffers refer to their device for the process's life
  if (!find_locked(d->name())) registry().push_back(std::move(d));
  memory_owners().clear();
}

void register_device_alias(const std::string& alias, const std::string& name) {
  std::lock_guard lk(g_mu);
  aliases().emplace_back(upper(alias), name);
}

void register_device_provider(std::function<void()> provider) {
  std::lock_guard lk(g_mu);
  providers().push_back(std::move(provider));
}

std::vector<std::string> registered_device_names() {
  run_providers();
  std::lock_guard lk(g_mu);
  std::vector<std::string> out;
  for (auto& d : registry()) out.push_back(d->name());
  return out;
}

std::string canonical_device(const std::string& name) {
  std::string d = upper(name);
  if (d == "LLVM") d = "CPU:LLVM";
  for (int pass = 0; pass < 2; ++pass) {
    if (pass) run_providers();
    std::lock_guard lk(g_mu);
    if (find_locked(d)) return d;
    for (auto& [a, n] : aliases())
      if (a == d) return n;
    // "CPU:0" is "CPU", as in the reference ("VULKAN:0" is an alias where device 0 is the default)
    if (d.size() > 2 && d.compare(d.size() - 2, 2, ":0") == 0 && find_locked(d.substr(0, d.size() - 2))) return d.substr(0, d.size() - 2);
  }
  // CPU:N (N = 1..9999): another CPU with a memory of its own, made when first named (the reference's multi-device CPU)
  if (d.size() > 4 && d.size() <= 8 && d.compare(0, 4, "CPU:") == 0 && d[4] != '0' &&
      std::all_of(d.begin() + 4, d.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
    register_device(std::make_unique<CpuDevice>(d, Lang::C, true));
    return d;
  }
  std::lock_guard lk(g_mu);
  throw Error("unknown device '" + name + "': the devices are " + join_names());
}

Device& get_device(const std::string& name) {
  const std::string canon = canonical_device(name);
  std::lock_guard lk(g_mu);
  return *find_locked(canon);
}

Device& memory_device(const std::string& memory) {
  if (!is_host_memory(memory)) run_providers();
  std::lock_guard lk(g_mu);
  if (auto it = memory_owners().find(memory); it != memory_owners().end()) return *it->second;
  Device* found = nullptr;
  if (is_host_memory(memory) || memory.empty()) {
    for (auto& d : registry())
      if (!found && d->host_memory()) found = d.get();
    if (!found) throw Error("no host device is registered");
  } else {
    for (auto& d : registry())
      if (!found && d->memory() == memory) found = d.get();
    if (!found) throw Error("no device owns memory '" + memory + "': the devices are " + join_names());
  }
  memory_owners().emplace(memory, found);
  return *found;
}

void ensure_host_devices() {
  {
    std::lock_guard lk(g_mu);
    if (find_locked("CPU")) return;
  }
  register_host_devices();
}

void register_host_devices() {
  register_device(std::make_unique<CpuDevice>("CPU", Lang::C));
  register_device(std::make_unique<CpuDevice>("CPU:LLVM", Lang::LLVM));
  register_device(std::make_unique<InterpDevice>("INTERP", &cpu_opt_target));
  // the interpreter on the reference's generic GPU renderer properties (its DEV=PYTHON): the GPU path of codegen
  // (locals, group reductions, launch dims, barriers) run lane by lane on any machine
  register_device(std::make_unique<InterpDevice>("INTERP:GPU", &gpu_opt_target));
}

std::string describe_devices(bool json) {
  run_providers();
  std::lock_guard lk(g_mu);
  nlohmann::json arr = nlohmann::json::array();
  std::string text;
  for (auto& d : registry()) {
    const OptTarget t = d->opt_target();
    nlohmann::json j;
    j["name"] = d->name();
    j["memory"] = d->memory();
    j["renderer"] = d->renderer();
    j["has_local"] = t.has_local;
    j["has_threads"] = t.has_threads;
    j["has_shared"] = t.has_shared;
    j["global_max"] = t.global_max;
    j["local_max"] = t.local_max;
    j["shared_max"] = t.shared_max;
    if (!t.tensor_cores.empty()) j["tc_shared_max"] = t.tc_shared_limit();
    j["supports_float4"] = t.supports_float4;
    j["max_upcast"] = t.max_upcast;
    nlohmann::json dts = nlohmann::json::array();
    for (auto& n : d->dtypes()) dts.push_back(n);
    j["dtypes"] = dts.empty() ? nlohmann::json("all") : dts;
    nlohmann::json props = nlohmann::json::object();
    for (auto& [k, v] : d->properties()) props[k] = v;
    j["properties"] = props;
    arr.push_back(j);
    auto dims = [](const std::array<int64_t, 3>& v) {
      return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
    };
    text += d->name() + std::string(d->name().size() < 12 ? 12 - d->name().size() : 1, ' ') + "renderer " + d->renderer() +
            ", memory " + d->memory() + ", has_local " + (t.has_local ? "yes" : "no") + ", has_threads " + (t.has_threads ? "yes" : "no") +
            (t.has_local ? ", global_max " + dims(t.global_max) + ", local_max " + dims(t.local_max) + ", shared_max " + std::to_string(t.shared_max) +
                               (t.tensor_cores.empty() ? "" : " (tensor-core tiles " + std::to_string(t.tc_shared_limit()) + ")")
                         : ", threads " + std::to_string(t.global_max[0])) +
            "\n";
    for (auto& [k, v] : d->properties()) text += "            " + k + ": " + v + "\n";
  }
  return json ? arr.dump(2) + "\n" : text;
}

}  // namespace ts
