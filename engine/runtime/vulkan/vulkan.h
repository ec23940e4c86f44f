#pragma once
// The Vulkan compute runtime: devices, buffers, GLSL -> SPIR-V, programs and batches of dispatches.
//
// Contract
// - Headers: this file uses plain C++ types only. vulkan.cpp, vulkan_memory.cpp, vulkan_pipeline.cpp and
//   vulkan_batch.cpp (through vulkan_internal.h) are the translation units with the Vulkan headers, spirv.cpp the one
//   with glslang's and SPIRV-Tools'. The Vulkan loader (libvulkan.so.1) is opened at run time, so a machine without
//   it still runs the rest of the program: enumerate_devices() gives an empty list and a reason.
// - Errors: every failure is a ts::Error whose message names what failed (the kernel, the size and the limit, the
//   device): bad arguments, limits, compile errors, out of memory, a timeout, a lost device. Nothing here aborts,
//   prints or reads the environment; what is configurable is a parameter (OpenOptions, BatchOptions, timeouts).
// - Lifetimes: open_device() gives a shared Context. DeviceBuffer, Program and Batch are handles that keep their
//   Context alive, so the Context goes away after the last of them. A Batch keeps the buffers and programs it
//   recorded alive until it is destroyed. Destroying a buffer that a batch still running on the device uses (after a
//   timeout) defers its release until that batch ends.
// - Threads: Context (and its Compiler) may be used from several threads at once: buffers, copies, programs, batch
//   submission. One Batch is recorded and submitted by one thread at a time. Transfers and submissions are blocking:
//   copy_in/copy_out return when the data has arrived, submit_and_wait when the batch has finished, or throw. A
//   buffer that a batch still running uses cannot be copied in or out (an Error saying so) until it ends.
// - Timeouts: nothing waits forever. A batch that does not finish in its timeout is an Error naming its kernels; it
//   keeps running on the device, its buffers stay in use, and the Context stays usable (wait_idle() waits for it).
//   VK_ERROR_DEVICE_LOST makes the Context report itself lost: every later call throws "device lost". A Context's
//   destructor waits at most OpenOptions::shutdown_timeout_s for such batches; past that it leaves the device as it
//   is (its objects leak) rather than free memory the device still uses.
// - Memory: one allocation per buffer. On devices that share the host's memory (lavapipe, integrated GPUs) buffers
//   are host-visible device-local memory mapped once, and copy_in/copy_out are a memcpy; elsewhere (discrete GPUs,
//   whose mapped device memory is slow to read back) they go through one reused staging buffer in host memory.
// - Submissions: a Batch is one command buffer; its descriptor sets (one per dispatch) come from a pool of its own
//   that grows to fit and is reset when the batch is recorded again; command buffers, fences, query and descriptor
//   pools are recycled through the Context.
// - Validation: with the Khronos validation layer active (OpenOptions::validation, or VK_INSTANCE_LAYERS read by the
//   loader) a debug-utils messenger counts its warnings and errors; validation_messages() reports them.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ts::vk {

// ---- devices ------------------------------------------------------------------------------------------------

// One VK_KHR_cooperative_matrix configuration (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR).
struct CooperativeMatrixShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string a_type, b_type, c_type, result_type;  // "float16", "bfloat16", "float32", "sint8", "uint32", ...
  std::string scope;                                // "subgroup", "workgroup", "device", "queue family"
  bool saturating = false;
  // VK_NV_cooperative_matrix2's flexible dimensions: m, n and k are granularities (any multiple, up to
  // DeviceInfo::cooperative_matrix_flexible_max_dimension) and a workgroup-scope matrix needs exactly this many
  // invocations in the work group (0: a fixed shape, or subgroup scope)
  uint32_t workgroup_invocations = 0;
};

