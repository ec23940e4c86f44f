// The Vulkan runtime (vulkan.h): the one translation unit with the Vulkan headers. The loader is opened with
// dlopen and every entry point is fetched through vkGetInstanceProcAddr / vkGetDeviceProcAddr, so nothing links
// against libvulkan and a machine without it gets an empty device list.
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"

namespace ts::vk {
namespace {

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
using PFN_GetCoopMatrixProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CoopMatrixProperties*);

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
  X(vkDestroyFence) X(vkResetFences) X(vkWaitForFences) X(vkGetFenceStatus) X(vkQueueSubmit)

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
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = nullptr;
};
struct DeviceFns {
  TS_VK_DEVICE(TS_VK_DECLARE)
};
#undef TS_VK_DECLARE

struct Loader {
  void* lib = nullptr;
  GlobalFns g;
  std::string error;  // why there is no Vulkan
};

// The loader, opened once per process and never closed (drivers keep threads and atexit handlers).
const Loader& loader() {
  static const Loader L = [] {
    Loader l;
    for (const char* name : {"libvulkan.so.1", "libvulkan.so"}) {
      l.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (l.lib) break;
    }
    if (!l.lib) {
      const char* e = dlerror();
      l.error = std::string("no Vulkan loader (libvulkan.so.1: ") + (e ? e : "not found") + ")";
      return l;
    }
    l.g.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(l.lib, "vkGetInstanceProcAddr"));
    if (!l.g.vkGetInstanceProcAddr) {
      l.error = "the Vulkan loader has no vkGetInstanceProcAddr";
      return l;
    }
#define TS_VK_LOAD(f) l.g.f = reinterpret_cast<PFN_##f>(l.g.vkGetInstanceProcAddr(nullptr, #f));
    TS_VK_GLOBAL(TS_VK_LOAD)
    TS_VK_LOAD(vkEnumerateInstanceVersion)
#undef TS_VK_LOAD
    if (!l.g.vkCreateInstance) l.error = "the Vulkan loader has no vkCreateInstance";
    return l;
  }();
  return L;
}

InstanceFns load_instance_fns(VkInstance inst) {
  InstanceFns f;
  auto gipa = loader().g.vkGetInstanceProcAddr;
#define TS_VK_LOAD(name) f.name = reinterpret_cast<PFN_##name>(gipa(inst, #name));
  TS_VK_INSTANCE(TS_VK_LOAD)
  TS_VK_LOAD(vkCreateDebugUtilsMessengerEXT)
  TS_VK_LOAD(vkDestroyDebugUtilsMessengerEXT)
  TS_VK_LOAD(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)
#undef TS_VK_LOAD
  f.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR =
      reinterpret_cast<PFN_GetCoopMatrixProperties>(gipa(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  return f;
}

DeviceFns load_device_fns(const InstanceFns& in, VkDevice dev) {
  DeviceFns f;
#define TS_VK_LOAD(name) f.name = reinterpret_cast<PFN_##name>(in.vkGetDeviceProcAddr(dev, #name));
  TS_VK_DEVICE(TS_VK_LOAD)
#undef TS_VK_LOAD
  return f;
}

const char* result_name(VkResult r) {
  switch (r) {
#define TS_CASE(x) case x: return #x;
    TS_CASE(VK_SUCCESS) TS_CASE(VK_NOT_READY) TS_CASE(VK_TIMEOUT) TS_CASE(VK_INCOMPLETE)
    TS_CASE(VK_ERROR_OUT_OF_HOST_MEMORY) TS_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY) TS_CASE(VK_ERROR_INITIALIZATION_FAILED)
    TS_CASE(VK_ERROR_DEVICE_LOST) TS_CASE(VK_ERROR_MEMORY_MAP_FAILED) TS_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    TS_CASE(VK_ERROR_EXTENSION_NOT_PRESENT) TS_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    TS_CASE(VK_ERROR_INCOMPATIBLE_DRIVER) TS_CASE(VK_ERROR_TOO_MANY_OBJECTS) TS_CASE(VK_ERROR_FRAGMENTED_POOL)
    TS_CASE(VK_ERROR_OUT_OF_POOL_MEMORY) TS_CASE(VK_ERROR_INVALID_SHADER_NV) TS_CASE(VK_ERROR_UNKNOWN)
#undef TS_CASE
    default: return "VkResult";
  }
}
std::string result_text(VkResult r) { return std::string(result_name(r)) + " (" + std::to_string(r) + ")"; }

std::string version_text(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}
std::string driver_version_text(uint32_t vendor, uint32_t v) {
  if (vendor == 0x10DE)  // NVIDIA: 10.8.8.6 bits
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." + std::to_string((v >> 6) & 0xff);
  return version_text(v);
}
const char* device_type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}
std::string component_type_name(uint32_t t) {
  static const char* names[] = {"float16", "float32", "float64", "sint8",  "sint16", "sint32",
                                "sint64",  "uint8",   "uint16",  "uint32", "uint64"};
  if (t < 11) return names[t];
  if (t == 1000141000) return "bfloat16";
  if (t == 1000491002) return "float8_e4m3";
  if (t == 1000491003) return "float8_e5m2";
  return "type " + std::to_string(t);
}
std::string scope_name(uint32_t s) {
  switch (s) {
    case 1: return "device";
    case 2: return "workgroup";
    case 3: return "subgroup";
    case 5: return "queue family";
    default: return "scope " + std::to_string(s);
  }
}

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// ---- instances -----------------------------------------------------------------------------------------------

struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  InstanceFns fns;
  uint32_t api = VK_API_VERSION_1_1;
  bool debug_utils = false;
};

