// Algebraic simplification (symbolic.h): constant folding, identities, index math, folds by bounds; symbolic(), simplify()
#include "engine/uop/symbolic.h"

#include "engine/uop/pattern.h"
#include "engine/uop/symbolic_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

namespace ts {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

UOpRef mod_in_one_period(const UOpRef& x, int64_t c, int64_t lo, int64_t hi) {
  if (c <= 0 || lo == INT64_MIN || hi == INT64_MAX) return nullptr;
  const int64_t q = floor_div(lo, c);
  if (q != floor_div(hi, c)) return nullptr;
  return q == 0 ? x : alu(Ops::ADD, x, uconst_int(x->dtype, -q * c));
}

namespace {

// python-style floor division / modulo
int64_t fmod_(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

double round_to(DType dt, double v) {
  if (dt == dtypes::float32) return static_cast<double>(static_cast<float>(v));
  if (dt == dtypes::float16) return static_cast<double>(static_cast<_Float16>(v));
  if (is_fp8(dt)) return fp8_to_float(float_to_fp8(v, dt), dt);
  return v;
}
int64_t wrap_int(DType dt, int64_t v) {
  switch (dt->bitsize) {
    case 8: return is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint8_t>(v)) : static_cast<int8_t>(v);
    case 16: return is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint16_t>(v)) : static_cast<int16_t>(v);
    case 32: return is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint32_t>(v)) : static_cast<int32_t>(v);
    default: return v;
  }
}

UOpRef fold_const(const UOpRef& x) {
  for (auto& s : x->src)
    if (!is_c(s)) return nullptr;
  DType dt = x->dtype;
  auto f = [&](size_t i) { return round_to(x->src[i]->dtype, x->src[i]->const_float()); };
  if (x->op == Ops::CAST) {
    double v = x->src[0]->const_float();
    if (is_bool(dt)) return uconst_bool(v != 0);
    if (is_int(dt)) return uconst_int(dt, wrap_int(dt, static_cast<int64_t>(std::trunc(v))));
    return uconst(dt, round_to(dt, v));
  }
  if (!group::alu(x->op) || x->op == Ops::THREEFRY) return nullptr;
  bool ints = is_int(dt) || is_bool(dt);
  bool src_ints = std::all_of(x->src.begin(), x->src.end(), [](auto& s) { return is_int(s->dtype) || is_bool(s->dtype); });
  if (ints && src_ints) {
    auto iv = [&](size_t i) { return x->src[i]->const_int(); };
    int64_t r;
    switch (x->op) {
      case Ops::ADD: r = iv(0) + iv(1); break;
      case Ops::SUB: r = iv(0) - iv(1); break;
      case Ops::MUL: r = iv(0) * iv(1); break;
      case Ops::NEG: r = -iv(0); break;
      case Ops::MAX: r = std::max(iv(0), iv(1)); break;
      case Ops::FLOORDIV: if (iv(1) == 0) return nullptr; r = floor_div(iv(0), iv(1)); break;
      case Ops::FLOORMOD: if (iv(1) == 0) return nullptr; r = fmod_(iv(0), iv(1)); break;
      case Ops::CDIV: if (iv(1) == 0) return nullptr; r = iv(0) / iv(1); break;
      case Ops::CMOD: if (iv(1) == 0) return nullptr; r = iv(0) % iv(1); break;
      case Ops::CMPLT: return uconst_bool(iv(0) < iv(1));
      case Ops::CMPNE: return uconst_bool(iv(0) != iv(1));
      case Ops::CMPEQ: return uconst_bool(iv(0) == iv(1));
      case Ops::AND: r = iv(0) & iv(1); break;
      case Ops::OR: r = iv(0) | iv(1); break;
      case Ops::XOR: r = iv(0) ^ iv(1); break;
      case Ops::SHL: r = iv(0) << iv(1); break;
      case Ops::SHR: r = iv(0) >> iv(1); break;
      case Ops::WHERE: return iv(0) ? x->src[1] : x->src[2];
      default: return nullptr;
    }
    if (is_bool(dt)) return uconst_bool(r != 0);
    return uconst_int(dt, is_weak(dt) ? r : wrap_int(dt, r));
  }
  double r;
  switch (x->op) {
    case Ops::ADD: r = f(0) + f(1); break;
    case Ops::SUB: r = f(0) - f(1); break;
    case Ops::MUL: r = f(0) * f(1); break;
    case Ops::NEG: r = -f(0); break;
    case Ops::MAX: r = std::max(f(0), f(1)); break;
    case Ops::RECIPROCAL: r = 1.0 / f(0); break;
    case Ops::FDIV: r = f(0) / f(1); break;
    case Ops::SQRT: r = std::sqrt(f(0)); break;
    case Ops::EXP2: r = std::exp2(f(0)); break;
    case Ops::LOG2: r = std::log2(f(0)); break;
    case Ops::SIN: r = std::sin(f(0)); break;
    case Ops::TRUNC: r = std::trunc(f(0)); break;
    case Ops::POW: r = std::pow(f(0), f(1)); break;
    case Ops::CMPLT: return uconst_bool(f(0) < f(1));
    case Ops::CMPNE: return uconst_bool(f(0) != f(1));
    case Ops::CMPEQ: return uconst_bool(f(0) == f(1));
    case Ops::WHERE: return x->src[0]->const_float() != 0 ? x->src[1] : x->src[2];
    default: return nullptr;
  }
  return uconst(dt, round_to(dt, r));
}

