// Codegen regressions checked in-process on DEV=CPU, CPU:LLVM and INTERP. The same reproducers run as tinygrad
// scripts against the reference's output in tests/regress/codegen_*.py; here are the checks a script cannot make:
// every buffer access of the pad reproducer's kernels is inside its buffer wherever its gate holds (a static check
// of the lowered program), and divisors / shift counts known only at run time (where the reference's CPU device
// traps) behave as the constant ones, whose results the reference gives. Also the host-side structures the cached
// path goes through: the pointer map of the graph walks, the schedule cache's instantiation, the live-tensor list.
#include <QtTest/QtTest>

#include <map>
#include <string>
#include <vector>

#include "engine/codegen/opt.h"
#include "engine/device/device.h"
#include "engine/renderer/c_renderer.h"
#include "engine/renderer/llvm_renderer.h"
#include "engine/runtime/interp/interp_device.h"
#include "engine/codegen/to_program.h"
#include "engine/realize/realize.h"
#include "engine/runtime/cpu/install.h"
#include "engine/schedule/schedule.h"
#include "engine/tensor/tensor.h"
#include "engine/uop/ptr_map.h"
#include "engine/uop/symbolic.h"

using namespace ts;

namespace {

const std::vector<std::string> kDevices = {"CPU", "CPU:LLVM", "INTERP"};

Tensor floats(const std::vector<double>& v, DType dt = dtypes::float32) {
  HostData h;
  h.shape = {static_cast<int64_t>(v.size())};
  h.dtype = dt;
  h.f = v;
  return Tensor::from_host(h);
}
Tensor ints(const std::vector<int64_t>& v, DType dt) {
  HostData h;
  h.shape = {static_cast<int64_t>(v.size())};
  h.dtype = dt;
  h.i = v;
  return Tensor::from_host(h);
}
Tensor weak_int(int64_t v) { return Tensor::scalar(static_cast<double>(v), dtypes::weakint); }

// tests/regress/codegen_pad_multi_axis.py: a pad over three axes (the reference prints -365.0)
Tensor pad_reproducer() {
  HostData h;
  h.shape = {256};
  h.dtype = dtypes::bool_;
  for (int i = 0; i < 256; ++i) h.i.push_back(i % 3 == 0);
  Tensor t = Tensor::from_host(h).reshape({8, 8, 4}).cast(dtypes::float32).contiguous();
  Tensor p = t.pad({{2, 1}, {2, 2}, {2, 0}}, -2.0);
  Tensor out = p.ge(floats({0.0, -1.5, 1.75, 0.0, 1.5, -0.25})).cast(dtypes::float32).add(Tensor::scalar(0.5, dtypes::weakfloat).mul(p));
  return out.permute({0, 2, 1}).sum();
}

// a device with a memory of its own whose compiler fails every kernel (as a driver that cannot build a pipeline)
class Uncompilable final : public Device {
 public:
  Uncompilable() : Device("UNCOMPILABLE") {}
  std::string memory() const override { return name(); }
  const Renderer& renderer() const override { return clang_renderer(); }
  OptTarget opt_target() const override { return cpu_opt_target(); }
  std::shared_ptr<Executable> load(const ProgramSpec& spec) override { throw Error("cannot compile " + spec.name + " here"); }
  double launch(const ProgramSpec&, Executable&, std::span<Buffer* const>, std::span<const int64_t>) override {
    throw Error("nothing compiled here can launch");
  }
};

// interval of integer index math in a lowered program: symbolic's bounds plus the shifts and masks the late
// decompositions make of multiplications, divisions and remainders by powers of two
using Bounds = std::map<const UOp*, std::pair<int64_t, int64_t>>;
std::pair<int64_t, int64_t> bounds(const UOpRef& u, const Bounds& known) {
  if (auto it = known.find(u.get()); it != known.end()) return it->second;
  auto c = [](const UOpRef& x) { return x->op == Ops::CONST && !x->is<Invalid>(); };
  if (u->src.size() == 2 && c(u->src[1])) {
    auto [lo, hi] = bounds(u->src[0], known);
    int64_t k = u->src[1]->const_int();
    if (u->op == Ops::SHL && k >= 0 && k < 32) return {lo * (int64_t{1} << k), hi * (int64_t{1} << k)};
    if (u->op == Ops::SHR && k >= 0 && k < 32 && lo >= 0) return {lo >> k, hi >> k};
    if (u->op == Ops::AND && k >= 0 && lo >= 0) return {0, std::min(hi, k)};
    if (u->op == Ops::CDIV && k > 0 && lo >= 0) return {lo / k, hi / k};
    if (u->op == Ops::CMOD && k > 0 && lo >= 0) return {0, std::min(hi, k - 1)};
  }
  if (u->op == Ops::ADD) {
    auto [a, b] = bounds(u->src[0], known);
    auto [x, y] = bounds(u->src[1], known);
    return {a + x, b + y};
  }
  if (u->op == Ops::MUL && c(u->src[1]) && u->src[1]->const_int() >= 0) {
    auto [a, b] = bounds(u->src[0], known);
    return {a * u->src[1]->const_int(), b * u->src[1]->const_int()};
  }
  return {u->vmin(), u->vmax()};
}

// the first access of a lowered program that may leave its buffer where its gate holds (empty when none)
std::string unbounded_access(const ProgramSpec& spec) {
  for (auto& u : spec.lowered->src) {
    if (u->op != Ops::LOAD && u->op != Ops::STORE) continue;
    const UOpRef& index = u->src[0];
    if (index->op != Ops::INDEX || index->src[0]->op != Ops::PARAM) continue;
    const ParamArg& pa = index->src[0]->as<ParamArg>();
    if (pa.addrspace == AddrSpace::ALU) continue;
    // the gate's clauses on single loop counters narrow them: r < c, and !(r < c) written (r < c) != True
    Bounds known;
    if (index->src.size() > 2)
      for (auto& clause : split_and(index->src[2])) {
        bool negated = clause->op == Ops::CMPNE && clause->src[0]->op == Ops::CMPLT;
        const UOpRef& lt = negated ? clause->src[0] : clause;
        if (lt->op != Ops::CMPLT || lt->src[0]->op != Ops::RANGE || lt->src[1]->op != Ops::CONST) continue;
        const UOp* r = lt->src[0].get();
        auto& b = known.try_emplace(r, r->vmin(), r->vmax()).first->second;
        int64_t k = lt->src[1]->const_int();
        if (negated) b.first = std::max(b.first, k);
        else b.second = std::min(b.second, k - 1);
      }
    auto [lo, hi] = bounds(index->src[1], known);
    if (lo < 0 || hi >= pa.size)
      return spec.name + ": data" + std::to_string(pa.slot) + "_" + std::to_string(pa.size) + "[" + std::to_string(lo) + ".." +
             std::to_string(hi) + "] under gate " + (index->src.size() > 2 ? index->src[2]->render() : std::string("(none)"));
  }
  return "";
}

}  // namespace