// An instance of the newest API up to 1.3 the loader offers (1.1 at least). Returns an empty handle and sets *why
// when there is no loader or no driver.
Instance create_instance(bool validation, bool debug_utils, const void* pnext, std::string* why) {
  Instance inst;
  const Loader& L = loader();
  if (!L.error.empty()) {
    *why = L.error;
    return inst;
  }
  uint32_t api = VK_API_VERSION_1_0;
  if (L.g.vkEnumerateInstanceVersion) L.g.vkEnumerateInstanceVersion(&api);
  if (api < VK_API_VERSION_1_1) {
    *why = "the Vulkan loader offers API " + version_text(api) + "; 1.1 or newer is needed";
    return inst;
  }
  inst.api = std::min<uint32_t>(api, VK_API_VERSION_1_3);
  uint32_t n = 0;
  L.g.vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  L.g.vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
  std::vector<const char*> enable;
  VkInstanceCreateFlags flags = 0;
  if (has_extension(exts, "VK_KHR_portability_enumeration")) {
    enable.push_back("VK_KHR_portability_enumeration");
    flags |= 0x00000001;  // VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
  }
  inst.debug_utils = debug_utils && has_extension(exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (inst.debug_utils) enable.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  std::vector<const char*> layers;
  if (validation) {
    L.g.vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> lp(n);
    L.g.vkEnumerateInstanceLayerProperties(&n, lp.data());
    bool found = std::any_of(lp.begin(), lp.end(), [](auto& l) {
      return std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    });
    if (!found)
      throw Error("the Vulkan validation layer VK_LAYER_KHRONOS_validation is not installed "
                  "(Debian: vulkan-validationlayers)");
    layers.push_back("VK_LAYER_KHRONOS_validation");
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tinyscope";
  app.pEngineName = "tinyscope";
  app.apiVersion = inst.api;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pNext = inst.debug_utils ? pnext : nullptr;
  ci.flags = flags;
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  ci.ppEnabledExtensionNames = enable.data();
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  VkResult r = L.g.vkCreateInstance(&ci, nullptr, &inst.handle);
  if (r != VK_SUCCESS) {
    inst.handle = VK_NULL_HANDLE;
    *why = r == VK_ERROR_INCOMPATIBLE_DRIVER ? "no Vulkan driver (vkCreateInstance: " + result_text(r) + ")"
                                             : "vkCreateInstance failed: " + result_text(r);
    return inst;
  }
  inst.fns = load_instance_fns(inst.handle);
  return inst;
}

std::vector<VkPhysicalDevice> physical_devices(const Instance& inst) {
  uint32_t n = 0;
  inst.fns.vkEnumeratePhysicalDevices(inst.handle, &n, nullptr);
  std::vector<VkPhysicalDevice> pds(n);
  if (n) inst.fns.vkEnumeratePhysicalDevices(inst.handle, &n, pds.data());
  pds.resize(n);
  return pds;
}

std::vector<VkExtensionProperties> device_extensions(const Instance& inst, VkPhysicalDevice pd) {
  uint32_t n = 0;
  inst.fns.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  inst.fns.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  exts.resize(n);
  return exts;
}

DeviceInfo query_device(const Instance& inst, VkPhysicalDevice pd, int index) {
  const InstanceFns& F = inst.fns;
  DeviceInfo d;
  d.index = index;
  VkPhysicalDeviceProperties p0{};
  F.vkGetPhysicalDeviceProperties(pd, &p0);
  const uint32_t api = p0.apiVersion;
  auto exts = device_extensions(inst, pd);

  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDevicePushDescriptorPropertiesKHR pushd{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  CoopMatrixFeatures coop{kSTypeCoopFeatures, nullptr, VK_FALSE, VK_FALSE};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  const bool v11 = api >= VK_API_VERSION_1_1, v12 = api >= VK_API_VERSION_1_2;
  const bool coop_ext = v12 && has_extension(exts, kCoopMatrixExt) && F.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR;
  const bool coop_nv_ext = v12 && has_extension(exts, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) && F.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV;
  const bool push_ext = has_extension(exts, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  if (v11) {
    sub.pNext = &m3;
    if (v12) m3.pNext = &drv;
    if (push_ext) (v12 ? drv.pNext : m3.pNext) = &pushd;
    p2.pNext = &sub;
    F.vkGetPhysicalDeviceProperties2(pd, &p2);
    if (v12) {
      f2.pNext = &f11;
      f11.pNext = &f12;
      void** tail = &f12.pNext;
      if (coop_ext) {
        *tail = &coop;
        tail = &coop.pNext;
      }
      if (coop_nv_ext) *tail = &coop_nv;
    }
    F.vkGetPhysicalDeviceFeatures2(pd, &f2);
  } else {
    p2.properties = p0;
  }
  const VkPhysicalDeviceLimits& lim = p0.limits;
  d.name = p0.deviceName;
  d.type = device_type_name(p0.deviceType);
  d.vendor_id = p0.vendorID;
  d.device_id = p0.deviceID;
  d.api_version_raw = api;
  d.api_version = version_text(api);
  d.driver_version_raw = p0.driverVersion;
  d.driver_version = driver_version_text(p0.vendorID, p0.driverVersion);
  if (v12) {
    d.driver_name = drv.driverName;
    d.driver_info = drv.driverInfo;
  }
  // gallivm's LP_MAX_TGSI_LOOP_ITERATIONS (Mesa 22.3; measured by the runtime's tests)
  if (d.driver_name == "llvmpipe" || d.name.rfind("llvmpipe", 0) == 0) d.loop_iteration_limit = 65535;
  d.subgroup_size = v11 ? sub.subgroupSize : 0;
  d.max_workgroup_invocations = lim.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; i++) {
    d.max_workgroup_size[i] = lim.maxComputeWorkGroupSize[i];
    d.max_workgroup_count[i] = lim.maxComputeWorkGroupCount[i];
  }
  d.max_shared_memory = lim.maxComputeSharedMemorySize;
  d.max_storage_buffer_range = lim.maxStorageBufferRange;
  d.max_allocation_size = v11 ? m3.maxMemoryAllocationSize : 0;
  d.max_allocation_count = lim.maxMemoryAllocationCount;
  d.max_push_constants_size = lim.maxPushConstantsSize;
  d.max_storage_buffers_per_stage = lim.maxPerStageDescriptorStorageBuffers;
  d.min_storage_buffer_offset_alignment = lim.minStorageBufferOffsetAlignment;
  d.timestamp_period_ns = lim.timestampPeriod;

  VkPhysicalDeviceMemoryProperties mp{};
  F.vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  bool any_local = false, all_local_visible = true;
  for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
    if (mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      d.device_local_heap_size = std::max<uint64_t>(d.device_local_heap_size, mp.memoryHeaps[i].size);
  for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
    VkMemoryPropertyFlags fl = mp.memoryTypes[i].propertyFlags;
    if (fl & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
      any_local = true;
      all_local_visible = all_local_visible && (fl & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
    }
  }
  d.unified_memory = any_local && all_local_visible;
  if (!d.max_allocation_size) d.max_allocation_size = d.device_local_heap_size;

  uint32_t nq = 0;
  F.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  F.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf.data());
  int pick = -1;
  d.compute_queue_family = UINT32_MAX;
  for (uint32_t i = 0; i < nq; i++) {  // the first compute family, preferring one with timestamps
    if (!(qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || qf[i].queueCount == 0) continue;
    if (pick < 0 || (qf[pick].timestampValidBits == 0 && qf[i].timestampValidBits > 0)) pick = static_cast<int>(i);
  }
  if (pick >= 0) {
    d.compute_queue_family = static_cast<uint32_t>(pick);
    d.timestamp_valid_bits = qf[pick].timestampValidBits;
    d.compute_timestamps = d.timestamp_valid_bits > 0 && d.timestamp_period_ns > 0;
  }

  if (v11 && push_ext) d.max_push_descriptors = pushd.maxPushDescriptors;
  d.int64 = f2.features.shaderInt64;
  d.float64 = f2.features.shaderFloat64;
  d.int16 = f2.features.shaderInt16;
  if (v12) {
    d.storage_buffer_16bit = f11.storageBuffer16BitAccess;
    d.storage_buffer_8bit = f12.storageBuffer8BitAccess;
    d.float16 = f12.shaderFloat16;
    d.int8 = f12.shaderInt8;
  }
  if (coop_ext && coop.cooperativeMatrix) {
    d.cooperative_matrix = true;
    uint32_t n = 0;
    F.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, nullptr);
    std::vector<CoopMatrixProperties> props(n, CoopMatrixProperties{kSTypeCoopProperties, nullptr, 0, 0, 0, 0, 0, 0,
                                                                     0, VK_FALSE, 0});
    if (n) F.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, props.data());
    props.resize(n);
    for (auto& c : props)
      d.cooperative_matrix_shapes.push_back({c.MSize, c.NSize, c.KSize, component_type_name(c.AType),
                                             component_type_name(c.BType), component_type_name(c.CType),
                                             component_type_name(c.ResultType), scope_name(c.scope),
                                             c.saturatingAccumulation == VK_TRUE});
  }
  if (coop_nv_ext && coop_nv.cooperativeMatrix) {
    d.cooperative_matrix_nv = true;
    uint32_t n = 0;
    F.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, nullptr);
    std::vector<VkCooperativeMatrixPropertiesNV> props(n, VkCooperativeMatrixPropertiesNV{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
    if (n) F.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &n, props.data());
    props.resize(n);
    // VkComponentTypeNV and VkScopeNV have the KHR values
    for (auto& c : props)
      d.cooperative_matrix_nv_shapes.push_back({c.MSize, c.NSize, c.KSize, component_type_name(c.AType), component_type_name(c.BType),
                                                component_type_name(c.CType), component_type_name(c.DType), scope_name(c.scope), false});
  }
  return d;
}

std::string bytes_text(uint64_t b) {
  std::ostringstream o;
  o << b << " bytes";
  if (b >= (1ull << 30)) o << " (" << std::fixed << std::setprecision(1) << double(b) / double(1ull << 30) << " GiB)";
  else if (b >= (1ull << 20)) o << " (" << std::fixed << std::setprecision(1) << double(b) / double(1ull << 20) << " MiB)";
  return o.str();
}

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%g s", s);
  return b;
}

double checked_timeout(double s, const char* what) {
  if (!(s > 0) || !std::isfinite(s))
    throw Error(std::string(what) + ": the timeout must be a positive number of seconds, got " + seconds_text(s));
  return s;
}
uint64_t timeout_ns(double s) { return static_cast<uint64_t>(std::min(s, 1e9) * 1e9); }

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

constexpr uint32_t kSpvCapInt8 = 39, kSpvCapInt16 = 22, kSpvCapInt64 = 11, kSpvCapFloat16 = 9, kSpvCapFloat64 = 10;

// The copy shaders: n words (uint or uvec4) from src[src_off..] to dst[dst_off..], in a grid-stride loop.
std::string copy_shader_source(const char* type) {
  return std::string("#version 450\nlayout(local_size_x = 256) in;\n") +
         "layout(set = 0, binding = 0) writeonly buffer Dst { " + type + " d[]; };\n" +
         "layout(set = 0, binding = 1) readonly buffer Src { " + type + " s[]; };\n" +
         "layout(push_constant) uniform P { uint src_off; uint dst_off; uint n; } p;\n"
         "void main() {\n"
         "  uint stride = gl_NumWorkGroups.x * 256u;\n"
         "  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) d[p.dst_off + i] = s[p.src_off + i];\n"
         "}\n";
}

}  // namespace

// ---- the Context's state ------------------------------------------------------------------------------------------

namespace {
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

struct Op {
  enum Kind { Dispatch, CopyCmd } kind = Dispatch;
  std::shared_ptr<ProgramImpl> program;
  std::vector<std::shared_ptr<BufferImpl>> buffers;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // per buffer: the bound offset and size (empty: whole buffers)
  std::vector<uint8_t> push;
  std::array<uint32_t, 3> groups{};
  VkBufferCopy region{};  // CopyCmd: buffers = {dst, src}
  bool barrier_before = false;
  std::string name;
};
}  // namespace

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
      fail(std::string("device lost (") + what + ")");
    }
    fail(std::string(what) + " failed: " + result_text(r));
  }
  void check_alive() const {
    if (lost) fail("device lost");
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

namespace {
VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                              VkDebugUtilsMessageTypeFlagsEXT type,
                                              const VkDebugUtilsMessengerCallbackDataEXT* d, void* user) {
  static_cast<Context::Impl*>(user)->on_message(sev, type, d ? d->pMessage : nullptr);
  return VK_FALSE;
}
}  // namespace

// ---- buffers and memory ------------------------------------------------------------------------------------------

