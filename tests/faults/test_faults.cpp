// Faults, each a clear error or a transparent recovery, and nothing lost that was written before (README: Faults):
// - `tinyscope run` stopped by SIGTERM or SIGINT: a message naming the signal, exit 128 + the signal, the trace of what
//   ran written whole; a second signal ends it at once with the trace there before untouched; SIGKILL while writing
//   its trace: the old trace intact, and the stale temporary file removed by the next write;
// - a full disk (a file size limit, RLIMIT_FSIZE, and /dev/full): the trace and the Chrome trace are an error naming
//   the file and the cause, the old file intact and no partial file; the SPIR-V cache is a note, the run correct;
// - corrupt SPIR-V cache entries (cut, garbage, a flipped bit, an older version, empty): compiled again, rewritten
//   (the CPU's object entries: test_kernel_cache);
// - two processes filling one cache directory at once: both right, every entry whole afterwards;
// - a lost Vulkan device (TINYSCOPE_VK_FAULT): a RuntimeError naming the device, the kernel and the loss, later use
//   an error too, no crash or hang;
// - `tinyscope report` whose script is killed: the error names the signal; a report stopped by SIGTERM passes it on to
//   its script.
#include <signal.h>
#include <sys/resource.h>

#include <QtCore/QCryptographicHash>
#include <QtCore/QDir>
#include <QtCore/QDirIterator>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtCore/QThread>
#include <QtTest/QtTest>

#include "files.h"
#include "test_env.h"

namespace {

// a loop of realizes, a line printed after each
const char* kLoop =
    "import time\n"
    "from tinygrad import Tensor\n"
    "a = Tensor([1.0, 2.0, 3.0, 4.0])\n"
    "for i in range(100000):\n"
    "  a = (a * 2 + 1).realize()\n"
    "  print('step', i, flush=True)\n"
    "  time.sleep(0.02)\n";
// a script that swallows KeyboardInterrupt: only a second signal ends it
const char* kStubborn =
    "import time\n"
    "from tinygrad import Tensor\n"
    "x = (Tensor([1.0, 2.0]) + 1).tolist()\n"
    "n = 0\n"
    "while True:\n"
    "  try:\n"
    "    n += 1\n"
    "    if n == 1: print('ready', x, flush=True)\n"
    "    time.sleep(0.05)\n"
    "  except KeyboardInterrupt:\n"
    "    print('caught', flush=True)\n";
// four 4 MB buffers: with --snapshots (every call's output kept) a 45 MB trace, written for about half a second
const char* kSnapshots =
    "from tinygrad import Tensor\n"
    "a = Tensor.ones(1024, 1024).contiguous().realize()\n"
    "for i in range(3):\n"
    "  a = (a * 1.5 + 0.25).realize()\n"
    "print('end', flush=True)\n";
const char* kSmall = "from tinygrad import Tensor\nprint((Tensor([1.0, 2.0, 3.0]) * 2).tolist())\n";
// 24 kernels, each its own SPIR-V (the constants differ)
const char* kMany =
    "from tinygrad import Tensor\n"
    "x = Tensor.arange(64).float().reshape(8, 8)\n"
    "out = []\n"
    "for i in range(24):\n"
    "  out.append(((x + i) * (i + 1)).sum(axis=i % 2).tolist()[i % 8])\n"
    "print(out)\n";
constexpr int kManyKernels = 24;
// a device lost at the second batch (TINYSCOPE_VK_FAULT=device_lost:2): the first result, then two errors
const char* kLost =
    "from tinygrad import Tensor\n"
    "a = Tensor([1.0, 2.0, 3.0, 4.0], device='VULKAN')\n"
    "print('first', (a * 2).tolist(), flush=True)\n"
    "for what in ('caught', 'again'):\n"
    "  try:\n"
    "    print((a + 1).tolist())\n"
    "  except RuntimeError as e:\n"
    "    print(what + ':', e, flush=True)\n"
    "print('after: no crash', flush=True)\n";

struct Run {
  bool finished = false, crashed = false;
  int code = -1;  // the exit code, or the signal when crashed
  QString out, err;
};
QByteArray why(const Run& r) {
  return QStringLiteral("%1 %2\nstdout:\n%3\nstderr:\n%4").arg(r.crashed ? "signal" : "exit").arg(r.code).arg(r.out, r.err).toUtf8();
}

// the child's limits: RLIMIT_FSIZE (writes past it fail with EFBIG; SIGXFSZ ignored, as Python does anyway); no core
// files
struct Limits {
  qint64 fsize = -1;
};

void start(QProcess& p, const QStringList& args, const QProcessEnvironment& extra, const QString& cwd, Limits lim = {}) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("DEBUG", "0");
  for (const QString& k : extra.keys()) env.insert(k, extra.value(k));
  p.setProcessEnvironment(env);
  p.setWorkingDirectory(cwd);
  p.setStandardInputFile(QProcess::nullDevice());
  p.setChildProcessModifier([lim] {
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    if (lim.fsize >= 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      rlimit f{static_cast<rlim_t>(lim.fsize), static_cast<rlim_t>(lim.fsize)};
      ::setrlimit(RLIMIT_FSIZE, &f);
    }
  });
  p.start(ts_test::tinyscope_bin(), args);
}

