#pragma once
// The command line: `tinyscope run SCRIPT.py [--json TRACE.json]`, `tinyscope SCRIPT.py --run`, `bench`, `--help`.
namespace tscli {

// Dispatches on the subcommand; returns the process exit code.
int main(int argc, char** argv);

}  // namespace tscli