VkResult Context::Impl::make_buffer(uint64_t size, uint32_t type, bool map, VkBuffer* buf, VkDeviceMemory* mem,
                                    void** ptr) {
  *buf = VK_NULL_HANDLE;
  *mem = VK_NULL_HANDLE;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = fn.vkCreateBuffer(device, &bi, nullptr, buf);
  if (r != VK_SUCCESS) return r;
  VkMemoryRequirements req{};
  fn.vkGetBufferMemoryRequirements(device, *buf, &req);
  if (!(req.memoryTypeBits & (1u << type))) {  // unusual: pick again among the types this buffer allows
    VkMemoryPropertyFlags want = mem_props.memoryTypes[type].propertyFlags;
    type = pick_memory_type(req.memoryTypeBits, {want, want & ~VK_MEMORY_PROPERTY_HOST_CACHED_BIT,
                                                 want & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                         VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)});
    if (type == UINT32_MAX) {
      fn.vkDestroyBuffer(device, *buf, nullptr);
      *buf = VK_NULL_HANDLE;
      return VK_ERROR_FEATURE_NOT_PRESENT;
    }
  }
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  r = fn.vkAllocateMemory(device, &ai, nullptr, mem);
  if (r == VK_SUCCESS) r = fn.vkBindBufferMemory(device, *buf, *mem, 0);
  if (r == VK_SUCCESS && map) r = fn.vkMapMemory(device, *mem, 0, VK_WHOLE_SIZE, 0, ptr);
  if (r != VK_SUCCESS) {
    destroy_buffer(*buf, *mem);
    *buf = VK_NULL_HANDLE;
    *mem = VK_NULL_HANDLE;
  }
  return r;
}

void Context::Impl::release_buffer(VkBuffer b, VkDeviceMemory m, uint64_t bytes, uint64_t last_serial) {
  std::lock_guard lock(state_mu);
  stats.buffers--;
  stats.buffer_bytes -= bytes;
  if (last_serial > completed.load())
    deferred.push_back({last_serial, b, m});
  else
    destroy_buffer(b, m);
}

// ---- frames and submissions -------------------------------------------------------------------------------------

std::unique_ptr<Frame> Context::Impl::acquire_frame() {
  {
    std::lock_guard lock(state_mu);
    if (!free_frames.empty()) {
      auto f = std::move(free_frames.back());
      free_frames.pop_back();
      return f;
    }
  }
  auto f = std::make_unique<Frame>();
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.queueFamilyIndex = info.compute_queue_family;
  VkResult r = fn.vkCreateCommandPool(device, &pi, nullptr, &f->pool);
  if (r == VK_SUCCESS) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = f->pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    r = fn.vkAllocateCommandBuffers(device, &ai, &f->cmd);
  }
  if (r == VK_SUCCESS) {
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = fn.vkCreateFence(device, &fi, nullptr, &f->fence);
  }
  if (r != VK_SUCCESS) {
    destroy_frame(*f);
    check(r, "creating a command buffer");
  }
  return f;
}

void Context::Impl::destroy_frame(Frame& f) {
  if (f.staging.buf) destroy_buffer(f.staging.buf, f.staging.mem);
  f.staging = {};
  if (f.queries) fn.vkDestroyQueryPool(device, f.queries, nullptr);
  if (f.descs) fn.vkDestroyDescriptorPool(device, f.descs, nullptr);
  if (f.fence) fn.vkDestroyFence(device, f.fence, nullptr);
  if (f.pool) fn.vkDestroyCommandPool(device, f.pool, nullptr);  // frees its command buffer
  f = Frame{};
}

void Context::Impl::recycle_frame(std::unique_ptr<Frame> f) {
  if (!f) return;
  if (f->staging.buf) {  // staging buffers belong to the transfer frame only
    destroy_buffer(f->staging.buf, f->staging.mem);
    f->staging = {};
  }
  if (f->serial) fn.vkResetFences(device, 1, &f->fence);
  f->serial = 0;
  if (free_frames.size() < 16)
    free_frames.push_back(std::move(f));
  else
    destroy_frame(*f);
}

void Context::Impl::retire_or_park(std::unique_ptr<Frame> f) {
  if (!f) return;
  std::lock_guard lock(state_mu);
  if (f->serial > completed.load())
    pending.push_back(std::move(f));
  else
    recycle_frame(std::move(f));
}

uint64_t Context::Impl::submit(Frame& f, const std::vector<BufferImpl*>& buffers) {
  std::lock_guard lock(queue_mu);
  check_alive();
  if (f.serial) {  // a frame submitted before (and finished: completed >= serial) is reset first
    fn.vkResetFences(device, 1, &f.fence);
  }
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &f.cmd;
  VkResult r = fn.vkQueueSubmit(queue, 1, &si, f.fence);
  check(r, "vkQueueSubmit");
  f.serial = ++next_serial;
  for (BufferImpl* b : buffers) b->last_serial.store(f.serial);
  {
    std::lock_guard s(state_mu);
    stats.submissions++;
  }
  return f.serial;
}

Context::Impl::Wait Context::Impl::wait(Frame& f, double timeout_s) {
  VkResult r = fn.vkWaitForFences(device, 1, &f.fence, VK_TRUE, timeout_ns(timeout_s));
  if (r == VK_TIMEOUT) return Wait::Timeout;
  if (r == VK_ERROR_DEVICE_LOST) {
    lost = true;
    return Wait::Lost;
  }
  check(r, "vkWaitForFences");
  mark_completed(f.serial);
  return Wait::Done;
}

void Context::Impl::mark_completed(uint64_t serial) {
  std::lock_guard lock(state_mu);
  if (serial > completed.load()) completed.store(serial);
  const uint64_t done = completed.load();
  for (size_t i = 0; i < deferred.size();) {
    if (deferred[i].serial <= done) {
      destroy_buffer(deferred[i].buf, deferred[i].mem);
      deferred[i] = deferred.back();
      deferred.pop_back();
    } else {
      i++;
    }
  }
  for (size_t i = 0; i < pending.size();) {
    if (pending[i]->serial <= done) {
      recycle_frame(std::move(pending[i]));
      pending[i] = std::move(pending.back());
      pending.pop_back();
    } else {
      i++;
    }
  }
}

// Submissions finish in order (a fence signal covers every earlier submission of the queue): the newest signalled
// pending fence completes everything up to its serial.
void Context::Impl::reap() {
  uint64_t best = 0;
  {
    std::lock_guard lock(state_mu);
    for (auto& f : pending) {
      VkResult r = fn.vkGetFenceStatus(device, f->fence);
      if (r == VK_SUCCESS) best = std::max(best, f->serial);
      if (r == VK_ERROR_DEVICE_LOST) lost = true;
    }
  }
  if (best) mark_completed(best);
}

bool Context::Impl::in_use(const BufferImpl& b) {
  if (b.last_serial.load() <= completed.load()) return false;
  reap();
  return b.last_serial.load() > completed.load();
}

void Context::Impl::ensure_staging(Frame& f, uint64_t bytes) {
  // grows (doubling) up to options.staging_bytes; larger transfers go in chunks of that size
  const uint64_t cap = std::max<uint64_t>(options.staging_bytes, 4096);
  const uint64_t want = std::min<uint64_t>(std::max<uint64_t>(bytes, 1 << 16), cap);
  if (f.staging.buf && f.staging.size >= want) return;
  const uint64_t size = std::min<uint64_t>(std::max(want, f.staging.size * 2), cap);
  if (f.staging.buf) destroy_buffer(f.staging.buf, f.staging.mem);
  f.staging = {};
  void* p = nullptr;
  VkResult r = make_buffer(size, staging_type, true, &f.staging.buf, &f.staging.mem, &p);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    fail("out of memory allocating a staging buffer of " + bytes_text(size));
  check(r, "allocating a staging buffer");
  f.staging.map = p;
  f.staging.size = size;
  std::lock_guard lock(state_mu);
  stats.staging_bytes = size;
}

// One staging round trip of at most the staging buffer's size: upload (staging -> buffer) or download.
void Context::Impl::transfer_chunk(Frame& f, const BufferImpl& b, uint64_t offset, uint64_t bytes, bool upload) {
  check(fn.vkResetCommandPool(device, f.pool, 0), "vkResetCommandPool");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  fn.vkBeginCommandBuffer(f.cmd, &bi);
  VkBufferCopy region{upload ? 0 : offset, upload ? offset : 0, bytes};
  if (upload)
    fn.vkCmdCopyBuffer(f.cmd, f.staging.buf, b.buf, 1, &region);
  else
    fn.vkCmdCopyBuffer(f.cmd, b.buf, f.staging.buf, 1, &region);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  fn.vkCmdPipelineBarrier(f.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                              VK_PIPELINE_STAGE_TRANSFER_BIT,
                          0, 1, &mb, 0, nullptr, 0, nullptr);
  check(fn.vkEndCommandBuffer(f.cmd), "vkEndCommandBuffer");
  submit(f, {const_cast<BufferImpl*>(&b)});
  Wait w = wait(f, options.transfer_timeout_s);
  std::string what = std::string(upload ? "an upload" : "a download") + " of " + bytes_text(bytes);
  if (w == Wait::Lost) fail("device lost during " + what);
  if (w == Wait::Timeout) {
    auto parked = std::move(transfer);  // the frame (and its staging memory) stays with the device until it ends
    retire_or_park(std::move(parked));
    fail(what + " did not finish within " + seconds_text(options.transfer_timeout_s) +
         " (it waits behind batches still running)");
  }
}

// ---- programs ------------------------------------------------------------------------------------------------------

VkDescriptorSetLayout Context::Impl::set_layout(uint32_t n) {
  auto it = set_layouts.find(n);
  if (it != set_layouts.end()) return it->second;
  std::vector<VkDescriptorSetLayoutBinding> b(n);
  for (uint32_t i = 0; i < n; i++) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  if (pushes(n)) ci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  ci.bindingCount = n;
  ci.pBindings = b.data();
  VkDescriptorSetLayout l = VK_NULL_HANDLE;
  check(fn.vkCreateDescriptorSetLayout(device, &ci, nullptr, &l), "vkCreateDescriptorSetLayout");
  set_layouts[n] = l;
  return l;
}

