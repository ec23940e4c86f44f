#pragma once
// `tinyscope report`: one self-contained HTML page of a run or a saved trace (app/cli/report.cpp). Kept free of Qt so
// app/cli/cli.cpp can dispatch to it; a build without the window has no report (app/cli/absent.cpp says so).
#include <string>
#include <vector>

namespace tscli {

// report (SCRIPT.py | TRACE.json) -o REPORT.html [--dev DEV] [--compare DEV | TRACE2.json] [--repeat N]
// [--save-trace T.json] [-- ARGS...]: the arguments after `report`; returns the exit code (0: the page was written)
int cmd_report(const std::vector<std::string>& args);

}  // namespace tscli