struct DeviceInfo {
  int index = -1;            // position in vkEnumeratePhysicalDevices: the N of VULKAN:N
  std::string name;          // deviceName
  std::string type;          // "discrete", "integrated", "virtual", "cpu" or "other"
  uint32_t vendor_id = 0, device_id = 0;
  std::string driver_name;   // VkPhysicalDeviceDriverProperties::driverName ("llvmpipe", "NVIDIA")
  std::string driver_info;   // driverInfo ("Mesa 22.3.6 (LLVM 15.0.6)")
  uint32_t driver_version_raw = 0;
  std::string driver_version;  // decoded the vendor's way
  uint32_t api_version_raw = 0;
  std::string api_version;     // "1.3.230"
  uint32_t subgroup_size = 0;
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_size{};
  std::array<uint32_t, 3> max_workgroup_count{};
  uint32_t max_shared_memory = 0;             // maxComputeSharedMemorySize, bytes
  uint64_t max_storage_buffer_range = 0;      // bytes one storage-buffer binding can see: the largest buffer
  uint64_t max_allocation_size = 0;           // maxMemoryAllocationSize
  uint32_t max_allocation_count = 0;          // maxMemoryAllocationCount
  uint32_t max_push_constants_size = 0;
  uint32_t max_storage_buffers_per_stage = 0; // maxPerStageDescriptorStorageBuffers: the most buffers of a program
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t device_local_heap_size = 0;        // the largest device-local heap
  bool unified_memory = false;                // every device-local memory type is host-visible (lavapipe, iGPUs)
  double timestamp_period_ns = 0;             // nanoseconds per timestamp tick
  uint32_t timestamp_valid_bits = 0;          // of the compute queue family (0: no timestamps)
  bool compute_timestamps = false;            // the compute queue family supports timestamps
  uint32_t compute_queue_family = UINT32_MAX;  // UINT32_MAX: the device has no compute queue
  // The most loop iterations one invocation runs before the driver ends its loops, silently (0: no limit). lavapipe
  // (llvmpipe) has 65535, shared by every loop of the shader: longer loops must be split across invocations.
  uint64_t loop_iteration_limit = 0;
  // features (all also enabled in a Context opened on the device)
  bool float16 = false, int8 = false, int16 = false, int64 = false, float64 = false;
  bool storage_buffer_8bit = false, storage_buffer_16bit = false;
  bool cooperative_matrix = false;            // VK_KHR_cooperative_matrix with its feature
  std::vector<CooperativeMatrixShape> cooperative_matrix_shapes;
  uint32_t max_push_descriptors = 0;          // VK_KHR_push_descriptor's maxPushDescriptors (0: no push descriptors)
  // VkPhysicalDeviceFloatControlsProperties (Vulkan 1.2): which denormal and rounding modes a shader may ask for, per
  // float width (16, 32, 64); a shader that asks for neither (tinyscope's GLSL) gets the driver's default, which these do
  // not say (lavapipe flushes float32 denormals: measured by the compare of softmax)
  bool float_controls = false;
  std::array<bool, 3> denorm_preserve{}, denorm_flush{}, round_rte{}, round_rtz{}, signed_zero_inf_nan{};
  bool cooperative_matrix_nv = false;         // VK_NV_cooperative_matrix (GLSL's GL_NV_cooperative_matrix) with its feature
  // VK_KHR_shader_bfloat16 with its bfloat16 type and cooperative-matrix features (bf16 KHR matrices)
  bool bfloat16_cooperative_matrix = false;
  std::vector<CooperativeMatrixShape> cooperative_matrix_nv_shapes;
  // VK_NV_cooperative_matrix2 with its workgroup-scope and flexible-dimensions features: matrices a whole work group
  // holds, the compiler staging their loads through shared memory (SPV_NV_cooperative_matrix2)
  bool cooperative_matrix_workgroup = false;
  std::vector<CooperativeMatrixShape> cooperative_matrix_flexible_shapes;
  uint32_t cooperative_matrix_workgroup_max_size = 0;     // the most invocations of a work group using them
  uint32_t cooperative_matrix_flexible_max_dimension = 0;  // the largest row or column count
  uint32_t cooperative_matrix_workgroup_reserved_shared = 0;  // shared memory bytes the compiler keeps for its staging
  // VK_KHR_pipeline_executable_properties with its pipelineExecutableInfo feature: the driver reports what it compiled
  // (Program::statistics)
  bool pipeline_statistics = false;
};

// Every physical device the loader offers. No loader, no driver or no device: an empty list, and *reason (when
// given) says why; otherwise *reason is cleared. Never throws for a missing Vulkan.
std::vector<DeviceInfo> enumerate_devices(std::string* reason = nullptr);
// The first discrete device, else the first; -1 for an empty list.
int default_device_index(const std::vector<DeviceInfo>& devices);
// A few lines of text: the device, its limits, features and cooperative-matrix shapes.
std::string print_device_info(const DeviceInfo& info);

// ---- SPIR-V -----------------------------------------------------------------------------------------------------

struct SpirvBinary {
  std::vector<uint32_t> words;
  bool empty() const { return words.empty(); }
  bool operator==(const SpirvBinary&) const = default;
};

enum class Access { Read, Write, ReadWrite };

