#pragma once
// A trace as Chrome's Trace Event JSON (what chrome://tracing and Perfetto open): `tinyscope run --chrome-trace` and the
// window's File > Export timeline write it. Only the timestamps the trace recorded are used (schema.h: stamp).
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace ts::trace {

// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}, times in µs since the trace's clock origin:
//  - process 1 "host": thread "schedule" (an "X" event per schedule context, from its begin to its end, and an "i"
//    event per script line that asked for one), "codegen" (per kernel context: its begin to the start of its compile),
//    "compile" (its compile);
//  - one process per device (2, 3, ... in the order the calls first name them), thread "calls": an "X" event per call
//    (cat "kernel" or "copy", ts = its "start", dur = its seconds), and per graph call an "X" event (cat "graph")
//    spanning its kernels;
//  - per device a counter ("C", "allocated bytes") after each allocation and free of its calls' buffers (the "memory");
//  - "M" events naming every process and thread;
//  - a flow ("s" at the call that wrote a buffer, "f" with "bp": "e" at each later call that reads it, same "id").
// Throws ts::Error when the trace has no timestamps (written before it recorded them).
nlohmann::json chrome_trace(const nlohmann::json& trace);

// chrome_trace(trace) written to `path` whole or not at all (a temporary file beside it, then renamed over it); throws
// ts::Error naming the path and the reason when it cannot be written.
void write_chrome_trace(const nlohmann::json& trace, const std::string& path);

}  // namespace ts::trace
