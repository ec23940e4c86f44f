#include "app/python/interpreter.h"
#include "engine/realize/realize.h"
#include "engine/uop/stack.h"

#include <pybind11/embed.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/python/prelude_source.h"
#include "engine/trace/trace.h"
#include "engine/uop/atomic_file.h"

namespace py = pybind11;

namespace tsp {

namespace {
// ---- stop signals: SIGINT, SIGTERM, SIGHUP while the script runs ----------------------------------------------
// The first one stops the script at its next line (a KeyboardInterrupt, as Python's own SIGINT does; a long engine
// call ends first), so the trace of what ran is still written whole; a second one ends the process at once, removing
// the trace's unfinished temporary file so the trace there before stays as it was.
volatile sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
  if (g_stop_signal == 0) {
    g_stop_signal = sig;
    PyErr_SetInterruptEx(SIGINT);  // async-signal-safe: Python's SIGINT handler raises KeyboardInterrupt
    return;
  }
  static const char msg[] = "\ntinyscope: a second stop signal: ending now, without writing the trace\n";
  [[maybe_unused]] const ssize_t n = ::write(2, msg, sizeof msg - 1);
  ts::remove_unfinished_files();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK;  // as Python's own handlers: no SA_RESTART, so a sleep or a read returns to Python
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(s, &sa, nullptr);
}

// "signal 15 (SIGTERM, Terminated)"
std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ", " + strsignal(sig) + ")" : std::string());
}

// the prelude defines the python half of the API and the tinygrad aliases
void run_prelude() {
  py::dict globals;
  globals["__name__"] = "tinyscope._prelude";
  globals["__builtins__"] = py::module_::import("builtins");
  const char* name = "<tinyscope prelude.py>";
  py::str source(kPreludeSource);
  // tracebacks through prelude functions (indexing, pad, ...) show its source lines
  py::module_::import("linecache").attr("cache")[name] =
      py::make_tuple(py::len(source), py::none(), source.attr("splitlines")(true), name);
  py::object code = py::module_::import("builtins").attr("compile")(source, name, "exec");
  py::object result = py::reinterpret_steal<py::object>(PyEval_EvalCode(code.ptr(), globals.ptr(), globals.ptr()));
  if (!result) throw py::error_already_set();
  py::module_::import("tinyscope").attr("_prelude") = globals;
}

void flush_python_streams() {
  PyObject* type = nullptr;  // flushing must not clobber a pending error
  PyObject* value = nullptr;
  PyObject* tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  for (const char* name : {"stdout", "stderr"}) {
    PyObject* stream = PySys_GetObject(name);  // borrowed
    if (stream && stream != Py_None) {
      PyObject* r = PyObject_CallMethod(stream, "flush", nullptr);
      Py_XDECREF(r);
      PyErr_Clear();
    }
  }
  PyErr_Restore(type, value, tb);
  std::fflush(stdout);
  std::fflush(stderr);
}

// a fresh __main__ module whose dict the script runs in; the file name makes tracebacks name the script
py::module_ make_main_module(const std::string& path) {
  py::module_ types = py::module_::import("types");
  py::module_ main = types.attr("ModuleType")("__main__");
  main.attr("__file__") = path;
  main.attr("__builtins__") = py::module_::import("builtins");
  main.attr("__cached__") = py::none();
  py::module_::import("sys").attr("modules")["__main__"] = main;
  return main;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open script '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// print the traceback of a python error; returns the exit code (SystemExit keeps its code)
int report(py::error_already_set& e, std::string* message) {
  if (e.matches(PyExc_SystemExit)) {
    py::object code = e.value().attr("code");
    if (code.is_none()) return 0;
    if (py::isinstance<py::int_>(code)) return code.cast<int>();
    py::print(code, py::arg("file") = py::module_::import("sys").attr("stderr"));
    return 1;
  }
  std::string text;
  try {
    // a SyntaxError raised by compile() has no traceback object: format from the exception alone
    py::module_ tb = py::module_::import("traceback");
    py::object trace = e.trace() ? py::reinterpret_borrow<py::object>(e.trace()) : py::none();
    py::object lines = tb.attr("format_exception")(e.type(), e.value(), trace);
    text = py::str("").attr("join")(lines).cast<std::string>();
  } catch (const std::exception&) {
    text = std::string(e.what()) + "\n";
  }
  if (message) *message = text;
  flush_python_streams();
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  return 1;
}

// what the script printed (the prelude's console tee, with the error's traceback), as the trace's "console"
std::string console_json(const std::string& error) {
  try {
    return py::module_::import("tinyscope").attr("_prelude")["_console_stop"](error).cast<std::string>();
  } catch (const std::exception&) {  // the prelude never ran: nothing was kept
    PyErr_Clear();
    return "[]";
  }
}

void write_trace(const ScriptRun& run, const std::string& result_json, const std::string& error) {
  nlohmann::json result = nlohmann::json::parse(result_json);
  ts::trace::set_field("result", result);
  ts::trace::set_field(ts::trace::key::kConsole, nlohmann::json::parse(console_json(error)));
  ts::trace::set_field("script", run.script);
  ts::trace::set_field("device", run.device);
  if (!error.empty()) ts::trace::set_field("error", error);
  if (run.before_save) run.before_save();
  ts::trace::save(run.json_path);
}

// the innermost frame of the user's script: "script.py:12" for the engine's DEBUG lines
std::string script_location(const std::string& script) {
  py::gil_scoped_acquire gil;
  PyFrameObject* cur = PyEval_GetFrame();  // borrowed
  py::object hold = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(cur));
  while (cur) {
    py::object code = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyFrame_GetCode(cur)));
    std::string file = py::str(code.attr("co_filename"));
    if (file == script) return file.substr(file.find_last_of('/') + 1) + ":" + std::to_string(PyFrame_GetLineNumber(cur));
    hold = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyFrame_GetBack(cur)));  // new reference, owned
    cur = reinterpret_cast<PyFrameObject*>(hold.ptr());
  }
  return {};
}

