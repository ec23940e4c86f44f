// Tests for the rewrite rules of symbolic, the reduce and load collapses, codegen's lowering passes and rangeify, one
// rewrite a rule: each fires under its own name on a small hand-built graph (or, for rangeify, a small tensor program)
// and gives the graph expected; and no rule of these tables is dead (every one fires on some graph here).
#include <QtTest/QtTest>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "engine/codegen/lowering.h"
#include "engine/codegen/opt.h"
#include "engine/schedule/multi.h"
#include "engine/schedule/rangeify.h"
#include "engine/schedule/schedule.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/pattern.h"
#include "engine/uop/symbolic.h"
#include "engine/uop/uop.h"
#include "uop_builders.h"

using namespace ts;

namespace {

const DType i32 = dtypes::int32, f32 = dtypes::float32, b8 = dtypes::bool_, bf16 = dtypes::bfloat16;

using ts_test::node;
using ts_test::var;
UOpRef ic(int64_t v, DType dt = dtypes::int32) { return uconst_int(dt, v); }
UOpRef fc(double v, DType dt = dtypes::float32) { return uconst(dt, v); }
// a kernel buffer of `size` elements, and a LOCAL one
UOpRef param(int64_t slot, int64_t size, DType dt = dtypes::float32) {
  ParamArg a;
  a.slot = slot;
  a.size = size;
  return UOp::make(Ops::PARAM, dt, {}, a);
}
UOpRef local_buffer(int64_t size, DType dt = dtypes::float32) {
  ParamArg a;
  a.size = size;
  a.addrspace = AddrSpace::LOCAL;
  return UOp::make(Ops::BUFFER, dt, {}, a);
}
UOpRef rng(int64_t size, int64_t id, AxisType t = AxisType::LOOP) { return urange(size, id, t); }
UOpRef index(const UOpRef& buf, const UOpRef& i) { return node(Ops::INDEX, buf->dtype, {buf, i}); }
UOpRef store(const UOpRef& idx, const UOpRef& v) { return node(Ops::STORE, dtypes::void_, {idx, v}); }
UOpRef end(UOps src) { return node(Ops::END, dtypes::void_, std::move(src)); }
UOpRef reduce(Ops op, DType dt, UOps src) { return node(Ops::REDUCE, dt, std::move(src), ReduceArg{op, 0}); }
bool is_const(const UOpRef& x, double v) { return x && x->op == Ops::CONST && !x->is<Invalid>() && x->const_float() == v; }

// the rules of `pm` written in the function `fn` (a rule table's part): their names
std::set<std::string> rules_of(const PatternMatcher& pm, const char* fn) {
  std::set<std::string> out;
  for (const Rule& r : pm.rules())
    if (std::string(r.loc.function_name()).find(fn) != std::string::npos) out.insert(r.name);
  return out;
}
std::set<std::string> names_of(const PatternMatcher& pm) {
  std::set<std::string> out;
  for (const Rule& r : pm.rules()) out.insert(r.name);
  return out;
}
std::string missing(const std::set<std::string>& want, const std::set<std::string>& got) {
  std::string out;
  for (auto& n : want)
    if (!got.count(n)) out += "'" + n + "' ";
  return out;
}

// Fires one rewrite of a graph's root with a table and keeps the names of the rules that fired.
struct Firing {
  std::set<std::string> fired;
  // the result of the rule named `name` on `before`, nullptr when another rule (or none) fired first
  UOpRef operator()(const PatternMatcher& pm, const UOpRef& before, const std::string& name, const RewriteCtx& ctx = {}) {
    const Rule* r = nullptr;
    UOpRef out = pm.rewrite(before, ctx, &r);
    if (!r) {
      qWarning("no rule fired (wanted '%s')", name.c_str());
      return nullptr;
    }
    fired.insert(r->name);
    if (r->name != name) qWarning("'%s' fired, wanted '%s'", r->name.c_str(), name.c_str());
    return r->name == name ? out : nullptr;
  }
};

// every rule that fires while a listener is installed: its name, the node before and the one after
struct Recorder : RewriteListener {
  struct Match {
    std::string pass, rule;
    UOpRef before, after;
  };
  std::vector<Match> matches;
  std::string pass;
  RewriteListener* saved;
  Recorder() : saved(rewrite_listener()) { rewrite_listener() = this; }
  ~Recorder() override { rewrite_listener() = saved; }
  void on_pass_begin(std::string_view name, const UOpRef&) override { pass = name; }
  void on_match(const UOpRef& before, const UOpRef& after, const Rule& rule) override {
    matches.push_back({pass, rule.name, before, after});
  }
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (auto& m : matches) out.insert(m.rule);
    return out;
  }
  // the first match of `rule` for which `ok(before, after)` holds
  bool has(const std::string& rule, const std::function<bool(const UOpRef&, const UOpRef&)>& ok) const {
    for (auto& m : matches)
      if (m.rule == rule && ok(m.before, m.after)) return true;
    return false;
  }
};

}  // namespace

class TestRules : public QObject {
  Q_OBJECT
  std::set<std::string> symbolic_fired_;

