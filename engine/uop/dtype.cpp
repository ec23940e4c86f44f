#include "engine/uop/dtype.h"

#include "engine/uop/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <tuple>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

namespace ts {

namespace {
const DTypeInfo kVoid{-1, 0, "void", "void", '\0', DKind::Void, 1};
const DTypeInfo kBool{0, 1, "bool", "bool", '?', DKind::Bool, 2};
const DTypeInfo kInt8{1, 8, "signed char", "signed char", 'b', DKind::Signed, 3};
const DTypeInfo kUInt8{2, 8, "unsigned char", "unsigned char", 'B', DKind::Unsigned, 4};
const DTypeInfo kInt16{3, 16, "short", "short", 'h', DKind::Signed, 5};
const DTypeInfo kUInt16{4, 16, "unsigned short", "unsigned short", 'H', DKind::Unsigned, 6};
const DTypeInfo kInt32{5, 32, "int", "int", 'i', DKind::Signed, 7};
const DTypeInfo kUInt32{6, 32, "unsigned int", "unsigned int", 'I', DKind::Unsigned, 8};
const DTypeInfo kInt64{7, 64, "long", "long", 'q', DKind::Signed, 9};
const DTypeInfo kUInt64{8, 64, "unsigned long", "unsigned long", 'Q', DKind::Unsigned, 10};
// priorities as the reference's (they order the promotion lattice: the least upper bound is the lowest common one)
const DTypeInfo kFp8e4m3{10, 8, "float8_e4m3", "unsigned char", '\0', DKind::Float, 11};
const DTypeInfo kFp8e5m2{11, 8, "float8_e5m2", "unsigned char", '\0', DKind::Float, 12};
const DTypeInfo kFp8e4m3fnuz{10, 8, "float8_e4m3fnuz", "unsigned char", '\0', DKind::Float, 13};
const DTypeInfo kFp8e5m2fnuz{11, 8, "float8_e5m2fnuz", "unsigned char", '\0', DKind::Float, 14};
const DTypeInfo kHalf{12, 16, "half", "_Float16", 'e', DKind::Float, 15};
const DTypeInfo kBF16{13, 16, "__bf16", "__bf16", '\0', DKind::Float, 16};
const DTypeInfo kFloat{14, 32, "float", "float", 'f', DKind::Float, 17};
const DTypeInfo kDouble{15, 64, "double", "double", 'd', DKind::Float, 18};
const DTypeInfo kWeakInt{0, 800, "weakint", "long", 'q', DKind::WeakInt, 19};
const DTypeInfo kWeakFloat{9, 800, "weakfloat", "double", 'd', DKind::WeakFloat, 20};
}  // namespace

namespace dtypes {
const DType void_ = &kVoid, bool_ = &kBool, int8 = &kInt8, uint8 = &kUInt8, int16 = &kInt16, uint16 = &kUInt16,
            int32 = &kInt32, uint32 = &kUInt32, int64 = &kInt64, uint64 = &kUInt64, float16 = &kHalf,
            bfloat16 = &kBF16, float32 = &kFloat, float64 = &kDouble, weakint = &kWeakInt, weakfloat = &kWeakFloat,
            fp8e4m3 = &kFp8e4m3, fp8e5m2 = &kFp8e5m2, fp8e4m3fnuz = &kFp8e4m3fnuz, fp8e5m2fnuz = &kFp8e5m2fnuz;
DType default_float = &kFloat;
DType default_int = &kInt32;

void set_default(DType dt, bool float_default) {
  if (!dt || is_weak(dt) || (float_default ? !is_float(dt) : !is_int(dt)))
    throw Error(std::string(float_default ? "DEFAULT_FLOAT=" : "DEFAULT_INT=") + (dt ? dtype_repr(dt) : "?") + " is not a" +
                (float_default ? " float" : "n int") + " dtype");
  (float_default ? default_float : default_int) = dt;
}

DType from_name(std::string_view n) {
  static const std::map<std::string_view, DType> names = {
      {"void", void_},       {"bool", bool_},       {"int8", int8},     {"char", int8},       {"uint8", uint8},
      {"uchar", uint8},      {"int16", int16},      {"short", int16},   {"uint16", uint16},   {"ushort", uint16},
      {"int32", int32},      {"int", int32},        {"uint32", uint32}, {"uint", uint32},     {"int64", int64},
      {"long", int64},       {"uint64", uint64},    {"ulong", uint64},  {"float16", float16}, {"half", float16},
      {"bfloat16", bfloat16}, {"float32", float32}, {"float", float32}, {"float64", float64}, {"double", float64},
      {"weakint", weakint},  {"weakfloat", weakfloat},
      {"fp8e4m3", fp8e4m3},  {"fp8e5m2", fp8e5m2},  {"fp8e4m3fnuz", fp8e4m3fnuz}, {"fp8e5m2fnuz", fp8e5m2fnuz},
      {"float8_e4m3", fp8e4m3}, {"float8_e5m2", fp8e5m2}, {"float8_e4m3fnuz", fp8e4m3fnuz}, {"float8_e5m2fnuz", fp8e5m2fnuz}};
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
// parents in the promotion lattice: bool<weakint<int8/uint8<...<int64/uint64<weakfloat<each fp8<half/bf16<float<double
const std::map<DType, std::vector<DType>>& lattice() {
  using namespace dtypes;
  static const std::map<DType, std::vector<DType>> l = {
      {bool_, {weakint}},        {weakint, {int8, uint8}},    {int8, {int16}},          {int16, {int32}},
      {int32, {int64}},          {int64, {weakfloat}},        {uint8, {int16, uint16}}, {uint16, {int32, uint32}},
      {uint32, {int64, uint64}}, {uint64, {weakfloat}},       {weakfloat, {fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz}},
      {fp8e4m3, {float16, bfloat16}}, {fp8e5m2, {float16, bfloat16}}, {fp8e4m3fnuz, {float16, bfloat16}},
      {fp8e5m2fnuz, {float16, bfloat16}},
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

// the lowest of the common ancestors by (priority, bitsize, name): the priorities grow along the lattice, so that is
// its least upper bound; where two are unordered (e4m3 and e5m2 meet at half and bfloat16) the lower priority wins
static DType least_upper_uncached(DType a, DType b) {
  std::set<DType> sa, sb;
  ancestors(a, sa);
  ancestors(b, sb);
  auto key = [](DType d) { return std::tuple(d->priority, d->bitsize, std::string_view(d->name)); };
  DType best = nullptr;
  for (DType d : sa)
    if (sb.count(d) && (!best || key(d) < key(best))) best = d;
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
      {dtypes::float64, "double"}, {dtypes::weakint, "weakint"}, {dtypes::weakfloat, "weakfloat"}, {dtypes::void_, "void"},
      {dtypes::fp8e4m3, "fp8e4m3"}, {dtypes::fp8e5m2, "fp8e5m2"}, {dtypes::fp8e4m3fnuz, "fp8e4m3fnuz"},
      {dtypes::fp8e5m2fnuz, "fp8e5m2fnuz"}};
  auto it = names.find(d);
  return std::string("dtypes.") + (it == names.end() ? d->name : it->second);
}

// ---- fp8 <-> float on the host ----------------------------------------------------------------------
bool is_fp8(DType d) {
  return d == dtypes::fp8e4m3 || d == dtypes::fp8e5m2 || d == dtypes::fp8e4m3fnuz || d == dtypes::fp8e5m2fnuz;
}
bool is_fp8_fnuz(DType d) { return d == dtypes::fp8e4m3fnuz || d == dtypes::fp8e5m2fnuz; }

uint8_t fp8_max_code(DType d) { return d == dtypes::fp8e4m3 ? 0x7e : d == dtypes::fp8e5m2 ? 0x7b : 0x7f; }

Fp8Format fp8_format(DType d) {
  if (d == dtypes::fp8e4m3) return {4, 3, 7};
  if (d == dtypes::fp8e5m2) return {5, 2, 15};
  if (d == dtypes::fp8e4m3fnuz) return {4, 3, 8};
  return {5, 2, 16};
}

namespace {
// v >> s rounded to nearest, ties to even (s >= 1)
uint64_t shift_rne(uint64_t v, int s) {
  if (s >= 64) return 0;
  const uint64_t q = v >> s, rem = v & ((uint64_t{1} << s) - 1), half = uint64_t{1} << (s - 1);
  return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
}
}  // namespace

uint8_t float_to_fp8(double x, DType d) {
  const bool neg = std::signbit(x);
  if (!std::isfinite(x)) {
    if (is_fp8_fnuz(d)) return 0x80;
    if (d == dtypes::fp8e4m3) return neg ? 0xff : 0x7f;
    return static_cast<uint8_t>((neg ? 0x80 : 0) | (std::isinf(x) ? 0x7c : 0x7f));
  }
  const Fp8Format f = fp8_format(d);
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t code = 0;
  if (biased != 0) {  // (a float64 subnormal is far below half the smallest fp8)
    const uint64_t sig = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);  // the value is sig * 2^(e-52)
    const int e = biased - 1023;
    if (e + f.bias >= 1) {  // normal: the exponent field above the rounded mantissa (a carry moves it up one)
      code = (static_cast<uint64_t>(e + f.bias - 1) << f.man_bits) + shift_rne(sig, 52 - f.man_bits);
    } else {  // subnormal: a count of the smallest subnormal, 2^(1-bias-man_bits)
      code = shift_rne(sig, 53 - f.bias - f.man_bits - e);
    }
  }
  code = std::min<uint64_t>(code, fp8_max_code(d));
  if (is_fp8_fnuz(d) && code == 0) return 0;
  return static_cast<uint8_t>(code | (neg ? 0x80 : 0));
}

double fp8_to_float(uint8_t code, DType d) {
  if (is_fp8_fnuz(d) && code == 0x80) return std::nan("");
  const Fp8Format f = fp8_format(d);
  const int exp_max = (1 << f.exp_bits) - 1, man_max = (1 << f.man_bits) - 1;
  const int e = (code >> f.man_bits) & exp_max, m = code & man_max;
  const bool neg = (code & 0x80) != 0;
  if (d == dtypes::fp8e5m2 && e == exp_max) return std::copysign(m ? std::nan("") : HUGE_VAL, neg ? -1.0 : 1.0);
  if (d == dtypes::fp8e4m3 && e == exp_max && m == man_max) return std::nan("");
  const double v = e == 0 ? std::ldexp(m, 1 - f.bias - f.man_bits) : std::ldexp(m + (1 << f.man_bits), e - f.bias - f.man_bits);
  return neg ? -v : v;
}

}  // namespace ts
