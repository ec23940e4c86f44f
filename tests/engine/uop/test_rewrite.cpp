// The rewrite driver (engine/uop/rewrite.h): dispatch on the root op, table order, fixed points, the two walk orders,
// the node map, the listener's record of a pass, the cross-call cache, and the error for rules that undo each other.
#include <QtTest/QtTest>

#include <string>
#include <vector>

#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"
#include "engine/uop/uop.h"
#include "uop_builders.h"

using namespace ts;

namespace {

using ts_test::var;
UOpRef c(int v) { return uconst(dtypes::int32, v); }
UOpRef node(Ops op, UOps src) { return ts_test::node(op, dtypes::int32, std::move(src)); }
bool is_const(const UOpRef& u, double v) { return u->op == Ops::CONST && u->const_float() == v; }

// x + 0 -> x, written plainly
Rule add_zero() {
  return rule("x+0 -> x", {Ops::ADD}, [](const UOpRef& x) -> UOpRef { return is_const(x->src[1], 0) ? x->src[0] : nullptr; });
}

struct Log : RewriteListener {
  std::vector<std::string> events;
  void on_pass_begin(std::string_view name, const UOpRef&) override { events.push_back("begin " + std::string(name)); }
  void on_match(const UOpRef&, const UOpRef&, const Rule& r) override { events.push_back("match " + r.name); }
  void on_pass_end(std::string_view name, const UOpRef&) override { events.push_back("end " + std::string(name)); }
};

}  // namespace

class TestRewrite : public QObject {
  Q_OBJECT
 private slots:
  // a rule is tried only on its ops; a rule for every op on all
  void rules_are_dispatched_on_the_root_op() {
    int add_calls = 0, any_calls = 0;
    const PatternMatcher pm({rule("on ADD", {Ops::ADD}, [&](const UOpRef&) -> UOpRef { ++add_calls; return nullptr; }),
                             rule("on any", {}, [&](const UOpRef&) -> UOpRef { ++any_calls; return nullptr; })});
    UOpRef g = node(Ops::MUL, {node(Ops::ADD, {var("a"), c(1)}), var("b")});
    QVERIFY(graph_rewrite(g, pm, "dispatch") == g);
    QCOMPARE(add_calls, 1);
    QCOMPARE(any_calls, 5);  // a, 1, a+1, b, (a+1)*b
  }

  // the first rule in table order that returns a different node wins; returning the node itself is "no change"
  void the_first_rule_that_changes_the_node_wins() {
    const Rule* fired = nullptr;
    const PatternMatcher pm({rule("no change", {Ops::ADD}, [](const UOpRef& x) { return x; }), add_zero(),
                             rule("later", {Ops::ADD}, [](const UOpRef&) { return c(7); })});
    UOpRef a = var("a");
    QVERIFY(pm.rewrite(node(Ops::ADD, {a, c(0)}), {}, &fired) == a);
    QCOMPARE(fired->name, std::string("x+0 -> x"));
    QVERIFY(is_const(pm.rewrite(node(Ops::ADD, {a, c(1)}), {}, &fired), 7));
    QCOMPARE(fired->name, std::string("later"));
  }

  // sources first: a replacement is rewritten again until no rule applies, so ((a+0)+0)+0 is a in one pass
  void sources_first_reaches_a_fixed_point() {
    UOpRef a = var("a");
    UOpRef g = node(Ops::ADD, {node(Ops::ADD, {node(Ops::ADD, {a, c(0)}), c(0)}), c(0)});
    Log log;
    rewrite_listener() = &log;
    UOpRef out = graph_rewrite(g, PatternMatcher({add_zero()}), "fold");
    rewrite_listener() = nullptr;
    QVERIFY(out == a);
    QCOMPARE(log.events, (std::vector<std::string>{"begin fold", "match x+0 -> x", "match x+0 -> x", "match x+0 -> x", "end fold"}));
  }

  // bottom-up (the reference's bottom_up=True): a node is matched before its sources, so a rule sees the sources as
  // they were; sources first, it sees them rewritten
  void bottom_up_matches_a_node_before_its_sources() {
    UOpRef a = var("a");
    UOpRef g = node(Ops::MUL, {node(Ops::ADD, {a, c(0)}), c(2)});
    std::vector<Ops> seen_src;
    const PatternMatcher pm({add_zero(), rule("see MUL's source", {Ops::MUL}, [&](const UOpRef& x) -> UOpRef {
                               seen_src.push_back(x->src[0]->op);
                               return nullptr;
                             })});
    QVERIFY(graph_rewrite(g, pm, "sources first") == node(Ops::MUL, {a, c(2)}));
    QVERIFY(graph_rewrite(g, pm, "bottom up", true) == node(Ops::MUL, {a, c(2)}));
    QCOMPARE(seen_src, (std::vector<Ops>{Ops::PARAM, Ops::ADD}));
  }

  // node_map: every node walked, to what it became
  void node_map_gives_each_node_its_rewrite() {
    UOpRef a = var("a");
    UOpRef inner = node(Ops::ADD, {a, c(0)});
    UOpRef g = node(Ops::MUL, {inner, c(2)});
    std::unordered_map<const UOp*, UOpRef> map;
    graph_rewrite(g, PatternMatcher({add_zero()}), "fold", false, &map);
    QVERIFY(map.at(inner.get()) == a);
    QVERIFY(map.at(g.get()) == node(Ops::MUL, {a, c(2)}));
    QVERIFY(map.at(a.get()) == a);
  }

  // two rules that undo each other are an error naming both, not a hang
  void rules_that_undo_each_other_are_an_error() {
    const PatternMatcher pm({rule("a+1 -> 1+a", {Ops::ADD}, [](const UOpRef& x) -> UOpRef {
                               return x->src[0]->op == Ops::PARAM ? node(Ops::ADD, {x->src[1], x->src[0]}) : nullptr;
                             }),
                             rule("1+a -> a+1", {Ops::ADD}, [](const UOpRef& x) -> UOpRef {
                               return x->src[0]->op == Ops::CONST ? node(Ops::ADD, {x->src[1], x->src[0]}) : nullptr;
                             })});
    try {
      graph_rewrite(node(Ops::ADD, {var("a"), c(1)}), pm, "swap");
      QFAIL("no error");
    } catch (const Error& e) {
      const std::string m = e.what();
      QVERIFY2(m.find("swap") != std::string::npos && m.find("a+1 -> 1+a") != std::string::npos && m.find("1+a -> a+1") != std::string::npos, e.what());
    }
  }

  // the cache across calls: a node rewritten once is not walked again
  void the_cache_keeps_rewrites_across_calls() {
    int calls = 0;
    const PatternMatcher pm({rule("count ADDs", {Ops::ADD}, [&](const UOpRef& x) -> UOpRef {
      ++calls;
      return is_const(x->src[1], 0) ? x->src[0] : nullptr;
    })});
    RewriteCache cache(1000);
    UOpRef chain = node(Ops::ADD, {var("a"), c(1)});
    graph_rewrite_cached(chain, pm, cache, "first");
    QCOMPARE(calls, 1);
    UOpRef longer = node(Ops::ADD, {chain, c(0)});
    QVERIFY(graph_rewrite_cached(longer, pm, cache, "second") == chain);
    QCOMPARE(calls, 2);  // only the new node was matched
  }
};

QTEST_GUILESS_MAIN(TestRewrite)
#include "test_rewrite.moc"