 private slots:
  // symbolic's rules besides the identities, WHERE, POW and floor-division comparisons (test_pattern has those)
  void symbolic_rules_fire_one_each() {
    const UOpRef a = var("a"), b = var("b"), b3 = var("b3", i32, 0, 3), t3 = var("t3", i32, -3, 0), t5 = var("t5", i32, -5, 0);
    const UOpRef w = var("w", i32, 0, 100), p = var("p", b8, 0, 1), q = var("q", b8, 0, 1), fx = var("fx", f32);
    const UOpRef wk = var("wk", dtypes::weakint);
    Firing fire;
    const PatternMatcher& pm = symbolic();
    auto add = [](const UOpRef& x, const UOpRef& y) { return node(Ops::ADD, x->dtype, {x, y}); };
    auto mul = [](const UOpRef& x, const UOpRef& y) { return node(Ops::MUL, x->dtype, {x, y}); };
    auto div = [](const UOpRef& x, int64_t c) { return node(Ops::FLOORDIV, x->dtype, {x, ic(c, x->dtype)}); };
    auto mod = [](const UOpRef& x, int64_t c) { return node(Ops::FLOORMOD, x->dtype, {x, ic(c, x->dtype)}); };

    QVERIFY(is_const(fire(pm, add(ic(2), ic(3)), "constant folding"), 5));
    // MAX from WHERE, bool MUL and MAX
    UOpRef r = fire(pm, node(Ops::WHERE, i32, {node(Ops::CMPLT, b8, {ic(3), a}), a, ic(3)}), "(c<x).where(x, c) -> max(c, x)");
    QVERIFY(r && r->op == Ops::MAX && is_const(r->src[0], 3) && r->src[1] == a);
    r = fire(pm, node(Ops::WHERE, i32, {node(Ops::CMPLT, b8, {a, ic(3)}), ic(3), a}), "(x<c).where(c, x) -> max(x, c)");
    QVERIFY(r && r->op == Ops::MAX && r->src[0] == a && is_const(r->src[1], 3));
    r = fire(pm, node(Ops::MUL, b8, {p, q}), "a*b -> a and b (bools)");
    QVERIFY(r && r->op == Ops::AND && r->src[0] == p && r->src[1] == q);
    r = fire(pm, node(Ops::MAX, b8, {p, q}), "max(a, b) -> a or b (bools)");
    QVERIFY(r && r->op == Ops::OR && r->src[0] == p && r->src[1] == q);
    // folds by bounds (a in [0, 10])
    r = fire(pm, node(Ops::CMPLT, b8, {a, ic(20)}), "comparison true by bounds -> true");
    QVERIFY(is_const(r, 1) && r->dtype == b8);
    r = fire(pm, node(Ops::CMPLT, b8, {a, ic(0)}), "comparison false by bounds -> false");
    QVERIFY(is_const(r, 0) && r->dtype == b8);
    r = fire(pm, node(Ops::WHERE, b8, {p, node(Ops::CMPLT, b8, {a, ic(20)}), node(Ops::CMPLT, b8, {b, ic(30)})}),
             "bool math decided by bounds -> true/false");
    QVERIFY(is_const(r, 1) && r->dtype == b8);
    r = fire(pm, div(a, 20), "int math of one value (vmin == vmax) -> that constant");
    QVERIFY(is_const(r, 0) && r->dtype == i32);
    // x//c and x%c by a constant
    r = fire(pm, mod(a, 20), "x%c -> x (0 <= x < c)");
    QVERIFY(r == a);
    // b3 + 41 lies in [41, 44]: one period of 20 (the third)
    r = fire(pm, mod(add(b3, ic(41)), 20), "x%c -> x - k*c (k*c <= x < (k+1)*c)");
    QVERIFY(r && r->op == Ops::ADD && is_const(r->src[1], -40) && r->src[0]->op == Ops::ADD && r->src[0]->src[0] == b3);
    r = fire(pm, div(div(w, 2), 3), "(x//a)//c -> x//(a*c)");
    QVERIFY(r && r->op == Ops::FLOORDIV && r->src[0] == w && is_const(r->src[1], 6));
    r = fire(pm, mod(mod(w, 6), 3), "(x%(k*c))%c -> x%c");
    QVERIFY(r && r->op == Ops::FLOORMOD && r->src[0] == w && is_const(r->src[1], 3));
    r = fire(pm, mod(add(mul(a, ic(4)), b3), 4), "x%c -> x with its coefficients mod c (that sum in [0, c))");
    QVERIFY(r == b3);
    r = fire(pm, mod(add(mul(a, ic(5)), b), 4), "x%c -> (x with its coefficients mod c)%c");
    QVERIFY(r && r->op == Ops::FLOORMOD && r->src[0]->op == Ops::ADD && r->src[0]->src[0] == a && r->src[0]->src[1] == b);
    r = fire(pm, div(add(mul(a, ic(4)), mul(b, ic(2))), 8), "(g*x)//c -> x//(c/g) (g the gcd of the terms, g | c)");
    QVERIFY(r && r->op == Ops::FLOORDIV && is_const(r->src[1], 4) && r->src[0]->op == Ops::ADD && r->src[0]->src[1] == b);
    r = fire(pm, div(add(mul(a, ic(4)), b3), 4), "(c*q + r)//c -> q (0 <= r < c)");
    QVERIFY(r == a);
    r = fire(pm, div(add(mul(a, ic(4)), b), 4), "(c*q + r)//c -> q + r//c (r >= 0)");
    QVERIFY(r && r->op == Ops::ADD && r->src[0] == a && r->src[1]->op == Ops::FLOORDIV && r->src[1]->src[0] == b);
    r = fire(pm, mod(add(mul(a, ic(4)), mul(t3, ic(-1))), 4), "(c*q + r)%c -> r (0 <= r < c)");
    QVERIFY(r && r->op == Ops::MUL && r->src[0] == t3 && is_const(r->src[1], -1));
    r = fire(pm, mod(add(mul(a, ic(4)), mul(t5, ic(-1))), 4), "(c*q + r)%c -> r%c (r >= 0)");
    QVERIFY(r && r->op == Ops::FLOORMOD && r->src[0]->op == Ops::MUL && r->src[0]->src[0] == t5);
    // ADD chains
    r = fire(pm, add(mul(div(a, 4), ic(4)), mod(a, 4)), "(x//c)*c + x%c -> x");
    QVERIFY(r == a);
    r = fire(pm, add(add(a, b), mul(a, ic(-1))), "x + y + -x -> y (terms cancel)");
    QVERIFY(r == b);
    r = fire(pm, add(mul(a, ic(2)), mul(a, ic(3))), "x*a + x*b -> x*(a+b) (like terms)");
    QVERIFY(r && r->op == Ops::MUL && r->src[0] == a && is_const(r->src[1], 5));
    r = fire(pm, add(add(a, ic(2)), ic(3)), "(x+c1)+c2 -> x+(c1+c2)");
    QVERIFY(r && r->op == Ops::ADD && r->src[0] == a && is_const(r->src[1], 5));
    r = fire(pm, add(mul(add(a, ic(1)), ic(2)), b), "(x + y)*c + z -> x*c + y*c + z");
    QVERIFY(r && r->op == Ops::ADD && is_const(r->src[1], 2) && r->src[0]->op == Ops::ADD && r->src[0]->src[1] == b);
    r = fire(pm, add(mul(mul(a, ic(2)), ic(3)), b), "(x*c1)*c2 + y -> x*(c1*c2) + y");
    QVERIFY(r && r->op == Ops::ADD && r->src[1] == b && r->src[0]->op == Ops::MUL && is_const(r->src[0]->src[1], 6));
    // index math stays weak under a cast
    r = fire(pm, add(node(Ops::CAST, i32, {wk}), ic(3)), "a.cast(int) + c -> (a + c).cast(int) (a weakint)");
    QVERIFY(r && r->op == Ops::CAST && r->dtype == i32 && r->src[0]->op == Ops::ADD && r->src[0]->dtype == dtypes::weakint);
    r = fire(pm, mul(node(Ops::CAST, i32, {wk}), ic(3)), "a.cast(int) * c -> (a * c).cast(int) (a weakint)");
    QVERIFY(r && r->op == Ops::CAST && r->src[0]->op == Ops::MUL && r->src[0]->src[0] == wk);
    // a constant base, a cast to its own dtype
    r = fire(pm, node(Ops::POW, f32, {fc(1), fx}), "1 ** x -> 1");
    QVERIFY(is_const(r, 1));
    r = fire(pm, node(Ops::POW, f32, {fc(2), fx}), "c ** x -> exp2(x * log2(c)) (c > 0)");
    QVERIFY(r && r->op == Ops::EXP2 && r->src[0]->op == Ops::MUL && r->src[0]->src[0] == fx && is_const(r->src[0]->src[1], 1));
    r = fire(pm, node(Ops::CAST, f32, {fx}), "x.cast(x's own dtype) -> x");
    QVERIFY(r == fx);
    // none of these tables is dead
    std::set<std::string> table;
    for (const char* fn : {"symbolic()", "max_and_bool_rules", "bounds_rules", "divmod_rules", "weak_index_rules"})
      for (auto& n : rules_of(pm, fn)) table.insert(n);
    QCOMPARE(table.size(), size_t(31));
    QVERIFY2(table == fire.fired, missing(table, fire.fired).c_str());
  }

