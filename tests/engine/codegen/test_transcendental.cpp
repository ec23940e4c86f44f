// EXP2 and LOG2 on the CPU devices are the reference's polynomials (pm_transcendental), not libm calls: through the
// whole pipeline on DEV=CPU and CPU:LLVM they agree with the interpreter (which keeps std::exp2 / std::log2) and with
// libm within 2 ulp over a dense sweep of float32 inputs, the special values exactly.
#include <QtTest/QtTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/renderer/c_renderer.h"
#include "engine/renderer/llvm_renderer.h"
#include "engine/runtime/interp/interp_device.h"
#include "engine/codegen/to_program.h"
#include "engine/realize/realize.h"
#include "engine/runtime/cpu/install.h"
#include "engine/schedule/schedule.h"
#include "engine/tensor/tensor.h"

using namespace ts;

namespace {

const double kInf = std::numeric_limits<double>::infinity(), kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor floats(const std::vector<double>& v, DType dt = dtypes::float32) {
  HostData h;
  h.shape = {static_cast<int64_t>(v.size())};
  h.dtype = dt;
  h.f = v;
  return Tensor::from_host(h);
}

// distance in representable floats (+0 and -0 are one point); NaN is only as close as another NaN
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto ord = [](float f) {
    int64_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t{INT32_MIN} - i : i;
  };
  return std::llabs(ord(a) - ord(b));
}

// the specials, the overflow / underflow edges, then a dense sweep of [-160, 140] and every 4093rd bit pattern
// (every magnitude, denormals and both signs included)
std::vector<double> sweep() {
  std::vector<double> v = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 0.5, 127.99, 127.999992, 128.0, 128.5, -126.0, -126.5, -149.0, -149.5,
                           -149.99, -150.0, -150.5, -151.0, 1e-45, -1e-45, 1e-40, 1.17549435e-38, 1e-4, 9.9999e-5, 3.4028235e38, -3.4028235e38};
  for (int i = 0; i <= 30000; ++i) v.push_back(-160.0 + 300.0 * i / 30000);
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4093) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  return v;
}

std::vector<float> run(const std::string& dev, const std::vector<double>& xs, Tensor (*f)(const Tensor&), DType dt = dtypes::float32) {
  realize_config().device = dev;
  HostData h = f(floats(xs, dt)).data();
  return std::vector<float>(h.f.begin(), h.f.end());
}

Tensor exp2_of(const Tensor& x) { return x.exp2(); }
Tensor log2_of(const Tensor& x) { return x.log2(); }
Tensor exp_of(const Tensor& x) { return x.exp(); }
Tensor log_of(const Tensor& x) { return x.log(); }

// the largest distance of dev's results from the interpreter's (and from libm's, when given) over xs, and where
struct Worst {
  int64_t ulps = 0;
  QString where;
};
Worst compare(const std::string& dev, const std::vector<double>& xs, Tensor (*f)(const Tensor&), float (*libm)(float)) {
  std::vector<float> got = run(dev, xs, f), want = run("INTERP", xs, f);
  if (got.size() != xs.size() || want.size() != xs.size()) return {INT64_MAX, "wrong result size"};
  Worst w;
  for (size_t i = 0; i < xs.size(); ++i) {
    float x = static_cast<float>(xs[i]);
    int64_t d = std::max(ulps(got[i], want[i]), libm ? ulps(got[i], libm(x)) : 0);
    if (d <= w.ulps) continue;
    w.ulps = d;
    w.where = QString("%1: f(%2) = %3, interpreter %4, libm %5").arg(dev.c_str()).arg(x, 0, 'g', 9).arg(got[i], 0, 'g', 9).arg(want[i], 0, 'g', 9)
                  .arg(libm ? libm(x) : 0.0f, 0, 'g', 9);
  }
  return w;
}

Tensor exp2_h(const Tensor& x) { return x.cast(dtypes::float16).exp2(); }
Tensor log2_h(const Tensor& x) { return x.cast(dtypes::float16).log2(); }

// the kernels' source of f on a fresh input (a scheduled tensor is not scheduled again)
std::string rendered(Tensor (*f)(const Tensor&), const Renderer& lang) {
  std::string src;
  auto sched = schedule_linear({f(floats({1.5, -2.0, 3.25}))});
  for (auto& item : sched->items)
    if (item.kind == ScheduleItem::Kind::Kernel) src += to_program(item.ast, lang).src;
  return src;
}

}  // namespace

