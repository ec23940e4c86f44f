// The interpreter's provenance recording (engine/runtime/interp/provenance.h): off by default, the same values with it
// on, and for small kernels on INTERP and INTERP:GPU exactly the elements each stored value was computed from: through
// elementwise math, a WHERE on data, a padded (gated) read, a register accumulator, and a group reduce through LOCAL
// memory. (tests/viewer/test_access_interp compares it with the access model over the examples' programs.)
#include <QtTest>

#include <functional>
#include <set>

#include "engine/realize/realize.h"
#include "engine/runtime/interp/provenance.h"
#include "engine/tensor/tensor.h"

using namespace ts;

namespace {

Tensor input(const Shape& shape, double scale = 1) {
  HostData h;
  h.shape = shape;
  h.dtype = dtypes::float32;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t k = 0; k < n; ++k) h.f.push_back(scale * double(k % 5 - 2));
  return Tensor::from_host(h).realize();
}

// the launches `t`'s realize interpreted, recorded
std::vector<Provenance> recorded(Tensor t) {
  take_provenance();
  record_provenance(true);
  t.realize();
  record_provenance(false);
  return take_provenance();
}

// the elements a stored value came from, as (slot, index) with the slots left out: the inputs' slots are the order the
// kernel first uses them, which these checks need not know
std::multiset<int64_t> indices_of(const std::vector<ElementRef>& deps) {
  std::multiset<int64_t> out;
  for (const ElementRef& r : deps) out.insert(r.index);
  return out;
}
std::set<int> slots_of(const std::vector<ElementRef>& deps) {
  std::set<int> out;
  for (const ElementRef& r : deps) out.insert(r.slot);
  return out;
}

}  // namespace

class TestInterpProvenance : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    RealizeConfig config;
    config.device = "INTERP";
    install_realize(config);
  }
  void init() { realize_config().device = "INTERP"; }

  void off_by_default_and_the_same_values_when_on() {
    QVERIFY(!recording_provenance());
    auto values = [](bool on) {
      Tensor x = input({1, 2, 5, 5}), w = input({3, 2, 3, 3}, 0.5);
      Tensor y = x.conv2d(w, std::nullopt, 1, {1}, {1}, {1}).softmax(-1);
      record_provenance(on);
      y.realize();
      record_provenance(false);
      return y.data().f;
    };
    take_provenance();
    const std::vector<double> off = values(false);
    QVERIFY(take_provenance().empty());
    const std::vector<double> on = values(true);
    QVERIFY(!take_provenance().empty());
    QCOMPARE(on, off);
  }

  // out[i] = a[i] + b[i], and where(a > 0, b, c): every operand's element, the condition's included
  void elementwise_and_where() {
    const auto add = recorded(input({6}).add(input({6}, 2)));
    QCOMPARE(add.size(), size_t(1));
    QCOMPARE(add[0].stores.size(), size_t(6));
    for (const auto& [out, deps] : add[0].stores) {
      QCOMPARE(out.slot, 0);
      QCOMPARE(indices_of(deps), (std::multiset<int64_t>{out.index, out.index}));
      QCOMPARE(slots_of(deps), (std::set<int>{1, 2}));
    }
    Tensor a = input({6}), b = input({6}, 2), c = input({6}, 3);
    const auto where = recorded(a.gt(Tensor::scalar(0, dtypes::float32)).where(b, c));
    QCOMPARE(where.size(), size_t(1));
    for (const auto& [out, deps] : where[0].stores) QCOMPARE(indices_of(deps), (std::multiset<int64_t>{out.index, out.index, out.index}));
  }

  // a padded read is gated: the pad's elements were computed from nothing, the others from x[i - 2]
  void padded_read_loads_nothing() {
    const auto pad = recorded(input({4}).pad({{2, 1}}).add(Tensor::scalar(1, dtypes::float32)));
    QCOMPARE(pad.size(), size_t(1));
    QCOMPARE(pad[0].stores.size(), size_t(7));
    for (const auto& [out, deps] : pad[0].stores) {
      if (out.index < 2 || out.index >= 6) QVERIFY2(deps.empty(), qPrintable(QString::number(out.index)));
      else QCOMPARE(deps, (std::vector<ElementRef>{{1, out.index - 2}}));
    }
  }

  // a row sum (a register accumulator across the reduce loop) on INTERP, and a whole sum on INTERP:GPU (a group reduce:
  // each lane's partial sum through LOCAL memory, one lane stores)
  void reduces() {
    const auto rows = recorded(input({3, 5}).sum(std::vector<int64_t>{1}));
    QCOMPARE(rows.size(), size_t(1));
    QCOMPARE(rows[0].stores.size(), size_t(3));
    for (const auto& [out, deps] : rows[0].stores) {
      std::vector<ElementRef> row;
      for (int64_t c = 0; c < 5; ++c) row.push_back({1, out.index * 5 + c});
      QCOMPARE(deps, row);
    }
    realize_config().device = "INTERP:GPU";
    const auto all = recorded(input({256}).sum());
    QCOMPARE(all.size(), size_t(1));
    QCOMPARE(all[0].stores.size(), size_t(1));
    QVERIFY2(QString::fromStdString(all[0].kernel).startsWith("r_16_16"), all[0].kernel.c_str());  // (GROUPTOP: 16 lanes)
    std::vector<ElementRef> every;
    for (int64_t i = 0; i < 256; ++i) every.push_back({1, i});
    QCOMPARE(all[0].stores.begin()->second, every);
  }
};

QTEST_GUILESS_MAIN(TestInterpProvenance)
#include "test_interp_provenance.moc"
