// Timing N× never changes what a program computes: seeded programs (RNG, nn.Linear's init, dropout, optimizer steps)
// run in the window with Timing 5× print exactly what `tinyscope run SCRIPT` and `tinyscope run --repeat 5 SCRIPT`
// print, and that is tinygrad's output (the reference values below were printed by tinygrad a9069c1 running the
// same scripts; float32 results agree with it to float rounding: the CPU's transcendentals are the compiler's).
#include <QPlainTextEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "viewer/model/session.h"

#include "test_env.h"

namespace {
using ts_test::source_dir;
using ts_test::tinyscope_bin;

struct Program {
  const char* name;
  const char* source;  // empty: resources/examples/<name>
  const char* reference;  // tinygrad's stdout
};

const Program kPrograms[] = {
    {"randn.py", "from tinygrad import Tensor\nTensor.manual_seed(0)\nprint(Tensor.randn(3).tolist())\n",
     "[0.07613130658864975, -0.7528406381607056, 0.2557024359703064]\n"},
    {"rand.py",
     "from tinygrad import Tensor\nTensor.manual_seed(0)\na = Tensor.rand(2, 3)\nprint(a.tolist())\n"
     "print(Tensor.rand(4).tolist())\nprint((a * 2).sum().item())\n",
     "[[0.24253475666046143, 0.5740201473236084, 0.792222261428833], [0.7323720455169678, 0.2986443042755127, 0.3784658908843994]]\n"
     "[0.29300951957702637, 0.46923017501831055, 0.344768762588501, 0.9138388633728027]\n"
     "6.0365190505981445\n"},
    {"linear_init.py",
     "from tinygrad import Tensor, nn\nTensor.manual_seed(0)\nl = nn.Linear(3, 2)\nprint(l.weight.tolist())\nprint(l.bias.tolist())\n",
     "[[-0.2972952425479889, 0.08547110110521317, 0.3374291956424713], [0.26832011342048645, -0.23250553011894226, -0.14033550024032593]]\n"
     "[0.19030006229877472, -0.22230875492095947]\n"},
    {"dropout.py",
     "from tinygrad import Tensor\nfrom tinygrad.helpers import Context\nTensor.manual_seed(0)\nwith Context(TRAINING=1):\n"
     "  print(Tensor.ones(10).dropout(0.5).tolist())\n  print(Tensor.ones(6).dropout(0.25).tolist())\n",
     "[2.0, 2.0, 2.0, 0.0, 0.0, 2.0, 2.0, 2.0, 0.0, 0.0]\n"
     "[1.3333333730697632, 1.3333333730697632, 0.0, 1.3333333730697632, 1.3333333730697632, 1.3333333730697632]\n"},
    {"sgd_step.py",
     "from tinygrad import Tensor, nn\nfrom tinygrad.helpers import Context\nfrom tinygrad.nn.optim import SGD\n"
     "Tensor.manual_seed(0)\nl = nn.Linear(3, 2)\nopt = SGD([l.weight, l.bias], lr=0.1, momentum=0.9)\n"
     "x = Tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]])\nwith Context(TRAINING=1):\n  for _ in range(2):\n"
     "    opt.zero_grad()\n    loss = (l(x) ** 2).mean()\n    loss.backward()\n    opt.step()\n"
     "    print(round(loss.item(), 6))\nprint([round(v, 6) for v in l.weight.flatten().tolist()])\n"
     "print([round(v, 6) for v in l.bias.tolist()])\n",
     "0.167552\n0.011932\n[-0.308657, 0.193859, 0.130272, 0.321894, -0.176649, -0.108424]\n[0.135235, -0.151638]\n"},
    {"train_step.py", "", "step 0: loss 1.2236\nstep 1: loss 1.0792\nstep 2: loss 0.9578\n"},
};

// every number in the text, and the text with each number replaced by '#'
QList<double> numbers(const QString& s, QString* shape) {
  static const QRegularExpression re(QStringLiteral("-?\\d+(\\.\\d+)?(e-?\\d+)?"));
  QList<double> out;
  *shape = s;
  shape->replace(re, QStringLiteral("#"));
  for (auto it = re.globalMatch(s); it.hasNext();) out << it.next().captured(0).toDouble();
  return out;
}

// the text the same as the reference but for float32 rounding (a relative 2e-6, or 1e-7 near zero)
bool near(const QString& got, const QString& want, QString* why) {
  QString gs, ws;
  const QList<double> g = numbers(got, &gs), w = numbers(want, &ws);
  if (gs != ws || g.size() != w.size()) return *why = "got\n" + got + "want\n" + want, false;
  for (int i = 0; i < g.size(); ++i)
    if (std::abs(g[i] - w[i]) > std::max(1e-7, 2e-6 * std::abs(w[i])))
      return *why = QStringLiteral("number %1: %2 vs %3\ngot\n%4want\n%5").arg(i).arg(g[i], 0, 'g', 17).arg(w[i], 0, 'g', 17).arg(got, want), false;
  return true;
}

QString cli_stdout(const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("DEBUG");
  env.remove("DEV");
  p.setProcessEnvironment(env);
  p.start(tinyscope_bin(), args);
  if (!p.waitForFinished(120000) || p.exitCode() != 0) return "FAILED: " + QString::fromUtf8(p.readAllStandardError());
  return QString::fromUtf8(p.readAllStandardOutput());
}

// what the script printed in the window's console: between the "$ tinyscope run" line and the "[Finished…]" line
QString console_output(const QString& console) {
  const qsizetype start = console.indexOf('\n') + 1;
  const qsizetype end = console.lastIndexOf(QStringLiteral("\n[Finished after "));
  if (start <= 0 || end < start) return "NO OUTPUT: " + console;
  return console.mid(start, end - start);
}
}  // namespace

