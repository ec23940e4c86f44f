// The limits cache (app/cli/limits_cache.cpp, compiled into this test): its round trip and its keys (device and
// machine), a missing or corrupt entry giving none; `tinyscope bench --limits` filling it on the CPU and on lavapipe;
// and `tinyscope run --json` copying exactly its device's entry into the trace as "limits", and nothing without one.
#include <QtCore/QDateTime>
#include <QtCore/QElapsedTimer>
#include <QtCore/QFile>
#include <QtCore/QJsonArray>
#include <QtCore/QJsonDocument>
#include <QtCore/QJsonObject>
#include <QtCore/QProcess>
#include <QtCore/QTemporaryDir>
#include <QtCore/QThread>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "app/cli/limits_cache.h"
#include "test_env.h"

namespace {

using ts_test::source_dir;
using ts_test::tinyscope_bin;

using ts_test::Result;
using ts_test::why;

// tinyscope with the limits cache under `cache_home` (XDG_CACHE_HOME) and `extra` in its environment
Result run(const QStringList& args, const QString& cache_home, const QProcessEnvironment& extra = {}, int timeout_ms = 150000) {
  QProcessEnvironment env = extra;
  env.insert("XDG_CACHE_HOME", cache_home);
  return ts_test::run_process(tinyscope_bin(), args, env, {}, timeout_ms);
}

tscli::MeasuredLimits sample(const std::string& device, const std::string& machine, double bw, double peak) {
  tscli::MeasuredLimits l;
  l.device = device;
  l.machine = machine;
  l.measured_at = "2025-02-03T04:05:06Z";
  l.bandwidth_gbs = bw;
  l.bandwidth_label = "add bandwidth GB/s (a test's)";
  l.peak_gflops = peak;
  l.peak_label = "FMA peak GFLOP/s fp32 (a test's)";
  l.figures = {{"read bandwidth", bw * 1.25, "GB/s", "read bandwidth GB/s (a test's)"}};
  return l;
}

QJsonObject read_json(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

// the model name of /proc/cpuinfo, read here on its own
QString proc_cpu_model() {
  QFile f("/proc/cpuinfo");
  if (!f.open(QIODevice::ReadOnly)) return {};
  for (const QByteArray& line : f.readAll().split('\n'))
    if (line.startsWith("model name")) return QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
  return {};
}

// the trace's "limits" as it must read: exactly the cache entry's figures and labels
QJsonObject expected_trace_limits(const tscli::MeasuredLimits& l) {
  return {{"device", QString::fromStdString(l.device)},
          {"machine", QString::fromStdString(l.machine)},
          {"measured_at", QString::fromStdString(l.measured_at)},
          {"bandwidth_gbs", l.bandwidth_gbs},
          {"bandwidth_label", QString::fromStdString(l.bandwidth_label)},
          {"peak_gflops", l.peak_gflops},
          {"peak_label", QString::fromStdString(l.peak_label)}};
}

}  // namespace

class TestLimits : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  // `tinyscope run SCRIPT --json` with the cache under `cache_home`: the trace's root object (empty on failure)
  QJsonObject trace_of(const QString& script, const QString& cache_home, const QString& dev, const QString& name) {
    const QString out = dir_.filePath(name + ".json");
    QProcessEnvironment env;
    env.insert("DEV", dev);
    if (dev.startsWith("VULKAN")) ts_test::vulkan_test_env(env, dir_.path());
    const Result r = run({"run", source_dir() + "/resources/examples/" + script, "--json", out}, cache_home, env);
    if (r.code != 0) qWarning("%s", why(r).constData());
    return r.code == 0 ? read_json(out) : QJsonObject{};
  }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void cache_round_trip_keyed_by_device_and_machine() {
    const std::string path = dir_.filePath("rt/tinyscope/limits.json").toStdString();  // its directories are made
    QVERIFY(!tscli::read_limits(path, "CPU", "m1"));  // no file: none
    const tscli::MeasuredLimits a = sample("CPU", "m1", 12.5, 98.25), b = sample("CPU", "m2", 30, 400),
                                c = sample("VULKAN", "m1", 900, 20000);
    tscli::write_limits(path, a);
    tscli::write_limits(path, b);
    tscli::write_limits(path, c);
    QVERIFY(tscli::read_limits(path, "CPU", "m1") == a);
    QVERIFY(tscli::read_limits(path, "CPU", "m2") == b);
    QVERIFY(tscli::read_limits(path, "VULKAN", "m1") == c);
    QVERIFY(!tscli::read_limits(path, "VULKAN", "m2"));  // another machine's entry is no entry
    QVERIFY(!tscli::read_limits(path, "CPU", "m3"));
    QVERIFY(!tscli::read_limits(path, "INTERP", "m1"));
    QVERIFY(!tscli::read_limits(path, "", "m1"));
    // measuring again replaces that entry alone
    const tscli::MeasuredLimits a2 = sample("CPU", "m1", 13.75, 101);
    tscli::write_limits(path, a2);
    QVERIFY(tscli::read_limits(path, "CPU", "m1") == a2);
    QVERIFY(tscli::read_limits(path, "CPU", "m2") == b);
    const QJsonObject doc = read_json(QString::fromStdString(path));
    QCOMPARE(doc["version"].toInt(), 1);
    QCOMPARE(doc["entries"].toArray().size(), 3);
    // every figure says what it is
    for (const auto& e : doc["entries"].toArray()) {
      const QJsonObject o = e.toObject();
      for (const char* k : {"device", "machine", "measured_at", "bandwidth_label", "peak_label"}) QVERIFY(!o[k].toString().isEmpty());
      for (const auto& f : o["figures"].toArray()) QVERIFY(!f.toObject()["label"].toString().isEmpty());
    }
  }

