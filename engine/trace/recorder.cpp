#include "engine/trace/recorder.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "engine/trace/rule_source.h"
#include "engine/uop/atomic_file.h"
#include "engine/uop/dtype.h"
#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"

namespace ts::trace {

using json = nlohmann::json;

namespace {

std::recursive_mutex g_mu;
Level g_level = Level::Off;
json g_contexts = json::array();
json g_calls = json::array();
// every interned uop as its JSON text ({"arg", "device", "dtype", "op", "shape", "src", "tag"}), in the order they
// were interned: written as they are into the trace's "uops" and the stream, never held as JSON values (a traced run
// interns hundreds of thousands)
std::vector<std::pair<uint64_t, std::string>> g_uops;
json g_fields = json::object();
std::unordered_set<uint64_t> g_known;
json g_rules = json::array();           // every rule that fired, once (see recorder.h)
std::unordered_set<std::string> g_rule_keys;  // their locations and names

// the stream (stream_to): finished contexts in order, the uops they introduced, and every call, one JSON line each
std::FILE* g_stream = nullptr;
size_t g_streamed_uops = 0;               // g_uops[0, n) are in the stream
std::vector<bool> g_closed;               // per context: its scope has ended
size_t g_streamed_contexts = 0;           // contexts [0, n) are in the stream

// a JSON string literal of s (UTF-8 passed through; what JSON needs escaped, escaped)
void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c >= 0x20) out += char(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    }
  }
  out += '"';
}

// {"ID": UOP, ...} of g_uops[from, end)
void append_uops(std::string& out, size_t from) {
  out += '{';
  for (size_t i = from; i < g_uops.size(); ++i) {
    if (i > from) out += ',';
    out += '"';
    out += std::to_string(g_uops[i].first);
    out += "\":";
    out += g_uops[i].second;
  }
  out += '}';
}

// one line of the stream, on disk for the reader before the next kernel runs (a crash loses nothing written); a
// write that fails (a full disk) ends the stream there, every line before it whole (a reader drops a torn last line)
void stream_text(const std::string& line) {
  if (!g_stream) return;
  if (std::fwrite(line.data(), 1, line.size(), g_stream) == line.size() && std::fflush(g_stream) == 0) return;
  std::fclose(g_stream);
  g_stream = nullptr;
}

void stream_line(const json& j) {
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);  // never throws (it runs in destructors)
  line += '\n';
  stream_text(line);
}

// every context that ended, up to the first one still open (their uops first), so the stream's contexts are always
// the trace's first n, in order
void stream_finished_contexts() {
  if (!g_stream) return;
  while (g_streamed_contexts < g_contexts.size() && g_streamed_contexts < g_closed.size() && g_closed[g_streamed_contexts]) {
    if (g_streamed_uops < g_uops.size()) {
      std::string line = "{\"uops\":";
      append_uops(line, g_streamed_uops);
      line += "}\n";
      g_streamed_uops = g_uops.size();
      stream_text(line);
    }
    stream_line({{"context", g_contexts[g_streamed_contexts]}});
    ++g_streamed_contexts;
  }
}

std::string loc_str(const std::source_location& l) {
  std::string f = l.file_name();
  auto p = f.find("engine/");
  if (p != std::string::npos) f = f.substr(p);
  return f + ":" + std::to_string(l.line());
}


// a rule's entry in the trace's rules table, the first time it fires (under g_mu)
void note_rule(const Rule& rule) {
  std::string file = rule.loc.file_name();
  if (auto p = file.find("engine/"); p != std::string::npos) file = file.substr(p);
  const int line = static_cast<int>(rule.loc.line());
  if (!g_rule_keys.insert(file + ":" + std::to_string(line) + "\n" + rule.name).second) return;
  const RuleSource src = rule_source(file, line, rule.name);
  g_rules.push_back({{"name", rule.name}, {"file", file}, {"line", line}, {"first_line", src.first_line}, {"text", src.text}});
  if (g_stream) stream_line({{"rule", g_rules.back()}});
}

