// Tests of the Vulkan runtime (engine/runtime/vulkan/vulkan.h) on lavapipe: enumeration, transfers, compiles and
// their caches, dispatches, barriers, timestamps, copies, timeouts and errors, each checked against a host
// computation. Every test function ends with zero validation-layer warnings and errors on every context it used.
#include <QtTest/QtTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>

#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"

using namespace ts::vk;

namespace {

const char* kAdd = R"(#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer O { float o[]; };
layout(set = 0, binding = 1) readonly buffer A { float a[]; };
layout(set = 0, binding = 2) readonly buffer B { float b[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < o.length()) o[i] = a[i] + b[i];
}
)";

// out = in OP k: one input, one output
std::string unary(const std::string& expr) {
  return "#version 450\nlayout(local_size_x = 64) in;\n"
         "layout(set = 0, binding = 0) writeonly buffer O { float o[]; };\n"
         "layout(set = 0, binding = 1) readonly buffer A { float a[]; };\n"
         "void main() { uint i = gl_GlobalInvocationID.x; if (i < o.length()) o[i] = " + expr + "; }\n";
}

const char* kIncrement = R"(#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < x.length()) x[i] += 1u; }
)";

const char* kPush = R"(#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { int a; int b; int64_t c; } p;
layout(set = 0, binding = 0) writeonly buffer O { int64_t o[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < o.length()) o[i] = int64_t(p.a) * int64_t(i) + int64_t(p.b) + p.c;
}
)";

const char* kHalfMul = R"(#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer O { float16_t o[]; };
layout(set = 0, binding = 1) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 2) readonly buffer B { float16_t b[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < o.length()) o[i] = a[i] * b[i]; }
)";

const char* kInt64 = R"(#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { int64_t c; } p;
layout(set = 0, binding = 0) writeonly buffer O { int64_t o[]; };
layout(set = 0, binding = 1) readonly buffer A { int64_t a[]; };
void main() { uint i = gl_GlobalInvocationID.x; if (i < o.length()) o[i] = a[i] * 3l + p.c; }
)";

// A long loop (an LCG) in each of many invocations: long enough to outlast a 1 ms timeout. lavapipe ends a shader's
// loops after 65535 iterations in all (DeviceInfo::loop_iteration_limit), so each invocation stays below that.
const char* kSpin = R"(#version 450
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint iters; } p;
layout(set = 0, binding = 0) writeonly buffer O { uint o[]; };
layout(set = 0, binding = 1) readonly buffer I { uint seed; };
void main() {
  uint x = seed;
  for (uint i = 0u; i < p.iters; i++) x = x * 1664525u + 1013904223u;
  o[gl_GlobalInvocationID.x] = x;
}
)";

uint32_t lcg(uint32_t x, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
  return x;
}

uint32_t groups_for(uint64_t n, uint32_t local = 64) { return static_cast<uint32_t>((n + local - 1) / local); }

uint16_t to_half(float f) {  // round to nearest even
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (e == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  int exp = static_cast<int>(e) - 127 + 15;
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  uint32_t h, rem, halfway;
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    int shift = 14 - exp;
    h = mant >> shift;
    rem = mant & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  } else {
    h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    rem = mant & 0x1fff;
    halfway = 0x1000;
  }
  if (rem > halfway || (rem == halfway && (h & 1))) h++;
  return static_cast<uint16_t>(sign | h);
}
float from_half(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0) return (sign ? -1.f : 1.f) * std::ldexp(static_cast<float>(m), -24);
  uint32_t x = e == 31 ? sign | 0x7f800000 | (m << 13) : sign | ((e - 15 + 127) << 23) | (m << 13);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -100.f, float hi = 100.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(rng());
  return v;
}

