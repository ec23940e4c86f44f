// The schedule as named passes: each test schedules a small tensor graph with a listener that keeps every pass and
// every match, and checks the passes' order, which rule made each step and the graph it made (the buffers, the kernel
// boundaries, the kernel graph's edges, the LINEAR's order against the schedule's own). And typed rule contexts: a rule
// gets its pass's context by type; a pass given the wrong type, or a table mixing two, is an error.
#include <QtTest/QtTest>

#include <map>
#include <string>
#include <vector>

#include "engine/schedule/schedule.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"

using namespace ts;

namespace {

struct Match {
  std::string rule;
  UOpRef before, after;
};
struct Pass {
  std::string name;
  int depth;
  UOpRef before, after;
  std::vector<Match> matches;
};

// every pass and match of one create_schedule
struct Recorder : RewriteListener {
  std::vector<Pass> passes;
  std::vector<size_t> open;
  void on_pass_begin(std::string_view name, const UOpRef& root) override {
    passes.push_back({std::string(name), static_cast<int>(open.size()), root, nullptr, {}});
    open.push_back(passes.size() - 1);
  }
  void on_match(const UOpRef& before, const UOpRef& after, const Rule& rule) override {
    passes[open.back()].matches.push_back({rule.name, before, after});
  }
  void on_pass_end(std::string_view, const UOpRef& result) override {
    passes[open.back()].after = result;
    open.pop_back();
  }
  const Pass& pass(const std::string& name) const {
    for (auto& p : passes)
      if (p.name == name) return p;
    throw Error("no pass " + name);
  }
  std::vector<std::string> top_level() const {
    std::vector<std::string> out;
    for (auto& p : passes)
      if (p.depth == 0) out.push_back(p.name);
    return out;
  }
};

Schedule schedule_traced(const UOps& outs, Recorder& rec) {
  rewrite_listener() = &rec;
  try {
    Schedule s = create_schedule(outs);
    rewrite_listener() = nullptr;
    return s;
  } catch (...) {
    rewrite_listener() = nullptr;
    throw;
  }
}

size_t count_rule(const Pass& p, const std::string& prefix) {
  size_t n = 0;
  for (auto& m : p.matches) n += m.rule.rfind(prefix, 0) == 0;
  return n;
}
size_t count_op(const UOpRef& root, Ops op) {
  size_t n = 0;
  for (auto& u : root->toposort()) n += u->op == op;
  return n;
}
UOpRef buffer_on_cpu(Shape s) { return Tensor::empty(s, dtypes::float32, "CPU").uop(); }

}  // namespace

