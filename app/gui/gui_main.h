#pragma once
// The window's entry point, kept free of Qt so app/cli/cli.cpp can dispatch to it.

#include <string>

namespace tsgui {

// true if a window can be shown: QT_QPA_PLATFORM names a platform other than offscreen, or DISPLAY or
// WAYLAND_DISPLAY is set
bool display_available();
// loads a trace as the window would (viewer/model/trace_check.h), without a window; false with *error naming the problem
bool check_trace_file(const std::string& path, std::string* error);
// tinyscope [SCRIPT.py | TRACE.json] [--dev DEV] [--run] [--screenshot OUT.png]: opens the window
int main(int argc, char** argv);

}  // namespace tsgui
