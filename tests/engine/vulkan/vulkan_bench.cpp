// vulkan_bench: the costs of the Vulkan runtime on one device (compiles, submissions, dispatches in a batch,
// transfers, device copies), each after a check that the results are right. Not a ctest test: run it by hand,
//   vulkan_bench [DEVICE_INDEX]      (default: default_device_index())
// with VK_DRIVER_FILES choosing the driver. Plain C++ (no Qt), so it runs on machines with only a Vulkan driver.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"

using namespace ts::vk;
using Clock = std::chrono::steady_clock;

namespace {
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
int failures = 0;
void check(bool ok, const char* what) {
  std::printf("  check %-44s %s\n", what, ok ? "ok" : "FAILED");
  if (!ok) failures++;
}

const char* kTouch = R"(#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer X { uint x[]; };
void main() { if (gl_GlobalInvocationID.x == 0u) x[0] += 1u; }
)";
const char* kAdd = R"(#version 450
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer O { float o[]; };
layout(set = 0, binding = 1) readonly buffer A { float a[]; };
layout(set = 0, binding = 2) readonly buffer B { float b[]; };
void main() {
  uint i = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u + gl_GlobalInvocationID.x;
  if (i < o.length()) o[i] = a[i] + b[i];
}
)";

void bench_transfers(const std::shared_ptr<Context>& ctx, uint64_t bytes) {
  std::vector<uint8_t> host(bytes), back(bytes);
  for (uint64_t i = 0; i < bytes; i++) host[i] = static_cast<uint8_t>(i * 131 + 7);
  DeviceBuffer b = ctx->alloc(bytes);
  ctx->copy_in(b, host.data(), bytes);  // warm: staging allocation, page faults
  ctx->copy_out(back.data(), b, bytes);
  check(back == host, ctx->direct_transfers() ? "round trip (direct)" : "round trip (staging)");
  std::vector<double> up, down;
  for (int i = 0; i < 5; i++) {
    auto t0 = Clock::now();
    ctx->copy_in(b, host.data(), bytes);
    up.push_back(since(t0));
    t0 = Clock::now();
    ctx->copy_out(back.data(), b, bytes);
    down.push_back(since(t0));
  }
  std::printf("  %s %llu MiB: upload %.2f GB/s, download %.2f GB/s (median of 5)\n",
              ctx->direct_transfers() ? "direct " : "staging", static_cast<unsigned long long>(bytes >> 20),
              bytes / median(up) / 1e9, bytes / median(down) / 1e9);
}
}  // namespace

