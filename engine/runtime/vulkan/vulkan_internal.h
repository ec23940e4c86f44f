#pragma once
// What the vulkan*.cpp files share (private to them): the Vulkan headers, entry points, the Context's state
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"

namespace ts::vk {

// ---- VK_KHR_cooperative_matrix (newer than these headers: the layouts of the extension's structures) -----------
constexpr const char* kCoopMatrixExt = "VK_KHR_cooperative_matrix";
constexpr VkStructureType kSTypeCoopFeatures = static_cast<VkStructureType>(1000506000);
constexpr VkStructureType kSTypeCoopProperties = static_cast<VkStructureType>(1000506001);
struct CoopMatrixProperties {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  uint32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation;
  uint32_t scope;                            // VkScopeKHR
};
struct CoopMatrixFeatures {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};
// VK_KHR_shader_bfloat16 (newer than these headers too)
constexpr const char* kBfloat16Ext = "VK_KHR_shader_bfloat16";
constexpr VkStructureType kSTypeBfloat16Features = static_cast<VkStructureType>(1000141000);
struct Bfloat16Features {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderBFloat16Type;
  VkBool32 shaderBFloat16DotProduct;
  VkBool32 shaderBFloat16CooperativeMatrix;
};
using PFN_GetCoopMatrixProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CoopMatrixProperties*);
// VK_NV_cooperative_matrix2 (newer than these headers too): workgroup-scope matrices of flexible sizes
constexpr const char* kCoopMatrix2Ext = "VK_NV_cooperative_matrix2";
constexpr VkStructureType kSTypeCoop2Features = static_cast<VkStructureType>(1000593000);
constexpr VkStructureType kSTypeCoopFlexibleProperties = static_cast<VkStructureType>(1000593001);
constexpr VkStructureType kSTypeCoop2Properties = static_cast<VkStructureType>(1000593002);
struct CoopMatrix2Features {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrixWorkgroupScope, cooperativeMatrixFlexibleDimensions, cooperativeMatrixReductions,
      cooperativeMatrixConversions, cooperativeMatrixPerElementOperations, cooperativeMatrixTensorAddressing,
      cooperativeMatrixBlockLoads;
};
struct CoopMatrix2Properties {
  VkStructureType sType;
  void* pNext;
  uint32_t cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  uint32_t cooperativeMatrixFlexibleDimensionsMaxDimension;
  uint32_t cooperativeMatrixWorkgroupScopeReservedSharedMemory;
};
struct CoopMatrixFlexibleProperties {
  VkStructureType sType;
  void* pNext;
  uint32_t MGranularity, NGranularity, KGranularity;
  uint32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation;
  uint32_t scope;                            // VkScopeKHR
  uint32_t workgroupInvocations;
};
using PFN_GetCoopMatrixFlexibleProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CoopMatrixFlexibleProperties*);

// ---- entry points ------------------------------------------------------------------------------------------------
#define TS_VK_GLOBAL(X) \
  X(vkCreateInstance) X(vkEnumerateInstanceExtensionProperties) X(vkEnumerateInstanceLayerProperties)
#define TS_VK_INSTANCE(X)                                                                                        \
  X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                          \
  X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceMemoryProperties)     \
  X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkEnumerateDeviceExtensionProperties)                          \
  X(vkEnumerateDeviceLayerProperties) X(vkCreateDevice) X(vkGetDeviceProcAddr)
#define TS_VK_DEVICE(X)                                                                                          \
  X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory)                    \
  X(vkFlushMappedMemoryRanges) X(vkInvalidateMappedMemoryRanges) X(vkCreateShaderModule)                       \
  X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)                      \
  X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) X(vkCreatePipelineCache) X(vkDestroyPipelineCache)      \
  X(vkGetPipelineCacheData) X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool)         \
  X(vkDestroyDescriptorPool) X(vkResetDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets)    \
  X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkResetCommandPool) X(vkAllocateCommandBuffers)             \
  X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets)                \
  X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCmdWriteTimestamp)     \
  X(vkCmdResetQueryPool) X(vkCreateQueryPool) X(vkDestroyQueryPool) X(vkGetQueryPoolResults) X(vkCreateFence)  \
  X(vkDestroyFence) X(vkResetFences) X(vkWaitForFences) X(vkGetFenceStatus) X(vkQueueSubmit) X(vkDeviceWaitIdle)  \
  X(vkGetPipelineExecutablePropertiesKHR) X(vkGetPipelineExecutableStatisticsKHR)

