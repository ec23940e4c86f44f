#include "engine/uop/ops.h"

#include <array>
#include <string>
#include <unordered_map>

namespace ts {

namespace {
constexpr std::array kNames = {
#define TS_OP_NAME(n) std::string_view(#n),
    TS_OPS(TS_OP_NAME)
#undef TS_OP_NAME
};
}

std::string_view op_name(Ops op) { return kNames[static_cast<size_t>(op)]; }

bool op_from_name(std::string_view name, Ops& out) {
  static const auto table = [] {
    std::unordered_map<std::string_view, Ops> t;
    for (size_t i = 0; i < kNames.size(); ++i) t[kNames[i]] = static_cast<Ops>(i);
    return t;
  }();
  auto it = table.find(name);
  if (it == table.end()) return false;
  out = it->second;
  return true;
}

namespace group {
bool unary(Ops o) {
  switch (o) {
    case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::SQRT: case Ops::RECIPROCAL: case Ops::NEG: case Ops::TRUNC:
      return true;
    default: return false;
  }
}
bool binary(Ops o) {
  switch (o) {
    case Ops::ADD: case Ops::MUL: case Ops::CDIV: case Ops::MAX: case Ops::CMOD: case Ops::CMPLT: case Ops::CMPNE:
    case Ops::CMPEQ: case Ops::XOR: case Ops::SHL: case Ops::SHR: case Ops::OR: case Ops::AND: case Ops::THREEFRY:
    case Ops::SUB: case Ops::FDIV: case Ops::POW: case Ops::FLOORDIV: case Ops::FLOORMOD:
      return true;
    default: return false;
  }
}
bool ternary(Ops o) { return o == Ops::WHERE || o == Ops::MULACC; }
bool movement(Ops o) {
  switch (o) {
    case Ops::RESHAPE: case Ops::EXPAND: case Ops::PERMUTE: case Ops::PAD: case Ops::SHRINK: case Ops::FLIP: return true;
    default: return false;
  }
}
bool commutative(Ops o) {
  switch (o) {
    case Ops::ADD: case Ops::MUL: case Ops::MAX: case Ops::CMPNE: case Ops::CMPEQ: case Ops::XOR: case Ops::AND: case Ops::OR:
      return true;
    default: return false;
  }
}
bool comparison(Ops o) { return o == Ops::CMPLT || o == Ops::CMPNE || o == Ops::CMPEQ; }
std::vector<Ops> ops_where(bool (*pred)(Ops)) {
  std::vector<Ops> out;
  for (size_t i = 0; i < kNames.size(); ++i)
    if (pred(static_cast<Ops>(i))) out.push_back(static_cast<Ops>(i));
  return out;
}
}  // namespace group

}  // namespace ts
