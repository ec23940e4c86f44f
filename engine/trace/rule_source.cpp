#include "engine/trace/rule_source.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ts::trace {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// the offset of the ')' closing the '(' at `open`, skipping comments and string and character literals; npos if the
// text ends first
size_t closing_paren(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    const char c = s[i], next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && next == '/') {
      i = s.find('\n', i);
      if (i == std::string_view::npos) return i;
    } else if (c == '/' && next == '*') {
      i = s.find("*/", i + 2);
      if (i == std::string_view::npos) return i;
      ++i;
    } else if (c == '"' && i > 0 && s[i - 1] == 'R' && (i < 2 || !ident_char(s[i - 2]) || s[i - 2] == '8' || s[i - 2] == 'u' ||
                                                         s[i - 2] == 'U' || s[i - 2] == 'L')) {
      // a raw string: R"delim( ... )delim"
      const size_t paren = s.find('(', i);
      if (paren == std::string_view::npos) return paren;
      const std::string end = ")" + std::string(s.substr(i + 1, paren - i - 1)) + "\"";
      i = s.find(end, paren);
      if (i == std::string_view::npos) return i;
      i += end.size() - 1;
    } else if (c == '"' || (c == '\'' && (i == 0 || !ident_char(s[i - 1])))) {  // not a digit separator (1'000)
      for (++i; i < s.size() && s[i] != c && s[i] != '\n'; ++i)
        if (s[i] == '\\') ++i;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

RuleSource rule_source_in(std::string_view text, int line, std::string_view name) {
  RuleSource out;
  std::vector<size_t> starts{0};  // starts[k]: the offset of line k + 1
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' && i + 1 < text.size()) starts.push_back(i + 1);
  const int lines = static_cast<int>(starts.size());
  if (line < 1 || line > lines || text.empty()) return out;
  auto line_of = [&](size_t offset) { return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin()); };
  auto line_text = [&](int l) {
    const size_t b = starts[l - 1], e = l < lines ? starts[l] - 1 : text.size() - (text.back() == '\n' ? 1 : 0);
    return text.substr(b, e - b);
  };
  // the rule(...) (or rule<Context>(...), or a helper named ..._rule(...)) call that starts on `line` (the one naming
  // the rule when there are several), else the nearest one above whose call reaches it
  int first = line, last = line;
  for (int l = line; l >= std::max(1, line - kMaxRuleLines); --l) {
    const std::string_view t = line_text(l);
    size_t best = std::string_view::npos;
    for (size_t p = t.find("rule"); p != std::string_view::npos; p = t.find("rule", p + 1)) {
      // rule(...) or rule<Context>(...): `open` is the call's parenthesis
      size_t open = p + 4;
      if (open < t.size() && t[open] == '<') {
        const size_t close = t.find('>', open);
        if (close == std::string_view::npos) continue;
        open = close + 1;
      }
      if (open >= t.size() || t[open] != '(') continue;
      std::string_view rest = t.substr(open + 1);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      const bool named = !name.empty() && rest.starts_with('"' + std::string(name) + '"');
      if (best == std::string_view::npos || named) best = open;
      if (named) break;
    }
    if (best == std::string_view::npos) continue;
    const size_t close = closing_paren(text, starts[l - 1] + best);
    const int end = close == std::string_view::npos ? lines : line_of(close);
    if (end < line) break;  // the nearest call above ends before the line: the line is no rule call's
    first = l, last = end;
    break;
  }
  last = std::min(last, first + kMaxRuleLines - 1);
  out.first_line = std::max(1, first - kRuleContext);
  const int shown_last = std::min(lines, last + kRuleContext);
  for (int l = out.first_line; l <= shown_last; ++l) {
    out.text += line_text(l);
    if (l < shown_last) out.text += '\n';
  }
  return out;
}

RuleSource rule_source(std::string_view file, int line, std::string_view name) {
  for (const EmbeddedSource& s : embedded_rule_sources())
    if (file == s.path) return rule_source_in(s.text, line, name);
  return {};
}

}  // namespace ts::trace