#define TS_VK_DECLARE(f) PFN_##f f = nullptr;
struct GlobalFns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
  TS_VK_GLOBAL(TS_VK_DECLARE)
};
struct InstanceFns {
  TS_VK_INSTANCE(TS_VK_DECLARE)
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
  PFN_GetCoopMatrixProperties vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR = nullptr;
  PFN_GetCoopMatrixFlexibleProperties vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV = nullptr;
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = nullptr;
};
struct DeviceFns {
  TS_VK_DEVICE(TS_VK_DECLARE)
};
#undef TS_VK_DECLARE

// the driver's data of a pipeline cache file save_pipeline_cache() wrote; empty when it is missing, cut or damaged
std::vector<char> read_pipeline_cache_file(const std::string& path);
// "VK_ERROR_DEVICE_LOST (-4)" (vulkan.cpp)
std::string result_text(VkResult r);
// "123 bytes (1.5 GiB)", "0.5 s", a timeout checked to be positive and finite, in nanoseconds (vulkan.cpp)
std::string bytes_text(uint64_t b);
std::string seconds_text(double s);
double checked_timeout(double s, const char* what);
uint64_t timeout_ns(double s);

// ---- instances -----------------------------------------------------------------------------------------------

struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  InstanceFns fns;
  uint32_t api = VK_API_VERSION_1_1;
  bool debug_utils = false;
};

// ---- the Context's state ------------------------------------------------------------------------------------------

struct Staging {
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  void* map = nullptr;
  uint64_t size = 0;
};

// The resources of one submission, recycled through the Context: a command buffer, its fence, a timestamp query
// pool and a descriptor pool (both grown on demand), and for transfers a staging buffer.
struct Frame {
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  uint32_t query_cap = 0;
  VkDescriptorPool descs = VK_NULL_HANDLE;
  uint32_t set_cap = 0, desc_cap = 0;
  uint64_t serial = 0;  // of its last submission (0: never submitted)
  Staging staging;
};

struct DeferredBuffer {
  uint64_t serial;
  VkBuffer buf;
  VkDeviceMemory mem;
};

struct ProgramImpl {
  const Context* owner = nullptr;
  std::string name;
  uint32_t num_buffers = 0, push_bytes = 0;
  ShaderInterface iface;
  std::vector<Access> access;  // per binding; unused bindings: not accessed (see used)
  std::vector<bool> used;
  std::vector<uint32_t> words;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  bool push_descriptors = false;  // its buffers are pushed into the command buffer (no descriptor set to allocate)
  std::vector<PipelineStatistic> statistics;
};

struct Context::Impl {
  Context* self = nullptr;
  OpenOptions options;
  DeviceInfo info;
  Instance inst;
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  DeviceFns fn;
  VkQueue queue = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  bool validation = false;
  VkPhysicalDeviceMemoryProperties mem_props{};
  uint32_t device_type = 0, staging_type = 0;
  bool direct = false, device_coherent = true, staging_coherent = true;
  std::string label;  // "Vulkan device 0 (llvmpipe ...)"
  std::unique_ptr<Compiler> compiler;

  // validation messages (the messenger's callback may run on any thread)
  mutable std::mutex msg_mu;
  ValidationMessages msgs;

  std::atomic<bool> lost{false};
  std::atomic<int> waits{0};  // batches waited for (OpenOptions::lose_device_at_wait counts them)
  std::atomic<uint64_t> completed{0};  // every submission up to this serial has finished
  std::mutex queue_mu;                 // vkQueueSubmit, serials
  uint64_t next_serial = 0;
  std::mutex state_mu;                 // frames, pending, deferred, stats
  std::vector<std::unique_ptr<Frame>> free_frames;
  std::vector<std::unique_ptr<Frame>> pending;  // submitted frames nobody waits for any more
  std::vector<DeferredBuffer> deferred;
  ContextStats stats;
  std::mutex transfer_mu;              // the staging frame
  std::unique_ptr<Frame> transfer;
  std::mutex program_mu;               // programs, layouts, the pipeline cache
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  std::string pipeline_cache_file;
  std::map<uint32_t, VkDescriptorSetLayout> set_layouts;
  // VK_KHR_push_descriptor where the device has it: a program of at most max_push_descriptors buffers pushes them
  PFN_vkCmdPushDescriptorSetKHR push_descriptors = nullptr;
  bool pushes(uint32_t n) const { return push_descriptors && n <= info.max_push_descriptors; }
  std::map<std::pair<uint32_t, uint32_t>, VkPipelineLayout> layouts;
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<ProgramImpl>>> programs;
  std::shared_ptr<ProgramImpl> copy_words, copy_vec4;

