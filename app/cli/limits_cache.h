#pragma once
// The limits `tinyscope bench` measured, kept on disk between runs so a run's trace can carry them (the Roofline
// pane's roof): $XDG_CACHE_HOME/tinyscope/limits.json, else ~/.cache/tinyscope/limits.json. One entry per device and
// machine (the CPU model and its logical CPUs, or the Vulkan device and its driver), with the date it was measured and
// what each figure measured. Plain C++ and nlohmann::json: no engine, no Qt.
//
//   {"version": 1, "entries": [{"device": "CPU", "machine": "...", "measured_at": "2025-01-31T12:00:00Z",
//     "bandwidth_gbs": 11.2, "bandwidth_label": "add bandwidth GB/s (...)",
//     "peak_gflops": 96.1, "peak_label": "FMA peak GFLOP/s fp32 (...)",
//     "figures": [{"name": "read bandwidth", "value": 13.4, "unit": "GB/s", "label": "..."}, ...]}]}
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tscli {

struct LimitFigure {
  std::string name;   // "read bandwidth"
  double value = 0;
  std::string unit;   // "GB/s", "GFLOP/s"
  std::string label;  // what it measured
  bool operator==(const LimitFigure&) const = default;
};

struct MeasuredLimits {
  std::string device;       // what the figures are for: "CPU" (CPU and CPU:LLVM) or "VULKAN" (VULKAN, VULKAN:N)
  std::string machine;      // what they were measured on (cpu_machine(), vulkan_machine())
  std::string measured_at;  // UTC, ISO 8601 ("2025-01-31T12:00:00Z")
  double bandwidth_gbs = 0;  // the roof's slope: memory bandwidth, GB/s
  std::string bandwidth_label;
  double peak_gflops = 0;    // the roof's flat part: compute, GFLOP/s
  std::string peak_label;
  std::vector<LimitFigure> figures;  // every other figure measured beside them
  bool operator==(const MeasuredLimits&) const = default;
};

// $XDG_CACHE_HOME/tinyscope, else ~/.cache/tinyscope (compiled shaders, pipelines, BEAM's opts, the limits); "" when
// neither is set: no disk cache
std::string cache_dir();
// cache_dir()/limits.json; "" when there is no cache directory
std::string limits_cache_path();
// the cache key of a canonical device name: "CPU" for CPU and CPU:LLVM (the same JIT on the same cores), "VULKAN"
// for VULKAN and VULKAN:N (the machine tells the devices apart); "" for a device whose limits are not measured
// (INTERP interprets its kernels)
std::string limits_device_key(const std::string& device);
// this machine's CPU: the model name /proc/cpuinfo gives and the logical CPUs ("Intel(R) Xeon(R) ..., 8 logical CPUs")
std::string cpu_machine();
// a Vulkan device: its name, driver and driver version ("NVIDIA H200 (NVIDIA 550.54.15, driver 550.54.15)")
std::string vulkan_machine(const std::string& name, const std::string& driver_name, const std::string& driver_info,
                           const std::string& driver_version);
// now, UTC, ISO 8601
std::string utc_now();

// The entry for (device, machine) in the cache at `path`, if there is one whose figures are all there (a missing
// file, a corrupt one or an entry with a bad figure is none: nothing is made up).
std::optional<MeasuredLimits> read_limits(const std::string& path, const std::string& device, const std::string& machine);
// Writes `l` into the cache at `path`, replacing the entry of the same device and machine and keeping the others (a
// corrupt cache is replaced); the directories are made, and the file is written whole, then renamed into place.
// Throws std::runtime_error naming the path when it cannot be written.
void write_limits(const std::string& path, const MeasuredLimits& l);

// the trace's top-level "limits": {device, machine, measured_at, bandwidth_gbs, bandwidth_label, peak_gflops, peak_label}
nlohmann::json limits_trace_json(const MeasuredLimits& l);
// "CPU (Intel ..., 2 logical CPUs): bandwidth 11.2 GB/s, peak 96.1 GFLOP/s, measured 2025-01-31T12:00:00Z"
std::string limits_summary(const MeasuredLimits& l);

}  // namespace tscli
