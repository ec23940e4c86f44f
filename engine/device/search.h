#pragma once
// BEAM search (the reference's BEAM=N): a kernel's opts found by timing candidates on the device that runs it.
//
// Each round takes every kernel in the beam one action further (beam_actions(): upcasts, unrolls, locals, groups,
// swaps and threads of the reference's sizes), compiles the candidates that apply in parallel (codegen and the
// device's compiler), drops those whose program is the same as one already timed, and times the rest on the device
// in few submissions (one command buffer per chunk of candidates on a batching device), each the fastest of up to
// three runs on scratch buffers. The N fastest form the next beam; the search ends when a round improves nothing
// (the reference), or here after `patience` such rounds in a row, keeping the fastest kernel of any round.
// Unlike the reference, round 1 also times the opts the kernel gets without BEAM (default_opts) as a candidate, so
// the beam can start from them and the search never ends slower than the default opts it measured. The opts found
// are cached on disk by the kernel's AST, the device and N, so a second run compiles only the winner.
// Candidates are named alike ("test"); the kernel built from the winning opts is named by them, as under the
// reference's BEAM.
//
// Not searched (yet): tensor-core opts (TC) and PADTO; candidates run at their full launch size (the reference may
// time a smaller grid and scale the time; BEAM_ESTIMATE).
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/codegen/opt.h"
#include "engine/trace/records.h"
#include "engine/uop/uop.h"

namespace ts {

class Device;

// The reference's action list (search.py `actions`), without PADTO (THREAD only applies on the CPU, LOCAL and
// GROUP only with locals: apply_opt refuses the rest). The extended space (TS_OPTS=extended) adds upcasts of 6, 8 and
// 16 and unrolls of 2, 8 and 16: a vector register's width of a tile in one action.
const std::vector<Opt>& beam_actions(OptSpace space = OptSpace::reference);
// "reference" / "extended"
const char* opt_space_name(OptSpace space);
// The schedulers one action away from `s` that apply, with at most max_upcast elements upcast or unrolled and
// max_local lanes (LOCAL and GROUP_REDUCE axes) in all (BEAM_UPCAST_MAX, BEAM_LOCAL_MAX), in action order.
std::vector<Scheduler> kernel_actions(const Scheduler& s, int64_t max_upcast = 256, int64_t max_local = 1024,
                                      OptSpace space = OptSpace::reference);

// Register tiles, the extended space's first round besides the single opts: 16 or 32 columns along one loop over
// outputs by 4 or 8 rows along another (or 4x4, 8x2 along two), then the heuristics' threads; each with and without
// the heuristics' unrolls of whole (small) reduce axes (on the CPU: a 16-wide vector per read along the columns, 16
// vector accumulators at most).
std::vector<Scheduler> register_tiles(const Scheduler& s0, int64_t max_upcast);

struct BeamConfig {
  int width = 2;                   // BEAM=N: the candidates each round keeps
  OptSpace space = OptSpace::reference;  // the actions each round tries (extended: beam_actions(extended))
  std::string cache_dir;           // where found opts are kept (empty: no disk cache)
  bool ignore_cache = false;       // search even when the cache has an answer (and write the new one)
  int64_t uops_max = 3000;         // BEAM_UOPS_MAX: candidates whose program has more instructions are skipped
  int64_t upcast_max = 256;        // BEAM_UPCAST_MAX
  int64_t local_max = 1024;        // BEAM_LOCAL_MAX
  double min_progress_s = 0.01e-6; // BEAM_MIN_PROGRESS (us / 1e6): a round that gains less ends the search
  int runs = 3;                    // timed runs per candidate (a candidate 3x slower than the best runs once)
  int patience = 1;                // BEAM_PATIENCE: rounds in a row without a gain before the search ends (0: the reference's)
  int debug = 0;                   // DEBUG >= 2: the reference's per-round lines on stdout
  const std::atomic<bool>* cancel = nullptr;  // set by another thread: the search stops with an Error
};

// What a search reports while it runs (after every timed chunk and at the end).
struct BeamProgress : trace::BeamCounts {  // kernel, round, candidates done, times, finished, cached
  std::string best_shape;          // colored_shape() of the best candidate
  std::vector<Opt> best_opts;
};
using BeamProgressFn = std::function<void(const BeamProgress&)>;

struct BeamResult {
  std::vector<Opt> opts;           // to apply to opt_scheduler(kernel_ast, ...) in order
  BeamProgress final;              // the last report (finished = true)
};

// Searches opts for `kernel_ast` on `dev` (which must be able to run it). Errors: a cancelled search, a device that
// fails outside a candidate. A candidate that fails to compile or run is skipped.
BeamResult beam_search(const UOpRef& kernel_ast, Device& dev, const BeamConfig& config, const BeamProgressFn& progress = {});

// "UPCAST 0 4" per line, and back (an Error names a line that is not an opt)
std::string format_opts(const std::vector<Opt>& opts);
std::vector<Opt> parse_opts(const std::string& text);

// KERNEL_OPTS: opts set by hand for some kernels, each named by its program key (the kernel AST's hash as 16 hex
// digits, the trace's program_key): "KEY:OP,AXIS,ARG;OP,AXIS,ARG|KEY:..." ("KEY:" alone: no opts). Such a kernel gets
// exactly these opts (neither the hand-coded heuristics nor BEAM), applied in order. An Error names a malformed part.
std::map<std::string, std::vector<Opt>> parse_kernel_opts(const std::string& text);
std::string format_kernel_opts(const std::map<std::string, std::vector<Opt>>& opts);
// the opts KERNEL_OPTS (codegen_options()) sets for the kernel with this program key, if any
std::optional<std::vector<Opt>> kernel_opts_override(const std::string& program_key);
// why `value` cannot be codegen variable `name`'s (empty: it can; an empty value, which unsets it, always can): a name
// the engine does not read, a KERNEL_OPTS that does not parse or is over 4096 characters, else a value that is not a
// short word or number (at most 32 of 0-9 A-Z a-z _ . : -)
std::string codegen_option_problem(const std::string& name, const std::string& value);

}  // namespace ts
