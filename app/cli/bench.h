#pragma once
#include <string>
namespace tscli {
// `tinyscope bench`: the workload table, with ratios to this machine's limits measured in the same run.
int run_bench(int argc, char** argv);
// the GPU half (a VULKAN device): engine kernels beside hand-written shaders measured in the same run
int run_gpu_bench(const std::string& dev, bool quick);
}  // namespace tscli
