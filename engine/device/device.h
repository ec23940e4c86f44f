#pragma once
// The device layer: one Device per name (CPU, CPU:LLVM, INTERP, INTERP:GPU, VULKAN, VULKAN:N), from a registry that
// each backend fills at start-up. A device is what the reference spreads over Device + Renderer + Compiler +
// Allocator + Runtime:
//   - its capabilities: the renderer properties the optimizer reads (OptTarget) and the dtypes it runs;
//   - its renderer (renderer(), engine/renderer/renderer.h) and compiler (load(), keyed by compiler_key());
//   - its memory (allocate / copy_in / copy_out), named by memory(): the host devices all compute on host memory
//     named "CPU" (tensors there say device "CPU"; DEV picks which of them runs the kernels), a GPU has its own;
//   - its runtime: launch() a loaded program over buffers and Variable values, returning the kernel's own time.
// The engine never reads the environment for these: the program's entry point picks the device and passes it down.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/codegen/opt.h"
#include "engine/codegen/program.h"
#include "engine/codegen/to_program.h"
#include "engine/uop/buffer.h"

namespace ts {

// A program compiled for one device (machine code, a pipeline, or nothing for an interpreter).
struct Executable {
  virtual ~Executable() = default;
  // what the device's compiler reported of the machine code (null: nothing; trace::ProgramStatistics)
  std::shared_ptr<const trace::ProgramStatistics> statistics;
};
// A host device's: the compiled kernel's entry point (null: the program is interpreted)
struct HostEntry : Executable {
  void (*entry)(void**, const long long*, int) = nullptr;
};

class Graph;

class Device {
 public:
  explicit Device(std::string name) : name_(std::move(name)) {}
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return name_; }
  // the memory its buffers live in, as tensors name their device ("CPU" for every host device)
  virtual std::string memory() const { return "CPU"; }
  bool host_memory() const { return memory() == "CPU"; }
  // what its programs are written in (its name is the reference's renderer name: "CLANG", "LLVM", "INTERP", "GLSL")
  virtual const Renderer& renderer() const = 0;
  // the renderer properties the optimizer reads (locals, threads, limits)
  virtual OptTarget opt_target() const = 0;
  // part of the compiled-program cache key: two devices with equal keys run each other's programs
  virtual std::string compiler_key() const { return renderer().name(); }
  // dtypes its kernels can use (names as DType::name); empty = every dtype
  virtual std::vector<std::string> dtypes() const { return {}; }
  // what `tinyscope devices` shows beside the optimizer's properties: (name, value) pairs
  virtual std::vector<std::pair<std::string, std::string>> properties() const { return {}; }

  // memory. Host memory: Buffer::ptr is addressable and these are memcpy.
  virtual std::shared_ptr<Buffer> allocate(DType dt, int64_t size);
  virtual void copy_in(Buffer& dst, const void* src, size_t bytes);
  virtual void copy_out(void* dst, const Buffer& src, size_t bytes);

  // runtime: compile a rendered program, then run it over buffers (by slot) and Variable values (spec.vars order);
  // launch returns the kernel's own time in seconds
  virtual std::shared_ptr<Executable> load(const ProgramSpec& spec) = 0;
  // whether load may run on other threads, several at once (the CPU's JIT): a schedule's kernels then compile on
  // worker threads while the next ones are lowered
  virtual bool concurrent_loads() const { return false; }
  virtual double launch(const ProgramSpec& spec, Executable& exe, std::span<Buffer* const> bufs, std::span<const int64_t> vars) = 0;
  // A device that records launches into one command buffer (the seed's graph exec): between begin_batch and
  // end_batch, launch records and returns -1; end_batch submits them at once and returns each one's own time, in
  // order. Nothing may read or write the batch's buffers from the host before end_batch.
  virtual bool batches() const { return false; }
  // timed: each kernel's own time is measured (else end_batch gives each its share of the batch's wall time)
  virtual void begin_batch(bool timed) { (void)timed; }
  virtual std::vector<double> end_batch() { return {}; }
  // where the last batch's host time went: recording and submitting its command buffers (a long batch is submitted
  // in pieces while it is recorded), and from the last submit to the last fence
  struct BatchHostTimes {
    double record_s = 0, submit_to_fence_s = 0;
  };
  virtual BatchHostTimes last_batch_host_times() const { return {}; }
  // The graph handler (the seed's graph call; the reference's Device.graph): a TinyJit capture's consecutive kernels
  // of this device run as one call, by a Graph made once per graph call and kept for every replay. nullptr: the
  // device has no graph handler (its kernels replay one call each). The default runs the kernels back to back.
  virtual std::shared_ptr<Graph> make_graph();
  // the reference's name of the graph handler's class (Device.graph in Python)
  virtual std::string graph_name() const { return "HostGraph"; }

