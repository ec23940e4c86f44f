// transcendental decompositions: EXP2 and LOG2 as polynomials, SIN as a range reduction and a polynomial, POW through
// them ("transcendental decompositions"; the reference's codegen/decomp/transcendental.py: xexp2, xlog2, xsin, xpow).
#include "engine/codegen/lowering.h"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/codegen/lowering_internal.h"

namespace ts {

using namespace lowering;

namespace {

// the float, the int of its width (quadrants of float64 go through int64), the uint of its bits
struct FloatTypes {
  DType f, i, u;
  int mant, exp_bits, bias;
};
FloatTypes float_types(DType f) {
  if (f == dtypes::float64) return {f, dtypes::int64, dtypes::uint64, 52, 11, 1023};
  return {f, dtypes::int32, dtypes::uint32, 23, 8, 127};
}
// a constant of the float dtype (float32's rounded to float32, the value the kernel computes with)
UOpRef fc(DType dt, double v) { return uconst(dt, dt == dtypes::float32 ? static_cast<double>(static_cast<float>(v)) : v); }
UOpRef ic(DType dt, int64_t v) { return uconst_int(dt, v); }
// Horner: ((c0*x + c1)*x + c2)...
UOpRef polyd(const UOpRef& x, std::initializer_list<double> cs) {
  UOpRef acc;
  for (double c : cs) acc = acc ? alu(Ops::ADD, alu(Ops::MUL, acc, x), fc(x->dtype, c)) : fc(x->dtype, c);
  return acc;
}
// d away from 0 to the nearest integer (halves away from 0), as the int T.i
UOpRef round_away(const UOpRef& d, DType to) {
  return ucast(alu(Ops::ADD, d, alu(Ops::WHERE, alu(Ops::CMPLT, d, fc(d->dtype, 0)), fc(d->dtype, -0.5), fc(d->dtype, 0.5))), to);
}
// ---- EXP2 / LOG2 as polynomials ------------------------------------------------------------------
// The CPU compilers make exp2f/log2f scalar libm calls; as the reference's transcendental pass (xexp2, xlog2, the
// SLEEF algorithms) float32 EXP2 and LOG2 become plain arithmetic the vectorizer can carry. The structure and
// constants are the reference's float32 and float64 paths', so the C computes what the reference's CPU computes (and
// GLSL, which has no float64 exp2 or log2, gets float64 ones). Where the reference shifts signed ints into the sign
// bit (undefined in C) the shifts run on the unsigned int of the width, the same bits.
// 2^e as a float for an int e of the float's width in [-bias+1, bias]: (e + bias) << mant in the exponent bits
UOpRef pow2i(const UOpRef& e, const FloatTypes& T) {
  return UOp::make(Ops::BITCAST, T.f, {alu(Ops::SHL, ucast(alu(Ops::ADD, e, ic(T.i, T.bias)), T.u), ic(T.u, T.mant))});
}
UOpRef xexp2(const UOpRef& d) {
  const FloatTypes T = float_types(d->dtype);
  const bool f64 = T.f == dtypes::float64;
  const double inf = std::numeric_limits<double>::infinity();
  UOpRef nan = alu(Ops::CMPNE, d, d);
  // +-inf and NaN computed as 0 (their results are set at the end)
  UOpRef x = alu(Ops::WHERE, alu(Ops::CMPNE, d, fc(T.f, -inf)), d, fc(T.f, 0));
  x = alu(Ops::WHERE, nan, fc(T.f, 0), x);
  x = alu(Ops::WHERE, alu(Ops::CMPNE, d, fc(T.f, inf)), x, fc(T.f, 0));
  // q = round(x) (halves away from 0), s = x - q in [-1/2, 1/2]
  UOpRef q = round_away(x, T.i);
  UOpRef s = alu(Ops::SUB, x, ucast(q, T.f));
  UOpRef u = f64 ? polyd(s, {0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6, 0.1321543872511327615e-5,
                             0.1525273353517584730e-4, 0.1540353045101147808e-3, 0.1333355814670499073e-2, 0.9618129107597600536e-2,
                             0.5550410866482046596e-1, 0.2402265069591012214e+0, 0.6931471805599452862e+0, 1.0})
                 : polyd(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0, 1.0});
  // u * 2^q as 2^(q>>1) * 2^(q - (q>>1)): 2^q alone leaves the exponent's range at q = bias + 1 and below -bias + 1
  UOpRef h = alu(Ops::SHR, q, ic(T.i, 1));
  u = alu(Ops::MUL, alu(Ops::MUL, u, pow2i(h, T)), pow2i(alu(Ops::SUB, q, h), T));
  u = alu(Ops::WHERE, alu(Ops::CMPLT, d, fc(T.f, f64 ? 1024 : 128)), u, fc(T.f, inf));
  u = alu(Ops::WHERE, alu(Ops::CMPLT, d, fc(T.f, f64 ? -2000 : -150)), fc(T.f, 0), u);
  return alu(Ops::WHERE, nan, fc(T.f, std::numeric_limits<double>::quiet_NaN()), u);
}
UOpRef xlog2(const UOpRef& d) {
  const FloatTypes T = float_types(d->dtype);
  const bool f64 = T.f == dtypes::float64;
  const double inf = std::numeric_limits<double>::infinity();
  // denormals (and, as the reference, everything below 1e-4) scaled by 2^64 first so the exponent bits see them
  UOpRef denormal = alu(Ops::CMPLT, d, fc(T.f, 1e-4));
  UOpRef a = alu(Ops::WHERE, denormal, alu(Ops::MUL, d, fc(T.f, 18446744073709551616.0)), d);
  // e = ilogb(a / 0.75): the mantissa m = a * 2^-e lands in [0.75, 1.5)
  UOpRef bits = UOp::make(Ops::BITCAST, T.i, {alu(Ops::MUL, a, fc(T.f, 1.0 / 0.75))});
  UOpRef ei = alu(Ops::ADD, alu(Ops::AND, alu(Ops::SHR, bits, ic(T.i, T.mant)), ic(T.i, (1 << T.exp_bits) - 1)), ic(T.i, -T.bias));
  UOpRef abits = UOp::make(Ops::BITCAST, T.u, {a});
  UOpRef m = UOp::make(Ops::BITCAST, T.f, {alu(Ops::SUB, abits, alu(Ops::SHL, ucast(ei, T.u), ic(T.u, T.mant)))});
  UOpRef e = ucast(ei, T.f);
  e = alu(Ops::WHERE, denormal, alu(Ops::ADD, e, fc(T.f, -64)), e);
  // log2(m) = 2*atanh(x)/ln 2 with x = (m-1)/(m+1): x * (c + x^2 * t(x^2)), 1/ln 2 * 2 (in two parts for float32)
  UOpRef x = UOp::make(Ops::FDIV, T.f, {alu(Ops::ADD, m, fc(T.f, -1)), alu(Ops::ADD, m, fc(T.f, 1))});
  UOpRef x2 = alu(Ops::MUL, x, x);
  UOpRef t = f64 ? polyd(x2, {0.2211941750456081490e+0, 0.2200768693152277689e+0, 0.2623708057488514656e+0, 0.3205977477944495502e+0,
                              0.4121985945485324709e+0, 0.5770780162997058982e+0, 0.96179669392608091449})
                 : polyd(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120});
  UOpRef r = alu(Ops::ADD, alu(Ops::ADD, alu(Ops::MUL, t, alu(Ops::MUL, x, x2)), e), alu(Ops::MUL, x, fc(T.f, f64 ? 2.885390081777926774 : 2.8853900432586669922)));
  if (!f64) r = alu(Ops::ADD, r, alu(Ops::MUL, x, fc(T.f, 3.2734474483568488616e-08)));
  r = alu(Ops::WHERE, alu(Ops::CMPNE, d, fc(T.f, inf)), r, fc(T.f, inf));
  r = alu(Ops::WHERE, alu(Ops::CMPNE, d, fc(T.f, 0)), r, fc(T.f, -inf));  // +-0
  // (the reference's last check, 1/d != -inf for -0 on devices where -0 == 0 fails, is left out: on the CPU it only
  // turns the NaN of a negative d above -2^-128 into -inf)
  return alu(Ops::WHERE, alu(Ops::OR, alu(Ops::CMPNE, d, d), alu(Ops::CMPLT, d, fc(T.f, -0.0))), fc(T.f, std::numeric_limits<double>::quiet_NaN()), r);
}
// b ** e as exp2(e * log2|b|) (the reference's xpow, for a language without a pow of the dtype): a negative b gives
// NaN for a non-integer e and the negated power for an odd one (decided on the float: trunc and halves, exact at
// every magnitude, where the reference's int32 cast overflows past 2^31); e = 0 gives 1
UOpRef xpow(const UOpRef& b, const UOpRef& e) {
  const DType f = b->dtype;
  const double inf = std::numeric_limits<double>::infinity();
  UOpRef neg = alu(Ops::CMPLT, b, fc(f, 0));
  UOpRef ret = UOp::make(Ops::EXP2, f, {alu(Ops::MUL, UOp::make(Ops::LOG2, f, {alu(Ops::WHERE, neg, alu(Ops::NEG, b), b)}), e)});
  UOpRef ae = alu(Ops::WHERE, alu(Ops::CMPLT, e, fc(f, 0)), alu(Ops::NEG, e), e);
  UOpRef non_int = alu(Ops::CMPNE, e, UOp::make(Ops::TRUNC, f, {e}));
  UOpRef half = UOp::make(Ops::TRUNC, f, {alu(Ops::MUL, ae, fc(f, 0.5))});
  UOpRef odd = alu(Ops::CMPNE, alu(Ops::SUB, ae, alu(Ops::MUL, half, fc(f, 2))), fc(f, 0));
  UOpRef nan = fc(f, std::numeric_limits<double>::quiet_NaN());
  UOpRef neg_base = alu(Ops::WHERE, non_int, alu(Ops::WHERE, alu(Ops::CMPNE, b, fc(f, -inf)), nan, ret), alu(Ops::WHERE, odd, alu(Ops::NEG, ret), ret));
  // -0 keeps its sign through an odd integer power, as C's pow (-0 ** -1 = -inf): 1/b is -inf for -0 (and for a
  // negative denormal, which `neg` takes first)
  UOpRef neg_zero = alu(Ops::CMPLT, UOp::make(Ops::FDIV, f, {fc(f, 1), b}), fc(f, std::numeric_limits<double>::lowest()));
  UOpRef signed_ret = alu(Ops::WHERE, alu(Ops::AND, neg_zero, alu(Ops::AND, odd, alu(Ops::CMPNE, non_int, uconst_bool(true)))), alu(Ops::NEG, ret), ret);
  return alu(Ops::WHERE, alu(Ops::CMPNE, e, fc(f, 0)), alu(Ops::WHERE, neg, neg_base, signed_ret), fc(f, 1));
}

