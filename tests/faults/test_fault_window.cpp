// The window when the child running its script is killed from outside (the OOM killer's SIGKILL, a SIGTERM): the run
// ends with a message naming the signal, the panes keep what was recorded, and the window's next run works.
#include <signal.h>

#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/run_controller.h"
#include "test_env.h"
#include "viewer/model/session.h"

namespace {
// realizes, then says its pid and waits to be killed
const char* kWaits =
    "import os, time\n"
    "from tinygrad import Tensor\n"
    "a = Tensor([1.0, 2.0, 3.0, 4.0])\n"
    "for i in range(3):\n"
    "  a = (a * 2 + 1).realize()\n"
    "print('pid', os.getpid(), flush=True)\n"
    "while True:\n"
    "  time.sleep(0.05)\n";
const char* kFine = "from tinygrad import Tensor\nprint('fine', (Tensor([1.0, 2.0]) * 3).tolist())\n";

// the pid the script printed, once it did (0: not within the time)
pid_t printed_pid(tsgui::MainWindow& w) {
  static const QRegularExpression re(QStringLiteral("pid (\\d+)\\n"));
  QRegularExpressionMatch m;
  if (!QTest::qWaitFor([&] { return (m = re.match(w.console()->toPlainText())).hasMatch(); }, 60000)) return 0;
  return static_cast<pid_t>(m.captured(1).toLongLong());
}
}  // namespace

class TestFaultWindow : public QObject {
  Q_OBJECT

  // after the killed run, the same window runs a script to its end
  static void next_run_works(tsgui::MainWindow& w) {
    w.editor()->setPlainText(kFine);
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    QVERIFY(done.wait(60000));
    QVERIFY2(done.front().at(0).toBool(), qPrintable(w.console()->toPlainText()));
    QVERIFY2(w.console()->toPlainText().contains("fine [3.0, 6.0]"), qPrintable(w.console()->toPlainText()));
    QVERIFY(w.session()->partial().isEmpty());
    QCOMPARE(w.session()->calls().size(), 2);  // the copy in and the multiply
  }

  // runs kWaits in w, sends sig to its child once the script printed its pid, waits for the run's end (failed);
  // *console: the console then
  static void run_and_signal(tsgui::MainWindow& w, int sig, QString* console) {
    w.controller()->set_program(ts_test::tinyscope_bin());
    w.editor()->setPlainText(kWaits);
    QSignalSpy done(&w, &tsgui::MainWindow::run_finished);
    w.run();
    const pid_t pid = printed_pid(w);
    QVERIFY2(pid > 0, qPrintable(w.console()->toPlainText()));
    QCOMPARE(::kill(pid, sig), 0);
    QVERIFY(done.wait(30000));
    QVERIFY(!done.front().at(0).toBool());
    *console = w.console()->toPlainText();
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  // SIGKILL: "The run crashed: signal 9 (SIGKILL, Killed)", the partial trace of the three realizes in the panes
  void child_killed_from_outside() {
    tsgui::MainWindow w(ts_test::source_dir() + "/resources/examples", /*restore_layout=*/false);
    QString console;
    run_and_signal(w, SIGKILL, &console);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(console.contains("The run crashed: signal 9 (SIGKILL, Killed)"), qPrintable(console));
    QVERIFY(w.controller()->last_end().crashed && w.controller()->last_end().partial);
    QVERIFY2(w.session()->partial().startsWith("crashed: signal 9 (SIGKILL, Killed)"), qPrintable(w.session()->partial()));
    QCOMPARE(w.session()->calls().size(), 4);  // the copy and three E_4: everything recorded before the kill
    next_run_works(w);
  }

  // SIGTERM: the child stops the script, writes the whole trace of what ran and exits 143, saying which signal
  void child_terminated_from_outside() {
    tsgui::MainWindow w(ts_test::source_dir() + "/resources/examples", /*restore_layout=*/false);
    QString console;
    run_and_signal(w, SIGTERM, &console);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(console.contains("tinyscope: the run was stopped by signal 15 (SIGTERM, Terminated)"), qPrintable(console));
    QVERIFY2(console.contains("exit code 143"), qPrintable(console));
    QVERIFY(!w.controller()->last_end().crashed && !w.controller()->last_end().partial);
    QVERIFY(w.session()->partial().isEmpty());  // the whole trace, written by the child
    QCOMPARE(w.session()->calls().size(), 4);
    next_run_works(w);
  }
};

QTEST_MAIN(TestFaultWindow)
#include "test_fault_window.moc"
