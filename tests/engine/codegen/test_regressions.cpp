// Codegen regressions as tinygrad programs (tests/engine/codegen/regressions/NAME.py), run by `tinyscope run` on
// DEV=CPU, CPU:LLVM and INTERP. NAME.expected is what tinygrad (the reference, /work/tinygrad at a9069c1) prints for
// the same script on its CPU device:
//     cd tinygrad && PYTHONPATH=. python3 .../regressions/NAME.py > .../regressions/NAME.expected
// A script without NAME.expected checks itself (asserts, then prints "ok"): it compares behaviour the reference
// cannot run (it traps) with the reference-checked constant cases.
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QProcess>
#include <QtCore/QRegularExpression>
#include <QtTest/QtTest>

#include "test_env.h"

namespace {

using ts_test::source_dir;
using ts_test::tinyscope_bin;

QString regressions_dir() { return source_dir() + QStringLiteral("/tests/engine/codegen/regressions"); }

struct Run {
  int code = -1;
  QString out, err;
};

Run run_script(const QString& script, const QString& device, const QString& debug = QStringLiteral("0")) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEV", device);
  env.insert("DEBUG", debug);
  p.setProcessEnvironment(env);
  p.start(tinyscope_bin(), {"run", script});
  Run r;
  if (!p.waitForStarted() || !p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
    r.err = QStringLiteral("did not finish in 120 s");
    return r;
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

QString read_text(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly | QIODevice::Text) ? QString::fromUtf8(f.readAll()) : QString();
}

}  // namespace

class TestRegressions : public QObject {
  Q_OBJECT
 private slots:
  void scripts_match_the_reference_data() {
    QTest::addColumn<QString>("script");
    QTest::addColumn<QString>("device");
    QStringList scripts = QDir(regressions_dir()).entryList({"*.py"}, QDir::Files, QDir::Name);
    QVERIFY(scripts.size() >= 5);
    for (const QString& s : scripts)
      for (const char* dev : {"CPU", "CPU:LLVM", "INTERP"})
        QTest::newRow(qPrintable(s + " " + dev)) << s << QString(dev);
  }
  void scripts_match_the_reference() {
    QFETCH(QString, script);
    QFETCH(QString, device);
    QString path = regressions_dir() + "/" + script;
    Run r = run_script(path, device);
    QVERIFY2(r.code == 0, qPrintable(QString("exit %1\n%2\n%3").arg(r.code).arg(r.out, r.err)));
    QString expected_path = path.left(path.size() - 3) + ".expected";
    QString expected = QFile::exists(expected_path) ? read_text(expected_path) : QStringLiteral("ok\n");
    QVERIFY(!expected.isEmpty());
    QStringList got = r.out.split('\n'), want = expected.split('\n');
    for (int i = 0; i < std::max(got.size(), want.size()); ++i) {
      QString g = i < got.size() ? got[i] : QString("<missing>"), w = i < want.size() ? want[i] : QString("<missing>");
      QVERIFY2(g == w, qPrintable(QString("%1 line %2:\n  got  %3\n  want %4").arg(script).arg(i + 1).arg(g, w)));
    }
  }
  // the pad reproducer's kernel reads data1 under one gate holding every padded axis's validity (the loop over the
  // padded rows, Ridx0, and the one over the padded columns, Ridx1), as the reference's r_11_6_12
  void multi_axis_pad_gate_is_the_conjunction() {
    Run r = run_script(regressions_dir() + "/pad_multi_axis.py", "CPU", "4");
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QRegularExpression load(R"(float val\d+ = \((\w+)\?\*\(data1_256\+[^)]*-66\):0\.0f\);)");
    QRegularExpressionMatch m = load.match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out.left(4000)));
    QString gate = m.captured(1);
    QRegularExpression def("_Bool " + gate + R"( = ([^;]*);)");
    QRegularExpressionMatch d = def.match(r.out);
    QVERIFY2(d.hasMatch(), qPrintable(gate));
    QVERIFY2(d.captured(1).contains("Ridx0") && d.captured(1).contains("Ridx1"), qPrintable(gate + " = " + d.captured(1)));
  }
};

QTEST_GUILESS_MAIN(TestRegressions)
#include "test_regressions.moc"
