#include "app/cli/limits_cache.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace tscli {

using json = nlohmann::json;

namespace {
constexpr int kCacheVersion = 1;

bool is_text(const json& o, const char* key) { return o.contains(key) && o[key].is_string(); }
bool is_figure(const json& o, const char* key) {
  return o.contains(key) && o[key].is_number() && std::isfinite(o[key].get<double>()) && o[key].get<double>() > 0;
}

// an entry of the cache, or none when any of its fields is missing or wrong
std::optional<MeasuredLimits> entry_of(const json& e) {
  if (!e.is_object()) return std::nullopt;
  for (const char* k : {"device", "machine", "measured_at", "bandwidth_label", "peak_label"})
    if (!is_text(e, k)) return std::nullopt;
  if (!is_figure(e, "bandwidth_gbs") || !is_figure(e, "peak_gflops")) return std::nullopt;
  MeasuredLimits l;
  l.device = e["device"];
  l.machine = e["machine"];
  l.measured_at = e["measured_at"];
  l.bandwidth_gbs = e["bandwidth_gbs"];
  l.bandwidth_label = e["bandwidth_label"];
  l.peak_gflops = e["peak_gflops"];
  l.peak_label = e["peak_label"];
  if (e.contains("figures") && e["figures"].is_array())
    for (const json& f : e["figures"])
      if (f.is_object() && is_text(f, "name") && is_figure(f, "value") && is_text(f, "unit") && is_text(f, "label"))
        l.figures.push_back({f["name"], f["value"], f["unit"], f["label"]});
  return l;
}

json entry_json(const MeasuredLimits& l) {
  json figures = json::array();
  for (const LimitFigure& f : l.figures) figures.push_back({{"name", f.name}, {"value", f.value}, {"unit", f.unit}, {"label", f.label}});
  json j = limits_trace_json(l);
  j["figures"] = std::move(figures);
  return j;
}

// the cache's entries (none for a missing or corrupt file)
json read_entries(const std::string& path) {
  std::ifstream f(path);
  if (!f) return json::array();
  json doc = json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || doc.value("version", 0) != kCacheVersion || !doc.contains("entries") || !doc["entries"].is_array())
    return json::array();
  return doc["entries"];
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}
}  // namespace

std::string cache_dir() {
  if (const char* c = std::getenv("XDG_CACHE_HOME"); c && *c) return std::string(c) + "/tinyscope";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tinyscope";
  return {};
}

std::string limits_cache_path() {
  const std::string dir = cache_dir();
  return dir.empty() ? dir : dir + "/limits.json";
}

std::string limits_device_key(const std::string& device) {
  if (device == "CPU" || device == "CPU:LLVM") return "CPU";
  if (device == "VULKAN" || device.rfind("VULKAN:", 0) == 0) return "VULKAN";
  return {};
}

std::string cpu_machine() {
  std::string model;
  if (std::ifstream f("/proc/cpuinfo"); f) {
    // x86 says "model name"; other architectures "Model", "cpu model" or "Hardware"
    for (std::string line; std::getline(f, line) && model.empty();) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string key = trim(line.substr(0, colon));
      if (key == "model name" || key == "Model" || key == "cpu model" || key == "Hardware") model = trim(line.substr(colon + 1));
    }
  }
  if (model.empty()) model = "unknown CPU";
  const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  return model + ", " + std::to_string(n) + (n == 1 ? " logical CPU" : " logical CPUs");
}

std::string vulkan_machine(const std::string& name, const std::string& driver_name, const std::string& driver_info,
                           const std::string& driver_version) {
  std::string driver = trim(driver_name + " " + driver_info);
  return name + " (" + (driver.empty() ? std::string("driver") : driver) + ", driver " + driver_version + ")";
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<MeasuredLimits> read_limits(const std::string& path, const std::string& device, const std::string& machine) {
  if (path.empty() || device.empty()) return std::nullopt;
  for (const json& e : read_entries(path)) {
    std::optional<MeasuredLimits> l = entry_of(e);
    if (l && l->device == device && l->machine == machine) return l;
  }
  return std::nullopt;
}

void write_limits(const std::string& path, const MeasuredLimits& l) {
  if (path.empty()) throw std::runtime_error("no cache directory for the limits (neither XDG_CACHE_HOME nor HOME is set)");
  json entries = json::array();
  for (const json& e : read_entries(path)) {
    std::optional<MeasuredLimits> old = entry_of(e);
    if (old && !(old->device == l.device && old->machine == l.machine)) entries.push_back(e);
  }
  entries.push_back(entry_json(l));
  const json doc = {{"version", kCacheVersion}, {"entries", entries}};
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    f << doc.dump(1) << "\n";
    if (!f) {
      std::filesystem::remove(tmp, ec);
      throw std::runtime_error("cannot write the limits cache " + path);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot write the limits cache " + path);
  }
}

json limits_trace_json(const MeasuredLimits& l) {
  return {{"device", l.device},
          {"machine", l.machine},
          {"measured_at", l.measured_at},
          {"bandwidth_gbs", l.bandwidth_gbs},
          {"bandwidth_label", l.bandwidth_label},
          {"peak_gflops", l.peak_gflops},
          {"peak_label", l.peak_label}};
}

std::string limits_summary(const MeasuredLimits& l) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "bandwidth %.1f GB/s, peak %.1f GFLOP/s", l.bandwidth_gbs, l.peak_gflops);
  return l.device + " (" + l.machine + "): " + buf + ", measured " + l.measured_at;
}

}  // namespace tscli