  // REDUCE(ADD) over a range whose body reads nothing, and the one-hot / range-free sums of load_collapse
  void reduce_and_load_collapse_fire_one_each() {
    const UOpRef r = rng(10, 0, AxisType::REDUCE), fx = var("fx", f32);
    Firing fire;
    // body without r -> body * 10
    UOpRef out = fire(reduce_collapse(), reduce(Ops::ADD, f32, {fx, r}), "sum over r of a load-free body without r -> body * len(r)");
    QVERIFY(out && out->op == Ops::MUL && out->src[0] == fx && is_const(out->src[1], 10));
    // (r < 4).where(x, 0) summed over r: 4 * x
    UOpRef gate = node(Ops::CMPLT, b8, {r, ic(4, dtypes::weakint)});
    out = fire(reduce_collapse(), reduce(Ops::ADD, f32, {node(Ops::WHERE, f32, {gate, fx, fc(0)}), r}),
               "sum over r of g(r).where(x, 0) -> (count of r where g) * x");
    QVERIFY(out && out->op == Ops::MUL && out->src[1] == fx && out->src[0]->op == Ops::CAST && is_const(out->src[0]->src[0], 4));
    QVERIFY(names_of(reduce_collapse()) == fire.fired);
    fire.fired.clear();
    // one-hot: sum over r of (i != r).where(0, buf[r]) -> buf[i] gated by 0 <= i < 10
    const UOpRef buf = param(0, 10), i = var("i", dtypes::weakint, 0, 20);
    UOpRef onehot = node(Ops::WHERE, f32, {node(Ops::CMPNE, b8, {i, r}), fc(0), index(buf, r)});
    out = fire(load_collapse(), reduce(Ops::ADD, f32, {onehot, r}), "sum over r of a one-hot select -> a read gated at r's value");
    QVERIFY(out && !out->toposort().empty());
    bool gated = false;
    for (auto& u : out->toposort()) gated = gated || (u->op == Ops::INDEX && u->src[1]->op == Ops::WHERE);
    QVERIFY(gated);
    for (auto& u : out->toposort()) QVERIFY(u->op != Ops::RANGE);
    // a read that does not use r under a gate counting r: (r < 4).where(buf[i], 0) -> 4 * buf[i]
    out = fire(load_collapse(), reduce(Ops::ADD, f32, {node(Ops::WHERE, f32, {gate, index(buf, i), fc(0)}), r}),
               "sum over r of reads without r -> closed form in r");
    QVERIFY(out && out->op == Ops::MUL && out->src[1] == index(buf, i));
    QVERIFY2(names_of(load_collapse()) == fire.fired, missing(names_of(load_collapse()), fire.fired).c_str());
  }

  // the reduce collapse's own rules that push a mask out of index math (masked index math, and a bool of it)
  void masks_are_pushed_out_one_rule_each() {
    const UOpRef v = var("v", b8, 0, 1), i = var("i", dtypes::weakint, 0, 20);
    const UOpRef masked = node(Ops::WHERE, dtypes::weakint, {v, i, uconst_invalid()});
    Firing fire;
    UOpRef out = fire(pm_reduce_load_collapse(), node(Ops::ADD, dtypes::weakint, {masked, ic(1, dtypes::weakint)}),
                      "f(v.where(i, Invalid)) -> v.where(f(i), Invalid)");
    QVERIFY(out && out->op == Ops::WHERE && out->src[0] == v && out->src[1]->op == Ops::ADD && out->src[1]->src[0] == i &&
            out->src[2]->is<Invalid>());
    out = fire(pm_reduce_load_collapse(), node(Ops::CMPLT, b8, {masked, ic(5, dtypes::weakint)}), "bool f(v.where(i, Invalid)) -> v and f(i)");
    QVERIFY(out && out->op == Ops::AND && out->src[0] == v && out->src[1]->op == Ops::CMPLT && out->src[1]->src[0] == i);
  }