// What a compute shader's SPIR-V declares, read from the binary itself (no driver involved).
struct ShaderInterface {
  std::string entry_point;                // of the GLCompute entry point
  std::array<uint32_t, 3> local_size{};   // LocalSize, LocalSizeId or the WorkgroupSize built-in
  struct Binding {
    uint32_t set = 0, binding = 0;
    std::string kind;                     // "storage buffer", "uniform buffer", "image", "sampler", ...
    Access access = Access::ReadWrite;    // readonly -> Read, writeonly -> Write
  };
  std::vector<Binding> bindings;
  uint32_t push_constant_bytes = 0;       // the push-constant block's size (0: none)
  uint64_t shared_memory_bytes = 0;       // workgroup (shared) variables, natural layout
  std::vector<uint32_t> capabilities;     // OpCapability operands
};
// Throws an Error naming `name` for a binary that is not SPIR-V or has no compute entry point.
ShaderInterface reflect(const SpirvBinary& spirv, const std::string& name = "kernel");

// SPIRV-Tools' disassembly, for display. Throws an Error for a malformed binary.
std::string disassemble(const SpirvBinary& spirv);
// SPIRV-Tools' validator for the Vulkan environment of api_version (1.2: SPIR-V 1.5, 1.3: 1.6). Empty: valid;
// otherwise the validator's message.
std::string validate_spirv(const SpirvBinary& spirv, uint32_t vulkan_minor = 2);

// The binary glslang makes of a GL_NV_cooperative_matrix shader with its cooperative matrices in
// SPV_KHR_cooperative_matrix instead (coopmat_khr.cpp): each NV matrix type declared once per use it has (A, B or
// accumulator, read off the multiply-adds it flows into), the loads, stores and multiply-adds the KHR instructions
// (column-major as a layout), every other instruction unchanged. bf16: the 16-bit float matrices hold bfloat16 bits
// (SPV_KHR_bfloat16; the GLSL declares them float16 and moves their bits as 16-bit integers). An Error names what the
// rewrite cannot express. SPIRV-Tools 2023.1 predates both extensions: the result is checked by its structure here
// and by its results on a device.
SpirvBinary khr_cooperative_matrix(const SpirvBinary& nv, bool bf16, const std::string& name);
// The first line of a GLSL tensor-core kernel that asks the Compiler for that rewrite (with " bf16": bf16 matrices).
constexpr const char* kKhrCoopmatMarker = "// spirv: SPV_KHR_cooperative_matrix";

// ---- the GLSL compiler (glslang) -------------------------------------------------------------------------------

struct CompilerStats {
  uint64_t compiles = 0;      // glslang runs (successful or not)
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t disk_writes = 0;
  uint64_t disk_errors = 0;   // cache files that could not be written (the compile itself still succeeds)
  std::string last_disk_error;
  double compile_seconds = 0; // total time in glslang
};

