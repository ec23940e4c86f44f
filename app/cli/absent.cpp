// What a build configured without the window (and so without the report), the embedded Python or the CPU JIT has in
// their place: each entry point says which part is missing and how to build it (CMakeLists.txt's TINYSCOPE_WINDOW,
// TINYSCOPE_PYTHON and TINYSCOPE_CPU_JIT options; `make headless` turns all three off).
#include <cstdio>
#include <stdexcept>
#include <string>

#if !TINYSCOPE_HAS_WINDOW
#include <vector>

#include "app/cli/report.h"
#include "app/gui/gui_main.h"
#endif
#if !TINYSCOPE_HAS_PYTHON
#include "app/python/interpreter.h"
#endif
#if !TINYSCOPE_HAS_CPU_JIT
#include "engine/runtime/cpu/cpu_jit.h"
#endif

#if !TINYSCOPE_HAS_WINDOW
namespace tsgui {
bool display_available() { return false; }
bool check_trace_file(const std::string&, std::string* error) {
  if (error) *error = "this build has no window (configured with -DTINYSCOPE_WINDOW=OFF): traces open in a build with Qt";
  return false;
}
int main(int, char**) {
  std::fprintf(stderr, "tinyscope: this build has no window (configured with -DTINYSCOPE_WINDOW=OFF)\n");
  return 2;
}
}  // namespace tsgui

// the report draws with the window's models and graphs: a build without Qt has none
namespace tscli {
int cmd_report(const std::vector<std::string>&) {
  std::fprintf(stderr, "tinyscope report: this build has no report (configured with -DTINYSCOPE_WINDOW=OFF): the report "
               "is written by a build with Qt; `tinyscope run SCRIPT.py --json TRACE.json` saves a trace it can read\n");
  return 2;
}
int cmd_lesson(const std::vector<std::string>&) {
  std::fprintf(stderr, "tinyscope lesson: this build has no lessons (configured with -DTINYSCOPE_WINDOW=OFF): they are read by a "
               "build with Qt\n");
  return 2;
}
int cmd_trace(const std::vector<std::string>&) {
  std::fprintf(stderr, "tinyscope trace: this build has no trace reader (configured with -DTINYSCOPE_WINDOW=OFF): traces are "
               "read by a build with Qt\n");
  return 2;
}
}  // namespace tscli
#endif

#if !TINYSCOPE_HAS_PYTHON
namespace tsp {
namespace {
int no_python(const char* what) {
  std::fprintf(stderr, "tinyscope %s: this build has no Python (configured with -DTINYSCOPE_PYTHON=OFF); "
               "`tinyscope bench` and `tinyscope devices` run without it\n", what);
  return 2;
}
}  // namespace
int run_script(const ScriptRun&) { return no_python("run"); }
int serve(const std::function<bool(ScriptRun&)>&) { return no_python("serve"); }
}  // namespace tsp
#endif

#if !TINYSCOPE_HAS_CPU_JIT
namespace ts::cpu {
namespace {
[[noreturn]] void no_jit() {
  throw std::runtime_error("this build has no CPU compiler (configured with -DTINYSCOPE_CPU_JIT=OFF): DEV=CPU and CPU:LLVM "
                           "cannot compile; INTERP and VULKAN can");
}
}  // namespace
void* compile(SourceKind, const std::string&, const std::string&) { no_jit(); }
std::string assembly(SourceKind, const std::string&) { no_jit(); }
std::string target_description() { no_jit(); }
std::string compile_object(SourceKind, const std::string&) { no_jit(); }
void* load_object(const std::string&, const std::string&) { no_jit(); }
std::string object_key() { no_jit(); }
}  // namespace ts::cpu
#endif