  ~Impl();
  [[noreturn]] void fail(const std::string& what) const { throw Error(label + ": " + what); }
  void check(VkResult r, const char* what) {
    if (r == VK_SUCCESS) return;
    if (r == VK_ERROR_DEVICE_LOST) {
      lost = true;
      fail(std::string("device lost (VK_ERROR_DEVICE_LOST from ") + what + "); nothing more runs on it in this process");
    }
    fail(std::string(what) + " failed: " + result_text(r));
  }
  void check_alive() const {
    if (lost) fail("device lost earlier in this process (VK_ERROR_DEVICE_LOST): nothing more runs on it; start again");
  }

  uint32_t pick_memory_type(uint32_t bits, std::initializer_list<VkMemoryPropertyFlags> prefs) const {
    for (VkMemoryPropertyFlags want : prefs)
      for (uint32_t i = 0; i < mem_props.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mem_props.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
  }
  bool type_is(uint32_t t, VkMemoryPropertyFlags f) const { return (mem_props.memoryTypes[t].propertyFlags & f) == f; }

  // buffers and memory
  VkResult make_buffer(uint64_t size, uint32_t type, bool map, VkBuffer* buf, VkDeviceMemory* mem, void** ptr);
  void destroy_buffer(VkBuffer b, VkDeviceMemory m) {
    if (b) fn.vkDestroyBuffer(device, b, nullptr);
    if (m) fn.vkFreeMemory(device, m, nullptr);
  }
  void release_buffer(VkBuffer b, VkDeviceMemory m, uint64_t bytes, uint64_t last_serial);

  // frames and submissions
  std::unique_ptr<Frame> acquire_frame();
  void destroy_frame(Frame& f);
  void recycle_frame(std::unique_ptr<Frame> f);  // finished or never submitted: back to the free list
  void retire_or_park(std::unique_ptr<Frame> f);  // still running: pending, else recycled
  uint64_t submit(Frame& f, const std::vector<BufferImpl*>& buffers);
  enum class Wait { Done, Timeout, Lost };
  Wait wait(Frame& f, double timeout_s);
  void mark_completed(uint64_t serial);
  void reap();
  bool in_use(const BufferImpl& b);
  void ensure_staging(Frame& f, uint64_t bytes);
  void transfer_chunk(Frame& f, const BufferImpl& b, uint64_t offset, uint64_t bytes, bool upload);

  // programs
  VkDescriptorSetLayout set_layout(uint32_t n);
  VkPipelineLayout pipeline_layout(uint32_t n, uint32_t k);
  std::shared_ptr<ProgramImpl> make_program(const SpirvBinary& spirv, const std::string& name, uint32_t n, uint32_t k);
  std::vector<PipelineStatistic> pipeline_statistics(VkPipeline pipeline) const;
  std::shared_ptr<ProgramImpl> copy_program(bool vec4);
  void save_pipeline_cache();

  void on_message(VkDebugUtilsMessageSeverityFlagBitsEXT sev, VkDebugUtilsMessageTypeFlagsEXT type, const char* text) {
    std::lock_guard lock(msg_mu);
    if (!(type & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT))) {
      msgs.general++;  // the loader's and layers' notes ("adding layers from VK_INSTANCE_LAYERS")
      return;
    }
    if (sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) msgs.errors++;
    else msgs.warnings++;
    // said where it happens (between the lines of the script that caused it), not only counted
    std::fprintf(stderr, "Vulkan validation layer %s: %s\n", sev & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning", text ? text : "");
    msgs.last.push_back(text ? text : "");
    if (msgs.last.size() > 8) msgs.last.erase(msgs.last.begin());
  }
};

struct BufferImpl {
  std::shared_ptr<Context> ctx;
  VkBuffer buf = VK_NULL_HANDLE;
  VkDeviceMemory mem = VK_NULL_HANDLE;
  uint8_t* map = nullptr;  // direct transfers
  uint64_t size = 0;       // what was asked for
  uint64_t vk_size = 0;    // the VkBuffer's size (at least 4)
  std::atomic<uint64_t> last_serial{0};
  ~BufferImpl() {
    if (buf) ctx->impl_->release_buffer(buf, mem, size, last_serial.load());  // (none when the allocation failed)
  }
};

}  // namespace ts::vk