// GLSL 450 compute shaders -> SPIR-V 1.5 for Vulkan 1.2, with an in-memory cache keyed by the source and an
// optional on-disk cache in `cache_dir` (engine/runtime/disk_cache.h: entries `HASH.spv` keyed by glslang's version, the
// options and the exact source, checksummed, written whole, the least recently used removed past the size bound).
// A file that cannot be written (a full disk) costs only the next run's compile: counted in stats() and
// disk_cache_write_errors(). Thread-safe; glslang itself runs one compile at a time.
class Compiler {
 public:
  explicit Compiler(std::string cache_dir = {});
  ~Compiler();
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;
  // `name` is the kernel's name, for messages. A compile error is an Error with glslang's log (0:LINE: ...).
  SpirvBinary compile_glsl(const std::string& source, const std::string& name);
  CompilerStats stats() const;
  const std::string& cache_dir() const;
  // "glslang 12.0.0 vulkan1.2 spirv1.5": what the disk cache's key includes besides the source.
  static std::string options_key();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// Initialises glslang and compiles a small shader once (the first compile in a process costs 160-450 ms); returns
// the seconds it took (about 0 when already warm). Thread-safe; meant for a background thread at start-up.
double warm_up_compiler();

// ---- contexts, buffers, programs, batches ------------------------------------------------------------------------

struct OpenOptions {
  bool validation = false;       // enable VK_LAYER_KHRONOS_validation (an Error when it is not installed)
  std::string cache_dir;         // SPIR-V disk cache and the VkPipelineCache file; empty: memory only
  bool force_staging = false;    // copy through staging buffers even where device memory is host-visible
  uint64_t staging_bytes = 64ull << 20;  // the staging buffer's size: larger transfers go in chunks
  double transfer_timeout_s = 60;        // copy_in / copy_out through staging
  double shutdown_timeout_s = 10;        // the Context's destructor waits this long for batches still running
  // another logical device of the same physical one (k > 0): a Context of its own (its own VkInstance and VkDevice,
  // memory no other Context shares), as a second GPU would be
  int logical = 0;
  // a testing hook (TINYSCOPE_VK_FAULT=device_lost:N): the N-th batch waited for reports VK_ERROR_DEVICE_LOST once
  // the device is idle, as a real loss would, so the path to the user is tested on any device; 0: never
  int lose_device_at_wait = 0;
  // VK_NV_cooperative_matrix2's workgroup scope and flexible dimensions enabled where the device has them (what
  // workgroup-scope tensor-core kernels need: TC_WG=1)
  bool workgroup_matrices = false;
  bool operator==(const OpenOptions&) const = default;
};

// Validation (and performance) warnings and errors; general messages (the loader's notes) are only counted.
struct ValidationMessages {
  uint64_t errors = 0, warnings = 0, general = 0;
  std::vector<std::string> last;  // the text of the last few warnings and errors, oldest first
  uint64_t count() const { return errors + warnings; }
};

class Context;
struct BufferImpl;
struct ProgramImpl;
struct BatchImpl;

// A device-local storage buffer (usable as a storage buffer, a copy source and a copy destination). A handle:
// copies share the buffer; it is freed with the last copy (or, when a batch still running uses it, after that).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  uint64_t size() const;
  explicit operator bool() const { return static_cast<bool>(impl_); }
  bool operator==(const DeviceBuffer& o) const { return impl_ == o.impl_; }

 private:
  friend class Context;
  friend class Batch;
  std::shared_ptr<BufferImpl> impl_;
};

// One figure a driver reports of a compiled pipeline (VK_KHR_pipeline_executable_properties), as it names it
// ("Register Count", "Shared Memory Size", ...): its value as text, and as a number where it is one.
struct PipelineStatistic {
  std::string name, description, value;
  std::optional<double> number;
};

// A compute pipeline: set 0 has storage buffers at bindings 0..num_buffers-1 (buffer i at binding i) and an
// optional push-constant block of push_bytes bytes; the local size is the shader's.
class Program {
 public:
  Program() = default;
  const std::string& name() const;
  uint32_t num_buffers() const;
  uint32_t push_bytes() const;
  std::array<uint32_t, 3> local_size() const;
  const ShaderInterface& interface() const;
  // what the driver reported of the machine code it compiled, for every executable of the pipeline (empty where the
  // device lacks DeviceInfo::pipeline_statistics)
  const std::vector<PipelineStatistic>& statistics() const;
  explicit operator bool() const { return static_cast<bool>(impl_); }

 private:
  friend class Context;
  friend class Batch;
  std::shared_ptr<Context> ctx_;
  std::shared_ptr<ProgramImpl> impl_;
};

// Push-constant bytes in the shader's layout: each value at the next offset aligned to its own size.
class PushConstants {
 public:
  PushConstants& i32(int32_t v) { return put(&v, 4); }
  PushConstants& u32(uint32_t v) { return put(&v, 4); }
  PushConstants& f32(float v) { return put(&v, 4); }
  PushConstants& i64(int64_t v) { return put(&v, 8); }
  PushConstants& u64(uint64_t v) { return put(&v, 8); }
  std::span<const uint8_t> bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  PushConstants& put(const void* v, size_t n);
  std::vector<uint8_t> bytes_;
};

struct BatchOptions {
  bool timestamps = true;   // a timestamp before and after every dispatch (when the queue supports them)
  bool serialize = false;   // a barrier before every dispatch after the first, so no two overlap (exact timings)
  bool after_previous = false;  // a barrier before the first operation too: it runs after everything submitted before
};

struct BatchResult {
  std::vector<std::string> names;   // one per operation, in order (dispatches and copies)
  std::vector<double> gpu_seconds;  // each operation's time from its timestamps; empty without timestamps.
                                    // Operations with no barrier between them may overlap, so may their times.
  double wall_seconds = 0;          // host time from the submit to the fence
  uint32_t barriers = 0;            // the barriers between operations (as Batch::barrier_count())
};

