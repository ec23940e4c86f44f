#include "engine/trace/chrome_trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "engine/trace/schema.h"
#include "engine/uop/print.h"
#include "engine/uop/atomic_file.h"
#include "engine/uop/error.h"

namespace ts::trace {

using json = nlohmann::json;

namespace {

constexpr int kHostPid = 1;
enum HostThread { kScheduleTid = 1, kCodegenTid = 2, kCompileTid = 3 };
constexpr int kCallsTid = 1;

double num(const json& o, const char* key, double fallback = -1) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : fallback;
}

json meta(const char* what, int pid, int tid, const std::string& name) {
  json e = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

json span(const std::string& name, const char* cat, int pid, int tid, double begin_s, double dur_s) {
  return {{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", begin_s * 1e6}, {"dur", dur_s * 1e6}};
}

// the host's schedule, codegen and compile spans, and a mark per script line ("· softmax.py:12" ends the name)
void host_events(const json& trace, json& events) {
  const json& contexts = trace.value(key::kContexts, json::array());
  for (size_t i = 0; i < contexts.size(); ++i) {
    const json& c = contexts[i];
    const double begin = num(c, stamp::kBegin), end = num(c, stamp::kEnd);
    if (begin < 0 || end < begin) continue;
    const std::string name = ansistrip(c.value("name", std::string()));
    if (c.value("kind", std::string()) == "schedule") {
      json e = span(name, "schedule", kHostPid, kScheduleTid, begin, end - begin);
      e["args"] = {{"context", i}};
      events.push_back(std::move(e));
      if (auto at = name.rfind(" · "); at != std::string::npos && name.find(".py:", at) != std::string::npos)
        events.push_back({{"ph", "i"}, {"s", "t"}, {"name", name.substr(at + std::strlen(" · "))}, {"cat", "script line"},
                          {"pid", kHostPid}, {"tid", kScheduleTid}, {"ts", begin * 1e6}});
      continue;
    }
    double compile_begin = end, compile_end = end;
    if (auto cc = c.find(stamp::kCompile); cc != c.end() && cc->is_array() && cc->size() == 2 && (*cc)[0].is_number() && (*cc)[1].is_number()) {
      compile_begin = (*cc)[0].get<double>();
      compile_end = (*cc)[1].get<double>();
    }
    json e = span(name, "codegen", kHostPid, kCodegenTid, begin, compile_begin - begin);
    e["args"] = {{"context", i}};
    events.push_back(std::move(e));
    if (compile_end > compile_begin) {
      json k = span(name, "compile", kHostPid, kCompileTid, compile_begin, compile_end - compile_begin);
      k["args"] = {{"context", i}};
      events.push_back(std::move(k));
    }
  }
}

struct Placed {
  int pid = 0;
  double ts = 0, dur = 0;  // µs
};

// a call's event, with what the trace knows of it in "args"
json call_event(const json& c, size_t index, const Placed& p) {
  json e = {{"ph", "X"}, {"name", c.value("name", std::string())}, {"cat", c.value("kind", std::string("kernel"))}, {"pid", p.pid},
            {"tid", kCallsTid}, {"ts", p.ts}, {"dur", p.dur}};
  json args = {{"call", index}, {"counter", c.value("counter", 0)}, {"schedule_index", c.value("schedule_index", 0)},
               {"launched_us", num(c, stamp::kLaunched) * 1e6}};
  if (const std::string key = c.value("program_key", std::string()); !key.empty()) args["program_key"] = key;
  if (c.value("jit", false)) args["jit"] = true;
  if (c.value("graph", 0) > 0) args["graph"] = c["graph"];
  e["args"] = std::move(args);
  return e;
}

}  // namespace

json chrome_trace(const json& trace) {
  const json& calls = trace.value(key::kCalls, json::array());
  json events = json::array();
  std::map<std::string, int> pids;  // device -> its process
  auto pid_of = [&pids, &events](const std::string& dev) {
    auto [it, fresh] = pids.emplace(dev, kHostPid + 1 + static_cast<int>(pids.size()));
    if (fresh) {
      events.push_back(meta("process_name", it->second, -1, dev));
      events.push_back(meta("thread_name", it->second, kCallsTid, "calls"));
    }
    return it->second;
  };
  std::vector<Placed> placed(calls.size());
  std::vector<bool> stamped(calls.size(), false);
  size_t n_stamped = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const json& c = calls[i];
    const double start = num(c, stamp::kStart);
    if (start < 0) continue;
    placed[i] = {pid_of(c.value("device", std::string())), start * 1e6, num(c, "seconds", 0) * 1e6};
    stamped[i] = true;
    ++n_stamped;
  }
  bool any_context = false;
  for (const json& c : trace.value(key::kContexts, json::array())) any_context = any_context || num(c, stamp::kBegin) >= 0;
  if (!n_stamped && !any_context && !calls.empty())
    throw Error("the trace has no timestamps (it was written before traces recorded them): run the script again");
  events.push_back(meta("process_name", kHostPid, -1, "host"));
  events.push_back(meta("thread_name", kHostPid, kScheduleTid, "schedule"));
  events.push_back(meta("thread_name", kHostPid, kCodegenTid, "codegen"));
  events.push_back(meta("thread_name", kHostPid, kCompileTid, "compile"));
  host_events(trace, events);
  // graph calls: one span over their kernels
  std::map<int, std::pair<size_t, size_t>> graphs;  // graph number -> its first and last call
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!stamped[i]) continue;
    const int g = calls[i].value("graph", 0);
    if (g <= 0) continue;
    auto [it, fresh] = graphs.emplace(g, std::make_pair(i, i));
    if (!fresh) it->second.second = i;
  }
  for (const auto& [g, range] : graphs) {
    const Placed& a = placed[range.first];
    const Placed& b = placed[range.second];
    const size_t n = range.second - range.first + 1;
    events.push_back({{"ph", "X"}, {"name", "graph " + std::to_string(g) + " (" + std::to_string(n) + " kernels)"}, {"cat", "graph"},
                      {"pid", a.pid}, {"tid", kCallsTid}, {"ts", a.ts}, {"dur", b.ts + b.dur - a.ts}, {"args", {{"graph", g}}}});
  }
  // the calls, and a flow from a buffer's writer to each call that reads it after
  std::unordered_map<uint64_t, size_t> writer;  // buffer -> the last call that wrote it
  int flow = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!stamped[i]) continue;
    const json& c = calls[i];
    events.push_back(call_event(c, i, placed[i]));
    for (const json& b : c.value(stamp::kReads, json::array())) {
      auto w = writer.find(b.get<uint64_t>());
      if (w == writer.end() || placed[w->second].ts > placed[i].ts) continue;
      const Placed& from = placed[w->second];
      ++flow;
      events.push_back({{"ph", "s"}, {"name", "buffer"}, {"cat", "flow"}, {"id", flow}, {"pid", from.pid}, {"tid", kCallsTid}, {"ts", from.ts}});
      events.push_back({{"ph", "f"}, {"bp", "e"}, {"name", "buffer"}, {"cat", "flow"}, {"id", flow}, {"pid", placed[i].pid}, {"tid", kCallsTid},
                        {"ts", placed[i].ts}});
    }
    for (const json& b : c.value(stamp::kWrites, json::array())) writer[b.get<uint64_t>()] = i;
  }
  // each device's allocated bytes after every allocation and free: a counter track
  std::map<std::string, int64_t> allocated;
  for (const json& m : trace.value(key::kMemory, json::array())) {
    const std::string dev = m.value("device", std::string());
    int64_t& bytes = allocated[dev];
    bytes += (m.value("alloc", true) ? 1 : -1) * m.value("bytes", int64_t(0));
    events.push_back({{"ph", "C"}, {"name", "allocated bytes"}, {"cat", "memory"}, {"pid", pid_of(dev)}, {"ts", num(m, "t", 0) * 1e6},
                      {"args", {{"bytes", bytes}}}});
  }
  json other = json::object();
  for (const char* k : {key::kScript, key::kDevice})
    if (trace.contains(k) && trace[k].is_string()) other[k] = trace[k];
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", std::move(other)}};
}

void write_chrome_trace(const json& trace, const std::string& path) {
  // whole or not at all (atomic_file.h): an error names the file and the cause, and leaves what was there
  write_file_atomically(path, "the Chrome trace", chrome_trace(trace).dump(-1, ' ', false, json::error_handler_t::replace), true);
}

}  // namespace ts::trace