// record every node reachable from root (once per node)
uint64_t intern(const UOpRef& root) {
  if (!root) return 0;
  if (!g_known.insert(root->id).second) return root->id;
  // the nodes not known yet, walked from the root down to the known ones (a pass's result shares most of its graph
  // with the graph before it: only what the pass made is new)
  std::vector<const UOp*> todo{root.get()};
  while (!todo.empty()) {
    const UOp* u = todo.back();
    todo.pop_back();
    std::string j = "{\"arg\":";
    append_string(j, arg_repr(u->arg));
    if (!u->device.empty()) j += ",\"device\":", append_string(j, u->device);
    j += ",\"dtype\":";
    append_string(j, dtype_repr(u->dtype));
    j += ",\"op\":";
    append_string(j, op_name(u->op));
    if (u->has_shape) {
      j += ",\"shape\":[";
      for (size_t k = 0; k < u->shape.size(); ++k) j += (k ? "," : "") + std::to_string(u->shape[k]);
      j += ']';
    }
    j += ",\"src\":[";
    for (size_t k = 0; k < u->src.size(); ++k) {
      j += (k ? "," : "") + std::to_string(u->src[k]->id);
      if (g_known.insert(u->src[k]->id).second) todo.push_back(u->src[k].get());
    }
    j += ']';
    if (u->tag != -1) j += ",\"tag\":" + std::to_string(u->tag);
    j += '}';
    g_uops.emplace_back(u->id, std::move(j));
  }
  return root->id;
}

struct Recorder : RewriteListener {
  int ctx = -1;
  std::vector<int> open;  // pass indices (nesting)
  void on_pass_begin(std::string_view name, const UOpRef& root) override {
    std::lock_guard lk(g_mu);
    json& passes = g_contexts[ctx]["passes"];
    passes.push_back({{"name", std::string(name)}, {"depth", open.size()}, {"before", intern(root)}, {"matches", json::array()}});
    open.push_back(static_cast<int>(passes.size()) - 1);
  }
  void on_match(const UOpRef& before, const UOpRef& after, const Rule& rule) override {
    std::lock_guard lk(g_mu);
    if (open.empty()) return;
    json& p = g_contexts[ctx]["passes"][open.back()];
    p["match_count"] = p.value("match_count", 0) + 1;
    if (g_level < Level::Matches) return;
    p["matches"].push_back({{"rule", rule.name}, {"loc", loc_str(rule.loc)}, {"before", intern(before)}, {"after", intern(after)}});
    note_rule(rule);
  }
  void on_pass_end(std::string_view, const UOpRef& result) override {
    std::lock_guard lk(g_mu);
    if (open.empty()) return;
    json& p = g_contexts[ctx]["passes"][open.back()];
    p["after"] = intern(result);
    if (!p.contains("match_count")) p["match_count"] = 0;
    open.pop_back();
  }
};

}  // namespace

bool g_calls_wanted = true;
size_t g_dropped_contexts = 0, g_dropped_calls = 0, g_dropped_outputs = 0, g_dropped_snapshots = 0;
json g_outputs = json::array();
size_t g_output_values = 0;  // values kept in g_outputs so far
json g_snapshots = json::array();
size_t g_snapshot_values = 0;

std::string base64(const unsigned char* p, size_t n) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t v = uint32_t(p[i]) << 16 | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += i + 1 < n ? kAlphabet[v >> 6 & 63] : '=';
    out += i + 2 < n ? kAlphabet[v & 63] : '=';
  }
  return out;
}

