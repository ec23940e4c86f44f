// The Vulkan runtime's programs: set and pipeline layouts, pipelines checked against the device, the copy shaders
#include "engine/runtime/vulkan/vulkan_internal.h"
#include "engine/uop/atomic_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace ts::vk {

namespace {

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
                        {5116, "BFloat16TypeKHR (VK_KHR_shader_bfloat16)", d.bfloat16_cooperative_matrix},
                        {5118, "BFloat16CooperativeMatrixKHR", d.bfloat16_cooperative_matrix},
                        {4434, "UniformAndStorageBuffer16BitAccess (not enabled by this runtime)", false},
                        {4449, "UniformAndStorageBuffer8BitAccess (not enabled by this runtime)", false},
                        {4435, "StoragePushConstant16 (not enabled by this runtime)", false},
                        {4450, "StoragePushConstant8 (not enabled by this runtime)", false},
                        {12, "Int64Atomics (not enabled by this runtime)", false}};
  for (uint32_t c : si.capabilities)
    for (const Need& nd : needs)
      if (nd.cap == c && !nd.have) fail(who + " needs the SPIR-V capability " + nd.what + ", which this device lacks");
  // (SPIRV-Tools 2023.1 predates SPV_KHR_cooperative_matrix: such a binary was validated as the NV one it was
  // rewritten from, by the Compiler)
  const bool khr_matrices = std::find(si.capabilities.begin(), si.capabilities.end(), 6022u) != si.capabilities.end();
  std::string invalid = khr_matrices ? std::string() : validate_spirv(spirv, VK_API_VERSION_MINOR(d.api_version_raw));
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
  if (d.pipeline_statistics) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkResult r = fn.vkCreateComputePipelines(device, pipeline_cache, 1, &ci, nullptr, &prog->pipeline);
  fn.vkDestroyShaderModule(device, module, nullptr);
  check(r, ("vkCreateComputePipelines of " + who).c_str());
  if (d.pipeline_statistics) prog->statistics = pipeline_statistics(prog->pipeline);
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

namespace {
// The pipeline cache file: magic, u64 size, u64 checksum (FNV-1a) of the data, the driver's data. The driver checks
// only its own header, so a file cut or damaged after it is refused here and the cache starts empty.
constexpr char kPipelineMagic[8] = {'T', 'S', 'P', 'L', 'C', '0', '1', '\n'};
uint64_t data_sum(const char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ static_cast<unsigned char>(p[i])) * 1099511628211ull;
  return h;
}
}  // namespace

std::vector<char> read_pipeline_cache_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  uint64_t n = 0, sum = 0;
  if (all.size() < 24 || std::memcmp(all.data(), kPipelineMagic, 8) != 0) return {};
  std::memcpy(&n, all.data() + 8, 8);
  std::memcpy(&sum, all.data() + 16, 8);
  if (n != all.size() - 24 || sum != data_sum(all.data() + 24, n)) return {};
  return {all.begin() + 24, all.end()};
}

void Context::Impl::save_pipeline_cache() {
  if (!pipeline_cache || pipeline_cache_file.empty()) return;
  size_t n = 0;
  if (fn.vkGetPipelineCacheData(device, pipeline_cache, &n, nullptr) != VK_SUCCESS || n == 0) return;
  std::vector<char> data(n);
  if (fn.vkGetPipelineCacheData(device, pipeline_cache, &n, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(pipeline_cache_file).parent_path(), ec);
  // best effort, whole or not at all (atomic_file.h): a cache that cannot be written costs the next run its pipelines
  try {
    AtomicFile f(pipeline_cache_file, "the pipeline cache");
    const uint64_t size = n, sum = data_sum(data.data(), n);
    f.write(kPipelineMagic, 8);
    f.write(&size, 8);
    f.write(&sum, 8);
    f.write(data.data(), n);
    f.commit();
  } catch (const Error&) {
  }
}

// what the driver reports of a pipeline's executables (one for a compute pipeline; a second one's figures are named
// after it: "name (executable)"); a figure the driver cannot give is left out
std::vector<PipelineStatistic> Context::Impl::pipeline_statistics(VkPipeline pipeline) const {
  std::vector<PipelineStatistic> out;
  if (!fn.vkGetPipelineExecutablePropertiesKHR || !fn.vkGetPipelineExecutableStatisticsKHR) return out;
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = pipeline;
  uint32_t n = 0;
  if (fn.vkGetPipelineExecutablePropertiesKHR(device, &pi, &n, nullptr) != VK_SUCCESS) return out;
  std::vector<VkPipelineExecutablePropertiesKHR> exes(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  if (fn.vkGetPipelineExecutablePropertiesKHR(device, &pi, &n, exes.data()) != VK_SUCCESS) return out;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipeline;
    ei.executableIndex = e;
    uint32_t m = 0;
    if (fn.vkGetPipelineExecutableStatisticsKHR(device, &ei, &m, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> st(m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (fn.vkGetPipelineExecutableStatisticsKHR(device, &ei, &m, st.data()) != VK_SUCCESS) continue;
    for (uint32_t k = 0; k < m; ++k) {
      PipelineStatistic s;
      s.name = st[k].name;
      if (n > 1) s.name += std::string(" (") + exes[e].name + ")";
      s.description = st[k].description;
      switch (st[k].format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: s.value = st[k].value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
          s.value = std::to_string(st[k].value.i64), s.number = static_cast<double>(st[k].value.i64);
          break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
          s.value = std::to_string(st[k].value.u64), s.number = static_cast<double>(st[k].value.u64);
          break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%g", st[k].value.f64);
          s.value = buf, s.number = st[k].value.f64;
          break;
        }
        default: continue;
      }
      out.push_back(std::move(s));
    }
  }
  return out;
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
const std::vector<PipelineStatistic>& Program::statistics() const { return impl_->statistics; }

}  // namespace ts::vk
