// The Vulkan runtime (vulkan.h): the loader, instances, device queries, opening a device and the Context's lifetime.
// The loader is opened with dlopen and every entry point is fetched through vkGetInstanceProcAddr /
// vkGetDeviceProcAddr, so nothing links against libvulkan and a machine without it gets an empty device list.
#include "engine/runtime/vulkan/vulkan_internal.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace ts::vk {
namespace {

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
  f.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV = reinterpret_cast<PFN_GetCoopMatrixFlexibleProperties>(
      gipa(inst, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
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
}  // namespace

std::string result_text(VkResult r) { return std::string(result_name(r)) + " (" + std::to_string(r) + ")"; }

namespace {

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

// a device's list through the two-call idiom (the count, then the entries, each starting as `blank`: its sType set)
template <class T, class Fn>
std::vector<T> enumerate(Fn fn, VkPhysicalDevice pd, const T& blank) {
  uint32_t n = 0;
  fn(pd, &n, nullptr);
  std::vector<T> out(n, blank);
  if (n) fn(pd, &n, out.data());
  out.resize(n);
  return out;
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
  VkPhysicalDeviceFloatControlsProperties fc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  CoopMatrixFeatures coop{kSTypeCoopFeatures, nullptr, VK_FALSE, VK_FALSE};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  Bfloat16Features bf16{kSTypeBfloat16Features, nullptr, VK_FALSE, VK_FALSE, VK_FALSE};
  CoopMatrix2Features coop2{kSTypeCoop2Features, nullptr, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE};
  CoopMatrix2Properties coop2p{kSTypeCoop2Properties, nullptr, 0, 0, 0};
  const bool v11 = api >= VK_API_VERSION_1_1, v12 = api >= VK_API_VERSION_1_2;
  const bool coop_ext = v12 && has_extension(exts, kCoopMatrixExt) && F.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR;
  const bool coop_nv_ext = v12 && has_extension(exts, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) && F.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV;
  const bool push_ext = has_extension(exts, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  const bool bf16_ext = coop_ext && has_extension(exts, kBfloat16Ext);
  const bool coop2_ext = coop_ext && has_extension(exts, kCoopMatrix2Ext) && F.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV;
  const bool stats_ext = v12 && has_extension(exts, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR stats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (v11) {
    sub.pNext = &m3;
    if (v12) m3.pNext = &drv;
    if (push_ext) (v12 ? drv.pNext : m3.pNext) = &pushd;
    if (v12) (push_ext ? pushd.pNext : drv.pNext) = &fc;
    if (v12 && coop2_ext) fc.pNext = &coop2p;
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
      if (coop_nv_ext) {
        *tail = &coop_nv;
        tail = &coop_nv.pNext;
      }
      if (bf16_ext) {
        *tail = &bf16;
        tail = &bf16.pNext;
      }
      if (coop2_ext) {
        *tail = &coop2;
        tail = &coop2.pNext;
      }
      if (stats_ext) *tail = &stats;
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
  if (v12) {
    d.float_controls = true;
    d.denorm_preserve = {bool(fc.shaderDenormPreserveFloat16), bool(fc.shaderDenormPreserveFloat32), bool(fc.shaderDenormPreserveFloat64)};
    d.denorm_flush = {bool(fc.shaderDenormFlushToZeroFloat16), bool(fc.shaderDenormFlushToZeroFloat32), bool(fc.shaderDenormFlushToZeroFloat64)};
    d.round_rte = {bool(fc.shaderRoundingModeRTEFloat16), bool(fc.shaderRoundingModeRTEFloat32), bool(fc.shaderRoundingModeRTEFloat64)};
    d.round_rtz = {bool(fc.shaderRoundingModeRTZFloat16), bool(fc.shaderRoundingModeRTZFloat32), bool(fc.shaderRoundingModeRTZFloat64)};
    d.signed_zero_inf_nan = {bool(fc.shaderSignedZeroInfNanPreserveFloat16), bool(fc.shaderSignedZeroInfNanPreserveFloat32),
                             bool(fc.shaderSignedZeroInfNanPreserveFloat64)};
  }
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
    d.pipeline_statistics = stats_ext && stats.pipelineExecutableInfo;
  }
  if (coop_ext && coop.cooperativeMatrix) {
    d.cooperative_matrix = true;
    for (auto& c : enumerate(F.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR, pd,
                             CoopMatrixProperties{kSTypeCoopProperties, nullptr, 0, 0, 0, 0, 0, 0, 0, VK_FALSE, 0}))
      d.cooperative_matrix_shapes.push_back({c.MSize, c.NSize, c.KSize, component_type_name(c.AType),
                                             component_type_name(c.BType), component_type_name(c.CType),
                                             component_type_name(c.ResultType), scope_name(c.scope),
                                             c.saturatingAccumulation == VK_TRUE});
  }
  d.bfloat16_cooperative_matrix = d.cooperative_matrix && bf16_ext && bf16.shaderBFloat16Type && bf16.shaderBFloat16CooperativeMatrix;
  if (coop_nv_ext && coop_nv.cooperativeMatrix) {
    d.cooperative_matrix_nv = true;
    // VkComponentTypeNV and VkScopeNV have the KHR values
    for (auto& c : enumerate(F.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV, pd,
                             VkCooperativeMatrixPropertiesNV{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV}))
      d.cooperative_matrix_nv_shapes.push_back({c.MSize, c.NSize, c.KSize, component_type_name(c.AType), component_type_name(c.BType),
                                                component_type_name(c.CType), component_type_name(c.DType), scope_name(c.scope), false});
  }
  if (d.cooperative_matrix && coop2_ext && coop2.cooperativeMatrixWorkgroupScope && coop2.cooperativeMatrixFlexibleDimensions) {
    d.cooperative_matrix_workgroup = true;
    d.cooperative_matrix_workgroup_max_size = coop2p.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
    d.cooperative_matrix_flexible_max_dimension = coop2p.cooperativeMatrixFlexibleDimensionsMaxDimension;
    d.cooperative_matrix_workgroup_reserved_shared = coop2p.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
    for (auto& c : enumerate(F.vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV, pd,
                             CoopMatrixFlexibleProperties{kSTypeCoopFlexibleProperties, nullptr, 0, 0, 0, 0, 0, 0, 0, VK_FALSE, 0, 0}))
      d.cooperative_matrix_flexible_shapes.push_back({c.MGranularity, c.NGranularity, c.KGranularity, component_type_name(c.AType),
                                                      component_type_name(c.BType), component_type_name(c.CType),
                                                      component_type_name(c.ResultType), scope_name(c.scope),
                                                      c.saturatingAccumulation == VK_TRUE, c.workgroupInvocations});
  }
  return d;
}

}  // namespace

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

namespace {
VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                              VkDebugUtilsMessageTypeFlagsEXT type,
                                              const VkDebugUtilsMessengerCallbackDataEXT* d, void* user) {
  static_cast<Context::Impl*>(user)->on_message(sev, type, d ? d->pMessage : nullptr);
  return VK_FALSE;
}
}  // namespace

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
                                                {"cooperative_matrix_nv", d.cooperative_matrix_nv},
                                                {"bfloat16_cooperative_matrix", d.bfloat16_cooperative_matrix},
                                                {"cooperative_matrix_workgroup", d.cooperative_matrix_workgroup},
                                                {"pipeline_statistics", d.pipeline_statistics}};
  for (auto& [n, on] : feats) o << " " << n << (on ? "+" : "-");
  o << "\n";
  for (auto [shapes, ext] : {std::pair{&d.cooperative_matrix_shapes, ""}, std::pair{&d.cooperative_matrix_nv_shapes, "NV "}})
    for (const auto& c : *shapes)
      o << "  coopmat " << ext << c.m << "x" << c.n << "x" << c.k << " A " << c.a_type << " B " << c.b_type << " C "
        << c.c_type << " -> " << c.result_type << " (" << c.scope << (c.saturating ? ", saturating" : "") << ")\n";
  if (d.cooperative_matrix_workgroup)
    o << "  coopmat2: work groups of up to " << d.cooperative_matrix_workgroup_max_size << ", dimensions up to "
      << d.cooperative_matrix_flexible_max_dimension << ", " << d.cooperative_matrix_workgroup_reserved_shared << " bytes of shared memory reserved\n";
  for (const auto& c : d.cooperative_matrix_flexible_shapes)
    o << "  coopmat flexible " << c.m << "x" << c.n << "x" << c.k << " granules A " << c.a_type << " B " << c.b_type << " C " << c.c_type
      << " -> " << c.result_type << " (" << c.scope << (c.workgroup_invocations ? ", " + std::to_string(c.workgroup_invocations) + " invocations" : std::string())
      << (c.saturating ? ", saturating" : "") << ")\n";
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

// the VkDevice, its entry points and its compute queue
void create_device(Context::Impl& I) {
  const DeviceInfo& d = I.info;
  // exactly the features the device has among those the runtime uses
  auto exts = device_extensions(I.inst, I.phys);
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  CoopMatrixFeatures coop{kSTypeCoopFeatures, nullptr, VK_FALSE, VK_FALSE};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  Bfloat16Features bf16{kSTypeBfloat16Features, nullptr, VK_FALSE, VK_FALSE, VK_FALSE};
  CoopMatrix2Features coop2{kSTypeCoop2Features, nullptr, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE, VK_FALSE};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR stats{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
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
    tail = &coop_nv.pNext;
    enable.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  if (d.bfloat16_cooperative_matrix) {  // bf16 KHR matrices (SPV_KHR_bfloat16)
    bf16.shaderBFloat16Type = VK_TRUE;
    bf16.shaderBFloat16CooperativeMatrix = VK_TRUE;
    *tail = &bf16;
    tail = &bf16.pNext;
    enable.push_back(kBfloat16Ext);
  }
  if (d.cooperative_matrix_workgroup && I.options.workgroup_matrices) {  // workgroup-scope matrices (SPV_NV_cooperative_matrix2)
    coop2.cooperativeMatrixWorkgroupScope = VK_TRUE;
    coop2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
    *tail = &coop2;
    tail = &coop2.pNext;
    enable.push_back(kCoopMatrix2Ext);
  }
  if (d.pipeline_statistics) {  // what the driver compiled: Program::statistics
    stats.pipelineExecutableInfo = VK_TRUE;
    *tail = &stats;
    enable.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
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
}

// memory types: device buffers are mapped directly where device-local memory is host-visible on a device that
// shares the host's memory; elsewhere (discrete GPUs, whose host-visible device memory is slow to read back)
// transfers go through a staging buffer in host memory.
void choose_memory_types(Context::Impl& I) {
  const DeviceInfo& d = I.info;
  const OpenOptions& options = I.options;
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
}

// the pipeline cache, started from the one kept in options.cache_dir (when there is one)
void create_pipeline_cache(Context::Impl& I) {
  const DeviceInfo& d = I.info;
  const OpenOptions& options = I.options;
  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  std::vector<char> cache_data;
  if (!options.cache_dir.empty()) {
    char name[96];
    std::snprintf(name, sizeof name, "pipelines-%04x-%04x-%08x.bin", d.vendor_id, d.device_id, d.driver_version_raw);
    I.pipeline_cache_file = (std::filesystem::path(options.cache_dir) / name).string();
    cache_data = read_pipeline_cache_file(I.pipeline_cache_file);
    // the driver checks its header (vendor, device, pipelineCacheUUID) and ignores data that is not its own
    pci.initialDataSize = cache_data.size();
    pci.pInitialData = cache_data.empty() ? nullptr : cache_data.data();
  }
  VkResult r = I.fn.vkCreatePipelineCache(I.device, &pci, nullptr, &I.pipeline_cache);
  if (r != VK_SUCCESS && pci.initialDataSize) {  // unreadable data: start empty
    pci.initialDataSize = 0;
    pci.pInitialData = nullptr;
    r = I.fn.vkCreatePipelineCache(I.device, &pci, nullptr, &I.pipeline_cache);
  }
  I.check(r, "vkCreatePipelineCache");
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

  create_device(I);
  choose_memory_types(I);
  create_pipeline_cache(I);
  R.open.push_back({{index, options}, ctx});
  return ctx;
}

}  // namespace ts::vk
