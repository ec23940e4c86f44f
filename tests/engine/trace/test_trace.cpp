// The trace is the contract between the engine and every view: its schema is pinned by a golden file (the seed
// program, every pass and match), and a saved trace loads back identically. Regenerate the golden file after an
// intended change with TS_UPDATE_GOLDEN=1.
#include <QtTest>

#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/runtime/cpu/install.h"
#include "engine/tensor/tensor.h"
#include "engine/trace/rule_source.h"
#include "engine/trace/trace.h"
#include "engine/uop/error.h"

using json = nlohmann::json;
using namespace ts;

namespace {

QString golden_path() { return QString::fromLocal8Bit(qgetenv("TINYSCOPE_SOURCE_DIR")) + "/tests/engine/trace/golden_seed.json"; }

HostData vec(std::vector<double> v) {
  HostData h;
  h.shape = {static_cast<int64_t>(v.size())};
  h.dtype = dtypes::float32;
  h.f = std::move(v);
  return h;
}

// ids are process serials and hashes depend on addresses: renumber both in first-use order, drop timings and
// the line numbers of rules (they move with every edit); what stays is the structure the views rely on
struct Normalizer {
  const json& uops;
  std::map<std::string, int> ids = {}, keys = {};
  json out_uops = json::object();

  json id(const json& v) {
    if (!v.is_number()) return v;
    std::string k = std::to_string(v.get<uint64_t>());
    auto it = ids.find(k);
    if (it != ids.end()) return it->second;
    int n = static_cast<int>(ids.size());
    ids[k] = n;
    json u = uops.at(k);
    json src = json::array();
    for (auto& s : u["src"]) src.push_back(id(s));
    u["src"] = src;
    out_uops[std::to_string(n)] = u;
    return n;
  }
  // a buffer a call writes or reads, or a memory event names: its uop's number where the trace has the uop
  json buffer(const json& v) { return uops.contains(std::to_string(v.get<uint64_t>())) ? id(v) : json(-1); }
  json key(const json& v) {
    std::string k = v.get<std::string>();
    if (k.empty()) return "";
    auto [it, fresh] = keys.emplace(k, static_cast<int>(keys.size()));
    return "program" + std::to_string(it->second);
  }
};

json normalize(json t) {
  Normalizer n{t.at("uops")};
  for (auto& c : t["contexts"]) {
    for (auto& p : c["passes"]) {
      if (p.contains("before")) p["before"] = n.id(p["before"]);
      if (p.contains("after")) p["after"] = n.id(p["after"]);
      for (auto& m : p["matches"]) {
        m["before"] = n.id(m["before"]);
        m["after"] = n.id(m["after"]);
        std::string loc = m["loc"];
        m["loc"] = loc.substr(0, loc.rfind(':'));
      }
    }
    if (c.contains("tensor_graph")) for (auto& r : c["tensor_graph"]) r = n.id(r);
    if (c.contains("linear"))
      for (auto& it : c["linear"]) {
        for (auto& b : it["bufs"]) b = n.id(b);
        if (it.contains("ast")) it["ast"] = n.id(it["ast"]);
        if (it.contains("computes")) it["computes"] = n.id(it["computes"]);
        if (it.contains("members")) for (auto& m : it["members"]) m = n.id(m);
      }
    // timestamps change with every run: the keys stay, their values are 0
    for (const char* k : {"begin", "end"})
      if (c.contains(k)) c[k] = 0;
    if (c.contains("compile")) c["compile"] = {0, 0};
    if (c.contains("program")) {
      c["program"]["ast"] = n.id(c["program"]["ast"]);
      if (c["program"].contains("lines"))
        for (auto& l : c["program"]["lines"]) l[1] = n.id(l[1]);
      c["program"]["program_key"] = n.key(c["program"]["program_key"]);
    }
  }
  // a rule's line, its table row's text and where it starts move with every edit: test_trace checks them against the
  // source files instead (every_rule_carries_its_source_lines); the golden file keeps the keys (the trace fuzzer reads
  // it as a trace)
  if (t.contains("rules"))
    for (auto& r : t["rules"]) r["line"] = 0, r["first_line"] = 0, r["text"] = "";
  for (auto& call : t["calls"]) {
    call.erase("seconds");
    call["program_key"] = n.key(call["program_key"]);
    for (const char* k : {"launched", "start"})
      if (call.contains(k)) call[k] = 0;
    for (const char* k : {"writes", "reads"})
      if (call.contains(k))
        for (auto& b : call[k]) b = n.buffer(b);
  }
  if (t.contains("memory"))
    for (auto& e : t["memory"]) e["t"] = 0, e["buffer"] = n.buffer(e["buffer"]);
  t["uops"] = n.out_uops;
  return t;
}

}  // namespace

