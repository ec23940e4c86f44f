// The access model (viewer/model/access_model.h) against hand calculations: for every output element of a matmul
// (16x24 @ 24x8), a 3x3 conv2d with padding 1 (1x2x8x8 input, 4 output channels) and softmax's three kernels (3x4),
// the elements the model says the kernel reads equal those the formula names; under NOOPT, the default opts and BEAM=2
// (the opts change the loops, never what an output reads).
#include <QtTest>

#include <QDir>
#include <QImage>
#include <QFile>
#include <QTemporaryDir>
#include <functional>

#include "test_env.h"
#include "viewer/model/access_model.h"
#include "viewer/model/session.h"

using namespace ts_test;

namespace {

// the formula: output element e of a kernel -> for each input size, the elements read
using Oracle = std::function<QHash<qint64, QSet<qint64>>(qint64 e)>;

const char* kMatmul = R"(from tinygrad import Tensor
a = Tensor([[float((i * 24 + k) % 7 - 3) for k in range(24)] for i in range(16)]).realize()
b = Tensor([[float((k * 8 + j) % 5 - 2) for j in range(8)] for k in range(24)]).realize()
print((a @ b).tolist()[0][:2])
)";
const char* kConv = R"(from tinygrad import Tensor
x = Tensor([[[[float((c * 64 + i * 8 + j) % 5) for j in range(8)] for i in range(8)] for c in range(2)]]).realize()
w = Tensor([[[[float((o + c + i - j) % 3 - 1) for j in range(3)] for i in range(3)] for c in range(2)] for o in range(4)]).realize()
print(x.conv2d(w, padding=1).tolist()[0][0][0][:2])
)";
const char* kSoftmax = R"(from tinygrad import Tensor
t = Tensor([[1.0, 2.0, 3.0, 4.0], [1.0, 1.0, 1.0, 1.0], [-1.0, 0.0, 1.0, 100.0]]).realize()
print(t.softmax(axis=-1).tolist())
)";

// runs `script` (kMatmul, ...) with `env` (NAME=VALUE, or "") into *s
bool run_script(const char* script, const QString& env, tsv::Session* s, QString* err) {
  QTemporaryDir dir;
  const QString py = dir.filePath("script.py"), trace = dir.filePath("t.json");
  if (!ts_test::write_file(py, script)) return false;
  QProcessEnvironment e;
  e.insert("DEV", "CPU");
  e.insert("XDG_CACHE_HOME", dir.filePath("cache"));  // (BEAM searches afresh)
  if (!env.isEmpty()) e.insert(env.section('=', 0, 0), env.section('=', 1));
  const Result r = run_process(tinyscope_bin(), {"run", py, "--json", trace}, e, {}, 300000);
  if (r.code != 0) {
    *err = r.err;
    return false;
  }
  return s->load(trace, err);
}

// the first kernel call of a session, its model loaded
bool first_kernel(const tsv::Session& s, tsv::AccessModel* m, QString* err) {
  for (int i = 0; i < s.calls().size(); ++i)
    if (s.calls()[i].kind == "kernel") return m->load(s, s.kernel_context(s.calls()[i].program_key), i, err);
  *err = "no kernel";
  return false;
}

// resources/examples/matmul.py: 64x64 @ 64x64, on a CPU two threads (NUM_CPU_THREADS=2), on a GPU work-groups
const char* kMatmul64 = R"(from tinygrad import Tensor
a = Tensor([[float((i * 64 + j) % 7 - 3) for j in range(64)] for i in range(64)]).realize()
b = Tensor([[float((i * 64 + j) % 5 - 2) for j in range(64)] for i in range(64)]).realize()
print((a @ b).realize().tolist()[0][:2])
)";

}  // namespace

