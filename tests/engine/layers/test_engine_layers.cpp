// The engine's layering. engine/ is a pipeline of stages, each a folder, in this order:
//   uop < trace < tensor < schedule < codegen < renderer < device < runtime < realize
// A file of a stage includes only headers of its own stage and of the stages before it (the UOp graph at the bottom;
// the trace records what the stages above it fill; a Tensor builds graphs that the schedule cuts into kernels,
// codegen lowers them, a renderer writes their source, a device compiles and runs it, runtime/ holds the backends that
// register the devices, realize drives the whole). The test reads every .h and .cpp under engine/ and fails on each
// `#include "engine/..."` (or <engine/...>, or a relative "../...") that reaches a later stage or outside the
// stages, naming the file, the line, the include and the rule it breaks. The exceptions below are the backward
// includes the engine has on purpose, each with its reason; a new one is a decision, written here.
#include <QtTest>

#include <algorithm>
#include <string>
#include <vector>

#include "include_scan.h"

namespace {

const std::vector<std::string> kStages = {"uop", "trace", "tensor", "schedule", "codegen", "renderer", "device", "runtime", "realize"};

struct Exception {
  const char* file;     // a file of engine/, or a prefix of its path (a folder)
  const char* include;  // the header it may include although that header's stage is a later one
  const char* reason;
};
const Exception kExceptions[] = {
    {"engine/tensor/", "engine/schedule/multi.h",
     "a multi-device Tensor (shard, to) builds MSTACKs with the multi pass's helpers; multi.h includes only engine/uop"},
    {"engine/codegen/to_program.", "engine/renderer/renderer.h",
     "to_program drives a kernel through codegen to the source of the Renderer it is given (its capabilities choose "
     "passes, it renders); the renderers themselves read codegen's ProgramSpec"},
    {"engine/device/", "engine/runtime/allocator.h",
     "a device's buffers come from the host allocator, a leaf of runtime/ that includes only engine/uop"},
    {"engine/device/", "engine/runtime/thread_pool.h", "BEAM compiles its candidates in the compile pool, a leaf of runtime/"},
};

// the stage of a path under engine/ ("engine/codegen/cpu/jam.cpp" -> 4), -1 when it is in none
int stage_of(const std::string& path) {
  if (path.rfind("engine/", 0) != 0) return -1;
  const size_t end = path.find('/', 7);
  if (end == std::string::npos) return -1;
  const auto it = std::find(kStages.begin(), kStages.end(), path.substr(7, end - 7));
  return it == kStages.end() ? -1 : static_cast<int>(it - kStages.begin());
}

bool excepted(const std::string& file, const std::string& include) {
  return std::any_of(std::begin(kExceptions), std::end(kExceptions),
                     [&](const Exception& e) { return file.rfind(e.file, 0) == 0 && include == e.include; });
}

// "FILE:LINE: #include ...: RULE" for each include of `text` (the file `name`, a path under engine/) that breaks the
// layering
std::vector<std::string> layering_breaks(const std::string& name, const std::string& text) {
  std::vector<std::string> out;
  const int own = stage_of(name);
  for (const auto& inc : ts_test::engine_includes(text)) {
    const std::string& path = inc.path;
    const std::string where = name + ":" + std::to_string(inc.line) + ": " + inc.shown + ": ";
    if (inc.relative_up()) {
      out.push_back(where + "a path with \"..\" (name headers from the root: \"engine/<stage>/...\")");
      continue;
    }
    const int to = stage_of(path);
    if (own < 0) out.push_back(where + "the file is in no stage of engine/ (add its folder to the stages)");
    else if (to < 0) out.push_back(where + "the header is in no stage of engine/");
    else if (to > own && !excepted(name, path)) {
      std::string allowed;
      for (int s = 0; s <= own; ++s) allowed += (s ? ", " : "") + kStages[static_cast<size_t>(s)];
      out.push_back(where + kStages[static_cast<size_t>(own)] + " (stage " + std::to_string(own + 1) + ") includes " +
                    kStages[static_cast<size_t>(to)] + " (stage " + std::to_string(to + 1) + ", later): it may include only " + allowed);
    }
  }
  return out;
}

}  // namespace

