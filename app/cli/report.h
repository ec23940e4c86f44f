#pragma once
// `tinyscope report`: one self-contained HTML page of a run or a saved trace (app/cli/report.cpp), and `tinyscope
// trace`: a saved trace read on the command line (app/cli/trace_cli.cpp). Kept free of Qt so
// app/cli/cli.cpp can dispatch to it; a build without the window has no report (app/cli/absent.cpp says so).
#include <string>
#include <vector>

namespace tscli {

// report (SCRIPT.py | TRACE.json) -o REPORT.html [--dev DEV] [--compare DEV | TRACE2.json] [--repeat N]
// [--save-trace T.json] [-- ARGS...]: the arguments after `report`; returns the exit code (0: the page was written)
int cmd_report(const std::vector<std::string>& args);

// trace TRACE.json [--list] [-c CONTEXT [-p PASS [--rewrites]] [--uops] [--program]] [-t [N]] [--calls] [--memory]
// [--json]: a recorded run on the command line (app/cli/trace_cli.cpp; like the report, built with the window's Qt)
int cmd_trace(const std::vector<std::string>& args);

// lesson LESSON.md [--dev DEV] [--json] [--answers A,B,...] [--trace-out T.json]: a lesson's questions answered by a run
// of its script, without the window (app/cli/lesson_cli.cpp; built with the window's Qt)
int cmd_lesson(const std::vector<std::string>& args);

}  // namespace tscli
