// transcendental decompositions: float32 EXP2 and LOG2 as polynomials ("transcendental decompositions"; the reference's
// codegen/decomp/transcendental.py: xexp2, xlog2).
#include "engine/codegen/lowering.h"

#include <limits>

#include "engine/codegen/lowering_internal.h"

namespace ts {

using namespace lowering;

namespace {

// ---- EXP2 / LOG2 as polynomials ------------------------------------------------------------------
// The CPU compilers make exp2f/log2f scalar libm calls; as the reference's transcendental pass (xexp2, xlog2, the
// SLEEF algorithms) float32 EXP2 and LOG2 become plain arithmetic the vectorizer can carry. The structure and
// constants are the reference's float32 path's, so the C computes what the reference's CPU computes. Where the
// reference shifts signed ints into the sign bit (undefined in C) the shifts run on uint32, the same bits.
UOpRef f32c(double v) { return uconst(dtypes::float32, static_cast<float>(v)); }
UOpRef i32c(int64_t v) { return uconst_int(dtypes::int32, v); }
// Horner: ((c0*x + c1)*x + c2)...
UOpRef poly(const UOpRef& x, std::initializer_list<double> cs) {
  UOpRef acc;
  for (double c : cs) acc = acc ? alu(Ops::ADD, alu(Ops::MUL, acc, x), f32c(c)) : f32c(c);
  return acc;
}
// 2^e as a float for an int32 e in [-126, 127]: (e + 127) << 23 in the exponent bits
UOpRef pow2i(const UOpRef& e) {
  return UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::SHL, ucast(alu(Ops::ADD, e, i32c(127)), dtypes::uint32), u32c(23))});
}
UOpRef xexp2(const UOpRef& d) {
  const double inf = std::numeric_limits<double>::infinity();
  UOpRef nan = alu(Ops::CMPNE, d, d);
  // +-inf and NaN computed as 0 (their results are set at the end)
  UOpRef x = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(-inf)), d, f32c(0));
  x = alu(Ops::WHERE, nan, f32c(0), x);
  x = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(inf)), x, f32c(0));
  // q = round(x) (halves away from 0), s = x - q in [-1/2, 1/2]
  UOpRef q = ucast(alu(Ops::ADD, x, alu(Ops::WHERE, alu(Ops::CMPLT, x, f32c(0)), f32c(-0.5), f32c(0.5))), dtypes::int32);
  UOpRef s = alu(Ops::SUB, x, ucast(q, dtypes::float32));
  UOpRef u = poly(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0, 1.0});
  // u * 2^q as 2^(q>>1) * 2^(q - (q>>1)): 2^q alone leaves the exponent's range at q = 128 and below -126
  UOpRef h = alu(Ops::SHR, q, i32c(1));
  u = alu(Ops::MUL, alu(Ops::MUL, u, pow2i(h)), pow2i(alu(Ops::SUB, q, h)));
  u = alu(Ops::WHERE, alu(Ops::CMPLT, d, f32c(128)), u, f32c(inf));
  u = alu(Ops::WHERE, alu(Ops::CMPLT, d, f32c(-150)), f32c(0), u);
  return alu(Ops::WHERE, nan, f32c(std::numeric_limits<double>::quiet_NaN()), u);
}
UOpRef xlog2(const UOpRef& d) {
  const double inf = std::numeric_limits<double>::infinity();
  // denormals (and, as the reference, everything below 1e-4) scaled by 2^64 first so the exponent bits see them
  UOpRef denormal = alu(Ops::CMPLT, d, f32c(1e-4));
  UOpRef a = alu(Ops::WHERE, denormal, alu(Ops::MUL, d, f32c(18446744073709551616.0)), d);
  // e = ilogb(a / 0.75): the mantissa m = a * 2^-e lands in [0.75, 1.5)
  UOpRef bits = UOp::make(Ops::BITCAST, dtypes::int32, {alu(Ops::MUL, a, f32c(1.0 / 0.75))});
  UOpRef ei = alu(Ops::ADD, alu(Ops::AND, alu(Ops::SHR, bits, i32c(23)), i32c(255)), i32c(-127));
  UOpRef abits = UOp::make(Ops::BITCAST, dtypes::uint32, {a});
  UOpRef m = UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::SUB, abits, alu(Ops::SHL, ucast(ei, dtypes::uint32), u32c(23)))});
  UOpRef e = ucast(ei, dtypes::float32);
  e = alu(Ops::WHERE, denormal, alu(Ops::ADD, e, f32c(-64)), e);
  // log2(m) = 2*atanh(x)/ln 2 with x = (m-1)/(m+1): x * (c + x^2 * t(x^2)), 1/ln 2 * 2 in two parts
  UOpRef x = UOp::make(Ops::FDIV, dtypes::float32, {alu(Ops::ADD, m, f32c(-1)), alu(Ops::ADD, m, f32c(1))});
  UOpRef x2 = alu(Ops::MUL, x, x);
  UOpRef t = poly(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120});
  UOpRef r = alu(Ops::ADD, alu(Ops::ADD, alu(Ops::MUL, t, alu(Ops::MUL, x, x2)), e), alu(Ops::MUL, x, f32c(2.8853900432586669922)));
  r = alu(Ops::ADD, r, alu(Ops::MUL, x, f32c(3.2734474483568488616e-08)));
  r = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(inf)), r, f32c(inf));
  r = alu(Ops::WHERE, alu(Ops::CMPNE, d, f32c(0)), r, f32c(-inf));  // +-0
  // (the reference's last check, 1/d != -inf for -0 on devices where -0 == 0 fails, is left out: on the CPU it only
  // turns the NaN of a negative d above -2^-128 into -inf)
  return alu(Ops::WHERE, alu(Ops::OR, alu(Ops::CMPNE, d, d), alu(Ops::CMPLT, d, f32c(-0.0))), f32c(std::numeric_limits<double>::quiet_NaN()), r);
}

}  // namespace

const PatternMatcher& pm_transcendental() {
  auto f16 = [](const UOpRef& x) -> UOpRef {
    if (x->dtype != dtypes::float16) return nullptr;
    return ucast(UOp::make(x->op, dtypes::float32, {ucast(x->src[0], dtypes::float32)}, x->arg), dtypes::float16);
  };
  static const PatternMatcher pm({
      rule("exp2(x) -> 2^round(x) * poly(x - round(x)) (float32)", {Ops::EXP2},
           [](const UOpRef& x) { return x->dtype == dtypes::float32 ? xexp2(x->src[0]) : nullptr; }),
      rule("log2(x) -> exponent(x) + poly(mantissa(x)) (float32)", {Ops::LOG2},
           [](const UOpRef& x) { return x->dtype == dtypes::float32 ? xlog2(x->src[0]) : nullptr; }),
      rule("exp2(x) -> exp2(x.cast(float32)).cast(float16) (float16)", {Ops::EXP2}, f16),
      rule("log2(x) -> log2(x.cast(float32)).cast(float16) (float16)", {Ops::LOG2}, f16),
  });
  return pm;
}

}  // namespace ts
