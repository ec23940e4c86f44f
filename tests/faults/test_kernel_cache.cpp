// The disk cache of compiled kernels across processes (README: Caches), each case `tinyscope run` in child processes
// with a private XDG_CACHE_HOME:
// - a second process links every CPU (and CPU:LLVM) kernel from the cache: each entry read (its access time set) and
//   none written again, the results bit for bit those of the first process and of a run without the cache;
// - damaged object entries (cut, garbage, a flipped bit, empty, another format version) are compiled again and
//   rewritten as they were;
// - CACHELEVEL=0 writes nothing of tinyscope's (no objects, no SPIR-V, no pipeline cache, no folder);
// - past TINYSCOPE_CACHE_MB the least recently used entries are removed (the CPU's objects and the SPIR-V alike);
// - two processes compiling the same kernels into one folder at once: both right, every entry whole;
// - a cache folder that cannot be written, or a full disk: the run right, one note on stderr.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <QtCore/QDir>
#include <QtCore/QDirIterator>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
#include <csignal>

#include "files.h"
#include "test_env.h"

namespace {

// one Adam step of a two-layer MLP (about 40 kernels): the loss and every parameter afterwards, each float's bits
const char* kTrain =
    "from tinygrad import Tensor, nn\n"
    "from tinygrad.helpers import Context\n"
    "Tensor.manual_seed(0)\n"
    "class M:\n"
    "  def __init__(self): self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 4)\n"
    "  def __call__(self, x): return self.l2(self.l1(x).gelu()).log_softmax()\n"
    "m = M()\n"
    "opt = nn.optim.Adam(nn.state.get_parameters(m), lr=1e-2)\n"
    "x = Tensor.arange(32).reshape(4, 8).float() / 10\n"
    "with Context(TRAINING=1):\n"
    "  opt.zero_grad()\n"
    "  loss = -m(x)[:, 0].mean()\n"
    "  loss.backward()\n"
    "  opt.step()\n"
    "print(' '.join(v.hex() for t in [loss] + nn.state.get_parameters(m) for v in t.flatten().tolist()))\n";
// two kernels no other script here makes
const char* kOther = "from tinygrad import Tensor\nprint((Tensor.arange(64).float() * 3.25 + 0.5).sum().item(), "
                     "(Tensor.arange(48).float().reshape(6, 8) * 1.75).max(axis=1).tolist())\n";
const char* kOtherExpected = "6584.0 [12.25, 26.25, 40.25, 54.25, 68.25, 82.25]";
// on DEV=VULKAN: 24 kernels, each its own SPIR-V, and a CPU kernel
const char* kVulkan =
    "from tinygrad import Tensor\n"
    "x = Tensor.arange(64).float().reshape(8, 8)\n"
    "out = [((x + i) * (i + 1)).sum(axis=i % 2).tolist()[i % 8] for i in range(24)]\n"
    "print(out, (Tensor([1.0, 2.0], device='CPU') * 3).tolist())\n";

struct Run {
  int code = -1;  // the exit code; -1: crashed or did not finish
  QString out, err;
};
QByteArray why(const Run& r) { return QStringLiteral("exit %1\nstdout:\n%2\nstderr:\n%3").arg(r.code).arg(r.out, r.err).toUtf8(); }

void start(QProcess& p, const QString& script, const QProcessEnvironment& extra, qint64 fsize = -1) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEBUG", "0");
  env.remove("CACHELEVEL");
  env.remove("TINYSCOPE_CACHE_MB");
  for (const QString& k : extra.keys()) env.insert(k, extra.value(k));
  p.setProcessEnvironment(env);
  p.setStandardInputFile(QProcess::nullDevice());
  p.setChildProcessModifier([fsize] {
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    if (fsize >= 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      rlimit f{static_cast<rlim_t>(fsize), static_cast<rlim_t>(fsize)};
      ::setrlimit(RLIMIT_FSIZE, &f);
    }
  });
  p.start(ts_test::tinyscope_bin(), {"run", script});
}
Run finish(QProcess& p) {
  Run r;
  if (!p.waitForFinished(120000)) {
    p.kill();
    p.waitForFinished();
  }
  r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
  r.out = QString::fromUtf8(p.readAllStandardOutput()).trimmed();
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}
Run run(const QString& script, const QProcessEnvironment& env, qint64 fsize = -1) {
  QProcess p;
  start(p, script, env, fsize);
  return finish(p);
}