  // END/REDUCE range lists, merged and split ranges, reduce chains
  void range_rules_fire_one_each() {
    const UOpRef r0 = rng(3, 0), r1 = rng(4, 1), fx = var("fx", f32), body = store(index(param(0, 12), r0), fc(1));
    const UOpRef expr = node(Ops::ADD, dtypes::weakint, {node(Ops::MUL, dtypes::weakint, {r0, ic(4, dtypes::weakint)}), r1});
    const UOpRef zero = ic(0, dtypes::weakint);
    Firing fire;
    const PatternMatcher& fl = pm_flatten_range();
    UOpRef out = fire(fl, end({body, expr}), "END(x, r0*n + r1) -> END(x, r0, r1)");
    QVERIFY(out && out->op == Ops::END && out->src == (UOps{body, r0, r1}));
    out = fire(fl, end({body, r0, zero}), "END(x, r, c) -> END(x, r) (a range that became a constant)");
    QVERIFY(out && out->src == (UOps{body, r0}));
    out = fire(fl, end({body, r1, r0}), "END(x, r1, r0) -> END(x, r0, r1) (ranges in id order, once each)");
    QVERIFY(out && out->src == (UOps{body, r0, r1}));
    out = fire(fl, reduce(Ops::ADD, f32, {fx, expr}), "REDUCE(x, r0*n + r1) -> REDUCE(x, r0, r1)");
    QVERIFY(out && out->op == Ops::REDUCE && out->src == (UOps{fx, r0, r1}));
    out = fire(fl, reduce(Ops::ADD, f32, {fx, r0, zero}), "REDUCE(x, r, c) -> REDUCE(x, r) (a range that became a constant)");
    QVERIFY(out && out->src == (UOps{fx, r0}));
    out = fire(fl, reduce(Ops::ADD, f32, {fx, r1, r0, r1}), "REDUCE(x, r1, r0) -> REDUCE(x, r0, r1) (ranges in id order, once each)");
    QVERIFY(out && out->src == (UOps{fx, r0, r1}));
    out = fire(fl, end({body}), "END without ranges -> body");
    QVERIFY(out == body);
    QVERIFY2(names_of(fl) == fire.fired, missing(names_of(fl), fire.fired).c_str());

    // adjacent ranges merged (r0*4 + r1 over 3x4 is one range of 12)
    fire.fired.clear();
    const PatternMatcher& sr = pm_simplify_ranges();
    const UOpRef buf = param(0, 12);
    out = fire(sr, end({store(index(buf, expr), fc(1)), r0, r1}), "END(x, r0, r1) -> END(x[r0 := r//n1, r1 := r%n1], r) (adjacent, no more div/mod)");
    QVERIFY(out && out->op == Ops::END && out->src.size() == 2 && out->src[1]->op == Ops::RANGE && out->src[1]->src[0]->const_int() == 12);
    out = fire(sr, reduce(Ops::ADD, f32, {index(buf, expr), r0, r1}), "REDUCE(x, r0, r1) -> REDUCE(x[r0 := r//n1, r1 := r%n1], r) (no more div/mod)");
    QVERIFY(out && out->op == Ops::REDUCE && out->src.size() == 2 && out->src[1]->src[0]->const_int() == 12 && out->src[0]->src[1] == out->src[1]);
    QVERIFY2(names_of(sr) == fire.fired, missing(names_of(sr), fire.fired).c_str());

    // a REDUCE over nothing, factors out of a REDUCE
    fire.fired.clear();
    const PatternMatcher& mc = pm_reduce_mul_chain();
    const UOpRef red = rng(6, 2, AxisType::REDUCE);
    out = fire(mc, reduce(Ops::MAX, f32, {index(param(1, 1), red), rng(0, 3, AxisType::REDUCE)}), "reduce over an empty range -> its identity");
    QVERIFY(out && out->op == Ops::CONST && std::isinf(out->const_float()));
    out = fire(mc, reduce(Ops::ADD, f32, {node(Ops::MUL, f32, {index(param(1, 6), red), fx}), red}),
               "(x*y).reduce -> x.reduce * y (y without the reduce's ranges)");
    QVERIFY(out && out->op == Ops::MUL && out->src[1] == fx && out->src[0]->op == Ops::REDUCE && out->src[0]->src[0] == index(param(1, 6), red));
    QVERIFY(names_of(mc) == fire.fired);

    // a range read as r % c splits into two loops
    Recorder rec;
    SplitRangesContext sctx;
    const UOpRef r8 = rng(8, 0);
    UOpRef sink = node(Ops::SINK, dtypes::void_, {end({store(index(param(0, 8), node(Ops::FLOORMOD, dtypes::weakint, {r8, ic(2, dtypes::weakint)})), fc(1)), r8})});
    UOpRef split = graph_rewrite(sink, pm_split_ranges(), sctx, "split ranges");
    QVERIFY(rec.names().count("split marked ranges into (r//c, r%c)"));
    QCOMPARE(split->ranges().size(), size_t(0));
    size_t loops = 0;
    for (auto& u : split->toposort()) loops += u->op == Ops::RANGE;
    QCOMPARE(loops, size_t(2));
  }

