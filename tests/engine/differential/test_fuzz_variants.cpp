// The fuzzer's programs (seeds 1..1000) as users run them, through `tinyscope run` and the Python API
// (fuzz_variants.py): each TinyJit-wrapped and called with four sets of inputs, replays bitwise equal to the same
// function without the JIT (CPU, VULKAN); the second half of each moved to another device with .to() (CPU then
// VULKAN, VULKAN then CPU) equal to the whole on one device within the tolerance of the floats it went through; and
// every program's outputs on CPU against the reference's, recorded by record_reference.py into reference_outcomes.txt
// (the differences listed with their causes in reference_explained.txt).
// VULKAN children run under the validation layer (any message fails them).
#include <QtTest>

#include "test_env.h"

using namespace ts_test;

class TestFuzzVariants : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString defs_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    defs_ = dir_.filePath("defs.py");
    Result r = run_process(QStringLiteral(TS_FUZZ_BIN), {"--python-defs", "1", "1000"});
    QVERIFY2(r.code == 0, why(r));
    QVERIFY(ts_test::write_file(defs_, r.out.toUtf8()));
    QVERIFY(r.out.count("PROGRAMS.append((") == 1000);
  }
  void variants_data() {
    QTest::addColumn<QString>("dev");
    QTest::addColumn<QStringList>("mode");
    const QString ref = source_dir() + "/tests/engine/differential/reference_outcomes.txt";
    const QString explained = source_dir() + "/tests/engine/differential/reference_explained.txt";
    QTest::newRow("TinyJit on CPU") << "CPU" << QStringList{"jit"};
    QTest::newRow("TinyJit on VULKAN") << "VULKAN" << QStringList{"jit"};
    const QString mixed = source_dir() + "/tests/engine/differential/mixed_explained.txt";
    QTest::newRow("CPU then VULKAN") << "CPU" << QStringList{"mixed", "VULKAN", mixed};
    QTest::newRow("VULKAN then CPU") << "VULKAN" << QStringList{"mixed", "CPU", mixed};
    QTest::newRow("the reference's outcomes on CPU") << "CPU" << QStringList{"check", ref, explained};
  }
  void variants() {
    QFETCH(QString, dev);
    QFETCH(QStringList, mode);
    QProcessEnvironment env;
    env.insert("DEV", dev);
    if (dev == "VULKAN" || mode.contains("VULKAN")) vulkan_test_env(env, dir_.path());
    Result r = run_process(tinyscope_bin(), QStringList{"run", source_dir() + "/tests/engine/differential/fuzz_variants.py", "--", defs_} + mode,
                           env, {}, 900000);
    // (the failures and the summary: the explained differences' lines would bury them)
    Result shown = r;
    shown.out.clear();
    for (const QString& l : r.out.split('\n'))
      if (!l.startsWith("explained ")) shown.out += l + "\n";
    QVERIFY2(r.code == 0, why(shown));
    QVERIFY2(r.out.contains("variants: 1000 programs, 0 failures"), why(shown));
    // most programs ran (the rest: rejected by every path, outputs a TinyJit cannot capture, a device's limits)
    const QString tail = r.out.section("failures, ", 1).section(' ', 0, 0);
    QVERIFY2(tail.toInt() < (mode[0] == "check" ? 30 : 150), why(shown));
  }
};

QTEST_GUILESS_MAIN(TestFuzzVariants)
#include "test_fuzz_variants.moc"