// ---- SIN: reduction modulo pi/2 and a polynomial on [-pi/2, pi/2] ----------------------------------------------
// As the reference's xsin (the SLEEF algorithms): |x| below 30 reduced by Cody-Waite (q = round(x/pi), x - q*pi in
// several parts of pi), larger |x| by Payne-Hanek (x * 2/pi in 64-bit fixed point from 190 bits of 2/pi), so sin stays
// within an ulp or so at every magnitude (GLSL's sin is only accurate near [-pi, pi]). float32 and float64.
// Cody-Waite for 0 <= d <= 39800: (r, q) with q = round(d / pi) (half turns) and r = d - q*pi in [-pi/2, pi/2], pi
// in parts whose products with q are exact
std::pair<UOpRef, UOpRef> cody_waite(const UOpRef& d, const FloatTypes& T) {
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
// Payne-Hanek for finite float32 d >= pi/4: (r, q) with q = round(d * 2/pi) (quarter turns) and r = d - q*pi/2. d =
// f * 2^e (f in [0.5, 1)): f's top 32 bits times the 96 bits of 2/pi from bit e on give d * 2/pi mod 4 in 2.62 fixed
// point (float64's: payne_hanek_f64)
std::pair<UOpRef, UOpRef> payne_hanek(const UOpRef& d) {
  static const uint32_t two_over_pi[] = {0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4, 0x7d4d3770, 0x36d8a566, 0x4f10e410};
  const FloatTypes T = float_types(dtypes::float32);
  const DType u64 = dtypes::uint64, i32 = dtypes::int32, u32 = dtypes::uint32;
  // frexp: the mantissa with the exponent bits of 0.5, the exponent
  UOpRef bits = UOp::make(Ops::BITCAST, T.u, {d});
  UOpRef f = UOp::make(Ops::BITCAST, T.f, {alu(Ops::OR, alu(Ops::AND, bits, ic(T.u, 0x807FFFFFll)), ic(T.u, 0x3F000000ll))});
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
// Payne-Hanek for float64 (finite d >= pi/4), exact enough at every magnitude: d = m * 2^E with the 53-bit integer m,
// and d * 2/pi mod 4 = m * (the 192 bits of 2/pi from bit E - 1 on) mod 2^192, the binary point 2 bits below the top
// (the bits of 2/pi before E - 1 make multiples of 4). The product in 32-bit limbs, each column's partial products
// split in halves so no sum overflows 64 bits; its top 96 bits are q (2 bits) and the fraction, taken as the quotient
// rounded up (the float32 path's convention): r = (fraction - 1) * pi/2 in [-pi/2, 0), q + 1.
// (The float32 path's 32 bits of the mantissa and 190 of 2/pi lose float64's low bits: sin(1e14) came out wrong.)
std::pair<UOpRef, UOpRef> payne_hanek_f64(const UOpRef& d) {
  // 2/pi in 32-bit words after the binary point, two words of leading zeros first (d >= 30 has E >= -48)
  static const uint32_t two_over_pi[] = {
      0x00000000, 0x00000000,
      0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
      0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484,
      0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
      0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b,
      0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d,
  };
  constexpr int kWords = sizeof(two_over_pi) / sizeof(two_over_pi[0]);
  const DType u64 = dtypes::uint64, i64 = dtypes::int64, f64 = dtypes::float64;
  const UOpRef mask32 = ic(u64, 0xffffffffll);
  UOpRef bits = UOp::make(Ops::BITCAST, u64, {d});
  UOpRef ex = alu(Ops::AND, alu(Ops::SHR, bits, ic(u64, 52)), ic(u64, 0x7ff));
  UOpRef m = alu(Ops::OR, alu(Ops::AND, bits, ic(u64, 0x000FFFFFFFFFFFFFll)), ic(u64, 1ll << 52));
  // the window's first bit: bit E - 1 of 2/pi is bit E + 63 of the table (E = ex - 1075), counted from 1
  UOpRef pos = alu(Ops::SUB, ex, ic(u64, 1013));
  UOpRef i = alu(Ops::SHR, pos, ic(u64, 5)), b = alu(Ops::AND, pos, ic(u64, 31)), nb = alu(Ops::SUB, ic(u64, 32), b);
  const int max_i = (2046 - 1013) >> 5;
  auto take = [&](int k) {
    UOpRef a = ic(u64, 0);
    for (int c = max_i; c >= 0; --c)
      if (c + k < kWords) a = alu(Ops::WHERE, alu(Ops::CMPNE, i, ic(u64, c)), a, ic(u64, two_over_pi[c + k]));
    return a;
  };
  UOpRef a[7];
  for (int k = 0; k < 7; ++k) a[k] = take(k);
  // the window's 6 words, most significant first, as the limbs w[5] (most) .. w[0] (least)
  UOpRef w[6];
  for (int k = 0; k < 6; ++k) w[5 - k] = alu(Ops::AND, alu(Ops::OR, alu(Ops::SHL, a[k], b), alu(Ops::SHR, a[k + 1], nb)), mask32);
  UOpRef ml[2] = {alu(Ops::AND, m, mask32), alu(Ops::SHR, m, ic(u64, 32))};
  std::vector<UOps> cols(7);
  for (int x = 0; x < 2; ++x)
    for (int y = 0; y < 6 && x + y < 6; ++y) {
      UOpRef p = alu(Ops::MUL, ml[x], w[y]);
      cols[x + y].push_back(alu(Ops::AND, p, mask32));
      cols[x + y + 1].push_back(alu(Ops::SHR, p, ic(u64, 32)));
    }
  UOpRef carry = ic(u64, 0), limb[6];
  for (int c = 0; c < 6; ++c) {
    UOpRef acc = carry;
    for (auto& t : cols[c]) acc = alu(Ops::ADD, acc, t);
    limb[c] = alu(Ops::AND, acc, mask32);
    carry = alu(Ops::SHR, acc, ic(u64, 32));
  }
  UOpRef top = alu(Ops::OR, alu(Ops::SHL, limb[5], ic(u64, 32)), limb[4]);
  UOpRef q = ucast(alu(Ops::SHR, top, ic(u64, 62)), dtypes::int32);
  UOpRef fhi = ucast(alu(Ops::AND, top, ic(u64, 0x3fffffffffffffffll)), i64);
  UOpRef v = alu(Ops::ADD, alu(Ops::MUL, ucast(alu(Ops::SUB, fhi, ic(i64, 1ll << 62)), f64), fc(f64, 0x1p-62)),
                 alu(Ops::MUL, ucast(limb[3], f64), fc(f64, 0x1p-94)));
  UOpRef r = alu(Ops::ADD, alu(Ops::MUL, v, fc(f64, 1.5707963267948966)), alu(Ops::MUL, v, fc(f64, 6.123233995736766e-17)));
  return {r, alu(Ops::ADD, q, ic(dtypes::int32, 1))};
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
  const FloatTypes T = float_types(d->dtype);
  // +-inf and NaN computed as 0 (their result, NaN, is set at the end)
  UOpRef x = unless_special(d, d, fc(T.f, 0));
  UOpRef sign = alu(Ops::WHERE, alu(Ops::CMPNE, x, fc(T.f, 0)), alu(Ops::WHERE, alu(Ops::CMPLT, x, fc(T.f, 0)), fc(T.f, -1), fc(T.f, 1)), fc(T.f, 0));
  UOpRef ax = alu(Ops::MUL, x, sign);
  // below 30: q counts half turns (odd: negated)
  auto [rs, qs] = cody_waite(ax, T);
  UOpRef small = alu(Ops::MUL, sin_poly(rs), alu(Ops::WHERE, bit_set(qs, 1), fc(T.f, -1), fc(T.f, 1)));
  // from 30: q counts quarter turns (odd: the cosine as sin(r + pi/2); q & 2: negated)
  auto [rl, ql] = T.f == dtypes::float64 ? payne_hanek_f64(ax) : payne_hanek(ax);
  UOpRef pl = sin_poly(alu(Ops::ADD, rl, alu(Ops::WHERE, bit_set(ql, 1), fc(T.f, 1.5707963267948966), fc(T.f, 0))));
  UOpRef large = alu(Ops::MUL, pl, alu(Ops::WHERE, bit_set(ql, 2), fc(T.f, -1), fc(T.f, 1)));
  UOpRef r = alu(Ops::MUL, alu(Ops::WHERE, alu(Ops::CMPLT, ax, fc(T.f, 30)), small, large), sign);
  return unless_special(d, r, fc(T.f, std::numeric_limits<double>::quiet_NaN()));
}


}  // namespace

const PatternMatcher& pm_transcendental(bool exp2, bool log2, bool sin, bool float64) {
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
  // a language without float64 builtins for them: all four of float64 (pow through the exp2 and log2 it becomes)
  static const PatternMatcher doubles({
      rule("pow(b, e) -> exp2(e * log2|b|), the sign of b by e (float64)", {Ops::POW},
           [](const UOpRef& x) { return x->dtype == dtypes::float64 ? xpow(x->src[0], x->src[1]) : nullptr; }),
      rule("exp2(x) -> 2^round(x) * poly(x - round(x)) (float64)", {Ops::EXP2},
           [](const UOpRef& x) { return x->dtype == dtypes::float64 ? xexp2(x->src[0]) : nullptr; }),
      rule("log2(x) -> exponent(x) + poly(mantissa(x)) (float64)", {Ops::LOG2},
           [](const UOpRef& x) { return x->dtype == dtypes::float64 ? xlog2(x->src[0]) : nullptr; }),
      rule("sin(x) -> sign * poly(x reduced modulo pi/2) (float64)", {Ops::SIN},
           [](const UOpRef& x) { return x->dtype == dtypes::float64 ? xsin(x->src[0]) : nullptr; }),
  });
  // one matcher per combination, the rules in the order above
  static const std::array<PatternMatcher, 16> by_flags = [&] {
    std::array<PatternMatcher, 16> a;
    for (int k = 0; k < 16; ++k) {
      PatternMatcher m;
      if (k & 1) m = m + exp2s;
      if (k & 2) m = m + log2s;
      if (k & 4) m = m + sines;
      if (k & 8) m = m + doubles;
      a[k] = m;
    }
    return a;
  }();
  return by_flags[(exp2 ? 1 : 0) | (log2 ? 2 : 0) | (sin ? 4 : 0) | (float64 ? 8 : 0)];
}

}  // namespace ts
