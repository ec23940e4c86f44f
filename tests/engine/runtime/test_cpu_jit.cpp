// Tests for the in-process CPU JIT (engine/runtime/cpu/cpu_jit.h): C and LLVM IR kernels compiled and run.
#include <QtTest/QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/runtime/compiler_hook.h"
#include "engine/runtime/cpu/cpu_jit.h"

using ts::cpu::SourceKind;

namespace {

const char* kAdd4 = R"C(
typedef float float4 __attribute__((ext_vector_type(4)));
void add4(float* restrict a, const float* restrict b, const float* restrict c) {
  for (int i = 0; i < 64; i += 4) {
    float4 x = *(const float4*)(b + i);
    float4 y = *(const float4*)(c + i);
    *(float4*)(a + i) = x + y;
  }
}
)C";

// Sum of n floats with an explicit loop (not vectorisable as-is without reassociation, so it stays a loop).
const char* kSumIr = R"IR(
define float @sum(ptr noalias %p, i32 %n) {
entry:
  %empty = icmp sle i32 %n, 0
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc.next, %loop ]
  %idx = sext i32 %i to i64
  %ptr = getelementptr inbounds float, ptr %p, i64 %idx
  %v = load float, ptr %ptr, align 4
  %acc.next = fadd float %acc, %v
  %i.next = add nsw i32 %i, 1
  %done = icmp eq i32 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi float [ 0.0, %entry ], [ %acc.next, %loop ]
  ret float %r
}
)IR";

const char* kSubIr = R"IR(
define void @E_4(ptr noalias %out, ptr noalias %a, ptr noalias %b) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %n, %loop ]
  %pa = getelementptr inbounds float, ptr %a, i64 %i
  %pb = getelementptr inbounds float, ptr %b, i64 %i
  %po = getelementptr inbounds float, ptr %out, i64 %i
  %x = load float, ptr %pa
  %y = load float, ptr %pb
  %r = fsub float %x, %y
  store float %r, ptr %po
  %n = add nuw nsw i64 %i, 1
  %d = icmp eq i64 %n, 1024
  br i1 %d, label %exit, label %loop
exit:
  ret void
}
)IR";

std::string elementwise_kernel(const std::string& name, const std::string& expr) {
  return "void " + name + "(float* restrict out, const float* restrict a, const float* restrict b) {\n"
         "  for (int i = 0; i < 1024; i++) { float x = a[i], y = b[i]; out[i] = " + expr + "; }\n}\n";
}

using Binary = void (*)(float*, const float*, const float*);

}  // namespace

