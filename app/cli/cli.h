#pragma once
// The command line: `tinyscope run SCRIPT.py [--json TRACE.json]`, `tinyscope SCRIPT.py --run`, `bench`, `report`,
// `--help`.
#include <string>
#include <string_view>

#include "engine/realize/realize.h"

namespace tscli {

// The codegen options (codegen_option_names()) set in the environment, into codegen_options().
void codegen_options_from_env();
// The engine's configuration from the environment: DEV (the device), DEBUG, TINYSCOPE_REPEAT, and the codegen options.
// The one place DEV is read.
ts::RealizeConfig realize_config_from_env();
// Registers the host devices, then the Vulkan devices as a provider (enumerated when first needed);
// TINYSCOPE_VK_VALIDATION=1 turns the Khronos validation layer on.
void install_vulkan();
// `code`, or 3 (with the messages on stderr) when the validation layer reported anything
int vulkan_checked_exit(int code);

// the helpers the commands share (cli.cpp and report.cpp)
bool ends_with(std::string_view s, std::string_view suffix);
// a positive count from the command line or a request: the whole text is a number in [1, max]
bool parse_count(const std::string& s, int max, int* out);
constexpr int kMaxRepeat = 10000;  // --repeat's and a request's "repeat" largest value
// a script to run must be a readable regular file ("" if it is, else the reason)
std::string script_problem(const std::string& script);
// the command line's usage text (--help)
const char* usage();

// Dispatches on the subcommand; returns the process exit code.
int main(int argc, char** argv);

}  // namespace tscli