 private:
  std::string name_;
};

// One kernel of a graph call, with what it runs over this time (its buffers by slot, its Variable values).
struct GraphKernel {
  const ProgramSpec* spec = nullptr;
  Executable* exe = nullptr;
  std::vector<Buffer*> bufs;
  std::vector<int64_t> vars;
};

// A device's graph call: runs a batch of its kernels, in order, as one call. The same Graph runs the same kernels at
// every replay (a device keeps what it recorded and changes only what changed: other buffers, other values).
class Graph {
 public:
  virtual ~Graph() = default;
  // runs them and returns each kernel's own time (timed), else each one's share of the call's wall time
  virtual std::vector<double> run(const std::vector<GraphKernel>& kernels, bool timed) = 0;
  // Starts them (returns at once where the device runs them asynchronously: wait() finishes); the default runs them
  // now. Between start() and wait() nothing may touch their buffers from the host.
  virtual void start(const std::vector<GraphKernel>& kernels, bool timed) { times_ = run(kernels, timed); }
  virtual std::vector<double> wait() { return std::move(times_); }
  // how the last run went, in words (re-recorded, resubmitted): what the trace and DEBUG=2 say of the call
  virtual std::string last_run() const { return {}; }

 protected:
  std::vector<double> times_;
};

// Adds a device (called by each backend's installer, in the order a user is shown them). A second device of the
// same name is dropped: the first lives as long as the process (programs and buffers refer to it).
void register_device(std::unique_ptr<Device> d);
// A backend whose devices are registered only when first needed (enumerating Vulkan devices costs an instance): the
// registry runs each provider once, before it lists every device or fails to find a name.
void register_device_provider(std::function<void()> provider);
// Another name for a registered device ("VULKAN:1" for "VULKAN" when device 1 is the default one).
void register_device_alias(const std::string& alias, const std::string& name);
// The registered device names, in order (providers run first).
std::vector<std::string> registered_device_names();
// host memory by name: the CPU's, and the host buffers a program's data arrives in (PYTHON: lists and bytes, NPY:
// numpy arrays, as the reference names them)
inline bool is_host_memory(const std::string& memory) { return memory == "CPU" || memory == "PYTHON" || memory == "NPY"; }
// `name` canonicalized as the reference does ("cpu" -> "CPU", "CPU:0" -> "CPU", "LLVM" -> "CPU:LLVM"), or an Error that
// names it and the devices that exist: an unknown device never runs as another one.
std::string canonical_device(const std::string& name);
// The device of a canonical or user-given name (canonical_device's Error when there is none).
Device& get_device(const std::string& name);
// The device that owns a memory name (a tensor's device string) for allocation and copies: "CPU"/"PYTHON" -> the
// host's, else the device of that name.
Device& memory_device(const std::string& memory);

// A backend's maker of devices on first use: given a canonical name no device has, registers that device and returns
// true (CPU:N), or returns false.
void register_device_factory(std::function<bool(const std::string&)> factory);

// Registers the devices of every backend the engine has, in the order they are listed (engine/runtime/backends.cpp):
// CPU (clang C), CPU:LLVM (LLVM IR), INTERP and INTERP:GPU, NULL. The Vulkan devices follow, registered by the
// program's entry point with its options (engine/runtime/vulkan/vulkan_device.h).
void register_host_devices();
// register_host_devices() unless CPU is registered
void ensure_host_devices();

// One line per device with its properties, or a JSON array (`tinyscope devices [--json]`).
std::string describe_devices(bool json);

}  // namespace ts
