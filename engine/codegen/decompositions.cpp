// decompositions: "early decompositions" (FLOORDIV/FLOORMOD of non-negative values) and "late decompositions" (MAX,
// NEG, SUB, SHL, ..., THREEFRY as threefry2x32, bfloat16 and fp8 through float32); the reference's codegen/decomp/op.py
// and codegen/decomp/dtype.py.
#include "engine/codegen/lowering.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "engine/codegen/lowering_internal.h"
#include "engine/uop/pattern.h"

namespace ts {

using namespace lowering;

namespace {

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
int64_t log2i(int64_t v) {
  int64_t k = 0;
  while ((int64_t{1} << k) < v) ++k;
  return k;
}

// ---- decompositions -----------------------------------------------------------------------------
// x//c or x%c of a non-negative x by a positive constant c, a power of two or not
Pat nonneg_by(Ops op, bool pow2) {
  return Pat::op(op, {Pat::var("x").such_that([](const UOp& u) { return u.vmin() >= 0; }),
                      Pat::cvar("c").such_that([pow2](const UOp& u) { return !u.is<Invalid>() && u.const_int() > 0 && is_pow2(u.const_int()) == pow2; })})
      .such_that([](const UOp& u) { return is_int(u.dtype); });
}
// the reference's threefry2x32: THREEFRY(x, key) on uint64 runs as 20 rounds over the uint32 halves (no renderer has
// the op itself)
UOpRef threefry2x32(const UOpRef& x, const UOpRef& key) {
  DType u32 = dtypes::uint32, u64 = dtypes::uint64;
  auto c32 = [&](int64_t v) { return uconst_int(u32, v); };
  auto hi = [&](const UOpRef& v) { return ucast(alu(Ops::SHR, v, uconst_int(u64, 32)), u32); };
  UOpRef x0 = ucast(x, u32), x1 = hi(x), key0 = ucast(key, u32), key1 = hi(key);
  const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  UOpRef ks[3] = {key1, alu(Ops::XOR, alu(Ops::XOR, key0, key1), c32(0x1BD11BDA)), key0};
  UOpRef xr[2] = {alu(Ops::ADD, x0, ks[2]), alu(Ops::ADD, x1, ks[0])};
  for (int i = 0; i < 5; ++i) {
    for (int r : rotations[i % 2]) {
      UOpRef s = alu(Ops::ADD, xr[0], xr[1]);
      UOpRef rot = alu(Ops::ADD, alu(Ops::SHL, xr[1], c32(r)), alu(Ops::SHR, xr[1], c32(32 - r)));
      xr[0] = s;
      xr[1] = alu(Ops::XOR, s, rot);
    }
    xr[0] = alu(Ops::ADD, xr[0], ks[i % 3]);
    xr[1] = alu(Ops::ADD, alu(Ops::ADD, xr[1], ks[(i + 1) % 3]), c32(i + 1));
  }
  return alu(Ops::OR, alu(Ops::SHL, ucast(xr[1], u64), uconst_int(u64, 32)), ucast(xr[0], u64));
}

// the late decompositions into the renderers' ops, one rewrite a rule (MUL's tried in this order)
std::vector<Rule> late_decomp_rules() {
  const Pat a = Pat::var("a"), b = Pat::var("b"), x = Pat::var("x");
  return {
      rule("max(a, b) -> a<b ? b : a", Pat::op(Ops::MAX, {a, b}),
           [](const Captures& c, const UOpRef&) { return alu(Ops::WHERE, alu(Ops::CMPLT, c["a"], c["b"]), c["b"], c["a"]); }),
      // one rounding, as the reference's FDIV decomposition (15/14 is 1.0714285373687744f, 15 * (1/14) one ulp above)
      rule("a * (1/b) -> a / b (floats)",
           Pat::commute(Ops::MUL, Pat::op(Ops::RECIPROCAL, {b}), a).such_that([](const UOp& u) { return is_float(u.dtype); }),
           [](const Captures& c, const UOpRef& r) { return UOp::make(Ops::FDIV, r->dtype, {c["a"], c["b"]}); }),
      rule("x * -1 -> -x", Pat::commute(Ops::MUL, Pat::cnst(-1), x).such_that([](const UOp& u) { return !is_bool(u.dtype) && !is_unsigned(u.dtype); }),
           [](const Captures& c, const UOpRef&) { return alu(Ops::NEG, c["x"]); }),
      rule("x * 2^k -> x << k (x >= 0)",
           Pat::commute(Ops::MUL, Pat::cvar("c").such_that([](const UOp& u) { return !u.is<Invalid>() && is_pow2(u.const_int()) && u.const_int() > 1; }), x)
               .such_that([](const UOp& u) { return is_int(u.dtype) && !is_weak(u.dtype); }),
           [](const Captures& c, const UOpRef& r) -> UOpRef {
             if (c["x"]->vmin() < 0) return nullptr;
             return alu(Ops::SHL, c["x"], uconst_int(r->dtype, log2i(c["c"]->const_int())));
           }),
      rule("!(a != b) -> a == b",
           Pat::op(Ops::CMPNE, {Pat::op(Ops::CMPNE, {a, b}), Pat::cvar("t").such_that([](const UOp& u) { return is_bool(u.dtype) && u.const_float() != 0; })}),
           [](const Captures& c, const UOpRef&) { return alu(Ops::CMPEQ, c["a"], c["b"]); }),
      rule("a + -b -> a - b", a + -b, [](const Captures& c, const UOpRef&) { return alu(Ops::SUB, c["a"], c["b"]); }),
  };
}

// ---- bfloat16 through float32 ------------------------------------------------------------------
// no CPU computes in bfloat16 (clang has no conversions for it, LLVM calls a runtime function): as the reference's
// create_non_native_float_pats + pm_manual_bf16_cast, bf16 math runs in float and the conversions are bit
// operations, so only loads, stores and bitcasts of bf16 remain
bool bf16(DType dt) { return dt == dtypes::bfloat16; }
UOpRef bf16_to_float(const UOpRef& x) {
  UOpRef bits = ucast(UOp::make(Ops::BITCAST, dtypes::uint16, {x}), dtypes::uint32);
  return UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::SHL, bits, uconst_int(dtypes::uint32, 16))});
}
// round to nearest even; a NaN keeps a mantissa bit so it stays a NaN
UOpRef float_to_bf16(const UOpRef& f) {
  auto u = [](int64_t v) { return uconst_int(dtypes::uint32, v); };
  UOpRef x = UOp::make(Ops::BITCAST, dtypes::uint32, {f});
  UOpRef finite = alu(Ops::CMPNE, alu(Ops::AND, alu(Ops::NEG, x), u(0x7f800000)), u(0));
  UOpRef rounded = alu(Ops::ADD, alu(Ops::ADD, x, alu(Ops::AND, alu(Ops::SHR, x, u(16)), u(1))), u(0x7fff));
  UOpRef nan = alu(Ops::WHERE, alu(Ops::CMPNE, alu(Ops::AND, x, u(0xffff)), u(0)), alu(Ops::OR, x, u(0x10000)), x);
  UOpRef r = alu(Ops::WHERE, finite, rounded, nan);
  return UOp::make(Ops::BITCAST, dtypes::bfloat16, {ucast(alu(Ops::SHR, r, u(16)), dtypes::uint16)});
}
// ---- what bfloat16 and fp8 share: bytes in memory, math in float32 ----------------------------------------
// `x`, a value whose dtype passes `ok`
Pat dtype_var(bool (*ok)(DType)) { return Pat::var("x").such_that([ok](const UOp& u) { return ok(u.dtype); }); }
// `p` when its own dtype passes `ok`
Pat with_dtype(Pat p, bool (*ok)(DType)) { return std::move(p).such_that([ok](const UOp& u) { return ok(u.dtype); }); }
bool is_f32(DType d) { return d == dtypes::float32; }
bool not_f32(DType d) { return d != dtypes::float32; }
UOpRef f32(const UOpRef& v) { return ucast(v, dtypes::float32); }
// a cmp b of a narrow float type: compared as float32
UOpRef compare_in_float32(const UOpRef& x) { return UOp::make(x->op, x->dtype, {f32(x->src[0]), f32(x->src[1])}, x->arg); }
// f(x) of a narrow float type: computed in float32, cast back
UOpRef math_in_float32(const UOpRef& x) {
  UOps ns = x->src;
  for (auto& s : ns) s = f32(s);
  return ucast(UOp::make(x->op, dtypes::float32, ns, x->arg), x->dtype);
}

