#include "fuzz.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <map>
#include <set>
#include <sstream>

#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "engine/runtime/cpu/install.h"
#include "engine/uop/error.h"

namespace ts::fuzz {

namespace {

constexpr int64_t kMaxNumel = 384;

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> v = {dtypes::bool_,   dtypes::int8,   dtypes::uint8,   dtypes::int16,    dtypes::uint16,
                                       dtypes::int32,   dtypes::uint32, dtypes::int64,   dtypes::uint64,   dtypes::float16,
                                       dtypes::bfloat16, dtypes::float32, dtypes::float64};
  return v;
}
std::string py_dtype(DType dt) {
  static const std::vector<std::pair<DType, const char*>> names = {
      {dtypes::bool_, "bool"},     {dtypes::int8, "int8"},       {dtypes::uint8, "uint8"},     {dtypes::int16, "int16"},
      {dtypes::uint16, "uint16"},  {dtypes::int32, "int32"},     {dtypes::uint32, "uint32"},   {dtypes::int64, "int64"},
      {dtypes::uint64, "uint64"},  {dtypes::float16, "float16"}, {dtypes::bfloat16, "bfloat16"}, {dtypes::float32, "float32"},
      {dtypes::float64, "float64"}};
  for (auto& [d, n] : names)
    if (d == dt) return std::string("dtypes.") + n;
  throw Error("fuzz: no python name for dtype " + dtype_repr(dt));
}
bool is_intlike(DType dt) { return is_int(dt) && !is_weak(dt); }
int64_t numel_of(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()); }

std::string py_float(double v) {
  if (std::isnan(v)) return "float('nan')";
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}
std::string py_tuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}
std::string py_args(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}
std::string py_pairs(const std::vector<std::pair<int64_t, int64_t>>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::string("(") + std::to_string(v[i].first) + ", " + std::to_string(v[i].second) + ")";
  return s + (v.size() == 1 ? ",)" : ")");
}

// float comparison tolerance per dtype: a few units in the last place, relative to the output's scale
double rel_tol(DType dt) {
  if (dt == dtypes::float64) return 1e-12;
  if (dt == dtypes::float16) return 2e-3;
  if (dt == dtypes::bfloat16) return 1.6e-2;
  return 4e-6;
}

struct Var {
  Tensor t;
  std::string name;
  bool input = false;  // straight from the host (its float bits are the data's, not a computation's)
  double tol = 0;      // the loosest float tolerance its computation passed through (a float32 log2 cast to float64)
  bool alias = false;  // a view of an input (no kernel computes it: TinyJit's replay returns the captured input's view)
  bool plain = false;  // an input's buffer as it is
};

// a python scalar: its source text and the deviceless constant it becomes
struct Scalar {
  std::string text;
  Tensor t;
};

struct Gen {
  std::mt19937 rng;
  std::vector<Var> vars;
  std::ostringstream src;
  int next = 0;
  int ops = 0;
  // the program as statements and inputs, for its python function form (Program::python_def)
  struct Stmt {
    std::string name, expr;
    bool input = false;
  };
  struct InputSpec {
    std::string name;
    Shape shape;
    DType dtype;
    std::string data;  // the python list of its values
  };
  std::vector<Stmt> stmts;
  std::vector<InputSpec> inputs;

  explicit Gen(uint32_t seed) : rng(seed) {}
  int pick(int n) { return n <= 0 ? 0 : static_cast<int>(rng() % static_cast<uint32_t>(n)); }
  bool chance(int pct) { return pick(100) < pct; }
  template <class T>
  const T& one_of(const std::vector<T>& v) { return v[pick(static_cast<int>(v.size()))]; }

