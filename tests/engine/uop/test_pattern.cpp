// Tests for the pattern language (engine/uop/pattern.h): what a pattern matches and captures, commutative matching
// and its enumeration, a name bound twice; and the symbolic identities written in it: each rule, a graph before and
// after, fires under its own name (none of the table is dead).
#include <QtTest/QtTest>

#include <set>
#include <string>
#include <vector>

#include "engine/codegen/lowering.h"
#include "engine/uop/pattern.h"
#include "engine/uop/symbolic.h"
#include "engine/uop/uop.h"
#include "uop_builders.h"

using namespace ts;

namespace {

using ts_test::node;
using ts_test::var;

// the rules of `pm` written in the function `fn` (a rule table's part): their names
std::set<std::string> rules_of(const PatternMatcher& pm, const char* fn) {
  std::set<std::string> out;
  for (const Rule& r : pm.rules())
    if (std::string(r.loc.function_name()).find(fn) != std::string::npos) out.insert(r.name);
  return out;
}

}  // namespace

class TestPattern : public QObject {
  Q_OBJECT
 private slots:
  void a_pattern_matches_and_captures() {
    const UOpRef a = var("a"), zero = uconst(dtypes::int32, 0), one = uconst(dtypes::int32, 1);
    const Pat p = Pat::var("x") + Pat::cnst(0);
    Captures c;
    QVERIFY(matches(p, node(Ops::ADD, dtypes::int32, {a, zero}).get(), c));
    QCOMPARE(c.get("x"), a.get());
    Captures d;
    QVERIFY(matches(p, node(Ops::ADD, dtypes::int32, {zero, a}).get(), d));  // commutative: 0 + a too
    QCOMPARE(d.get("x"), a.get());
    Captures e;
    QVERIFY(!matches(p, node(Ops::ADD, dtypes::int32, {a, one}).get(), e));
    QCOMPARE(e.size(), size_t(0));  // a failed match leaves nothing captured
    QVERIFY(!matches(p, node(Ops::MUL, dtypes::int32, {a, zero}).get(), e));
    // sources in order only, unless commutative
    const Pat ordered = Pat::op(Ops::XOR, {Pat::var("x"), Pat::cnst(0)});
    QVERIFY(matches(ordered, node(Ops::XOR, dtypes::int32, {a, zero}).get(), e));
    Captures f;
    QVERIFY(!matches(ordered, node(Ops::XOR, dtypes::int32, {zero, a}).get(), f));
    // dtypes and a predicate
    Captures g;
    QVERIFY(!matches(Pat::var("x").of({dtypes::float32}), a.get(), g));
    QVERIFY(matches(Pat::var("x").of({dtypes::int32}).such_that([](const UOp& u) { return u.vmax() == 10; }), a.get(), g));
  }

  void a_name_bound_twice_is_one_node() {
    const UOpRef a = var("a"), b = var("b");
    const Pat x = Pat::var("x");
    const Pat p = x + -x;
    Captures c;
    QVERIFY(matches(p, node(Ops::ADD, dtypes::int32, {a, node(Ops::NEG, dtypes::int32, {a})}).get(), c));
    Captures d;
    QVERIFY(matches(p, node(Ops::ADD, dtypes::int32, {node(Ops::NEG, dtypes::int32, {a}), a}).get(), d));
    Captures e;
    QVERIFY(!matches(p, node(Ops::ADD, dtypes::int32, {a, node(Ops::NEG, dtypes::int32, {b})}).get(), e));
  }

  // every way a pattern matches, in order: a commutative pair in its order, then swapped; the enumeration stops when
  // the callback says so
  void matches_are_enumerated_in_order() {
    const UOpRef a = var("a"), b = var("b");
    const UOpRef sum = node(Ops::ADD, dtypes::int32, {a, b});
    Captures c;
    std::vector<std::pair<const UOp*, const UOp*>> seen;
    QVERIFY(!match_each(Pat::var("x") + Pat::var("y"), sum.get(), c, [&] {
      seen.push_back({c.get("x"), c.get("y")});
      return false;
    }));
    QCOMPARE(seen.size(), size_t(2));
    QVERIFY(seen[0] == std::make_pair(a.get(), b.get()));
    QVERIFY(seen[1] == std::make_pair(b.get(), a.get()));
    // a rule whose rewrite turns down the first match gets the second
    const Rule r = rule("y unless it is a", Pat::var("x") + Pat::var("y"),
                        [&](const Captures& k, const UOpRef&) { return k.get("y") == a.get() ? k["y"] : nullptr; });
    QCOMPARE(r.ops, std::vector<Ops>{Ops::ADD});  // dispatched on the root's op
    QCOMPARE(r.fn(sum, RewriteCtx{}).get(), a.get());
  }