class TestCpuJit : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    const auto t0 = std::chrono::steady_clock::now();
    void* p = ts::cpu::compile(SourceKind::C, elementwise_kernel("E_warm", "x + y"), "E_warm");
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    QVERIFY(p != nullptr);
    qInfo("first compile (C, 1024-element add, includes JIT/target setup): %.2f ms", ms);
    qInfo("target: %s", ts::cpu::target_description().c_str());
  }

  void cVectorKernel() {
    auto fn = reinterpret_cast<void (*)(float*, const float*, const float*)>(
        ts::cpu::compile(SourceKind::C, kAdd4, "add4"));
    QVERIFY(fn != nullptr);
    alignas(64) float a[64], b[64], c[64];
    for (int i = 0; i < 64; ++i) {
      a[i] = -1.f;
      b[i] = float(i) * 0.5f;
      c[i] = 100.f - float(i);
    }
    fn(a, b, c);
    for (int i = 0; i < 64; ++i) QCOMPARE(a[i], float(i) * 0.5f + (100.f - float(i)));
  }

  void cBuiltinsAndIeee() {
    // __builtin_sqrtf must become an instruction; __builtin_expf resolves expf from the process.
    const std::string src = R"C(
void k(float* restrict out, const float* restrict in) {
  for (int i = 0; i < 8; i++) out[i] = __builtin_sqrtf(in[i]) + __builtin_expf(in[i] * 0.0f);
  out[8] = in[8] * in[9] + in[10];   /* one expression: contracted into an fma (clang's default, as the reference's) */
  float p = in[8] * in[9];
  out[10] = p + in[10];              /* two statements: never fused */
  out[9] = 1.0f / in[11];            /* inf stays inf */
}
)C";
    auto fn = reinterpret_cast<void (*)(float*, const float*)>(ts::cpu::compile(SourceKind::C, src, "k"));
    // in[8]*in[9] = 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11: unfused gives 2^-11, a fused fma 2^-11 + 2^-24.
    float in[12] = {0, 1, 4, 9, 16, 25, 2, 3, 1.0f + 0x1p-12f, 1.0f + 0x1p-12f, -1.0f, 0.0f};
    float out[11] = {};
    fn(out, in);
    for (int i = 0; i < 8; ++i) QCOMPARE(out[i], std::sqrt(in[i]) + 1.0f);
    volatile float p = in[8] * in[9];  // rounded product, then add: unfused IEEE
    QCOMPARE(out[10], p + in[10]);
    QCOMPARE(out[10], 0x1p-11f);
    QCOMPARE(out[8], 0x1p-11f + 0x1p-24f);
    // a source that asks for unfused arithmetic (the C renderer's FP_CONTRACT=0) gets it in one expression too
    auto unfused = reinterpret_cast<void (*)(float*, const float*)>(
        ts::cpu::compile(SourceKind::C, "#pragma clang fp contract(off)\n" + src, "k"));
    float out2[11] = {};
    unfused(out2, in);
    QCOMPARE(out2[8], 0x1p-11f);
    QVERIFY(std::isinf(out[9]) && out[9] > 0);
    const std::string asmText = ts::cpu::assembly(SourceKind::C, src);
    QVERIFY2(asmText.find("sqrt") != std::string::npos, asmText.c_str());
    QVERIFY2(asmText.find("call") == std::string::npos || asmText.find("sqrtf") == std::string::npos,
             "sqrtf must not be a libcall");
  }

  void processSymbolsAndHalf() {
    // memset (large zeroing), expf and float->half conversion: whatever libcalls these become must resolve.
    const std::string src = R"C(
void z(float* restrict a, _Float16* restrict h, const float* restrict f, int n) {
  __builtin_memset(a, 0, (unsigned long)n * 4);
  for (int i = 0; i < n; i++) h[i] = (_Float16)__builtin_expf(f[i]);
}
)C";
    auto fn = reinterpret_cast<void (*)(float*, uint16_t*, const float*, int)>(ts::cpu::compile(SourceKind::C, src, "z"));
    std::vector<float> a(4096, 7.f), f(4096, 0.f);
    std::vector<uint16_t> h(4096, 0);
    f[1] = std::log(1.5f);
    fn(a.data(), h.data(), f.data(), 4096);
    QVERIFY(std::all_of(a.begin(), a.end(), [](float v) { return v == 0.f; }));
    QCOMPARE(h[0], uint16_t(0x3C00));  // 1.0 in binary16
    QCOMPARE(h[1], uint16_t(0x3E00));  // 1.5 in binary16
  }

  void irLoopKernel() {
    auto fn = reinterpret_cast<float (*)(const float*, int)>(ts::cpu::compile(SourceKind::LlvmIr, kSumIr, "sum"));
    QVERIFY(fn != nullptr);
    std::vector<float> v(1000);
    for (int i = 0; i < 1000; ++i) v[i] = float(i % 7);
    float expect = 0.f;
    for (float x : v) expect += x;  // same sequential order as the kernel (integers: exact anyway)
    QCOMPARE(fn(v.data(), 1000), expect);
    QCOMPARE(fn(v.data(), 0), 0.f);
    QCOMPARE(fn(v.data(), 3), 0.f + 1.f + 2.f);
  }

  void sameSymbolDifferentSources() {
    auto add = reinterpret_cast<Binary>(ts::cpu::compile(SourceKind::C, elementwise_kernel("E_4", "x + y"), "E_4"));
    auto mul = reinterpret_cast<Binary>(ts::cpu::compile(SourceKind::C, elementwise_kernel("E_4", "x * y"), "E_4"));
    auto sub = reinterpret_cast<Binary>(ts::cpu::compile(SourceKind::LlvmIr, kSubIr, "E_4"));
    QVERIFY(add && mul && sub);
    QVERIFY(add != mul && mul != sub && add != sub);
    std::vector<float> a(1024), b(1024), o1(1024), o2(1024), o3(1024);
    for (int i = 0; i < 1024; ++i) {
      a[i] = float(i);
      b[i] = 3.f;
    }
    add(o1.data(), a.data(), b.data());
    mul(o2.data(), a.data(), b.data());
    sub(o3.data(), a.data(), b.data());
    for (int i = 0; i < 1024; ++i) {
      QCOMPARE(o1[i], float(i) + 3.f);
      QCOMPARE(o2[i], float(i) * 3.f);
      QCOMPARE(o3[i], float(i) - 3.f);
    }
  }

  void syntaxErrorThrows() {
    const std::string bad = "void broken(float* a) {\n  a[0] = 1.0f\n  a[1] = oops_undeclared;\n}\n";
    bool threw = false;
    try {
      ts::cpu::compile(SourceKind::C, bad, "broken");
    } catch (const std::runtime_error& e) {
      threw = true;
      const std::string msg = e.what();
      QVERIFY2(msg.find("kernel.c:2") != std::string::npos, msg.c_str());
      QVERIFY2(msg.find("expected ';'") != std::string::npos, msg.c_str());
      QVERIFY2(msg.find("oops_undeclared") != std::string::npos, msg.c_str());
    }
    QVERIFY(threw);

    threw = false;
    try {
      ts::cpu::compile(SourceKind::LlvmIr, "define void @f() {\n  ret i32 0\n}\n", "f");
    } catch (const std::runtime_error& e) {
      threw = true;
      QVERIFY2(std::string(e.what()).find("kernel.ll:2") != std::string::npos, e.what());
    }
    QVERIFY(threw);

    threw = false;
    try {
      ts::cpu::compile(SourceKind::C, "void present(void) {}\n", "absent");
    } catch (const std::runtime_error& e) {
      threw = true;
      QVERIFY2(std::string(e.what()).find("absent") != std::string::npos, e.what());
    }
    QVERIFY(threw);

    threw = false;  // a reference the process cannot resolve fails at materialisation, not with a crash
    try {
      ts::cpu::compile(SourceKind::C, "float ts_no_such_fn(float);\nfloat g(float x) { return ts_no_such_fn(x); }\n", "g");
    } catch (const std::runtime_error& e) {
      threw = true;
      QVERIFY2(std::string(e.what()).find("ts_no_such_fn") != std::string::npos, e.what());
    }
    QVERIFY(threw);
  }

  void assemblyHasLabel() {
    const std::string a = ts::cpu::assembly(SourceKind::C, kAdd4);
    QVERIFY2(a.find("add4:") != std::string::npos, a.c_str());
    QVERIFY(a.find("vaddps") != std::string::npos || a.find("addps") != std::string::npos);
    const std::string b = ts::cpu::assembly(SourceKind::LlvmIr, kSumIr);
    QVERIFY2(b.find("sum:") != std::string::npos, b.c_str());
  }

  void concurrentCompiles() {
    constexpr int kThreads = 4, kPerThread = 5;
    std::atomic<int> ok{0};
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &ok, &errors] {
        try {
          for (int k = 0; k < kPerThread; ++k) {
            const float c = float(t * 100 + k);
            const std::string expr = "x * y + " + std::to_string(t * 100 + k) + ".0f";
            void* p = t % 2 ? ts::cpu::compile(SourceKind::C, elementwise_kernel("E_4", expr), "E_4")
                            : ts::cpu::compile(SourceKind::LlvmIr, kSumIr, "sum");
            if (t % 2) {
              std::vector<float> a(1024, 2.f), b(1024, 5.f), o(1024, 0.f);
              reinterpret_cast<Binary>(p)(o.data(), a.data(), b.data());
              if (!std::all_of(o.begin(), o.end(), [&](float v) { return v == 10.f + c; }))
                throw std::runtime_error("wrong result");
            } else {
              std::vector<float> v(100, 1.5f);
              if (reinterpret_cast<float (*)(const float*, int)>(p)(v.data(), 100) != 150.f)
                throw std::runtime_error("wrong sum");
            }
            ok.fetch_add(1);
          }
        } catch (const std::exception& e) {
          errors[t] = e.what();
        }
      });
    }
    for (auto& th : threads) th.join();
    for (const auto& e : errors) QVERIFY2(e.empty(), e.c_str());
    QCOMPARE(ok.load(), kThreads * kPerThread);
  }

  // C front ends run one at a time: each thread's compile_wait_seconds() counts its wait for another's (what the
  // trace leaves out of a kernel's compile span). Four threads released together on fresh sources: some wait, and
  // none waits longer than its whole compile took
  void frontend_waits_are_counted() {
    constexpr int kThreads = 4;
    std::vector<double> wait(kThreads), took(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([t, &wait, &took, &ready] {
        std::string body;
        for (int k = 0; k < 200; ++k) body += " * (y + " + std::to_string(t * 1000 + k) + ".5f)";
        const std::string src = elementwise_kernel("E_wait", "x" + body);
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        ts::compile_wait_seconds() = 0;
        const auto t0 = std::chrono::steady_clock::now();
        ts::cpu::compile(SourceKind::C, src, "E_wait");
        took[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        wait[t] = ts::compile_wait_seconds();
      });
    for (auto& th : threads) th.join();
    QVERIFY(*std::max_element(wait.begin(), wait.end()) > 0);
    for (int t = 0; t < kThreads; ++t) QVERIFY2(wait[t] >= 0 && wait[t] <= took[t], qPrintable(QString("thread %1: waited %2 s of %3 s").arg(t).arg(wait[t]).arg(took[t])));
  }

  void timing() {
    // Median compile time of a small elementwise kernel after the first, for both paths.
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::vector<double> c, ir;
    for (int i = 0; i < 21; ++i) {
      const std::string src = elementwise_kernel("E_t", "x + y * " + std::to_string(i) + ".0f");
      auto t0 = std::chrono::steady_clock::now();
      QVERIFY(ts::cpu::compile(SourceKind::C, src, "E_t"));
      c.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    for (int i = 0; i < 21; ++i) {
      const std::string src = std::string(kSubIr) + "; variant " + std::to_string(i) + "\n";
      auto t0 = std::chrono::steady_clock::now();
      QVERIFY(ts::cpu::compile(SourceKind::LlvmIr, src, "E_4"));
      ir.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    qInfo("median compile: C %.2f ms, LLVM IR %.2f ms (21 each)", median(c), median(ir));
  }
};

QTEST_GUILESS_MAIN(TestCpuJit)
#include "test_cpu_jit.moc"
