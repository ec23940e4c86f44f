// Comparing two runs by what they computed: the calls of every example script run on CPU and on VULKAN (lavapipe) pair
// one to one by computation however their kernels are named, and each pair's output buffers (--snapshots) agree
// within the dtype's tolerance except where the device itself differs; an inserted kernel shifts no later row; the
// first divergence is the call the buffers say; two devices' sources of one kernel line up by the uop each line renders.
#include <QCheckBox>
#include <QDockWidget>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "viewer/model/selection_model.h"
#include "viewer/panes/source_pane.h"

#include "test_env.h"
#include "viewer_test_util.h"  // own_settings
#include "viewer/model/call_pairing.h"
#include "viewer/model/compare_model.h"
#include "viewer/model/output_compare.h"
#include "viewer/model/session.h"
#include "viewer/panes/source_diff.h"

using namespace ts_test;

namespace {
// `tinyscope run SCRIPT --json T --snapshots` on `dev`, loaded
QString load_run(const QString& script, const QString& dev, const QString& out, tsv::Session* s, const QString& runtime_dir,
                 const QStringList& extra_env = {}) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEV", dev);
  for (const QString& kv : extra_env) env.insert(kv.section('=', 0, 0), kv.section('=', 1));
  env.insert("DEBUG", "0");
  if (dev == "VULKAN") {
    if (!env.contains("VK_DRIVER_FILES") && !env.contains("VK_ICD_FILENAMES"))
      env.insert("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json");
    env.insert("XDG_RUNTIME_DIR", runtime_dir);
  }
  if (QString why = run_to_trace(script, out, {"--snapshots"}, env); !why.isEmpty()) return why;
  QString err;
  return s->load(out, &err) ? QString() : err;
}

// the snapshot of `call`'s buffer `arg`, or nullptr
const tsv::Output* snapshot(const tsv::Session& s, int call, int arg) {
  for (const tsv::Output& o : s.snapshots())
    if (o.call == call && o.arg == arg) return &o;
  return nullptr;
}
}  // namespace

