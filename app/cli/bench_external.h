#pragma once
// The figures `tinyscope bench` prints beside its own on a host device: the reference's CPU device (a tinygrad
// checkout given with --reference) and numpy, each timing the same workloads (same shapes, same fills) in a child
// Python process during the same bench run.
#include <map>
#include <string>
#include <vector>

namespace tscli {

// Every figure of the bench (its own rows, the reference's, numpy's) is the best of its timed runs after a first run
// and untimed warm-up runs for at least this long (and at least two): on this kind of shared virtual machine the same
// kernel ran 3.7 ms in its first passes over its input and 1.3 ms from about the fifth on.
inline constexpr double kWarmSeconds = 0.2;

struct ExternalFigures {
  std::string label;                    // what ran: "tinygrad at DIR (DEV=CPU)", "numpy 1.24.2"; empty when nothing ran
  std::string error;                    // why nothing ran (no such checkout, no numpy), else empty
  std::map<std::string, double> secs;   // workload name -> best time in seconds
  std::map<std::string, std::string> not_run;  // workload name -> why it has no figure
};

// The reference's kernels, best of `reps` after the warm-up: its own per-kernel times summed over the schedule
// (GlobalCounters.time_sum_s under DEBUG=2, which waits for each kernel), as this bench sums its kernels' times.
// `names` are the bench's workload names; ones the script does not know are reported in not_run.
ExternalFigures reference_figures(const std::string& tinygrad_dir, const std::vector<std::string>& names, int reps);
// numpy (python3 on PATH, else /usr/bin/python3), best of `reps` wall times of the same computation after the warm-up.
ExternalFigures numpy_figures(const std::vector<std::string>& names, int reps);

// TinyJit's figures, wall time realize to result: the script run by `python` (a command) with `env`. Names: "jit chain"
// and "scheduled chain" (seconds per kernel of 200 dependent small kernels), "mlp step first", "mlp step scheduled",
// "mlp step replayed" (seconds per step of a 2-layer MLP's forward, backward and Adam step).
ExternalFigures jit_figures(const std::string& env, const std::string& python, int reps, const std::string& label);
// the same in the reference (a tinygrad checkout, DEV=CPU)
ExternalFigures reference_jit_figures(const std::string& tinygrad_dir, int reps);

}  // namespace tscli