int run_in_interpreter(const ScriptRun& run, bool prelude_done = false) {
  std::string error;
  int code = 0;
  std::string result_json = "null";
  ts::caller_location_hook() = [script = run.script] { return script_location(script); };
  try {
    if (!prelude_done) run_prelude();
    catch_stop_signals();  // after the interpreter set its own
    if (!run.json_path.empty()) py::module_::import("tinyscope").attr("_prelude")["_console_start"]();
    py::module_ main = make_main_module(run.script);
    py::object compiled = py::module_::import("builtins").attr("compile")(py::bytes(read_file(run.script)), run.script, "exec",
                                                                         py::arg("dont_inherit") = true);
    py::object globals = main.attr("__dict__");
    py::object r = py::reinterpret_steal<py::object>(PyEval_EvalCode(compiled.ptr(), globals.ptr(), globals.ptr()));
    if (!r) throw py::error_already_set();
    flush_python_streams();
    if (!run.json_path.empty()) result_json = py::module_::import("tinyscope").attr("_prelude")["_result_json"](globals).cast<std::string>();
  } catch (py::error_already_set& e) {
    code = report(e, &error);
  } catch (const std::exception& e) {  // a C++ error outside any python call (reading the script, ...)
    flush_python_streams();
    std::fprintf(stderr, "tinyscope: %s\n", e.what());
    error = e.what();
    code = 1;
  }
  if (const int sig = g_stop_signal) {  // the exit status a shell gives a process a signal ended: 128 + the signal
    const std::string why = "the run was stopped by " + signal_text(sig);
    flush_python_streams();
    std::fprintf(stderr, "tinyscope: %s%s\n", why.c_str(),
                 run.json_path.empty() ? "" : "; the trace holds what ran before it");
    error += (error.empty() || error.back() == '\n' ? "" : "\n") + why + "\n";
    code = 128 + sig;
  }
  if (!run.json_path.empty()) {
    try {
      write_trace(run, result_json, error);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tinyscope: %s\n", e.what());
      return code ? code : 1;
    }
  }
  flush_python_streams();
  return code;
}
}  // namespace

namespace {
// Python and the engine run on one thread with a big stack (see engine/uop/stack.h): a script may build a
// graph 100,000 ops deep, and the engine's walks recurse along it.
int serve_here(const std::function<bool(ScriptRun&)>& wait);
int on_big_stack(const std::function<int()>& body) {
  int code = 1;
  ts::run_with_big_stack([&] { code = body(); });
  return code;
}
// Python's UTF-8 mode: scripts, the files they open and their output are UTF-8 whatever the locale (a C or POSIX
// locale would make open() read ASCII); done before the interpreter starts, as only a pre-initialization can
void utf8_mode() {
  PyPreConfig pre;
  PyPreConfig_InitPythonConfig(&pre);
  pre.utf8_mode = 1;
  PyStatus st = Py_PreInitialize(&pre);
  if (PyStatus_Exception(st)) Py_ExitStatusException(st);
}
}  // namespace

int run_script(const ScriptRun& run) {
  return on_big_stack([&] {
    std::vector<const char*> argv{run.script.c_str()};
    for (const auto& a : run.args) argv.push_back(a.c_str());
    utf8_mode();
    py::scoped_interpreter guard{true, static_cast<int>(argv.size()), argv.data(), true};
    return run_in_interpreter(run);
  });
}

int serve(const std::function<bool(ScriptRun&)>& wait) {
  return on_big_stack([&] { return serve_here(wait); });
}

namespace {
int serve_here(const std::function<bool(ScriptRun&)>& wait) {
  const char* argv0 = "tinyscope";
  utf8_mode();
  py::scoped_interpreter guard{true, 1, &argv0, true};
  bool prelude_done = false;
  try {
    run_prelude();
    prelude_done = true;
  } catch (py::error_already_set&) {
    // the prelude runs again with the script, and its error is reported there
  }
  ScriptRun run;
  if (!wait(run)) return 0;
  py::list argv;
  argv.append(run.script);
  for (const auto& a : run.args) argv.append(a);
  py::module_::import("sys").attr("argv") = argv;
  return run_in_interpreter(run, prelude_done);
}
}  // namespace

}  // namespace tsp