  // postopt, expander, loads, reduces, launch dims, barriers, final rewrite
  void lowering_rules_fire_one_each() {
    const UOpRef fx = var("fx", f32), r = rng(8, 0), c = node(Ops::CMPLT, b8, {r, ic(4, dtypes::weakint)});
    const UOpRef p4 = param(0, 4), p8 = param(1, 8);
    Firing fire;
    // postopt
    const PatternMatcher& po = pm_postopt();
    const UOpRef one = node(Ops::RANGE, dtypes::weakint, {ic(1, dtypes::weakint)}, RangeArg{5, AxisType::LOOP});  // urange() makes 0 of it
    QVERIFY(is_const(fire(po, one, "range of size 1 -> 0"), 0));
    UOpRef out = fire(po, node(Ops::REDUCE, f32, {fx, rng(5, 1, AxisType::REDUCE)}, ReduceArg{Ops::MAX, 0}), "max over ranges x does not use -> max without them");
    QVERIFY(out == fx);
    out = fire(po, reduce(Ops::ADD, f32, {fx, rng(5, 1, AxisType::REDUCE)}), "sum over ranges x does not use -> sum without them * their sizes");
    QVERIFY(out && out->op == Ops::MUL && out->src[0] == fx && is_const(out->src[1], 5));
    out = fire(po, index(p8, node(Ops::WHERE, dtypes::weakint, {c, r, uconst_invalid()})), "INDEX(p, valid.where(i, Invalid)) -> gated INDEX");
    QVERIFY(out && out->op == Ops::INDEX && out->src == (UOps{p8, r, c}));
    // r in [0, 8) reads p4 only under r < 4 (and p4 at r - 4 only under r >= 4)
    out = fire(po, node(Ops::WHERE, f32, {c, index(p4, r), fc(0)}), "c.where(a, b) -> c.where(a with its reads gated by c, b)");
    QVERIFY(out && out->src[1]->op == Ops::INDEX && out->src[1]->src.size() == 3 && out->src[1]->src[2] == c);
    const UOpRef back = node(Ops::ADD, dtypes::weakint, {r, ic(-4, dtypes::weakint)});
    out = fire(po, node(Ops::WHERE, f32, {c, fc(0), index(p4, back)}), "c.where(a, b) -> c.where(a, b with its reads gated by !c)");
    QVERIFY(out && out->src[2]->op == Ops::INDEX && out->src[2]->src.size() == 3 && out->src[2]->src[2]->op == Ops::CMPNE);
    const UOpRef gated = node(Ops::INDEX, f32, {p4, r, c});
    out = fire(po, node(Ops::WHERE, f32, {c, gated, fc(0)}), "where(c, read gated by c, 0) -> the read");
    QVERIFY(out == gated);
    QVERIFY2(rules_of(po, "pm_postopt") == fire.fired, missing(rules_of(po, "pm_postopt"), fire.fired).c_str());

    // expander: UPCAST lanes of an END, UNROLL lanes of a REDUCE
    fire.fired.clear();
    const PatternMatcher& ex = pm_expander();
    const UOpRef up = rng(2, 7, AxisType::UPCAST), loop = rng(3, 8);
    out = fire(ex, end({store(index(p4, up), fc(1)), up}), "END(x, UPCAST u) -> x once per lane of u");
    QVERIFY(out && out->op == Ops::GROUP && out->src.size() == 2 && out->src[1]->src[0]->src[1]->const_int() == 1);
    out = fire(ex, end({store(index(p8, up), fc(1)), up, loop}), "END(x, UPCAST u, r) -> END(x once per lane of u, r)");
    QVERIFY(out && out->op == Ops::END && out->src[0]->op == Ops::GROUP && out->src[1] == loop);
    const UOpRef un = rng(2, 9, AxisType::UNROLL);
    out = fire(ex, reduce(Ops::ADD, f32, {index(p4, un), un}), "REDUCE(x, UNROLL u) -> x[u=0] op x[u=1] op ...");
    QVERIFY(out && out->op == Ops::ADD && out->src[0]->src[1]->const_int() == 0 && out->src[1]->src[1]->const_int() == 1);
    out = fire(ex, reduce(Ops::ADD, f32, {index(p4, un), un, loop}), "REDUCE(x, UNROLL u, r) -> REDUCE(x[u=0] op x[u=1] op ..., r)");
    QVERIFY(out && out->op == Ops::REDUCE && out->src[0]->op == Ops::ADD && out->src[1] == loop);
    QVERIFY(rules_of(ex, "pm_expander") == fire.fired);

    // loads
    fire.fired.clear();
    const PatternMatcher& ld = pm_add_loads();
    out = fire(ld, store(index(p4, r), index(p8, r)), "STORE(p, INDEX) -> STORE(p, LOAD(INDEX)) (a copy)");
    QVERIFY(out && out->src[0] == index(p4, r) && out->src[1]->op == Ops::LOAD && out->src[1]->src[0] == index(p8, r));
    const UOpRef lb = local_buffer(8);
    out = fire(ld, node(Ops::ADD, f32, {index(lb, r), index(p8, r)}), "f(INDEX of LOCAL memory) -> f(LOAD(INDEX))");
    QVERIFY(out && out->src[0]->op == Ops::LOAD && out->src[1] == index(p8, r));
    out = fire(ld, node(Ops::ADD, f32, {index(p8, r), fc(1)}), "f(INDEX) -> f(LOAD(INDEX))");
    QVERIFY(out && out->src[0]->op == Ops::LOAD && out->src[0]->src[0] == index(p8, r));
    QVERIFY(names_of(ld) == fire.fired);

    // reduces
    fire.fired.clear();
    const PatternMatcher& rr = pm_remove_reduces();
    ReduceContext rctx;
    const UOpRef g = rng(4, 3, AxisType::GROUP_REDUCE), red = rng(8, 4, AxisType::REDUCE);
    out = fire(rr, reduce(Ops::ADD, f32, {index(p4, g), g}), "GROUP_REDUCE -> partials in a LOCAL buffer, reduced over the group", RewriteCtx::of(rctx));
    QVERIFY(out && out->op == Ops::REDUCE && out->src[0]->src[0]->op == Ops::AFTER && out->src[1]->as<RangeArg>().id == 103);
    out = fire(rr, reduce(Ops::ADD, f32, {fx}), "REDUCE(x) without ranges -> x", RewriteCtx::of(rctx));
    QVERIFY(out == fx);
    out = fire(rr, reduce(Ops::ADD, f32, {index(p8, red), red}), "REDUCE over ranges -> accumulator loop", RewriteCtx::of(rctx));
    QVERIFY(out && out->op == Ops::LOAD && out->src[0]->op == Ops::AFTER && out->src[0]->src[0]->op == Ops::DEFINE_ACC);
    {
      // two accumulators over the same range in one loop nest share its END
      Recorder rec;
      ReduceContext ctx2;
      UOpRef sum = reduce(Ops::ADD, f32, {index(p8, red), red}), mx = node(Ops::REDUCE, f32, {index(p8, red), red}, ReduceArg{Ops::MAX, 0});
      UOpRef sink = node(Ops::SINK, dtypes::void_, {store(index(param(2, 1), ic(0, dtypes::weakint)), sum), store(index(param(3, 1), ic(0, dtypes::weakint)), mx)});
      UOpRef lowered = graph_rewrite(sink, rr, ctx2, "remove reduces");
      QVERIFY(rec.names().count("merge accumulator ENDs over the same ranges"));
      size_t ends = 0;
      for (auto& u : lowered->toposort()) ends += u->op == Ops::END;
      QCOMPARE(ends, size_t(1));
      fire.fired.insert("merge accumulator ENDs over the same ranges");
    }
    QVERIFY2(names_of(rr) == fire.fired, missing(names_of(rr), fire.fired).c_str());

    // launch dims: CPU threads, GPU gidx/lidx
    fire.fired.clear();
    const PatternMatcher& gd = pm_add_gpudims();
    const OptTarget gpu = gpu_opt_target(), cpu = cpu_opt_target();
    GpuDimsContext cctx{&cpu, false, 1};
    out = fire(gd, rng(4, 0, AxisType::THREAD), "THREAD range -> core_id", RewriteCtx::of(cctx));
    QVERIFY(out && out->op == Ops::CAST && out->src[0]->op == Ops::PARAM && cctx.threads == 4);
    const UOpRef gl = rng(16, 0, AxisType::GLOBAL), lo = rng(4, 1, AxisType::LOCAL);
    auto kernel = [](UOps stores) { return node(Ops::SINK, dtypes::void_, std::move(stores), KernelInfo{}); };
    auto specials = [](const UOpRef& s, const std::string& prefix) {
      size_t n = 0;
      for (auto& u : s->toposort()) n += u->op == Ops::SPECIAL && u->as<std::string>().rfind(prefix, 0) == 0;
      return n;
    };
    GpuDimsContext gctx{&gpu, false, 1};
    // the store does not use the LOCAL range: lane 0 of it stores
    UOpRef k = kernel({end({store(index(param(0, 16), gl), node(Ops::CAST, f32, {lo})), gl, lo})});
    out = fire(gd, k, "global store without a local range -> gated to that range's lane 0", RewriteCtx::of(gctx));
    QVERIFY(out);
    bool lane0 = false;
    for (auto& u : out->toposort()) lane0 = lane0 || (u->op == Ops::INDEX && u->src.size() == 3 && u->src[2]->op == Ops::CMPEQ);
    QVERIFY(lane0);
    out = fire(gd, out, "GLOBAL and LOCAL ranges -> gidx and lidx SPECIALs", RewriteCtx::of(gctx));
    QVERIFY(out && specials(out, "gidx") == 1 && specials(out, "lidx") == 1);
    UOpRef g_only = kernel({end({store(index(param(0, 16), gl), fc(1)), gl})});
    out = fire(gd, g_only, "GLOBAL ranges -> gidx SPECIALs", RewriteCtx::of(gctx));
    QVERIFY(out && specials(out, "gidx") == 1 && out->ranges().empty());
    GpuDimsContext nctx{&gpu, true, 1};
    out = fire(gd, g_only, "GLOBAL ranges -> idx SPECIALs (no locals)", RewriteCtx::of(nctx));
    QVERIFY(out && specials(out, "idx") == 1);
    QVERIFY2(rules_of(gd, "pm_add_gpudims") == fire.fired, missing(rules_of(gd, "pm_add_gpudims"), fire.fired).c_str());

    // barriers between LOCAL stores and loads
    fire.fired.clear();
    const PatternMatcher& ib = pm_implicit_barriers();
    const UOpRef lst = store(index(lb, lo), fc(1));
    out = fire(ib, node(Ops::AFTER, f32, {lb, lst}), "read of LOCAL memory after LOCAL stores waits on a BARRIER");
    QVERIFY(out && out->op == Ops::AFTER && out->src[1]->op == Ops::BARRIER && out->src[1]->src[0] == lst);
    const UOpRef ldl = node(Ops::LOAD, f32, {index(lb, red)});
    out = fire(ib, end({store(index(lb, red), node(Ops::ADD, f32, {ldl, fc(1)})), red}), "loop body storing and loading LOCAL memory ends with a BARRIER");
    QVERIFY(out && out->op == Ops::END && out->src[0]->op == Ops::BARRIER);
    QVERIFY(names_of(ib) == fire.fired);

    // the final rewrite
    fire.fired.clear();
    const PatternMatcher& se = pm_split_ends();
    const UOpRef body = store(index(p8, r), fc(1)), r2 = rng(2, 1);
    out = fire(se, end({body, r, r2}), "split END over several ranges");
    QVERIFY(out && out->op == Ops::END && out->src.size() == 2 && out->src[0]->op == Ops::END && out->src[0]->src.size() == 2);
    out = fire(se, node(Ops::INDEX, f32, {p8, r, uconst_bool(true)}), "INDEX gated by true -> plain INDEX");
    QVERIFY(out == index(p8, r));
    out = fire(se, node(Ops::LOAD, f32, {node(Ops::INDEX, f32, {p8, r, uconst_bool(false)})}), "load gated by false -> 0");
    QVERIFY(is_const(out, 0));
    QVERIFY(names_of(se) == fire.fired);
  }

