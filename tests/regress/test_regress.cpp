// Regression programs (tests/regress/*.py), each a reproducer of a defect. A script's header says how it is judged:
//   # devices: CPU CPU:LLVM INTERP      the devices it runs on (default: all three)
//   # error: TEXT                       it must exit non-zero with TEXT on stderr (the reference raises there)
//   # args: --repeat 5                  extra arguments of `tinyscope run` (a second run is compared with the first)
//   # env: NAME=VALUE                   environment of the run
//   # timeout: SECONDS                  per run (default 120)
//   # sanitized: skip REASON             not run in a sanitizer build (`make test-asan`), e.g. an RSS bound
// Without `# error:`, stdout must equal NAME.out, what tinygrad printed for the same script (make_expected.sh).
#include <QtCore/QDir>
#include <QtCore/QFile>
#include <QtCore/QProcess>
#include <QtCore/QRegularExpression>
#include <QtTest/QtTest>

#include "test_env.h"

namespace {

struct Case {
  QString path, name;
  QStringList devices{QStringLiteral("CPU"), QStringLiteral("CPU:LLVM"), QStringLiteral("INTERP")};
  QString error;
  QStringList args;
  QMap<QString, QString> env;
  int timeout_s = 120;
  QString sanitized_skip;  // why a sanitizer build does not run it
};

Case parse(const QString& path) {
  Case c;
  c.path = path;
  c.name = QFileInfo(path).completeBaseName();
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return c;
  for (const QString& line : QString::fromUtf8(f.readAll()).split('\n')) {
    if (!line.startsWith('#')) continue;
    QString body = line.mid(1).trimmed();
    auto value = [&](const char* key) { return body.mid(QString::fromLatin1(key).size()).trimmed(); };
    if (body.startsWith("devices:")) c.devices = value("devices:").split(' ', Qt::SkipEmptyParts);
    else if (body.startsWith("error:")) c.error = value("error:");
    else if (body.startsWith("args:")) c.args = value("args:").split(' ', Qt::SkipEmptyParts);
    else if (body.startsWith("timeout:")) c.timeout_s = value("timeout:").toInt();
    else if (body.startsWith("sanitized: skip")) c.sanitized_skip = value("sanitized: skip");
    else if (body.startsWith("env:")) {
      QString kv = value("env:");
      c.env[kv.section('=', 0, 0)] = kv.section('=', 1);
    }
  }
  return c;
}

struct Result {
  int code = -1;
  bool finished = false;
  QString out, err;
};

Result run(const Case& c, const QString& dev, const QStringList& extra) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEBUG", "0");
  env.insert("DEV", dev);
  for (auto it = c.env.begin(); it != c.env.end(); ++it) env.insert(it.key(), it.value());
  p.setProcessEnvironment(env);
  p.setWorkingDirectory(QFileInfo(c.path).absolutePath());
  p.start(ts_test::tinyscope_bin(), QStringList{"run", c.path} + extra);
  Result r;
  r.finished = p.waitForStarted() && p.waitForFinished(c.timeout_s * 1000);
  if (!r.finished) {
    p.kill();
    p.waitForFinished();
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

class TestRegress : public QObject {
  Q_OBJECT

 private slots:
  void programs_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("device");
    QDir dir(ts_test::source_dir() + "/tests/regress");
    const QStringList files = dir.entryList({"*.py"}, QDir::Files, QDir::Name);
    QVERIFY2(!files.isEmpty(), "no regression programs found");
    for (const QString& f : files) {
      Case c = parse(dir.filePath(f));
      for (const QString& dev : c.devices) QTest::newRow(qPrintable(c.name + "@" + dev)) << dir.filePath(f) << dev;
    }
  }

  void programs() {
    QFETCH(QString, path);
    QFETCH(QString, device);
    Case c = parse(path);
    // a sanitizer build (tests/CMakeLists.txt sets TS_SANITIZED) skips what it cannot measure, saying why
    if (!c.sanitized_skip.isEmpty() && qEnvironmentVariableIsSet("TS_SANITIZED")) QSKIP(qPrintable(c.sanitized_skip));
    Result r = run(c, device, c.args);
    QByteArray why = QStringLiteral("exit %1%2\nstdout:\n%3\nstderr:\n%4")
                         .arg(r.code).arg(r.finished ? "" : " (timed out)", r.out.right(3000), r.err.right(3000)).toUtf8();
    QVERIFY2(r.finished, why.constData());
    if (!c.error.isEmpty()) {
      QVERIFY2(r.code > 0, why.constData());  // an error exit, not a crash (a signal reads as -1)
      QVERIFY2(r.err.contains(c.error), why.constData());
      QVERIFY2(!r.err.contains("Segmentation") && !r.err.contains("terminate called"), why.constData());
      return;
    }
    QVERIFY2(r.code == 0, why.constData());
    QString expected = read_text(QFileInfo(path).absolutePath() + "/" + c.name + ".out");
    QVERIFY2(!expected.isEmpty(), qPrintable("no " + c.name + ".out: record it with tests/regress/make_expected.sh"));
    QCOMPARE(r.out, expected);
    if (!c.args.isEmpty()) {  // the extra arguments must not change what the program prints
      Result plain = run(c, device, {});
      QCOMPARE(plain.out, r.out);
    }
  }
};

int main(int argc, char** argv) {
  // each row has its own timeout (the script's header); QtTest's 5-minute limit per function must not cut it short
  qputenv("QTEST_FUNCTION_TIMEOUT", "3600000");
  QCoreApplication app(argc, argv);
  TestRegress t;
  return QTest::qExec(&t, argc, argv);
}
#include "test_regress.moc"
