#pragma once
#include <string>
namespace tscli {
// `tinyscope bench`: the workload table, with ratios to this machine's limits measured in the same run (kept in the
// limits cache, limits_cache.h, for the Roofline pane); `bench --limits`: only the limits, into the cache.
int run_bench(int argc, char** argv);
// the GPU half (a VULKAN device): engine kernels beside hand-written shaders measured in the same run; with beam > 0
// the engine's rows run again under BEAM=beam (each kernel's search time shown)
// (`only`: just the workloads whose name holds it, e.g. "fp16" or "200")
int run_gpu_bench(const std::string& dev, bool quick, int beam, const std::string& only);
// `bench --limits --dev VULKAN`: only the hand-written limits (add and sum bandwidth, fp32 and fp16 matmul), written
// to the limits cache
int run_gpu_limits(const std::string& dev);
// the limits cache's machine of a VULKAN device: its name and driver (vulkan_machine), the device opened if it was not
std::string vulkan_machine_of(const std::string& dev);
}  // namespace tscli