class TestCompare : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void examples_pair_by_computation_data() {
    QTest::addColumn<QString>("script");
    for (const char* s : {"tutorial", "matmul", "conv2d", "softmax", "mlp", "train_step", "train_jit", "transformer_train"}) QTest::newRow(s) << QString(s);
  }
  // every call of CPU's run beside the call of VULKAN's that computes the same, their buffers agreeing
  void examples_pair_by_computation() {
    QFETCH(QString, script);
    const QString path = source_dir() + "/resources/examples/" + script + ".py";
    tsv::Session a, b;
    QString why = load_run(path, "CPU", dir_.filePath(script + ".cpu.json"), &a, dir_.path());
    QVERIFY2(why.isEmpty(), qPrintable(why));
    why = load_run(path, "VULKAN", dir_.filePath(script + ".vk.json"), &b, dir_.path());
    QVERIFY2(why.isEmpty(), qPrintable(why));
    tsv::CompareModel m(&a, &b);
    m.set_devices("CPU", "VULKAN");
    QCOMPARE(m.rowCount(), b.calls().size());
    QVERIFY(a.calls().size() >= 2);
    QCOMPARE(a.calls().size(), b.calls().size());
    QCOMPARE(m.rowCount(), a.calls().size());
    int renamed = 0;
    for (int r = 0; r < m.rowCount(); ++r) {
      QVERIFY2(m.same_computation(r), qPrintable(QString("row %1: %2").arg(r + 1).arg(m.index(r, tsv::CompareModel::kRatio).data().toString())));
      const tsv::CallPair& p = m.pairing().rows()[r];
      QCOMPARE(a.calls()[p.a].kind, b.calls()[p.b].kind);
      renamed += a.calls()[p.a].name != b.calls()[p.b].name && a.calls()[p.a].kind == "kernel";
      // what the pairing says is one computation, the buffers confirm: same size, and the same values within the
      // dtype's ULPs (or differ, where a device is at fault: checked below)
      const tsv::Output* sa = snapshot(a, p.a, 0);
      const tsv::Output* sb = snapshot(b, p.b, 0);
      QVERIFY2(sa && sb, qPrintable(QString("row %1 has no snapshot").arg(r + 1)));
      const tsv::OutputDiff d = tsv::compare_outputs(*sa, *sb);
      QVERIFY2(d.verdict == tsv::OutputDiff::Verdict::Equal || d.verdict == tsv::OutputDiff::Verdict::Differ,
               qPrintable(QString("row %1: %2").arg(r + 1).arg(d.problem)));
    }
    const tsv::Divergence div = tsv::first_divergence(a, b, m.pairing());
    QVERIFY(div.snapshots);
    if (script == "matmul") {
      // the canonical case: one computation, two names (other opts on each device), one row
      QCOMPARE(renamed, 1);
      const int k = m.rowCount() - 1;
      QVERIFY(m.index(k, tsv::CompareModel::kNameA).data().toString() != m.index(k, tsv::CompareModel::kNameB).data().toString());
      QVERIFY2(m.index(k, tsv::CompareModel::kRatio).data().toString().endsWith("×"), qPrintable(m.index(k, tsv::CompareModel::kRatio).data().toString()));
      // on VULKAN the matmul is staged in shared memory: its GLSL renders no uop a line, so the two sources stand side
      // by side as they are (no alignment offered)
      const tsv::Program& pa = a.contexts()[a.kernel_context(a.calls()[k].program_key)].program;
      const tsv::Program& staged = b.contexts()[b.kernel_context(b.calls()[k].program_key)].program;
      QVERIFY2(staged.src.contains("fp32 multiply-adds") && tsv::statement_keys(b, staged).isEmpty(), qPrintable(staged.src));
      tsv::SourceDiff plain;
      plain.set_aligned_sources("C", pa.src, tsv::statement_keys(a, pa), "GLSL", staged.src, tsv::statement_keys(b, staged));
      QVERIFY(plain.align_box()->isHidden());
      QCOMPARE(plain.right()->toPlainText(), staged.src);
      // lowered as any kernel (STAGE_MATMUL=0), its two sources, C and GLSL, line up statement by statement: the store
      // of the output on one row
      tsv::Session c;
      why = load_run(path, "VULKAN", dir_.filePath(script + ".vk-lowered.json"), &c, dir_.path(), {"STAGE_MATMUL=0"});
      QVERIFY2(why.isEmpty(), qPrintable(why));
      QCOMPARE(c.calls().size(), b.calls().size());
      const tsv::Program& pb = c.contexts()[c.kernel_context(c.calls()[k].program_key)].program;
      tsv::SourceDiff diff;
      diff.set_aligned_sources("C", pa.src, tsv::statement_keys(a, pa), "GLSL", pb.src, tsv::statement_keys(c, pb));
      QVERIFY(diff.align_box()->isChecked());
      const QStringList la = diff.left()->toPlainText().split('\n'), lb = diff.right()->toPlainText().split('\n');
      QCOMPARE(la.size(), lb.size());
      QCOMPARE(la.size(), diff.aligned_rows().size());
      const QStringList ka = tsv::statement_keys(a, pa), kb = tsv::statement_keys(c, pb);
      int both = 0, stores = 0;
      for (const auto& [x, y] : diff.aligned_rows()) {
        if (x < 0 || y < 0) continue;
        ++both;
        QCOMPARE(ka[x], kb[y]);
        stores += ka[x] == "STORE|void|0";
      }
      QVERIFY2(stores >= 1, "no row holds the output's store on both sides");
      QVERIFY2(both >= 10, qPrintable(QString::number(both)));
      // off: the text diff, each source as it is
      diff.align_box()->setChecked(false);
      QCOMPARE(diff.left()->toPlainText(), pa.src);
      QCOMPARE(diff.right()->toPlainText(), pb.src);
    }
    if (script == "transformer_train") {
      // Adam's first step divides each gradient by the root of its square (plus 1e-8): where a gradient is nearly 0 the
      // ratio turns tiny differences of the inputs into large ones; the divergence found, if any, is such a call,
      // whose inputs (the earlier calls' outputs) agree within the tolerance
      if (div.row >= 0) {
        qInfo("%s", qPrintable(tsv::divergence_text(div, a, b, "CPU", "VULKAN")));
        QVERIFY(div.inputs >= 1);
        QVERIFY(!div.inputs_diverge);
      }
    } else {
      // (softmax too: exp(-101) is the same denormal on lavapipe now that its EXP2 is the reference's polynomial)
      QVERIFY2(div.row == -1, qPrintable(tsv::divergence_text(div, a, b, "CPU", "VULKAN")));
    }
  }

  // a script that realizes one more tensor in the middle: one row of the second run alone, every other row paired by
  // what it computes, the rows after the inserted kernel too
  void an_inserted_kernel_shifts_nothing() {
    auto write = [&](const QString& name, const QString& text) {
      QVERIFY(ts_test::write_file(dir_.filePath(name), text.toUtf8()));
    };
    const QString head = "from tinygrad import Tensor\na = Tensor([1.0, 2.0, 3.0, 4.0]).realize()\nb = (a * 2).realize()\n";
    const QString tail = "c = (b + a).realize()\nd = (c * c).sum().realize()\nprint(d.item())\n";
    write("before.py", head + tail);
    write("after.py", head + "x = (a - 7).exp().realize()\n" + tail);
    tsv::Session a, b;
    QString why = load_run(dir_.filePath("before.py"), "CPU", dir_.filePath("before.json"), &a, dir_.path());
    QVERIFY2(why.isEmpty(), qPrintable(why));
    why = load_run(dir_.filePath("after.py"), "CPU", dir_.filePath("after.json"), &b, dir_.path());
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QCOMPARE(b.calls().size(), a.calls().size() + 1);
    tsv::CompareModel m(&a, &b);
    QCOMPARE(m.rowCount(), b.calls().size());
    int alone = -1;
    for (int r = 0; r < m.rowCount(); ++r) {
      const tsv::CallPair& p = m.pairing().rows()[r];
      if (p.a < 0) {
        QCOMPARE(alone, -1);
        alone = r;
        QVERIFY2(m.index(r, tsv::CompareModel::kRatio).data().toString().startsWith("only on"), "");
        continue;
      }
      QVERIFY2(m.same_computation(r), qPrintable(QString("row %1: %2 / %3").arg(r).arg(a.calls()[p.a].name, b.calls()[p.b].name)));
      QCOMPARE(a.calls()[p.a].name, b.calls()[p.b].name);
      QCOMPARE(p.b, p.a + (alone >= 0 ? 1 : 0));  // the rows after the inserted call pair with the shifted calls
    }
    QVERIFY(alone >= 0 && alone < m.rowCount() - 1);
    QVERIFY2(b.calls()[m.pairing().rows()[alone].b].name.startsWith("E_"), qPrintable(b.calls()[m.pairing().rows()[alone].b].name));
    // the weak pairing: a kernel changed by an edit keeps its row, paired by its kind and buffers, marked as another
    // computation
    write("edited.py", head.left(head.indexOf("b = ")) + "b = (a * 3).realize()\n" + tail);
    tsv::Session c;
    why = load_run(dir_.filePath("edited.py"), "CPU", dir_.filePath("edited.json"), &c, dir_.path());
    QVERIFY2(why.isEmpty(), qPrintable(why));
    tsv::CallPairing p;
    p.build(a, c);
    QCOMPARE(p.rows().size(), a.calls().size());
    QCOMPARE(p.paired_rows(), int(a.calls().size()));
    QVERIFY(p.computation_rows() < p.paired_rows());  // b = a * 3 and everything computed from it are other computations
    QVERIFY(p.computation_rows() >= 1);               // the copy of a is the same
  }

  // the window: a float16 remainder by 0.001 run on CPU, then on VULKAN, both keeping their calls' buffers (0.001 is
  // 0.0010004 in float16 and the remainder a difference of nearly equal numbers: the devices' intermediate precision
  // decides it, their values differ); the Compare dock names the first divergence and a click on it selects that call;
  // the Source pane's UOps shows the selected kernel's linearized program
  void the_window_names_and_selects_the_first_divergence() {
    own_settings(QStringLiteral("test_compare"));
    if (qEnvironmentVariableIsEmpty("VK_DRIVER_FILES") && qEnvironmentVariableIsEmpty("VK_ICD_FILENAMES"))
      qputenv("VK_DRIVER_FILES", "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json");
    std::string why;  // the window lists the engine's devices, as the app's does once it registered Vulkan's
    QVERIFY2(ts::vk::register_vulkan_devices({}, &why) > 0, why.c_str());
    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    w.controller()->set_snapshots(true);
    w.set_device("CPU");
    QString err;
    QVERIFY2(w.set_compare_device("VULKAN", &err), qPrintable(err));
    QTemporaryDir dir;
    const QString script = dir.filePath("remainder.py");
    QVERIFY(ts_test::write_file(script, "from tinygrad import Tensor, dtypes\n"
            "x = Tensor([1.5, 2.25, -3.75, 0.3, 7.0, -1.25], dtype=dtypes.float16)\n"
            "y = (x * 3).contiguous()\n"
            "print((y % 0.001).tolist())\n"));
    w.open_script(script);
    w.show();
    QSignalSpy compared(&w, &tsgui::MainWindow::compare_finished);
    w.run();
    QVERIFY(compared.count() == 1 || compared.wait(120000));
    QVERIFY(compared.front().at(0).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(w.settled(), 30000);
    QLabel* div = w.divergence_label();
    QVERIFY(div && div->isVisible());
    QVERIFY2(div->text().contains("First divergence: call 3, E_6 on CPU"), qPrintable(div->text()));
    w.selection()->select_call(0);
    emit div->linkActivated(QStringLiteral("call:2:2"));
    QCOMPARE(w.selection()->current().call, 2);
    // the kernel's linearized program, one uop a line, its store among them
    w.source_pane()->show_uops(true);
    QVERIFY(w.source_pane()->showing_uops());
    QVERIFY2(w.source_pane()->text().contains("STORE"), qPrintable(w.source_pane()->text().left(400)));
    QVERIFY(w.source_pane()->title().contains("[uops]"));
    w.source_pane()->show_uops(false);
    QVERIFY(w.source_pane()->text().contains("void E_6"));
  }

  // the alignment itself: a longest common subsequence, whichever way it is computed
  void align_keys_is_a_longest_common_subsequence() {
    const QList<quint64> a{1, 2, 3, 4, 5, 6}, b{1, 9, 3, 4, 6, 7};
    const auto small = tsv::align_keys(a, b);
    QCOMPARE(small, (QList<QPair<int, int>>{{0, 0}, {2, 2}, {3, 3}, {5, 4}}));
    // past the table's size the greedy match finds the same here
    QCOMPARE(tsv::align_keys(a, b, /*max_cells=*/1), small);
    QCOMPARE(tsv::align_keys({}, b).size(), 0);
  }
};

QTEST_MAIN(TestCompare)
#include "test_compare.moc"