class TestAccess : public QObject {
  Q_OBJECT
 private slots:
  void reads_match_the_formula_data() {
    QTest::addColumn<QString>("script");
    QTest::addColumn<QString>("env");
    for (const char* env : {"NOOPT=1", "", "BEAM=2"}) {
      QTest::newRow(qPrintable(QString("matmul %1").arg(env))) << "matmul" << env;
      QTest::newRow(qPrintable(QString("conv2d %1").arg(env))) << "conv2d" << env;
      QTest::newRow(qPrintable(QString("softmax %1").arg(env))) << "softmax" << env;
    }
  }
  void reads_match_the_formula() {
    QFETCH(QString, script);
    QFETCH(QString, env);
    tsv::Session s;
    QString err;
    QVERIFY2(run_script(script == "matmul" ? kMatmul : script == "conv2d" ? kConv : kSoftmax, env, &s, &err), qPrintable(err));
    // the kernels, in the order they ran, with their oracles
    QList<Oracle> oracles;
    if (script == "matmul") {
      oracles << [](qint64 e) {
        const qint64 i = e / 8, j = e % 8;
        QHash<qint64, QSet<qint64>> out;
        for (qint64 k = 0; k < 24; ++k) out[16 * 24].insert(i * 24 + k), out[24 * 8].insert(k * 8 + j);
        return out;
      };
    } else if (script == "conv2d") {
      oracles << [](qint64 e) {
        const qint64 co = e / 64, y = e / 8 % 8, x = e % 8;
        QHash<qint64, QSet<qint64>> out;
        for (qint64 ci = 0; ci < 2; ++ci)
          for (qint64 dy = 0; dy < 3; ++dy)
            for (qint64 dx = 0; dx < 3; ++dx) {
              const qint64 yy = y + dy - 1, xx = x + dx - 1;
              if (yy >= 0 && yy < 8 && xx >= 0 && xx < 8) out[128].insert((ci * 8 + yy) * 8 + xx);  // (padding: no read)
              out[72].insert(((co * 2 + ci) * 3 + dy) * 3 + dx);
            }
        return out;
      };
    } else {
      auto row = [](qint64 r) {
        QSet<qint64> s;
        for (qint64 c = 0; c < 4; ++c) s.insert(r * 4 + c);
        return s;
      };
      oracles << [row](qint64 e) { return QHash<qint64, QSet<qint64>>{{12, row(e)}}; };                           // the max
      oracles << [row](qint64 e) { return QHash<qint64, QSet<qint64>>{{12, row(e)}, {3, {e}}}; };                  // sum of exps
      oracles << [](qint64 e) { return QHash<qint64, QSet<qint64>>{{12, {e}}, {3, {e / 4}}}; };                    // the quotient
    }
    QList<int> kernels;
    for (int i = 0; i < s.calls().size(); ++i)
      if (s.calls()[i].kind == "kernel") kernels << i;
    QCOMPARE(kernels.size(), oracles.size());
    int checked = 0;
    for (int k = 0; k < kernels.size(); ++k) {
      const int call = kernels[k];
      tsv::AccessModel m;
      QVERIFY2(m.load(s, s.kernel_context(s.calls()[call].program_key), call, &err), qPrintable(err));
      int out_slot = -1;
      qint64 out_size = 0;
      for (const auto& a : m.accesses())
        if (a.write) out_slot = a.slot, out_size = a.size;
      QVERIFY(out_slot >= 0 && out_size > 0);
      // every input access's buffer size names it for the oracle
      QHash<int, qint64> size_of;
      for (const auto& a : m.accesses()) size_of[a.slot] = a.size;
      for (qint64 e = 0; e < out_size; ++e) {
        int points = 0;
        const auto got = m.reads_of_output(out_slot, e, &points);
        QVERIFY2(points > 0, qPrintable(QString("%1: no point stores element %2").arg(s.calls()[call].name).arg(e)));
        QHash<qint64, QSet<qint64>> by_size;
        for (auto it = got.begin(); it != got.end(); ++it)
          if (it.key() != out_slot) by_size[size_of.value(it.key())] += it.value();
        const auto want = oracles[k](e);
        QVERIFY2(by_size == want, qPrintable(QString("%1 (%2), output %3: the model reads other elements").arg(s.calls()[call].name, env).arg(e)));
        ++checked;
      }
    }
    QVERIFY(checked > 0);
  }