// What a failed expectation of an Error says, for the test log.
template <class F>
QString error_of(F&& f) {
  try {
    f();
  } catch (const ts::Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

QString messages_text(const ValidationMessages& m) {
  QStringList l;
  for (const auto& s : m.last) l << QString::fromStdString(s);
  return QString("%1 errors, %2 warnings: %3").arg(m.errors).arg(m.warnings).arg(l.join(" | "));
}

#define EXPECT_ERROR(expr, ...)                                                                       \
  do {                                                                                                \
    QString msg_ = error_of([&] { expr; });                                                           \
    QVERIFY2(!msg_.isEmpty(), "no ts::Error from " #expr);                                            \
    for (const char* part : {__VA_ARGS__})                                                            \
      QVERIFY2(msg_.contains(QString::fromUtf8(part)), qPrintable("'" + msg_ + "' lacks '" + part + "'")); \
  } while (0)

#define EXPECT_CLEAN(ctx)                                                                             \
  do {                                                                                                \
    auto m_ = (ctx).validation_messages();                                                            \
    QVERIFY2(m_.count() == 0, qPrintable(messages_text(m_)));                                         \
  } while (0)

}  // namespace

class TestVulkanRuntime : public QObject {
  Q_OBJECT
  int lvp_ = -1;
  std::shared_ptr<Context> ctx_;
  OpenOptions base_;

  template <class T>
  DeviceBuffer upload(const std::vector<T>& v) {
    DeviceBuffer b = ctx_->alloc(v.size() * sizeof(T));
    ctx_->copy_in(b, v.data(), v.size() * sizeof(T));
    return b;
  }
  template <class T>
  std::vector<T> download(const DeviceBuffer& b) {
    std::vector<T> v(b.size() / sizeof(T));
    ctx_->copy_out(v.data(), b, v.size() * sizeof(T));
    return v;
  }
  Program program(const std::string& src, const std::string& name, uint32_t n, uint32_t k = 0) {
    return ctx_->program(ctx_->compile_glsl(src, name), name, n, k);
  }

 private slots:
  void initTestCase() {
    // The loader unloads the driver and the layer with each instance; kept loaded, what they keep until exit stays
    // attributable to them (a sanitizer build's leak check suppresses it by library name, tests/sanitizers/).
    for (const char* lib : {"/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so", "libVkLayer_khronos_validation.so"})
      dlopen(lib, RTLD_NOW | RTLD_NODELETE);
    std::string reason;
    auto devs = enumerate_devices(&reason);
    for (const auto& d : devs)
      if (d.type == "cpu" && lvp_ < 0) lvp_ = d.index;
    QVERIFY2(lvp_ >= 0, qPrintable("no lavapipe device: " + QString::fromStdString(reason)));
    base_.validation = true;
    ctx_ = open_device(lvp_, base_);
    QVERIFY(ctx_->validation_active());
  }
  void cleanup() {  // each test function answers for its own messages
    ValidationMessages m = ctx_->validation_messages();
    ctx_->clear_validation_messages();
    QVERIFY2(m.count() == 0, qPrintable(messages_text(m)));
  }

  void enumerate() {
    std::string reason = "unset";
    auto devs = enumerate_devices(&reason);
    QVERIFY(reason.empty());
    const DeviceInfo& d = devs.at(lvp_);
    QCOMPARE(d.index, lvp_);
    QCOMPARE(d.type, std::string("cpu"));
    QVERIFY2(d.name.find("llvmpipe") != std::string::npos, d.name.c_str());
    QCOMPARE(d.driver_name, std::string("llvmpipe"));
    QVERIFY(d.api_version_raw >= ((1u << 22) | (3u << 12)));  // 1.3
    QCOMPARE(d.subgroup_size, 8u);
    QCOMPARE(d.max_storage_buffer_range, uint64_t(128) << 20);
    QCOMPARE(d.max_workgroup_invocations, 1024u);
    QVERIFY(d.max_workgroup_size[0] >= 1024 && d.max_workgroup_count[0] >= 65535);
    QVERIFY(d.max_shared_memory >= 16384 && d.max_push_constants_size >= 128);
    QVERIFY(d.max_allocation_size >= d.max_storage_buffer_range && d.device_local_heap_size > 0);
    QVERIFY(d.unified_memory);
    QVERIFY(d.compute_timestamps && d.timestamp_valid_bits == 64 && d.timestamp_period_ns > 0);
    QVERIFY(d.float16 && d.int8 && d.int16 && d.int64 && d.float64);
    QVERIFY(d.storage_buffer_8bit && d.storage_buffer_16bit);
    QVERIFY(!d.cooperative_matrix && d.cooperative_matrix_shapes.empty());  // lavapipe 22.3 has no coopmat
    // float controls: lavapipe offers no way to keep float32 denormals (and it flushes them: softmax's last row in
    // test_compare), rounds to nearest even
    QVERIFY(d.float_controls);
    QVERIFY(!d.denorm_preserve[1]);
    QVERIFY(d.round_rte[1]);
    // the test restricts the loader to lavapipe: it is the only device, and the default
    QCOMPARE(devs.size(), size_t(1));
    QCOMPARE(default_device_index(devs), lvp_);
    std::string text = print_device_info(d);
    QVERIFY2(text.find("llvmpipe") != std::string::npos && text.find("subgroup 8") != std::string::npos, text.c_str());
    QCOMPARE(ctx_->info().name, d.name);
    QVERIFY(ctx_->direct_transfers());  // lavapipe's memory is host-visible: no staging
  }

  void default_device() {
    auto dev = [](int i, const char* type) {
      DeviceInfo d;
      d.index = i;
      d.type = type;
      return d;
    };
    QCOMPARE(default_device_index({}), -1);
    QCOMPARE(default_device_index({dev(0, "cpu"), dev(1, "integrated")}), 0);
    QCOMPARE(default_device_index({dev(0, "integrated"), dev(1, "discrete"), dev(2, "discrete")}), 1);
  }

  void no_driver() {
    // the loader reads its ICD list at each instance: no driver gives an empty list and a reason, never a crash
    QByteArray saved = qgetenv("VK_DRIVER_FILES");
    qputenv("VK_DRIVER_FILES", "/nonexistent/no_icd.json");
    std::string reason;
    auto devs = enumerate_devices(&reason);
    QString open_error = error_of([&] { open_device(0, OpenOptions{.cache_dir = {}, .shutdown_timeout_s = 1}); });
    qputenv("VK_DRIVER_FILES", saved);
    QVERIFY(devs.empty());
    QVERIFY2(!reason.empty(), "no reason given");
    QVERIFY2(QString::fromStdString(reason).contains("driver") || QString::fromStdString(reason).contains("device"),
             reason.c_str());
    QVERIFY2(open_error.contains("cannot open Vulkan device 0") || open_error.contains("no Vulkan device 0"),
             qPrintable(open_error));
  }

  void round_trip_odd_sizes() {
    OpenOptions staged = base_;
    staged.force_staging = true;
    staged.staging_bytes = 64 << 10;  // 1,000,003 bytes go in 16 chunks
    auto sctx = open_device(lvp_, staged);
    QVERIFY(!sctx->direct_transfers());
    QVERIFY(sctx.get() != ctx_.get());
    QCOMPARE(open_device(lvp_, staged).get(), sctx.get());  // one per device and options
    for (Context* c : {ctx_.get(), sctx.get()}) {
      for (uint64_t size : {1ull, 3ull, 7ull, 4097ull, 1000003ull}) {
        DeviceBuffer b = c->alloc(size);
        QCOMPARE(b.size(), size);
        std::vector<uint8_t> mirror = random_bytes(size, static_cast<uint32_t>(size));
        c->copy_in(b, mirror.data(), size);
        // an odd sub-range at an odd offset changes only those bytes
        uint64_t off = size / 3, n = size - off - size / 5;
        std::vector<uint8_t> patch = random_bytes(n, 99);
        c->copy_in(b, patch.data(), n, off);
        std::copy(patch.begin(), patch.end(), mirror.begin() + static_cast<long>(off));
        std::vector<uint8_t> back(size, 0xEE);
        c->copy_out(back.data(), b, size);
        QVERIFY2(back == mirror, qPrintable(QString("size %1 on %2").arg(size).arg(c->direct_transfers() ? "direct" : "staging")));
        std::vector<uint8_t> part(n);
        c->copy_out(part.data(), b, n, off);
        QVERIFY(part == patch);
      }
      DeviceBuffer z = c->alloc(0);
      QCOMPARE(z.size(), uint64_t(0));
      c->copy_in(z, nullptr, 0);
      EXPECT_ERROR(c->copy_in(z, "x", 1), "outside the 0-byte buffer");
    }
    QVERIFY(sctx->stats().staging_bytes > 0 && sctx->stats().staging_bytes <= (64u << 10));
    EXPECT_CLEAN(*sctx);
  }

  void add_one_million() {
    const size_t n = 1 << 20;
    auto a = random_floats(n, 1), b = random_floats(n, 2);
    DeviceBuffer da = upload(a), db = upload(b), dout = ctx_->alloc(n * 4);
    Program p = program(kAdd, "add", 3);
    QCOMPARE(p.local_size(), (std::array<uint32_t, 3>{64, 1, 1}));
    Batch batch = ctx_->batch();
    batch.dispatch(p, {dout, da, db}, {}, {groups_for(n), 1, 1});
    BatchResult r = batch.submit_and_wait(60);
    std::vector<float> out = download<float>(dout), want(n);
    for (size_t i = 0; i < n; i++) want[i] = a[i] + b[i];
    QVERIFY(std::memcmp(out.data(), want.data(), n * 4) == 0);  // IEEE addition: exact
    QCOMPARE(r.names, std::vector<std::string>{"add"});
    QCOMPARE(r.gpu_seconds.size(), size_t(1));
    QVERIFY2(r.gpu_seconds[0] > 0 && r.gpu_seconds[0] <= r.wall_seconds,
             qPrintable(QString("gpu %1 s, wall %2 s").arg(r.gpu_seconds[0]).arg(r.wall_seconds)));
  }

  void dependent_chain_one_batch() {
    const size_t n = 10000;
    std::vector<float> a(n);
    for (size_t i = 0; i < n; i++) a[i] = static_cast<float>(i % 1000) - 500.f;
    DeviceBuffer da = upload(a), b = ctx_->alloc(n * 4), c = ctx_->alloc(n * 4), d = ctx_->alloc(n * 4);
    Program plus1 = program(unary("a[i] + 1.0"), "plus1", 2), times2 = program(unary("a[i] * 2.0"), "times2", 2);
    Program add = program(kAdd, "add", 3);
    QCOMPARE(plus1.interface().bindings.size(), size_t(2));
    Batch batch = ctx_->batch();
    const std::array<uint32_t, 3> g{groups_for(n), 1, 1};
    batch.dispatch(plus1, {b, da}, {}, g);       // b = a + 1
    batch.dispatch(times2, {c, b}, {}, g);       // c = b * 2   (reads b: barrier)
    batch.dispatch(add, {d, c, da}, {}, g, "d"); // d = c + a   (reads c: barrier)
    QCOMPARE(batch.barrier_count(), 2u);
    BatchResult r = batch.submit_and_wait(60);
    QCOMPARE(r.barriers, 2u);
    QCOMPARE(r.names, (std::vector<std::string>{"plus1", "times2", "d"}));
    std::vector<float> out = download<float>(d);
    for (size_t i = 0; i < n; i++) QCOMPARE(out[i], (a[i] + 1.f) * 2.f + a[i]);
    for (double t : r.gpu_seconds) QVERIFY(t > 0 && t <= r.wall_seconds);

    // two dispatches that only read a shared input: no barrier
    Batch ind = ctx_->batch();
    ind.dispatch(plus1, {b, da}, {}, g);
    ind.dispatch(times2, {c, da}, {}, g);
    QCOMPARE(ind.barrier_count(), 0u);
    ind.submit_and_wait(60);
    std::vector<float> ob = download<float>(b), oc = download<float>(c);
    for (size_t i = 0; i < n; i++) QVERIFY(ob[i] == a[i] + 1.f && oc[i] == a[i] * 2.f);

    // writing a buffer an earlier dispatch read (write after read): one barrier
    Batch war = ctx_->batch();
    war.dispatch(plus1, {b, da}, {}, g);   // reads a
    war.dispatch(times2, {da, c}, {}, g);  // writes a
    QCOMPARE(war.barrier_count(), 1u);
    war.submit_and_wait(60);
    std::vector<float> oa = download<float>(da);
    ob = download<float>(b);
    for (size_t i = 0; i < n; i++) QVERIFY(ob[i] == a[i] + 1.f && oa[i] == a[i] * 4.f);

    // serialize: a barrier before every dispatch after the first, even independent ones
    Batch ser = ctx_->batch({.timestamps = true, .serialize = true});
    ser.dispatch(plus1, {b, c}, {}, g);
    ser.dispatch(times2, {d, c}, {}, g);
    QCOMPARE(ser.barrier_count(), 1u);
    ser.submit_and_wait(60);
  }

  void resubmit_runs_again() {
    const size_t n = 1000;
    std::vector<uint32_t> x(n);
    for (size_t i = 0; i < n; i++) x[i] = static_cast<uint32_t>(i * 7);
    DeviceBuffer dx = upload(x);
    Program inc = program(kIncrement, "inc", 1);
    QVERIFY(inc.interface().bindings.at(0).access == Access::ReadWrite);
    Batch batch = ctx_->batch();
    batch.dispatch(inc, {dx}, {}, {groups_for(n), 1, 1});
    batch.dispatch(inc, {dx}, {}, {groups_for(n), 1, 1});  // read-write after write: a barrier
    QCOMPARE(batch.barrier_count(), 1u);
    for (int k = 0; k < 3; k++) batch.submit_and_wait(60);
    batch.dispatch(inc, {dx}, {}, {groups_for(n), 1, 1});  // re-recorded on the next submit
    batch.submit_and_wait(60);
    std::vector<uint32_t> out = download<uint32_t>(dx);
    for (size_t i = 0; i < n; i++) QCOMPARE(out[i], x[i] + 9u);  // 3 submits of 2, then one of 3
    QCOMPARE(ctx_->batch().submit_and_wait(1).names.size(), size_t(0));  // an empty batch submits nothing
  }

  // a long schedule in pieces (as the VULKAN device submits one while it records the next): the first is submitted
  // and not waited for while the second is recorded; the second begins with a barrier (after_previous) that orders it
  // after the first, so it sees the first's writes
  void pieces_submitted_while_recording() {
    const size_t n = 100000;
    std::vector<uint32_t> x(n);
    for (size_t i = 0; i < n; i++) x[i] = static_cast<uint32_t>(i * 3);
    DeviceBuffer dx = upload(x);
    Program inc = program(kIncrement, "inc", 1);
    const std::array<uint32_t, 3> g{groups_for(n), 1, 1};
    Batch first = ctx_->batch();
    for (int k = 0; k < 8; k++) first.dispatch(inc, {dx}, {}, g);
    first.submit();
    EXPECT_ERROR(first.dispatch(inc, {dx}, {}, g), "added to a batch that is running");
    EXPECT_ERROR(first.submit(), "not waited for");
    Batch second = ctx_->batch({.timestamps = true, .serialize = false, .after_previous = true});
    second.dispatch(inc, {dx}, {}, g);
    second.dispatch(inc, {dx}, {}, g);
    QCOMPARE(second.barrier_count(), 2u);  // the first operation waits for the earlier piece, the second for the first
    second.submit();
    BatchResult r1 = first.wait(60), r2 = second.wait(60);
    QCOMPARE(r1.names.size(), size_t(8));
    QCOMPARE(r2.gpu_seconds.size(), size_t(2));
    std::vector<uint32_t> out = download<uint32_t>(dx);
    for (size_t i = 0; i < n; i++) QCOMPARE(out[i], x[i] + 10u);
    EXPECT_ERROR(second.wait(60), "not submitted");
    // waited for, a piece is submitted again as it is
    first.submit();
    first.wait(60);
    out = download<uint32_t>(dx);
    QCOMPARE(out[n - 1], x[n - 1] + 18u);
  }

  void push_constants() {
    const size_t n = 300;
    DeviceBuffer out = ctx_->alloc(n * 8);
    Program p = program(kPush, "push", 1, 16);
    QCOMPARE(p.interface().push_constant_bytes, 16u);
    const int32_t a = -7, b = 123456789;
    const int64_t c = (int64_t(1) << 40) + 3;
    PushConstants pc;
    pc.i32(a).i32(b).i64(c);
    QCOMPARE(pc.size(), size_t(16));
    Batch batch = ctx_->batch();
    batch.dispatch(p, {out}, pc.bytes(), {groups_for(n), 1, 1});
    batch.submit_and_wait(60);
    std::vector<int64_t> got = download<int64_t>(out);
    for (size_t i = 0; i < n; i++) QCOMPARE(got[i], int64_t(a) * int64_t(i) + b + c);
    // the wrong number of bytes, or a program that declares fewer than the shader's block
    EXPECT_ERROR(batch.dispatch(p, {out}, PushConstants().i32(1).bytes(), {1, 1, 1}), "4 push-constant bytes",
                 "takes 16");
    EXPECT_ERROR(program(kPush, "push8", 1, 8), "push-constant block is 16 bytes", "has 8");
    EXPECT_ERROR(program(kPush, "push6", 1, 6), "multiple of 4");
    EXPECT_ERROR(program(kPush, "push4k", 1, 4096), "maxPushConstantsSize");
  }

  void float16_kernel() {
    if (!ctx_->info().float16 || !ctx_->info().storage_buffer_16bit) QSKIP("no shaderFloat16 / 16-bit storage");
    const size_t n = 4096;
    std::vector<uint16_t> a(n), b(n);
    auto fa = random_floats(n, 3, -8.f, 8.f), fb = random_floats(n, 4, -8.f, 8.f);
    for (size_t i = 0; i < n; i++) {
      a[i] = to_half(fa[i]);
      b[i] = to_half(fb[i]);
    }
    DeviceBuffer da = upload(a), db = upload(b), dout = ctx_->alloc(n * 2);
    Program p = program(kHalfMul, "mul_half", 3);
    Batch batch = ctx_->batch();
    batch.dispatch(p, {dout, da, db}, {}, {groups_for(n), 1, 1});
    batch.submit_and_wait(60);
    std::vector<uint16_t> out = download<uint16_t>(dout);
    for (size_t i = 0; i < n; i++)  // the product of two halves is exact in float: one rounding to half
      QCOMPARE(out[i], to_half(from_half(a[i]) * from_half(b[i])));
  }

  void int64_kernel() {
    if (!ctx_->info().int64) QSKIP("no shaderInt64");
    const size_t n = 2048;
    std::mt19937_64 rng(5);
    std::vector<int64_t> a(n);
    for (auto& x : a) x = static_cast<int64_t>(rng());  // products wrap: two's complement on both sides
    const int64_t c = -(int64_t(1) << 50) + 11;
    DeviceBuffer da = upload(a), dout = ctx_->alloc(n * 8);
    Program p = program(kInt64, "int64", 2, 8);
    Batch batch = ctx_->batch();
    batch.dispatch(p, {dout, da}, PushConstants().i64(c).bytes(), {groups_for(n), 1, 1});
    batch.submit_and_wait(60);
    std::vector<int64_t> out = download<int64_t>(dout);
    for (size_t i = 0; i < n; i++)
      QCOMPARE(out[i], static_cast<int64_t>(static_cast<uint64_t>(a[i]) * 3u + static_cast<uint64_t>(c)));
  }

  void compile_error_names_line() {
    uint64_t before = ctx_->compiler().stats().compiles;
    const std::string bad = "#version 450\nlayout(local_size_x = 1) in;\n"
                            "layout(set = 0, binding = 0) buffer O { float o[]; };\n"
                            "void main() {\n  o[0] = undefined_thing;\n}\n";
    EXPECT_ERROR(ctx_->compile_glsl(bad, "broken_kernel"), "broken_kernel", "0:5:", "undefined_thing");
    QCOMPARE(ctx_->compiler().stats().compiles, before + 1);
  }

  void disassembly_and_reflection() {
    SpirvBinary s = ctx_->compile_glsl(kAdd, "add");
    std::string text = disassemble(s);
    QVERIFY2(text.find("OpEntryPoint GLCompute") != std::string::npos, text.substr(0, 400).c_str());
    QVERIFY(validate_spirv(s).empty());
    ShaderInterface si = reflect(s, "add");
    QCOMPARE(si.entry_point, std::string("main"));
    QCOMPARE(si.local_size, (std::array<uint32_t, 3>{64, 1, 1}));
    QCOMPARE(si.bindings.size(), size_t(3));
    for (const auto& b : si.bindings) {
      QCOMPARE(b.kind, std::string("storage buffer"));
      QVERIFY(b.access == (b.binding == 0 ? Access::Write : Access::Read));
    }
    EXPECT_ERROR(reflect(SpirvBinary{{1, 2, 3, 4, 5}}, "junk"), "junk", "malformed SPIR-V");
    EXPECT_ERROR(disassemble(SpirvBinary{{0x07230203, 0x10000, 0, 1}}), "cannot disassemble");
    SpirvBinary cut = s;
    cut.words.resize(cut.words.size() / 2);
    EXPECT_ERROR(ctx_->program(cut, "cut", 3, 0), "cut");
  }

  // what the driver says it compiled (VK_KHR_pipeline_executable_properties): named figures, the numeric ones with
  // their number, where the device has the extension; none where it lacks it (lavapipe of Mesa 22.3)
  void pipeline_statistics() {
    Program p = program(kAdd, "add_stats", 3);
    QCOMPARE(!p.statistics().empty(), ctx_->info().pipeline_statistics);
    QCOMPARE(print_device_info(ctx_->info()).find(ctx_->info().pipeline_statistics ? "pipeline_statistics+" : "pipeline_statistics-") != std::string::npos, true);
    for (auto& s : p.statistics()) {
      QVERIFY(!s.name.empty());
      if (s.number) QCOMPARE(std::stod(s.value), *s.number);
    }
  }

  void buffer_limits() {
    const uint64_t range = ctx_->info().max_storage_buffer_range;
    EXPECT_ERROR(ctx_->alloc(range + 1), "134217729 bytes", "maxStorageBufferRange", "134217728 bytes");
    DeviceBuffer big = ctx_->alloc(range);  // exactly the limit is fine
    QCOMPARE(big.size(), range);
    uint32_t tail = 0xA5A5A5A5, back = 0;
    ctx_->copy_in(big, &tail, 4, range - 4);
    ctx_->copy_out(&back, big, 4, range - 4);
    QCOMPARE(back, tail);
    EXPECT_ERROR(ctx_->copy_in(big, &tail, 8, range - 4), "outside the 134217728-byte buffer");
    EXPECT_ERROR(ctx_->copy_out(nullptr, big, 4), "null host pointer");
    EXPECT_ERROR(ctx_->copy_in(DeviceBuffer(), &tail, 4), "empty buffer");
    uint64_t live = ctx_->stats().buffers;
    big = DeviceBuffer();
    QCOMPARE(ctx_->stats().buffers, live - 1);
  }

  void disk_cache_second_context() {
    QTemporaryDir dir;
    OpenOptions opts = base_;
    opts.cache_dir = (std::filesystem::path(dir.path().toStdString()) / "vk-cache").string();  // created on use
    const std::string src = unary("a[i] * 3.0 + 0.25");
    SpirvBinary first;
    {
      auto c1 = open_device(lvp_, opts);
      first = c1->compile_glsl(src, "k");
      QCOMPARE(c1->compiler().stats().compiles, uint64_t(1));
      QCOMPARE(c1->compiler().stats().disk_writes, uint64_t(1));
      QCOMPARE(c1->compile_glsl(src, "k"), first);
      QCOMPARE(c1->compiler().stats().memory_hits, uint64_t(1));
      c1->program(first, "k", 2, 0);  // so the VkPipelineCache has something to save
      EXPECT_CLEAN(*c1);
    }
    size_t spv_files = 0, pipeline_files = 0;
    for (auto& e : std::filesystem::directory_iterator(opts.cache_dir)) {
      std::string name = e.path().filename().string();
      QVERIFY2(name.find(".tmp.") == std::string::npos, name.c_str());  // no temporary left behind
      spv_files += e.path().extension() == ".spv";
      pipeline_files += name.rfind("pipelines-", 0) == 0;
    }
    QCOMPARE(spv_files, size_t(1));
    QCOMPARE(pipeline_files, size_t(1));
    {
      auto c2 = open_device(lvp_, opts);  // a new context: an empty memory cache
      SpirvBinary again = c2->compile_glsl(src, "k");
      QCOMPARE(again, first);
      QCOMPARE(c2->compiler().stats().compiles, uint64_t(0));
      QCOMPARE(c2->compiler().stats().disk_hits, uint64_t(1));
      Program p = c2->program(again, "k", 2, 0);  // the pipeline cache file loads
      EXPECT_CLEAN(*c2);
    }
    // a damaged cache file is a miss, compiled again and rewritten
    for (auto& e : std::filesystem::directory_iterator(opts.cache_dir))
      if (e.path().extension() == ".spv") std::filesystem::resize_file(e.path(), 20);
    Compiler c3(opts.cache_dir);
    QCOMPARE(c3.compile_glsl(src, "k"), first);
    QCOMPARE(c3.stats().compiles, uint64_t(1));
    QCOMPARE(c3.stats().disk_hits, uint64_t(0));
    Compiler c4(opts.cache_dir);
    QCOMPARE(c4.compile_glsl(src, "k"), first);
    QCOMPARE(c4.stats().disk_hits, uint64_t(1));
    // an unwritable directory: the compile still succeeds, the error is counted
    Compiler c5("/proc/no-such-dir");
    QCOMPARE(c5.compile_glsl(src, "k"), first);
    QCOMPARE(c5.stats().disk_errors, uint64_t(1));
  }

  void pipeline_reuse() {
    SpirvBinary s = ctx_->compile_glsl(kIncrement, "inc");
    uint64_t before = ctx_->stats().pipelines_created;
    Program p1 = ctx_->program(s, "inc", 1, 0);
    Program p2 = ctx_->program(s, "inc", 1, 0);
    QVERIFY(ctx_->stats().pipelines_created <= before + 1);
    uint64_t after = ctx_->stats().pipelines_created;
    ctx_->program(s, "inc", 2, 0);  // another layout: another pipeline
    QCOMPARE(ctx_->stats().pipelines_created, after + 1);
    EXPECT_ERROR(ctx_->program(s, "inc0", 0, 0), "set 0 binding 0", "bindings 0..-1");
  }

  void copy_shader_with_offsets() {
    const size_t n = 4096;
    std::vector<uint8_t> src = random_bytes(n, 7), mirror(n, 0);
    DeviceBuffer ds = upload(src), dd = upload(mirror);
    struct C {
      uint64_t dst, src, bytes;
    };
    // 16-byte words, 4-byte words, and bytes (vkCmdCopyBuffer)
    const C copies[] = {{16, 32, 1024}, {1100, 8, 404}, {2001, 3, 17}, {3000, 4095, 1}, {0, 0, 0}};
    Batch batch = ctx_->batch();
    for (const C& c : copies) {
      batch.copy(dd, c.dst, ds, c.src, c.bytes);
      std::copy_n(src.begin() + static_cast<long>(c.src), c.bytes, mirror.begin() + static_cast<long>(c.dst));
    }
    QCOMPARE(batch.size(), size_t(4));  // zero bytes: nothing recorded
    QCOMPARE(batch.barrier_count(), 0u);  // disjoint ranges of one buffer: no hazard
    BatchResult r = batch.submit_and_wait(60);
    QCOMPARE(r.gpu_seconds.size(), size_t(4));
    std::vector<uint8_t> out(n);
    ctx_->copy_out(out.data(), dd, n);
    QVERIFY(out == mirror);
    // within one buffer, disjoint ranges; then a dispatch reads the copy: a barrier
    std::vector<float> f = random_floats(256, 8);
    DeviceBuffer df = upload(f), dg = ctx_->alloc(128 * 4);
    Batch b2 = ctx_->batch();
    b2.copy(df, 512, df, 0, 512);  // f[128..255] = f[0..127]
    b2.dispatch(program(unary("a[128 + i] + 1.0"), "tail_plus1", 2), {dg, df}, {}, {2, 1, 1});
    QCOMPARE(b2.barrier_count(), 1u);
    b2.submit_and_wait(60);
    std::vector<float> g = download<float>(dg);
    for (size_t i = 0; i < 128; i++) QCOMPARE(g[i], f[i] + 1.f);
    EXPECT_ERROR(b2.copy(df, 8, df, 0, 16), "overlap");
    EXPECT_ERROR(b2.copy(dd, 4090, ds, 0, 8), "out of bounds");
  }

  void fence_timeout_then_recovers() {
    const uint32_t seed = 12345, iters = 60000, groups = 256, n = groups * 64;  // 1e9 steps in all
    const uint32_t want = lcg(seed, iters);
    DeviceBuffer in = upload(std::vector<uint32_t>{seed}), o = ctx_->alloc(n * 4);
    Program spin = program(kSpin, "spin", 2, 4);
    const auto push = PushConstants().u32(iters);
    {
      Batch batch = ctx_->batch();
      batch.dispatch(spin, {o, in}, push.bytes(), {groups, 1, 1}, "spin_kernel");
      EXPECT_ERROR(batch.submit_and_wait(0.001), "spin_kernel", "did not finish within");
      uint32_t x = 0;
      EXPECT_ERROR(ctx_->copy_out(&x, o, 4), "in use by a batch still running");
    }  // the batch goes while its commands keep running
    const uint64_t live = ctx_->stats().buffers;
    o = DeviceBuffer();  // so does the buffer: its memory is released when the batch ends
    QCOMPARE(ctx_->stats().buffers, live - 1);
    QVERIFY(ctx_->wait_idle(120));
    QVERIFY(!ctx_->lost());
    // the context is usable, and a run with a generous timeout gives the LCG's value everywhere
    DeviceBuffer o2 = ctx_->alloc(n * 4);
    Batch batch = ctx_->batch();
    batch.dispatch(spin, {o2, in}, push.bytes(), {groups, 1, 1});
    BatchResult r = batch.submit_and_wait(120);
    std::vector<uint32_t> got = download<uint32_t>(o2);
    for (uint32_t i = 0; i < n; i++) QCOMPARE(got[i], want);
    QVERIFY2(r.gpu_seconds.at(0) > 0.001, qPrintable(QString::number(r.gpu_seconds[0])));  // it does outlast 1 ms
    EXPECT_ERROR(batch.submit_and_wait(0), "positive number of seconds");
    EXPECT_ERROR(ctx_->wait_idle(-1), "positive number of seconds");
  }

  void lavapipe_loop_limit() {
    // lavapipe (gallivm) ends every loop of an invocation once 65535 iterations have run in all, silently: what
    // DeviceInfo::loop_iteration_limit says. Within the limit the result is exact; past it, it is the 65535th step.
    QCOMPARE(ctx_->info().loop_iteration_limit, uint64_t(65535));
    DeviceBuffer in = upload(std::vector<uint32_t>{7}), o = ctx_->alloc(64 * 4);
    Program spin = program(kSpin, "spin", 2, 4);
    for (uint32_t iters : {65535u, 100000u}) {
      Batch batch = ctx_->batch();
      batch.dispatch(spin, {o, in}, PushConstants().u32(iters).bytes(), {1, 1, 1});
      batch.submit_and_wait(60);
      QCOMPARE(download<uint32_t>(o).at(5), lcg(7, std::min<uint64_t>(iters, 65535)));
    }
  }

  void bad_arguments() {
    DeviceBuffer a = ctx_->alloc(256), b = ctx_->alloc(256);
    Program add = program(kAdd, "add", 3);
    Batch batch = ctx_->batch();
    EXPECT_ERROR(batch.dispatch(add, {a, b}, {}, {1, 1, 1}), "kernel 'add'", "2 buffers given", "takes 3");
    EXPECT_ERROR(batch.dispatch(add, {a, b, DeviceBuffer()}, {}, {1, 1, 1}), "buffer 2 is empty");
    EXPECT_ERROR(batch.dispatch(add, {a, b, a}, {}, {0, 1, 1}), "group count 0x1x1");
    EXPECT_ERROR(batch.dispatch(add, {a, b, a}, {}, {1, 1u << 30, 1}), "outside 1..");
    EXPECT_ERROR(batch.dispatch(Program(), {a}, {}, {1, 1, 1}), "empty Program");
    EXPECT_ERROR(Batch().submit_and_wait(1), "empty Batch");
    QCOMPARE(batch.size(), size_t(0));
    const std::string ubo = "#version 450\nlayout(local_size_x = 1) in;\n"
                            "layout(set = 0, binding = 0) uniform U { float u; };\n"
                            "layout(set = 0, binding = 1) buffer O { float o[]; };\nvoid main() { o[0] = u; }\n";
    EXPECT_ERROR(program(ubo, "ubo", 2), "kernel 'ubo'", "uniform buffer", "storage buffers only");
    const std::string set1 = "#version 450\nlayout(local_size_x = 1) in;\n"
                             "layout(set = 1, binding = 0) buffer O { float o[]; };\nvoid main() { o[0] = 1.0; }\n";
    EXPECT_ERROR(program(set1, "set1", 1), "set 1 binding 0");
    const std::string wide = "#version 450\nlayout(local_size_x = 32, local_size_z = 64) in;\n"
                             "layout(set = 0, binding = 0) buffer O { float o[]; };\nvoid main() { o[0] = 1.0; }\n";
    EXPECT_ERROR(program(wide, "wide", 1), "2048 invocations", "maxComputeWorkGroupInvocations of 1024");
    const std::string shared = "#version 450\nlayout(local_size_x = 1) in;\nshared float s[65536];\n"
                               "layout(set = 0, binding = 0) buffer O { float o[]; };\n"
                               "void main() { s[0] = 1.0; o[0] = s[0]; }\n";
    EXPECT_ERROR(program(shared, "shared", 1), "262144 bytes of shared memory", "maxComputeSharedMemorySize");
    EXPECT_ERROR(program(kAdd, "many", 100000), "maxPerStageDescriptorStorageBuffers");
  }

  void threads_share_a_context() {
    const int threads = 4, rounds = 15;
    const size_t n = 5000;
    std::atomic<int> failures{0};
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++)
      pool.emplace_back([&, t] {
        try {
          Program inc = program(kIncrement, "inc", 1);
          for (int r = 0; r < rounds; r++) {
            std::vector<uint32_t> x(n, static_cast<uint32_t>(t * 1000 + r));
            DeviceBuffer d = ctx_->alloc(n * 4);
            ctx_->copy_in(d, x.data(), n * 4);
            Batch b = ctx_->batch();
            b.dispatch(inc, {d}, {}, {groups_for(n), 1, 1});
            b.dispatch(inc, {d}, {}, {groups_for(n), 1, 1});
            b.submit_and_wait(60);
            std::vector<uint32_t> y(n);
            ctx_->copy_out(y.data(), d, n * 4);
            for (size_t i = 0; i < n; i++)
              if (y[i] != x[i] + 2) throw std::runtime_error("wrong value at " + std::to_string(i));
          }
        } catch (const std::exception& e) {
          errors[t] = e.what();
          failures++;
        }
      });
    for (auto& th : pool) th.join();
    for (int t = 0; t < threads; t++) QVERIFY2(errors[t].empty(), errors[t].c_str());
    QCOMPARE(failures.load(), 0);
  }

  void cleanupTestCase() {
    EXPECT_CLEAN(*ctx_);
    ctx_.reset();
  }
};

QTEST_GUILESS_MAIN(TestVulkanRuntime)
#include "test_vulkan_runtime.moc"