  void corrupt_files_and_bad_entries_give_none() {
    const QString path = dir_.filePath("corrupt.json");
    auto put = [&](const QByteArray& bytes) {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(bytes);
    };
    const std::string p = path.toStdString();
    put("{ not json");
    QVERIFY(!tscli::read_limits(p, "CPU", "m"));
    tscli::write_limits(p, sample("CPU", "m", 1, 2));  // a corrupt cache is replaced
    QVERIFY(tscli::read_limits(p, "CPU", "m"));
    const char* entry = R"({"device":"CPU","machine":"m","measured_at":"d","bandwidth_gbs":%1,"bandwidth_label":"b","peak_gflops":%2,"peak_label":"p"})";
    for (auto [bw, peak] : {std::pair{"0", "5"}, {"5", "-1"}, {"\"5\"", "5"}, {"5", "null"}, {"1e999", "5"}}) {
      put(QStringLiteral(R"({"version":1,"entries":[%1]})").arg(QString::fromLatin1(entry).arg(bw, peak)).toUtf8());
      QVERIFY2(!tscli::read_limits(p, "CPU", "m"), qPrintable(QStringLiteral("%1 %2").arg(bw, peak)));
    }
    put(QStringLiteral(R"({"version":1,"entries":[%1]})").arg(QString::fromLatin1(entry).arg("5", "7")).toUtf8());
    QCOMPARE(tscli::read_limits(p, "CPU", "m")->peak_gflops, 7.0);
    put(QStringLiteral(R"({"version":2,"entries":[%1]})").arg(QString::fromLatin1(entry).arg("5", "7")).toUtf8());
    QVERIFY(!tscli::read_limits(p, "CPU", "m"));  // a version this build does not write
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, tscli::write_limits("/proc/no/such/dir/limits.json", sample("CPU", "m", 1, 2)));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, tscli::write_limits("", sample("CPU", "m", 1, 2)));
  }

  void cache_path_keys_and_machine() {
    const QByteArray xdg = qgetenv("XDG_CACHE_HOME"), home = qgetenv("HOME");
    qputenv("XDG_CACHE_HOME", "/x/cache");
    qputenv("HOME", "/h");
    QCOMPARE(tscli::limits_cache_path(), std::string("/x/cache/tinyscope/limits.json"));
    qunsetenv("XDG_CACHE_HOME");
    QCOMPARE(tscli::limits_cache_path(), std::string("/h/.cache/tinyscope/limits.json"));
    qunsetenv("HOME");
    QCOMPARE(tscli::limits_cache_path(), std::string());
    if (xdg.isNull()) qunsetenv("XDG_CACHE_HOME");
    else qputenv("XDG_CACHE_HOME", xdg);
    if (home.isNull()) qunsetenv("HOME");
    else qputenv("HOME", home);

    QCOMPARE(tscli::limits_device_key("CPU"), std::string("CPU"));
    QCOMPARE(tscli::limits_device_key("CPU:LLVM"), std::string("CPU"));
    QCOMPARE(tscli::limits_device_key("VULKAN"), std::string("VULKAN"));
    QCOMPARE(tscli::limits_device_key("VULKAN:1"), std::string("VULKAN"));
    QCOMPARE(tscli::limits_device_key("INTERP"), std::string());
    QCOMPARE(tscli::limits_device_key("INTERP:GPU"), std::string());
    // this machine: /proc/cpuinfo's model and the logical CPUs
    const QString machine = QString::fromStdString(tscli::cpu_machine());
    if (!proc_cpu_model().isEmpty()) QVERIFY2(machine.startsWith(proc_cpu_model() + ", "), qPrintable(machine));
    QVERIFY2(machine.endsWith(QStringLiteral(", %1 logical CPU%2").arg(QThread::idealThreadCount()).arg(QThread::idealThreadCount() == 1 ? "" : "s")),
             qPrintable(machine));
    QCOMPARE(tscli::vulkan_machine("GPU X", "drv", "Mesa 1.2", "3.4"), std::string("GPU X (drv Mesa 1.2, driver 3.4)"));
    const QString now = QString::fromStdString(tscli::utc_now());
    QVERIFY2(QDateTime::fromString(now, Qt::ISODate).isValid() && now.endsWith('Z'), qPrintable(now));
  }

  // run --json: the run's device's entry, exactly, as the trace's "limits"; nothing without one
  void run_json_carries_exactly_the_cached_limits() {
    const QString home = dir_.filePath("run-cache");
    const std::string path = home.toStdString() + "/tinyscope/limits.json";
    const tscli::MeasuredLimits mine = sample("CPU", tscli::cpu_machine(), 17.123456789012345, 123.456789);
    tscli::write_limits(path, sample("CPU", "another machine", 1, 2));
    tscli::write_limits(path, mine);
    tscli::write_limits(path, sample("VULKAN", tscli::cpu_machine(), 3, 4));
    QJsonObject t = trace_of("tutorial.py", home, "CPU", "cpu");
    QVERIFY(t.contains("calls"));
    QCOMPARE(t["limits"].toObject(), expected_trace_limits(mine));
    QCOMPARE(t["limits"].toObject().keys().size(), 7);
    // CPU:LLVM runs on the same cores: the CPU entry
    t = trace_of("tutorial.py", home, "CPU:LLVM", "llvm");
    QCOMPARE(t["limits"].toObject(), expected_trace_limits(mine));
    // the interpreter has none, even with a CPU entry there
    t = trace_of("tutorial.py", home, "INTERP", "interp");
    QVERIFY(t.contains("calls"));
    QVERIFY(!t.contains("limits"));
    // no cache at all, or only another machine's entry: no limits
    t = trace_of("tutorial.py", dir_.filePath("empty-cache"), "CPU", "none");
    QVERIFY(t.contains("calls"));
    QVERIFY(!t.contains("limits"));
    const QString other = dir_.filePath("other-cache");
    tscli::write_limits(other.toStdString() + "/tinyscope/limits.json", sample("CPU", "another machine", 1, 2));
    t = trace_of("tutorial.py", other, "CPU", "other");
    QVERIFY(t.contains("calls"));
    QVERIFY(!t.contains("limits"));
  }

  // bench --limits on the CPU: a few seconds, the cache's entry for this machine, then a run's trace carries it
  void bench_limits_fills_the_cache_on_the_cpu() {
    const QString home = dir_.filePath("bench-cpu");
    QElapsedTimer clock;
    clock.start();
    const Result r = run({"bench", "--limits"}, home);
    QVERIFY2(r.code == 0, why(r).constData());
    qInfo("bench --limits on the CPU: %.1f s", clock.elapsed() / 1000.0);
    const std::string path = home.toStdString() + "/tinyscope/limits.json";
    const auto l = tscli::read_limits(path, "CPU", tscli::cpu_machine());
    QVERIFY2(l, why(r).constData());
    QVERIFY(l->bandwidth_gbs > 0.01 && l->bandwidth_gbs < 1e5);
    QVERIFY(l->peak_gflops > 0.01 && l->peak_gflops < 1e6);
    QVERIFY2(QString::fromStdString(l->bandwidth_label).startsWith("add bandwidth GB/s"), l->bandwidth_label.c_str());
    QVERIFY2(QString::fromStdString(l->peak_label).startsWith("FMA peak GFLOP/s fp32"), l->peak_label.c_str());
    QVERIFY(QString::fromStdString(l->peak_label).contains(QStringLiteral("%1 thread").arg(QThread::idealThreadCount())));
    QCOMPARE(QString::fromStdString(l->measured_at).left(10), QDateTime::currentDateTimeUtc().date().toString(Qt::ISODate));
    QCOMPARE(l->figures.size(), size_t(1));
    QCOMPARE(QString::fromStdString(l->figures[0].name), QStringLiteral("read bandwidth"));
    QVERIFY(r.out.contains(QStringLiteral("limits: CPU (")));
    QVERIFY(r.out.contains(QString::fromStdString(path)));
    const QJsonObject t = trace_of("softmax.py", home, "CPU", "after-bench");
    QCOMPARE(t["limits"].toObject(), expected_trace_limits(*l));
  }

  // bench --reference: the same workload timed by a tinygrad checkout in a child python3, its figure beside this
  // one's and in the goals table. The checkout here is a stand-in whose every kernel takes 2 ms by its counters (the
  // parse and the arithmetic of the ratio are what is checked); one that is not a checkout says so and the bench goes on
  void bench_beside_a_reference() {
    const QString home = dir_.filePath("bench-ref");
    const QString fake = dir_.filePath("fake-tinygrad");
    QDir().mkpath(fake + "/tinygrad");
    auto put = [&](const QString& name, const char* text) {
      QFile f(fake + "/tinygrad/" + name);
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Text));
      f.write(text);
    };
    put("__init__.py", "from tinygrad.tensor import Tensor\nDevice = {}\n");
    put("helpers.py",
        "import contextlib\nclass GlobalCounters: time_sum_s = 0.0\n"
        "@contextlib.contextmanager\ndef Context(**kw): yield\n");
    put("tensor.py",
        "from tinygrad.helpers import GlobalCounters\n"
        "class Tensor:\n"
        "  @staticmethod\n  def full(shape, v): return Tensor()\n"
        "  def contiguous(self): return self\n"
        "  def realize(self):\n    GlobalCounters.time_sum_s += 0.002\n    return self\n"
        "  def __add__(self, o): return self\n");
    Result r = run({"bench", "--only", "add 16M", "--reference", fake}, home);
    QVERIFY2(r.code == 0, why(r).constData());
    QVERIFY2(r.out.contains("tinygrad at " + QDir(fake).absolutePath() + " (DEV=CPU, its kernels' own times)"), why(r).constData());
    static const QRegularExpression ref_row(R"(\n    add 16M +2\.000 ms .* tinyscope's default opts (\d+\.\d+)x its speed)");
    QVERIFY2(ref_row.match(r.out).hasMatch(), why(r).constData());
    static const QRegularExpression goal_row(R"(\n  add 16M +\| (\d\.\d\d) of add bw \(>= 0\.90\) (met|MISSED))");
    QVERIFY2(goal_row.match(r.out).hasMatch(), why(r).constData());
    QVERIFY2(r.out.contains("add 16M") && r.out.contains("output ok"), why(r).constData());
    r = run({"bench", "--only", "add 16M", "--reference", dir_.filePath("nothing-here")}, home);
    QVERIFY2(r.code == 0 && r.out.contains("no tinygrad checkout there (tinygrad/tensor.py is missing)"), why(r).constData());
    // TS_OPTS names an opt space; anything else is refused before a kernel runs
    QProcessEnvironment bad;
    bad.insert("TS_OPTS", "fastest");
    r = run({"run", source_dir() + "/resources/examples/tutorial.py"}, home, bad);
    QVERIFY2(r.code != 0 && r.err.contains("TS_OPTS=fastest: the opt spaces BEAM searches are 'reference' and 'extended'"), why(r).constData());
  }

  // bench --limits --dev VULKAN on lavapipe: the hand-written shaders' add and fp32 matmul, keyed by the device and
  // its driver
  void bench_limits_fills_the_cache_on_vulkan() {
    const QString home = dir_.filePath("bench-vk");
    QProcessEnvironment env;
    ts_test::vulkan_test_env(env, dir_.path());
    const Result devs = run({"devices", "--json"}, home, env);
    QVERIFY2(devs.code == 0, why(devs).constData());
    QString name;  // the VULKAN device's name, from `tinyscope devices`
    for (const auto& d : QJsonDocument::fromJson(devs.out.toUtf8()).array()) {
      const QJsonObject o = d.toObject();
      if (o["name"].toString() == "VULKAN") name = o["properties"].toObject()["device"].toString().section(" (", 0, 0);
    }
    if (name.isEmpty()) QSKIP(qPrintable("no VULKAN device: " + devs.out.left(400)));
    const Result r = run({"bench", "--limits", "--dev", "VULKAN"}, home, env, 280000);
    QVERIFY2(r.code == 0, why(r).constData());
    const QJsonObject cache = read_json(home + "/tinyscope/limits.json");
    QCOMPARE(cache["entries"].toArray().size(), 1);
    const QJsonObject e = cache["entries"].toArray()[0].toObject();
    QCOMPARE(e["device"].toString(), QStringLiteral("VULKAN"));
    QVERIFY2(e["machine"].toString().startsWith(name + " ("), qPrintable(e["machine"].toString() + " / " + name));
    QVERIFY(e["bandwidth_gbs"].toDouble() > 0 && e["peak_gflops"].toDouble() > 0);
    QVERIFY(e["bandwidth_label"].toString().contains("vec4 add"));
    QVERIFY(e["peak_label"].toString().contains("fp32 matmul"));
    const QJsonObject t = trace_of("tutorial.py", home, "VULKAN", "vk");
    QVERIFY(t.contains("limits"));
    QCOMPARE(t["limits"].toObject()["machine"].toString(), e["machine"].toString());
    QCOMPARE(t["limits"].toObject()["bandwidth_gbs"].toDouble(), e["bandwidth_gbs"].toDouble());
    QCOMPARE(t["limits"].toObject()["peak_gflops"].toDouble(), e["peak_gflops"].toDouble());
  }

  // the interpreter has no limits to measure: an error, and no cache written
  void bench_limits_refuses_the_interpreter() {
    const QString home = dir_.filePath("bench-interp");
    const Result r = run({"bench", "--limits", "--dev", "INTERP"}, home);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("limits are measured for CPU, CPU:LLVM and VULKAN"), why(r).constData());
    QVERIFY(!QFile::exists(home + "/tinyscope/limits.json"));
  }
};

QTEST_GUILESS_MAIN(TestLimits)
#include "test_limits.moc"
