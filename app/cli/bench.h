#pragma once
namespace tscli {
// `tinyscope bench`: the workload table, with ratios to this machine's limits measured in the same run.
int run_bench(int argc, char** argv);
}  // namespace tscli