  // each identity: a graph before, the rule that fires on it (first, in the symbolic table) and the graph after
  void identities_fire_one_rule_each() {
    const DType i32 = dtypes::int32, b8 = dtypes::bool_;
    const UOpRef a = var("a"), b = var("b"), big = var("big", i32, 20, 30), p = var("p", b8, 0, 1);
    const UOpRef z = uconst(i32, 0), one = uconst(i32, 1), m1 = uconst(i32, -1), t = uconst_bool(true), f = uconst_bool(false);
    struct Case {
      UOpRef before;
      const char* rule;
      UOpRef after;
    };
    const std::vector<Case> cases = {
        {node(Ops::ADD, i32, {a, z}), "x+0 -> x", a},
        {node(Ops::ADD, i32, {z, a}), "x+0 -> x", a},
        {node(Ops::ADD, i32, {node(Ops::NEG, i32, {a}), a}), "x+(-x) -> 0", z},
        {node(Ops::ADD, i32, {a, node(Ops::MUL, i32, {a, m1})}), "x + x*-1 -> 0", z},
        {node(Ops::MUL, i32, {one, a}), "x*1 -> x", a},
        {node(Ops::MUL, i32, {a, z}), "x*0 -> 0", z},
        {node(Ops::FLOORDIV, i32, {a, one}), "x//1 -> x", a},
        {node(Ops::CDIV, i32, {a, one}), "x//1 -> x", a},
        {node(Ops::FLOORMOD, i32, {a, one}), "x%1 -> 0", z},
        {node(Ops::CMOD, i32, {a, one}), "x%1 -> 0", z},
        {node(Ops::AND, b8, {t, p}), "x and true -> x", p},
        {node(Ops::AND, b8, {p, f}), "x and false -> false", f},
        {node(Ops::AND, b8, {p, p}), "x and x -> x", p},
        {node(Ops::OR, b8, {p, f}), "x or false -> x", p},
        {node(Ops::OR, b8, {t, p}), "x or true -> true", t},
        {node(Ops::OR, b8, {p, p}), "x or x -> x", p},
        {node(Ops::MAX, i32, {a, a}), "max(x, x) -> x", a},
        {node(Ops::MAX, i32, {a, big}), "max(x, y) -> x when x >= y always", big},
        {node(Ops::CMPNE, b8, {a, a}), "x != x -> false (ints)", f},
        {node(Ops::FLOORDIV, i32, {a, a}), "x//x -> 1", one},
        {node(Ops::FLOORMOD, i32, {a, a}), "x%x -> 0", z},
        {node(Ops::CMPLT, b8, {a, a}), "x<x -> false", f},
        {node(Ops::XOR, i32, {a, z}), "x^0 -> x", a},
        {node(Ops::XOR, i32, {a, a}), "x^x -> 0", z},
        {node(Ops::XOR, i32, {node(Ops::XOR, i32, {a, b}), b}), "(x^y)^y -> x", a},
    };
    std::set<std::string> fired_names;
    for (const Case& k : cases) {
      const Rule* fired = nullptr;
      const UOpRef out = symbolic().rewrite(k.before, {}, &fired);
      QVERIFY2(fired, k.rule);
      QCOMPARE(QString::fromStdString(fired->name), QString::fromLatin1(k.rule));
      QVERIFY2(out.get() == k.after.get() || (out->op == Ops::CONST && k.after->op == Ops::CONST && out->dtype == k.after->dtype &&
                                              out->const_float() == k.after->const_float()),
               k.rule);
      fired_names.insert(fired->name);
    }
    // no dead rule: every identity fired on some graph
    const std::set<std::string> identities = rules_of(symbolic(), "identity_rules");
    QCOMPARE(identities.size(), size_t(22));
    QVERIFY(identities == fired_names);
    // and none fires where it must not: a float x != x is NaN-aware, a narrower x + 0 keeps its cast
    const UOpRef fl = var("f", dtypes::float32);
    const Rule* fired = nullptr;
    symbolic().rewrite(node(Ops::CMPNE, b8, {fl, fl}), {}, &fired);
    QVERIFY(!fired || fired->name != "x != x -> false (ints)");
  }