// the rules, one rewrite each (a CAST, BITCAST or ALU op is tried on its own rules in this order)
std::vector<Rule> bf16_rules() {
  const Pat x = Pat::var("x");
  auto from = dtype_var;
  auto to = with_dtype;
  return {
      rule("bf16 constant -> BITCAST of its bits (rounded as from float)",
           Pat::cvar("c").of({dtypes::bfloat16}).such_that([](const UOp& u) { return !u.is<Invalid>(); }),
           [](const Captures& c, const UOpRef&) {
             // the constant's bits, rounded as a cast from float would
             float v = static_cast<float>(c["c"]->const_float());
             uint32_t b;
             std::memcpy(&b, &v, 4);
             bool nan = std::isnan(v);
             uint32_t r = nan ? ((b & 0xffffu) ? (b | 0x10000u) : b) : b + ((b >> 16) & 1u) + 0x7fffu;
             return UOp::make(Ops::BITCAST, dtypes::bfloat16, {uconst_int(dtypes::uint16, r >> 16)});
           }),
      rule("bf16 x.cast(bf16) -> x", to(Pat::op(Ops::CAST, {from(bf16)}), bf16), [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("bf16 x.cast(float32) -> BITCAST(bits << 16)", to(Pat::op(Ops::CAST, {from(bf16)}), is_f32),
           [](const Captures& c, const UOpRef&) { return bf16_to_float(c["x"]); }),
      rule("bf16 x.cast(T) -> BITCAST(bits << 16).cast(T)", to(Pat::op(Ops::CAST, {from(bf16)}), not_f32),
           [](const Captures& c, const UOpRef& r) { return ucast(bf16_to_float(c["x"]), r->dtype); }),
      rule("float32 x.cast(bf16) -> BITCAST(rounded bits >> 16)", to(Pat::op(Ops::CAST, {from(is_f32)}), bf16),
           [](const Captures& c, const UOpRef&) { return float_to_bf16(c["x"]); }),
      rule("x.cast(bf16) -> BITCAST(rounded bits of x.cast(float32) >> 16)", to(Pat::op(Ops::CAST, {from(not_f32)}), bf16),
           [](const Captures& c, const UOpRef&) { return float_to_bf16(ucast(c["x"], dtypes::float32)); }),
      // bitcasts compose (LLVM would otherwise turn half -> bf16 -> i16 into an int -> bf16 conversion x86 cannot select)
      rule("BITCAST(BITCAST(x)) to x's dtype -> x", Pat::op(Ops::BITCAST, {Pat::op(Ops::BITCAST, {x})}),
           [](const Captures& c, const UOpRef& r) { return c["x"]->dtype == r->dtype ? c["x"] : nullptr; }),
      rule("BITCAST(BITCAST(x)) -> BITCAST(x)", Pat::op(Ops::BITCAST, {Pat::op(Ops::BITCAST, {x})}),
           [](const Captures& c, const UOpRef& r) { return UOp::make(Ops::BITCAST, r->dtype, {c["x"]}); }),
      rule("a cmp b of bf16 -> a.cast(float32) cmp b.cast(float32)", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ},
           [](const UOpRef& x) { return bf16(x->src[0]->dtype) ? compare_in_float32(x) : nullptr; }),
      on_ops(group::ops_where(is_typed_math_op), rule("bf16 f(x) -> f(x.cast(float32)).cast(bf16)", {},
                                                      [](const UOpRef& x) { return bf16(x->dtype) ? math_in_float32(x) : nullptr; })),
      rule("bf16 c.where(a, b) -> c.where(a.cast(float32), b.cast(float32)).cast(bf16)", {Ops::WHERE}, [](const UOpRef& x) -> UOpRef {
        if (!bf16(x->dtype)) return nullptr;
        return ucast(UOp::make(Ops::WHERE, dtypes::float32, {x->src[0], f32(x->src[1]), f32(x->src[2])}, x->arg), dtypes::bfloat16);
      }),
  };
}

// ---- fp8 through float32 -----------------------------------------------------------------------
// no renderer has an 8-bit float: as bfloat16, fp8 values stay bytes (loads, stores, bitcasts and selects), their
// math runs in float32 and the conversions are integer operations on the float32 bits. Both directions are exact
// to the format (subnormals included): fp8 -> float32 is exact, float32 -> fp8 rounds to nearest even, saturates
// finite values past the largest to it, and maps NaN and inf as the format has them (the host's float_to_fp8)
UOpRef fp8_bits(const UOpRef& x) { return ucast(UOp::make(Ops::BITCAST, dtypes::uint8, {x}), dtypes::uint32); }
UOpRef fp8_value(const UOpRef& x) {
  const DType dt = x->dtype;
  const Fp8Format f = fp8_format(dt);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto eq = [](const UOpRef& a, int64_t v) { return alu(Ops::CMPEQ, a, u32c(v)); };
  UOpRef b = fp8_bits(x), em = alu(Ops::AND, b, u32c(0x7f));
  UOpRef e = alu(Ops::SHR, em, u32c(f.man_bits)), m = alu(Ops::AND, em, u32c((1 << f.man_bits) - 1));
  // a normal's exponent and mantissa fields moved into float32's, the exponent rebiased
  UOpRef normal = UOp::make(Ops::BITCAST, dtypes::float32,
                            {alu(Ops::ADD, alu(Ops::SHL, em, u32c(23 - f.man_bits)), u32c(int64_t{127 - f.bias} << 23))});
  // a subnormal is its mantissa times the smallest subnormal
  UOpRef sub = alu(Ops::MUL, ucast(m, dtypes::float32), uconst(dtypes::float32, std::ldexp(1.0, 1 - f.bias - f.man_bits)));
  UOpRef mag = alu(Ops::WHERE, eq(e, 0), sub, normal);
  const int64_t exp_max = (1 << f.exp_bits) - 1;
  if (dt == dtypes::fp8e5m2) mag = alu(Ops::WHERE, eq(e, exp_max), alu(Ops::WHERE, eq(m, 0), uconst(dtypes::float32, inf), uconst(dtypes::float32, nan)), mag);
  UOpRef sign = alu(Ops::SHL, alu(Ops::AND, b, u32c(0x80)), u32c(24));
  UOpRef v = UOp::make(Ops::BITCAST, dtypes::float32, {alu(Ops::OR, UOp::make(Ops::BITCAST, dtypes::uint32, {mag}), sign)});
  if (dt == dtypes::fp8e4m3) return alu(Ops::WHERE, eq(em, 0x7f), uconst(dtypes::float32, nan), v);
  if (is_fp8_fnuz(dt)) return alu(Ops::WHERE, eq(b, 0x80), uconst(dtypes::float32, nan), v);
  return v;
}
UOpRef fp8_code(const UOpRef& fv, DType dt) {
  const Fp8Format f = fp8_format(dt);
  auto lt = [](const UOpRef& a, const UOpRef& b) { return alu(Ops::CMPLT, a, b); };
  // (v + half - 1 + the kept lowest bit) >> s: v >> s rounded to nearest even
  auto rne = [](const UOpRef& v, const UOpRef& s, const UOpRef& half_minus_1) {
    UOpRef lsb = alu(Ops::AND, alu(Ops::SHR, v, s), u32c(1));
    return alu(Ops::SHR, alu(Ops::ADD, alu(Ops::ADD, v, half_minus_1), lsb), s);
  };
  UOpRef x = UOp::make(Ops::BITCAST, dtypes::uint32, {fv});
  UOpRef a = alu(Ops::AND, x, u32c(0x7fffffff)), sign = alu(Ops::AND, alu(Ops::SHR, x, u32c(24)), u32c(0x80));
  // normal in fp8: the rebiased bits, the mantissa rounded (a carry moves the exponent up, as it should)
  const int s_norm = 23 - f.man_bits;
  UOpRef normal = rne(alu(Ops::SUB, a, u32c(int64_t{127 - f.bias} << 23)), u32c(s_norm), u32c((1 << (s_norm - 1)) - 1));
  // subnormal in fp8: the float32 significand as a count of the smallest subnormal, its shift capped at 31 (a
  // smaller value than that rounds to 0 anyway)
  UOpRef sig = alu(Ops::OR, alu(Ops::AND, a, u32c(0x7fffff)), u32c(0x800000));
  UOpRef s = alu(Ops::SUB, u32c(151 - f.bias - f.man_bits), alu(Ops::SHR, a, u32c(23)));
  s = alu(Ops::WHERE, lt(s, u32c(31)), s, u32c(31));
  UOpRef sub = rne(sig, s, alu(Ops::SUB, alu(Ops::SHL, u32c(1), alu(Ops::SUB, s, u32c(1))), u32c(1)));
  UOpRef r = alu(Ops::WHERE, lt(a, u32c(int64_t{128 - f.bias} << 23)), sub, normal);
  const int64_t max_code = fp8_max_code(dt);
  r = alu(Ops::WHERE, lt(u32c(max_code), r), u32c(max_code), r);
  UOpRef finite = lt(a, u32c(0x7f800000)), code;
  if (is_fp8_fnuz(dt)) {  // NaN and inf are 0x80; no negative zero
    code = alu(Ops::WHERE, finite, alu(Ops::WHERE, alu(Ops::CMPEQ, r, u32c(0)), u32c(0), alu(Ops::OR, r, sign)), u32c(0x80));
  } else {  // e4m3: NaN and inf are NaN (0x7f); e5m2: inf 0x7c, NaN 0x7f; both signed
    UOpRef special = dt == dtypes::fp8e4m3 ? u32c(0x7f) : alu(Ops::WHERE, alu(Ops::CMPEQ, a, u32c(0x7f800000)), u32c(0x7c), u32c(0x7f));
    code = alu(Ops::OR, alu(Ops::WHERE, finite, r, special), sign);
  }
  return UOp::make(Ops::BITCAST, dt, {ucast(code, dtypes::uint8)});
}
std::vector<Rule> fp8_rules() {
  auto from = dtype_var;
  auto to = with_dtype;
  return {
      rule("fp8 constant -> BITCAST of its code", Pat::cvar("c").such_that([](const UOp& u) { return is_fp8(u.dtype) && !u.is<Invalid>(); }),
           [](const Captures& c, const UOpRef& r) {
             return UOp::make(Ops::BITCAST, r->dtype, {uconst_int(dtypes::uint8, float_to_fp8(c["c"]->const_float(), r->dtype))});
           }),
      rule("fp8 x.cast(same fp8) -> x", to(Pat::op(Ops::CAST, {from(is_fp8)}), is_fp8),
           [](const Captures& c, const UOpRef& r) { return c["x"]->dtype == r->dtype ? c["x"] : nullptr; }),
      rule("fp8 x.cast(float32) -> its value from the code's bits", to(Pat::op(Ops::CAST, {from(is_fp8)}), is_f32),
           [](const Captures& c, const UOpRef&) { return fp8_value(c["x"]); }),
      rule("fp8 x.cast(T) -> x.cast(float32).cast(T)", to(Pat::op(Ops::CAST, {from(is_fp8)}), not_f32),
           [](const Captures& c, const UOpRef& r) { return ucast(fp8_value(c["x"]), r->dtype); }),
      rule("float32 x.cast(fp8) -> the rounded code from x's bits", to(Pat::op(Ops::CAST, {from(is_f32)}), is_fp8),
           [](const Captures& c, const UOpRef& r) { return fp8_code(c["x"], r->dtype); }),
      rule("x.cast(fp8) -> x.cast(float32).cast(fp8)", to(Pat::op(Ops::CAST, {from(not_f32)}), is_fp8),
           [](const Captures& c, const UOpRef& r) { return is_fp8(c["x"]->dtype) ? nullptr : fp8_code(ucast(c["x"], dtypes::float32), r->dtype); }),
      rule("a cmp b of fp8 -> a.cast(float32) cmp b.cast(float32)", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ},
           [](const UOpRef& x) { return is_fp8(x->src[0]->dtype) ? compare_in_float32(x) : nullptr; }),
      on_ops(group::ops_where(is_typed_math_op), rule("fp8 f(x) -> f(x.cast(float32)).cast(fp8)", {},
                                                      [](const UOpRef& x) { return is_fp8(x->dtype) ? math_in_float32(x) : nullptr; })),
  };
}

}  // namespace