  // the padded conv's gated reads by hand: at every point of its loop nest, the output element written names (co, y,
  // x) and the weight read (co, ci, dy, dx); the input read is gated off exactly where (y + dy - 1, x + dx - 1) lies
  // outside the 8x8 image, and elsewhere its index, gate on or not, is (ci, y + dy - 1, x + dx - 1). Per output
  // channel and input channel 9 * 64 points, (7 + 8 + 7)^2 of them inside: 4 * 2 * 92 = 736 gated off.
  void padded_reads_are_gated_off_data() {
    QTest::addColumn<QString>("env");
    QTest::newRow("NOOPT") << "NOOPT=1";
    QTest::newRow("default") << "";
  }
  void padded_reads_are_gated_off() {
    QFETCH(QString, env);
    tsv::Session s;
    tsv::AccessModel m;
    QString err;
    QVERIFY2(run_script(kConv, env, &s, &err), qPrintable(err));
    QVERIFY2(first_kernel(s, &m, &err), qPrintable(err));
    int out = -1, weight = -1, input = -1;
    for (int k = 0; k < m.accesses().size(); ++k) {
      const auto& a = m.accesses()[k];
      if (a.write && a.size == 256) out = k;
      else if (!a.write && a.size == 72) weight = k;
      else if (!a.write && a.size == 128) input = k;
    }
    QVERIFY(out >= 0 && weight >= 0 && input >= 0);
    int points = 0, gated = 0, wrong = 0;
    bool first_gated = false;
    m.for_each_point([&](const QList<qint64>& p) {
      QList<bool> on;
      const QList<qint64> u = m.ungated_at(p, &on), e = m.at(p);
      const qint64 co = u[out] / 64, y = u[out] / 8 % 8, x = u[out] % 8;
      const qint64 ci = u[weight] / 9 % 2, dy = u[weight] / 3 % 3, dx = u[weight] % 3;
      const qint64 yy = y + dy - 1, xx = x + dx - 1;
      const bool inside = yy >= 0 && yy < 8 && xx >= 0 && xx < 8;
      if (u[weight] / 18 != co || on[input] != inside || (e[input] < 0) == inside || (inside && u[input] != (ci * 8 + yy) * 8 + xx)) ++wrong;
      if (!on[out] || !on[weight]) ++wrong;  // (only the input is padded)
      if (points++ == 0) first_gated = !inside;
      gated += !inside;
    });
    QCOMPARE(wrong, 0);
    QCOMPARE(points, 4 * 2 * 9 * 64);
    QCOMPARE(gated, 736);
    if (env == "NOOPT=1") QVERIFY(first_gated);  // (the first point, the top-left corner, reads padding)
  }

