// Math where lavapipe's GLSL builtins or optimizer differ from C: each computed on VULKAN and compared with the
// interpreter (exact std::sin / std::pow / IEEE arithmetic) or a hand value. The fuzzer's seeds 20001..30000 found them.
#include <QtTest>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/codegen/opt.h"
#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/runtime/cpu/install.h"
#include "engine/runtime/vulkan/vulkan_device.h"
#include "engine/tensor/tensor.h"

using namespace ts;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

Tensor values(const std::vector<double>& v, DType dt) {
  HostData h;
  h.shape = {static_cast<int64_t>(v.size())};
  h.dtype = dt;
  if (is_float(dt)) h.f = v;
  else
    for (double x : v) h.i.push_back(static_cast<int64_t>(x));
  return Tensor::from_host(h);
}

HostData on(const std::string& dev, Tensor (*f)()) {
  realize_config().device = dev;
  return f().data();
}

// float results within `rel` of the interpreter's (NaN only where it has NaN); integer results equal
void same_as_interp(Tensor (*f)(), double rel, const char* what) {
  HostData want = on("INTERP", f), got = on("VULKAN", f);
  QCOMPARE(got.i, want.i);
  QCOMPARE(got.f.size(), want.f.size());
  for (size_t k = 0; k < want.f.size(); ++k) {
    double x = want.f[k], y = got.f[k];
    bool ok = std::isnan(x) ? std::isnan(y) : (x == y || std::fabs(x - y) <= rel * std::fabs(x));
    QVERIFY2(ok, qPrintable(QString("%1 element %2: VULKAN %3, INTERP %4").arg(what).arg(k).arg(y, 0, 'g', 17).arg(x, 0, 'g', 17)));
  }
}

// sin at every magnitude: lavapipe's GLSL sin gave -1.0 or 1.0 past a few thousand
// n floats of many magnitudes (the order of their sum matters)
std::vector<double> spread_values(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((i * 7919) % 1000 - 500) * std::pow(2.0, static_cast<double>(i % 13) - 6));
  return v;
}

Tensor sin_large() {
  return values({0.5, -3.0, 29.9, 30.0, 1000.5, 39800.0, 40000.0, 12345.678, 3e9, -3e9, 1e30, -1e30, 3.4e38, kInf, -kInf, NAN}, dtypes::float32).sin();
}
Tensor sin_half() { return values({0.5, -3.0, 100.0, 1000.0, 39800.0, 65504.0}, dtypes::float16).sin(); }
// exp2 within the polynomial's ulp (lavapipe's builtin is off by up to 3 ulps, 2^0.5 squared truncated to 1)
Tensor exp2_values() { return values({0.5, -0.5, 1.0 / 3, 10.25, -20.75, 100.3, 127.9, -125.5}, dtypes::float32).exp2(); }
// pow: 5^2 was 24.999998 (its int64 cast 24), 65504^1 in half was inf
Tensor pow_int() {
  return (values({5.0, 5.0, 2.0, 3.0, 7.0, 65504.0}, dtypes::float32).pow(values({2.0, 5.0, 10.0, 3.0, 0.5, 1.75}, dtypes::float32))).cast(dtypes::int64);
}
Tensor pow_half() { return values({65504.0, 2.0, 0.5, -0.0, -2.0}, dtypes::float16).pow(values({1.0, 15.0, 3.0, 3.0, 3.0}, dtypes::float16)); }
// int32 widened to int64 then compared (lavapipe: int64_t(-2) < 0l was false, and float(int64_t(-2)) < 0.0f)
Tensor widened_compare() {
  Tensor w = values({-2, -3, 9, 2, -2147483648.0, 2147483647.0}, dtypes::int32).cast(dtypes::int64);
  return w.lt(Tensor::scalar(0.0, dtypes::weakfloat)).where(w, Tensor::scalar(7.0, dtypes::int64));
}
// inf * a + inf * b with a + b > 0 but inf*a = -inf: NaN, not inf (lavapipe's optimizer factored it into inf*(a+b))
Tensor inf_products() {
  Tensor inf = values({kInf}, dtypes::float32).reshape({1, 1});
  return inf.matmul(values({-1.0, -1.25, 3e9, -0.75, 0.0}, dtypes::float32).reshape({1, 5})).cumsum(1);
}

// float64 exp2, log2, sin and pow, which GLSL lacks: the reference's float64 polynomials, and for sin past 30 a
// Payne-Hanek reduction that keeps all 53 bits at every magnitude (sin(1e22) = -0.8522008497671888, the double
// nearest a multiple of pi/2, 6381956970095103 * 2^797, gives cos of 4.7e-19: 1)
Tensor f64_args() {
  return values({0.5, -0.0, 1e-310, 3.0, 30.0, 1023.9, 1024.0, -1074.5, -2000.0, 1e-5, 12345.678, 1e14, 1e22, 0x1.6ac5b262ca1ffp+849,
                 1.7976931348623157e308, kInf, -kInf, NAN},
                dtypes::float64);
}
Tensor sin_f64() { return f64_args().sin(); }
Tensor exp2_f64() { return f64_args().exp2(); }
Tensor log2_f64() { return f64_args().log2(); }
Tensor pow_f64() {
  return values({2.0, -2.0, -2.0, -8.0, 0.0, -0.0, -0.0, 10.0, 1e-300, kInf, -kInf, NAN, 1.0, 7.5, -3.0}, dtypes::float64)
      .pow(values({0.5, 3.0, 0.5, 1.0 / 3, -1.0, -1.0, 3.0, -300.0, -1.0, -2.0, 3.0, 0.0, NAN, 2.5, 1e20}, dtypes::float64));
}