const PatternMatcher& pm_early_decompositions() {
  static const PatternMatcher pm({
      rule("x//2^k -> x >> k (x >= 0)", nonneg_by(Ops::FLOORDIV, true), [](const Captures& c, const UOpRef& r) {
        return alu(Ops::SHR, c["x"], uconst_int(r->dtype, log2i(c["c"]->const_int())));
      }),
      rule("x%2^k -> x & (2^k-1) (x >= 0)", nonneg_by(Ops::FLOORMOD, true), [](const Captures& c, const UOpRef& r) {
        return alu(Ops::AND, c["x"], uconst_int(r->dtype, c["c"]->const_int() - 1));
      }),
      rule("x//c -> CDIV(x, c) (x >= 0)", nonneg_by(Ops::FLOORDIV, false),
           [](const Captures& c, const UOpRef&) { return alu(Ops::CDIV, c["x"], c["c"]); }),
      rule("x%c -> CMOD(x, c) (x >= 0)", nonneg_by(Ops::FLOORMOD, false),
           [](const Captures& c, const UOpRef&) { return alu(Ops::CMOD, c["x"], c["c"]); }),
  });
  return pm;
}

const PatternMatcher& pm_late_decompositions() {
  static const PatternMatcher pm(joined({{
      rule("THREEFRY -> threefry2x32 on the uint32 halves", {Ops::THREEFRY}, [](const UOpRef& x) -> UOpRef {
        return x->dtype == dtypes::uint64 ? threefry2x32(x->src[0], x->src[1]) : nullptr;
      }),
  }, late_decomp_rules(), bf16_rules(), fp8_rules()}));
  return pm;
}

}  // namespace ts