  Var& add(const Tensor& t, const std::string& expr) {
    std::string name = "t" + std::to_string(next++);
    src << name << " = " << expr << "\n";
    stmts.push_back({name, expr});
    // what its computation is, post-order over its graph with an earlier var's node standing for that var's own
    // computation (a realized var is a buffer now): tol, the loosest float on the way; alias, no kernel computes it;
    // plain, an input's buffer as it is (a reshape or contiguous of it stays one)
    struct Facts {
      double tol = 0;
      bool alias = true, plain = true;
    };
    std::map<const UOp*, const Var*> known;
    for (const Var& v : vars) known[v.t.uop().get()] = &v;
    std::map<const UOp*, Facts> facts;
    for (const UOpRef& ur : t.uop()->toposort()) {
      const UOp* u = ur.get();
      Facts f;
      if (auto k = known.find(u); k != known.end()) {
        f = {k->second->tol, k->second->alias, k->second->plain};
      } else {
        if (is_float(u->dtype) && !is_weak(u->dtype)) f.tol = rel_tol(u->dtype);
        for (const UOpRef& x : u->src) f.tol = std::max(f.tol, facts[x.get()].tol);
        const Facts src0 = u->src.empty() ? Facts{} : facts[u->src[0].get()];
        if (u->op == Ops::RESHAPE) f.alias = src0.alias, f.plain = src0.plain;
        else if (u->op == Ops::CONTIGUOUS) f.alias = f.plain = src0.plain;  // a copy kernel unless it is a buffer already
        else if (group::movement(u->op) && u->op != Ops::PAD) f.alias = src0.alias, f.plain = false;
        else if (group::elementwise(u->op) || u->op == Ops::REDUCE || u->op == Ops::PAD || u->op == Ops::COPY) f.alias = f.plain = false;
        else
          for (const UOpRef& x : u->src) f.alias = f.alias && facts[x.get()].alias, f.plain = f.plain && facts[x.get()].plain;
      }
      facts[u] = f;
    }
    const Facts mine = facts[t.uop().get()];
    vars.push_back({t, name, false, mine.tol, mine.alias, mine.plain});
    return vars.back();
  }
  // recent values are picked more often (programs grow as chains with side branches)
  Var& any_var() {
    int n = static_cast<int>(vars.size());
    return chance(60) ? vars[n - 1 - pick(std::min(n, 3))] : vars[pick(n)];
  }

