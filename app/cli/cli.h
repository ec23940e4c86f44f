#pragma once
// The command line: `tinyscope run SCRIPT.py [--json TRACE.json]`, `tinyscope SCRIPT.py --run`, `bench`, `--help`.
#include "engine/realize/realize.h"

namespace tscli {

// The engine's configuration from the environment: DEV (the device), DEBUG, TINYSCOPE_REPEAT. The one place DEV is read.
ts::RealizeConfig realize_config_from_env();
// Registers the host devices, then the Vulkan devices as a provider (enumerated when first needed);
// TINYSCOPE_VK_VALIDATION=1 turns the Khronos validation layer on.
void install_vulkan();
// `code`, or 3 (with the messages on stderr) when the validation layer reported anything
int vulkan_checked_exit(int code);

// Dispatches on the subcommand; returns the process exit code.
int main(int argc, char** argv);

}  // namespace tscli