int main(int argc, char** argv) {
  try {
    auto t0 = Clock::now();
    double warm = warm_up_compiler();
    std::printf("glslang first compile (warm-up): %.1f ms\n", warm * 1e3);
    {
      Compiler c;
      t0 = Clock::now();
      c.compile_glsl(kAdd, "add");
      double cold = since(t0);
      t0 = Clock::now();
      for (int i = 0; i < 100; i++) c.compile_glsl(kAdd, "add");
      double hit = since(t0) / 100;
      auto dir = std::filesystem::temp_directory_path() / ("vulkan_bench_cache_" + std::to_string(::getpid()));
      Compiler d1(dir.string());
      d1.compile_glsl(kAdd, "add");
      Compiler d2(dir.string());
      t0 = Clock::now();
      d2.compile_glsl(kAdd, "add");
      double disk = since(t0);
      std::filesystem::remove_all(dir);
      std::printf("compile of a new source %.2f ms, memory-cache hit %.2f us, disk-cache hit %.3f ms\n", cold * 1e3,
                  hit * 1e6, disk * 1e3);
    }

    std::string reason;
    auto devs = enumerate_devices(&reason);
    if (devs.empty()) {
      std::printf("no Vulkan device: %s\n", reason.c_str());
      return 1;
    }
    int index = argc > 1 ? std::atoi(argv[1]) : default_device_index(devs);
    for (const auto& d : devs) std::printf("%s", print_device_info(d).c_str());
    t0 = Clock::now();
    auto ctx = open_device(index);
    std::printf("open_device(%d): %.1f ms; transfers %s\n", index, since(t0) * 1e3,
                ctx->direct_transfers() ? "mapped directly" : "through staging");

    // empty dispatch: one workgroup, resubmitted (recorded once) and recorded anew each time
    DeviceBuffer x = ctx->alloc(4);
    uint32_t zero = 0;
    ctx->copy_in(x, &zero, 4);
    Program touch = ctx->program(ctx->compile_glsl(kTouch, "touch"), "touch", 1, 0);
    Batch one = ctx->batch();
    one.dispatch(touch, {x}, {}, {1, 1, 1});
    one.submit_and_wait(30);  // the driver compiles the pipeline here (lavapipe) or at creation
    std::vector<double> resub, fresh, gpu;
    for (int i = 0; i < 200; i++) {
      BatchResult r = one.submit_and_wait(30);
      resub.push_back(r.wall_seconds);
      if (!r.gpu_seconds.empty()) gpu.push_back(r.gpu_seconds[0]);
    }
    for (int i = 0; i < 200; i++) {
      auto t1 = Clock::now();
      Batch b = ctx->batch();
      b.dispatch(touch, {x}, {}, {1, 1, 1});
      b.submit_and_wait(30);
      fresh.push_back(since(t1));
    }
    uint32_t count = 0;
    ctx->copy_out(&count, x, 4);
    check(count == 401, "401 increments");
    std::printf("  empty dispatch submit+wait: %.1f us resubmitted, %.1f us recorded each time (gpu %.2f us)\n",
                median(resub) * 1e6, median(fresh) * 1e6, median(gpu) * 1e6);

    // 100 dispatches in one batch: independent (no barrier) and dependent (a barrier before each)
    std::vector<DeviceBuffer> bufs;
    for (int i = 0; i < 100; i++) {
      bufs.push_back(ctx->alloc(4));
      ctx->copy_in(bufs.back(), &zero, 4);
    }
    Batch ind = ctx->batch(), dep = ctx->batch();
    for (int i = 0; i < 100; i++) {
      ind.dispatch(touch, {bufs[i]}, {}, {1, 1, 1});
      dep.dispatch(touch, {x}, {}, {1, 1, 1});
    }
    check(ind.barrier_count() == 0 && dep.barrier_count() == 99, "barriers 0 and 99");
    ind.submit_and_wait(30);
    dep.submit_and_wait(30);
    std::vector<double> ti, td, gi, gd;
    for (int i = 0; i < 20; i++) {
      BatchResult a = ind.submit_and_wait(30), b = dep.submit_and_wait(30);
      ti.push_back(a.wall_seconds);
      td.push_back(b.wall_seconds);
      double sa = 0, sb = 0;
      for (double g : a.gpu_seconds) sa += g;
      for (double g : b.gpu_seconds) sb += g;
      gi.push_back(sa);
      gd.push_back(sb);
    }
    ctx->copy_out(&count, x, 4);
    check(count == 401 + 21 * 100, "dependent chain increments");
    ctx->copy_out(&count, bufs[57], 4);
    check(count == 21, "independent increments");
    double base = median(resub);
    std::printf("  batch of 100: independent %.1f us (%.2f us/dispatch over one), dependent %.1f us (%.2f us/dispatch)\n",
                median(ti) * 1e6, (median(ti) - base) / 99 * 1e6, median(td) * 1e6, (median(td) - base) / 99 * 1e6);
    std::printf("  timestamp sums: independent %.1f us, dependent %.1f us\n", median(gi) * 1e6, median(gd) * 1e6);
    std::vector<double> rec;
    for (int i = 0; i < 20; i++) {  // a new batch each time: recorded at its submit
      auto t1 = Clock::now();
      Batch b = ctx->batch();
      for (int k = 0; k < 100; k++) b.dispatch(touch, {bufs[k]}, {}, {1, 1, 1});
      b.submit_and_wait(30);
      rec.push_back(since(t1));
    }
    std::printf("  batch of 100 recorded anew each time: %.1f us (%.2f us/dispatch more than resubmitting)\n",
                median(rec) * 1e6, (median(rec) - median(ti)) / 100 * 1e6);

    // bandwidth: an add kernel and the copy shader over 64 MiB (or the largest buffer, if smaller)
    const uint64_t bytes = std::min<uint64_t>(64ull << 20, ctx->info().max_storage_buffer_range);
    const uint64_t n = bytes / 4;
    std::vector<float> a(n), b(n), o(n);
    for (uint64_t i = 0; i < n; i++) {
      a[i] = static_cast<float>(i % 1000);
      b[i] = static_cast<float>(i % 7) * 0.5f;
    }
    DeviceBuffer da = ctx->alloc(bytes), db = ctx->alloc(bytes), dout = ctx->alloc(bytes);
    ctx->copy_in(da, a.data(), bytes);
    ctx->copy_in(db, b.data(), bytes);
    Program add = ctx->program(ctx->compile_glsl(kAdd, "add"), "add", 3, 0);
    Batch ab = ctx->batch();
    const uint32_t groups = static_cast<uint32_t>((n + 255) / 256);
    ab.dispatch(add, {dout, da, db}, {}, {std::min(groups, 32768u), (groups + 32767) / 32768, 1});
    std::vector<double> tadd;
    for (int i = 0; i < 6; i++) tadd.push_back(ab.submit_and_wait(60).gpu_seconds.at(0));
    tadd.erase(tadd.begin());
    ctx->copy_out(o.data(), dout, bytes);
    bool ok = true;
    for (uint64_t i = 0; i < n && ok; i++) ok = o[i] == a[i] + b[i];
    check(ok, "add kernel");
    std::printf("  add %llu MiB x3: %.1f us, %.1f GB/s\n", static_cast<unsigned long long>(bytes >> 20),
                median(tadd) * 1e6, 3.0 * bytes / median(tadd) / 1e9);
    Batch cb = ctx->batch(), cc = ctx->batch();
    cb.copy(dout, 0, da, 0, bytes);          // the copy shader (16-byte words)
    cc.copy(dout, 1, db, 0, bytes - 1);      // vkCmdCopyBuffer (unaligned)
    std::vector<double> tcs, tcc;
    for (int i = 0; i < 6; i++) {
      tcs.push_back(cb.submit_and_wait(60).gpu_seconds.at(0));
      tcc.push_back(cc.submit_and_wait(60).gpu_seconds.at(0));
    }
    cb.submit_and_wait(60);
    ctx->copy_out(o.data(), dout, bytes);
    check(std::memcmp(o.data(), a.data(), bytes) == 0, "copy shader");
    std::printf("  device copy %llu MiB: copy shader %.1f GB/s, vkCmdCopyBuffer %.1f GB/s (read+write)\n",
                static_cast<unsigned long long>(bytes >> 20), 2.0 * bytes / median(tcs) / 1e9,
                2.0 * bytes / median(tcc) / 1e9);

    bench_transfers(ctx, bytes);
    OpenOptions staged;
    staged.force_staging = true;
    auto sctx = open_device(index, staged);
    bench_transfers(sctx, bytes);
  } catch (const ts::Error& e) {
    std::printf("error: %s\n", e.what());
    return 2;
  }
  std::printf("%s\n", failures ? "SOME CHECKS FAILED" : "all checks ok");
  return failures ? 1 : 0;
}