  // what one thread or work-group writes, by hand. On a CPU with two threads the heuristics split the matmul's first
  // output axis by THREAD 2: thread t writes rows 32t to 32t + 31, every column. On INTERP:GPU a work-group (one value
  // of each GLOBAL range) writes a block of rows x columns, its LOCAL and UPCAST sizes' product in all, and the
  // work-groups together write each element once. A GPU kernel with no GLOBAL range is one work-group.
  void threads_and_work_groups_write_blocks() {
    for (const QString env : {"NUM_CPU_THREADS=2", "DEV=INTERP:GPU"}) {
      tsv::Session s;
      tsv::AccessModel m;
      QString err;
      QVERIFY2(run_script(kMatmul64, env, &s, &err), qPrintable(err));
      QVERIFY2(first_kernel(s, &m, &err), qPrintable(err));
      const bool cpu = env.startsWith("NUM");
      QCOMPARE(m.group_kind(), cpu ? QString("thread") : QString("work-group"));
      const QList<int> group = m.group_ranges();
      QVERIFY(!group.isEmpty());
      int out = -1;
      for (const auto& a : m.accesses())
        if (a.write) out = a.slot;
      qint64 per_group = 1, groups = 1;
      for (int d = 0; d < m.ranges().size(); ++d) {
        const auto& r = m.ranges()[d];
        if (group.contains(d)) groups *= r.size;
        else if (r.type == "LOCAL" || r.type == "UPCAST") per_group *= r.size;
      }
      if (cpu) QCOMPARE(groups, 2);
      // each group's point: its ranges' values, every other range 0
      QSet<qint64> all;
      qint64 seen = 0;
      for (qint64 g = 0; g < groups; ++g) {
        QList<qint64> p(m.ranges().size(), 0);
        qint64 rest = g;
        for (int i = int(group.size()) - 1; i >= 0; --i) p[group[i]] = rest % m.ranges()[group[i]].size, rest /= m.ranges()[group[i]].size;
        const QSet<qint64> w = m.group_writes(p).value(out);
        QSet<qint64> rows, cols;
        for (qint64 e : w) rows.insert(e / 64), cols.insert(e % 64);
        QCOMPARE(qint64(rows.size() * cols.size()), qint64(w.size()));  // a block
        if (cpu) {
          QSet<qint64> want;
          for (qint64 e = 2048 * g; e < 2048 * (g + 1); ++e) want.insert(e);
          QVERIFY2(w == want, qPrintable(QString("thread %1 writes %2 elements, not rows %3 to %4").arg(g).arg(w.size()).arg(32 * g).arg(32 * g + 31)));
        } else {
          QCOMPARE(qint64(w.size()), per_group);
        }
        seen += w.size();
        all += w;
      }
      QCOMPARE(seen, qint64(64 * 64));  // (no element written by two)
      QCOMPARE(qint64(all.size()), qint64(64 * 64));
    }
    // softmax's max on INTERP:GPU: LOCAL ranges and no GLOBAL one, one work-group, which writes all three rows' maxima
    tsv::Session s;
    tsv::AccessModel m;
    QString err;
    QVERIFY2(run_script(kSoftmax, "DEV=INTERP:GPU", &s, &err), qPrintable(err));
    QVERIFY2(first_kernel(s, &m, &err), qPrintable(err));
    QCOMPARE(m.group_kind(), QString("work-group"));
    QVERIFY(m.group_ranges().isEmpty());
    int out = -1;
    for (const auto& a : m.accesses())
      if (a.write) out = a.slot;
    QCOMPARE(m.group_writes(QList<qint64>(m.ranges().size(), 0)).value(out), (QSet<qint64>{0, 1, 2}));
  }

  // --export-access DIR: the window opens the trace, writes the Access pane's frames (the first kernel, the loop Play
  // walks: one PNG per value) and exits
  void export_access_flag_writes_frames() {
    QTemporaryDir dir;
    const QString py = dir.filePath("conv.py"), trace = dir.filePath("t.json"), out = dir.filePath("frames");
    QVERIFY(ts_test::write_file(py, kConv));
    QProcessEnvironment e;
    e.insert("DEV", "CPU");
    e.insert("XDG_CACHE_HOME", dir.filePath("cache"));
    Result r = run_process(tinyscope_bin(), {"run", py, "--json", trace}, e, {}, 120000);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    e.insert("QT_QPA_PLATFORM", "offscreen");
    e.insert("XDG_CONFIG_HOME", dir.filePath("config"));
    r = run_process(tinyscope_bin(), {trace, "--export-access", out}, e, {}, 120000);
    QVERIFY2(r.code == 0, why(r).constData());
    const QStringList frames = QDir(out).entryList({"access_*.png"}, QDir::Files, QDir::Name);
    QVERIFY2(frames.size() > 1 && r.err.contains(QString("--export-access %1: %2 frame").arg(out).arg(frames.size())), qPrintable(r.err));
    QVERIFY(QImage(QDir(out).filePath(frames[0])) != QImage(QDir(out).filePath(frames[1])));
  }
};

QTEST_GUILESS_MAIN(TestAccess)
#include "test_access.moc"