class TestRepeatOutputs : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void window_timing_5x_prints_what_run_prints_data() {
    QTest::addColumn<int>("program");
    for (int i = 0; i < int(std::size(kPrograms)); ++i) QTest::newRow(kPrograms[i].name) << i;
  }
  void window_timing_5x_prints_what_run_prints() {
    QFETCH(int, program);
    const Program& prog = kPrograms[program];
    QTemporaryDir dir;
    QString path = source_dir() + "/resources/examples/" + prog.name;
    if (*prog.source) {
      path = dir.filePath(prog.name);
      QVERIFY(ts_test::write_file(path, prog.source));
    }
    // the references: once, and with every kernel timed 5 times
    const QString once = cli_stdout({"run", path});
    const QString five = cli_stdout({"run", "--repeat", "5", path});
    QString why;
    QVERIFY2(near(once, prog.reference, &why), qPrintable(why));
    QCOMPARE(five, once);

    tsgui::MainWindow w(source_dir() + "/resources/examples", /*restore_layout=*/false);
    w.controller()->set_program(tinyscope_bin());
    QVERIFY(w.set_device("CPU"));
    auto* timing = w.findChild<QSpinBox*>();  // the toolbar's Timing N×
    QVERIFY(timing);
    timing->setValue(5);
    QCOMPARE(w.controller()->repeat(), 5);
    w.open_script(path);
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.wait(120000));
    QVERIFY2(done.front().at(0).toBool(), qPrintable(w.console()->toPlainText()));
    QCOMPARE(console_output(w.console()->toPlainText()), once);
    // and the window's run did time every kernel 5 times
    int kernels = 0, restored = 0;
    for (const auto& c : w.session()->calls()) {
      if (c.kind != "kernel") continue;
      ++kernels;
      QCOMPARE(c.times.size(), 5);
      restored += c.repeat_mode == "restored";
    }
    QVERIFY(kernels > 0);
    // a kernel that advances the RNG counter or assigns what it reads is timed on restored inputs
    QVERIFY2(restored > 0, prog.name);
  }
};

QTEST_MAIN(TestRepeatOutputs)
#include "test_repeat_outputs.moc"