  // ---- inputs ------------------------------------------------------------------------------------
  Shape random_shape() {
    for (;;) {
      Shape s;
      int nd = 1 + pick(4);
      for (int i = 0; i < nd; ++i) s.push_back(1 + pick(chance(20) ? 9 : 5));
      if (numel_of(s) <= kMaxNumel / 2) return s;
    }
  }
  double float_value(DType dt) {
    int k = pick(100);
    if (k < 78) return (pick(41) - 20) / 4.0;
    if (k < 88) return (pick(2001) - 1000) / 8.0;
    static const std::vector<double> special = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                                -std::numeric_limits<double>::infinity(), -0.0, 65504.0, 3e9, -3e9, 1e30, -1e30,
                                                300.5, -129.75, 1e-3, 2147483648.0, 1.5e19};
    double v = one_of(special);
    if (dt == dtypes::float16 && std::fabs(v) > 65504 && std::isfinite(v)) v = v > 0 ? 65504 : -65504;
    return v;
  }
  int64_t int_value(DType dt) {
    if (is_bool(dt)) return pick(2);
    bool uns = is_unsigned(dt);
    int bits = dt->bitsize;
    if (pick(100) < 85) return uns ? pick(21) : pick(21) - 10;
    int64_t lo = uns ? 0 : (bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1)));
    int64_t hi = bits == 64 ? INT64_MAX : uns ? (int64_t{1} << bits) - 1 : (int64_t{1} << (bits - 1)) - 1;
    std::vector<int64_t> extremes = {lo, hi, lo + 1, hi - 1, uns ? 1 : -1, 0};
    return one_of(extremes);
  }
  // random values of a shape and dtype as a python list (and into h)
  std::string values(const Shape& s, DType dt, HostData* h) {
    std::string list = "[";
    for (int64_t i = 0, n = numel_of(s); i < n; ++i) {
      if (i) list += ", ";
      if (is_float(dt)) {
        double v = float_value(dt);
        if (h) h->f.push_back(v);
        list += py_float(v);
      } else {
        int64_t v = int_value(dt);
        if (h) h->i.push_back(v);
        list += is_bool(dt) ? (v ? "True" : "False") : std::to_string(v);
      }
    }
    return list + "]";
  }
  Var& input(const Shape& s, DType dt0) {
    DType dt = strong(dt0);  // an input next to a weak value (a python constant's dtype) gets its strong dtype
    HostData h;
    h.shape = s;
    h.dtype = dt;
    std::string list = values(s, dt, &h);
    Tensor t = Tensor::from_host(h);
    std::string expr = "Tensor(" + list + ", dtype=" + py_dtype(dt) + ")";
    if (s.size() != 1) expr += ".reshape(" + (s.empty() ? std::string("()") : py_args(s)) + ")";
    ++ops;
    Var& v = add(t, expr);
    v.input = true;
    v.alias = v.plain = true;
    stmts.back().input = true;
    inputs.push_back({v.name, s, dt, list});
    return v;
  }
  DType input_dtype() {
    // bfloat16 comes from casts (the host has no bf16 conversion); float32 and int32 most often
    static const std::vector<DType> v = {dtypes::float32, dtypes::float32, dtypes::float32, dtypes::int32, dtypes::int32,
                                         dtypes::bool_,   dtypes::int8,    dtypes::uint8,   dtypes::int16, dtypes::uint16,
                                         dtypes::uint32,  dtypes::int64,   dtypes::uint64,  dtypes::float16, dtypes::float64};
    return one_of(v);
  }
  // a new input whose shape broadcasts against s (some dims 1, maybe fewer leading dims)
  Var& broadcastable_input(const Shape& s, DType dt) {
    Shape b = s;
    for (auto& d : b)
      if (chance(30)) d = 1;
    if (b.size() > 1 && chance(20)) b.erase(b.begin());
    return input(b, dt);
  }
  Scalar scalar_for(DType dt) {
    if (is_bool(dt) && chance(50)) {
      bool v = pick(2);
      return {v ? "True" : "False", Tensor::scalar(v, dtypes::bool_)};
    }
    if (is_float(dt) || chance(25)) {
      double v = chance(85) ? (pick(33) - 16) / 4.0 : one_of(std::vector<double>{0.0, -0.5, 1e-3, 1000.5, 3e9});
      return {py_float(v), Tensor::scalar(v, dtypes::weakfloat)};
    }
    int64_t v = chance(85) ? pick(17) - 8 : one_of(std::vector<int64_t>{0, 31, 32, 33, 63, 64, 127, 255, 65535, 2147483647, -2147483648LL});
    return {std::to_string(v), Tensor::scalar(static_cast<double>(v), dtypes::weakint)};
  }

  // ---- operations (each returns false when it does not apply to the picked operands) -------------
  bool unary() {
    Var x = any_var();
    DType dt = x.t.dtype();
    struct U { const char* name; Tensor (Tensor::*fn)() const; bool floats_only; };
    static const std::vector<U> us = {
        {"neg", &Tensor::neg, false},     {"abs", &Tensor::abs, false},       {"relu", &Tensor::relu, false},
        {"exp2", &Tensor::exp2, true},    {"log2", &Tensor::log2, true},      {"sqrt", &Tensor::sqrt, true},
        {"sin", &Tensor::sin, true},      {"reciprocal", &Tensor::reciprocal, true}, {"trunc", &Tensor::trunc, true},
        {"exp", &Tensor::exp, true},      {"floor", &Tensor::floor, true},    {"ceil", &Tensor::ceil, true},
        {"sigmoid", &Tensor::sigmoid, true}, {"square", &Tensor::square, false}};
    if (is_bool(dt)) {
      Tensor t = x.t.logical_not();
      return add(t, x.name + ".logical_not()"), true;
    }
    const U& u = one_of(us);
    if (u.floats_only && !is_float(dt)) return false;
    if (is_unsigned(dt) && (std::string(u.name) == "neg" || std::string(u.name) == "abs")) return false;
    Tensor t = (x.t.*u.fn)();
    add(t, x.name + "." + u.name + "()");
    return true;
  }
  bool cast() {
    Var x = any_var();
    DType to = one_of(all_dtypes());
    add(x.t.cast(to), x.name + ".cast(" + py_dtype(to) + ")");
    return true;
  }
  bool bitcast() {
    Var x = any_var();
    DType dt = x.t.dtype();
    // a computed NaN's sign and payload are the hardware's or the compiler's (x86 0/0 is -NaN, clang folds it to
    // +NaN): bitcast floats only as they came from the host
    if (is_bool(dt) || (is_float(dt) && !x.input)) return false;
    std::vector<DType> same;
    for (DType d : all_dtypes())
      if (!is_bool(d) && d != dt && d->bitsize == dt->bitsize) same.push_back(d);
    if (same.empty()) return false;
    DType to = one_of(same);
    add(x.t.bitcast(to), x.name + ".bitcast(" + py_dtype(to) + ")");
    return true;
  }
  bool binary() {
    Var x = any_var();
    DType dt = x.t.dtype();
    enum Kind { ARITH, DIV, FLOORDIV, MOD, BIT, SHIFT, POW, CMP, MINMAX };
    // the Tensor method of the operator (shifts are the SHL/SHR ALU ops, as the python binding's << and >>)
    using Fn = Tensor (Tensor::*)(const Tensor&) const;
    struct B { const char* op; Kind kind; Fn fn; Ops shift; };
    static const std::vector<B> bs = {
        {"+", ARITH, &Tensor::add, Ops::NOOP},          {"-", ARITH, &Tensor::sub, Ops::NOOP},
        {"*", ARITH, &Tensor::mul, Ops::NOOP},          {"/", DIV, &Tensor::div, Ops::NOOP},
        {"//", FLOORDIV, &Tensor::floordiv, Ops::NOOP}, {"%", MOD, &Tensor::mod, Ops::NOOP},
        {"&", BIT, &Tensor::bitwise_and, Ops::NOOP},    {"|", BIT, &Tensor::bitwise_or, Ops::NOOP},
        {"^", BIT, &Tensor::bitwise_xor, Ops::NOOP},    {"<<", SHIFT, nullptr, Ops::SHL},
        {">>", SHIFT, nullptr, Ops::SHR},               {"**", POW, &Tensor::pow, Ops::NOOP},
        {"<", CMP, &Tensor::lt, Ops::NOOP},             {">", CMP, &Tensor::gt, Ops::NOOP},
        {"<=", CMP, &Tensor::le, Ops::NOOP},            {">=", CMP, &Tensor::ge, Ops::NOOP},
        {"==", CMP, &Tensor::eq, Ops::NOOP},            {"!=", CMP, &Tensor::ne, Ops::NOOP},
        {"maximum", MINMAX, &Tensor::maximum, Ops::NOOP}, {"minimum", MINMAX, &Tensor::minimum, Ops::NOOP}};
    const B& b = one_of(bs);
    std::string op = b.op;
    // the other operand: a value of the same shape, a new broadcastable input, or a python scalar
    Tensor y;
    std::string yname;
    int how = pick(10);
    DType want = chance(70) ? dt : input_dtype();
    if (b.kind == BIT && !(is_intlike(dt) || is_bool(dt))) return false;
    if (b.kind == SHIFT && !is_intlike(dt)) return false;
    if (b.kind == POW && !is_float(dt)) return false;
    if ((b.kind == ARITH || b.kind == FLOORDIV || b.kind == MOD) && is_bool(dt)) return false;
    if (b.kind == BIT) want = chance(80) ? dt : (is_bool(dt) ? dtypes::bool_ : dt);
    if (b.kind == SHIFT) want = is_intlike(want) ? want : dt;
    if (how < 4) {
      std::vector<Var*> same;
      for (auto& v : vars) {
        DType vd = v.t.dtype();
        bool fits = b.kind == SHIFT ? is_intlike(vd) : b.kind == BIT ? (is_bool(dt) ? is_bool(vd) : is_intlike(vd))
                                                                      : !is_bool(vd) || b.kind == CMP || b.kind == MINMAX;
        if (v.t.shape() == x.t.shape() && fits) same.push_back(&v);
      }
      if (same.empty()) how = 5;
      else {
        Var* v = same[pick(static_cast<int>(same.size()))];
        y = v->t;
        yname = v->name;
      }
    }
    if (how >= 4 && how < 7) {
      Var& v = broadcastable_input(x.t.shape(), want);
      y = v.t;
      yname = v.name;
    } else if (how >= 7) {
      Scalar s = scalar_for(dt);
      if ((b.kind == SHIFT || b.kind == BIT) && s.text.find_first_of(".e") != std::string::npos) return false;
      if (b.kind == SHIFT && (s.text == "True" || s.text == "False")) return false;
      y = s.t;
      yname = s.text;
    }
    // bitwise ops and shifts need an int (or bool) result: uint64 with int64 promotes to a float (the reference
    // rejects that program)
    if ((b.kind == BIT || b.kind == SHIFT) && is_float(least_upper(dt, y.dtype()))) return false;
    Tensor t = b.fn ? (x.t.*b.fn)(y) : x.t.alu(b.shift, y);
    std::string expr = b.kind == MINMAX ? x.name + "." + op + "(" + yname + ")" : "(" + x.name + " " + op + " " + yname + ")";
    add(t, expr);
    return true;
  }
  bool where() {
    Var x = any_var();
    Tensor c;
    std::string cname;
    std::vector<Var*> bools;
    for (auto& v : vars)
      if (is_bool(v.t.dtype()) && v.t.shape() == x.t.shape()) bools.push_back(&v);
    if (!bools.empty() && chance(50)) {
      Var* v = bools[pick(static_cast<int>(bools.size()))];
      c = v->t;
      cname = v->name;
    } else {
      if (is_bool(x.t.dtype())) return false;
      Scalar s = scalar_for(x.t.dtype());
      c = x.t.lt(s.t);
      cname = "(" + x.name + " < " + s.text + ")";
    }
    Tensor other;
    std::string oname;
    if (chance(50)) {
      Scalar s = scalar_for(x.t.dtype());
      other = s.t;
      oname = s.text;
    } else {
      Var& v = broadcastable_input(x.t.shape(), chance(70) ? x.t.dtype() : input_dtype());
      other = v.t;
      oname = v.name;
    }
    bool swap = chance(50);
    Tensor t = swap ? c.where(other, x.t) : c.where(x.t, other);
    add(t, cname + ".where(" + (swap ? oname + ", " + x.name : x.name + ", " + oname) + ")");
    return true;
  }
  bool reduce() {
    Var x = any_var();
    int nd = static_cast<int>(x.t.ndim());
    if (nd == 0) return false;
    std::vector<int64_t> axes;
    for (int i = 0; i < nd; ++i)
      if (chance(45)) axes.push_back(i);
    if (axes.empty()) axes.push_back(pick(nd));
    bool all = chance(15);
    bool keep = chance(50);
    int k = pick(9);
    std::string kw = std::string(all ? "" : "axis=" + py_tuple(axes) + ", ") + "keepdim=" + (keep ? "True" : "False");
    AxisArg ax = all ? AxisArg{} : AxisArg{axes};
    DType dt = x.t.dtype();
    if (k <= 1) return add(x.t.sum(ax, keep), x.name + ".sum(" + kw + ")"), true;
    if (k == 2) return add(x.t.max(ax, keep), x.name + ".max(" + kw + ")"), true;
    if (k == 3) return add(x.t.min(ax, keep), x.name + ".min(" + kw + ")"), true;
    if (k == 4) {
      if (is_bool(dt)) return false;
      return add(x.t.prod(ax, keep), x.name + ".prod(" + kw + ")"), true;
    }
    if (k == 5) {
      if (!is_float(dt)) return false;
      return add(x.t.mean(ax, keep), x.name + ".mean(" + kw + ")"), true;
    }
    if (k == 6) {
      if (is_bool(dt)) return false;
      int64_t a = pick(nd);
      bool mx = chance(50);
      Tensor t = mx ? x.t.argmax(a, keep) : x.t.argmin(a, keep);
      return add(t, x.name + (mx ? ".argmax(" : ".argmin(") + "axis=" + std::to_string(a) + ", keepdim=" + (keep ? "True" : "False") + ")"), true;
    }
    if (k == 7) {
      if (!is_bool(dt)) return false;
      bool any = chance(50);
      return add(any ? x.t.any(ax, keep) : x.t.all(ax, keep), x.name + (any ? ".any(" : ".all(") + kw + ")"), true;
    }
    int64_t a = pick(nd);
    if (is_bool(dt)) return false;
    return add(x.t.cumsum(a), x.name + ".cumsum(axis=" + std::to_string(a) + ")"), true;
  }
  bool movement() {
    Var x = any_var();
    const Shape s = x.t.shape();
    int nd = static_cast<int>(s.size());
    int k = pick(8);
    if (nd == 0) return false;
    if (k == 0) {  // reshape to a random factorization of numel
      int64_t n = numel_of(s);
      std::vector<int64_t> f;
      int64_t rest = n;
      while (rest > 1 && f.size() < 4) {
        std::vector<int64_t> divs;
        for (int64_t d = 2; d <= rest; ++d)
          if (rest % d == 0) divs.push_back(d);
        int64_t d = f.size() == 3 ? rest : one_of(divs);
        f.push_back(d);
        rest /= d;
      }
      if (f.empty()) f.push_back(1);
      if (chance(30)) f.insert(f.begin() + pick(static_cast<int>(f.size()) + 1), 1);
      return add(x.t.reshape(f), x.name + ".reshape(" + py_args(f) + ")"), true;
    }
    if (k == 1) {
      std::vector<int64_t> p(nd);
      std::iota(p.begin(), p.end(), 0);
      std::shuffle(p.begin(), p.end(), rng);
      return add(x.t.permute(p), x.name + ".permute(" + py_args(p) + ")"), true;
    }
    if (k == 2) {  // expand a size-1 axis (adding one in front when there is none)
      Shape e = s;
      std::vector<int> ones;
      for (int i = 0; i < nd; ++i)
        if (s[i] == 1) ones.push_back(i);
      Tensor base = x.t;
      std::string bname = x.name;
      if (ones.empty()) {
        if (nd >= 4) return false;
        base = x.t.unsqueeze(0);
        bname = x.name + ".unsqueeze(0)";
        e.insert(e.begin(), 1);
        ones.push_back(0);
      }
      e[one_of(ones)] = 2 + pick(3);
      if (numel_of(e) > kMaxNumel) return false;
      return add(base.expand(e), bname + ".expand(" + py_args(e) + ")"), true;
    }
    if (k == 3) {  // pad one or several axes with a value of the dtype
      std::vector<std::pair<int64_t, int64_t>> pads(nd, {0, 0});
      Shape out = s;
      for (int i = 0; i < nd; ++i)
        if (chance(50)) {
          pads[i] = {pick(3), pick(3)};
          out[i] += pads[i].first + pads[i].second;
        }
      if (numel_of(out) > kMaxNumel) return false;
      DType dt = x.t.dtype();
      double v = is_bool(dt) ? pick(2) : is_float(dt) ? (pick(17) - 8) / 2.0 : (is_unsigned(dt) ? pick(9) : pick(17) - 8);
      std::string vt = is_bool(dt) ? (v ? "True" : "False") : is_float(dt) ? py_float(v) : std::to_string(static_cast<int64_t>(v));
      return add(x.t.pad(pads, v), x.name + ".pad(" + py_pairs(pads) + ", value=" + vt + ")"), true;
    }
    if (k == 4) {  // shrink
      std::vector<std::pair<int64_t, int64_t>> b;
      for (int i = 0; i < nd; ++i) {
        int64_t lo = pick(static_cast<int>(s[i])), hi = lo + 1 + pick(static_cast<int>(s[i] - lo));
        b.push_back(chance(60) ? std::make_pair(lo, hi) : std::make_pair(int64_t{0}, s[i]));
      }
      return add(x.t.shrink(b), x.name + ".shrink(" + py_pairs(b) + ")"), true;
    }
    if (k == 5) {
      std::vector<int64_t> axes;
      for (int i = 0; i < nd; ++i)
        if (chance(50)) axes.push_back(i);
      if (axes.empty()) axes.push_back(pick(nd));
      return add(x.t.flip(axes), x.name + ".flip(" + py_tuple(axes) + ")"), true;
    }
    if (k == 6) {
      if (nd < 2) return false;
      int64_t a = pick(nd), b = pick(nd);
      return add(x.t.transpose(a, b), x.name + ".transpose(" + std::to_string(a) + ", " + std::to_string(b) + ")"), true;
    }
    return add(x.t.contiguous(), x.name + ".contiguous()"), true;
  }
  bool matmul() {
    Var x = any_var();
    DType dt = x.t.dtype();
    if (is_bool(dt) || x.t.ndim() == 0 || x.t.ndim() > 3) return false;
    int64_t kdim = x.t.shape().back(), m = 1 + pick(5);
    Shape out = x.t.shape();
    out.back() = m;
    if (numel_of(out) * kdim > kMaxNumel * 4) return false;
    Var& w = input({kdim, m}, chance(80) ? dt : input_dtype());
    if (is_bool(w.t.dtype())) return false;
    return add(x.t.matmul(w.t), "(" + x.name + " @ " + w.name + ")"), true;
  }
  bool realize_now() {
    Var x = any_var();
    Tensor t = x.t;
    t.realize();
    add(t, x.name + ".realize()");
    return true;
  }

  void step() {
    for (int attempt = 0; attempt < 20; ++attempt) {
      int k = pick(100);
      bool done;
      if (k < 30) done = binary();
      else if (k < 42) done = unary();
      else if (k < 52) done = cast();
      else if (k < 55) done = bitcast();
      else if (k < 63) done = where();
      else if (k < 75) done = reduce();
      else if (k < 90) done = movement();
      else if (k < 95) done = matmul();
      else done = realize_now();
      if (done) {
        ++ops;
        // no program grows past the size limit
        if (numel_of(vars.back().t.shape()) > kMaxNumel) vars.pop_back();
        else return;
      }
    }
  }
};

