#include "engine/uop/dtype.h"

#include <array>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace ts {

namespace {
const DTypeInfo kVoid{-1, 0, "void", "void", '\0', DKind::Void};
const DTypeInfo kBool{0, 1, "bool", "bool", '?', DKind::Bool};
const DTypeInfo kInt8{1, 8, "signed char", "signed char", 'b', DKind::Signed};
const DTypeInfo kUInt8{2, 8, "unsigned char", "unsigned char", 'B', DKind::Unsigned};
const DTypeInfo kInt16{3, 16, "short", "short", 'h', DKind::Signed};
const DTypeInfo kUInt16{4, 16, "unsigned short", "unsigned short", 'H', DKind::Unsigned};
const DTypeInfo kInt32{5, 32, "int", "int", 'i', DKind::Signed};
const DTypeInfo kUInt32{6, 32, "unsigned int", "unsigned int", 'I', DKind::Unsigned};
const DTypeInfo kInt64{7, 64, "long", "long", 'q', DKind::Signed};
const DTypeInfo kUInt64{8, 64, "unsigned long", "unsigned long", 'Q', DKind::Unsigned};
const DTypeInfo kHalf{11, 16, "half", "_Float16", 'e', DKind::Float};
const DTypeInfo kBF16{12, 16, "__bf16", "__bf16", '\0', DKind::Float};
const DTypeInfo kFloat{13, 32, "float", "float", 'f', DKind::Float};
const DTypeInfo kDouble{14, 64, "double", "double", 'd', DKind::Float};
const DTypeInfo kWeakInt{0, 800, "weakint", "long", 'q', DKind::WeakInt};
const DTypeInfo kWeakFloat{0, 800, "weakfloat", "double", 'd', DKind::WeakFloat};
}  // namespace

namespace dtypes {
const DType void_ = &kVoid, bool_ = &kBool, int8 = &kInt8, uint8 = &kUInt8, int16 = &kInt16, uint16 = &kUInt16,
            int32 = &kInt32, uint32 = &kUInt32, int64 = &kInt64, uint64 = &kUInt64, float16 = &kHalf,
            bfloat16 = &kBF16, float32 = &kFloat, float64 = &kDouble, weakint = &kWeakInt, weakfloat = &kWeakFloat;

DType from_name(std::string_view n) {
  static const std::map<std::string_view, DType> names = {
      {"void", void_},       {"bool", bool_},       {"int8", int8},     {"char", int8},       {"uint8", uint8},
      {"uchar", uint8},      {"int16", int16},      {"short", int16},   {"uint16", uint16},   {"ushort", uint16},
      {"int32", int32},      {"int", int32},        {"uint32", uint32}, {"uint", uint32},     {"int64", int64},
      {"long", int64},       {"uint64", uint64},    {"ulong", uint64},  {"float16", float16}, {"half", float16},
      {"bfloat16", bfloat16}, {"float32", float32}, {"float", float32}, {"float64", float64}, {"double", float64},
      {"weakint", weakint},  {"weakfloat", weakfloat}};
  auto it = names.find(n);
  return it == names.end() ? nullptr : it->second;
}
}  // namespace dtypes

DType strong(DType d) {
  if (d == dtypes::weakint) return dtypes::default_int;
  if (d == dtypes::weakfloat) return dtypes::default_float;
  return d;
}

namespace {
// parents in the promotion lattice: bool<weakint<int8/uint8<...<int64/uint64<weakfloat<half/bf16<float<double
const std::map<DType, std::vector<DType>>& lattice() {
  using namespace dtypes;
  static const std::map<DType, std::vector<DType>> l = {
      {bool_, {weakint}},        {weakint, {int8, uint8}},    {int8, {int16}},          {int16, {int32}},
      {int32, {int64}},          {int64, {weakfloat}},        {uint8, {int16, uint16}}, {uint16, {int32, uint32}},
      {uint32, {int64, uint64}}, {uint64, {weakfloat}},       {weakfloat, {float16, bfloat16}},
      {float16, {float32}},      {bfloat16, {float32}},       {float32, {float64}},     {float64, {}}};
  return l;
}
void ancestors(DType d, std::set<DType>& out) {
  if (!out.insert(d).second) return;
  auto it = lattice().find(d);
  if (it != lattice().end())
    for (DType p : it->second) ancestors(p, out);
}
}  // namespace

static DType least_upper_uncached(DType a, DType b) {
  std::set<DType> sa, sb;
  ancestors(a, sa);
  ancestors(b, sb);
  DType best = nullptr;
  for (DType d : sa)
    if (sb.count(d) && (!best || d->priority < best->priority || (is_weak(best) && !is_weak(d) && d->priority == best->priority)))
      best = d;
  // weak types have priority 0: pick the smallest by lattice order instead
  std::vector<DType> common;
  for (DType d : sa)
    if (sb.count(d)) common.push_back(d);
  for (DType c : common) {
    bool minimal = true;
    for (DType o : common) {
      if (o == c) continue;
      std::set<DType> anc;
      ancestors(o, anc);
      if (anc.count(c)) { minimal = false; break; }  // c is above o
    }
    if (minimal) return c;
  }
  return best ? best : dtypes::float64;
}

DType least_upper(DType a, DType b) {
  if (a == b) return a;
  // every binary op of a graph asks this; the answer for a pair never changes (dtypes live as long as the process)
  struct PairHash {
    size_t operator()(const std::pair<DType, DType>& p) const { return std::hash<DType>()(p.first) * 31 + std::hash<DType>()(p.second); }
  };
  thread_local std::unordered_map<std::pair<DType, DType>, DType, PairHash> cache;
  auto [it, fresh] = cache.try_emplace({a, b}, nullptr);
  if (fresh) it->second = least_upper_uncached(a, b);
  return it->second;
}

DType sum_acc(DType d) {
  if (is_unsigned(d)) return d->bitsize >= 32 ? d : dtypes::uint32;
  if (d->kind == DKind::Signed || is_bool(d)) return (d->bitsize >= 32 && !is_bool(d)) ? d : dtypes::int32;
  if (is_weak(d)) return strong(d);
  return d->bitsize >= 32 ? d : dtypes::float32;
}

std::string dtype_repr(DType d) {
  static const std::map<DType, const char*> names = {
      {dtypes::bool_, "bool"},     {dtypes::int8, "char"},     {dtypes::uint8, "uchar"},     {dtypes::int16, "short"},
      {dtypes::uint16, "ushort"},  {dtypes::int32, "int"},     {dtypes::uint32, "uint"},     {dtypes::int64, "long"},
      {dtypes::uint64, "ulong"},   {dtypes::float16, "half"},  {dtypes::bfloat16, "bfloat16"}, {dtypes::float32, "float"},
      {dtypes::float64, "double"}, {dtypes::weakint, "weakint"}, {dtypes::weakfloat, "weakfloat"}, {dtypes::void_, "void"}};
  auto it = names.find(d);
  return std::string("dtypes.") + (it == names.end() ? d->name : it->second);
}

}  // namespace ts
