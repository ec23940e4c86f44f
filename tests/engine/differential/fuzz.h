#pragma once
// The random-program fuzzer: seeded Tensor programs (elementwise ALU ops of every dtype, casts and bitcasts,
// reductions, movement ops, matmul, cumsum, where/compare, realize boundaries) built through the C++ Tensor API,
// each with the tinygrad Python source that builds the same program (print it, save it, run it with
// `tinyscope run` or with tinygrad). run_program() runs one program on INTERP, CPU and CPU:LLVM and compares the
// results: ints and bools bitwise, floats within a few ULPs of their dtype (NaN equals NaN).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/tensor/tensor.h"

namespace ts::fuzz {

struct Program {
  uint32_t seed = 0;
  std::string source;        // tinygrad Python that computes the same outputs and prints them
  std::vector<Tensor> outs;  // the outputs (built for the device realize_config() names)
  int ops = 0;               // operations in the program
  std::vector<double> tols;  // per output: the loosest float tolerance its computation passed through
  // the program as a python function of its inputs, `def pSEED(t0, ..., MV=None)` (MV: a device its second half
  // runs on), registered as PROGRAMS.append((SEED, pSEED, [(shape, dtype), ...], [four sets of input lists], tols,
  // aliases)): the first set the program's own values, three more for TinyJit's replays; aliases: per output whether
  // it is a view of an input, which no kernel computes (fuzz_variants.py runs them)
  std::string python_def;
};

// Builds the program of `seed` for the current realize_config().device (the same program for every device).
Program build(uint32_t seed);

struct Outcome {
  bool ok = true;
  std::string what;  // why it failed: the device, the output and element, both values; or the error
};

// Runs the program of `seed` on INTERP (the oracle), CPU and CPU:LLVM and compares every output.
Outcome run_program(uint32_t seed);

// Sets up the engine once per process (CPU JIT, realize hooks, DEBUG off).
void init();

// Programs are built and realized on dev from here on (its tensors in its memory).
void use_device(const std::string& dev);

}  // namespace ts::fuzz
