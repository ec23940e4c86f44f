#pragma once
// VULKAN devices for the device registry (engine/device): GLSL rendered by the C-style renderer, compiled to SPIR-V by
// glslang, run through the Vulkan runtime (vulkan.h) with device-local buffers and timestamp queries.
#include <memory>
#include <string>

namespace ts::vk {

class Context;

struct DeviceOptions {
  bool validation = false;     // the Khronos validation layer (tests)
  std::string cache_dir;       // SPIR-V and pipeline disk cache; empty: memory only
  double timeout_s = 300;      // a kernel or copy that does not finish in this time is an error naming it
  // the default device opened this many more times as devices of their own (VULKAN:n, VULKAN:n+1, ... after the n
  // physical ones; TINYSCOPE_VK_LOGICAL): multi-device programs (shards, transfers) on a machine with one GPU
  int logical_devices = 0;
  int lose_device_at_wait = 0;  // a testing hook: OpenOptions::lose_device_at_wait (TINYSCOPE_VK_FAULT)
};

// Registers "VULKAN" (the default device: the first discrete one, else the first) and "VULKAN:N" for every other
// device, with "VULKAN:k" an alias of "VULKAN" for the default k, then options.logical_devices more logical devices of
// the default one. Opens nothing yet (a device's Context is created at
// its first use). Returns the number of devices; *reason says why there are none.
int register_vulkan_devices(const DeviceOptions& options, std::string* reason = nullptr);

// Validation messages counted so far on every opened VULKAN device (errors + warnings), and their last texts.
uint64_t validation_message_count(std::string* last = nullptr);

// The Context a registered VULKAN device runs on (opened now if it was not yet), for programs written by hand beside
// the engine's (the bench's limits). An Error when `device` is not a VULKAN device.
std::shared_ptr<Context> device_context(const std::string& device);

// The SPIR-V disassembly of a GLSL compute shader (for the Source pane's Assembly view).
std::string glsl_assembly(const std::string& glsl, const std::string& name);

}  // namespace ts::vk
