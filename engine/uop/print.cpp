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

}  // namespace ts