Run finish(QProcess& p, int timeout_ms = 60000) {
  Run r;
  r.finished = p.waitForFinished(timeout_ms);
  if (!r.finished) {
    p.kill();
    p.waitForFinished();
  }
  r.crashed = p.exitStatus() != QProcess::NormalExit;
  r.code = p.exitCode();
  r.out += QString::fromUtf8(p.readAllStandardOutput());
  r.err += QString::fromUtf8(p.readAllStandardError());
  return r;
}

Run run(const QStringList& args, const QProcessEnvironment& env, const QString& cwd, Limits lim = {}) {
  QProcess p;
  start(p, args, env, cwd, lim);
  return finish(p);
}

// waits until the child printed `text` on stdout (kept in *out)
bool wait_for_output(QProcess& p, const QString& text, QString* out, int timeout_ms = 30000) {
  QElapsedTimer t;
  t.start();
  while (!out->contains(text)) {
    if (t.elapsed() > timeout_ms || p.state() == QProcess::NotRunning) return false;
    p.waitForReadyRead(100);
    *out += QString::fromUtf8(p.readAllStandardOutput());
  }
  return true;
}

using ts_test::read_all;
using ts_test::write_all;

// the names in `dir` holding ".tmp."
QStringList temporaries(const QString& dir) {
  QStringList out;
  QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString f = it.next();
    if (QFileInfo(f).fileName().contains(".tmp.")) out << f;
  }
  return out;
}

// the SPIR-V cache entries of a cache directory, by name: their bytes
QMap<QString, QByteArray> entries(const QString& dir) { return ts_test::entries(dir, "spv"); }

QMap<QString, QDateTime> mtimes(const QString& dir) {
  QMap<QString, QDateTime> out;
  for (const QFileInfo& f : QDir(dir).entryInfoList({"*.spv"}, QDir::Files)) out[f.fileName()] = f.lastModified();
  return out;
}

bool valid_json_object(const QByteArray& data, QJsonObject* out = nullptr) {
  QJsonParseError e;
  const QJsonDocument d = QJsonDocument::fromJson(data, &e);
  if (e.error != QJsonParseError::NoError || !d.isObject()) return false;
  if (out) *out = d.object();
  return true;
}

}  // namespace