// the first n elements of v as little-endian bytes, base64
template <typename T>
std::string values_base64(std::span<const T> v, size_t n) {
  static_assert(sizeof(T) == 8);
  std::string bytes(n * 8, '\0');
  for (size_t k = 0; k < n; ++k) {
    uint64_t bits;
    std::memcpy(&bits, &v[k], 8);
    for (int b = 0; b < 8; ++b) bytes[k * 8 + b] = char(bits >> (8 * b) & 0xff);
  }
  return base64(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// the memory events, compact (a JSON object each would cost some 500 bytes: a long loop makes hundreds of thousands)
struct StoredMemory {
  double t;
  uint64_t bytes, buffer;
  size_t after_call;
  uint32_t device;  // into g_memory_devices
  bool alloc;
};
std::vector<StoredMemory> g_memory;
std::vector<std::string> g_memory_devices;
size_t g_dropped_memory = 0;
json memory_json(const StoredMemory& m) {
  return {{"alloc", m.alloc}, {"device", g_memory_devices[m.device]}, {"bytes", m.bytes}, {"buffer", m.buffer}, {"t", m.t},
          {"after_call", m.after_call}};
}
// the same object as text, its keys in the order nlohmann writes them (save() writes the events without building JSON)
void append_memory(std::string& out, const StoredMemory& m) {
  char num[32];
  auto add = [&](const char* key, auto v) {
    out += key;
    out.append(num, std::to_chars(num, num + sizeof num, v).ptr);
  };
  add("{\"after_call\":", m.after_call);
  out += m.alloc ? ",\"alloc\":true" : ",\"alloc\":false";
  add(",\"buffer\":", m.buffer);
  add(",\"bytes\":", m.bytes);
  out += ",\"device\":";
  append_string(out, g_memory_devices[m.device]);
  add(",\"t\":", m.t);
  out += '}';
}
std::unordered_map<std::string, double> g_device_end;  // per device: when its last recorded call ended
// set when the recorder's globals are being destroyed: a buffer freed later (a static's destructor) records nothing
bool g_shut_down = false;
struct ShutDown {
  ~ShutDown() { g_shut_down = true; }
} g_shut_down_guard;

double clock_seconds() {
  static const auto origin = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
}

void set_level(Level l) {
  clock_seconds();  // the origin: before anything is recorded
  g_level = l;
}
void record_calls(bool on) { g_calls_wanted = on; }
bool recording_calls() { return g_calls_wanted; }
Level level() { return g_level; }

ContextScope::ContextScope(ContextKind kind, std::string name) {
  if (g_level == Level::Off) return;
  std::lock_guard lk(g_mu);
  // a long-running loop records its first contexts; the rest are counted (the trace says it was truncated)
  if (g_contexts.size() >= kMaxContexts) {
    ++g_dropped_contexts;
    return;
  }
  index_ = static_cast<int>(g_contexts.size());
  g_contexts.push_back({{"id", index_},
                        {"kind", kind == ContextKind::Schedule ? "schedule" : "kernel"},
                        {"name", name},
                        {"passes", json::array()},
                        {stamp::kBegin, clock_seconds()}});
  g_closed.resize(g_contexts.size(), false);
  saved_listener_ = rewrite_listener();
  auto* r = new Recorder();
  r->ctx = index_;
  rewrite_listener() = r;
}
ContextScope::~ContextScope() {
  if (index_ < 0) return;
  delete static_cast<Recorder*>(rewrite_listener());
  rewrite_listener() = static_cast<RewriteListener*>(saved_listener_);
  std::lock_guard lk(g_mu);
  g_contexts[index_][stamp::kEnd] = clock_seconds();
  if (deferred_) return;  // finish_compile closes it
  g_closed[index_] = true;
  stream_finished_contexts();
}
int ContextScope::defer_end() {
  deferred_ = index_ >= 0;
  return index_;
}
namespace {
// a kernel context's compile: its [begin, end] and what the compiler reported of the machine code
void set_compiled(json& c, double begin, double end, const ProgramStatistics* statistics) {
  c[stamp::kCompile] = {begin, end};
  if (!statistics) return;
  json figures = json::array();
  for (auto& [name, value] : *statistics) figures.push_back({name, value});
  c[field::kStatistics] = std::move(figures);
}
}  // namespace

void finish_compile(int context, bool compiled, double begin, double end, const ProgramStatistics* statistics) {
  if (context < 0) return;
  std::lock_guard lk(g_mu);
  json& c = g_contexts[static_cast<size_t>(context)];
  if (compiled) {
    set_compiled(c, begin, end, statistics);
    if (!c.contains(stamp::kEnd) || c[stamp::kEnd].get<double>() < end) c[stamp::kEnd] = end;
  }
  g_closed[static_cast<size_t>(context)] = true;
  stream_finished_contexts();
}
void ContextScope::set_compile(double begin, double end, const ProgramStatistics* statistics) {
  if (index_ < 0) return;
  std::lock_guard lk(g_mu);
  set_compiled(g_contexts[index_], begin, end, statistics);
}
void ContextScope::rename(const std::string& name) {
  if (index_ < 0) return;
  std::lock_guard lk(g_mu);
  g_contexts[index_]["name"] = name;
}

namespace {
json* current_context() {
  auto* r = dynamic_cast<Recorder*>(rewrite_listener());
  if (!r) return nullptr;
  return &g_contexts[r->ctx];
}
}  // namespace

void snapshot_tensor_graph(const UOps& outputs) {
  if (g_level == Level::Off) return;
  std::lock_guard lk(g_mu);
  json* c = current_context();
  if (!c) return;
  json roots = json::array();
  for (auto& o : outputs) roots.push_back(intern(o));
  (*c)["tensor_graph"] = roots;
}

int g_schedules = 0;  // contexts with a LINEAR so far

int record_schedule(const std::vector<ScheduleItem>& linear) {
  if (g_level == Level::Off) return -1;
  std::lock_guard lk(g_mu);
  json* c = current_context();
  if (!c) return -1;
  const int number = c->contains("linear") ? g_schedules - 1 : g_schedules++;
  // the tensor nodes each call computes: from the node it realizes down to the nodes other calls realize and the
  // buffers (a node some calls recompute is in each of them)
  std::unordered_set<const UOp*> realized;
  for (auto& it : linear)
    if (it.computes) realized.insert(it.computes.get());
  auto members = [&](const UOpRef& top) {
    json out = json::array();
    std::unordered_set<const UOp*> seen{top.get()};
    std::vector<const UOp*> todo{top.get()};
    while (!todo.empty()) {
      const UOp* u = todo.back();
      todo.pop_back();
      out.push_back(intern(u->ref()));
      for (auto& x : u->src)
        if (!realized.count(x.get()) && x->op != Ops::BUFFER && seen.insert(x.get()).second) todo.push_back(x.get());
    }
    return out;
  };
  json items = json::array();
  for (auto& it : linear) {
    json bufs = json::array();
    for (auto& b : it.bufs) bufs.push_back(intern(b));
    json j = {{"kind", it.kind == ScheduleItem::Kind::Kernel ? "kernel" : "copy"}, {"bufs", bufs}};
    if (it.ast) j["ast"] = intern(it.ast);
    if (it.computes) {
      j["computes"] = intern(it.computes);  // provenance: the tensor node whose value the call produces
      j["members"] = members(it.computes);
    }
    items.push_back(std::move(j));
  }
  (*c)["linear"] = items;
  return number;
}

void record_program(const ProgramRecord& p, const std::string& program_key) {
  if (g_level == Level::Off) return;
  std::lock_guard lk(g_mu);
  json* c = current_context();
  if (!c) return;
  (*c)["program"] = {{"name", p.name},
                     {"opts_source", p.opts_source},
                     {"colored_name", p.colored_name},
                     {"function_name", p.function_name},
                     {"lang", p.lang},
                     {"src", p.src},
                     {"applied_opts", p.applied_opts},
                     {"global_size", p.global_size},
                     {"threads", p.threads},
                     {"outs", p.outs},
                     {"ins", p.ins},
                     {"estimates", {{"ops", p.estimates.ops}, {"lds", p.estimates.lds}, {"mem", p.estimates.mem}}},
                     {"program_key", program_key},
                     {"ast", intern(p.ast)}};
  if (p.local_size) (*c)["program"]["local_size"] = *p.local_size;  // GPU programs: lanes per work-group
  // which uop each source line renders: [[line, uop id], ...] (the ids of the "View Output AST" pass's graph)
  json lines = json::array();
  for (const auto& [line, u] : p.source_lines) lines.push_back({line, intern(u)});
  (*c)["program"]["lines"] = std::move(lines);
}

void record_call(const CallRecord& r) {
  if (!g_calls_wanted) return;
  std::lock_guard lk(g_mu);
  if (g_calls.size() >= kMaxCalls) {
    ++g_dropped_calls;
    return;
  }
  json sizes = json::array();
  for (auto& [n, d] : r.arg_sizes) sizes.push_back({n, d});
  g_calls.push_back({{"kind", r.kind},
                     {"name", r.name},
                     {"colored_name", r.colored_name},
                     {"device", r.device},
                     {"counter", r.counter},
                     {"num_args", r.num_args},
                     {"arg_sizes", sizes},
                     {"global_size", r.global_size},
                     {"applied_opts", r.applied_opts},
                     {"first_run", r.first_run},
                     {"program_key", r.program_key},
                     {"seconds", r.seconds},
                     {"estimates", {{"ops", r.estimates.ops}, {"lds", r.estimates.lds}, {"mem", r.estimates.mem}}},
                     {"schedule_index", r.schedule_index}});
  if (r.repeat_seconds.size() > 1) g_calls.back()["times"] = r.repeat_seconds;
  if (!r.repeat_mode.empty()) g_calls.back()["repeat_mode"] = r.repeat_mode;
  if (r.jit) g_calls.back()["jit"] = true;
  if (r.graph > 0) g_calls.back()["graph"] = r.graph;
  if (r.jit) g_calls.back()["run"] = r.run;
  if (r.launched >= 0) {
    double& device_end = g_device_end[r.device];
    const double start = std::max(r.launched, device_end);
    device_end = start + std::max(r.seconds, 0.0);
    json& c = g_calls.back();
    c[stamp::kLaunched] = r.launched;
    c[stamp::kStart] = start;
    c[stamp::kWrites] = r.writes;
    c[stamp::kReads] = r.reads;
  }
  if (g_stream) stream_line({{"call", g_calls.back()}});
}

void record_memory(const MemoryEvent& e) {
  if (!g_calls_wanted || g_shut_down) return;
  std::lock_guard lk(g_mu);
  if (g_memory.size() >= kMaxMemoryEvents) {
    ++g_dropped_memory;
    return;
  }
  auto dev = std::find(g_memory_devices.begin(), g_memory_devices.end(), e.device);
  if (dev == g_memory_devices.end()) dev = g_memory_devices.insert(dev, e.device);
  g_memory.push_back({e.t, e.bytes, e.buffer, g_calls.size() + g_dropped_calls, static_cast<uint32_t>(dev - g_memory_devices.begin()), e.alloc});
  if (g_stream) stream_line({{"memory", memory_json(g_memory.back())}});
}

namespace {
// a value's dtype, shape and its first values (up to what the budget has left), as outputs and snapshots keep them
json host_values(const HostValues& h, size_t* budget_left, size_t count = 0) {
  const bool floats = is_float(h.dtype);
  const size_t have = floats ? h.f.size() : h.i.size();
  count = std::max(count, have);
  const size_t stored = std::min(have, *budget_left);
  *budget_left -= stored;
  return {{"dtype", h.dtype->name},
          {"bits", h.dtype->bitsize},
          {"shape", h.shape},
          {"count", count},
          {"stored", stored},
          {"values", floats ? values_base64(h.f, stored) : values_base64(h.i, stored)}};
}
}  // namespace

void record_output(const HostValues& h, const std::string& where) {
  if (!g_calls_wanted) return;
  std::lock_guard lk(g_mu);
  if (g_outputs.size() >= kMaxOutputs) {
    ++g_dropped_outputs;
    return;
  }
  size_t left = kMaxOutputValues - g_output_values;
  json o = host_values(h, &left);
  g_output_values = kMaxOutputValues - left;
  o["where"] = where;
  o["after_call"] = g_calls.size() + g_dropped_calls;
  g_outputs.push_back(std::move(o));
  if (g_stream) stream_line({{"output", g_outputs.back()}});
}

size_t snapshot_values_left() {
  std::lock_guard lk(g_mu);
  return g_calls_wanted && g_snapshots.size() < kMaxSnapshots ? kMaxSnapshotValues - g_snapshot_values : 0;
}

void record_snapshot(const HostValues& h, int arg, size_t count) {
  if (!g_calls_wanted) return;
  std::lock_guard lk(g_mu);
  // a snapshot of a call the trace dropped would name no call of it
  if (g_snapshots.size() >= kMaxSnapshots || g_dropped_calls || g_calls.empty()) {
    ++g_dropped_snapshots;
    return;
  }
  size_t left = kMaxSnapshotValues - g_snapshot_values;
  json o = host_values(h, &left, count);
  g_snapshot_values = kMaxSnapshotValues - left;
  o["call"] = g_calls.size() - 1;
  o["arg"] = arg;
  g_snapshots.push_back(std::move(o));
  if (g_stream) stream_line({{"snapshot", g_snapshots.back()}});
}

namespace {
// the trace's top-level members in key order (what to_json() builds and save() writes): each a JSON value, or for
// "uops" and "memory" nullptr (written from g_uops' texts and from g_memory); under g_mu
std::map<std::string, const json*> members(json& version, json& truncated) {
  std::map<std::string, const json*> m;
  for (auto it = g_fields.begin(); it != g_fields.end(); ++it) m[it.key()] = &it.value();
  version = kSchemaVersion;
  m[key::kVersion] = &version;
  m[key::kContexts] = &g_contexts;
  m[key::kCalls] = &g_calls;
  m[key::kUops] = nullptr;
  if (!g_outputs.empty()) m[key::kOutputs] = &g_outputs;
  if (!g_snapshots.empty()) m[key::kSnapshots] = &g_snapshots;
  if (!g_rules.empty()) m[key::kRules] = &g_rules;
  if (!g_memory.empty()) m[key::kMemory] = nullptr;  // (written from g_memory)
  if (g_dropped_contexts || g_dropped_calls || g_dropped_outputs || g_dropped_snapshots || g_dropped_memory) {
    truncated = {{"contexts", g_dropped_contexts}, {"calls", g_dropped_calls}, {"outputs", g_dropped_outputs}};
    if (g_dropped_snapshots) truncated["snapshots"] = g_dropped_snapshots;
    if (g_dropped_memory) truncated["memory"] = g_dropped_memory;
    m[key::kTruncated] = &truncated;
  }
  return m;
}
}  // namespace

json to_json() {
  std::lock_guard lk(g_mu);
  json version, truncated, j = json::object();
  for (const auto& [k, v] : members(version, truncated)) {
    if (v) {
      j[k] = *v;
      continue;
    }
    if (k == key::kMemory) {
      json& events = j[k] = json::array();
      for (const StoredMemory& e : g_memory) events.push_back(memory_json(e));
      continue;
    }
    std::string uops;
    append_uops(uops, 0);
    j[k] = json::parse(uops);
  }
  return j;
}

void set_field(const std::string& key, const json& value) {
  std::lock_guard lk(g_mu);
  g_fields[key] = value;
}

json load(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error("cannot read trace file " + path);
  json j;
  try {
    j = json::parse(f);
  } catch (const json::exception& e) {
    throw Error("trace file " + path + " is not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains(key::kVersion)) throw Error("trace file " + path + " has no schema version");
  // an integer: 1.0 compares equal to 1 but is no version this build wrote
  const json& version = j[key::kVersion];
  if (!version.is_number_integer() || version != kSchemaVersion)
    throw Error("trace file " + path + " has schema version " + version.dump() + ", this build reads version " + std::to_string(kSchemaVersion));
  return j;
}

void stream_to(const std::string& path) {
  std::lock_guard lk(g_mu);
  if (g_stream) std::fclose(g_stream);
  g_stream = nullptr;
  if (path.empty()) return;
  g_stream = std::fopen(path.c_str(), "wb");
  if (!g_stream) throw Error("cannot write the trace stream " + path);
  // what was recorded before: its contexts that ended, every uop so far, every call
  g_streamed_uops = 0;
  g_streamed_contexts = 0;
  if (g_uops.empty() && g_contexts.empty() && g_calls.empty()) return;
  stream_finished_contexts();
  for (const auto& c : g_calls) stream_line({{"call", c}});
  for (const auto& o : g_outputs) stream_line({{"output", o}});
  for (const auto& o : g_snapshots) stream_line({{"snapshot", o}});
  for (const auto& r : g_rules) stream_line({{"rule", r}});
  for (const auto& m : g_memory) stream_line({{"memory", memory_json(m)}});
}

void stream_progress(const BeamProgressRecord& p) {
  std::lock_guard lk(g_mu);
  if (!g_stream) return;
  json opts = p.best_opts;
  stream_line({{"beam",
                {{"kernel", p.kernel}, {"round", p.round}, {"done", p.done}, {"total", p.total}, {"timed", p.timed},
                 {"best_s", std::isfinite(p.best_s) ? p.best_s : -1.0}, {"default_s", p.default_s}, {"elapsed_s", p.elapsed_s},
                 {"opts", opts}, {"finished", p.finished}, {"cached", p.cached}}}});
}

void save(const std::string& path) {
  std::lock_guard lk(g_mu);
  // whole or not at all: a full disk or a kill while writing leaves the trace that was there (atomic_file.h)
  AtomicFile f(path, "the trace", /*durable=*/true);
  // the object to_json() builds, written member by member (nothing of the trace copied)
  json version, truncated;
  bool first = true;
  f.write("{");
  for (const auto& [k, v] : members(version, truncated)) {
    std::string head = first ? "" : ",";
    first = false;
    append_string(head, k);
    head += ':';
    f.write(head);
    if (v) {
      f.write(v->dump(-1, ' ', false, json::error_handler_t::replace));
      continue;
    }
    std::string text;
    if (k == key::kMemory) {
      text += '[';
      for (size_t i = 0; i < g_memory.size(); ++i) {
        if (i) text += ',';
        append_memory(text, g_memory[i]);
        if (text.size() > (1 << 20)) f.write(text), text.clear();
      }
      text += ']';
    } else {
      append_uops(text, 0);
    }
    f.write(text);
  }
  f.write("}");
  f.commit();
}

}  // namespace ts::trace
