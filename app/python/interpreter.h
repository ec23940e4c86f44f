#pragma once
// The embedded Python host: starts the interpreter with the tinyscope module and the tinygrad aliases and
// runs a user's script as __main__.
#include <functional>
#include <string>
#include <vector>

namespace tsp {

struct ScriptRun {
  std::string script;             // path of the .py file
  std::vector<std::string> args;  // sys.argv[1:]
  std::string json_path;          // write the trace here when non-empty
  std::string device;             // DEV as given (recorded in the trace)
  std::function<void()> before_save;  // called before the trace is written (adds fields with ts::trace::set_field)
};

// Runs the script (ts::install_realize() must have been called). Errors print a Python traceback to stderr.
// Returns the process exit code: 0 on success, 1 on an error, or the script's sys.exit code.
int run_script(const ScriptRun& run);

// The warm child of the window: starts the interpreter and the prelude first, then calls `wait` (which blocks
// until it knows the script, fills `run` and returns true; false ends without running anything) and runs it.
// Returns like run_script.
int serve(const std::function<bool(ScriptRun&)>& wait);

}  // namespace tsp
