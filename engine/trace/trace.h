#pragma once
#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/trace/schema.h"  // kSchemaVersion and the top-level keys

namespace ts::trace {

enum class Level { Off = 0, Passes = 1, Matches = 2 };

void set_level(Level l);
Level level();
// Whether executed calls are recorded (default on; off when nothing will read the trace).
void record_calls(bool on);
bool recording_calls();
// A trace keeps its first kMaxContexts contexts and kMaxCalls calls; later ones are only counted, in the trace's
// "truncated": {"contexts": N, "calls": M}, so memory stays bounded however long a script runs.
constexpr size_t kMaxContexts = 5000;
constexpr size_t kMaxCalls = 200000;
// The whole trace of this process so far: {"version", "contexts": [...], "calls": [...], ...}
nlohmann::json to_json();
// extra top-level fields (the script, its result, the device)
void set_field(const std::string& key, const nlohmann::json& value);
void save(const std::string& path);  // throws ts::Error on I/O failure
// From now on also appends what is recorded to `path` as it happens, one JSON line at a time, each flushed before
// the next kernel runs, so a process that dies (killed, aborted) leaves everything recorded up to that moment:
//   {"uops": {ID: UOP, ...}}   the nodes interned since the last such line (before the context that needs them)
//   {"context": CONTEXT}       a context once it and every context before it ended (so contexts come in trace order)
//   {"call": CALL}             each executed call, as it is recorded
//   {"output": OUTPUT}         each value the script read back (recorder.h: record_output)
//   {"snapshot": SNAPSHOT}     a call's output buffer, after that call's line (recorder.h: record_snapshot)
//   {"rule": RULE}             each rule the first time it fires (an entry of the trace's "rules", recorder.h)
//   {"memory": EVENT}          each allocation and free of a call's buffer (an entry of "memory", recorder.h)
// The trace of the lines is the same as save()'s, less the extra fields (set_field) and any context still open.
// "" stops streaming. Throws ts::Error when `path` cannot be written.
void stream_to(const std::string& path);
// reads a saved trace; throws ts::Error naming the problem (missing file, bad JSON, other schema version)
nlohmann::json load(const std::string& path);

}  // namespace ts::trace
