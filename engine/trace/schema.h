#pragma once
// The trace file's schema: its version and the keys of its top-level object. One owner for the writer
// (engine/trace/recorder.cpp), the viewer's checker and reader (viewer/model/trace_check.cpp, viewer/model/session.cpp)
// and the window's rebuild of a streamed trace (app/gui/trace_stream.cpp). Plain constants: no Qt, no JSON library,
// so every side can include it.

namespace ts::trace {

// the version every trace carries in "version"; a reader refuses any other (and 1.0: it must be an integer)
inline constexpr int kSchemaVersion = 1;

// the top-level keys of a trace: {"version", "uops", "contexts", "calls", ...}
namespace key {
inline constexpr const char* kVersion = "version";
inline constexpr const char* kUops = "uops";          // {"<id>": uop}
inline constexpr const char* kContexts = "contexts";  // [context]
inline constexpr const char* kCalls = "calls";        // [call]
inline constexpr const char* kOutputs = "outputs";    // [value the script read back]
inline constexpr const char* kSnapshots = "snapshots";  // [a call's output buffer]
inline constexpr const char* kRules = "rules";        // [each fired rule's source]
inline constexpr const char* kTruncated = "truncated";  // {"contexts": N, "calls": M, ...}: what a full trace dropped
inline constexpr const char* kMemory = "memory";      // [allocation or free of a call's buffer] (recorder.h: record_memory)
// the extra fields (trace.h: set_field)
inline constexpr const char* kScript = "script";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kResult = "result";
inline constexpr const char* kError = "error";
inline constexpr const char* kPartial = "partial";  // a trace rebuilt from a run's stream: how the run ended
inline constexpr const char* kLimits = "limits";    // the device's measured limits
// what the script printed, in order: [{"stream": "stdout" | "stderr", "text": ...}], at most kConsoleChars characters
// in all (a longer output keeps its start and says it was cut); absent in older traces
inline constexpr const char* kConsole = "console";
}  // namespace key
inline constexpr long kConsoleChars = 1 << 20;

// The timestamps a trace carries: seconds since one steady-clock origin of the process that ran (clock_seconds in
// recorder.h). Each key is optional: a trace written before they existed has none, and a reader then has no timeline.
namespace stamp {
inline constexpr const char* kLaunched = "launched";  // a call: when the host launched it (a batch or graph: submitted)
inline constexpr const char* kStart = "start";        // a call: when its device began it: the launch, or the end of the
                                                      // device's previous call if that was later (devices run in order)
inline constexpr const char* kWrites = "writes";      // a call: the BUFFER uop ids it writes (a kernel's outputs, a copy's
inline constexpr const char* kReads = "reads";        // destination) and reads (a kernel's inputs, a copy's source)
inline constexpr const char* kBegin = "begin";        // a context: when its scope opened
inline constexpr const char* kEnd = "end";            // a context: when it closed
inline constexpr const char* kCompile = "compile";    // a kernel context: [begin, end] of compiling its program (host; after any wait for a compiler another kernel held)
}  // namespace stamp

// fields of a context besides its stamps
namespace field {
// a kernel context: what the device's compiler reported of its program's machine code, [[name, value], ...] in the
// compiler's own words ("Register Count", "157"); absent where it reported nothing
inline constexpr const char* kStatistics = "statistics";
}  // namespace field

}  // namespace ts::trace
