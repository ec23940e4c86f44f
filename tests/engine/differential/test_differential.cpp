// Random small Tensor programs run on DEV=CPU (C through clang + JIT), DEV=CPU:LLVM and DEV=INTERP (the reference
// interpreter over the same lowered program). Results must agree: NaN-aware, with a tolerance scaled by the
// longest reduction in the program.
#include <QtTest>

#include <cmath>
#include <random>

#include "engine/realize/realize.h"
#include "engine/runtime/cpu/install.h"
#include "engine/tensor/tensor.h"

using namespace ts;

namespace {

struct Program {
  Tensor out;
  int64_t max_reduce = 1;
  std::string desc;
};

// Builds the same program for the same seed (inputs included).
Program build(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  Shape shape;
  int nd = 1 + pick(3);
  for (int i = 0; i < nd; ++i) shape.push_back(1 + pick(6));
  auto input = [&](const Shape& s) {
    HostData h;
    h.shape = s;
    h.dtype = dtypes::float32;
    int64_t n = 1;
    for (auto d : s) n *= d;
    for (int64_t i = 0; i < n; ++i) h.f.push_back(static_cast<int>(rng() % 17) / 4.0 - 2.0);
    return Tensor::from_host(h);
  };
  Program p;
  Tensor x = input(shape), y = input(shape);
  int steps = 2 + pick(6);
  for (int s = 0; s < steps; ++s) {
    switch (pick(12)) {
      case 0: x = x.add(y); p.desc += " add"; break;
      case 1: x = x.mul(y); p.desc += " mul"; break;
      case 2: x = x.sub(y.mul(Tensor::scalar(0.5, dtypes::weakfloat))); p.desc += " sub"; break;
      case 3: x = x.maximum(y); p.desc += " max"; break;
      case 4: x = x.relu(); p.desc += " relu"; break;
      case 5: x = x.mul(Tensor::scalar(0.25, dtypes::weakfloat)).exp(); p.desc += " exp"; break;
      case 6: x = x.gt(y).where(x, y.neg()); p.desc += " where"; break;
      case 7: {  // reduce one axis, keepdim so shapes still match
        int64_t ax = pick(static_cast<int>(x.ndim()));
        p.max_reduce = std::max(p.max_reduce, x.shape()[ax]);
        x = pick(2) ? x.sum(std::vector<int64_t>{ax}, true) : x.max(std::vector<int64_t>{ax}, true);
        x = x.expand(std::vector<int64_t>(y.shape()));
        p.desc += " reduce";
        break;
      }
      case 8: {  // permute both (a transposed read)
        std::vector<int64_t> order(x.ndim());
        for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(order.size() - 1 - i);
        x = x.permute(order).contiguous().permute(order);
        p.desc += " permute";
        break;
      }
      case 9: {  // flip an axis
        x = x.flip({static_cast<int64_t>(pick(static_cast<int>(x.ndim())))});
        p.desc += " flip";
        break;
      }
      case 10: {  // pad then shrink back with an offset
        int64_t ax = pick(static_cast<int>(x.ndim()));
        std::vector<std::pair<int64_t, int64_t>> pads(x.ndim(), {0, 0}), sh;
        pads[ax] = {1, 2};
        Tensor padded = x.pad(pads, 0.5);
        for (int64_t i = 0; i < x.ndim(); ++i) sh.push_back(i == ax ? std::make_pair<int64_t, int64_t>(2, x.shape()[i] + 2) : std::make_pair<int64_t, int64_t>(0, x.shape()[i] + 0));
        x = padded.shrink(sh);
        p.desc += " pad/shrink";
        break;
      }
      default: {
        Tensor flat = x.reshape({-1});
        x = flat.reshape(std::vector<int64_t>(y.shape()));
        y = y.add(x.mul(Tensor::scalar(0.125, dtypes::weakfloat)));
        p.desc += " reshape";
      }
    }
  }
  p.out = x.add(y).contiguous();
  return p;
}

HostData run_on(const std::string& dev, uint32_t seed, Program* info = nullptr) {
  realize_config().device = dev;
  Program p = build(seed);
  if (info) *info = p;
  return p.out.data();
}

}  // namespace

class TestDifferential : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    cpu::install();
    install_realize();
    realize_config().debug = 0;
  }
  void random_programs_agree_data() {
    QTest::addColumn<uint32_t>("seed");
    for (uint32_t s = 1; s <= 150; ++s) QTest::newRow(qPrintable(QString("seed %1").arg(s))) << s;
  }
  void random_programs_agree() {
    QFETCH(uint32_t, seed);
    Program info;
    HostData ref = run_on("INTERP", seed, &info);
    for (const char* dev : {"CPU", "CPU:LLVM"}) {
      HostData got = run_on(dev, seed);
      QCOMPARE(got.f.size(), ref.f.size());
      double tol = 1e-5 * static_cast<double>(info.max_reduce);
      for (size_t i = 0; i < got.f.size(); ++i) {
        double a = got.f[i], b = ref.f[i];
        if (std::isnan(a) || std::isnan(b)) {
          QVERIFY2(std::isnan(a) && std::isnan(b), qPrintable(QString("%1 element %2: %3 vs %4 (%5)").arg(dev).arg(i).arg(a).arg(b).arg(info.desc.c_str())));
          continue;
        }
        bool ok = a == b || std::fabs(a - b) <= tol * std::max({1.0, std::fabs(a), std::fabs(b)});
        QVERIFY2(ok, qPrintable(QString("%1 element %2: %3 vs interp %4 (program:%5)").arg(dev).arg(i).arg(a).arg(b).arg(info.desc.c_str())));
      }
    }
  }
  // an independent oracle for one program: a matmul computed by hand
  void matmul_against_hand_computation() {
    realize_config().device = "CPU";
    HostData ha, hb;
    ha.shape = {3, 5};
    hb.shape = {5, 2};
    ha.dtype = hb.dtype = dtypes::float32;
    for (int i = 0; i < 15; ++i) ha.f.push_back(i % 4 - 1.5);
    for (int i = 0; i < 10; ++i) hb.f.push_back((i * 3) % 5 - 2.0);
    HostData c = Tensor::from_host(ha).matmul(Tensor::from_host(hb)).data();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) {
        double want = 0;
        for (int k = 0; k < 5; ++k) want += ha.f[i * 5 + k] * hb.f[k * 2 + j];
        QCOMPARE(c.f[i * 2 + j], want);
      }
  }
};

QTEST_GUILESS_MAIN(TestDifferential)
#include "test_differential.moc"
