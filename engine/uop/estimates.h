#pragma once

namespace ts {

// A kernel's estimated work (codegen's estimate() over its linearized program; a copy's bytes for a copy): what a
// program, a call and the trace report.
struct Estimates {
  double ops = 0, lds = 0, mem = 0;
};

}  // namespace ts
