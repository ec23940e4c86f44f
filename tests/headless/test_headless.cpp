// The headless build (no Qt, no LLVM, no Python) configures from this tree: configure.cmake runs its configure step
// in a scratch folder and fails when a left-out dependency is looked up or linked, or a target is missing.
#include <QProcess>
#include <QtTest>

class TestHeadless : public QObject {
  Q_OBJECT
 private slots:
  void configures() {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    const QString bin = QDir::temp().filePath(QString("tinyscope-headless-%1").arg(QCoreApplication::applicationPid()));
    p.start(TS_CMAKE, {"-DSRC=" TS_SOURCE_DIR, "-DBIN=" + bin, "-P", TS_SOURCE_DIR "/tests/headless/configure.cmake"});
    QVERIFY(p.waitForFinished(100000));
    const QString out = QString::fromUtf8(p.readAll());
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out));
    QVERIFY2(out.contains("headless configure ok"), qPrintable(out));
  }
};

QTEST_GUILESS_MAIN(TestHeadless)
#include "test_headless.moc"
