#pragma once
// The window's entry point, kept free of Qt so app/cli/cli.cpp can dispatch to it.

namespace tsgui {

// true if a window can be shown: QT_QPA_PLATFORM names a platform other than offscreen, or DISPLAY or
// WAYLAND_DISPLAY is set
bool display_available();
// tinyscope [SCRIPT.py | TRACE.json] [--dev DEV] [--run] [--screenshot OUT.png]: opens the window
int main(int argc, char** argv);

}  // namespace tsgui
