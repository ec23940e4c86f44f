#pragma once
// The command line: `tinyscope run SCRIPT.py [--json TRACE.json]`, `tinyscope SCRIPT.py --run`, `bench`, `--help`.
#include "engine/realize/realize.h"

namespace tscli {

// The engine's configuration from the environment: DEV (the device), DEBUG, TINYSCOPE_REPEAT. The one place DEV is read.
ts::RealizeConfig realize_config_from_env();

// Dispatches on the subcommand; returns the process exit code.
int main(int argc, char** argv);

}  // namespace tscli