VkPipelineLayout Context::Impl::pipeline_layout(uint32_t n, uint32_t k) {
  auto it = layouts.find({n, k});
  if (it != layouts.end()) return it->second;
  VkDescriptorSetLayout sl = set_layout(n);
  VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, k};
  VkPipelineLayoutCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  ci.setLayoutCount = 1;
  ci.pSetLayouts = &sl;
  ci.pushConstantRangeCount = k ? 1 : 0;
  ci.pPushConstantRanges = k ? &pr : nullptr;
  VkPipelineLayout l = VK_NULL_HANDLE;
  check(fn.vkCreatePipelineLayout(device, &ci, nullptr, &l), "vkCreatePipelineLayout");
  layouts[{n, k}] = l;
  return l;
}

std::shared_ptr<ProgramImpl> Context::Impl::make_program(const SpirvBinary& spirv, const std::string& name,
                                                         uint32_t n, uint32_t k) {
  check_alive();
  const uint64_t key = fnv1a(spirv.words.data(), spirv.words.size() * 4, (uint64_t(n) << 32) | k);
  auto cached = [&]() -> std::shared_ptr<ProgramImpl> {  // under program_mu
    auto it = programs.find(key);
    if (it != programs.end())
      for (auto& p : it->second)
        if (p->num_buffers == n && p->push_bytes == k && p->words == spirv.words) return p;
    return nullptr;
  };
  {
    std::lock_guard lock(program_mu);
    if (auto p = cached()) return p;
  }

  const std::string who = "kernel '" + name + "'";
  ShaderInterface si = reflect(spirv, name);
  const DeviceInfo& d = info;
  if (k % 4) fail(who + ": the push-constant block must be a multiple of 4 bytes, got " + std::to_string(k));
  if (k > d.max_push_constants_size)
    fail(who + ": a push-constant block of " + std::to_string(k) + " bytes exceeds maxPushConstantsSize of " +
         std::to_string(d.max_push_constants_size));
  if (si.push_constant_bytes > k)
    fail(who + ": the shader's push-constant block is " + std::to_string(si.push_constant_bytes) +
         " bytes, the program has " + std::to_string(k));
  if (n > d.max_storage_buffers_per_stage)
    fail(who + ": " + std::to_string(n) + " storage buffers exceed maxPerStageDescriptorStorageBuffers of " +
         std::to_string(d.max_storage_buffers_per_stage));
  auto prog = std::make_shared<ProgramImpl>();
  prog->access.assign(n, Access::Read);
  prog->used.assign(n, false);
  for (const auto& b : si.bindings) {
    if (b.kind != "storage buffer")
      fail(who + ": binding " + std::to_string(b.binding) + " of set " + std::to_string(b.set) + " is a " + b.kind +
           "; programs take storage buffers only");
    if (b.set != 0 || b.binding >= n)
      fail(who + ": the shader uses set " + std::to_string(b.set) + " binding " + std::to_string(b.binding) +
           "; the program has set 0 bindings 0.." + std::to_string(int64_t(n) - 1));
    Access& a = prog->access[b.binding];
    a = prog->used[b.binding] && a != b.access ? Access::ReadWrite : b.access;
    prog->used[b.binding] = true;
  }
  const auto& ls = si.local_size;
  uint64_t inv = uint64_t(ls[0]) * ls[1] * ls[2];
  for (int i = 0; i < 3; i++)
    if (ls[i] < 1 || ls[i] > d.max_workgroup_size[i])
      fail(who + ": local size " + std::to_string(ls[0]) + "x" + std::to_string(ls[1]) + "x" + std::to_string(ls[2]) +
           " exceeds maxComputeWorkGroupSize " + std::to_string(d.max_workgroup_size[0]) + "x" +
           std::to_string(d.max_workgroup_size[1]) + "x" + std::to_string(d.max_workgroup_size[2]));
  if (inv > d.max_workgroup_invocations)
    fail(who + ": a workgroup of " + std::to_string(inv) + " invocations exceeds maxComputeWorkGroupInvocations of " +
         std::to_string(d.max_workgroup_invocations));
  if (si.shared_memory_bytes > d.max_shared_memory)
    fail(who + ": " + std::to_string(si.shared_memory_bytes) + " bytes of shared memory exceed " +
         "maxComputeSharedMemorySize of " + std::to_string(d.max_shared_memory));
  struct Need {
    uint32_t cap;
    const char* what;
    bool have;
  };
  const Need needs[] = {{kSpvCapFloat16, "Float16 (shaderFloat16)", d.float16},
                        {kSpvCapFloat64, "Float64 (shaderFloat64)", d.float64},
                        {kSpvCapInt64, "Int64 (shaderInt64)", d.int64},
                        {kSpvCapInt16, "Int16 (shaderInt16)", d.int16},
                        {kSpvCapInt8, "Int8 (shaderInt8)", d.int8},
                        {4433, "StorageBuffer16BitAccess", d.storage_buffer_16bit},
                        {4448, "StorageBuffer8BitAccess", d.storage_buffer_8bit},
                        {6022, "CooperativeMatrixKHR", d.cooperative_matrix},
                        {5357, "CooperativeMatrixNV", d.cooperative_matrix_nv},
                        {4434, "UniformAndStorageBuffer16BitAccess (not enabled by this runtime)", false},
                        {4449, "UniformAndStorageBuffer8BitAccess (not enabled by this runtime)", false},
                        {4435, "StoragePushConstant16 (not enabled by this runtime)", false},
                        {4450, "StoragePushConstant8 (not enabled by this runtime)", false},
                        {12, "Int64Atomics (not enabled by this runtime)", false}};
  for (uint32_t c : si.capabilities)
    for (const Need& nd : needs)
      if (nd.cap == c && !nd.have) fail(who + " needs the SPIR-V capability " + nd.what + ", which this device lacks");
  std::string invalid = validate_spirv(spirv, VK_API_VERSION_MINOR(d.api_version_raw));
  if (!invalid.empty()) fail(who + ": invalid SPIR-V: " + invalid);

  prog->owner = self;
  prog->name = name;
  prog->num_buffers = n;
  prog->push_bytes = k;
  prog->iface = std::move(si);
  prog->words = spirv.words;
  {
    std::lock_guard lock(program_mu);
    prog->set_layout = set_layout(n);
    prog->push_descriptors = pushes(n);
    prog->layout = pipeline_layout(n, k);
  }
  // the pipeline is compiled outside the lock (the cache is internally synchronised), so threads compile in parallel
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.words.size() * 4;
  mi.pCode = spirv.words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(fn.vkCreateShaderModule(device, &mi, nullptr, &module), ("vkCreateShaderModule of " + who).c_str());
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = prog->iface.entry_point.c_str();
  ci.layout = prog->layout;
  VkResult r = fn.vkCreateComputePipelines(device, pipeline_cache, 1, &ci, nullptr, &prog->pipeline);
  fn.vkDestroyShaderModule(device, module, nullptr);
  check(r, ("vkCreateComputePipelines of " + who).c_str());
  {
    std::lock_guard s(state_mu);
    stats.pipelines_created++;
  }
  std::lock_guard lock(program_mu);
  if (auto p = cached()) {  // another thread made the same one meanwhile
    fn.vkDestroyPipeline(device, prog->pipeline, nullptr);
    return p;
  }
  programs[key].push_back(prog);
  return prog;
}

std::shared_ptr<ProgramImpl> Context::Impl::copy_program(bool vec4) {
  {
    std::lock_guard lock(program_mu);
    auto& p = vec4 ? copy_vec4 : copy_words;
    if (p) return p;
  }
  SpirvBinary spirv = compiler->compile_glsl(copy_shader_source(vec4 ? "uvec4" : "uint"), "copy");
  auto prog = make_program(spirv, vec4 ? "copy_vec4" : "copy", 2, 12);
  std::lock_guard lock(program_mu);
  (vec4 ? copy_vec4 : copy_words) = prog;
  return prog;
}