// The command buffer of one schedule: dispatches and copies in order, with a barrier before an operation only when
// it reads or writes bytes an earlier one (since the last barrier) wrote, or writes bytes that one read. What a
// dispatch reads and writes is the whole of each buffer its shader declares readonly (read), writeonly (written) or
// neither (both); a copy, its two ranges. Recorded on the first submit and submitted again as it is by later ones
// (operations added after a submit re-record it).
class Batch {
 public:
  Batch();
  ~Batch();
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) noexcept;

  // buffers.size() must be program.num_buffers(), push.size() program.push_bytes(); every group count is >= 1 and
  // within the device's maxComputeWorkGroupCount. `name` (default: the program's) is what results and errors say.
  void dispatch(const Program& program, const std::vector<DeviceBuffer>& buffers, std::span<const uint8_t> push,
                std::array<uint32_t, 3> groups, const std::string& name = {});
  // Copies `bytes` from src+src_offset to dst+dst_offset on the device. Offsets and size multiples of 4: a copy
  // shader (16-byte words when all three are multiples of 16); otherwise vkCmdCopyBuffer. Overlapping ranges of
  // one buffer are an Error. Zero bytes: nothing is recorded.
  void copy(const DeviceBuffer& dst, uint64_t dst_offset, const DeviceBuffer& src, uint64_t src_offset,
            uint64_t bytes);
  size_t size() const;             // operations recorded
  uint32_t barrier_count() const;  // barriers between operations so far
  // Submits and waits at most timeout_s (> 0). Throws an Error naming the batch's kernels when the fence does not
  // signal in time (the batch keeps running; see Context::wait_idle) and "device lost" when the device is lost.
  BatchResult submit_and_wait(double timeout_s);
  // The same in two steps: submit() returns at once, so the host can record the next batch (with after_previous)
  // while this one runs; wait() then waits for it as submit_and_wait does. A batch is waited for before it is
  // submitted again; wall_seconds counts from submit().
  void submit();
  BatchResult wait(double timeout_s);

 private:
  friend class Context;
  std::unique_ptr<BatchImpl> impl_;
};

struct ContextStats {
  uint64_t buffers = 0, buffer_bytes = 0;   // live buffers and their bytes
  uint64_t pipelines_created = 0;           // vkCreateComputePipelines calls (reuse does not count)
  uint64_t submissions = 0;                 // batches and staging transfers submitted
  uint64_t staging_bytes = 0;               // the staging buffer's current size (0: none yet, or not needed)
};

class Context : public std::enable_shared_from_this<Context> {
 public:
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const;
  const OpenOptions& options() const;
  bool validation_active() const;            // VK_LAYER_KHRONOS_validation is among the active layers
  ValidationMessages validation_messages() const;
  void clear_validation_messages();
  bool direct_transfers() const;             // device buffers are mapped: copies are a memcpy, no staging
  bool lost() const;                         // the device was lost: every call throws
  ContextStats stats() const;

  // Throws for a size over maxStorageBufferRange or maxMemoryAllocationSize (naming the size and the limit) and for
  // out of device memory (naming the size). A 0-byte buffer is valid (4 bytes are allocated for it).
  DeviceBuffer alloc(uint64_t bytes);
  void copy_in(const DeviceBuffer& dst, const void* src, uint64_t bytes, uint64_t offset = 0);
  void copy_out(void* dst, const DeviceBuffer& src, uint64_t bytes, uint64_t offset = 0);

  Compiler& compiler();
  SpirvBinary compile_glsl(const std::string& source, const std::string& name) {
    return compiler().compile_glsl(source, name);
  }
  // The SPIR-V is validated and checked against the program's layout and the device (limits, features); the same
  // SPIR-V with the same layout gives the same pipeline (created once per Context, through its VkPipelineCache).
  Program program(const SpirvBinary& spirv, const std::string& name, uint32_t num_buffers, uint32_t push_bytes);
  Batch batch(const BatchOptions& options = {});
  // Waits at most timeout_s for every batch still running (those that timed out). True when none is left.
  bool wait_idle(double timeout_s);

  struct Impl;

 private:
  friend std::shared_ptr<Context> open_device(int, const OpenOptions&);
  friend struct BufferImpl;
  friend struct BatchImpl;
  friend class Batch;
  Context();
  std::unique_ptr<Impl> impl_;
};

// The Context of device `index` (as enumerate_devices() numbers them): one per device per process, created on the
// first call and shared while any handle to it lives. A second open with other options while the first is alive is
// an Error. Vulkan 1.2 or newer is required.
std::shared_ptr<Context> open_device(int index, const OpenOptions& options = {});

}  // namespace ts::vk
