#pragma once
#include <string>
namespace tscli {
// `tinyscope bench`: the workload table, with ratios to this machine's limits measured in the same run.
int run_bench(int argc, char** argv);
// the GPU half (a VULKAN device): engine kernels beside hand-written shaders measured in the same run; with beam > 0
// the engine's rows run again under BEAM=beam (each kernel's search time shown)
// (`only`: just the workloads whose name holds it, e.g. "fp16" or "200")
int run_gpu_bench(const std::string& dev, bool quick, int beam, const std::string& only);
}  // namespace tscli