using ts_test::read_all;
using ts_test::write_all;

// the entries of a cache folder (the files named *.EXT), by name: their bytes
QMap<QString, QByteArray> entries(const QString& dir, const QString& ext = "o") { return ts_test::entries(dir, ext); }
qint64 total_bytes(const QString& dir, const QString& ext) {
  qint64 n = 0;
  for (const QFileInfo& f : QDir(dir).entryInfoList({"*." + ext}, QDir::Files)) n += f.size();
  return n;
}
struct Times {
  timespec used, written;
};
QMap<QString, Times> times(const QString& dir, const QString& ext = "o") {
  QMap<QString, Times> out;
  for (const QFileInfo& f : QDir(dir).entryInfoList({"*." + ext}, QDir::Files)) {
    struct stat st;
    if (::stat(f.filePath().toLocal8Bit().constData(), &st) == 0) out[f.fileName()] = {st.st_atim, st.st_mtim};
  }
  return out;
}
bool same(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }
// sets an entry's access time (its last use) to `seconds` after the epoch, keeping its write time
bool set_used(const QString& path, time_t seconds) {
  struct stat st;
  const QByteArray p = path.toLocal8Bit();
  if (::stat(p.constData(), &st) != 0) return false;
  const timespec t[2] = {{seconds, 0}, st.st_mtim};
  return ::utimensat(AT_FDCWD, p.constData(), t, 0) == 0;
}
QStringList all_files(const QString& dir) {
  QStringList out;
  QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
  while (it.hasNext()) out << it.next();
  return out;
}

}  // namespace

