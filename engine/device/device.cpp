#include "engine/device/device.h"

#include <cctype>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "engine/runtime/allocator.h"
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
std::vector<std::function<bool(const std::string&)>>& factories() {
  static auto* f = new std::vector<std::function<bool(const std::string&)>>();
  return *f;
}
std::vector<std::pair<std::string, std::string>>& aliases() {
  static auto* a = new std::vector<std::pair<std::string, std::string>>();
  return *a;
}

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

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

void register_device_factory(std::function<bool(const std::string&)> factory) {
  std::lock_guard lk(g_mu);
  factories().push_back(std::move(factory));
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
  const std::string d = upper(name);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass) run_providers();
    std::lock_guard lk(g_mu);
    if (find_locked(d)) return d;
    for (auto& [a, n] : aliases())
      if (a == d) return n;
    // "CPU:0" is "CPU", as in the reference ("VULKAN:0" is an alias where device 0 is the default)
    if (d.size() > 2 && d.compare(d.size() - 2, 2, ":0") == 0 && find_locked(d.substr(0, d.size() - 2))) return d.substr(0, d.size() - 2);
  }
  // a device a backend makes when first named (CPU:N)
  std::vector<std::function<bool(const std::string&)>> makers;
  {
    std::lock_guard lk(g_mu);
    makers = factories();
  }
  for (auto& make : makers)
    if (make(d)) return d;
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
    j["renderer"] = d->renderer().name();
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
    text += d->name() + std::string(d->name().size() < 12 ? 12 - d->name().size() : 1, ' ') + "renderer " + d->renderer().name() +
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
