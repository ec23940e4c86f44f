#pragma once
// What the engine's include checks share (test_trace_leaf, test_engine_layers): the #includes of a source that name an
// engine header, and the .h/.cpp files under a folder of the tree.
#include <QByteArray>

#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ts_test {

inline std::string source_root() {
  const QByteArray v = qgetenv("TINYSCOPE_SOURCE_DIR");
  return v.isEmpty() ? std::string(TS_SOURCE_DIR) : v.toStdString();
}

// one #include of a source that names an engine header: `engine/...` or a relative path with ".."
struct EngineInclude {
  int line;           // 1-based
  std::string path;   // as written
  std::string shown;  // "#include \"path\"" or "#include <path>"
  bool relative_up() const { return path.find("..") != std::string::npos; }
};
// those of `text`, in order (the standard library, third-party headers and a sibling "x.h" are no engine headers)
inline std::vector<EngineInclude> engine_includes(const std::string& text) {
  static const std::regex include(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  std::vector<EngineInclude> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (!std::regex_search(line, m, include)) continue;
    const std::string path = m[2];
    const bool quoted = m[1] == "\"";
    if (path.rfind("engine/", 0) != 0 && !(quoted && path.find("..") != std::string::npos)) continue;
    out.push_back({n, path, "#include " + m[1].str() + path + (quoted ? "\"" : ">")});
  }
  return out;
}

// (path relative to `root`, text) of every .h and .cpp under root/dir (a file it cannot read throws)
inline std::vector<std::pair<std::string, std::string>> sources_under(const std::filesystem::path& root, const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
    std::ifstream f(e.path());
    if (!f) throw std::runtime_error("cannot read " + e.path().string());
    std::stringstream text;
    text << f.rdbuf();
    out.emplace_back(fs::relative(e.path(), root).generic_string(), text.str());
  }
  return out;
}

}  // namespace ts_test
