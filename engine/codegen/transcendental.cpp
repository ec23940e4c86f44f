// transcendental decompositions: float32 EXP2 and LOG2 as polynomials, SIN as a range reduction and a polynomial
// ("transcendental decompositions"; the reference's codegen/decomp/transcendental.py: xexp2, xlog2, xsin).
#include "engine/codegen/lowering.h"

#include <array>
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

// ---- SIN: reduction modulo pi/2 and a polynomial on [-pi/2, pi/2] ----------------------------------------------
// As the reference's xsin (the SLEEF algorithms): |x| below 30 reduced by Cody-Waite (q = round(x/pi), x - q*pi in
// several parts of pi), larger |x| by Payne-Hanek (x * 2/pi in 64-bit fixed point from 190 bits of 2/pi), so sin stays
// within an ulp or so at every magnitude (GLSL's sin is only accurate near [-pi, pi]). float32 and float64.
struct SinTypes {
  DType f, i, u;  // the float, the int of its width (quadrants of float64 go through int64), the uint of its bits
  int mant, exp_bits;
};
SinTypes sin_types(DType f) {
  if (f == dtypes::float64) return {f, dtypes::int64, dtypes::uint64, 52, 11};
  return {f, dtypes::int32, dtypes::uint32, 23, 8};
}
UOpRef fc(DType dt, double v) { return uconst(dt, v); }
UOpRef ic(DType dt, int64_t v) { return uconst_int(dt, v); }
UOpRef polyd(const UOpRef& x, std::initializer_list<double> cs) {
  UOpRef acc;
  for (double c : cs) acc = acc ? alu(Ops::ADD, alu(Ops::MUL, acc, x), fc(x->dtype, c)) : fc(x->dtype, c);
  return acc;
}
// d away from 0 to the nearest integer (halves away from 0), as the int T.i
UOpRef round_away(const UOpRef& d, DType to) {
  return ucast(alu(Ops::ADD, d, alu(Ops::WHERE, alu(Ops::CMPLT, d, fc(d->dtype, 0)), fc(d->dtype, -0.5), fc(d->dtype, 0.5))), to);
}
// Cody-Waite for 0 <= d <= 39800: (r, q) with q = round(d / pi) (half turns) and r = d - q*pi in [-pi/2, pi/2], pi
// in parts whose products with q are exact
std::pair<UOpRef, UOpRef> cody_waite(const UOpRef& d, const SinTypes& T) {
  const double m_1_pi = 0.318309886183790671537767526745028724;
  // x + q*c with the running remainder first: a chain the renderers print left to right, so each part of pi is
  // subtracted in turn (printed q*c + (q*c' + x) without its parentheses would add the parts' products first)
  auto fma_ = [](const UOpRef& q, double c, const UOpRef& x) { return alu(Ops::ADD, x, alu(Ops::MUL, q, fc(x->dtype, c))); };
  if (T.f == dtypes::float64) {
    // the quotient in two parts: qdh (multiples of 2^24) and the rest, so the products with pi's parts stay exact
    UOpRef qdh = alu(Ops::MUL, ucast(ucast(alu(Ops::MUL, d, fc(T.f, m_1_pi / 16777216.0)), dtypes::int64), T.f), fc(T.f, 16777216.0));
    UOpRef qi = round_away(alu(Ops::SUB, alu(Ops::MUL, d, fc(T.f, m_1_pi)), qdh), T.i);
    UOpRef q = ucast(qi, T.f);
    UOpRef r = fma_(qdh, -3.1415926218032836914, d);
    r = fma_(q, -3.1415926218032836914, r);
    r = fma_(qdh, -3.1786509424591713469e-08, r);
    r = fma_(q, -3.1786509424591713469e-08, r);
    r = fma_(qdh, -1.2246467864107188502e-16, r);
    r = fma_(q, -1.2246467864107188502e-16, r);
    r = fma_(alu(Ops::ADD, qdh, q), -1.2736634327021899816e-24, r);
    return {r, ucast(qi, dtypes::int32)};
  }
  UOpRef qi = round_away(alu(Ops::MUL, d, fc(T.f, m_1_pi)), T.i);
  UOpRef q = ucast(qi, T.f);
  UOpRef r = fma_(q, -3.1414794921875, d);
  r = fma_(q, -0.00011315941810607910156, r);
  r = fma_(q, -1.9841872589410058936e-09, r);
  r = fma_(q, -1.2154201256553420762e-10, r);
  return {r, ucast(qi, dtypes::int32)};
}
// Payne-Hanek for finite d >= pi/4: (r, q) with q = round(d * 2/pi) (quarter turns) and r = d - q*pi/2. d = f * 2^e
// (f in [0.5, 1)): f's top 32 bits times the 96 bits of 2/pi from bit e on give d * 2/pi mod 4 in 2.62 fixed point
std::pair<UOpRef, UOpRef> payne_hanek(const UOpRef& d, const SinTypes& T) {
  static const uint32_t two_over_pi[] = {0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4, 0x7d4d3770, 0x36d8a566, 0x4f10e410};
  const DType u64 = dtypes::uint64, i32 = dtypes::int32, u32 = dtypes::uint32;
  // frexp: the mantissa with the exponent bits of 0.5, the exponent
  UOpRef bits = UOp::make(Ops::BITCAST, T.u, {d});
  const int64_t m1 = T.f == dtypes::float64 ? 0x000FFFFFFFFFFFFFll : 0x807FFFFFll, m2 = T.f == dtypes::float64 ? 0x3FE0000000000000ll : 0x3F000000ll;
  UOpRef f = UOp::make(Ops::BITCAST, T.f, {alu(Ops::OR, alu(Ops::AND, bits, ic(T.u, m1)), ic(T.u, m2))});
  UOpRef ex = alu(Ops::AND, alu(Ops::SHR, bits, ic(T.u, T.mant)), ic(T.u, (1 << T.exp_bits) - 1));
  UOpRef e = alu(Ops::ADD, ucast(ex, i32), ic(i32, 2 - (1 << (T.exp_bits - 1))));  // exponent - bias + 1
  UOpRef ia = ucast(alu(Ops::MUL, f, fc(T.f, 4294967296.0)), u64);
  // word i = e / 32 of the table, bit e % 32 within it (a word past the table is 0)
  UOpRef i = alu(Ops::SHR, ucast(e, u64), ic(u64, 5));
  UOpRef eb = ucast(alu(Ops::AND, e, ic(i32, 31)), u64), off = alu(Ops::SUB, ic(u64, 32), eb);
  auto take = [&](int k) {
    UOpRef a = ic(u32, 0);
    for (int c = 6 - k - 1; c >= 0; --c) a = alu(Ops::WHERE, alu(Ops::CMPNE, i, ic(u64, c)), a, ic(u32, two_over_pi[c + k]));
    return a;
  };
  UOpRef a[4] = {take(0), take(1), take(2), take(3)};
  // (x << eb) and (x >> off) of a 32-bit word in 64 bits (counts up to 32), kept to 32 bits
  auto shl32 = [&](const UOpRef& x, const UOpRef& n) { return ucast(alu(Ops::SHL, ucast(x, u64), n), u32); };
  auto shr32 = [&](const UOpRef& x, const UOpRef& n) { return ucast(alu(Ops::SHR, ucast(x, u64), n), u32); };
  UOpRef hi = alu(Ops::OR, shl32(a[0], eb), shr32(a[1], off));
  UOpRef mi = alu(Ops::OR, shl32(a[1], eb), shr32(a[2], off));
  UOpRef lo = alu(Ops::OR, shl32(a[2], eb), shr32(a[3], off));
  auto mul64 = [&](const UOpRef& x, const UOpRef& y) { return alu(Ops::MUL, ucast(x, u64), ucast(y, u64)); };
  UOpRef p = alu(Ops::ADD, alu(Ops::ADD, alu(Ops::SHL, mul64(ia, hi), ic(u64, 32)), mul64(ia, mi)), alu(Ops::SHR, mul64(ia, lo), ic(u64, 32)));
  UOpRef q = ucast(alu(Ops::SHR, p, ic(u64, 62)), i32);
  p = alu(Ops::AND, p, ic(u64, 0x3fffffffffffffffll));
  UOpRef r = alu(Ops::MUL, ucast(p, T.f), fc(T.f, 3.4061215800865545e-19));
  // f >= 0.5 always: the quotient rounded up, r - pi/2 and q + 1 (as the reference's (f<0.5).where(...), whose
  // first arm a frexp mantissa never takes)
  return {alu(Ops::SUB, r, fc(T.f, 1.5707963267948966)), alu(Ops::ADD, q, ic(i32, 1))};
}
UOpRef sin_poly(const UOpRef& d) {
  UOpRef d2 = alu(Ops::MUL, d, d);
  if (d->dtype == dtypes::float64)
    return alu(Ops::MUL, d,
               polyd(d2, {-7.97255955009037868891952e-18, 2.81009972710863200091251e-15, -7.64712219118158833288484e-13, 1.60590430605664501629054e-10,
                          -2.50521083763502045810755e-08, 2.75573192239198747630416e-06, -0.000198412698412696162806809, 0.00833333333333332974823815,
                          -0.166666666666666657414808, 1.0}));
  return alu(Ops::MUL, d, polyd(d2, {2.6083159809786593541503e-06, -0.0001981069071916863322258, 0.00833307858556509017944336, -0.166666597127914428710938, 1.0}));
}
UOpRef bit_set(const UOpRef& q, int n) { return alu(Ops::CMPNE, alu(Ops::AND, q, ic(dtypes::int32, n)), ic(dtypes::int32, 0)); }
// +-inf and NaN -> special, anything else -> v (the reference's _lazy_map_numbers with one value for the three)
UOpRef unless_special(const UOpRef& d, const UOpRef& v, const UOpRef& special) {
  const double inf = std::numeric_limits<double>::infinity();
  UOpRef finite_or_ninf = alu(Ops::WHERE, alu(Ops::CMPNE, d, d), special, alu(Ops::WHERE, alu(Ops::CMPNE, d, fc(d->dtype, -inf)), v, special));
  return alu(Ops::WHERE, alu(Ops::CMPNE, d, fc(d->dtype, inf)), finite_or_ninf, special);
}
UOpRef xsin(const UOpRef& d) {
  const SinTypes T = sin_types(d->dtype);
  // +-inf and NaN computed as 0 (their result, NaN, is set at the end)
  UOpRef x = unless_special(d, d, fc(T.f, 0));
  UOpRef sign = alu(Ops::WHERE, alu(Ops::CMPNE, x, fc(T.f, 0)), alu(Ops::WHERE, alu(Ops::CMPLT, x, fc(T.f, 0)), fc(T.f, -1), fc(T.f, 1)), fc(T.f, 0));
  UOpRef ax = alu(Ops::MUL, x, sign);
  // below 30: q counts half turns (odd: negated)
  auto [rs, qs] = cody_waite(ax, T);
  UOpRef small = alu(Ops::MUL, sin_poly(rs), alu(Ops::WHERE, bit_set(qs, 1), fc(T.f, -1), fc(T.f, 1)));
  // from 30: q counts quarter turns (odd: the cosine as sin(r + pi/2); q & 2: negated)
  auto [rl, ql] = payne_hanek(ax, T);
  UOpRef pl = sin_poly(alu(Ops::ADD, rl, alu(Ops::WHERE, bit_set(ql, 1), fc(T.f, 1.5707963267948966), fc(T.f, 0))));
  UOpRef large = alu(Ops::MUL, pl, alu(Ops::WHERE, bit_set(ql, 2), fc(T.f, -1), fc(T.f, 1)));
  UOpRef r = alu(Ops::MUL, alu(Ops::WHERE, alu(Ops::CMPLT, ax, fc(T.f, 30)), small, large), sign);
  return unless_special(d, r, fc(T.f, std::numeric_limits<double>::quiet_NaN()));
}


}  // namespace

