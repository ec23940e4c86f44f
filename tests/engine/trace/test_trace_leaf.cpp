// engine/trace is a leaf of the engine: realize fills plain records (engine/trace/records.h) and the recorder writes
// them, so the trace's sources include nothing of the engine but engine/trace and engine/uop (the UOp graphs it
// interns). Every `#include "engine/..."` (or <engine/...>, or a relative "../...") in engine/trace's .h and .cpp
// files that reaches elsewhere fails this test, which names the file, the line and the include. The test also links
// the whole of tinyscope_trace with tinyscope_uop alone (tests.cmake), so a symbol of the rest of the engine that the
// trace uses, header or not, fails its build.
#include <QtTest>

#include <algorithm>
#include <string>
#include <vector>

#include "include_scan.h"

namespace {

const char* const kAllowed[] = {"engine/trace/", "engine/uop/"};

// "FILE:LINE: #include ..." for each include of `text` (the file `name`) that reaches outside the allowed folders
std::vector<std::string> outside_includes(const std::string& name, const std::string& text) {
  std::vector<std::string> out;
  for (const auto& inc : ts_test::engine_includes(text)) {
    const bool allowed = !inc.relative_up() &&
                         std::any_of(std::begin(kAllowed), std::end(kAllowed), [&](const char* a) { return inc.path.rfind(a, 0) == 0; });
    if (!allowed) out.push_back(name + ":" + std::to_string(inc.line) + ": " + inc.shown);
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
    const std::string root = ts_test::source_root();
    QVERIFY2(std::filesystem::is_directory(root + "/engine/trace"), root.c_str());
    std::vector<std::string> bad;
    int scanned = 0;
    for (const auto& [name, text] : ts_test::sources_under(root, "engine/trace")) {
      const std::vector<std::string> found = outside_includes(name, text);
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