class TestSchedulePasses : public QObject {
  Q_OBJECT
 private slots:
  // softmax over the last axis: callify gives the output a buffer; rangeify stages the max and the sum; "stage to
  // store" makes each a buffer with its own kernel (two kernel boundaries; the max is read twice, the second read is
  // a read of its buffer); "split kernels" makes three CALLs, the last reading the other two through AFTER edges; the
  // LINEAR runs them in the schedule's order
  void softmax_steps_through_every_scheduling_pass() {
    Tensor x(buffer_on_cpu({3, 4}));
    Tensor y = x.softmax(-1);
    Recorder rec;
    Schedule s = schedule_traced({y.uop()}, rec);
    QCOMPARE(s.items.size(), size_t(3));
    const std::vector<std::string> want = {"callify", "View Call", "earliest rewrites", "get realize", "apply rangeify",
                                           "symbolic+reduce_collapse+debuf", "limit buffers", "View Rangeify", "stage to store",
                                           "split kernels", "View Kernel Graph", "order calls"};
    QCOMPARE(rec.top_level(), want);

    const Pass& cf = rec.pass("callify");
    QCOMPARE(cf.matches.size(), size_t(1));
    QCOMPARE(cf.matches[0].rule, std::string("a requested value -> a new buffer, stored by its own kernel"));
    // after: AFTER(the output buffer's view, STORE(that view, the softmax's value))
    const UOpRef& became = cf.matches[0].after;
    QCOMPARE(became->op, Ops::AFTER);
    QCOMPARE(became->src[1]->op, Ops::STORE);
    QCOMPARE(became->src[0]->base()->op, Ops::BUFFER);

    const Pass& sts = rec.pass("stage to store");
    QCOMPARE(count_rule(sts, "STAGE -> a new buffer"), size_t(2));
    QCOMPARE(count_rule(sts, "another read of a STAGE"), size_t(1));
    QCOMPARE(count_op(sts.before, Ops::STAGE), size_t(2));
    QCOMPARE(count_op(sts.after, Ops::STAGE), size_t(0));
    size_t boundaries = 0;  // AFTER(new BUFFER, END(STORE(...)))
    for (auto& u : sts.after->toposort())
      boundaries += u->op == Ops::AFTER && u->src[0]->op == Ops::BUFFER && u->src[1]->op == Ops::END;
    QCOMPARE(boundaries, size_t(2));

    const Pass& sk = rec.pass("split kernels");
    QCOMPARE(count_rule(sk, "a store with no open ranges -> a kernel"), size_t(3));
    QCOMPARE(count_op(sk.after, Ops::CALL), size_t(3));
    QCOMPARE(sk.after->src.size(), size_t(3));
    // the kernel graph's edges: a CALL argument written by another kernel of the schedule is AFTER(buffer, CALL)
    size_t edges = 0;
    for (auto& u : sk.after->toposort())
      if (u->op == Ops::CALL)
        for (size_t a = 1; a < u->src.size(); ++a) edges += u->src[a]->op == Ops::AFTER && u->src[a]->src[1]->op == Ops::CALL;
    QCOMPARE(edges, size_t(3));  // the sum reads the max; the output reads the max and the sum
    // each kernel's nested passes: its reads of other kernels' buffers become buffers, then its masks are lowered
    size_t nested = 0;
    for (auto& p : rec.passes) nested += p.depth == 1 && (p.name == "kernel inputs" || p.name == "lower masks");
    QCOMPARE(nested, size_t(6));

    const Pass& oc = rec.pass("order calls");
    QCOMPARE(oc.matches.size(), size_t(1));
    QCOMPARE(oc.after->op, Ops::LINEAR);
    QCOMPARE(oc.after->src.size(), s.items.size());
    for (size_t i = 0; i < s.items.size(); ++i) {
      QCOMPARE(oc.after->src[i]->op, Ops::CALL);
      QVERIFY(oc.after->src[i]->src[0] == s.items[i].ast);
      QCOMPARE(oc.after->src[i]->src.size(), s.items[i].bufs.size() + 1);
    }
  }

  // a CONTIGUOUS of a contiguous range of a buffer is a view of it: the rule says so and there is no kernel
  void contiguous_range_is_a_view() {
    Tensor x(buffer_on_cpu({4, 4}));
    Tensor y = x.shrink({{1, 3}, {0, 4}}).contiguous();
    Recorder rec;
    Schedule s = schedule_traced({y.uop()}, rec);
    QCOMPARE(s.items.size(), size_t(0));
    const Pass& cf = rec.pass("callify");
    QCOMPARE(cf.matches.size(), size_t(1));
    QCOMPARE(cf.matches[0].rule, std::string("CONTIGUOUS of a contiguous range of a buffer -> a view of it, no kernel"));
    QVERIFY(count_op(cf.matches[0].after, Ops::SHRINK) == 1);
    QVERIFY(count_op(cf.matches[0].after, Ops::STORE) == 0);
  }