  // weak dtypes committed and lowered, divisions decomposed
  void dtype_rules_fire_one_each() {
    const UOpRef a = var("a"), fx = var("fx", f32), g = var("g", b8, 0, 1);
    const UOpRef wi = ic(3, dtypes::weakint), wf = uconst(dtypes::weakfloat, 2.0);
    Firing fire;
    const PatternMatcher& cw = pm_commit_weak();
    UOpRef out = fire(cw, node(Ops::BITCAST, dtypes::uint32, {wi}), "BITCAST(weak x) -> BITCAST(x in the int/float of its size)");
    QVERIFY(out && out->src[0]->dtype == dtypes::int32 && out->src[0]->const_int() == 3);
    const UOpRef idx = index(param(0, 4), ic(0, dtypes::weakint));
    out = fire(cw, store(idx, wf), "STORE(p, weak v) -> STORE(p, v in p's dtype)");
    QVERIFY(out && out->src[1]->dtype == f32 && is_const(out->src[1], 2));
    out = fire(cw, node(Ops::DEFINE_ACC, f32, {uconst(dtypes::weakfloat, 0.0)}, int64_t{0}), "DEFINE_ACC(weak init) -> DEFINE_ACC(init in the acc's dtype)");
    QVERIFY(out && out->src[0]->dtype == f32);
    out = fire(cw, node(Ops::CMPLT, b8, {wi, a}), "weak a cmp b -> a in b's dtype cmp b");
    QVERIFY(out && out->src[0]->dtype == i32 && out->src[1] == a);
    out = fire(cw, node(Ops::CMPLT, b8, {a, wi}), "a cmp weak b -> a cmp b in a's dtype");
    QVERIFY(out && out->src[0] == a && out->src[1]->dtype == i32);
    out = fire(cw, node(Ops::WHERE, f32, {g, wf, fx}), "c.where(weak a, weak b) -> c.where(a, b in the WHERE's dtype)");
    QVERIFY(out && out->src[0] == g && out->src[1]->dtype == f32 && out->src[2] == fx);
    out = fire(cw, node(Ops::MUL, f32, {fx, wf}), "f(weak x) -> f(x in f's dtype) (typed math)");
    QVERIFY(out && out->src[0] == fx && out->src[1]->dtype == f32);
    QVERIFY(names_of(cw) == fire.fired);

    fire.fired.clear();
    const PatternMatcher& li = pm_lower_index_dtype();
    DType idx_dt = dtypes::int32;
    const RewriteCtx ctx = RewriteCtx::of(idx_dt);
    out = fire(li, wi, "weakint CONST -> CONST of the index dtype", ctx);
    QVERIFY(out && out->dtype == i32 && out->const_int() == 3);
    const UOpRef r = rng(4, 0);
    out = fire(li, r, "weakint RANGE -> RANGE of the index dtype", ctx);
    QVERIFY(out && out->op == Ops::RANGE && out->dtype == i32 && out->src == r->src);
    const UOpRef sum = node(Ops::ADD, dtypes::weakint, {r, wi});
    out = fire(li, sum, "weakint x -> x in the index dtype", ctx);
    QVERIFY(out && out->op == Ops::ADD && out->dtype == i32 && out->src == sum->src);
    out = fire(li, wf, "weakfloat CONST -> float32 CONST", ctx);
    QVERIFY(out && out->dtype == f32 && is_const(out, 2));
    const UOpRef fsum = node(Ops::ADD, dtypes::weakfloat, {wf, wf});
    out = fire(li, fsum, "weakfloat x -> x in float32", ctx);
    QVERIFY(out && out->op == Ops::ADD && out->dtype == f32 && out->src == fsum->src);
    QVERIFY(names_of(li) == fire.fired);

    fire.fired.clear();
    const PatternMatcher& ed = pm_early_decompositions();
    out = fire(ed, node(Ops::FLOORDIV, i32, {a, ic(4)}), "x//2^k -> x >> k (x >= 0)");
    QVERIFY(out && out->op == Ops::SHR && out->src[0] == a && is_const(out->src[1], 2));
    out = fire(ed, node(Ops::FLOORMOD, i32, {a, ic(4)}), "x%2^k -> x & (2^k-1) (x >= 0)");
    QVERIFY(out && out->op == Ops::AND && out->src[0] == a && is_const(out->src[1], 3));
    out = fire(ed, node(Ops::FLOORDIV, i32, {a, ic(3)}), "x//c -> CDIV(x, c) (x >= 0)");
    QVERIFY(out && out->op == Ops::CDIV && out->src[0] == a && is_const(out->src[1], 3));
    out = fire(ed, node(Ops::FLOORMOD, i32, {a, ic(3)}), "x%c -> CMOD(x, c) (x >= 0)");
    QVERIFY(out && out->op == Ops::CMOD && out->src[0] == a && is_const(out->src[1], 3));
    const Rule* none = nullptr;
    ed.rewrite(node(Ops::FLOORDIV, i32, {var("n", i32, -5, 5), ic(4)}), {}, &none);
    QVERIFY(!none);  // a value that may be negative keeps its floor division
    QVERIFY(names_of(ed) == fire.fired);
  }

  // the cost model's rules: a staged constant is the constant, a cheap stage is recomputed where it is read
  void stage_removal_rules_fire_one_each() {
    const UOpRef r = rng(4, 0), i = rng(4, 1), buf = param(0, 4);
    Firing fire;
    const PatternMatcher& pm = pm_remove_bufferize();
    auto stage = [](const UOpRef& v, const UOpRef& r) { return node(Ops::STAGE, v->dtype, {v, r}, StageArg{"CPU", true, -1}); };
    UOpRef out = fire(pm, node(Ops::INDEX, f32, {stage(fc(3), r), i}), "INDEX(STAGE(c), ...) -> c (a staged constant)");
    QVERIFY(is_const(out, 3));
    const UOpRef v = node(Ops::ADD, f32, {index(buf, r), fc(1)});
    out = fire(pm, node(Ops::INDEX, f32, {stage(v, r), i}), "INDEX(STAGE(x, r...), i...) -> x[r := i] (cheap to recompute)");
    QVERIFY(out && out->op == Ops::ADD && out->src[0] == index(buf, i));
    out = fire(pm, node(Ops::INDEX, f32, {fc(2), i}), "indexing a const is a const");
    QVERIFY(is_const(out, 2));
    QVERIFY(rules_of(pm, "pm_remove_bufferize") == fire.fired);
  }

