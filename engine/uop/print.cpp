#include "engine/uop/print.h"

#include <sstream>
#include <unordered_map>

namespace ts {

std::string render_graph(const UOpRef& root) {
  std::ostringstream o;
  std::unordered_map<const UOp*, size_t> num;
  for (auto& u : root->toposort()) {
    size_t n = num.size();
    num[u.get()] = n;
    o << "c" << n << " = " << op_name(u->op) << ' ' << u->dtype->name << " (";
    for (size_t i = 0; i < u->src.size(); ++i) o << (i ? ", " : "") << 'c' << num.at(u->src[i].get());
    o << ')';
    if (!std::holds_alternative<std::monostate>(u->arg)) o << "  " << arg_repr(u->arg);
    o << '\n';
  }
  return o.str();
}

std::string ansistrip(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      if (j < s.size() && s[j] == 'K') { i = j; continue; }
      while (j < s.size() && s[j] != 'm') ++j;
      i = j;
      continue;
    }
    out += s[i];
  }
  return out;
}

}  // namespace ts