  // WHERE, POW and floor-division comparisons: each rule fires on its graph under its own name; none is dead
  void where_pow_and_floordiv_rules_fire_one_each() {
    const DType i32 = dtypes::int32, f32 = dtypes::float32, b8 = dtypes::bool_;
    const UOpRef a = var("a"), b = var("b"), g = var("g", b8, 0, 1), fx = var("fx", f32), w = var("w", i32, 0, 100);
    std::set<std::string> fired_names;
    auto fire = [&](const UOpRef& before, const char* name) -> UOpRef {
      const Rule* fired = nullptr;
      const UOpRef out = symbolic().rewrite(before, {}, &fired);
      if (!fired) return nullptr;
      fired_names.insert(fired->name);
      return fired->name == name ? out : nullptr;
    };
    auto fc = [&](double v) { return uconst(f32, v); };
    UOpRef r = fire(node(Ops::WHERE, i32, {uconst_bool(true), a, b}), "true.where(a, b) -> a");
    QVERIFY(r == a);
    r = fire(node(Ops::WHERE, i32, {uconst_bool(false), a, b}), "false.where(a, b) -> b");
    QVERIFY(r == b);
    r = fire(node(Ops::WHERE, i32, {g, a, a}), "g.where(a, a) -> a");
    QVERIFY(r == a);
    r = fire(node(Ops::WHERE, b8, {g, uconst_bool(true), uconst_bool(false)}), "g.where(true, false) -> g");
    QVERIFY(r == g);
    r = fire(node(Ops::WHERE, b8, {g, uconst_bool(false), uconst_bool(true)}), "g.where(false, true) -> !g");
    QVERIFY(r && r->op == Ops::CMPNE && r->src[0] == g && r->src[1]->is_const_value(1));
    r = fire(node(Ops::POW, f32, {fx, fc(-2)}), "x ** -c -> (1/x) ** c");
    QVERIFY(r && r->op == Ops::POW && r->src[0]->op == Ops::RECIPROCAL && r->src[1]->is_const_value(2));
    r = fire(node(Ops::POW, f32, {fx, fc(0)}), "x ** 0 -> 1");
    QVERIFY(r && r->is_const_value(1));
    r = fire(node(Ops::POW, f32, {fx, fc(2.5)}), "x ** (n + 1/2) -> x ** n * sqrt(x)");
    QVERIFY(r && r->op == Ops::MUL && r->src[0]->op == Ops::POW && r->src[0]->src[1]->is_const_value(2) && r->src[1]->op == Ops::SQRT);
    r = fire(node(Ops::POW, f32, {fx, fc(1)}), "x ** 1 -> x");
    QVERIFY(r == fx);
    r = fire(node(Ops::POW, f32, {fx, fc(3)}), "x ** n -> (x ** (n/2))^2 [* x] (integer n)");
    QVERIFY(r && r->op == Ops::MUL && r->src[1] == fx && r->src[0]->op == Ops::MUL);  // (x ** 1)^2 * x
    // (w in [0, 100]: bounds decide neither comparison)
    r = fire(node(Ops::CMPLT, b8, {node(Ops::FLOORDIV, i32, {w, uconst(i32, 4)}), uconst(i32, 3)}), "x//c < k -> x < k*c");
    QVERIFY(r && r->op == Ops::CMPLT && r->src[0] == w && r->src[1]->const_int() == 12);
    r = fire(node(Ops::CMPLT, b8, {uconst(i32, 2), node(Ops::FLOORDIV, i32, {w, uconst(i32, 4)})}), "k < x//c -> (k+1)*c-1 < x");
    QVERIFY(r && r->op == Ops::CMPLT && r->src[0]->const_int() == 11 && r->src[1] == w);
    std::set<std::string> table;
    for (const char* fn : {"where_rules", "pow_rules", "floordiv_compare_rules"})
      for (const std::string& n : rules_of(symbolic(), fn)) table.insert(n);
    QCOMPARE(table.size(), size_t(12));
    QVERIFY(table == fired_names);
  }