  // multi-device values (MSTACK of per-device shards) -> one graph per device: every rule fires, each with its rewrite
  void multi_rules_fire_one_each() {
    auto buf = [](const char* d, int64_t n) { return new_buffer(d, n, f32); };
    auto is_multi = [](const UOpRef& u, std::optional<int64_t> axis, const Shape& shard) {
      return u && u->op == Ops::MSTACK && u->src.size() == 2 && (axis ? u->is<int64_t>() && u->as<int64_t>() == *axis : !u->is<int64_t>()) &&
             u->src[0]->shape == shard && u->src[0]->device == "A" && u->src[1]->device == "B";
    };
    const UOpRef m = mstack({buf("A", 2), buf("B", 2)}, 0);                // (4,) split on axis 0 over A and B
    const UOpRef whole = mstack({buf("A", 4), buf("B", 4)}, std::nullopt);  // (4,) whole on each
    const UOpRef m2 = mstack({node(Ops::RESHAPE, f32, {buf("A", 4)}, Shape{2, 2}), node(Ops::RESHAPE, f32, {buf("B", 4)}, Shape{2, 2})}, 1);
    QCOMPARE(m->shape, (Shape{4}));
    QCOMPARE(m2->shape, (Shape{2, 4}));
    QCOMPARE(m->device, std::string("A,B"));
    Firing fire;
    const PatternMatcher& pm = pm_multi();
    UOpRef out = fire(pm, node(Ops::ADD, f32, {m, whole}), "an elementwise op of multi-device values -> the op on each device's shards");
    // device B adds its shard to its part [2, 4) of the whole value
    QVERIFY(is_multi(out, 0, {2}) && out->src[1]->src[1]->op == Ops::SHRINK && out->src[1]->src[1]->as<Shape>() == (Shape{2, 4}));
    out = fire(pm, node(Ops::REDUCE, f32, {m}, ReduceArg{Ops::ADD, 1}), "REDUCE of a multi-device value -> each device's reduce (added across devices over the split axis)");
    // each device adds every device's partial sum, in device order: A's own first, then B's copied to A
    QVERIFY(is_multi(out, std::nullopt, {}) && out->src[0]->op == Ops::ADD && out->src[0]->src[1]->op == Ops::COPY &&
            out->src[0]->src[1]->as<std::string>() == "A");
    out = fire(pm, node(Ops::RESHAPE, f32, {m}, Shape{2, 2}), "RESHAPE of a multi-device value -> each shard reshaped (the split axis mapped through)");
    QVERIFY(is_multi(out, 0, {1, 2}));
    QVERIFY_THROWS_EXCEPTION(Error, pm.rewrite(node(Ops::RESHAPE, f32, {m2}, Shape{8})));  // would move items between devices
    out = fire(pm, node(Ops::EXPAND, f32, {m}, Shape{3}), "EXPAND of a multi-device value -> each shard expanded");
    QVERIFY(is_multi(out, 1, {3, 2}));
    out = fire(pm, node(Ops::PERMUTE, f32, {m2}, Shape{1, 0}), "PERMUTE of a multi-device value -> each shard permuted");
    QVERIFY(is_multi(out, 0, {2, 2}));
    out = fire(pm, node(Ops::PAD, f32, {m2}, Shape{1, 1, 0, 0}), "PAD of a multi-device value -> each shard padded (not on the split axis)");
    QVERIFY(is_multi(out, 1, {4, 2}));
    QVERIFY_THROWS_EXCEPTION(Error, pm.rewrite(node(Ops::PAD, f32, {m}, Shape{1, 0})));
    out = fire(pm, node(Ops::SHRINK, f32, {m}, Shape{2, 4}), "SHRINK of a multi-device value -> each shard shrunk, or one device's part copied to all");
    // exactly B's part: copied to A, B's own on B
    QVERIFY(is_multi(out, std::nullopt, {2}) && out->src[0]->op == Ops::COPY && out->src[1]->base()->op == Ops::BUFFER);
    QVERIFY_THROWS_EXCEPTION(Error, pm.rewrite(node(Ops::SHRINK, f32, {m}, Shape{1, 3})));
    out = fire(pm, node(Ops::FLIP, f32, {m2}, Shape{1, 0}), "FLIP of a multi-device value -> each shard flipped (not on the split axis)");
    QVERIFY(is_multi(out, 1, {2, 2}));
    QVERIFY_THROWS_EXCEPTION(Error, pm.rewrite(node(Ops::FLIP, f32, {m}, Shape{1})));
    out = fire(pm, node(Ops::COPY, f32, {m}, std::string("C")), "COPY to or from several devices -> a copy per device, shards gathered for one device");
    // the shards copied to C, padded to the whole axis and added
    QVERIFY(out && out->op == Ops::ADD && out->device == "C" && out->shape == (Shape{4}) && out->src[0]->op == Ops::PAD);
    const UOpRef st = node(Ops::STORE, dtypes::void_, {m, whole});
    out = fire(pm, st, "STORE into a multi-device value -> each device's part stored into its shard");
    QVERIFY(out && out->op == Ops::MSTACK && out->src[1]->op == Ops::STORE && out->src[1]->src[1]->op == Ops::SHRINK);
    out = fire(pm, node(Ops::AFTER, f32, {m, out}), "AFTER of a multi-device value -> each shard after its own effects");
    QVERIFY(is_multi(out, 0, {2}) && out->src[0]->op == Ops::AFTER && out->src[0]->src[1]->op == Ops::STORE);
    out = fire(pm, node(Ops::CONTIGUOUS, f32, {m}), "CONTIGUOUS, DETACH of a multi-device value -> one per shard");
    QVERIFY(is_multi(out, 0, {2}) && out->src[0]->op == Ops::CONTIGUOUS);
    try {
      pm.rewrite(node(Ops::STACK, f32, {m, m}));
      QFAIL("STACK of multi-device values was rewritten");
    } catch (const Error& e) {
      QVERIFY(std::string(e.what()).find("STACK of a value on ('A', 'B') is not supported") != std::string::npos);
      fire.fired.insert("any other op of a multi-device value -> an error naming it");
    }
    QVERIFY(rules_of(pm, "pm_multi") == fire.fired);
  }

