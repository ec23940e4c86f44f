// The rewrite stepper on real traces: tests/viewer/data/tutorial_matches.trace.json (resources/examples/tutorial.py
// run with --trace matches, checked in so one step can be checked by hand) and resources/examples/softmax.py run
// through $TINYSCOPE_BIN now (a schedule context with matches, three kernels).
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCryptographicHash>
#include <QDockWidget>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QImage>
#include <QLabel>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "viewer/graph/graph_view.h"
#include "viewer/model/selection_model.h"
#include "viewer/model/session.h"
#include "viewer/model/stepper_model.h"
#include "viewer/panes/stepper_pane.h"

#include "test_env.h"

namespace {
using ts_test::source_dir;
using ts_test::tinyscope_bin;
QString fixture() { return source_dir() + "/tests/viewer/data/tutorial_matches.trace.json"; }

// A graph's structure as a Merkle hash over (op, dtype, arg, tag, sources): equal graphs, equal hashes, whatever
// the node ids. `lookup` reads nodes from the trace or from the stepper's replay.
template <class Lookup>
QByteArray structure(int id, Lookup lookup, QHash<int, QByteArray>& memo) {
  if (auto it = memo.constFind(id); it != memo.constEnd()) return *it;
  const tsv::Uop* u = lookup(id);
  if (!u) return "?";
  QByteArray text = (u->op + '|' + u->dtype + '|' + u->arg + '|' + QString::number(u->tag) + '|').toUtf8();
  for (int s : u->src) text += structure(s, lookup, memo) + ',';
  return memo[id] = QCryptographicHash::hash(text, QCryptographicHash::Sha1);
}
QByteArray trace_structure(const tsv::Session& s, int id) {
  QHash<int, QByteArray> memo;
  return structure(id, [&](int n) { return s.uop(n); }, memo);
}
QByteArray replay_structure(const tsv::StepperModel& m, int id) {
  QHash<int, QByteArray> memo;
  return structure(id, [&](int n) { return m.node(n); }, memo);
}
}  // namespace