const PatternMatcher& pm_transcendental(bool exp2, bool log2, bool sin) {
  auto f16 = [](const UOpRef& x) -> UOpRef {
    if (x->dtype != dtypes::float16) return nullptr;
    return ucast(UOp::make(x->op, dtypes::float32, {ucast(x->src[0], dtypes::float32)}, x->arg), dtypes::float16);
  };
  // as the reference: float16, bfloat16 and fp8 through float32 (its float16 path already reduces in float32)
  auto narrow = [](const UOpRef& x) -> UOpRef {
    if (!is_float(x->dtype) || is_weak(x->dtype) || x->dtype == dtypes::float32 || x->dtype == dtypes::float64) return nullptr;
    return ucast(UOp::make(x->op, dtypes::float32, {ucast(x->src[0], dtypes::float32)}, x->arg), x->dtype);
  };
  static const PatternMatcher exp2s({
      rule("exp2(x) -> 2^round(x) * poly(x - round(x)) (float32)", {Ops::EXP2},
           [](const UOpRef& x) { return x->dtype == dtypes::float32 ? xexp2(x->src[0]) : nullptr; }),
      rule("exp2(x) -> exp2(x.cast(float32)).cast(float16) (float16)", {Ops::EXP2}, f16),
  });
  static const PatternMatcher log2s({
      rule("log2(x) -> exponent(x) + poly(mantissa(x)) (float32)", {Ops::LOG2},
           [](const UOpRef& x) { return x->dtype == dtypes::float32 ? xlog2(x->src[0]) : nullptr; }),
      rule("log2(x) -> log2(x.cast(float32)).cast(float16) (float16)", {Ops::LOG2}, f16),
  });
  static const PatternMatcher sines({
      rule("sin(x) -> sign * poly(x reduced modulo pi/2) (float32)", {Ops::SIN},
           [](const UOpRef& x) { return x->dtype == dtypes::float32 ? xsin(x->src[0]) : nullptr; }),
      rule("sin(x) -> sin(x.cast(float32)).cast(T) (float16, bfloat16, fp8)", {Ops::SIN}, narrow),
  });
  // one matcher per combination, the rules in the order above
  static const std::array<PatternMatcher, 8> by_flags = [&] {
    std::array<PatternMatcher, 8> a;
    for (int k = 0; k < 8; ++k) {
      PatternMatcher m;
      if (k & 1) m = m + exp2s;
      if (k & 2) m = m + log2s;
      if (k & 4) m = m + sines;
      a[k] = m;
    }
    return a;
  }();
  return by_flags[(exp2 ? 1 : 0) | (log2 ? 2 : 0) | (sin ? 4 : 0)];
}

}  // namespace ts
