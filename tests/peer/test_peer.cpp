// The peer suite: tinygrad's own test files (../shared/peer/tinygrad-tests, unchanged) run inside tinyscope on one
// device and compared test by test with the reference's recorded outcomes (tests/peer/run_peer.py does the running
// and the comparing; see its docstring). It fails when a test the reference passes fails here and
// tests/peer/known_failures.txt does not list it for this device, or when a listed test passes.
#include <QDir>
#include <QFileInfo>
#include <QtTest>

#include "test_env.h"

class TestPeer : public QObject {
  Q_OBJECT
 private slots:
  void suite() {
    const QString device = ts_test::env_or("PEER_DEVICE", "CPU");
    const QString src = ts_test::source_dir();
    const QString peer = ts_test::env_or("PEER_DIR", QDir(src + "/../shared/peer").absolutePath());
    QVERIFY2(QFileInfo::exists(peer + "/tinygrad-tests/test/backend/test_ops.py"),
             qPrintable("the peer suite is not at " + peer + " (set PEER_DIR)"));
    QStringList args{src + "/tests/peer/run_peer.py", "--tinyscope", ts_test::tinyscope_bin(), "--peer", peer, "--device", device,
                     "--workers", ts_test::env_or("PEER_WORKERS", "2")};
    QProcessEnvironment env;
    // on Vulkan under the Khronos validation layer: a message it prints fails the suite, named with its test
    if (device.startsWith("VULKAN")) ts_test::vulkan_test_env(env, QDir::tempPath());
    const ts_test::Result r = ts_test::run_process("/usr/bin/python3", args, env, {}, 1700 * 1000);
    std::fputs(qPrintable(r.out), stdout);
    std::fputs(qPrintable(r.err), stderr);
    QVERIFY2(r.code == 0, "the peer suite differs from the reference beyond the known failures (the lines above)");
  }
};

QTEST_GUILESS_MAIN(TestPeer)
#include "test_peer.moc"
