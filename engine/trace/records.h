#pragma once
// What the engine hands the trace: plain records that realize fills from its schedules, programs, calls, BEAM searches
// and reads, and the recorder (recorder.h) writes as JSON. The trace is a leaf of the engine: it includes nothing of
// it but engine/uop (it interns UOp graphs) and itself (tests/engine/trace/test_trace_leaf.cpp keeps it so).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/uop/estimates.h"
#include "engine/uop/uop.h"

namespace ts::trace {

// What a device's compiler reports of a program's machine code, as it names each figure: a Vulkan driver's pipeline
// statistics ("Register Count", "Shared Memory Size", ...). Empty where the compiler reports nothing.
using ProgramStatistics = std::vector<std::pair<std::string, std::string>>;

// One executed CALL, as the DEBUG=2 line reports it (realize fills it; its call log keeps the latest ones).
struct CallRecord {
  std::string kind;          // "kernel" | "copy"
  std::string name;          // "E_4" / "copy       16 B,     CPU <- PYTHON" (no colors)
  std::string colored_name;
  std::string device;
  int counter = 0;           // the *** counter
  int num_args = 0;
  std::vector<std::pair<int64_t, std::string>> arg_sizes;  // [elements, dtype name] per arg, output first
  std::array<int64_t, 3> global_size{1, 1, 1};
  std::vector<std::string> applied_opts;
  bool first_run = false;
  std::string program_key;   // equal keys = same compiled program
  double seconds = 0;
  // seconds is the kernel's own time; false when nothing asked for it (RealizeConfig::time_kernels off, on a device
  // that batches): the kernel then ran without timestamps and seconds is its share of the batch's wall time
  bool timed = true;
  std::vector<double> repeat_seconds;  // every timing of a kernel run several times (RealizeConfig::repeat), first included
  // how the repeats ran: "rerun" (the kernel reads nothing it writes), "restored" (it writes memory it reads: each
  // repeat ran on a copy of the inputs the first run saw, so no buffer changes); empty when it ran once
  std::string repeat_mode;
  Estimates estimates;
  int schedule_index = 0;    // which realize (linear) this call belongs to; a TinyJit replay's: the captured LINEAR's
  int run = 0;               // which run of a LINEAR in this process (the calls of one TinyJit replay share it)
  bool jit = false;          // run by a TinyJit replay (DEBUG=2 prints its header in magenta, as the reference)
  int graph = 0;             // > 0: run inside graph call number `graph` of this process, with the others that share it
  // when the host launched it (a batch's kernels: when the batch was submitted; a graph's: when the graph started), in
  // clock_seconds() (recorder.h); < 0: not stamped (nothing records calls). The recorder derives the call's "start".
  double launched = -1;
  std::vector<uint64_t> writes, reads;  // the BUFFER uop ids it writes and reads (empty when not stamped)
  std::shared_ptr<const ProgramStatistics> statistics;  // a kernel's: what its device's compiler reported (null: nothing)
};

// A buffer of a call allocated or freed by the runtime (realize's buffers on their devices; not the script's host data).
struct MemoryEvent {
  bool alloc = true;    // false: freed (its storage went back to the allocator)
  std::string device;   // the memory it lives in ("CPU", "VULKAN")
  uint64_t bytes = 0;
  uint64_t buffer = 0;  // the BUFFER uop's id (as a call's "writes"/"reads" and a LINEAR's "bufs" name it)
  double t = 0;         // clock_seconds() when it happened
};

// One CALL of a LINEAR: a kernel (its AST) or a copy, with its buffers in PARAM slot order (the schedule's item,
// engine/schedule/schedule.h, and what the trace keeps of it).
struct ScheduleItem {
  enum class Kind { Kernel, Copy };
  Kind kind = Kind::Kernel;
  UOpRef ast;       // Kernel: SINK[KernelInfo] (see engine/codegen/program.h)
  UOps bufs;        // BUFFER nodes; Copy: {dst, src}
  UOpRef computes;  // provenance: the tensor-graph node whose value this call produces (null for intermediates)
};


// A kernel after codegen, as the trace keeps it: the part of codegen's ProgramSpec (engine/codegen/program.h, which
// extends it) that the trace records.
struct ProgramRecord {
  std::string name;          // "r_8_16_2_4_4_16_4" (no colors)
  std::string colored_name;  // with ANSI colors as the reference prints it
  std::string function_name; // C identifier
  std::vector<std::string> applied_opts;  // "Opt(op=OptOps.UPCAST, axis=0, arg=4)"
  // where the opts came from, for the people reading them: "hand-coded heuristics", "none (NOOPT=1)", "BEAM=2 search:
  // 225 candidates timed in 44.2 s, 18.86 ms with the default opts -> 4.11 ms", "BEAM=2, from the cache"
  std::string opts_source;
  std::string src;           // rendered source for the chosen renderer (C, LLVM IR or GLSL; INTERP: the printed program)
  std::string lang;          // "c" | "llvm" | "interp" | "glsl"
  std::vector<int> outs, ins;
  // launch dims (see "GPU programs" in program.h): work-groups per dim, lanes per work-group (unset on the CPU path);
  // a symbolic dim holds its largest value here, launch_dims() evaluates it for the Variables' values
  std::array<int64_t, 3> global_size{1, 1, 1};
  std::optional<std::array<int64_t, 3>> local_size;
  int threads = 1;           // CPU THREAD axis (core_id 0..threads-1)
  Estimates estimates;
  UOpRef ast;                // the kernel AST it came from
  // which UOp of the final linearized program each line of src renders ({1-based line, uop}, in line order); lines no
  // UOp wrote (the signature, the entry) are absent, and an expression inlined into a line is that line's through its
  // users
  std::vector<std::pair<int, UOpRef>> source_lines;
};

// How far a BEAM search is (engine/device/search.h: its BeamProgress extends it with the best candidate's opts).
struct BeamCounts {
  std::string kernel;              // the kernel's name under the default opts
  int round = 0;                   // 1, 2, ...
  size_t done = 0, total = 0;      // candidates of this round compiled and timed so far / in all
  size_t timed = 0;                // candidates timed in the whole search
  double best_s = 0;               // the best time so far (inf before the first)
  double default_s = 0;            // the default opts' time (measured in round 1; 0 when cached)
  double elapsed_s = 0;
  bool finished = false;
  bool cached = false;             // the answer came from the disk cache: nothing was timed
};
// What a BEAM search reports while it runs, as the trace stream carries it.
struct BeamProgressRecord : BeamCounts {
  std::vector<std::string> best_opts;  // the best candidate's opts, each as Opt::str() writes it
};

// A value on the host (a tensor's HostData, engine/tensor/tensor.h): what the script read back, or the first elements
// of a buffer a call wrote. f and i view the caller's values for the length of the record_* call.
struct HostValues {
  Shape shape;
  DType dtype = nullptr;
  std::span<const double> f;   // float dtypes
  std::span<const int64_t> i;  // int and bool dtypes
};

}  // namespace ts::trace