std::string show(double v) { return py_float(v); }

// results of one device: every output's values (floats in f, ints/bools in i) or the error
struct Result {
  std::vector<HostData> outs;
  std::vector<DType> dtypes_;
  std::vector<double> tols;
  std::string error;
};

Result run_on(const std::string& dev, uint32_t seed, std::string* source = nullptr) {
  use_device(dev);
  Result r;
  try {
    Program p = build(seed);
    if (source) *source = p.source;
    r.tols = p.tols;
    std::vector<Tensor> reads;
    // read as tolist() does: bfloat16 through float32 (the host has no bf16 conversion), weak dtypes as strong ones
    for (auto& t : p.outs) reads.push_back(t.dtype() == dtypes::bfloat16 ? t.cast(dtypes::float32) : is_weak(t.dtype()) ? t.cast(strong(t.dtype())) : t);
    Tensor::realize_all(reads);
    for (size_t i = 0; i < reads.size(); ++i) {
      r.outs.push_back(reads[i].data());
      r.dtypes_.push_back(p.outs[i].dtype());
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

std::string compare(const Result& ref, const Result& got, const std::string& dev) {
  if (!ref.error.empty() || !got.error.empty()) {
    if (ref.error.empty() != got.error.empty()) return dev + (got.error.empty() ? " ran, INTERP failed: " + ref.error : " failed: " + got.error);
    return "every device rejects the program: " + ref.error;
  }
  for (size_t o = 0; o < ref.outs.size(); ++o) {
    const HostData &a = ref.outs[o], &b = got.outs[o];
    std::string where = dev + " output " + std::to_string(o) + " (" + dtype_repr(ref.dtypes_[o]) + ")";
    if (a.shape != b.shape) return where + ": shapes differ";
    if (a.i != b.i) {
      if (a.i.size() != b.i.size()) return where + ": sizes differ";
      // an integer truncated from a float computation (exp(x).cast(int64)) carries that float's error: within its
      // tolerance, and one more for the truncation's boundary (2.9999998 against 3.0); an integer computation is exact
      const double itol = ref.tols[o];
      for (size_t k = 0; k < a.i.size(); ++k) {
        const double x = static_cast<double>(a.i[k]), y = static_cast<double>(b.i[k]);
        if (a.i[k] == b.i[k] || (itol > 0 && std::fabs(x - y) <= itol * std::max(std::fabs(x), std::fabs(y)) + 1)) continue;
        return where + " element " + std::to_string(k) + ": " + std::to_string(b.i[k]) + " vs INTERP " + std::to_string(a.i[k]);
      }
    }
    if (a.f.size() != b.f.size()) return where + ": sizes differ";
    double scale = 1;
    for (double v : a.f)
      if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    double tol = std::max(rel_tol(ref.dtypes_[o]), ref.tols[o]);
    for (size_t k = 0; k < a.f.size(); ++k) {
      double x = a.f[k], y = b.f[k];
      if (std::isnan(x) || std::isnan(y)) {
        if (std::isnan(x) && std::isnan(y)) continue;
      } else if (x == y || (std::isfinite(x) && std::isfinite(y) && std::fabs(x - y) <= tol * std::max(std::fabs(x), std::fabs(y)) + tol * 1e-3 * scale)) {
        continue;
      }
      return where + " element " + std::to_string(k) + ": " + show(y) + " vs INTERP " + show(x);
    }
  }
  return "";
}

}  // namespace

void use_device(const std::string& dev) {
  realize_config().device = dev;
  set_default_device(get_device(dev).memory());  // VULKAN's tensors live in its memory
}

void init() {
  static bool done = false;
  if (done) return;
  done = true;
  cpu::install();
  register_host_devices();
  // the Khronos validation layer watches every VULKAN program (FUZZ_VALIDATION=0: off); a message fails the program
  vk::DeviceOptions vo;
  const char* val = std::getenv("FUZZ_VALIDATION");
  vo.validation = !(val && std::string(val) == "0");
  std::string why;
  if (vk::register_vulkan_devices(vo, &why) == 0) throw Error("no Vulkan device for the differential test: " + why);
  install_realize();
  realize_config().debug = 0;
  // the interpreter rounds every product: the C renderer's kernels do too (no a*b+c fused into one fma), so an
  // ill-conditioned program compares its codegen, not the rounding of a fused multiply-add
  codegen_options()["FP_CONTRACT"] = "0";
}

Program build(uint32_t seed) {
  Gen g(seed);
  g.src << "from tinygrad import Tensor, dtypes\n";
  g.input(g.random_shape(), g.input_dtype());
  if (g.chance(50)) g.input(g.random_shape(), g.input_dtype());
  int steps = 2 + g.pick(9);
  for (int s = 0; s < steps; ++s) g.step();
  Program p;
  p.seed = seed;
  p.outs.push_back(g.vars.back().t);
  p.tols.push_back(g.vars.back().tol);
  std::vector<bool> aliases = {g.vars.back().alias};
  std::string names = g.vars.back().name;
  if (g.vars.size() > 2 && g.chance(40)) {
    const Var& v = g.vars[g.pick(static_cast<int>(g.vars.size()) - 1)];
    p.outs.insert(p.outs.begin(), v.t);
    p.tols.insert(p.tols.begin(), v.tol);
    aliases.insert(aliases.begin(), v.alias);
    names = v.name + ", " + names;
  }
  g.src << "print([t.tolist() for t in [" << names << "]])\n";
  p.source = g.src.str();
  p.ops = g.ops;

  // the python function form: inputs as parameters, the second half of the statements on MV when it is given
  std::ostringstream d;
  std::string params;
  for (const auto& in : g.inputs) params += in.name + ", ";
  d << "def p" << seed << "(" << params << "MV=None):\n";
  int body = 0, at = 0;
  for (const auto& st : g.stmts) body += !st.input;
  std::vector<std::string> live;
  for (const auto& in : g.inputs) live.push_back(in.name);
  for (const auto& st : g.stmts) {
    if (st.input) continue;
    if (at++ == body / 2 && body >= 2) {
      std::string l, r;
      for (size_t i = 0; i < live.size(); ++i) l += (i ? ", " : "") + live[i], r += (i ? ", " : "") + live[i] + ".to(MV)";
      d << "  if MV: " << l << (live.size() == 1 ? "," : "") << " = " << r << "\n";
    }
    d << "  " << st.name << " = " << st.expr << "\n";
    live.push_back(st.name);
  }
  d << "  return [" << names << "]\n";
  // four sets of inputs: the program's own, then three more of the same shapes and dtypes
  std::string specs, sets = "[";
  for (const auto& in : g.inputs) specs += "(" + py_tuple(in.shape) + ", " + py_dtype(in.dtype) + "), ";
  for (int k = 0; k < 4; ++k) {
    Gen alt(seed * 2654435761u + static_cast<uint32_t>(k));
    sets += k ? ", [" : "[";
    for (size_t i = 0; i < g.inputs.size(); ++i) sets += (i ? ", " : "") + (k ? alt.values(g.inputs[i].shape, g.inputs[i].dtype, nullptr) : g.inputs[i].data);
    sets += "]";
  }
  std::string tols, alias;
  for (size_t i = 0; i < p.tols.size(); ++i) tols += (i ? ", " : "") + py_float(p.tols[i]), alias += std::string(i ? ", " : "") + (aliases[i] ? "True" : "False");
  d << "PROGRAMS.append((" << seed << ", p" << seed << ", [" << specs << "], " << sets << "], [" << tols << "], [" << alias << "]))\n";
  p.python_def = d.str();
  return p;
}

Outcome run_program(uint32_t seed) {
  init();
  std::string source;
  Result ref = run_on("INTERP", seed, &source);
  Outcome out;
  for (const char* dev : {"CPU", "CPU:LLVM", "INTERP:GPU", "VULKAN"}) {
    const uint64_t messages = vk::validation_message_count();
    Result got = run_on(dev, seed);
    std::string last;
    if (vk::validation_message_count(&last) != messages) {
      out.ok = false;
      out.what = "seed " + std::to_string(seed) + ": " + dev + ": the Vulkan validation layer: " + last + "\n--- program (seed " + std::to_string(seed) + ") ---\n" + source;
      return out;
    }
    // a refusal naming what the device cannot do is VULKAN's right answer: lavapipe's loop limit, and float64
    // transcendentals (GLSL has exp2/log2/sin/pow for float32 and float16 only)
    if (std::string(dev) == "VULKAN" && (got.error.find("would return wrong data") != std::string::npos ||
                                         got.error.find("has no GLSL builtin") != std::string::npos))
      continue;
    std::string why = compare(ref, got, dev);
    if (!why.empty()) {
      out.ok = false;
      out.what = "seed " + std::to_string(seed) + ": " + why + "\n--- program (seed " + std::to_string(seed) + ") ---\n" + source;
      return out;
    }
  }
  return out;
}

}  // namespace ts::fuzz