  // CONTIGUOUS of a computed value: a new buffer and its kernel; an assign: a kernel storing into the target
  void contiguous_and_assign_become_kernels() {
    Tensor a(buffer_on_cpu({8}));
    Tensor b = a.add(Tensor::scalar(1.0, dtypes::weakfloat)).contiguous();
    Recorder rec;
    Schedule s = schedule_traced({b.uop()}, rec);
    QCOMPARE(s.items.size(), size_t(1));
    QCOMPARE(rec.pass("callify").matches.size(), size_t(1));
    QCOMPARE(rec.pass("callify").matches[0].rule, std::string("CONTIGUOUS -> a new buffer, stored by its own kernel"));

    // (an assign whose value reads only buffers is already its kernel's store: the rule leaves it as it is; this one
    // reads a value computed first)
    Tensor t(buffer_on_cpu({8}));
    const UOp* target = t.uop()->base();
    t.assign(t.mul(Tensor::scalar(2.0, dtypes::weakfloat)).contiguous().add(Tensor::scalar(1.0, dtypes::weakfloat)));
    Recorder rec2;
    Schedule s2 = schedule_traced({t.uop()}, rec2);
    QCOMPARE(s2.items.size(), size_t(2));
    const Pass& cf = rec2.pass("callify");
    QCOMPARE(count_rule(cf, "CONTIGUOUS -> a new buffer"), size_t(1));
    QCOMPARE(count_rule(cf, "assign -> a kernel storing into the target's buffer"), size_t(1));
    // the assign's kernel (the second) stores into the target's own buffer, reading the first kernel's
    QCOMPARE(s2.items[1].bufs.size(), size_t(2));
    QVERIFY(s2.items[1].bufs[0].get() == target);
    QVERIFY(s2.items[1].bufs[1].get() == s2.items[0].bufs[0].get());
  }

  // a host list is copied to the device by a copy call: the COPY rule, and a CALL(COPY) in the LINEAR
  void copy_to_the_device_is_a_copy_call() {
    HostData h;
    h.shape = {4};
    h.dtype = dtypes::float32;
    h.f = {1, 2, 3, 4};
    Tensor x = Tensor::from_host(h, "CPU").mul(Tensor::scalar(3.0, dtypes::weakfloat));
    Recorder rec;
    Schedule s = schedule_traced({x.uop()}, rec);
    QCOMPARE(s.items.size(), size_t(2));
    QCOMPARE(count_rule(rec.pass("callify"), "COPY to another device -> a copy call into a new buffer"), size_t(1));
    const Pass& oc = rec.pass("order calls");
    QCOMPARE(oc.after->src[0]->src[0]->op, Ops::COPY);  // the copy runs first
    QCOMPARE(oc.after->src[1]->src[0]->op, Ops::SINK);  // then the kernel that reads it
  }

  // typed contexts: a rule gets its pass's state by type; the wrong type, no context, or a table mixing two types
  // is an error that names the pass
  void rule_contexts_are_typed() {
    struct Counter { int seen = 0; };
    const PatternMatcher pm({rule<Counter>("count CONSTs", {Ops::CONST}, [](const UOpRef&, Counter& c) -> UOpRef {
      ++c.seen;
      return nullptr;
    })});
    QVERIFY(pm.ctx_type() && *pm.ctx_type() == typeid(Counter));
    UOpRef g = UOp::make(Ops::ADD, dtypes::int32, {uconst(dtypes::int32, 1), uconst(dtypes::int32, 2)});
    Counter c;
    graph_rewrite(g, pm, c, "count");
    QCOMPARE(c.seen, 2);
    int wrong = 0;
    try {
      graph_rewrite(g, pm, wrong, "count with an int");
      QFAIL("a pass given the wrong context type ran");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("count with an int") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, graph_rewrite(g, pm, "count without a context"));
    QVERIFY_THROWS_EXCEPTION(Error, PatternMatcher({pm.rules()[0], rule<int>("another type", {Ops::ADD}, [](const UOpRef&, int&) -> UOpRef { return nullptr; })}));
  }
};

QTEST_GUILESS_MAIN(TestSchedulePasses)
#include "test_schedule_passes.moc"