void Context::Impl::save_pipeline_cache() {
  if (!pipeline_cache || pipeline_cache_file.empty()) return;
  size_t n = 0;
  if (fn.vkGetPipelineCacheData(device, pipeline_cache, &n, nullptr) != VK_SUCCESS || n == 0) return;
  std::vector<char> data(n);
  if (fn.vkGetPipelineCacheData(device, pipeline_cache, &n, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(pipeline_cache_file).parent_path(), ec);
  std::string tmp = pipeline_cache_file + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(n));
    if (!f) return;
  }
  std::filesystem::rename(tmp, pipeline_cache_file, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

Context::Impl::~Impl() {
  if (!device) {
    if (inst.handle) {
      if (messenger) inst.fns.vkDestroyDebugUtilsMessengerEXT(inst.handle, messenger, nullptr);
      inst.fns.vkDestroyInstance(inst.handle, nullptr);
    }
    return;
  }
  // Batches still running (after a timeout) own memory the device uses: wait for them, within bounds. A device
  // that does not finish them is left as it is (its objects are leaked), as destroying them would be undefined.
  std::vector<VkFence> fences;
  for (auto& f : pending) fences.push_back(f->fence);
  if (transfer && transfer->serial > completed.load()) fences.push_back(transfer->fence);
  if (!fences.empty() && !lost) {
    VkResult r = fn.vkWaitForFences(device, static_cast<uint32_t>(fences.size()), fences.data(), VK_TRUE,
                                    timeout_ns(std::max(options.shutdown_timeout_s, 0.001)));
    if (r == VK_TIMEOUT) {  // leave the device be; only the messenger, whose callback points here, goes
      if (messenger) inst.fns.vkDestroyDebugUtilsMessengerEXT(inst.handle, messenger, nullptr);
      return;
    }
  }
  save_pipeline_cache();
  for (auto& f : pending) destroy_frame(*f);
  for (auto& f : free_frames) destroy_frame(*f);
  if (transfer) destroy_frame(*transfer);
  for (auto& d : deferred) destroy_buffer(d.buf, d.mem);
  for (auto& [key, list] : programs)
    for (auto& p : list) fn.vkDestroyPipeline(device, p->pipeline, nullptr);
  for (auto& [key, l] : layouts) fn.vkDestroyPipelineLayout(device, l, nullptr);
  for (auto& [key, l] : set_layouts) fn.vkDestroyDescriptorSetLayout(device, l, nullptr);
  if (pipeline_cache) fn.vkDestroyPipelineCache(device, pipeline_cache, nullptr);
  fn.vkDestroyDevice(device, nullptr);
  if (messenger) inst.fns.vkDestroyDebugUtilsMessengerEXT(inst.handle, messenger, nullptr);
  inst.fns.vkDestroyInstance(inst.handle, nullptr);
}

// ---- batches -------------------------------------------------------------------------------------------------------

struct BatchImpl {
  std::shared_ptr<Context> ctx;
  BatchOptions opts;
  std::vector<Op> ops;
  uint32_t barriers = 0;
  // byte ranges [lo, hi) of each buffer written and read since the last barrier
  // (flat lists: few operations come between two barriers, and clearing one keeps its storage for the next)
  struct Range {
    const BufferImpl* buf;
    uint64_t lo, hi;
  };
  using Ranges = std::vector<Range>;
  Ranges written, read;
  std::unique_ptr<Frame> frame;
  bool recorded = false;
  bool in_flight = false;  // submitted, not yet waited for
  std::chrono::steady_clock::time_point submitted_at;

  Context::Impl& I() { return *ctx->impl_; }
  struct Use {
    const BufferImpl* buf;
    Access access;
    uint64_t lo, hi;
  };
  void add(Op op, const std::vector<Use>& uses);
  void record();
  const char* label_of(const Op& op) const { return op.name.c_str(); }
  std::string kernel_list() const;
  ~BatchImpl() {
    if (frame) I().retire_or_park(std::move(frame));
  }
};

void BatchImpl::add(Op op, const std::vector<Use>& uses) {
  if (in_flight) I().fail("operation '" + op.name + "' added to a batch that is running (wait for it first)");
  auto overlaps = [](const Ranges& m, const Use& u) {
    for (const Range& r : m)
      if (r.buf == u.buf && r.lo < u.hi && u.lo < r.hi) return true;
    return false;
  };
  // (a batch that continues earlier submissions starts with a barrier: it orders everything submitted before it)
  bool hazard = (opts.serialize && !ops.empty()) || (opts.after_previous && ops.empty());
  for (const Use& u : uses) {
    if (overlaps(written, u)) hazard = true;                         // read after write, write after write
    if (u.access != Access::Read && overlaps(read, u)) hazard = true;  // write after read
  }
  if (hazard) {
    op.barrier_before = true;
    barriers++;
    written.clear();
    read.clear();
  }
  for (const Use& u : uses) {
    if (u.access != Access::Write) read.push_back({u.buf, u.lo, u.hi});
    if (u.access != Access::Read) written.push_back({u.buf, u.lo, u.hi});
  }
  ops.push_back(std::move(op));
  recorded = false;
}

std::string BatchImpl::kernel_list() const {
  std::vector<std::string> names;
  for (const Op& op : ops)
    if (std::find(names.begin(), names.end(), op.name) == names.end()) names.push_back(op.name);
  std::string s;
  for (size_t i = 0; i < names.size() && i < 8; i++) s += (i ? ", " : "") + names[i];
  if (names.size() > 8) s += " and " + std::to_string(names.size() - 8) + " more";
  return s;
}

void BatchImpl::record() {
  Context::Impl& C = I();
  auto& fn = C.fn;
  if (frame && frame->serial > C.completed.load()) {  // still running (cannot happen after a wait; be safe)
    C.retire_or_park(std::move(frame));
  }
  if (!frame) frame = C.acquire_frame();
  Frame& f = *frame;
  const uint32_t n = static_cast<uint32_t>(ops.size());
  const bool ts = opts.timestamps && C.info.compute_timestamps;
  if (ts && f.query_cap < 2 * n) {
    if (f.queries) fn.vkDestroyQueryPool(C.device, f.queries, nullptr);
    f.queries = VK_NULL_HANDLE;
    f.query_cap = 0;
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = std::max(2 * n, 64u);
    C.check(fn.vkCreateQueryPool(C.device, &qi, nullptr, &f.queries), "vkCreateQueryPool");
    f.query_cap = qi.queryCount;
  }
  uint32_t sets = 0, descs = 0;
  for (const Op& op : ops)
    if (op.kind == Op::Dispatch && op.program->num_buffers && !op.program->push_descriptors) {
      sets++;
      descs += op.program->num_buffers;
    }
  if (sets && (f.set_cap < sets || f.desc_cap < descs)) {  // the pool grows (doubling) to fit the batch
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(descs, 2 * f.desc_cap + 64)};
    VkDescriptorPoolCreateInfo di{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    di.maxSets = std::max(sets, 2 * f.set_cap + 16);
    if (f.descs) fn.vkDestroyDescriptorPool(C.device, f.descs, nullptr);
    f.descs = VK_NULL_HANDLE;
    f.set_cap = f.desc_cap = 0;
    di.poolSizeCount = 1;
    di.pPoolSizes = &ps;
    C.check(fn.vkCreateDescriptorPool(C.device, &di, nullptr, &f.descs), "vkCreateDescriptorPool");
    f.set_cap = di.maxSets;
    f.desc_cap = ps.descriptorCount;
  }
  if (f.descs) C.check(fn.vkResetDescriptorPool(C.device, f.descs, 0), "vkResetDescriptorPool");
  C.check(fn.vkResetCommandPool(C.device, f.pool, 0), "vkResetCommandPool");

  VkCommandBuffer cb = f.cmd;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  C.check(fn.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  if (ts) fn.vkCmdResetQueryPool(cb, f.queries, 0, 2 * n);
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  VkPipeline bound = VK_NULL_HANDLE;
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  for (uint32_t i = 0; i < n; i++) {
    const Op& op = ops[i];
    if (op.barrier_before) fn.vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    if (ts) fn.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, f.queries, 2 * i);
    if (op.kind == Op::CopyCmd) {
      fn.vkCmdCopyBuffer(cb, op.buffers[1]->buf, op.buffers[0]->buf, 1, &op.region);
    } else {
      const ProgramImpl& p = *op.program;
      if (p.pipeline != bound) {
        fn.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
        bound = p.pipeline;
      }
      if (p.num_buffers) {
        VkDescriptorSet set = VK_NULL_HANDLE;
        if (!p.push_descriptors) {
          VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
          ai.descriptorPool = f.descs;
          ai.descriptorSetCount = 1;
          ai.pSetLayouts = &p.set_layout;
          C.check(fn.vkAllocateDescriptorSets(C.device, &ai, &set), "vkAllocateDescriptorSets");
        }
        infos.assign(p.num_buffers, {});
        writes.assign(p.num_buffers, {});
        for (uint32_t b = 0; b < p.num_buffers; b++) {
          infos[b] = op.ranges.empty() ? VkDescriptorBufferInfo{op.buffers[b]->buf, 0, op.buffers[b]->vk_size}
                                       : VkDescriptorBufferInfo{op.buffers[b]->buf, op.ranges[b].first,
                                                                op.ranges[b].second};
          writes[b].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
          writes[b].dstSet = set;
          writes[b].dstBinding = b;
          writes[b].descriptorCount = 1;
          writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
          writes[b].pBufferInfo = &infos[b];
        }
        if (p.push_descriptors) {
          C.push_descriptors(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, p.num_buffers, writes.data());
        } else {
          fn.vkUpdateDescriptorSets(C.device, p.num_buffers, writes.data(), 0, nullptr);
          fn.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
        }
      }
      if (p.push_bytes)
        fn.vkCmdPushConstants(cb, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_bytes, op.push.data());
      fn.vkCmdDispatch(cb, op.groups[0], op.groups[1], op.groups[2]);
    }
    if (ts) fn.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, f.queries, 2 * i + 1);
  }
  // Everything the batch wrote becomes visible to the host and to later submissions.
  VkMemoryBarrier end{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  end.srcAccessMask = mb.srcAccessMask;
  end.dstAccessMask = mb.dstAccessMask | VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  fn.vkCmdPipelineBarrier(cb, stages, stages | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &end, 0, nullptr, 0, nullptr);
  C.check(fn.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  recorded = true;
}

Batch::Batch() = default;
Batch::~Batch() = default;
Batch::Batch(Batch&&) noexcept = default;
Batch& Batch::operator=(Batch&&) noexcept = default;

size_t Batch::size() const { return impl_ ? impl_->ops.size() : 0; }
uint32_t Batch::barrier_count() const { return impl_ ? impl_->barriers : 0; }

void Batch::dispatch(const Program& program, const std::vector<DeviceBuffer>& buffers, std::span<const uint8_t> push,
                     std::array<uint32_t, 3> groups, const std::string& name) {
  if (!impl_) throw Error("dispatch on an empty Batch (make one with Context::batch())");
  if (!program) throw Error("dispatch of an empty Program");
  Context::Impl& C = impl_->I();
  const ProgramImpl& p = *program.impl_;
  auto who = [&] { return "kernel '" + (name.empty() ? p.name : name) + "'"; };  // (built only for an error)
  if (p.owner != impl_->ctx.get()) C.fail(who() + ": the program belongs to another Vulkan context");
  if (buffers.size() != p.num_buffers)
    C.fail(who() + ": " + std::to_string(buffers.size()) + " buffers given, the program takes " +
           std::to_string(p.num_buffers));
  if (push.size() != p.push_bytes)
    C.fail(who() + ": " + std::to_string(push.size()) + " push-constant bytes given, the program takes " +
           std::to_string(p.push_bytes));
  for (int i = 0; i < 3; i++)
    if (groups[i] < 1 || groups[i] > C.info.max_workgroup_count[i])
      C.fail(who() + ": group count " + std::to_string(groups[0]) + "x" + std::to_string(groups[1]) + "x" +
             std::to_string(groups[2]) + " is outside 1.." + std::to_string(C.info.max_workgroup_count[0]) + "x" +
             std::to_string(C.info.max_workgroup_count[1]) + "x" + std::to_string(C.info.max_workgroup_count[2]));
  Op op;
  op.kind = Op::Dispatch;
  op.program = program.impl_;
  op.push.assign(push.begin(), push.end());
  op.groups = groups;
  op.name = name.empty() ? p.name : name;
  std::vector<BatchImpl::Use> uses;
  for (size_t i = 0; i < buffers.size(); i++) {
    if (!buffers[i]) C.fail(who() + ": buffer " + std::to_string(i) + " is empty");
    if (buffers[i].impl_->ctx.get() != impl_->ctx.get())
      C.fail(who() + ": buffer " + std::to_string(i) + " belongs to another Vulkan context");
    op.buffers.push_back(buffers[i].impl_);
    if (p.used[i]) uses.push_back({buffers[i].impl_.get(), p.access[i], 0, buffers[i].impl_->vk_size});
  }
  impl_->add(std::move(op), uses);
}

void Batch::copy(const DeviceBuffer& dst, uint64_t dst_offset, const DeviceBuffer& src, uint64_t src_offset,
                 uint64_t bytes) {
  if (!impl_) throw Error("copy on an empty Batch (make one with Context::batch())");
  Context::Impl& C = impl_->I();
  if (!dst || !src) C.fail("copy: an empty buffer");
  if (dst.impl_->ctx.get() != impl_->ctx.get() || src.impl_->ctx.get() != impl_->ctx.get())
    C.fail("copy: a buffer of another Vulkan context");
  auto range_ok = [](uint64_t off, uint64_t n, uint64_t size) { return off <= size && n <= size - off; };
  if (!range_ok(dst_offset, bytes, dst.size()) || !range_ok(src_offset, bytes, src.size()))
    C.fail("copy of " + std::to_string(bytes) + " bytes from offset " + std::to_string(src_offset) + " of a " +
           std::to_string(src.size()) + "-byte buffer to offset " + std::to_string(dst_offset) + " of a " +
           std::to_string(dst.size()) + "-byte buffer is out of bounds");
  if (bytes == 0) return;
  if (dst == src && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes)
    C.fail("copy within one buffer: the ranges [" + std::to_string(src_offset) + ", " +
           std::to_string(src_offset + bytes) + ") and [" + std::to_string(dst_offset) + ", " +
           std::to_string(dst_offset + bytes) + ") overlap");
  Op op;
  op.buffers = {dst.impl_, src.impl_};
  op.name = "copy " + std::to_string(bytes) + " B";
  // what each side touches: the copy's bytes, or for the copy shader the bound ranges (from the offset rounded down
  // to minStorageBufferOffsetAlignment), so copies into disjoint parts of one buffer need no barrier
  uint64_t dst_lo = dst_offset, src_lo = src_offset;
  if ((dst_offset | src_offset | bytes) % 4 == 0) {
    const bool vec4 = (dst_offset | src_offset | bytes) % 16 == 0;
    const uint64_t unit = vec4 ? 16 : 4, count = bytes / unit;
    const uint64_t align = std::max<uint64_t>(C.info.min_storage_buffer_offset_alignment, 1);
    dst_lo = dst_offset / align * align;
    src_lo = src_offset / align * align;
    op.kind = Op::Dispatch;
    op.program = C.copy_program(vec4);
    op.ranges = {{dst_lo, dst_offset + bytes - dst_lo}, {src_lo, src_offset + bytes - src_lo}};
    PushConstants pc;
    pc.u32(static_cast<uint32_t>((src_offset - src_lo) / unit)).u32(static_cast<uint32_t>((dst_offset - dst_lo) / unit));
    pc.u32(static_cast<uint32_t>(count));
    op.push.assign(pc.bytes().begin(), pc.bytes().end());
    uint64_t groups = std::min<uint64_t>((count + 255) / 256, std::min<uint32_t>(C.info.max_workgroup_count[0], 65535));
    op.groups = {static_cast<uint32_t>(groups), 1, 1};
  } else {
    op.kind = Op::CopyCmd;
    op.region = VkBufferCopy{src_offset, dst_offset, bytes};
  }
  impl_->add(std::move(op), {{dst.impl_.get(), Access::Write, dst_lo, dst_offset + bytes},
                             {src.impl_.get(), Access::Read, src_lo, src_offset + bytes}});
}

void Batch::submit() {
  if (!impl_) throw Error("submit of an empty Batch (make one with Context::batch())");
  BatchImpl& B = *impl_;
  Context::Impl& C = B.I();
  if (B.in_flight) C.fail("the batch was submitted and not waited for (Batch::wait) before its next submit");
  C.check_alive();
  if (B.ops.empty()) return;
  if (!B.recorded) B.record();
  std::vector<BufferImpl*> bufs;
  {
    std::unordered_set<BufferImpl*> seen;
    for (const Op& op : B.ops)
      for (auto& b : op.buffers)
        if (seen.insert(b.get()).second) bufs.push_back(b.get());
  }
  B.submitted_at = std::chrono::steady_clock::now();
  C.submit(*B.frame, bufs);
  B.in_flight = true;
}

BatchResult Batch::wait(double timeout_s) {
  if (!impl_) throw Error("wait for an empty Batch (make one with Context::batch())");
  BatchImpl& B = *impl_;
  Context::Impl& C = B.I();
  checked_timeout(timeout_s, "wait");
  BatchResult res;
  res.barriers = B.barriers;
  for (const Op& op : B.ops) res.names.push_back(op.name);
  if (B.ops.empty()) return res;
  if (!B.in_flight) C.fail("wait for a batch that was not submitted");
  B.in_flight = false;
  const Context::Impl::Wait w = C.wait(*B.frame, timeout_s);
  auto what = [&] {
    size_t n = B.ops.size();
    return "the batch of " + std::to_string(n) + (n == 1 ? " operation (" : " operations (") + B.kernel_list() + ")";
  };
  if (w == Context::Impl::Wait::Lost) C.fail("device lost while running " + what());
  if (w == Context::Impl::Wait::Timeout) {
    C.retire_or_park(std::move(B.frame));
    B.recorded = false;
    C.fail(what() + " did not finish within " + seconds_text(timeout_s) +
           "; it is still running on the device and its buffers stay in use until it ends (Context::wait_idle)");
  }
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - B.submitted_at).count();
  if (B.opts.timestamps && C.info.compute_timestamps) {
    const uint32_t n = static_cast<uint32_t>(B.ops.size());
    std::vector<uint64_t> q(2 * n);
    C.check(C.fn.vkGetQueryPoolResults(C.device, B.frame->queries, 0, 2 * n, q.size() * 8, q.data(), 8,
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults");
    const uint32_t bits = C.info.timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    for (uint32_t i = 0; i < n; i++)
      res.gpu_seconds.push_back(double((q[2 * i + 1] - q[2 * i]) & mask) * C.info.timestamp_period_ns * 1e-9);
  }
  return res;
}

BatchResult Batch::submit_and_wait(double timeout_s) {
  checked_timeout(timeout_s, "submit_and_wait");
  submit();
  return wait(timeout_s);
}

// ---- Context -----------------------------------------------------------------------------------------------------

Context::Context() : impl_(std::make_unique<Impl>()) { impl_->self = this; }
Context::~Context() = default;
const DeviceInfo& Context::info() const { return impl_->info; }
const OpenOptions& Context::options() const { return impl_->options; }
bool Context::validation_active() const { return impl_->validation; }
bool Context::direct_transfers() const { return impl_->direct; }
bool Context::lost() const { return impl_->lost; }
Compiler& Context::compiler() { return *impl_->compiler; }
ValidationMessages Context::validation_messages() const {
  std::lock_guard lock(impl_->msg_mu);
  return impl_->msgs;
}
void Context::clear_validation_messages() {
  std::lock_guard lock(impl_->msg_mu);
  impl_->msgs = {};
}
ContextStats Context::stats() const {
  std::lock_guard lock(impl_->state_mu);
  return impl_->stats;
}

DeviceBuffer Context::alloc(uint64_t bytes) {
  Impl& I = *impl_;
  I.check_alive();
  const DeviceInfo& d = I.info;
  if (bytes > d.max_storage_buffer_range)
    I.fail("a buffer of " + bytes_text(bytes) + " exceeds the device's maxStorageBufferRange of " +
           bytes_text(d.max_storage_buffer_range) + " (the most one storage-buffer binding can address)");
  if (bytes > d.max_allocation_size)
    I.fail("a buffer of " + bytes_text(bytes) + " exceeds the device's maxMemoryAllocationSize of " +
           bytes_text(d.max_allocation_size));
  {
    std::lock_guard lock(I.state_mu);
    if (I.stats.buffers + 8 >= d.max_allocation_count)
      I.fail("a buffer of " + bytes_text(bytes) + ": " + std::to_string(I.stats.buffers) +
             " buffers are allocated, at the device's maxMemoryAllocationCount of " +
             std::to_string(d.max_allocation_count));
  }
  auto b = std::make_shared<BufferImpl>();
  b->ctx = shared_from_this();
  b->size = bytes;
  b->vk_size = std::max<uint64_t>(bytes, 4);
  void* map = nullptr;
  VkResult r = I.make_buffer(b->vk_size, I.device_type, I.direct, &b->buf, &b->mem, &map);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    ContextStats s = stats();
    I.fail("out of device memory allocating a buffer of " + bytes_text(bytes) + " (" + std::to_string(s.buffers) +
           " buffers of " + bytes_text(s.buffer_bytes) + " allocated by this context; device-local heap " +
           bytes_text(d.device_local_heap_size) + ")");
  }
  I.check(r, ("allocating a buffer of " + bytes_text(bytes)).c_str());
  b->map = static_cast<uint8_t*>(map);
  {
    std::lock_guard lock(I.state_mu);
    I.stats.buffers++;
    I.stats.buffer_bytes += bytes;
  }
  DeviceBuffer h;
  h.impl_ = std::move(b);
  return h;
}

uint64_t DeviceBuffer::size() const { return impl_ ? impl_->size : 0; }

namespace {
void check_copy_args(Context::Impl& I, const char* what, const DeviceBuffer& b, const void* host, uint64_t bytes,
                     uint64_t offset, const Context* self, const BufferImpl* impl) {
  if (!b) I.fail(std::string(what) + ": an empty buffer");
  if (impl->ctx.get() != self) I.fail(std::string(what) + ": the buffer belongs to another Vulkan context");
  if (offset > b.size() || bytes > b.size() - offset)
    I.fail(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
           " is outside the " + std::to_string(b.size()) + "-byte buffer");
  if (bytes && !host) I.fail(std::string(what) + ": a null host pointer");
}
}  // namespace

void Context::copy_in(const DeviceBuffer& dst, const void* src, uint64_t bytes, uint64_t offset) {
  Impl& I = *impl_;
  I.check_alive();
  check_copy_args(I, "copy_in", dst, src, bytes, offset, this, dst.impl_.get());
  if (bytes == 0) return;
  const BufferImpl& b = *dst.impl_;
  if (I.in_use(b)) I.fail("copy_in: the buffer is in use by a batch still running on the device");
  if (I.direct) {
    std::memcpy(b.map + offset, src, bytes);
    if (!I.device_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkFlushMappedMemoryRanges(I.device, 1, &mr), "vkFlushMappedMemoryRanges");
    }
    return;
  }
  std::lock_guard lock(I.transfer_mu);
  if (!I.transfer) I.transfer = I.acquire_frame();
  I.ensure_staging(*I.transfer, bytes);
  const auto* p = static_cast<const uint8_t*>(src);
  for (uint64_t done = 0; done < bytes;) {
    uint64_t n = std::min<uint64_t>(bytes - done, I.transfer->staging.size);
    std::memcpy(I.transfer->staging.map, p + done, n);
    if (!I.staging_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, I.transfer->staging.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkFlushMappedMemoryRanges(I.device, 1, &mr), "vkFlushMappedMemoryRanges");
    }
    I.transfer_chunk(*I.transfer, b, offset + done, n, true);
    done += n;
  }
}