class TestTrace : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    cpu::install();
    install_realize();
    realize_config().device = "CPU";
    trace::set_level(trace::Level::Matches);
    // the tutorial's first example
    Tensor a = Tensor::from_host(vec({1, 2, 3, 4})).realize();
    Tensor b = Tensor::from_host(vec({10, 20, 30, 40})).realize();
    Tensor c = a.add(b);
    QCOMPARE(c.data().f, (std::vector<double>{11, 22, 33, 44}));
  }

  void trace_matches_golden_file() {
    QString path = dir_.filePath("seed.json");
    trace::save(path.toStdString());
    json got = normalize(trace::load(path.toStdString()));
    if (qEnvironmentVariableIsSet("TS_UPDATE_GOLDEN")) {
      std::ofstream(golden_path().toStdString()) << got.dump(1) << "\n";
      QSKIP("golden file rewritten");
    }
    std::ifstream f(golden_path().toStdString());
    QVERIFY2(f.good(), "missing tests/engine/trace/golden_seed.json (run with TS_UPDATE_GOLDEN=1)");
    json want = json::parse(f);
    if (got != want) {
      // name the first difference, not the whole document
      json patch = json::diff(want, got);
      QFAIL(qPrintable("trace differs from the golden file: " + QString::fromStdString(patch.dump().substr(0, 600))));
    }
  }

  void trace_has_the_stages_a_view_needs() {
    json t = trace::to_json();
    QCOMPARE(t["version"].get<int>(), trace::kSchemaVersion);
    std::vector<std::string> kinds;
    for (auto& c : t["contexts"]) kinds.push_back(c["kind"]);
    // three realizes (two copies, then the add) and one compiled kernel
    QCOMPARE(std::count(kinds.begin(), kinds.end(), "schedule"), 3);
    QCOMPARE(std::count(kinds.begin(), kinds.end(), "kernel"), 1);
    json kernel;
    for (auto& c : t["contexts"]) if (c["kind"] == "kernel") kernel = c;
    QCOMPARE(kernel["program"]["name"].get<std::string>(), std::string("E_4"));
    bool saw_upcast = false;
    for (auto& p : kernel["passes"]) saw_upcast |= p["name"].get<std::string>().find("upcast") != std::string::npos;
    QVERIFY(saw_upcast);
    // the kernel's call points at its program, and the schedule says which tensor node it computes
    json call = t["calls"].back();
    QCOMPARE(call["name"].get<std::string>(), std::string("E_4"));
    QCOMPARE(call["program_key"], kernel["program"]["program_key"]);
    json last_schedule;
    for (auto& c : t["contexts"]) if (c["kind"] == "schedule") last_schedule = c;
    QVERIFY(last_schedule["linear"][0].contains("computes"));
    std::string op = t["uops"][std::to_string(last_schedule["linear"][0]["computes"].get<uint64_t>())]["op"];
    QCOMPARE(op, std::string("CONTIGUOUS"));
  }

  // what a device's compiler reports of a program (a Vulkan driver's pipeline statistics) reaches the kernel's trace
  // context and its calls: a host device whose load reports its source's length, as "Source Size"
  void compiler_statistics_reach_the_trace() {
    class Reporting final : public Device {
     public:
      Reporting() : Device("REPORTING"), cpu_(get_device("CPU")) {}
      const Renderer& renderer() const override { return cpu_.renderer(); }
      OptTarget opt_target() const override { return cpu_.opt_target(); }
      std::string compiler_key() const override { return "REPORTING"; }
      std::shared_ptr<Executable> load(const ProgramSpec& spec) override {
        auto e = std::make_shared<Forward>();
        e->inner = cpu_.load(spec);
        e->statistics = std::make_shared<trace::ProgramStatistics>(trace::ProgramStatistics{{"Source Size", std::to_string(spec.src.size())}});
        return e;
      }
      double launch(const ProgramSpec& spec, Executable& exe, std::span<Buffer* const> bufs, std::span<const int64_t> vars) override {
        return cpu_.launch(spec, *static_cast<Forward&>(exe).inner, bufs, vars);
      }

     private:
      struct Forward : Executable {
        std::shared_ptr<Executable> inner;
      };
      Device& cpu_;
    };
    register_device(std::make_unique<Reporting>());
    realize_config().device = "REPORTING";
    Tensor a = Tensor::from_host(vec({1, 2, 3, 4})).realize();
    Tensor c = a.mul(a).add(a);
    QCOMPARE(c.data().f, (std::vector<double>{2, 6, 12, 20}));
    realize_config().device = "CPU";
    json t = trace::to_json(), kernel;
    for (auto& k : t["contexts"])
      if (k["kind"] == "kernel") kernel = k;
    QCOMPARE(kernel["program"]["name"].get<std::string>(), std::string("E_4"));
    const std::string size = std::to_string(kernel["program"]["src"].get<std::string>().size());
    QCOMPARE(kernel["statistics"], json::parse("[[\"Source Size\", \"" + size + "\"]]"));
    const CallRecord& call = call_log().back();
    QVERIFY(call.statistics);
    QCOMPARE(*call.statistics, (trace::ProgramStatistics{{"Source Size", size}}));
    // the CPU's compiler reports nothing: its kernels carry no figures
    for (auto& k : t["contexts"])
      if (k["kind"] == "kernel" && k != kernel) QVERIFY(!k.contains("statistics"));
  }

  // the rules table: one entry per rule that fired (by location and name), its text the lines of the engine's
  // source the location names, read here from the source tree
  void every_rule_carries_its_source_lines() {
    json t = trace::to_json();
    QVERIFY(t.contains("rules"));
    std::set<std::string> fired, listed;
    for (auto& c : t["contexts"])
      for (auto& p : c["passes"])
        for (auto& m : p["matches"]) fired.insert(m["loc"].get<std::string>() + "\n" + m["rule"].get<std::string>());
    for (auto& r : t["rules"]) {
      const std::string file = r["file"], name = r["name"];
      const int line = r["line"], first = r["first_line"];
      QVERIFY2(listed.insert(file + ":" + std::to_string(line) + "\n" + name).second, name.c_str());
      QVERIFY2(first >= 1 && first <= line, name.c_str());
      std::ifstream f(QString::fromLocal8Bit(qgetenv("TINYSCOPE_SOURCE_DIR")).toStdString() + "/" + file);
      QVERIFY2(f.good(), file.c_str());
      std::vector<std::string> lines;
      for (std::string l; std::getline(f, l);) lines.push_back(l);
      std::string want;
      const std::string text = r["text"];
      const size_t n = std::count(text.begin(), text.end(), '\n') + 1;
      for (size_t k = 0; k < n; ++k) want += (k ? "\n" : "") + lines.at(first - 1 + k);
      QCOMPARE(QString::fromStdString(text), QString::fromStdString(want));
      // the row itself: the rule(...) call on the located line, naming the rule, its context lines around it
      const std::string at = lines.at(line - 1);
      QVERIFY2(at.find("rule(") != std::string::npos || at.find("rule<") != std::string::npos, at.c_str());
      if (name.rfind("gradient of", 0) != 0) QVERIFY2(at.find("\"" + name + "\"") != std::string::npos, at.c_str());
      QVERIFY(line - first <= trace::kRuleContext);
      QVERIFY(n >= size_t(line - first + 1 + trace::kRuleContext) || first - 1 + n == lines.size());
    }
    QCOMPARE(listed, fired);
  }

  // a rule row spanning lines, a line that starts no call, a file that is not embedded
  void rule_source_finds_the_whole_call() {
    const std::string src = "a\nb\n  static const PatternMatcher pm({\n"
                            "      rule(\"one\", {}, [](const UOpRef& x) -> UOpRef {\n"
                            "        if (x == \")\") return f(x, ')');  // a ) in a comment\n"
                            "        return nullptr;\n"
                            "      }),\n"
                            "      rule(\"two\", {}, g),\n"
                            "  });\nz\n";
    auto one = trace::rule_source_in(src, 4, "one");
    QCOMPARE(one.first_line, 2);
    QCOMPARE(QString::fromStdString(one.text), QString::fromStdString(src.substr(2, src.find("\nz") - 2)));  // b .. "  });"
    auto two = trace::rule_source_in(src, 8, "two");
    QCOMPARE(two.first_line, 6);
    QVERIFY(QString::fromStdString(two.text).endsWith("z"));
    QCOMPARE(trace::rule_source_in(src, 1).first_line, 1);  // no call: the line and its context
    QCOMPARE(trace::rule_source_in(src, 99).first_line, 0);
    QCOMPARE(trace::rule_source("engine/nowhere.cpp", 3).first_line, 0);
    QVERIFY(!trace::embedded_rule_sources().empty());
    for (const auto& e : trace::embedded_rule_sources()) QVERIFY2(std::string(e.path).rfind("engine/", 0) == 0, e.path);
  }

  void load_rejects_bad_files() {
    QString missing = dir_.filePath("nope.json");
    QVERIFY_THROWS_EXCEPTION(ts::Error, trace::load(missing.toStdString()));
    QString bad = dir_.filePath("bad.json");
    std::ofstream(bad.toStdString()) << "{not json";
    try {
      trace::load(bad.toStdString());
      QFAIL("no error");
    } catch (const ts::Error& e) {
      QVERIFY(QString(e.what()).contains("not valid JSON"));
    }
    QString old = dir_.filePath("old.json");
    std::ofstream(old.toStdString()) << R"({"version": 0})";
    try {
      trace::load(old.toStdString());
      QFAIL("no error");
    } catch (const ts::Error& e) {
      QVERIFY(QString(e.what()).contains("schema version 0"));
    }
    // a version written as a float is not the integer version this build writes
    for (const char* text : {R"({"version": 1.0})", R"({"version": "1"})", R"({"version": true})"}) {
      QString f = dir_.filePath("float.json");
      std::ofstream(f.toStdString()) << text;
      try {
        trace::load(f.toStdString());
        QFAIL(text);
      } catch (const ts::Error& e) {
        QVERIFY2(QString(e.what()).contains("schema version"), e.what());
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "test_trace.moc"