class TestFaults : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString many_expected_;

  QString path(const QString& name) const { return dir_.filePath(name); }
  QString script(const QString& name, const char* text) {
    write_all(path(name), text);
    return path(name);
  }
  // a private cache (XDG_CACHE_HOME) for every child: the SPIR-V cache is `cache/tinyscope`
  QProcessEnvironment env(const QString& cache = "cache") const {
    QProcessEnvironment e;
    e.insert("XDG_CACHE_HOME", path(cache));
    e.insert("DEV", "CPU");
    return e;
  }
  QProcessEnvironment vulkan_env(const QString& cache) const {
    QProcessEnvironment e = env(cache);
    e.insert("DEV", "VULKAN");
    ts_test::vulkan_test_env(e, path("xdg-runtime"));
    return e;
  }
  // a good trace of kSmall at `name`, returned
  QByteArray good_trace(const QString& name) {
    const Run r = run({"run", script("small.py", kSmall), "--json", path(name)}, env(), dir_.path());
    if (r.code != 0 || r.crashed) qWarning("%s", why(r).constData());
    return read_all(path(name));
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QDir().mkpath(path("xdg-runtime"));
    const Run r = run({"run", script("many.py", kMany)}, env(), dir_.path());
    QVERIFY2(r.code == 0 && !r.crashed, why(r));
    many_expected_ = r.out.trimmed();
    QVERIFY(many_expected_.startsWith("[224.0, 200.0"));
  }

  // SIGTERM and SIGINT of `tinyscope run`: the script stops at its next line, the message names the signal, the exit
  // status is 128 + the signal, and the trace of everything that ran is written whole in place of the old one
  void stop_signal_names_the_signal_and_writes_the_trace() {
    for (const int sig : {SIGTERM, SIGINT}) {
      const QString t = path(sig == SIGTERM ? "term.json" : "int.json");
      write_all(t, "{\"old\": true}");
      QProcess p;
      start(p, {"run", script("loop.py", kLoop), "--json", t}, env(), dir_.path());
      QString out;
      QVERIFY2(wait_for_output(p, "step 3\n", &out), qPrintable(out + p.readAllStandardError()));
      ::kill(static_cast<pid_t>(p.processId()), sig);
      Run r = finish(p);
      r.out.prepend(out);
      QVERIFY2(r.finished && !r.crashed && r.code == 128 + sig, why(r));
      const QString name = sig == SIGTERM ? "signal 15 (SIGTERM, Terminated)" : "signal 2 (SIGINT, Interrupt)";
      QVERIFY2(r.err.contains("tinyscope: the run was stopped by " + name + "; the trace holds what ran before it"), why(r));
      QVERIFY2(r.err.contains("KeyboardInterrupt"), why(r));  // the traceback says where it stopped
      QJsonObject trace;
      QVERIFY2(valid_json_object(read_all(t), &trace), read_all(t).left(200).constData());
      QVERIFY(trace.value("calls").toArray().size() >= 5);  // the copy and at least four E_4
      QVERIFY2(trace.value("error").toString().contains("stopped by " + name), qPrintable(trace.value("error").toString()));
      QVERIFY2(temporaries(dir_.path()).isEmpty(), qPrintable(temporaries(dir_.path()).join(", ")));
    }
  }

  // a script that swallows the first signal: a second one ends the process at once (killed by that signal), saying
  // so, and the trace file there before is untouched
  void second_signal_ends_at_once() {
    const QByteArray old = good_trace("second.json");
    QVERIFY(valid_json_object(old));
    QProcess p;
    start(p, {"run", script("stubborn.py", kStubborn), "--json", path("second.json")}, env(), dir_.path());
    QString out;
    QVERIFY2(wait_for_output(p, "ready", &out), qPrintable(out));
    ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
    QVERIFY2(wait_for_output(p, "caught", &out), qPrintable(out));
    ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
    const Run r = finish(p, 20000);
    QVERIFY2(r.finished && r.crashed && r.code == SIGTERM, why(r));
    QVERIFY2(r.err.contains("tinyscope: a second stop signal: ending now, without writing the trace"), why(r));
    QCOMPARE(read_all(path("second.json")), old);
    QVERIFY(temporaries(dir_.path()).isEmpty());
  }

  // SIGKILL while the trace is being written (its temporary file past 1 MB of the 45 MB every call's buffers make): the
  // old trace is intact; the killed writer's temporary file is removed by the next write of that trace
  void killed_while_writing_keeps_the_old_trace() {
    const QByteArray old = good_trace("killed.json");
    QVERIFY(valid_json_object(old));
    QProcess p;
    start(p, {"run", script("snap.py", kSnapshots), "--json", path("killed.json"), "--snapshots"}, env(), dir_.path());
    QString out;
    QVERIFY2(wait_for_output(p, "end", &out), qPrintable(out));
    QElapsedTimer t;
    t.start();
    QString tmp;
    while (p.state() != QProcess::NotRunning && t.elapsed() < 30000) {
      const QStringList now = temporaries(dir_.path());
      if (!now.isEmpty() && QFileInfo(now.front()).size() > (1 << 20)) {
        tmp = now.front();
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        break;
      }
      QThread::msleep(1);
    }
    const Run r = finish(p);
    QVERIFY2(!tmp.isEmpty() && r.crashed && r.code == SIGKILL, why(r));
    QCOMPARE(read_all(path("killed.json")), old);
    QCOMPARE(temporaries(dir_.path()), QStringList{tmp});  // what the killed process was writing, beside the trace
    QVERIFY(QFileInfo(tmp).fileName().startsWith("killed.json.tmp."));
    const Run again = run({"run", path("small.py"), "--json", path("killed.json")}, env(), dir_.path());
    QVERIFY2(again.code == 0 && !again.crashed, why(again));
    QVERIFY(valid_json_object(read_all(path("killed.json"))));
    QVERIFY2(temporaries(dir_.path()).isEmpty(), qPrintable(temporaries(dir_.path()).join(", ")));
  }

  // a full disk while writing the trace or the Chrome trace: an error naming the file and the cause, exit 1, the old
  // file intact, no partial file; /dev/full (ENOSPC on every write) is written in place and fails the same way
  void full_disk_trace_is_an_error_and_keeps_the_old_file() {
    const QByteArray old = good_trace("full.json");
    QVERIFY(old.size() > 4096);
    Run r = run({"run", path("small.py"), "--json", path("full.json")}, env(), dir_.path(), {2048});
    QVERIFY2(!r.crashed && r.code == 1, why(r));
    QVERIFY2(r.out.contains("[2.0, 4.0, 6.0]"), why(r));  // the script ran
    QVERIFY2(r.err.contains("tinyscope: cannot write the trace " + path("full.json") + ": File too large"), why(r));
    QCOMPARE(read_all(path("full.json")), old);
    QVERIFY(temporaries(dir_.path()).isEmpty());

    write_all(path("chrome.json"), "{\"traceEvents\": []}");
    r = run({"run", path("small.py"), "--chrome-trace", path("chrome.json")}, env(), dir_.path(), {1024});
    QVERIFY2(!r.crashed && r.code == 1, why(r));
    QVERIFY2(r.err.contains("tinyscope: cannot write the Chrome trace " + path("chrome.json") + ": File too large"), why(r));
    QCOMPARE(read_all(path("chrome.json")), QByteArray("{\"traceEvents\": []}"));
    QVERIFY(temporaries(dir_.path()).isEmpty());

    r = run({"run", path("small.py"), "--json", "/dev/full"}, env(), dir_.path());
    QVERIFY2(!r.crashed && r.code == 1, why(r));
    QVERIFY2(r.err.contains("tinyscope: cannot write the trace /dev/full: No space left on device"), why(r));
  }

  // a full disk while filling the SPIR-V cache: the run is right and says the kernels were not kept; nothing torn is
  // left; the next run fills the cache, and the one after reads every entry without rewriting it
  void full_disk_cache_is_a_note_and_the_run_is_right() {
    const QString cache = path("full-cache/tinyscope");
    Run r = run({"run", path("many.py")}, vulkan_env("full-cache"), dir_.path(), {1024});
    QVERIFY2(!r.crashed && r.code == 0, why(r));
    QCOMPARE(r.out.trimmed(), many_expected_);
    QVERIFY2(r.err.contains(QStringLiteral("tinyscope: %1 compiled kernel(s) could not be kept in the cache, and will be "
                                           "compiled again next time: cannot write the SPIR-V cache entry ")
                                .arg(kManyKernels)),
             why(r));
    QVERIFY2(r.err.contains(": File too large"), why(r));
    QVERIFY(entries(cache).isEmpty());
    QVERIFY(temporaries(path("full-cache")).isEmpty());

    r = run({"run", path("many.py")}, vulkan_env("full-cache"), dir_.path());
    QVERIFY2(!r.crashed && r.code == 0 && !r.err.contains("could not be kept"), why(r));
    QCOMPARE(entries(cache).size(), kManyKernels);
    const auto before = mtimes(cache);
    r = run({"run", path("many.py")}, vulkan_env("full-cache"), dir_.path());
    QVERIFY2(!r.crashed && r.code == 0, why(r));
    QCOMPARE(r.out.trimmed(), many_expected_);
    QCOMPARE(mtimes(cache), before);  // every entry read, none written again
  }

  // damaged entries are compiled again and rewritten, never trusted: cut, garbage, one flipped bit inside the
  // SPIR-V words (same size), the previous format version, an empty file
  void corrupt_cache_entries_are_compiled_again() {
    const QString cache = path("corrupt-cache/tinyscope");
    Run r = run({"run", path("many.py")}, vulkan_env("corrupt-cache"), dir_.path());
    QVERIFY2(!r.crashed && r.code == 0, why(r));
    const auto good = entries(cache);
    QCOMPARE(good.size(), kManyKernels);
    QStringList names = good.keys();
    QVERIFY(good.first().startsWith("TSSPV03\n"));
    auto damage = [&](int i, QByteArray bytes) { write_all(cache + "/" + names[i], bytes); };
    damage(0, good[names[0]].left(good[names[0]].size() / 2));
    damage(1, QByteArray(good[names[1]].size(), 'x'));
    QByteArray flipped = good[names[2]];
    flipped[flipped.size() - 64] = static_cast<char>(flipped[flipped.size() - 64] ^ 0x10);
    damage(2, flipped);
    QByteArray v2 = good[names[3]];
    v2.replace(0, 8, "TSSPV02\n");
    v2.chop(24);  // version 2's checksum was 8 bytes, not 32
    damage(3, v2);
    damage(4, QByteArray());
    QByteArray trailing = good[names[5]] + QByteArray("extra");
    damage(5, trailing);
    r = run({"run", path("many.py")}, vulkan_env("corrupt-cache"), dir_.path());
    QVERIFY2(!r.crashed && r.code == 0, why(r));
    QCOMPARE(r.out.trimmed(), many_expected_);
    QCOMPARE(entries(cache), good);  // each damaged entry compiled again and rewritten as it was
  }

  // two processes filling one cache directory at once: both right, the entries whole afterwards (a third run reads
  // every one without rewriting it)
  void two_processes_share_one_cache() {
    const QString cache = path("shared-cache/tinyscope");
    QProcess a, b;
    start(a, {"run", path("many.py")}, vulkan_env("shared-cache"), dir_.path());
    start(b, {"run", path("many.py")}, vulkan_env("shared-cache"), dir_.path());
    const Run ra = finish(a), rb = finish(b);
    QVERIFY2(!ra.crashed && ra.code == 0, why(ra));
    QVERIFY2(!rb.crashed && rb.code == 0, why(rb));
    QCOMPARE(ra.out.trimmed(), many_expected_);
    QCOMPARE(rb.out.trimmed(), many_expected_);
    QCOMPARE(entries(cache).size(), kManyKernels);
    QVERIFY(temporaries(path("shared-cache")).isEmpty());
    for (const QByteArray& e : entries(cache)) QVERIFY(e.startsWith("TSSPV03\n"));
    const auto before = mtimes(cache);
    const Run rc = run({"run", path("many.py")}, vulkan_env("shared-cache"), dir_.path());
    QVERIFY2(!rc.crashed && rc.code == 0, why(rc));
    QCOMPARE(rc.out.trimmed(), many_expected_);
    QCOMPARE(mtimes(cache), before);
  }

  // a lost device: the script gets a RuntimeError naming the device, the loss and the kernels; later use raises too;
  // no crash, no hang, the validation layer quiet; uncaught, the traceback says it and the exit status is 1
  void device_lost_is_a_clear_error() {
    QProcessEnvironment e = vulkan_env("lost-cache");
    e.insert("TINYSCOPE_VK_FAULT", "device_lost:2");
    Run r = run({"run", script("lost.py", kLost), "--json", path("lost.json")}, e, dir_.path());
    QVERIFY2(r.finished && !r.crashed && r.code == 0, why(r));
    QVERIFY2(r.out.contains("first [2.0, 4.0, 6.0, 8.0]"), why(r));
    QVERIFY2(r.out.contains(QRegularExpression("caught: Vulkan device 0 \\([^\\n]+\\): device lost \\(VK_ERROR_DEVICE_LOST\\) "
                                               "while running the batch of 1 operation \\(E_4\\); nothing more runs on it")),
             why(r));
    QVERIFY2(r.out.contains(QRegularExpression("again: Vulkan device 0 \\([^\\n]+\\): device lost earlier in this process")), why(r));
    QVERIFY2(r.out.contains("after: no crash"), why(r));
    QVERIFY(valid_json_object(read_all(path("lost.json"))));

    e.insert("TINYSCOPE_VK_FAULT", "device_lost");
    r = run({"run", script("lost1.py", "from tinygrad import Tensor\nprint((Tensor([1.0], device='VULKAN') + 1).tolist())\n")}, e, dir_.path());
    QVERIFY2(r.finished && !r.crashed && r.code == 1, why(r));
    QVERIFY2(r.err.contains("Traceback") && r.err.contains("device lost (VK_ERROR_DEVICE_LOST) while running"), why(r));

    e.insert("TINYSCOPE_VK_FAULT", "device_lost:0");
    r = run({"run", path("lost1.py")}, e, dir_.path());
    QVERIFY2(r.code == 2 && r.err.contains("TINYSCOPE_VK_FAULT must be device_lost or device_lost:N (N from 1), not 'device_lost:0'"), why(r));
  }

  // `tinyscope report` stopped by SIGTERM while its script runs: the signal is passed on (the script stops at its next
  // line and ends, not left running), the error names the signal, exit status 143, no page written
  void report_passes_a_stop_signal_on_to_its_script() {
    script("loop_pid.py", QByteArray("import os\nopen('script.pid', 'w').write(str(os.getpid()))\n") + kLoop);
    QProcess p;
    start(p, {"report", path("loop_pid.py"), "-o", path("stopped.html")}, env(), dir_.path());
    QString out;
    if (!wait_for_output(p, "step 3\n", &out)) {
      const Run r = finish(p);
      if (r.err.contains("has no report")) QSKIP("a headless build has no report");
      QFAIL(qPrintable(out + r.err));
    }
    const pid_t script_pid = static_cast<pid_t>(read_all(path("script.pid")).toLongLong());
    QVERIFY(script_pid > 0);
    ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
    const Run r = finish(p, 20000);
    QVERIFY2(r.finished && !r.crashed && r.code == 128 + SIGTERM, why(r));
    QVERIFY2(r.err.contains("tinyscope report was stopped by signal 15 (SIGTERM, Terminated) while"), why(r));
    QVERIFY2(r.err.contains("KeyboardInterrupt"), why(r));  // the script's own traceback: it got the signal
    QVERIFY(!QFile::exists(path("stopped.html")));
    QTRY_VERIFY_WITH_TIMEOUT(::kill(script_pid, 0) != 0, 10000);  // the script's process is gone
  }

  // `tinyscope report` whose script is killed: an error naming the signal, no page written
  void report_names_the_signal_that_killed_its_script() {
    script("killed.py", "import os\nfrom tinygrad import Tensor\nprint((Tensor([1.0]) + 1).tolist(), flush=True)\nos.kill(os.getpid(), 9)\n");
    const Run r = run({"report", path("killed.py"), "-o", path("report.html")}, env(), dir_.path());
    if (r.err.contains("has no report")) QSKIP("a headless build has no report");
    QVERIFY2(!r.crashed && r.code != 0, why(r));
    QVERIFY2(r.err.contains("killed.py was killed by signal 9 (SIGKILL, Killed) on CPU"), why(r));
    QVERIFY(!QFile::exists(path("report.html")));
  }
};

QTEST_GUILESS_MAIN(TestFaults)
#include "test_faults.moc"