void Context::copy_out(void* dst, const DeviceBuffer& src, uint64_t bytes, uint64_t offset) {
  Impl& I = *impl_;
  I.check_alive();
  check_copy_args(I, "copy_out", src, dst, bytes, offset, this, src.impl_.get());
  if (bytes == 0) return;
  const BufferImpl& b = *src.impl_;
  if (I.in_use(b)) I.fail("copy_out: the buffer is in use by a batch still running on the device");
  if (I.direct) {
    if (!I.device_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, b.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkInvalidateMappedMemoryRanges(I.device, 1, &mr), "vkInvalidateMappedMemoryRanges");
    }
    std::memcpy(dst, b.map + offset, bytes);
    return;
  }
  std::lock_guard lock(I.transfer_mu);
  if (!I.transfer) I.transfer = I.acquire_frame();
  I.ensure_staging(*I.transfer, bytes);
  auto* p = static_cast<uint8_t*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    uint64_t n = std::min<uint64_t>(bytes - done, I.transfer->staging.size);
    I.transfer_chunk(*I.transfer, b, offset + done, n, false);
    if (!I.staging_coherent) {
      VkMappedMemoryRange mr{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr, I.transfer->staging.mem, 0, VK_WHOLE_SIZE};
      I.check(I.fn.vkInvalidateMappedMemoryRanges(I.device, 1, &mr), "vkInvalidateMappedMemoryRanges");
    }
    std::memcpy(p + done, I.transfer->staging.map, n);
    done += n;
  }
}