class TestCodegenRegressions : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    cpu::install();
    install_realize();
    realize_config().debug = 0;
  }

  // each read of the padded buffer is gated by every padded axis's validity (one WHERE per axis nests; the gate
  // is their conjunction), so no access can leave its buffer, and the sum is the reference's
  void multi_axis_pad_reads_stay_in_their_buffer() {
    realize_config().device = "CPU";
    auto sched = schedule_linear({pad_reproducer()});
    int kernels = 0;
    for (auto& item : sched->items) {
      if (item.kind != ScheduleItem::Kind::Kernel) continue;
      ++kernels;
      for (const Renderer* lang : {&clang_renderer(), &llvm_renderer(), &interp_renderer()}) {
        std::string bad = unbounded_access(to_program(item.ast, *lang));
        QVERIFY2(bad.empty(), bad.c_str());
      }
    }
    QCOMPARE(kernels, 2);  // E_64_4 and r_11_6_12, as the reference
    for (const auto& dev : kDevices) {
      realize_config().device = dev;
      HostData r = pad_reproducer().data();
      QVERIFY2(r.f.size() == 1 && r.f[0] == -365.0, dev.c_str());
    }
  }

  // x // 0 = x % 0 = 0 and MIN // -1 = MIN with the divisor in a buffer, on every int dtype, as with a constant
  // divisor (tests/regress/codegen_int_div_by_zero.py: the reference's results)
  void runtime_divisors_behave_as_constant_ones() {
    for (const auto& dev : kDevices) {
      realize_config().device = dev;
      for (DType dt : {dtypes::int8, dtypes::uint8, dtypes::int16, dtypes::uint16, dtypes::int32, dtypes::uint32, dtypes::int64, dtypes::uint64}) {
        Tensor a = ints({7, is_unsigned(dt) ? 9 : -7, 0}, dt), z = ints({0, 0, 0}, dt);
        QString where = QString("%1 %2").arg(dev.c_str(), dtype_repr(dt).c_str());
        for (Tensor r : {a.floordiv(z), a.mod(z), a.floordiv(weak_int(0)), a.mod(weak_int(0))})
          QVERIFY2(r.data().i == (std::vector<int64_t>{0, 0, 0}), qPrintable(where));
      }
      for (auto [dt, lo] : {std::pair{dtypes::int32, int64_t{INT32_MIN}}, std::pair{dtypes::int64, int64_t{INT64_MIN}}}) {
        Tensor a = ints({lo, 5, -5}, dt), m = ints({-1, -1, -1}, dt);
        QString where = QString("%1 %2").arg(dev.c_str(), dtype_repr(dt).c_str());
        QVERIFY2(a.floordiv(m).data().i == (std::vector<int64_t>{lo, -5, 5}), qPrintable(where));
        QVERIFY2(a.floordiv(m).data().i == a.floordiv(weak_int(-1)).data().i, qPrintable(where));
        QVERIFY2(a.mod(m).data().i == (std::vector<int64_t>{0, 0, 0}), qPrintable(where));
      }
    }
  }

  // shift counts from a buffer: past the width (or negative) SHL gives 0 and SHR the sign fill, as the reference's
  // vector shifts (tests/regress/codegen_casts_and_shifts.py), and in range they are the plain shifts
  void runtime_shift_counts() {
    const std::vector<int64_t> xs = {1, 3, -5, 7};
    for (const auto& dev : kDevices) {
      realize_config().device = dev;
      Tensor a = ints(xs, dtypes::int32);
      for (int64_t k : {0, 1, 31, 32, 33, 40, -1}) {
        Tensor s = ints({k, k, k, k}, dtypes::int32);
        std::vector<int64_t> want_l, want_r;
        for (int64_t x : xs) {
          bool in = k >= 0 && k < 32;
          want_l.push_back(in ? static_cast<int32_t>(static_cast<uint32_t>(x) << k) : 0);
          want_r.push_back(in ? x >> k : x >> 31);
        }
        QString where = QString("%1 k=%2").arg(dev.c_str()).arg(k);
        QVERIFY2(a.alu(Ops::SHL, s).data().i == want_l, qPrintable(where));
        QVERIFY2(a.alu(Ops::SHR, s).data().i == want_r, qPrintable(where));
      }
    }
  }

  // the pointer map the graph walks use: every key found with its value after the table has doubled many times,
  // an absent key not found, a second insert of a key not a new entry
  void ptr_map_keeps_every_key() {
    std::vector<int> keys(5000);
    PtrMap<int> m(4);
    for (int i = 0; i < 5000; ++i) {
      auto [v, fresh] = m.try_emplace(&keys[i]);
      QVERIFY(fresh);
      *v = i * 3;
    }
    QCOMPARE(m.size(), size_t{5000});
    for (int i = 0; i < 5000; ++i) {
      const int* v = m.find(&keys[i]);
      QVERIFY(v != nullptr);
      QCOMPARE(*v, i * 3);
    }
    int absent = 0;
    QVERIFY(m.find(&absent) == nullptr);
    auto [v, fresh] = m.try_emplace(&keys[17]);
    QVERIFY(!fresh);
    QCOMPARE(*v, 51);
    QCOMPARE(m.size(), size_t{5000});
  }

  // The schedule cache: a graph equal to a scheduled one but on other buffers is a hit, and the instantiated schedule
  // reads and writes this realize's buffers (the values prove it); a graph differing only in a constant is a miss.
  // Live tensors are listed in creation order, and a dead one is not listed.
  // a realize whose kernel cannot compile fails before its tensors become buffers: the input it would have uploaded
  // keeps its value (it read back as zeros: the tensor pointed at a buffer the schedule's copy never wrote)
  void a_kernel_that_cannot_compile_leaves_its_inputs() {
    register_device(std::make_unique<Uncompilable>());
    HostData v;
    v.shape = {3};
    v.dtype = dtypes::float32;
    v.f = {1.5, 2.5, -3.0};
    Tensor x = Tensor::from_host(v, "UNCOMPILABLE");
    QString error;
    try {
      x.add(weak_int(1)).data();
    } catch (const Error& e) {
      error = e.what();
    }
    QVERIFY2(error.contains("cannot compile"), qPrintable(error));
    QCOMPARE(x.data().f, v.f);
  }
  void schedule_cache_instantiates_with_the_new_buffers() {
    realize_config().device = "INTERP";
    auto chain = [](const Tensor& x, double c) {
      Tensor y = x;
      for (int k = 0; k < 3; ++k) y = y.mul(Tensor::scalar(c, dtypes::weakfloat)).add(Tensor::scalar(1.0, dtypes::weakfloat)).contiguous();
      return y;
    };
    Tensor a = floats({1, 2, 3}).realize(), b = floats({10, 20, 30}).realize();
    auto first = schedule_linear({chain(a, 2.0)});
    QCOMPARE(first->items.size(), size_t{3});
    Tensor yb = chain(b, 2.0);
    auto second = schedule_linear({yb});
    QVERIFY(second->cache_hit);
    QCOMPARE(second->items.size(), size_t{3});
    QCOMPARE(second->items[0].bufs[1].get(), b.uop().get());
    run_linear(*second);
    HostData h = yb.data();
    QCOMPARE(h.f, (std::vector<double>{87, 167, 247}));  // ((x*2+1)*2+1)*2+1
    Tensor yc = chain(b, 3.0);
    auto third = schedule_linear({yc});
    QVERIFY(!third->cache_hit);
    run_linear(*third);
    QCOMPARE(yc.data().f, (std::vector<double>{283, 553, 823}));  // ((x*3+1)*3+1)*3+1
    std::vector<const TensorData*> order;
    {
      Tensor dead = floats({5});
      for (auto& t : live_tensors()) order.push_back(t.get());
    }
    auto pos = [&](const Tensor& t) { return std::find(order.begin(), order.end(), t.data_ptr().get()) - order.begin(); };
    QVERIFY(pos(a) < pos(b) && pos(b) < pos(yb) && pos(yb) < pos(yc) && pos(yc) < static_cast<long>(order.size()));
    const size_t n = order.size();
    QCOMPARE(live_tensors().size(), n - 1);
    realize_config().device = "CPU";
  }
};

QTEST_GUILESS_MAIN(TestCodegenRegressions)
#include "test_regressions.moc"