UOpRef c_like(const UOpRef& x, double v) { return uconst(x->dtype, v); }

// a constant (not Invalid), captured as `name`
Pat konst(const char* name) {
  return Pat::cvar(name).such_that([](const UOp& u) { return !u.is<Invalid>(); });
}
// anything but a constant (an Invalid is not one), captured as `name`
Pat nonconst(const char* name) {
  return Pat::var(name).such_that([](const UOp& u) { return !(u.op == Ops::CONST && !u.is<Invalid>()); });
}
// p, when the node it matches is a bool
Pat bool_result(Pat p) {
  return std::move(p).such_that([](const UOp& u) { return is_bool(u.dtype); });
}

// the identities, one rewrite a rule (tried in this order, each only on its ops)
std::vector<Rule> identity_rules() {
  const Pat x = Pat::var("x"), y = Pat::var("y");
  auto same_dtype = [](const Captures& c, const UOpRef& root) { return c["x"]->dtype == root->dtype ? c["x"] : nullptr; };
  auto either = [](Pat p, std::initializer_list<Ops> ops) {
    p.ops = ops;
    return p;
  };
  return {
      rule("x+0 -> x", x + Pat::cnst(0), same_dtype),
      rule("x+(-x) -> 0", x + -x, [](const Captures&, const UOpRef& r) { return c_like(r, 0); }),
      rule("x + x*-1 -> 0", Pat::op(Ops::ADD, {x, Pat::op(Ops::MUL, {x, Pat::cnst(-1)})}),
           [](const Captures&, const UOpRef& r) { return c_like(r, 0); }),
      rule("x*1 -> x", x * Pat::cnst(1), same_dtype),
      rule("x*0 -> 0", x * Pat::cnst(0), [](const Captures&, const UOpRef& r) { return c_like(r, 0); }),
      rule("x//1 -> x", either(Pat::op(Ops::FLOORDIV, {x, Pat::cnst(1)}), {Ops::FLOORDIV, Ops::CDIV}),
           [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("x%1 -> 0", either(Pat::op(Ops::FLOORMOD, {x, Pat::cnst(1)}), {Ops::FLOORMOD, Ops::CMOD}),
           [](const Captures&, const UOpRef& r) { return c_like(r, 0); }),
      rule("x and true -> x", bool_result(x & Pat::cnst(1)), [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("x and false -> false", bool_result(x & Pat::cnst(0)), [](const Captures&, const UOpRef&) { return uconst_bool(false); }),
      rule("x and x -> x", bool_result(x & x), [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("x or false -> x", bool_result(x | Pat::cnst(0)), [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("x or true -> true", bool_result(x | Pat::cnst(1)), [](const Captures&, const UOpRef&) { return uconst_bool(true); }),
      rule("x or x -> x", bool_result(x | x), [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("max(x, x) -> x", pmax(x, x), [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("max(x, y) -> x when x >= y always", pmax(x, y), [](const Captures& c, const UOpRef& r) -> UOpRef {
        return int_math(r) && c["x"]->vmin() >= c["y"]->vmax() ? c["x"] : nullptr;
      }),
      rule("x != x -> false (ints)", Pat::op(Ops::CMPNE, {x, x}),
           [](const Captures& c, const UOpRef&) { return int_math(c["x"]) ? uconst_bool(false) : nullptr; }),
      // the reference's self folds (uop/symbolic.py:114,127,134), for every dtype: inf//inf and 0//0 are 1, inf%inf 0 (its
      // x*(1/x) -> 1 is left out: here it matched graphs the reference's does not, a buffer read after a realize or a copy)
      rule("x//x -> 1", Pat::op(Ops::FLOORDIV, {x, x}), [](const Captures&, const UOpRef& r) { return c_like(r, 1); }),
      rule("x%x -> 0", Pat::op(Ops::FLOORMOD, {x, x}), [](const Captures&, const UOpRef& r) { return c_like(r, 0); }),
      rule("x<x -> false", Pat::op(Ops::CMPLT, {x, x}), [](const Captures&, const UOpRef&) { return uconst_bool(false); }),
      rule("x^0 -> x", Pat::op(Ops::XOR, {x, Pat::cnst(0)}), same_dtype),
      rule("x^x -> 0", Pat::op(Ops::XOR, {x, x}), [](const Captures&, const UOpRef& r) { return c_like(r, 0); }),
      rule("(x^y)^y -> x", Pat::op(Ops::XOR, {Pat::op(Ops::XOR, {x, y}), y}), [](const Captures& c, const UOpRef&) { return c["x"]; }),
  };
}

}  // namespace

LinearTerms linear_terms(const UOpRef& x) {
  LinearTerms lt;
  std::map<const UOp*, size_t> pos;
  std::function<void(const UOpRef&, int64_t)> go = [&](const UOpRef& u, int64_t k) {
    if (is_c(u) && is_int(u->dtype)) { lt.constant += k * u->const_int(); return; }
    if (u->op == Ops::ADD) { go(u->src[0], k); go(u->src[1], k); return; }
    if (u->op == Ops::MUL && is_c(u->src[1]) && is_int(u->src[1]->dtype)) { go(u->src[0], k * u->src[1]->const_int()); return; }
    if (u->op == Ops::MUL && is_c(u->src[0]) && is_int(u->src[0]->dtype)) { go(u->src[1], k * u->src[0]->const_int()); return; }
    if (u->op == Ops::NEG) { go(u->src[0], -k); return; }
    auto it = pos.find(u.get());
    if (it != pos.end()) { lt.terms[it->second].second += k; return; }
    pos[u.get()] = lt.terms.size();
    lt.terms.push_back({u, k});
  };
  go(x, 1);
  lt.terms.erase(std::remove_if(lt.terms.begin(), lt.terms.end(), [](auto& t) { return t.second == 0; }), lt.terms.end());
  return lt;
}

UOpRef from_linear_terms(const LinearTerms& lt, DType dt) {
  UOpRef acc;
  for (auto& [t, k] : lt.terms) {
    UOpRef term = k == 1 ? t : alu(Ops::MUL, t, uconst_int(dt, k));
    acc = acc ? alu(Ops::ADD, acc, term) : term;
  }
  if (!acc) return uconst_int(dt, lt.constant);
  if (lt.constant) acc = alu(Ops::ADD, acc, uconst_int(dt, lt.constant));
  return acc;
}

namespace {

// ---- x//c and x%c by a positive constant, one case a rule (the order of the cases is the rules' order) ----------
// the divisor of x//c or x%c in integer math when it is a positive constant, else 0
int64_t pos_divisor(const UOpRef& x) {
  if (!int_math(x) || !is_c(x->src[1])) return 0;
  const int64_t c = x->src[1]->const_int();
  return c > 0 ? c : 0;
}
bool in_range(const UOpRef& a, int64_t c) { return a->vmin() >= 0 && a->vmax() < c; }

// the numerator as linear terms, split into the part divisible by c (quot) and the rest (rem)
struct DivmodSplit {
  LinearTerms lt, quot, rem;
  bool divisible = false;  // some term or the constant has a multiple of c to take out
};
DivmodSplit divmod_split(const UOpRef& x, int64_t c) {
  DivmodSplit d;
  d.lt = linear_terms(x->src[0]);
  const bool is_div = x->op == Ops::FLOORDIV;
  for (auto& [t, k] : d.lt.terms) {
    if (k % c == 0) d.quot.terms.push_back({t, k / c});
    else if (is_div && k > c) {  // k*t//c = (k//c)*t + ((k%c)*t + ...)//c
      d.quot.terms.push_back({t, k / c});
      d.rem.terms.push_back({t, k % c});
    } else d.rem.terms.push_back({t, k});
  }
  d.quot.constant = floor_div(d.lt.constant, c);
  d.rem.constant = fmod_(d.lt.constant, c);
  d.divisible = !(d.quot.terms.empty() && d.quot.constant == 0 && d.rem.constant == d.lt.constant);
  return d;
}
// x//c or x%c by a positive constant c whose numerator has a multiple of c to take out, as c*q + r (q and r built):
// the four (c*q + r) rules read it, so it is computed once a node (null when x is not such a division)
struct QuotRem {
  int64_t c = 0;
  DivmodSplit split;
  UOpRef q, r;
};
const QuotRem* quot_rem(const UOpRef& x) {
  thread_local LastNode<std::optional<QuotRem>> last;
  const std::optional<QuotRem>& qr = last.get(x, [](const UOpRef& y) -> std::optional<QuotRem> {
    const int64_t c = pos_divisor(y);
    if (!c) return std::nullopt;
    QuotRem out;
    out.c = c;
    out.split = divmod_split(y, c);
    if (out.split.lt.terms.empty() || !out.split.divisible) return std::nullopt;
    out.q = from_linear_terms(out.split.quot, y->src[0]->dtype);
    out.r = from_linear_terms(out.split.rem, y->src[0]->dtype);
    return out;
  });
  return qr ? &*qr : nullptr;
}
// x%c with every coefficient (and the constant) taken mod c: nullptr when none changes
UOpRef coefficients_mod(const UOpRef& x, int64_t c) {
  const UOpRef& a = x->src[0];
  LinearTerms lt = linear_terms(a);
  if (lt.terms.empty()) return nullptr;
  LinearTerms red;
  bool changed = false;
  for (auto& [t, k] : lt.terms) {
    int64_t km = fmod_(k, c);
    changed |= km != k;
    if (km) red.terms.push_back({t, km});
  }
  red.constant = fmod_(lt.constant, c);
  changed |= red.constant != lt.constant;
  return changed ? from_linear_terms(red, a->dtype) : nullptr;
}

std::vector<Rule> divmod_rules() {
  const Pat x = Pat::var("x");
  auto by_const = [](Ops op) { return Pat::op(op, {Pat::var("x"), konst("c")}); };
  return {
      // (x//c with 0 <= x < c is 0 by its bounds: the bounds fold above takes it)
      rule("x%c -> x (0 <= x < c)", by_const(Ops::FLOORMOD), [](const Captures& k, const UOpRef& r) -> UOpRef {
        const int64_t c = pos_divisor(r);
        return c && in_range(k["x"], c) ? k["x"] : nullptr;
      }),
      // (a padded read's index, (i + size - 1) % size, lies in one period under its gate)
      rule("x%c -> x - k*c (k*c <= x < (k+1)*c)", by_const(Ops::FLOORMOD), [](const Captures& k, const UOpRef& r) -> UOpRef {
        const int64_t c = pos_divisor(r);
        const UOpRef& v = k["x"];
        UOpRef y = c ? mod_in_one_period(v, c, v->vmin(), v->vmax()) : nullptr;
        return y == v ? nullptr : y;  // (k = 0 is the rule above's)
      }),
      rule("(x//a)//c -> x//(a*c)", Pat::op(Ops::FLOORDIV, {Pat::op(Ops::FLOORDIV, {x, konst("a")}), konst("c")}),
           [](const Captures& k, const UOpRef& r) -> UOpRef {
             const int64_t c = pos_divisor(r), a = k["a"]->const_int();
             return c && a > 0 ? alu(Ops::FLOORDIV, k["x"], uconst_int(r->dtype, a * c)) : nullptr;
           }),
      rule("(x%(k*c))%c -> x%c", Pat::op(Ops::FLOORMOD, {Pat::op(Ops::FLOORMOD, {x, konst("kc")}), konst("c")}),
           [](const Captures& k, const UOpRef& r) -> UOpRef {
             const int64_t c = pos_divisor(r);
             return c && k["kc"]->const_int() % c == 0 ? alu(Ops::FLOORMOD, k["x"], k["c"]) : nullptr;
           }),
      // x % c depends only on the coefficients modulo c
      rule("x%c -> x with its coefficients mod c (that sum in [0, c))", by_const(Ops::FLOORMOD),
           [](const Captures&, const UOpRef& r) -> UOpRef {
             const int64_t c = pos_divisor(r);
             UOpRef m = c ? coefficients_mod(r, c) : nullptr;
             return m && in_range(m, c) ? m : nullptr;
           }),
      rule("x%c -> (x with its coefficients mod c)%c", by_const(Ops::FLOORMOD), [](const Captures&, const UOpRef& r) -> UOpRef {
        const int64_t c = pos_divisor(r);
        UOpRef m = c ? coefficients_mod(r, c) : nullptr;
        return m && !in_range(m, c) && m->vmin() >= 0 ? alu(Ops::FLOORMOD, m, r->src[1]) : nullptr;
      }),
      // nothing divisible by c: a common factor g of every coefficient and the constant that divides c
      rule("(g*x)//c -> x//(c/g) (g the gcd of the terms, g | c)", by_const(Ops::FLOORDIV),
           [](const Captures&, const UOpRef& r) -> UOpRef {
             const int64_t c = pos_divisor(r);
             if (!c) return nullptr;
             const DivmodSplit d = divmod_split(r, c);
             if (d.lt.terms.empty() || d.divisible) return nullptr;
             int64_t g = 0;
             for (auto& [t, k] : d.lt.terms) g = std::gcd(g, k);
             g = std::gcd(g, d.lt.constant);
             if (g <= 1 || c % g != 0) return nullptr;
             LinearTerms red;
             for (auto& [t, k] : d.lt.terms) red.terms.push_back({t, k / g});
             red.constant = d.lt.constant / g;
             UOpRef inner = from_linear_terms(red, r->src[0]->dtype);
             return inner->vmin() >= 0 ? alu(Ops::FLOORDIV, inner, uconst_int(r->dtype, c / g)) : nullptr;
           }),
      // the numerator's multiples of c come out of the division: x = c*q + r
      rule("(c*q + r)//c -> q (0 <= r < c)", by_const(Ops::FLOORDIV), [](const Captures&, const UOpRef& x) -> UOpRef {
        const QuotRem* qr = quot_rem(x);
        return qr && in_range(qr->r, qr->c) ? qr->q : nullptr;
      }),
      rule("(c*q + r)//c -> q + r//c (r >= 0)", by_const(Ops::FLOORDIV), [](const Captures&, const UOpRef& x) -> UOpRef {
        const QuotRem* qr = quot_rem(x);
        if (!qr || in_range(qr->r, qr->c) || qr->r->vmin() < 0) return nullptr;
        return alu(Ops::ADD, qr->q, alu(Ops::FLOORDIV, qr->r, x->src[1]));
      }),
      rule("(c*q + r)%c -> r (0 <= r < c)", by_const(Ops::FLOORMOD), [](const Captures&, const UOpRef& x) -> UOpRef {
        const QuotRem* qr = quot_rem(x);
        return qr && in_range(qr->r, qr->c) ? qr->r : nullptr;
      }),
      rule("(c*q + r)%c -> r%c (r >= 0)", by_const(Ops::FLOORMOD), [](const Captures&, const UOpRef& x) -> UOpRef {
        const QuotRem* qr = quot_rem(x);
        if (!qr || (qr->split.quot.terms.empty() && qr->split.quot.constant == 0)) return nullptr;
        return !in_range(qr->r, qr->c) && qr->r->vmin() >= 0 ? alu(Ops::FLOORMOD, qr->r, x->src[1]) : nullptr;
      }),
  };
}

// (x//c)*c + x%c -> x, as linear terms
UOpRef merge_divmod(const UOpRef& x) {
  if (!int_math(x)) return nullptr;
  LinearTerms lt = linear_terms(x);
  for (size_t i = 0; i < lt.terms.size(); ++i) {
    auto& [d, kd] = lt.terms[i];
    if (d->op != Ops::FLOORDIV || !is_c(d->src[1])) continue;
    int64_t c = d->src[1]->const_int();
    for (size_t j = 0; j < lt.terms.size(); ++j) {
      auto& [m, km] = lt.terms[j];
      if (m->op != Ops::FLOORMOD || m->src[0] != d->src[0] || !is_c(m->src[1]) || m->src[1]->const_int() != c) continue;
      if (kd != km * c) continue;
      LinearTerms out = lt;
      UOpRef inner = d->src[0];
      int64_t k = km;
      out.terms.erase(out.terms.begin() + std::max(i, j));
      out.terms.erase(out.terms.begin() + std::min(i, j));
      out.terms.push_back({inner, k});
      return from_linear_terms(linear_terms(from_linear_terms(out, x->dtype)), x->dtype);
    }
  }
  return nullptr;
}

// ---- integer ADD chains in their linear form -------------------------------------------------------------------
// The canonical linear form of an integer ADD chain (like terms and constants combined), taken when it is smaller
// than the chain (no flip-flopping). The rules are named by what makes it smaller, each taking its kind of chain:
// terms that cancel, else like terms, else several constants, else a constant factor of a sum taken into its terms,
// else constant factors of a term combined.
enum class AddForm { none, cancel, like_terms, constants, distribute, factors };
struct AddCanon {
  AddForm kind = AddForm::none;
  UOpRef out;
};
AddCanon canon_add(const UOpRef& x) {
  if (!int_math(x)) return {};
  LinearTerms lt = linear_terms(x);
  UOpRef y = from_linear_terms(lt, x->dtype);
  if (y == x) return {};
  size_t nx = x->toposort().size(), ny = y->toposort().size();
  if (ny >= nx) return {};
  // what the chain holds, walked as linear_terms walks it
  std::map<const UOp*, int64_t> coeff;
  size_t consts = 0;
  bool repeated = false, distributed = false;
  std::function<void(const UOpRef&, int64_t)> go = [&](const UOpRef& u, int64_t k) {
    if (is_c(u) && is_int(u->dtype)) { ++consts; return; }
    if (u->op == Ops::ADD) { go(u->src[0], k); go(u->src[1], k); return; }
    if (u->op == Ops::MUL && is_c(u->src[1]) && is_int(u->src[1]->dtype)) {
      distributed |= u->src[0]->op == Ops::ADD;
      go(u->src[0], k * u->src[1]->const_int());
      return;
    }
    if (u->op == Ops::MUL && is_c(u->src[0]) && is_int(u->src[0]->dtype)) {
      distributed |= u->src[1]->op == Ops::ADD;
      go(u->src[1], k * u->src[0]->const_int());
      return;
    }
    if (u->op == Ops::NEG) { go(u->src[0], -k); return; }
    auto [it, fresh] = coeff.emplace(u.get(), 0);
    repeated |= !fresh;
    it->second += k;
  };
  go(x, 1);
  const bool cancel = std::any_of(coeff.begin(), coeff.end(), [](auto& t) { return t.second == 0; });
  AddForm kind = cancel           ? AddForm::cancel
                 : repeated       ? AddForm::like_terms
                 : consts >= 2    ? AddForm::constants
                 : distributed    ? AddForm::distribute
                                  : AddForm::factors;
  return {kind, y};
}
UOpRef add_form(const UOpRef& x, AddForm kind) {
  thread_local LastNode<AddCanon> last;
  const AddCanon& a = last.get(x, canon_add);
  return a.kind == kind ? a.out : nullptr;
}

// ---- folds by bounds -------------------------------------------------------------------------------------------
// integer or bool math whose bounds leave one value is that value (not through memory reads, not a cast)
UOpRef bounds_fold(const UOpRef& x) {
  if (!group::alu(x->op)) return nullptr;
  if (!(int_math(x) || is_bool(x->dtype))) return nullptr;
  for (auto& s : x->src)
    if (s->op == Ops::INDEX || s->op == Ops::LOAD || s->op == Ops::REDUCE) return nullptr;
  int64_t lo = x->vmin(), hi = x->vmax();
  if (lo == hi && lo != INT32_MIN && lo != INT32_MAX) return is_bool(x->dtype) ? uconst_bool(lo) : uconst_int(x->dtype, lo);
  return nullptr;
}
bool is_fold_op(Ops o) { return group::alu(o) || o == Ops::CAST; }
bool is_logic_op(Ops o) { return group::alu(o) && !group::comparison(o); }
std::vector<Rule> bounds_rules() {
  return {
      rule("comparison true by bounds -> true", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}, [](const UOpRef& x) -> UOpRef {
        return x->vmin() == 1 ? bounds_fold(x) : nullptr;
      }),
      rule("comparison false by bounds -> false", {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}, [](const UOpRef& x) -> UOpRef {
        return x->vmax() == 0 ? bounds_fold(x) : nullptr;
      }),
      on_ops(group::ops_where(is_logic_op), rule("bool math decided by bounds -> true/false", {}, [](const UOpRef& x) -> UOpRef {
               return is_bool(x->dtype) ? bounds_fold(x) : nullptr;
             })),
      on_ops(group::ops_where(is_logic_op), rule("int math of one value (vmin == vmax) -> that constant", {}, [](const UOpRef& x) -> UOpRef {
               return is_bool(x->dtype) ? nullptr : bounds_fold(x);
             })),
  };
}

// WHERE with a constant gate or branches that decide it, one rewrite a rule
std::vector<Rule> where_rules() {
  const Pat g = Pat::var("g"), a = Pat::var("a"), b = Pat::var("b");
  return {
      rule("true.where(a, b) -> a", Pat::op(Ops::WHERE, {konst("c").such_that([](const UOp& u) { return u.const_float() != 0; }), a, b}),
           [](const Captures& c, const UOpRef&) { return c["a"]; }),
      rule("false.where(a, b) -> b", Pat::op(Ops::WHERE, {konst("c").such_that([](const UOp& u) { return u.const_float() == 0; }), a, b}),
           [](const Captures& c, const UOpRef&) { return c["b"]; }),
      rule("g.where(a, a) -> a", Pat::op(Ops::WHERE, {g, a, a}), [](const Captures& c, const UOpRef&) { return c["a"]; }),
      rule("g.where(true, false) -> g", bool_result(Pat::op(Ops::WHERE, {g, Pat::cnst(1), Pat::cnst(0)})),
           [](const Captures& c, const UOpRef&) { return c["g"]; }),
      rule("g.where(false, true) -> !g", bool_result(Pat::op(Ops::WHERE, {g, Pat::cnst(0), Pat::cnst(1)})),
           [](const Captures& c, const UOpRef&) { return alu(Ops::CMPNE, c["g"], uconst_bool(true)); }),
  };
}

// reciprocals of products, and x/(1+x) as 1 - 1/(1+x) (the reference's sym: a sigmoid's exp2 overflowing to inf then
// gives 1 - 0, and its gradient a finite 0, where inf * 0 would be NaN)
std::vector<Rule> reciprocal_rules() {
  const Pat x = Pat::var("x"), y = Pat::var("y");
  auto recip = [](Pat p) { return Pat::op(Ops::RECIPROCAL, {std::move(p)}); };
  auto floats = [](const UOp& u) { return is_float(u.dtype); };
  auto one_minus = [](const UOpRef& d) { return alu(Ops::ADD, uconst(d->dtype, 1), alu(Ops::MUL, d, uconst(d->dtype, -1))); };
  return {
      rule("1/(x*x) -> (1/x)*(1/x)", recip(x * x).such_that(floats), [](const Captures& c, const UOpRef&) {
        return alu(Ops::MUL, alu(Ops::RECIPROCAL, c["x"]), alu(Ops::RECIPROCAL, c["x"]));
      }),
      rule("1/(x*c) -> (1/x)*(1/c)", recip(x * Pat::cvar("c")).such_that(floats), [](const Captures& c, const UOpRef&) {
        return alu(Ops::MUL, alu(Ops::RECIPROCAL, c["x"]), uconst(c["c"]->dtype, 1.0 / c["c"]->const_float()));
      }),
      rule("x*(1/(1+x)) -> 1-1/(1+x)", x * recip(Pat::cnst(1) + x).named("d"), [one_minus](const Captures& c, const UOpRef& r) -> UOpRef {
        return is_float(r->dtype) ? one_minus(c["d"]) : nullptr;
      }),
      rule("x*((1/(1+x))*y) -> y*(1-1/(1+x))", x * (recip(Pat::cnst(1) + x).named("d") * y),
           [one_minus](const Captures& c, const UOpRef& r) -> UOpRef {
             return is_float(r->dtype) ? alu(Ops::MUL, c["y"], one_minus(c["d"])) : nullptr;
           }),
      rule("x*((1/(1+x))+y) -> (1-1/(1+x))+x*y", x * (recip(Pat::cnst(1) + x).named("d") + y),
           [one_minus](const Captures& c, const UOpRef& r) -> UOpRef {
             return is_float(r->dtype) ? alu(Ops::ADD, one_minus(c["d"]), alu(Ops::MUL, c["x"], c["y"])) : nullptr;
           }),
  };
}

// the reference's "move mul consts to the end": (x*c)*y -> (x*y)*c, so a constant factor never hides a pattern such as
// x*(1/(1+x)) (a sigmoid's gradient has (-e)*(1/(1+e)) as (e*-1)*(1/(1+e)), whose inf*0 at e = inf would be NaN)
std::vector<Rule> mul_const_rules() {
  return {
      rule("(x*c)*y -> (x*y)*c", (Pat::var("x") * konst("c")) * nonconst("y"),
           [](const Captures& c, const UOpRef& r) { return alu(Ops::MUL, alu(Ops::MUL, c["x"], c["y"]), c["c"]); }),
  };
}

// x ** c for a constant c, one rewrite a rule (tried in this order)
std::vector<Rule> pow_rules() {
  const Pat x = Pat::var("x");
  auto exponent = [](bool (*ok)(double)) { return konst("e").such_that([ok](const UOp& u) { return ok(u.const_float()); }); };
  return {
      rule("x ** -c -> (1/x) ** c", Pat::op(Ops::POW, {x, exponent([](double c) { return c < 0; })}),
           [](const Captures& c, const UOpRef&) {
             return alu(Ops::POW, alu(Ops::RECIPROCAL, c["x"]), uconst(c["e"]->dtype, -c["e"]->const_float()));
           }),
      rule("x ** 0 -> 1", Pat::op(Ops::POW, {x, exponent([](double c) { return c == 0; })}),
           [](const Captures&, const UOpRef& r) { return uconst(r->dtype, 1); }),
      rule("x ** (n + 1/2) -> x ** n * sqrt(x)",
           Pat::op(Ops::POW, {x, exponent([](double c) { return c > 0 && static_cast<double>(static_cast<int64_t>(c - 0.5)) + 0.5 == c; })}),
           [](const Captures& c, const UOpRef&) {
             return alu(Ops::MUL, alu(Ops::POW, c["x"], uconst(c["e"]->dtype, c["e"]->const_float() - 0.5)), alu(Ops::SQRT, c["x"]));
           }),
      rule("x ** 1 -> x", Pat::op(Ops::POW, {x, exponent([](double c) { return c == 1; })}),
           [](const Captures& c, const UOpRef&) { return c["x"]; }),
      rule("x ** n -> (x ** (n/2))^2 [* x] (integer n)",
           Pat::op(Ops::POW, {x, exponent([](double c) { return c > 1 && static_cast<double>(static_cast<int64_t>(c)) == c; })}),
           [](const Captures& c, const UOpRef&) {
             const int64_t n = static_cast<int64_t>(c["e"]->const_float());
             UOpRef h = alu(Ops::POW, c["x"], uconst(c["e"]->dtype, static_cast<double>(n / 2)));
             UOpRef sq = alu(Ops::MUL, h, h);
             return n % 2 ? alu(Ops::MUL, sq, c["x"]) : sq;
           }),
  };
}

// WHERE of a comparison with its own operands is a MAX; MUL and MAX of bools are AND and OR
std::vector<Rule> max_and_bool_rules() {
  const Pat x = Pat::var("x"), a = Pat::var("a"), b = Pat::var("b");
  auto same_value = [](const Captures& c) { return c["c"]->const_float() == c["d"]->const_float(); };
  auto bools = [](const UOp& u) { return is_bool(u.dtype) && is_bool(u.src[0]->dtype) && is_bool(u.src[1]->dtype); };
  return {
      rule("(c<x).where(x, c) -> max(c, x)", Pat::op(Ops::WHERE, {Pat::op(Ops::CMPLT, {konst("c"), x}), x, konst("d")}),
           [same_value](const Captures& c, const UOpRef& r) {
             return same_value(c) ? alu(Ops::MAX, ucast(c["c"], r->dtype), c["x"]) : nullptr;
           }),
      rule("(x<c).where(c, x) -> max(x, c)", Pat::op(Ops::WHERE, {Pat::op(Ops::CMPLT, {x, konst("c")}), konst("d"), x}),
           [same_value](const Captures& c, const UOpRef& r) {
             return same_value(c) ? alu(Ops::MAX, c["x"], ucast(c["c"], r->dtype)) : nullptr;
           }),
      rule("a*b -> a and b (bools)", Pat::op(Ops::MUL, {a, b}).such_that(bools),
           [](const Captures& c, const UOpRef&) { return alu(Ops::AND, c["a"], c["b"]); }),
      rule("max(a, b) -> a or b (bools)", Pat::op(Ops::MAX, {a, b}).such_that(bools),
           [](const Captures& c, const UOpRef&) { return alu(Ops::OR, c["a"], c["b"]); }),
  };
}

// index math stays weak under a cast to an int: the constant joins the weak side
std::vector<Rule> weak_index_rules() {
  auto cast_weak = [] { return Pat::op(Ops::CAST, {Pat::var("a").of({dtypes::weakint})}); };
  auto to_int = [](const UOp& u) { return is_int(u.dtype); };
  auto keep_weak = [](const Captures& c, const UOpRef& r) {
    return ucast(alu(r->op, c["a"], iconst(c["c"]->const_int())), r->dtype);
  };
  return {
      rule("a.cast(int) + c -> (a + c).cast(int) (a weakint)", Pat::op(Ops::ADD, {cast_weak(), konst("c")}).such_that(to_int), keep_weak),
      rule("a.cast(int) * c -> (a * c).cast(int) (a weakint)", Pat::op(Ops::MUL, {cast_weak(), konst("c")}).such_that(to_int), keep_weak),
  };
}

// comparisons against a floor division by a positive constant
std::vector<Rule> floordiv_compare_rules() {
  auto positive = [] { return konst("c").such_that([](const UOp& u) { return u.const_int() > 0; }); };
  auto int_const = [] { return konst("k").such_that([](const UOp& u) { return is_int(u.dtype); }); };
  return {
      rule("x//c < k -> x < k*c", Pat::op(Ops::CMPLT, {Pat::op(Ops::FLOORDIV, {Pat::var("x"), positive()}), int_const()}),
           [](const Captures& c, const UOpRef&) {
             return alu(Ops::CMPLT, c["x"], uconst_int(c["x"]->dtype, c["k"]->const_int() * c["c"]->const_int()));
           }),
      rule("k < x//c -> (k+1)*c-1 < x", Pat::op(Ops::CMPLT, {int_const(), Pat::op(Ops::FLOORDIV, {Pat::var("x"), positive()})}),
           [](const Captures& c, const UOpRef&) {
             return alu(Ops::CMPLT, uconst_int(c["x"]->dtype, (c["k"]->const_int() + 1) * c["c"]->const_int() - 1), c["x"]);
           }),
  };
}

}  // namespace

const PatternMatcher& symbolic() {
  static const PatternMatcher pm(joined({{
      on_ops(group::ops_where(is_fold_op), rule("constant folding", {}, [](const UOpRef& x) { return fold_const(x); })),
  }, where_rules(), max_and_bool_rules(), identity_rules(), bounds_rules(), divmod_rules(), {
      rule("(x//c)*c + x%c -> x", {Ops::ADD}, [](const UOpRef& x) { return merge_divmod(x); }),
      rule("x + y + -x -> y (terms cancel)", {Ops::ADD}, [](const UOpRef& x) { return add_form(x, AddForm::cancel); }),
      rule("x*a + x*b -> x*(a+b) (like terms)", {Ops::ADD}, [](const UOpRef& x) { return add_form(x, AddForm::like_terms); }),
      rule("(x+c1)+c2 -> x+(c1+c2)", {Ops::ADD}, [](const UOpRef& x) { return add_form(x, AddForm::constants); }),
      rule("(x + y)*c + z -> x*c + y*c + z", {Ops::ADD}, [](const UOpRef& x) { return add_form(x, AddForm::distribute); }),
      rule("(x*c1)*c2 + y -> x*(c1*c2) + y", {Ops::ADD}, [](const UOpRef& x) { return add_form(x, AddForm::factors); }),
  }, weak_index_rules(), floordiv_compare_rules(), pow_rules(), reciprocal_rules(), mul_const_rules(), {
      rule("1 ** x -> 1", Pat::op(Ops::POW, {konst("b").such_that([](const UOp& u) { return u.const_float() == 1; }), nonconst("e")}),
           [](const Captures&, const UOpRef& r) { return uconst(r->dtype, 1); }),
      rule("c ** x -> exp2(x * log2(c)) (c > 0)",
           Pat::op(Ops::POW, {konst("b").such_that([](const UOp& u) { return u.const_float() > 0; }), nonconst("e")}),
           [](const Captures& c, const UOpRef&) {
             return alu(Ops::EXP2, alu(Ops::MUL, c["e"], uconst(c["e"]->dtype, std::log2(c["b"]->const_float()))));
           }),
      rule("x.cast(x's own dtype) -> x", Pat::op(Ops::CAST, {Pat::var("x")}).such_that([](const UOp& u) { return u.src[0]->dtype == u.dtype; }),
           [](const Captures& c, const UOpRef&) { return c["x"]; }),
  }}));
  return pm;
}

UOpRef simplify(const UOpRef& x) {
  // index math is simplified again and again as it grows (rangeify maps each movement op onto the last one's
  // result), so what was simplified once is remembered
  thread_local RewriteCache cache(size_t{1} << 16);
  return graph_rewrite_cached(x, symbolic(), cache, "simplify");
}

}  // namespace ts