Program Context::program(const SpirvBinary& spirv, const std::string& name, uint32_t num_buffers,
                         uint32_t push_bytes) {
  Program p;
  p.impl_ = impl_->make_program(spirv, name, num_buffers, push_bytes);
  p.ctx_ = shared_from_this();
  return p;
}

const std::string& Program::name() const { return impl_->name; }
uint32_t Program::num_buffers() const { return impl_->num_buffers; }
uint32_t Program::push_bytes() const { return impl_->push_bytes; }
std::array<uint32_t, 3> Program::local_size() const { return impl_->iface.local_size; }
const ShaderInterface& Program::interface() const { return impl_->iface; }

Batch Context::batch(const BatchOptions& options) {
  impl_->check_alive();
  Batch b;
  b.impl_ = std::make_unique<BatchImpl>();
  b.impl_->ctx = shared_from_this();
  b.impl_->opts = options;
  return b;
}

bool Context::wait_idle(double timeout_s) {
  Impl& I = *impl_;
  checked_timeout(timeout_s, "wait_idle");
  I.check_alive();
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    uint64_t newest = 0;
    VkResult r = VK_SUCCESS;
    {
      // pending frames are recycled only under state_mu: waiting in short steps under it keeps their fences alive
      std::lock_guard lock(I.state_mu);
      if (I.pending.empty()) return true;
      std::vector<VkFence> fences;
      for (auto& f : I.pending) {
        fences.push_back(f->fence);
        newest = std::max(newest, f->serial);
      }
      double left = timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      r = I.fn.vkWaitForFences(I.device, static_cast<uint32_t>(fences.size()), fences.data(), VK_TRUE,
                               timeout_ns(std::clamp(left, 0.0, 0.002)));
    }
    if (r == VK_SUCCESS) {
      I.mark_completed(newest);
      continue;
    }
    if (r == VK_ERROR_DEVICE_LOST) {
      I.lost = true;
      I.fail("device lost");
    }
    if (r != VK_TIMEOUT) I.check(r, "vkWaitForFences");
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= timeout_s) return false;
  }
}

PushConstants& PushConstants::put(const void* v, size_t n) {
  size_t off = (bytes_.size() + n - 1) / n * n;
  bytes_.resize(off + n);
  std::memcpy(bytes_.data() + off, v, n);
  return *this;
}

// ---- enumeration and opening ---------------------------------------------------------------------------------------

std::vector<DeviceInfo> enumerate_devices(std::string* reason) {
  std::string why;
  std::vector<DeviceInfo> out;
  Instance inst = create_instance(false, false, nullptr, &why);
  if (inst.handle) {
    auto pds = physical_devices(inst);
    for (size_t i = 0; i < pds.size(); i++) out.push_back(query_device(inst, pds[i], static_cast<int>(i)));
    if (pds.empty()) why = "the Vulkan loader found no physical device";
    inst.fns.vkDestroyInstance(inst.handle, nullptr);
  }
  if (reason) *reason = out.empty() ? why : std::string();
  return out;
}

int default_device_index(const std::vector<DeviceInfo>& devices) {
  for (const auto& d : devices)
    if (d.type == "discrete") return d.index;
  return devices.empty() ? -1 : devices.front().index;
}