// matmul operands of small multiples of 1/4 (every product and partial sum exact in fp32: any order gives the same bits)
Tensor quarters(std::vector<int64_t> shape, int64_t mod, int64_t off) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((i * 5 + i / 7) % mod - off) * 0.25);
  return values(v, dtypes::float32).reshape(shape);
}
Tensor mm_plain() { return quarters({256, 192}, 9, 4).matmul(quarters({192, 320}, 7, 3)); }
Tensor mm_a_transposed() { return quarters({192, 256}, 9, 4).transpose().matmul(quarters({192, 320}, 7, 3)); }
Tensor mm_square_of_itself() {
  Tensor x = quarters({256, 256}, 5, 2);
  return x.matmul(x);
}
Tensor mm_itself_transposed() {
  Tensor x = quarters({256, 256}, 5, 2);
  return x.matmul(x.transpose());
}
Tensor mm_batched() { return quarters({2, 128, 96}, 9, 4).matmul(quarters({2, 96, 256}, 7, 3)); }
Tensor mm_odd() { return quarters({96, 60}, 9, 4).matmul(quarters({60, 84}, 7, 3)); }

}  // namespace

class TestVulkanMath : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    cpu::install();
    register_host_devices();
    install_realize();
    realize_config().debug = 0;
    vk::DeviceOptions o;
    std::string why;
    QVERIFY2(vk::register_vulkan_devices(o, &why) > 0, why.c_str());
  }
  void sin_of_large_arguments() {
    same_as_interp(sin_large, 4e-6, "sin float32");
    same_as_interp(sin_half, 2e-3, "sin float16");
  }
  void exp2_within_an_ulp() { same_as_interp(exp2_values, 1.5e-7, "exp2"); }
  void pow_correctly_rounded() {
    HostData h = on("VULKAN", pow_int);
    QCOMPARE(h.i, (std::vector<int64_t>{25, 3125, 1024, 27, 2, 268206128}));  // 7^0.5 = 2.6458, 65504^1.75 by hand: 268206128
    same_as_interp(pow_half, 0, "pow float16");
  }
  void int64_widening_compares() {
    HostData h = on("VULKAN", widened_compare);
    QCOMPARE(h.i, (std::vector<int64_t>{-2, -3, 7, 7, -2147483648ll, 7}));
  }
  void inf_minus_inf_is_nan() { same_as_interp(inf_products, 0, "inf products"); }
  // rows read by the whole work group (ROW_READS=1: the pass is for GPUs, lavapipe is a CPU's driver): the sum of
  // 2^23 floats (its first kernel r_512_32_4_32_4), a 16384 x 512 row mean (r_128_32_4_128_4) and an 8192 x 1024
  // softmax (its max and its sum of exps r_64_32_4_256_4, the latter reading the row max once a row) and a 16384 x 512
  // row max: the interpreter's values within float rounding, as without the pass
  void row_reads_results() {
    for (Tensor (*f)() : {+[] { return values(spread_values(1 << 23), dtypes::float32).sum(); },
                          +[] { return values(spread_values(1 << 23), dtypes::float32).reshape({16384, 512}).mean(std::vector<int64_t>{1}); },
                          +[] { return values(spread_values(1 << 23), dtypes::float32).reshape({8192, 1024}).softmax(); },
                          +[] { return values(spread_values(1 << 23), dtypes::float32).reshape({16384, 512}).max(std::vector<int64_t>{1}); }}) {
      codegen_options()["ROW_READS"] = "1";
      const HostData shared = on("VULKAN", f);
      codegen_options().erase("ROW_READS");
      const HostData plain = on("VULKAN", f), want = on("INTERP", f);
      QCOMPARE(shared.f.size(), want.f.size());
      for (size_t k = 0; k < want.f.size(); ++k) {
        QVERIFY(std::fabs(shared.f[k] - want.f[k]) <= 1e-5 * std::max(1.0, std::fabs(want.f[k])));
        QVERIFY(std::fabs(plain.f[k] - want.f[k]) <= 1e-5 * std::max(1.0, std::fabs(want.f[k])));
      }
    }
  }
  // fp32 matmuls with their tiles staged in shared memory (test_tensor_core staged_fp32_matmul: the default opts of
  // the first three render them staged): A row- and column-major, both operands one buffer (B transposed too), a batch, odd sizes; the
  // interpreter's bits, and the same with STAGE_MATMUL=0
  void staged_matmul_results() {
    for (Tensor (*f)() : {mm_plain, mm_a_transposed, mm_square_of_itself, mm_itself_transposed, mm_batched, mm_odd}) {
      same_as_interp(f, 0, "staged matmul");
      codegen_options()["STAGE_MATMUL"] = "0";
      same_as_interp(f, 0, "matmul, STAGE_MATMUL=0");
      codegen_options().erase("STAGE_MATMUL");
    }
  }
  void float64_transcendentals() {
    same_as_interp(sin_f64, 4e-15, "sin float64");
    same_as_interp(exp2_f64, 4e-16, "exp2 float64");
    same_as_interp(log2_f64, 4e-16, "log2 float64");
    same_as_interp(pow_f64, 1e-14, "pow float64");
    HostData h = on("VULKAN", pow_f64);  // -0 ** -1 and -0 ** 3 keep the sign
    QCOMPARE(h.f[5], -kInf);
    QVERIFY(h.f[6] == 0 && std::signbit(h.f[6]));
  }
};

QTEST_GUILESS_MAIN(TestVulkanMath)
#include "test_vulkan_math.moc"