  // the late decompositions into the renderers' ops (and THREEFRY, bfloat16 through float32): each fires on its graph,
  // under its own name, with the result the renderers expect; none of the table is dead
  void late_decompositions_fire_one_rule_each() {
    const DType i32 = dtypes::int32, f32 = dtypes::float32, b8 = dtypes::bool_;
    const UOpRef a = var("a"), b = var("b"), neg = var("n", i32, -5, 5), fa = var("fa", f32), fb = var("fb", f32);
    std::set<std::string> fired_names;
    auto fire = [&](const UOpRef& before, const char* name) -> UOpRef {
      const Rule* fired = nullptr;
      const UOpRef out = pm_late_decompositions().rewrite(before, {}, &fired);
      if (!fired) return nullptr;
      fired_names.insert(fired->name);
      return fired->name == name ? out : nullptr;
    };
    UOpRef r = fire(node(Ops::MAX, i32, {a, b}), "max(a, b) -> a<b ? b : a");
    QVERIFY(r && r->op == Ops::WHERE && r->src[0]->op == Ops::CMPLT && r->src[0]->src[0] == a && r->src[1] == b && r->src[2] == a);
    r = fire(node(Ops::MUL, f32, {node(Ops::RECIPROCAL, f32, {fb}), fa}), "a * (1/b) -> a / b (floats)");
    QVERIFY(r && r->op == Ops::FDIV && r->src[0] == fa && r->src[1] == fb);
    r = fire(node(Ops::MUL, i32, {uconst(i32, -1), a}), "x * -1 -> -x");
    QVERIFY(r && r->op == Ops::NEG && r->src[0] == a);
    r = fire(node(Ops::MUL, i32, {a, uconst(i32, 8)}), "x * 2^k -> x << k (x >= 0)");
    QVERIFY(r && r->op == Ops::SHL && r->src[0] == a && r->src[1]->const_int() == 3);
    const Rule* none = nullptr;
    pm_late_decompositions().rewrite(node(Ops::MUL, i32, {neg, uconst(i32, 8)}), {}, &none);
    QVERIFY(!none);  // a value that may be negative is not shifted
    r = fire(node(Ops::CMPNE, b8, {node(Ops::CMPNE, b8, {a, b}), uconst_bool(true)}), "!(a != b) -> a == b");
    QVERIFY(r && r->op == Ops::CMPEQ && r->src[0] == a && r->src[1] == b);
    r = fire(node(Ops::ADD, i32, {node(Ops::NEG, i32, {b}), a}), "a + -b -> a - b");
    QVERIFY(r && r->op == Ops::SUB && r->src[0] == a && r->src[1] == b);
    // THREEFRY on uint64 runs on the uint32 halves
    const UOpRef u64a = var("ua", dtypes::uint64), u64b = var("ub", dtypes::uint64);
    r = fire(node(Ops::THREEFRY, dtypes::uint64, {u64a, u64b}), "THREEFRY -> threefry2x32 on the uint32 halves");
    QVERIFY(r && r->op == Ops::OR && r->dtype == dtypes::uint64);
    // bfloat16: math in float32, conversions as bit operations
    const DType bf = dtypes::bfloat16;
    const UOpRef ha = var("ha", bf), hb = var("hb", bf), h16 = var("h16", dtypes::float16), i16 = var("i16", dtypes::int16);
    r = fire(uconst(bf, 1.5), "bf16 constant -> BITCAST of its bits (rounded as from float)");
    QVERIFY(r && r->op == Ops::BITCAST && r->dtype == bf && r->src[0]->dtype == dtypes::uint16 && r->src[0]->const_int() == 0x3fc0);
    r = fire(node(Ops::CAST, bf, {ha}), "bf16 x.cast(bf16) -> x");
    QVERIFY(r == ha);
    r = fire(node(Ops::CAST, f32, {ha}), "bf16 x.cast(float32) -> BITCAST(bits << 16)");
    QVERIFY(r && r->op == Ops::BITCAST && r->dtype == f32 && r->src[0]->op == Ops::SHL);
    r = fire(node(Ops::CAST, i32, {ha}), "bf16 x.cast(T) -> BITCAST(bits << 16).cast(T)");
    QVERIFY(r && r->op == Ops::CAST && r->dtype == i32 && r->src[0]->op == Ops::BITCAST && r->src[0]->dtype == f32);
    r = fire(node(Ops::CAST, bf, {fa}), "float32 x.cast(bf16) -> BITCAST(rounded bits >> 16)");
    QVERIFY(r && r->op == Ops::BITCAST && r->dtype == bf && r->src[0]->op == Ops::CAST && r->src[0]->dtype == dtypes::uint16);
    r = fire(node(Ops::CAST, bf, {h16}), "x.cast(bf16) -> BITCAST(rounded bits of x.cast(float32) >> 16)");
    QVERIFY(r && r->op == Ops::BITCAST && r->dtype == bf);
    bool via_float = false;
    for (auto& u : r->toposort()) via_float = via_float || (u->op == Ops::CAST && u->dtype == f32 && u->src[0] == h16);
    QVERIFY(via_float);
    r = fire(node(Ops::BITCAST, dtypes::int16, {node(Ops::BITCAST, bf, {i16})}), "BITCAST(BITCAST(x)) to x's dtype -> x");
    QVERIFY(r == i16);
    r = fire(node(Ops::BITCAST, dtypes::int16, {node(Ops::BITCAST, bf, {h16})}), "BITCAST(BITCAST(x)) -> BITCAST(x)");
    QVERIFY(r && r->op == Ops::BITCAST && r->dtype == dtypes::int16 && r->src[0] == h16);
    r = fire(node(Ops::CMPLT, b8, {ha, hb}), "a cmp b of bf16 -> a.cast(float32) cmp b.cast(float32)");
    QVERIFY(r && r->op == Ops::CMPLT && r->src[0]->op == Ops::CAST && r->src[0]->dtype == f32 && r->src[0]->src[0] == ha);
    r = fire(node(Ops::ADD, bf, {ha, hb}), "bf16 f(x) -> f(x.cast(float32)).cast(bf16)");
    QVERIFY(r && r->op == Ops::CAST && r->dtype == bf && r->src[0]->op == Ops::ADD && r->src[0]->dtype == f32);
    const UOpRef g = var("g", b8, 0, 1);
    r = fire(node(Ops::WHERE, bf, {g, ha, hb}), "bf16 c.where(a, b) -> c.where(a.cast(float32), b.cast(float32)).cast(bf16)");
    QVERIFY(r && r->op == Ops::CAST && r->src[0]->op == Ops::WHERE && r->src[0]->src[0] == g && r->src[0]->src[1]->dtype == f32);
    // fp8: bytes in memory, math in float32, conversions from and to the format's code bits
    const DType f8 = dtypes::fp8e4m3;
    const UOpRef qa = var("qa", f8), qb = var("qb", f8);
    r = fire(uconst(f8, 1.5), "fp8 constant -> BITCAST of its code");
    QVERIFY(r && r->op == Ops::BITCAST && r->dtype == f8 && r->src[0]->dtype == dtypes::uint8 && r->src[0]->const_int() == 0x3c);
    r = fire(node(Ops::CAST, f8, {qa}), "fp8 x.cast(same fp8) -> x");
    QVERIFY(r == qa);
    r = fire(node(Ops::CAST, f32, {qa}), "fp8 x.cast(float32) -> its value from the code's bits");
    QVERIFY(r && r->dtype == f32);
    r = fire(node(Ops::CAST, i32, {qa}), "fp8 x.cast(T) -> x.cast(float32).cast(T)");
    QVERIFY(r && r->op == Ops::CAST && r->dtype == i32 && r->src[0]->dtype == f32);
    r = fire(node(Ops::CAST, f8, {fa}), "float32 x.cast(fp8) -> the rounded code from x's bits");
    QVERIFY(r && r->dtype == f8);
    r = fire(node(Ops::CAST, f8, {i16}), "x.cast(fp8) -> x.cast(float32).cast(fp8)");
    via_float = false;
    if (r) for (auto& u : r->toposort()) via_float = via_float || (u->op == Ops::CAST && u->dtype == f32 && u->src[0] == i16);
    QVERIFY(r && r->dtype == f8 && via_float);
    r = fire(node(Ops::CMPLT, b8, {qa, qb}), "a cmp b of fp8 -> a.cast(float32) cmp b.cast(float32)");
    QVERIFY(r && r->op == Ops::CMPLT && r->src[0]->op == Ops::CAST && r->src[0]->dtype == f32 && r->src[0]->src[0] == qa);
    r = fire(node(Ops::MUL, f8, {qa, qb}), "fp8 f(x) -> f(x.cast(float32)).cast(fp8)");
    QVERIFY(r && r->op == Ops::CAST && r->dtype == f8 && r->src[0]->op == Ops::MUL && r->src[0]->dtype == f32);
    // none of the table is dead
    const std::set<std::string> mine = rules_of(pm_late_decompositions(), "late_decomp_rules");
    QCOMPARE(mine.size(), size_t(6));
    std::set<std::string> table;
    for (const Rule& x : pm_late_decompositions().rules()) table.insert(x.name);
    QCOMPARE(table.size(), size_t(26));
    QVERIFY(table == fired_names);
  }
};

QTEST_GUILESS_MAIN(TestPattern)
#include "test_pattern.moc"