std::string print_device_info(const DeviceInfo& d) {
  std::ostringstream o;
  o << "VULKAN:" << d.index << "  " << d.name << " (" << d.type << ")\n";
  o << "  driver " << d.driver_name << " " << d.driver_version << (d.driver_info.empty() ? "" : ", ") << d.driver_info
    << "; Vulkan " << d.api_version << "\n";
  o << "  subgroup " << d.subgroup_size << ", workgroup <= " << d.max_workgroup_invocations << " invocations ("
    << d.max_workgroup_size[0] << "x" << d.max_workgroup_size[1] << "x" << d.max_workgroup_size[2] << "), groups <= "
    << d.max_workgroup_count[0] << "x" << d.max_workgroup_count[1] << "x" << d.max_workgroup_count[2] << "\n";
  o << "  shared memory " << d.max_shared_memory << " B, push constants " << d.max_push_constants_size
    << " B, storage buffers per stage " << d.max_storage_buffers_per_stage << "\n";
  o << "  storage-buffer range " << bytes_text(d.max_storage_buffer_range) << ", allocation "
    << bytes_text(d.max_allocation_size) << ", device-local heap " << bytes_text(d.device_local_heap_size)
    << (d.unified_memory ? ", unified memory" : "") << "\n";
  if (d.loop_iteration_limit) o << "  loops end after " << d.loop_iteration_limit << " iterations per invocation\n";
  o << "  timestamps " << (d.compute_timestamps ? "yes" : "no") << " (" << d.timestamp_valid_bits << " bits, "
    << d.timestamp_period_ns << " ns/tick)\n";
  o << "  features";
  const std::pair<const char*, bool> feats[] = {{"float16", d.float16}, {"int8", d.int8}, {"int16", d.int16},
                                                {"int64", d.int64}, {"float64", d.float64},
                                                {"storage8", d.storage_buffer_8bit},
                                                {"storage16", d.storage_buffer_16bit},
                                                {"cooperative_matrix", d.cooperative_matrix},
                                                {"cooperative_matrix_nv", d.cooperative_matrix_nv}};
  for (auto& [n, on] : feats) o << " " << n << (on ? "+" : "-");
  o << "\n";
  for (auto [shapes, ext] : {std::pair{&d.cooperative_matrix_shapes, ""}, std::pair{&d.cooperative_matrix_nv_shapes, "NV "}})
    for (const auto& c : *shapes)
      o << "  coopmat " << ext << c.m << "x" << c.n << "x" << c.k << " A " << c.a_type << " B " << c.b_type << " C "
        << c.c_type << " -> " << c.result_type << " (" << c.scope << (c.saturating ? ", saturating" : "") << ")\n";
  return o.str();
}

namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::pair<std::pair<int, OpenOptions>, std::weak_ptr<Context>>> open;
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

std::shared_ptr<Context> open_device(int index, const OpenOptions& options) {
  Registry& R = registry();
  std::lock_guard lock(R.mu);
  for (auto it = R.open.begin(); it != R.open.end();) {
    if (it->second.expired()) {
      it = R.open.erase(it);
      continue;
    }
    if (it->first.first == index && it->first.second == options) return it->second.lock();
    ++it;
  }
  std::shared_ptr<Context> ctx(new Context());
  Context::Impl& I = *ctx->impl_;
  I.options = options;
  I.compiler = std::make_unique<Compiler>(options.cache_dir);
  std::string why;
  VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mci.pfnUserCallback = debug_callback;
  mci.pUserData = &I;
  I.inst = create_instance(options.validation, true, &mci, &why);
  if (!I.inst.handle) throw Error("cannot open Vulkan device " + std::to_string(index) + ": " + why);
  auto pds = physical_devices(I.inst);
  if (index < 0 || index >= static_cast<int>(pds.size()))
    throw Error("there is no Vulkan device " + std::to_string(index) + " (" + std::to_string(pds.size()) +
                " found)");
  I.phys = pds[index];
  I.info = query_device(I.inst, I.phys, index);
  const DeviceInfo& d = I.info;
  I.label = "Vulkan device " + std::to_string(index) + " (" + d.name + ")";
  if (d.api_version_raw < VK_API_VERSION_1_2)
    I.fail("Vulkan 1.2 or newer is needed; the device offers " + d.api_version);
  if (d.compute_queue_family == UINT32_MAX) I.fail("the device has no compute queue");
  {
    uint32_t n = 0;
    I.inst.fns.vkEnumerateDeviceLayerProperties(I.phys, &n, nullptr);
    std::vector<VkLayerProperties> lp(n);
    I.inst.fns.vkEnumerateDeviceLayerProperties(I.phys, &n, lp.data());
    for (uint32_t i = 0; i < n; i++)
      if (std::strcmp(lp[i].layerName, "VK_LAYER_KHRONOS_validation") == 0) I.validation = true;
  }
  if (I.inst.debug_utils && I.inst.fns.vkCreateDebugUtilsMessengerEXT)
    I.inst.fns.vkCreateDebugUtilsMessengerEXT(I.inst.handle, &mci, nullptr, &I.messenger);

  // exactly the features the device has among those the runtime uses
  auto exts = device_extensions(I.inst, I.phys);
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  CoopMatrixFeatures coop{kSTypeCoopFeatures, nullptr, VK_FALSE, VK_FALSE};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  f2.pNext = &f11;
  f11.pNext = &f12;
  f2.features.shaderInt64 = d.int64;
  f2.features.shaderFloat64 = d.float64;
  f2.features.shaderInt16 = d.int16;
  f11.storageBuffer16BitAccess = d.storage_buffer_16bit;
  f12.storageBuffer8BitAccess = d.storage_buffer_8bit;
  f12.shaderFloat16 = d.float16;
  f12.shaderInt8 = d.int8;
  std::vector<const char*> enable;
  void** tail = &f12.pNext;
  if (d.cooperative_matrix) {
    coop.cooperativeMatrix = VK_TRUE;
    *tail = &coop;
    tail = &coop.pNext;
    enable.push_back(kCoopMatrixExt);
  }
  if (d.cooperative_matrix_nv) {  // what glslang's GL_NV_cooperative_matrix compiles to (SPV_NV_cooperative_matrix)
    coop_nv.cooperativeMatrix = VK_TRUE;
    *tail = &coop_nv;
    enable.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  if (has_extension(exts, "VK_KHR_portability_subset")) enable.push_back("VK_KHR_portability_subset");
  if (d.max_push_descriptors) enable.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = d.compute_queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &prio;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &f2;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &qi;
  ci.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  ci.ppEnabledExtensionNames = enable.data();
  VkResult r = I.inst.fns.vkCreateDevice(I.phys, &ci, nullptr, &I.device);
  if (r != VK_SUCCESS) {
    I.device = VK_NULL_HANDLE;
    I.fail("vkCreateDevice failed: " + result_text(r));
  }
  I.fn = load_device_fns(I.inst.fns, I.device);
  if (d.max_push_descriptors)
    I.push_descriptors = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(I.inst.fns.vkGetDeviceProcAddr(I.device, "vkCmdPushDescriptorSetKHR"));
  I.fn.vkGetDeviceQueue(I.device, d.compute_queue_family, 0, &I.queue);

  // memory types: device buffers are mapped directly where device-local memory is host-visible on a device that
  // shares the host's memory; elsewhere (discrete GPUs, whose host-visible device memory is slow to read back)
  // transfers go through a staging buffer in host memory.
  I.inst.fns.vkGetPhysicalDeviceMemoryProperties(I.phys, &I.mem_props);
  uint32_t bits = 0;
  {
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = 4096;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer probe = VK_NULL_HANDLE;
    I.check(I.fn.vkCreateBuffer(I.device, &bi, nullptr, &probe), "vkCreateBuffer");
    VkMemoryRequirements req{};
    I.fn.vkGetBufferMemoryRequirements(I.device, probe, &req);
    I.fn.vkDestroyBuffer(I.device, probe, nullptr);
    bits = req.memoryTypeBits;
  }
  const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                              HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, CA = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  const bool shares_host = d.unified_memory || d.type == "cpu" || d.type == "integrated";
  uint32_t mapped = options.force_staging || !shares_host ? UINT32_MAX : I.pick_memory_type(bits, {DL | HV | HC, DL | HV});
  if (mapped != UINT32_MAX) {
    I.direct = true;
    I.device_type = mapped;
    I.device_coherent = I.type_is(mapped, HC);
  } else {
    I.device_type = UINT32_MAX;
    for (uint32_t i = 0; i < I.mem_props.memoryTypeCount && I.device_type == UINT32_MAX; i++)
      if ((bits & (1u << i)) && I.type_is(i, DL) && !I.type_is(i, HV)) I.device_type = i;
    if (I.device_type == UINT32_MAX) I.device_type = I.pick_memory_type(bits, {DL, 0});
  }
  I.staging_type = I.pick_memory_type(bits, {HV | HC | CA, HV | HC, HV});
  if (I.device_type == UINT32_MAX || I.staging_type == UINT32_MAX) I.fail("no usable memory type for buffers");
  I.staging_coherent = I.type_is(I.staging_type, HC);

  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  std::vector<char> cache_data;
  if (!options.cache_dir.empty()) {
    char name[96];
    std::snprintf(name, sizeof name, "pipelines-%04x-%04x-%08x.bin", d.vendor_id, d.device_id, d.driver_version_raw);
    I.pipeline_cache_file = (std::filesystem::path(options.cache_dir) / name).string();
    std::ifstream f(I.pipeline_cache_file, std::ios::binary);
    if (f) cache_data.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    // the driver checks the header (vendor, device, pipelineCacheUUID) and ignores data that is not its own
    pci.initialDataSize = cache_data.size();
    pci.pInitialData = cache_data.empty() ? nullptr : cache_data.data();
  }
  r = I.fn.vkCreatePipelineCache(I.device, &pci, nullptr, &I.pipeline_cache);
  if (r != VK_SUCCESS && pci.initialDataSize) {  // unreadable data: start empty
    pci.initialDataSize = 0;
    pci.pInitialData = nullptr;
    r = I.fn.vkCreatePipelineCache(I.device, &pci, nullptr, &I.pipeline_cache);
  }
  I.check(r, "vkCreatePipelineCache");
  R.open.push_back({{index, options}, ctx});
  return ctx;
}

}  // namespace ts::vk
