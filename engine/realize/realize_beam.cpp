// BEAM=N as realize runs it: a kernel's opts searched on its device, its progress streamed to the trace and handed to
// RealizeConfig::beam_progress, and BEAM's line per kernel on stderr (realize_internal.h)
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/realize/realize.h"
#include "engine/realize/realize_internal.h"
#include "engine/trace/recorder.h"

namespace ts {

namespace {
// what the trace's stream records of a BEAM search's report (engine/trace/records.h)
trace::BeamProgressRecord beam_record(const BeamProgress& p) {
  trace::BeamProgressRecord r;
  static_cast<trace::BeamCounts&>(r) = p;
  for (const Opt& o : p.best_opts) r.best_opts.push_back(o.str());
  return r;
}

}  // namespace

BeamResult search_opts(const UOpRef& ast, Device& dev) {
  const RealizeConfig& rc = realize_config();
  BeamConfig bc;
  bc.width = rc.beam;
  bc.space = rc.opt_space;
  bc.cache_dir = rc.beam_cache_dir;
  bc.ignore_cache = rc.beam_ignore_cache;
  bc.uops_max = codegen_option("BEAM_UOPS_MAX", bc.uops_max);
  bc.upcast_max = codegen_option("BEAM_UPCAST_MAX", bc.upcast_max);
  bc.local_max = codegen_option("BEAM_LOCAL_MAX", bc.local_max);
  bc.patience = static_cast<int>(codegen_option("BEAM_PATIENCE", bc.patience));
  if (auto it = codegen_options().find("BEAM_MIN_PROGRESS"); it != codegen_options().end() && !it->second.empty())
    bc.min_progress_s = std::atof(it->second.c_str()) / 1e6;
  bc.debug = rc.debug;
  return beam_search(ast, dev, bc, [&rc](const BeamProgress& p) {
    trace::stream_progress(beam_record(p));
    if (rc.beam_progress) rc.beam_progress(p);
  });
}

// BEAM's line per kernel: what was searched, the default opts' time beside the one found
void print_beam_line(const BeamProgress& p, const ProgramSpec& spec) {
  if (p.cached) {
    std::fprintf(stderr, "BEAM %d: %s -> %s (opts from the cache)\n", realize_config().beam, ansistrip(p.kernel).c_str(), spec.name.c_str());
    return;
  }
  if (!std::isfinite(p.best_s)) {
    std::fprintf(stderr, "BEAM %d: %s: no candidate could be timed; %s keeps no opts\n", realize_config().beam, ansistrip(p.kernel).c_str(),
                 spec.name.c_str());
    return;
  }
  std::fprintf(stderr, "BEAM %d: %s %s -> %s %s (%.1fx; %zu candidates timed in %d rounds, %.1f s)\n", realize_config().beam,
               ansistrip(p.kernel).c_str(), time_to_str(p.default_s, 0).c_str(), spec.name.c_str(), time_to_str(p.best_s, 0).c_str(),
               p.best_s > 0 && std::isfinite(p.best_s) ? p.default_s / p.best_s : 0.0, p.timed, p.round, p.elapsed_s);
  std::fflush(stderr);
}

// "BEAM=2", "BEAM=2 TS_OPTS=extended": what searched a kernel's opts
std::string beam_label() {
  const RealizeConfig& rc = realize_config();
  return "BEAM=" + std::to_string(rc.beam) + (rc.opt_space == OptSpace::extended ? " TS_OPTS=extended" : "");
}

}  // namespace ts
