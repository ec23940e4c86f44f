// Seeded random programs (fuzz.h: every ALU op and dtype, casts, reductions, movement ops, matmul, cumsum,
// where/compare, realize boundaries) run on DEV=CPU (C through clang + JIT), DEV=CPU:LLVM, INTERP:GPU, VULKAN
// (lavapipe: GLSL, the GPU path) and DEV=INTERP (the reference interpreter over the same lowered program) and must agree: ints bitwise, floats within a few ULPs of
// their dtype, NaN equal to NaN. A program that runs past its time limit fails the test with its seed (a watchdog
// ends the process: a hang must not wait for ctest's timeout). `make fuzz` runs the same programs by the thousand.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "engine/realize/realize.h"
#include "engine/tensor/tensor.h"
#include "fuzz.h"

using namespace ts;

namespace {

constexpr uint32_t kPrograms = 1000;  // seeds 1..kPrograms
constexpr int kProgramTimeoutS = 30;

std::atomic<int64_t> g_running_seed{-1};
std::atomic<int64_t> g_started_ms{0};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void start_watchdog() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::thread([] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        int64_t s = g_running_seed.load();
        if (s >= 0 && now_ms() - g_started_ms.load() > kProgramTimeoutS * 1000) {
          std::fprintf(stderr, "FAIL: the program of seed %lld runs past %d s (reproduce: FUZZ_SEED=%lld FUZZ_COUNT=1 make fuzz)\n",
                       static_cast<long long>(s), kProgramTimeoutS, static_cast<long long>(s));
          std::fflush(stderr);
          std::_Exit(1);
        }
      }
    }).detach();
  });
}

}  // namespace

class TestDifferential : public QObject {
  Q_OBJECT
  QSet<uint32_t> vulkan_known_;
 private slots:
  void initTestCase() {
    fuzz::init();
    start_watchdog();
    // seeds whose VULKAN results are known to differ (every other device must still agree on them)
    QFile f(QStringLiteral(TS_SOURCE_DIR "/tests/engine/differential/vulkan_known_failures.txt"));
    QVERIFY2(f.open(QIODevice::ReadOnly | QIODevice::Text), "cannot read vulkan_known_failures.txt");
    for (const QString& raw : QString::fromUtf8(f.readAll()).split('\n')) {
      const QString line = raw.section('#', 0, 0).trimmed();
      if (!line.isEmpty()) vulkan_known_.insert(line.toUInt());
    }
  }
  void random_programs_agree_data() {
    QTest::addColumn<uint32_t>("seed");
    for (uint32_t s = 1; s <= kPrograms; ++s) QTest::newRow(qPrintable(QString("seed %1").arg(s))) << s;
  }
  void random_programs_agree() {
    QFETCH(uint32_t, seed);
    g_started_ms = now_ms();
    g_running_seed = seed;
    fuzz::Outcome o = fuzz::run_program(seed);
    g_running_seed = -1;
    const std::string vk = "seed " + std::to_string(seed) + ": VULKAN ";
    if (vulkan_known_.contains(seed)) {
      QVERIFY2(!o.ok, qPrintable(QStringLiteral("seed %1 now agrees on VULKAN: remove it from vulkan_known_failures.txt").arg(seed)));
      QVERIFY2(o.what.rfind(vk, 0) == 0, o.what.c_str());  // only VULKAN may differ
      return;
    }
    QVERIFY2(o.ok, o.what.c_str());
  }
  // the generator is deterministic: a seed is one program (its printed source reproduces a failure)
  void a_seed_is_one_program() {
    fuzz::use_device("INTERP");
    fuzz::Program a = fuzz::build(12345), b = fuzz::build(12345), c = fuzz::build(12346);
    QCOMPARE(QString::fromStdString(a.source), QString::fromStdString(b.source));
    QVERIFY(a.source != c.source);
    QVERIFY(a.source.find("from tinygrad import Tensor, dtypes") == 0);
    QVERIFY(a.ops >= 2);
  }
  // the programs cover what the fuzzer promises: every op family and every dtype appears in the first programs
  void programs_cover_ops_and_dtypes() {
    fuzz::use_device("INTERP");
    std::string all;
    for (uint32_t s = 1; s <= kPrograms; ++s) all += fuzz::build(s).source;
    for (const char* needle : {" // ", " % ", " << ", " >> ", " & ", " | ", " ^ ", " ** ", " @ ", " < ", " == ", ".where(", ".sum(", ".max(",
                               ".prod(", ".cumsum(", ".argmax(", ".pad(", ".shrink(", ".flip(", ".permute(", ".reshape(", ".expand(",
                               ".cast(", ".bitcast(", ".contiguous()", ".realize()", "keepdim=True", "float('nan')", ".exp2()",
                               "dtypes.bool", "dtypes.int8", "dtypes.uint8", "dtypes.int16", "dtypes.uint16", "dtypes.int32",
                               "dtypes.uint32", "dtypes.int64", "dtypes.uint64", "dtypes.float16", "dtypes.bfloat16",
                               "dtypes.float64"})
      QVERIFY2(all.find(needle) != std::string::npos, needle);
  }
  // an independent oracle for one program: a matmul computed by hand
  void matmul_against_hand_computation() {
    fuzz::use_device("CPU");
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