class TestKernelCache : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString train_, other_, vulkan_;
  QMap<QString, QString> expected_;  // the training step's output on each device, without any cache

  QString path(const QString& name) const { return dir_.filePath(name); }
  // a private cache: XDG_CACHE_HOME=`home`, the objects in home/tinyscope/cpu
  QProcessEnvironment env(const QString& home, const QString& dev = "CPU") const {
    QProcessEnvironment e;
    e.insert("XDG_CACHE_HOME", path(home));
    e.insert("DEV", dev);
    return e;
  }
  QString objects(const QString& home) const { return path(home + "/tinyscope/cpu"); }
  QString script(const QString& name, const char* text) {
    const QString p = path(name);
    write_all(p, text);
    return p;
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    train_ = script("train.py", kTrain);
    other_ = script("other.py", kOther);
    vulkan_ = script("vulkan.py", kVulkan);
    for (const QString dev : {"CPU", "CPU:LLVM"}) {
      QProcessEnvironment e = env("no-cache", dev);
      e.insert("CACHELEVEL", "0");
      const Run r = run(train_, e);
      QVERIFY2(r.code == 0 && r.out.count(' ') > 100, why(r));
      expected_[dev] = r.out;
    }
  }
  QProcessEnvironment vulkan_env(const QString& home) const {
    QProcessEnvironment e = env(home, "VULKAN");
    ts_test::vulkan_test_env(e, path("runtime"));
    return e;
  }

  // a second process links every kernel from the entries the first wrote: each read (its access time moves) and none
  // written again; the results are bit for bit those of the first process and of the run without a cache
  void second_process_links_every_kernel_from_the_cache_data() {
    QTest::addColumn<QString>("dev");
    QTest::newRow("CPU") << "CPU";
    QTest::newRow("CPU:LLVM") << "CPU:LLVM";
  }
  void second_process_links_every_kernel_from_the_cache() {
    QFETCH(QString, dev);
    const QString home = "second-" + QString(dev).replace(':', '_');
    Run r = run(train_, env(home, dev));
    QVERIFY2(r.code == 0, why(r));
    QCOMPARE(r.out, expected_[dev]);
    const auto first = entries(objects(home));
    QVERIFY2(first.size() >= 20, QByteArray::number(first.size()));
    for (const QByteArray& e : first) QVERIFY(e.startsWith("TSOBJ01\n") && e.contains("\x7f" "ELF"));
    QVERIFY(first.first().contains(dev == "CPU" ? "language c\n" : "language llvm\n"));
    for (const QString& name : first.keys()) QVERIFY(set_used(objects(home) + "/" + name, 1000));
    const auto before = times(objects(home));

    r = run(train_, env(home, dev));
    QVERIFY2(r.code == 0 && r.err.isEmpty(), why(r));
    QCOMPARE(r.out, expected_[dev]);
    QCOMPARE(entries(objects(home)), first);
    const auto after = times(objects(home));
    for (const QString& name : first.keys()) {
      QVERIFY2(same(after[name].written, before[name].written), qPrintable(name + " was written again"));
      QVERIFY2(after[name].used.tv_sec > 1000, qPrintable(name + " was not read"));
    }
  }

  // damaged entries are compiled again and rewritten as they were, never trusted: cut, garbage, one flipped bit in the
  // object code (same size), empty, another format version, bytes after the end
  void damaged_entries_are_compiled_again() {
    Run r = run(train_, env("damaged"));
    QVERIFY2(r.code == 0, why(r));
    const auto good = entries(objects("damaged"));
    QVERIFY(good.size() >= 6);
    const QStringList names = good.keys();
    auto damage = [&](int i, const QByteArray& bytes) { write_all(objects("damaged") + "/" + names[i], bytes); };
    damage(0, good[names[0]].left(good[names[0]].size() / 2));
    damage(1, QByteArray(good[names[1]].size(), 'x'));
    QByteArray flipped = good[names[2]];
    const qsizetype in_code = flipped.indexOf("\x7f" "ELF") + 200;
    QVERIFY(in_code < flipped.size() - 32);
    flipped[in_code] = static_cast<char>(flipped[in_code] ^ 0x08);
    damage(2, flipped);
    damage(3, QByteArray());
    QByteArray older = good[names[4]];
    older.replace(0, 8, "TSOBJ00\n");
    damage(4, older);
    damage(5, good[names[5]] + "extra");
    for (int i = 0; i < 6; ++i) QVERIFY(read_all(objects("damaged") + "/" + names[i]) != good[names[i]]);
    r = run(train_, env("damaged"));
    QVERIFY2(r.code == 0 && r.err.isEmpty(), why(r));
    QCOMPARE(r.out, expected_["CPU"]);
    QCOMPARE(entries(objects("damaged")), good);
  }

  // CACHELEVEL=0 keeps nothing of tinyscope's on disk: no object, no SPIR-V, no pipeline cache, not even the folder (and
  // the same runs without it do write there)
  void cachelevel_zero_writes_nothing() {
    for (QProcessEnvironment e : {env("level-zero"), vulkan_env("level-zero")}) {
      e.insert("CACHELEVEL", "0");
      const Run r = run(e.value("DEV") == "VULKAN" ? vulkan_ : train_, e);
      QVERIFY2(r.code == 0, why(r));
    }
    // (the Vulkan driver's own shader cache, Mesa's mesa_shader_cache beside it, is the driver's)
    QVERIFY2(!QFileInfo::exists(path("level-zero/tinyscope")), qPrintable(all_files(path("level-zero/tinyscope")).join('\n')));
    const Run r = run(vulkan_, vulkan_env("level-zero"));
    QVERIFY2(r.code == 0, why(r));
    QVERIFY(!entries(objects("level-zero")).isEmpty());
    QCOMPARE(entries(path("level-zero/tinyscope"), "spv").size(), 24);
  }

  // past TINYSCOPE_CACHE_MB the entries used longest ago are removed: a full cache of the training step's objects with
  // known last uses, then a script with two new kernels under a bound of the cache's size
  void bound_removes_the_least_recently_used() {
    Run r = run(train_, env("bounded"));
    QVERIFY2(r.code == 0, why(r));
    const QString dir = objects("bounded");
    const QStringList names = entries(dir).keys();
    for (int i = 0; i < names.size(); ++i) QVERIFY(set_used(dir + "/" + names[i], 1000 + i));  // names[0] used first
    const qint64 full = total_bytes(dir, "o");
    QProcessEnvironment e = env("bounded");
    e.insert("TINYSCOPE_CACHE_MB", QString::number(full / 1048576.0, 'f', 9));
    r = run(other_, e);
    QVERIFY2(r.code == 0 && r.err.isEmpty(), why(r));
    QCOMPARE(r.out, QString(kOtherExpected));
    const auto left = entries(dir);
    QVERIFY(total_bytes(dir, "o") <= full);
    int new_entries = 0, kept = 0;
    for (const QString& n : left.keys()) (names.contains(n) ? kept : new_entries)++;
    QCOMPARE(new_entries, 2);
    QVERIFY2(kept < names.size() - 2, qPrintable(QString("%1 of %2 kept").arg(kept).arg(names.size())));
    // the removed ones are exactly the least recently used: a prefix of names
    for (int i = 0; i < names.size(); ++i) QCOMPARE(left.contains(names[i]), i >= names.size() - kept);
    // an invalid bound is a note, and the default
    e.insert("TINYSCOPE_CACHE_MB", "lots");
    r = run(other_, e);
    QVERIFY2(r.code == 0 && r.err.contains("TINYSCOPE_CACHE_MB must be a number of MiB above 0, not 'lots'"), why(r));
  }

  // the SPIR-V cache keeps the same bound
  void spirv_cache_keeps_the_bound() {
    QProcessEnvironment e = vulkan_env("spirv-bound");
    e.insert("TINYSCOPE_CACHE_MB", "0.01");  // 10 KiB: a few of the 24 shaders
    const Run r = run(vulkan_, e);
    QVERIFY2(r.code == 0 && !r.err.contains("could not be kept"), why(r));
    const QString dir = path("spirv-bound/tinyscope");
    const int n = entries(dir, "spv").size();
    QVERIFY2(n > 0 && n < 24, QByteArray::number(n));
    QVERIFY(total_bytes(dir, "spv") <= 10486);
  }

  // two processes compiling the same kernels into one folder at once: both right, every entry whole, and a third
  // process reads every one without writing any again
  void two_processes_compile_at_once() {
    QProcess a, b;
    start(a, train_, env("shared"));
    start(b, train_, env("shared"));
    const Run ra = finish(a), rb = finish(b);
    QVERIFY2(ra.code == 0, why(ra));
    QVERIFY2(rb.code == 0, why(rb));
    QCOMPARE(ra.out, expected_["CPU"]);
    QCOMPARE(rb.out, expected_["CPU"]);
    const auto written = entries(objects("shared"));
    QVERIFY(written.size() >= 20);
    for (const QString& f : all_files(path("shared"))) QVERIFY2(!f.contains(".tmp."), qPrintable(f));
    for (const QByteArray& e : written) QVERIFY(e.startsWith("TSOBJ01\n"));
    const auto before = times(objects("shared"));
    const Run rc = run(train_, env("shared"));
    QVERIFY2(rc.code == 0, why(rc));
    QCOMPARE(rc.out, expected_["CPU"]);
    const auto after = times(objects("shared"));
    QCOMPARE(after.keys(), before.keys());
    for (const QString& n : before.keys()) QVERIFY2(same(after[n].written, before[n].written), qPrintable(n));
  }

  // a cache folder that cannot be made, or a full disk: the run is right and says once that the kernels were not kept
  void unwritable_cache_is_a_note() {
    write_all(path("a-file"), "x");
    QProcessEnvironment e;
    e.insert("XDG_CACHE_HOME", path("a-file"));
    Run r = run(train_, e);
    QVERIFY2(r.code == 0, why(r));
    QCOMPARE(r.out, expected_["CPU"]);
    QCOMPARE(r.err.count("could not be kept in the cache"), 1);
    QVERIFY2(r.err.contains("compiled kernel(s) could not be kept in the cache, and will be compiled again next time: "
                            "cannot create the cache directory " + path("a-file") + "/tinyscope/cpu: Not a directory"),
             why(r));
    r = run(train_, env("full"), 4096);  // each object entry is more than 4 KiB
    QVERIFY2(r.code == 0, why(r));
    QCOMPARE(r.out, expected_["CPU"]);
    QCOMPARE(r.err.count("could not be kept in the cache"), 1);
    QVERIFY2(r.err.contains("cannot write the CPU kernel cache entry ") && r.err.contains(": File too large"), why(r));
    for (const QString& f : all_files(path("full"))) QVERIFY2(!f.contains(".tmp."), qPrintable(f));
  }
};

QTEST_GUILESS_MAIN(TestKernelCache)
#include "test_kernel_cache.moc"