class TestEngineLayers : public QObject {
  Q_OBJECT
 private slots:
  // the check itself: what it must flag and what it must let through
  void scanner() {
    const std::string text =
        "#include <string>\n"
        "#include <nlohmann/json.hpp>\n"
        "#include \"engine/uop/uop.h\"\n"
        "#include \"engine/codegen/program.h\"\n"
        "#include \"lowering_internal.h\"\n"
        "#include \"engine/realize/realize.h\"\n"
        "  #  include <engine/device/device.h>\n"
        "#include \"../schedule/schedule.h\"\n"
        "// #include \"engine/runtime/allocator.h\" (a comment)\n"
        "#include \"engine/gui/window.h\"\n"
        "#include \"engine/renderer/renderer.h\"\n";
    const std::vector<std::string> got = layering_breaks("engine/codegen/x.cpp", text);
    const std::string may = ": it may include only uop, trace, tensor, schedule, codegen";
    const std::vector<std::string> want = {
        "engine/codegen/x.cpp:6: #include \"engine/realize/realize.h\": codegen (stage 5) includes realize (stage 9, later)" + may,
        "engine/codegen/x.cpp:7: #include <engine/device/device.h>: codegen (stage 5) includes device (stage 7, later)" + may,
        "engine/codegen/x.cpp:8: #include \"../schedule/schedule.h\": a path with \"..\" (name headers from the root: \"engine/<stage>/...\")",
        "engine/codegen/x.cpp:10: #include \"engine/gui/window.h\": the header is in no stage of engine/",
        "engine/codegen/x.cpp:11: #include \"engine/renderer/renderer.h\": codegen (stage 5) includes renderer (stage 6, later)" + may,
    };
    QCOMPARE(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) QCOMPARE(QString::fromStdString(got[k]), QString::fromStdString(want[k]));
    // an exception holds for its files only
    QVERIFY(layering_breaks("engine/codegen/to_program.h", "#include \"engine/renderer/renderer.h\"\n").empty());
    QCOMPARE(layering_breaks("engine/codegen/to_program.h", "#include \"engine/renderer/c_renderer.h\"\n").size(), size_t{1});
    QVERIFY(layering_breaks("engine/realize/realize.cpp", "#include \"engine/uop/uop.h\"\n#include \"engine/runtime/allocator.h\"\n").empty());
    QCOMPARE(layering_breaks("engine/viewer/x.cpp", "#include \"engine/uop/uop.h\"\n").size(), size_t{1});
  }

  void engine_includes_only_earlier_stages() {
    const std::string root = ts_test::source_root();
    QVERIFY2(std::filesystem::is_directory(root + "/engine"), root.c_str());
    std::vector<std::string> bad;
    std::vector<int> scanned(kStages.size(), 0);
    for (const auto& [name, text] : ts_test::sources_under(root, "engine")) {
      const std::vector<std::string> found = layering_breaks(name, text);
      bad.insert(bad.end(), found.begin(), found.end());
      if (stage_of(name) >= 0) ++scanned[static_cast<size_t>(stage_of(name))];
      else if (found.empty()) bad.push_back(name + ": the file is in no stage of engine/ (add its folder to the stages)");
    }
    for (size_t s = 0; s < kStages.size(); ++s)
      QVERIFY2(scanned[s] > 0, ("engine/" + kStages[s] + " has no sources to check").c_str());
    std::sort(bad.begin(), bad.end());
    std::string msg = "engine/ stages include only their own and earlier stages (uop < trace < tensor < schedule < codegen < "
                      "renderer < device < runtime < realize):";
    for (const auto& b : bad) msg += "\n  " + b;
    QVERIFY2(bad.empty(), msg.c_str());
  }
};

QTEST_GUILESS_MAIN(TestEngineLayers)
#include "test_engine_layers.moc"
