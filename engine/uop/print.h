#pragma once
#include <string>
#include <string_view>

#include "engine/uop/uop.h"

namespace ts {

// The graph below `root` as text, one node a line in toposort order: `c3 = ADD float (c1, c2)  arg`
// (what DEBUG=5 prints for a kernel AST).
std::string render_graph(const UOpRef& root);

// `s` without its ANSI colour codes (ESC [ ... m) and line clears (ESC [ K): a coloured kernel name as text
std::string ansistrip(std::string_view s);

}  // namespace ts
