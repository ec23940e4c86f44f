#pragma once
#include <span>
#include <string>
#include <string_view>

namespace ts::trace {

// An engine source file that defines rewrite rules, embedded in the program at build time
// (engine/trace/embed_rule_sources.cmake writes the table from every engine source that calls rule( or grad_rule().
struct EmbeddedSource {
  const char* path;  // from the source root, as rule locations name it: "engine/uop/symbolic.cpp"
  const char* text;
};
std::span<const EmbeddedSource> embedded_rule_sources();

// A rule's row of its rule table, with kRuleContext lines of the table around it: the text of lines
// [first_line, first_line + lines) of the file. The row is the whole rule(...) call that starts on `line` (the line its
// location names), cut at kMaxRuleLines lines; a file that is not embedded, or a line past its end, gives no text.
struct RuleSource {
  int first_line = 0;  // 0: no text
  std::string text;
};
constexpr int kRuleContext = 2;
constexpr int kMaxRuleLines = 40;
RuleSource rule_source(std::string_view file, int line, std::string_view name = {});
// the same, over a file's text
RuleSource rule_source_in(std::string_view text, int line, std::string_view name = {});

}  // namespace ts::trace
