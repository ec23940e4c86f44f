// engine/trace is a leaf of the engine: realize fills plain records (engine/trace/records.h) and the recorder writes
// them, so the trace's sources include nothing of the engine but engine/trace and engine/uop (the UOp graphs it
// interns). Every `#include "engine/..."` (or <engine/...>, or a relative "../...") in engine/trace's .h and .cpp
// files that reaches elsewhere fails this test, which names the file, the line and the include. The test also links
// the whole of tinyscope_trace with tinyscope_uop alone (tests.cmake), so a symbol of the rest of the engine that the
// trace uses, header or not, fails its build.
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const char* const kAllowed[] = {"engine/trace/", "engine/uop/"};

std::string source_dir() {
  const QByteArray v = qgetenv("TINYSCOPE_SOURCE_DIR");
  return v.isEmpty() ? std::string(TS_SOURCE_DIR) : v.toStdString();
}

// "FILE:LINE: #include ..." for each include of `text` (the file `name`) that reaches outside the allowed folders
std::vector<std::string> outside_includes(const std::string& name, const std::string& text) {
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (!std::regex_search(line, m, include)) continue;
    const std::string path = m[2];
    const bool engine = path.rfind("engine/", 0) == 0;
    const bool relative_up = m[1] == "\"" && path.find("..") != std::string::npos;
    if (!engine && !relative_up) continue;  // the standard library, nlohmann json, a sibling "x.h"
    const bool allowed = engine && path.find("..") == std::string::npos &&
                         std::any_of(std::begin(kAllowed), std::end(kAllowed), [&](const char* a) { return path.rfind(a, 0) == 0; });
    if (!allowed) out.push_back(name + ":" + std::to_string(n) + ": #include " + m[1].str() + path + (m[1] == "\"" ? "\"" : ">"));
  }
  return out;
}

}  // namespace

class TestTraceLeaf : public QObject {
  Q_OBJECT
 private slots:
  // the check itself: what it must flag and what it must let through
  void scanner() {
    const std::string text =
        "#include <string>\n"
        "#include <nlohmann/json.hpp>\n"
        "#include \"engine/uop/uop.h\"\n"
        "#include \"engine/trace/trace.h\"\n"
        "#include \"rule_source.h\"\n"
        "#include \"engine/realize/realize.h\"\n"
        "  #  include <engine/schedule/schedule.h>\n"
        "#include \"../codegen/program.h\"\n"
        "#include \"engine/trace/../tensor/tensor.h\"\n"
        "// #include \"engine/device/device.h\" (a comment)\n";
    const std::vector<std::string> got = outside_includes("engine/trace/x.cpp", text);
    const std::vector<std::string> want = {
        "engine/trace/x.cpp:6: #include \"engine/realize/realize.h\"",
        "engine/trace/x.cpp:7: #include <engine/schedule/schedule.h>",
        "engine/trace/x.cpp:8: #include \"../codegen/program.h\"",
        "engine/trace/x.cpp:9: #include \"engine/trace/../tensor/tensor.h\"",
    };
    QCOMPARE(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) QCOMPARE(QString::fromStdString(got[k]), QString::fromStdString(want[k]));
  }

  void trace_includes_only_trace_and_uop() {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(source_dir()) / "engine" / "trace";
    QVERIFY2(fs::is_directory(dir), dir.c_str());
    std::vector<std::string> bad;
    int scanned = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      std::ifstream f(e.path());
      QVERIFY2(f, e.path().c_str());
      std::stringstream text;
      text << f.rdbuf();
      const std::vector<std::string> found = outside_includes("engine/trace/" + fs::relative(e.path(), dir).generic_string(), text.str());
      bad.insert(bad.end(), found.begin(), found.end());
      ++scanned;
    }
    QVERIFY2(scanned >= 3, "engine/trace has no sources to check");  // recorder, records, rule_source, trace
    std::sort(bad.begin(), bad.end());
    std::string msg = "engine/trace must include only engine/trace and engine/uop (realize fills engine/trace/records.h):";
    for (const auto& b : bad) msg += "\n  " + b;
    QVERIFY2(bad.empty(), msg.c_str());
  }
};

QTEST_GUILESS_MAIN(TestTraceLeaf)
#include "test_trace_leaf.moc"