class TestStepper : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString softmax_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("tinyscope-test"));
    QCoreApplication::setApplicationName(QStringLiteral("test_stepper"));
    QSettings().clear();
    QVERIFY(dir_.isValid());
    softmax_ = dir_.filePath("softmax.json");
    QProcess p;
    p.start(tinyscope_bin(), {"run", source_dir() + "/resources/examples/softmax.py", "--json", softmax_, "--trace", "matches"});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
  }

  // every recorded match is one step, in pass order; the recorder's own per-pass counts agree
  void steps_are_the_recorded_matches() {
    for (const QString& path : {fixture(), softmax_}) {
      tsv::Session s;
      QString err;
      QVERIFY2(s.load(path, &err), qPrintable(err));
      tsv::StepperModel m(&s);
      int contexts_with_steps = 0;
      for (int c = 0; c < s.contexts().size(); ++c) {
        m.set_context(c);
        int listed = 0, counted = 0;
        for (const auto& p : s.contexts()[c].passes) listed += p.matches.size(), counted += p.match_count;
        QCOMPARE(m.step_count(), listed);
        QCOMPARE(listed, counted);  // a "matches" trace lists every rewrite it counted
        QCOMPARE(m.rowCount(), listed);
        QCOMPARE(m.unlisted_matches(), 0);
        contexts_with_steps += listed > 0;
        for (int k = 1; k < m.step_count(); ++k) {
          auto a = m.step(k - 1), b = m.step(k);
          QVERIFY(b.pass > a.pass || (b.pass == a.pass && b.match == a.match + 1));
        }
        for (int k = 0; k < m.step_count(); ++k) {
          const auto& match = s.contexts()[c].passes[m.step(k).pass].matches[m.step(k).match];
          QCOMPARE(m.index(k, tsv::StepperModel::kRule).data().toString(), match.rule);
          QCOMPARE(m.index(k, tsv::StepperModel::kLocation).data().toString(), match.loc);
          QVERIFY(match.loc.contains(QRegularExpression("^engine/.+\\.cpp:\\d+$")));
        }
      }
      QVERIFY(contexts_with_steps >= 1);
    }
    tsv::Session s;
    QVERIFY(s.load(fixture()));
    tsv::StepperModel m(&s);
    m.set_context(3);  // the E_4 kernel: 1 + 1 + 4 + 1 + 4 + 4 rewrites
    QCOMPARE(m.step_count(), 15);
    QCOMPARE(m.first_step_of_pass(7), 2);  // "postopt symbolic"
    QCOMPARE(m.first_step_of_pass(9), -1);  // "remove reduces" fired no rule
  }

  void model_passes_the_model_tester() {
    tsv::Session s;
    tsv::StepperModel m(&s);
    QAbstractItemModelTester t(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(s.load(fixture()));
    m.set_context(3);
    QCOMPARE(m.rowCount(), 15);
    QCOMPARE(m.columnCount(), int(tsv::StepperModel::kColumns));
    QCOMPARE(m.headerData(tsv::StepperModel::kRule, Qt::Horizontal).toString(), QStringLiteral("Rule"));
    QCOMPARE(m.index(0, tsv::StepperModel::kStep).data().toInt(), 1);
    QCOMPARE(m.index(2, tsv::StepperModel::kPass).data().toString(), QStringLiteral("postopt symbolic"));
    QCOMPARE(m.index(2, 0).data(tsv::StepperModel::kPassRole).toInt(), 7);
    QVERIFY(!m.index(2, tsv::StepperModel::kPass).data(Qt::ForegroundRole).isValid());  // the pass's first step
    QVERIFY(m.index(3, tsv::StepperModel::kPass).data(Qt::ForegroundRole).isValid());   // its second: greyed
    m.set_context(2);  // a schedule without rewrites
    QCOMPARE(m.rowCount(), 0);
    m.set_context(3);
    QVERIFY(s.load(softmax_));  // a reload empties the model
    QCOMPARE(m.rowCount(), 0);
    m.set_context(0);
    QVERIFY(m.rowCount() > 0);
    m.set_context(99);
    QCOMPARE(m.context(), -1);
    QCOMPARE(m.rowCount(), 0);
  }

  // step 0 of a pass shows the pass's input; after its last match the replay is the pass's recorded output
  void replay_runs_from_each_pass_input_to_its_output() {
    int passes = 0;
    for (const QString& path : {fixture(), softmax_}) {
      tsv::Session s;
      QVERIFY(s.load(path));
      tsv::StepperModel m(&s);
      for (int c = 0; c < s.contexts().size(); ++c) {
        m.set_context(c);
        const auto& ps = s.contexts()[c].passes;
        for (int p = 0; p < ps.size(); ++p) {
          const int first = m.first_step_of_pass(p);
          if (first < 0) continue;
          ++passes;
          const int last = first + ps[p].matches.size() - 1;
          auto f0 = m.frame(first);
          QVERIFY2(f0.exact, qPrintable(ps[p].name));
          QCOMPARE(replay_structure(m, f0.before), trace_structure(s, ps[p].before));
          for (int k = first; k <= last; ++k) {
            auto f = m.frame(k);
            QVERIFY2(f.exact, qPrintable(QStringLiteral("%1 step %2").arg(ps[p].name).arg(k)));
            if (k > first) QCOMPARE(f.before, m.frame(k - 1).after);  // the steps chain
            QVERIFY(!f.removed.isEmpty() || !f.added.isEmpty() || f.before != f.after);
          }
          auto fl = m.frame(last);
          QVERIFY2(replay_structure(m, fl.after) == trace_structure(s, ps[p].after),
                   qPrintable(QStringLiteral("%1: context %2 pass %3 (%4)").arg(path).arg(c).arg(p).arg(ps[p].name)));
          QVERIFY(m.pass_reproduced(p));
          // a replayed node the trace recorded keeps the trace's id (here: the whole recorded result)
          QCOMPARE(fl.after, m.canonical(ps[p].after));
        }
      }
    }
    QVERIFY(passes >= 20);
  }

  // backward() records its own context: one "gradient" pass whose steps are the gradient rules applied, from the seed
  // to the targets' gradients, replayable like any rewrite pass
  void gradient_pass_steps_through_the_rules() {
    QString script = dir_.filePath("grad.py"), out = dir_.filePath("grad.json");
    QVERIFY(ts_test::write_file(script, "from tinygrad import Tensor\n"
            "x = Tensor([[1.0, -2.0], [3.0, 4.0]])\n"
            "w = Tensor([0.5, -1.0])\n"
            "loss = (x * w).relu().sum()\n"
            "loss.backward()\n"
            "print(x.grad.tolist(), w.grad.tolist())\n"));
    QProcess p;
    p.start(tinyscope_bin(), {"run", script, "--json", out, "--trace", "matches"});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    // d/dx sum(relu(x*w)) = w where x*w > 0 (the masked one is -1 * 0 = -0.0), d/dw = column sums of x over those (tinygrad prints the same)
    QVERIFY(p.readAllStandardOutput().contains("[[0.5, -1.0], [0.5, -0.0]] [4.0, -2.0]"));
    tsv::Session s;
    QVERIFY(s.load(out));
    int c = -1;
    for (int i = 0; i < s.contexts().size(); ++i)
      if (s.contexts()[i].name.startsWith("Gradient")) c = i;
    QVERIFY(c >= 0);
    const auto& ctx = s.contexts()[c];
    QVERIFY(ctx.name.contains("grad.py:5"));
    QCOMPARE(ctx.passes.size(), 1);
    QCOMPARE(ctx.passes[0].name, QStringLiteral("gradient"));
    // the walk from the loss to x and w: sum's REDUCE, relu's WHERE, the MUL (w's broadcast is implicit in the MUL)
    QCOMPARE(ctx.passes[0].matches.size(), 3);
    QStringList rules;
    for (const auto& m : ctx.passes[0].matches) rules << m.rule;
    QVERIFY2(rules.contains("gradient of REDUCE") && rules.contains("gradient of WHERE") && rules.contains("gradient of MUL"),
             qPrintable(rules.join(", ")));
    for (const auto& m : ctx.passes[0].matches) QVERIFY(m.loc.startsWith("engine/tensor/gradient.cpp:"));
    QCOMPARE(ctx.tensor_graph.size(), 3);  // the gradients of x, w and the loss itself
    tsv::StepperModel m(&s);
    m.set_context(c);
    QCOMPARE(m.step_count(), ctx.passes[0].matches.size());
    QCOMPARE(replay_structure(m, m.frame(0).before), trace_structure(s, ctx.passes[0].before));
    for (int k = 0; k < m.step_count(); ++k) QVERIFY(m.frame(k).exact);
    QCOMPARE(replay_structure(m, m.frame(m.step_count() - 1).after), trace_structure(s, ctx.passes[0].after));
  }

  // worked out by hand from the fixture's JSON: E_4's "postopt symbolic" pass (input: uop 60) rewrites
  //   46 = RANGE(44 = CONST 1) -> 61 = CONST 0           ("range of size 1 -> 0")
  //   62 = MUL(61, 23 = CONST 4) -> 61                   ("constant folding"; 62 is MUL 47 over the new 61)
  //   63 = ADD(61, 45 = RANGE 4) -> 45                   ("identities ..."; 63 is ADD 48 over the new 61)
  //   69 = END(68, 61, 45) -> 71 = END(68, 45)           ("flatten range")
  void changed_nodes_of_hand_checked_steps() {
    tsv::Session s;
    QVERIFY(s.load(fixture()));
    tsv::StepperModel m(&s);
    m.set_context(3);
    const int k0 = m.first_step_of_pass(7);
    QCOMPARE(s.contexts()[3].passes[7].before, 60);
    // step 1: the size-1 RANGE and its CONST 1 go, CONST 0 comes; everything above the RANGE is rebuilt:
    // MUL 47, ADD 48, INDEX 49 50 51, ADD 52, STORE 53, END 57, SINK 60
    auto f = m.frame(k0);
    QVERIFY(f.exact);
    QCOMPARE(f.before, 60);
    QCOMPARE(f.removed, (QSet<int>{46, 44}));
    QCOMPARE(f.added, QSet<int>{61});
    QCOMPARE(f.rebuilt_before, (QSet<int>{47, 48, 49, 50, 51, 52, 53, 57, 60}));
    QCOMPARE(f.rebuilt_after.size(), 9);
    QVERIFY(f.rebuilt_after.contains(62));  // MUL(61, 23): the node the next rule matched, with the trace's id
    QCOMPARE(m.nodes_under(f.after).size(), 16 - 2 + 1);
    // step 3: ADD(0, RANGE 4) becomes the RANGE; only 63 goes, nothing is new, the three INDEXes and what uses
    // them are rebuilt into the graph the pass goes on with (64..69 in the trace, the SINK over 69 is new)
    const int k = k0 + 2;
    QCOMPARE(m.match(k).rule, QStringLiteral("identities: x+0 x*1 x*0 x-x x//1 x%1"));
    f = m.frame(k);
    QVERIFY(f.exact);
    QVERIFY(m.nodes_under(f.before).contains(63));
    QCOMPARE(f.removed, QSet<int>{63});
    QCOMPARE(f.added, QSet<int>{});
    QCOMPARE(f.rebuilt_before.size(), 7);  // 3 INDEX, ADD, STORE, END, SINK
    QSet<int> recorded = f.rebuilt_after;
    recorded.remove(f.after);
    QCOMPARE(recorded, (QSet<int>{64, 65, 66, 67, 68, 69}));
    QVERIFY(m.is_replay_node(f.after));  // SINK(69): the engine never kept it, the replay built it
    QCOMPARE(m.nodes_under(f.before).size(), 14);
    QCOMPARE(m.nodes_under(f.after).size(), 13);
    // step 4 starts from the END the trace recorded as the "flatten range" match
    QVERIFY(m.nodes_under(m.frame(k + 1).before).contains(69));
    QCOMPARE(m.frame(k + 1).removed, (QSet<int>{69, 61}));  // CONST 0 was the END's alone
  }

  // the pane: keys move through the steps, the list and the canvas follow, the picture marks the change
  void pane_steps_with_the_keys() {
    tsv::Session s;
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    pane.resize(900, 500);
    QVERIFY(s.load(fixture()));
    QCOMPARE(pane.current_step(), -1);
    QSignalSpy done(&pane, &tsv::StepperPane::layout_done);
    sel.select_context(3);
    QCOMPARE(pane.model()->step_count(), 15);
    QCOMPARE(pane.current_step(), 0);
    QCOMPARE(sel.current().pass, -1);  // following the selection leaves it as it is
    QVERIFY(pane.title().contains("substitute"));
    QVERIFY(pane.title().contains("engine/codegen/lowering.cpp:464"));
    QVERIFY(done.count() > 0 || done.wait(20000));
    QTest::keyClick(pane.list(), Qt::Key_Right);
    QCOMPARE(pane.current_step(), 1);
    QCOMPARE(pane.list()->currentIndex().row(), 1);
    QTest::keyClick(pane.list(), Qt::Key_Down);  // the list's own keys step too
    QCOMPARE(pane.current_step(), 2);
    QCOMPARE(sel.current().pass, 7);  // stepping into another pass selects it for every pane
    QCOMPARE(sel.current().context, 3);
    QVERIFY(pane.title().contains("range of size 1 -> 0"));
    QVERIFY(pane.title().contains("postopt symbolic (1/4)"));
    QTest::keyClick(pane.list(), Qt::Key_Left);
    QCOMPARE(pane.current_step(), 1);
    QTest::keyClick(pane.list(), Qt::Key_End);
    QCOMPARE(pane.current_step(), 14);
    QTest::keyClick(pane.list(), Qt::Key_Right);  // stays on the last
    QCOMPARE(pane.current_step(), 14);
    QTest::keyClick(pane.list(), Qt::Key_Home);
    QCOMPARE(pane.current_step(), 0);
    QTest::keyClick(&pane, Qt::Key_Right);  // the pane itself takes the keys too
    QCOMPARE(pane.current_step(), 1);

    // the hand-checked step in the canvas: after, CONST 0 (61) is new; before, RANGE 46 and CONST 1 (44) go
    pane.set_step(2);
    QVERIFY(pane.showing_after());
    auto marks = [&] {
      if (pane.busy()) done.clear(), done.wait(20000);
      QHash<QString, QSet<int>> out;
      for (auto* it : pane.scene()->items())
        if (it->data(0).isValid() && !it->data(1).toString().isEmpty()) out[it->data(1).toString()].insert(it->data(0).toInt());
      return out;
    };
    auto m = marks();
    QCOMPARE(m.value("added"), QSet<int>{61});
    QCOMPARE(m.value("removed"), QSet<int>{});
    QCOMPARE(m.value("rebuilt").size(), 9);
    QTest::keyClick(pane.list(), Qt::Key_Space);
    QVERIFY(!pane.showing_after());
    m = marks();
    QCOMPARE(m.value("removed"), (QSet<int>{46, 44}));
    QCOMPARE(m.value("rebuilt"), (QSet<int>{47, 48, 49, 50, 51, 52, 53, 57, 60}));
    // TS_VIEWER_SHOT_DIR=DIR: also save the pane showing this step before and after, to look at
    if (qEnvironmentVariableIsSet("TS_VIEWER_SHOT_DIR")) {
      const QString dir = qEnvironmentVariable("TS_VIEWER_SHOT_DIR");
      pane.show();
      QTest::qWait(100);
      QVERIFY(pane.grab().save(dir + "/stepper_before.png"));
      pane.set_showing_after(true);
      marks();
      QTest::qWait(100);
      QVERIFY(pane.grab().save(dir + "/stepper_after.png"));
      pane.set_showing_after(false);
      marks();
    }
    QTest::keyClick(pane.list(), Qt::Key_Space);
    QVERIFY(pane.showing_after());

    // selecting a pass elsewhere moves to its first step; selecting a node keeps the step
    sel.select_pass(3, 14);  // "lower all index dtypes"
    QCOMPARE(pane.current_step(), 11);
    pane.set_step(12);
    sel.select_node(45);
    QCOMPARE(pane.current_step(), 12);
    // a context without rewrites says so
    sel.select_context(2);
    QCOMPARE(pane.current_step(), -1);
    QCOMPARE(pane.model()->step_count(), 0);
  }

  // a chain of 400 ADDs, one rewritten: within the union limit the whole graph is laid out once, the replaced ADD struck
  // through beside its replacement; over the limit the step is laid out alone, cut to the part around the change
  void big_graphs_show_the_change() {
    QJsonObject uops;
    auto add = [&](int id, const char* op, QJsonArray src, const char* arg = "None") {
      uops[QString::number(id)] = QJsonObject{{"op", op}, {"dtype", "dtypes.float"}, {"src", src}, {"arg", arg}};
    };
    const int n = 400;
    add(0, "CONST", {}, "0.0");
    for (int i = 1; i <= n; ++i) add(i, "ADD", {i - 1, 0});
    add(n + 1, "SINK", {n});
    add(1000, "MUL", {n / 2 - 1, 0});  // the replacement of node n/2
    QJsonObject match{{"rule", "x+0 -> x*0"}, {"loc", "engine/uop/symbolic.cpp:1"}, {"before", n / 2}, {"after", 1000}};
    QJsonObject pass{{"name", "symbolic"}, {"depth", 0}, {"before", n + 1}, {"after", n + 1}, {"match_count", 1},
                     {"matches", QJsonArray{match}}};
    QJsonObject ctx{{"id", 0}, {"kind", "kernel"}, {"name", "big"}, {"passes", QJsonArray{pass}}};
    QJsonObject root{{"version", 1}, {"contexts", QJsonArray{ctx}}, {"calls", QJsonArray{}}, {"uops", uops}};
    tsv::Session s;
    QString err;
    QVERIFY2(s.load_data(QJsonDocument(root).toJson(), &err), qPrintable(err));
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    QSignalSpy done(&pane, &tsv::StepperPane::layout_done);
    sel.select_context(0);
    QCOMPARE(pane.current_step(), 0);
    auto f = pane.model()->frame(0);
    QVERIFY(f.exact);
    QCOMPARE(f.removed, QSet<int>{n / 2});
    QCOMPARE(f.added, QSet<int>{1000});
    QCOMPARE(f.rebuilt_before.size(), n / 2 + 1);  // ADDs n/2+1..n and the SINK
    QCOMPARE(pane.model()->nodes_under(f.after).size(), n + 2);
    QVERIFY(done.count() > 0 || done.wait(20000));
    auto drawn = [&] {
      QHash<int, QString> out;
      for (auto* it : pane.scene()->items())
        if (it->data(0).isValid() && it->isVisible()) out.insert(it->data(0).toInt(), it->data(1).toString());
      return out;
    };
    QCOMPARE(pane.drawn_window().pass, 0);
    QCOMPARE(pane.drawn_window().places.size(), n + 3);  // the chain, its SINK, the replacement
    auto d = drawn();
    QCOMPARE(d.size(), n + 3);
    QCOMPARE(d.value(1000), QStringLiteral("added"));
    QCOMPARE(d.value(n / 2), QStringLiteral("gone"));  // the replaced ADD, faded and struck
    QCOMPARE(std::count(d.begin(), d.end(), QStringLiteral("rebuilt")), qsizetype(n / 2 + 1));
    // over the limit: this step alone, cut to kMaxNodes around the change
    done.clear();
    pane.set_union_limit(300);
    QVERIFY(done.wait(20000));
    QCOMPARE(pane.drawn_window().pass, -1);
    d = drawn();
    QCOMPARE(d.size(), int(tsv::StepperPane::kMaxNodes));
    QCOMPARE(d.value(1000), QStringLiteral("added"));
    QVERIFY2(pane.note().contains(QStringLiteral("of %1 nodes").arg(n + 2)), qPrintable(pane.note()));
    QVERIFY2(pane.note().contains(QStringLiteral("hold %1 nodes, over 300: laid out on its own").arg(n + 3)), qPrintable(pane.note()));
  }

  // a trace written with --trace passes counts rewrites but does not list them: the pane says how to get them
  void passes_level_trace_explains_itself() {
    tsv::Session s;
    tsv::SelectionModel sel(&s);
    tsv::StepperPane pane(&sel);
    QVERIFY(s.load(source_dir() + "/tests/viewer/data/seed_add.trace.json"));
    sel.select_context(3);
    QCOMPARE(pane.model()->step_count(), 0);
    QVERIFY(pane.model()->unlisted_matches() > 0);
    bool found = false;
    for (auto* l : pane.findChildren<QLabel*>())
      found |= l->text().contains("--trace matches");
    QVERIFY(found);
  }

  // the window's process, offscreen: its exit status (-1: it did not finish in time) and what it wrote to stderr
  static std::pair<int, QString> window_process(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    p.setProcessEnvironment(env);
    p.start(tinyscope_bin(), args);
    const bool done = p.waitForFinished(90000);
    return {done ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardError())};
  }

  // --step N: the window opens on step N of the selected context (a screenshot of it, offscreen)
  void command_line_opens_a_step() {
    const QString png = dir_.filePath("step.png");
    const auto [code, err] = window_process({fixture(), "--step", "3", "--screenshot", png});
    QVERIFY2(code == 0, qPrintable(err));
    QVERIFY2(err.contains("--step 3: the stepper shows step 3 of 15\n"), qPrintable(err));
    QImage img(png);
    QVERIFY(!img.isNull());
    QCOMPARE(img.size(), QSize(1600, 1000));
  }

  // --run --step N: one run (a settled window before the run starts queues no second one, whose trace would reset the
  // stepper to step 1), then the stepper at step N of the run's first kernel
  void command_line_run_opens_a_step() {
    const auto [code, err] = window_process({source_dir() + "/resources/examples/tutorial.py", "--run", "--dev", "CPU", "--step", "4", "--screenshot",
                                             dir_.filePath("run_step.png")});
    QVERIFY2(code == 0, qPrintable(err));
    QCOMPARE(err.count("tinyscope: Run to all panes"), 1);
    QVERIFY2(err.contains(QRegularExpression("--step 4: the stepper shows step 4 of [1-9][0-9]*\n")), qPrintable(err));
  }

  // the window has the stepper as a dock following the selection
  void window_has_the_stepper_dock() {
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    QVERIFY(w.open_trace(fixture()));
    auto* dock = w.findChild<QDockWidget*>("stepper");
    QVERIFY(dock);
    auto* pane = qobject_cast<tsv::StepperPane*>(dock->widget());
    QVERIFY(pane);
    QCOMPARE(w.selection()->current().context, 3);  // the first kernel
    QCOMPARE(pane->model()->context(), 3);
    QCOMPARE(pane->current_step(), 0);
    w.selection()->select_pass(3, 7);
    QCOMPARE(pane->current_step(), 2);
    // beside the kernel AST, not a tab over it
    auto* ast = w.findChild<QDockWidget*>("kernel_ast");
    QVERIFY(ast);
    QVERIFY(!w.tabifiedDockWidgets(dock).contains(ast));
    // its canvas is refitted on every resize, so it has no scrollbars to come and go with each fit (a layout that
    // never settled in a short dock)
    QCOMPARE(pane->view()->horizontalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
    QCOMPARE(pane->view()->verticalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);
  }
};

QTEST_MAIN(TestStepper)
#include "test_stepper.moc"