  // apply rangeify, on small tensor programs: every rule of the pass fires, each with its rewrite
  void apply_rangeify_rules_fire_one_each() {
    auto data = [](std::vector<double> v, Shape shape) {
      HostData h;
      h.shape = std::move(shape);
      h.dtype = dtypes::float32;
      h.f = std::move(v);
      return Tensor::from_host(h, "CPU");
    };
    Tensor a = data({1, 2, 3, 4}, {4}), b = data({5, 6, 7, 8}, {4}), m = data({1, 2, 3, 4, 5, 6}, {2, 3});
    Recorder rec;
    // each program scheduled on its own (what one realizes does not change what another's nodes are)
    auto schedule = [](const Tensor& t) { create_schedule({t.uop()}); };
    schedule(a.add(b));                                      // a buffer read, a STORE
    schedule(a.sum());                                       // a REDUCE of a buffer
    schedule(a.add(b).mul(a).sum(AxisArg{{0}}));             // a REDUCE of a computed value
    schedule(m.softmax(1));                                  // realized values read at other ranges
    schedule(a.pad({{1, 1}}, 2.0).sum());                    // a PAD of a buffer
    schedule(a.add(b).pad({{1, 1}}).sum());                  // a PAD of a computed value
    schedule(a.add(b).pad({{1, 1}}).shrink({{1, 5}}).mul(a));  // a PAD never outside its source
    schedule(m.permute({1, 0}).add(Tensor::ones({3, 2})));   // a movement op of a buffer
    {
      // a realized value read by a node without ranges of its own (here the SINK) is a STAGE, indexed by nothing
      ParamArg pa;
      pa.slot = 1000;
      pa.size = 4;
      pa.device = "CPU";
      UOpRef buf = UOp::make(Ops::BUFFER, f32, {}, pa);
      rangeify(node(Ops::SINK, dtypes::void_, {node(Ops::CONTIGUOUS, f32, {node(Ops::ADD, f32, {buf, buf})})}));
      // a sum over a leading axis of size 1 (the tensor front end reshapes those away first)
      UOpRef one_row = node(Ops::RESHAPE, f32, {node(Ops::ADD, f32, {buf, buf})}, Shape{1, 4});
      rangeify(node(Ops::SINK, dtypes::void_, {node(Ops::CONTIGUOUS, f32, {node(Ops::REDUCE, f32, {one_row}, ReduceArg{Ops::ADD, 1})})}));
    }
    auto is = [](Ops o) { return [o](const UOpRef& u) { return u->op == o; }; };
    auto reads = [](const UOpRef& u, Ops src) { return u->op == Ops::INDEX && u->src[0]->op == src; };
    auto any_src = [](const UOpRef& u, const std::function<bool(const UOpRef&)>& f) {
      for (auto& s : u->src)
        if (f(s)) return true;
      return false;
    };
    const std::string pass = "apply rangeify";
    auto in_pass = [&](const std::string& rule, const std::function<bool(const UOpRef&, const UOpRef&)>& ok) {
      for (auto& x : rec.matches)
        if (x.pass == pass && x.rule == rule && ok(x.before, x.after)) return true;
      qWarning("no match of '%s' as expected", rule.c_str());
      return false;
    };
    QVERIFY(in_pass("read of a buffer -> INDEX(buffer, the reader's ranges)", [&](const UOpRef& x, const UOpRef& y) {
      return any_src(x, is(Ops::BUFFER)) && any_src(y, [&](const UOpRef& s) { return reads(s, Ops::BUFFER); });
    }));
    QVERIFY(in_pass("realized STORE -> END(STORE, its ranges)", [&](const UOpRef& x, const UOpRef& y) {
      return any_src(x, is(Ops::STORE)) && any_src(y, [](const UOpRef& s) { return s->op == Ops::END && s->src[0]->op == Ops::STORE; });
    }));
    QVERIFY(in_pass("read of a realized value -> INDEX(STAGE(value, its ranges), the reader's ranges)", [&](const UOpRef&, const UOpRef& y) {
      return any_src(y, [&](const UOpRef& s) { return reads(s, Ops::STAGE); });
    }));
    QVERIFY(in_pass("PAD that stays inside its source -> the source", [](const UOpRef& x, const UOpRef& y) {
      return x->op == Ops::PAD && y->op != Ops::WHERE;
    }));
    QVERIFY(in_pass("PAD -> valid.where(source, 0)", [](const UOpRef& x, const UOpRef& y) {
      return x->op == Ops::PAD && y->op == Ops::WHERE && y->src[1] == x->src[0];
    }));
    QVERIFY(in_pass("PAD of a read -> valid.where(the read at the padded ranges, 0)", [&](const UOpRef& x, const UOpRef& y) {
      return x->op == Ops::PAD && y->op == Ops::WHERE && reads(y->src[1], Ops::BUFFER);
    }));
    QVERIFY(in_pass("movement op -> its source (whose ranges are the moved ones)", [](const UOpRef& x, const UOpRef& y) {
      return group::movement(x->op) && y == x->src[0];
    }));
    QVERIFY(in_pass("movement op of a buffer -> INDEX(buffer, the moved ranges)", [&](const UOpRef& x, const UOpRef& y) {
      return group::movement(x->op) && x->src[0]->op == Ops::BUFFER && reads(y, Ops::BUFFER);
    }));
    QVERIFY(in_pass("movement op of a realized value -> INDEX(STAGE(value), the moved ranges)", [&](const UOpRef& x, const UOpRef& y) {
      return group::movement(x->op) && reads(y, Ops::STAGE) && y->src[0]->src[0] == x->src[0];
    }));
    QVERIFY(in_pass("REDUCE over size-1 axes -> its source", [](const UOpRef& x, const UOpRef& y) {
      return x->op == Ops::REDUCE && y == x->src[0];
    }));
    QVERIFY(in_pass("REDUCE over axes -> REDUCE over their ranges", [](const UOpRef& x, const UOpRef& y) {
      return y->op == Ops::REDUCE && y->as<ReduceArg>().n == 0 && y->src[0] == x->src[0] && y->src[1]->op == Ops::RANGE;
    }));
    QVERIFY(in_pass("REDUCE of a read over axes -> REDUCE(the read at the ranges, the ranges)", [&](const UOpRef& x, const UOpRef& y) {
      return y->op == Ops::REDUCE && (reads(y->src[0], Ops::BUFFER) || reads(y->src[0], Ops::STAGE)) && y->src[0]->src[0] == x->src[0];
    }));
    QVERIFY(in_pass("realized value -> STAGE(value, its ranges)", [&](const UOpRef& x, const UOpRef& y) {
      return x->op == Ops::SINK && y->src[0]->op == Ops::STAGE && y->src[0]->src[0] == x->src[0];
    }));
    // none dead: every rule of the pass fired
    std::set<std::string> fired;
    for (auto& x : rec.matches)
      if (x.pass == pass) fired.insert(x.rule);
    const std::set<std::string> table = names_of(pm_apply_rangeify());
    QVERIFY2(table == fired, missing(table, fired).c_str());
  }
};

QTEST_GUILESS_MAIN(TestRules)
#include "test_rules.moc"