class TestTranscendental : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    cpu::install();
    install_realize();
    realize_config().debug = 0;
  }

  void decomposed_on_the_cpu_renderers() {
    realize_config().device = "CPU";
    for (auto f : {exp2_of, log2_of, exp_of, log_of, exp2_h, log2_h}) {
      std::string c = rendered(f, clang_renderer()), ll = rendered(f, llvm_renderer());
      QVERIFY2(!c.empty() && c.find("__builtin_exp2") == std::string::npos && c.find("__builtin_log2") == std::string::npos, c.c_str());
      QVERIFY2(!ll.empty() && ll.find("llvm.exp2") == std::string::npos && ll.find("llvm.log2") == std::string::npos, ll.c_str());
    }
    // the interpreter keeps the exact ops
    QVERIFY(rendered(exp2_of, interp_renderer()).find("EXP2") != std::string::npos);
    QVERIFY(rendered(log2_of, interp_renderer()).find("LOG2") != std::string::npos);
  }

  void specials_are_exact() {
    const std::vector<double> xs = {kInf, -kInf, kNaN, 0.0, -0.0, 128.0, 127.99, -149.5, -150.0, -151.0, -1.0, 1e-45, 1.0, 0.25};
    const std::vector<float> exp2_want = {INFINITY, 0.0f, NAN, 1.0f, 1.0f, INFINITY, std::exp2(127.99f), 1e-45f, 0.0f, 0.0f, 0.5f, 1.0f, 2.0f, std::exp2(0.25f)};
    const std::vector<float> log2_want = {INFINITY, NAN, NAN, -INFINITY, -INFINITY, 7.0f, std::log2(127.99f), NAN, NAN, NAN, NAN, -149.0f, 0.0f, -2.0f};
    for (const std::string dev : {"CPU", "CPU:LLVM"}) {
      std::vector<float> e = run(dev, xs, exp2_of), l = run(dev, xs, log2_of);
      for (size_t i = 0; i < xs.size(); ++i) {
        QString where = QString("%1 x=%2").arg(dev.c_str()).arg(xs[i]);
        QVERIFY2(ulps(e[i], exp2_want[i]) == 0, qPrintable(where + QString(" exp2 %1").arg(e[i])));
        QVERIFY2(ulps(l[i], log2_want[i]) == 0, qPrintable(where + QString(" log2 %1").arg(l[i])));
      }
    }
  }

  // exp2 within 1 ulp; log2 within 3: the reference's float32 log2 adds e + x*2.885.. in float, and where e = -1
  // cancels most of it (results near -1/2) the sum's rounding is up to 3 ulps of the result (the reference's CPU gives
  // the same bits); exp and log are exp2(x / ln 2) and log2(x) * ln 2 on every device, the same rounding after
  void dense_sweep_within_reference_ulps() {
    const std::vector<double> xs = sweep();
    struct Case {
      const char* name;
      Tensor (*f)(const Tensor&);
      float (*libm)(float);
      int64_t max_ulps;
    };
    const Case cases[] = {{"exp2", exp2_of, [](float x) { return std::exp2(x); }, 1},
                          {"log2", log2_of, [](float x) { return std::log2(x); }, 3},
                          {"exp", exp_of, nullptr, 1},
                          {"log", log_of, nullptr, 3}};
    for (const std::string dev : {"CPU", "CPU:LLVM"})
      for (const Case& c : cases) {
        Worst w = compare(dev, xs, c.f, c.libm);
        qInfo("%s %s: %lld ulps at most (%s)", dev.c_str(), c.name, static_cast<long long>(w.ulps), qPrintable(w.where));
        QVERIFY2(w.ulps <= c.max_ulps, qPrintable(QString(c.name) + " " + w.where));
      }
  }

  // float16 runs the float32 polynomial and rounds once more: within one half ulp of the interpreter
  void float16_through_float32() {
    std::vector<double> xs;
    for (int i = 0; i <= 4000; ++i) xs.push_back(-30.0 + 50.0 * i / 4000);
    for (double s : {kInf, -kInf, kNaN, 0.0, -0.0, 6e-8, 65504.0}) xs.push_back(s);
    for (auto f : {exp2_of, log2_of}) {
      std::vector<float> want = run("INTERP", xs, f, dtypes::float16);
      for (const std::string dev : {"CPU", "CPU:LLVM"}) {
        std::vector<float> got = run(dev, xs, f, dtypes::float16);
        for (size_t i = 0; i < xs.size(); ++i) {
          // one half ulp: 2^-10 relative for normal halves, 2^-24 for denormal ones
          bool ok = std::isnan(got[i]) ? std::isnan(want[i])
                                       : got[i] == want[i] || std::abs(got[i] - want[i]) <= std::max(std::abs(want[i]) * 0x1p-10f, 0x1p-24f);
          QVERIFY2(ok, qPrintable(QString("%1 x=%2: %3 vs %4").arg(dev.c_str()).arg(xs[i]).arg(got[i]).arg(want[i])));
        }
      }
    }
  }
};

QTEST_MAIN(TestTranscendental)
#include "test_transcendental.moc"
