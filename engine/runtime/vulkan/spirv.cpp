// GLSL -> SPIR-V (glslang's C API), SPIR-V disassembly and validation (SPIRV-Tools) and a reflection of what a
// compute shader declares. The one translation unit with glslang's and SPIRV-Tools' headers; no Vulkan here.
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <glslang/SPIRV/spirv.hpp>
#include <glslang/build_info.h>
#include <spirv-tools/libspirv.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "engine/runtime/disk_cache.h"
#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"

namespace ts::vk {
namespace {

// ---- glslang -------------------------------------------------------------------------------------------------

// glslang runs one compile at a time: its process-wide initialisation is done once and never undone, and the
// serialisation keeps its shared symbol tables out of any doubt (a compile takes 1-6 ms once warm).
std::mutex& glslang_mutex() {
  static std::mutex m;
  return m;
}
void glslang_init_locked() {
  static bool done = false;
  if (!done) {
    glslang_initialize_process();
    done = true;
  }
}

struct GlslangResult {
  bool ok = false;
  std::string log;
  SpirvBinary spirv;
};

GlslangResult run_glslang(const std::string& source) {
  std::lock_guard lock(glslang_mutex());
  glslang_init_locked();
  glslang_input_t input{};
  input.language = GLSLANG_SOURCE_GLSL;
  input.stage = GLSLANG_STAGE_COMPUTE;
  input.client = GLSLANG_CLIENT_VULKAN;
  input.client_version = GLSLANG_TARGET_VULKAN_1_2;
  input.target_language = GLSLANG_TARGET_SPV;
  input.target_language_version = GLSLANG_TARGET_SPV_1_5;
  input.code = source.c_str();
  input.default_version = 450;
  input.default_profile = GLSLANG_NO_PROFILE;
  input.force_default_version_and_profile = false;
  input.forward_compatible = false;
  input.messages = static_cast<glslang_messages_t>(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
  input.resource = glslang_default_resource();

  GlslangResult r;
  glslang_shader_t* shader = glslang_shader_create(&input);
  if (!shader) {
    r.log = "glslang could not create a shader";
    return r;
  }
  auto shader_log = [&] {
    std::string log = glslang_shader_get_info_log(shader);
    std::string dbg = glslang_shader_get_info_debug_log(shader);
    return dbg.empty() ? log : log + dbg;
  };
  if (!glslang_shader_preprocess(shader, &input) || !glslang_shader_parse(shader, &input)) {
    r.log = shader_log();
    glslang_shader_delete(shader);
    return r;
  }
  glslang_program_t* program = glslang_program_create();
  glslang_program_add_shader(program, shader);
  if (!glslang_program_link(program, input.messages)) {
    r.log = std::string(glslang_program_get_info_log(program)) + glslang_program_get_info_debug_log(program);
  } else {
    glslang_spv_options_t opts{};
    opts.disable_optimizer = true;  // the driver optimises; glslang's optimiser is not built into this library
    glslang_program_SPIRV_generate_with_options(program, GLSLANG_STAGE_COMPUTE, &opts);
    size_t n = glslang_program_SPIRV_get_size(program);
    r.spirv.words.resize(n);
    if (n) glslang_program_SPIRV_get(program, r.spirv.words.data());
    const char* msgs = glslang_program_SPIRV_get_messages(program);
    if (msgs) r.log = msgs;
    r.ok = n > 0;
    if (!r.ok && r.log.empty()) r.log = "glslang produced no SPIR-V";
  }
  glslang_program_delete(program);
  glslang_shader_delete(shader);
  return r;
}

// ---- the disk cache ------------------------------------------------------------------------------------------

// 03: the shared entry format of disk_cache.h (02 had an FNV-1a checksum, 01 none)
constexpr char kCacheMagic[] = "TSSPV03\n";

// the words of an entry's payload, or nothing: a payload that is no SPIR-V module is no entry of ours
bool spirv_of(const std::string& payload, SpirvBinary* out) {
  if (payload.size() % 4 || payload.size() < 5 * 4) return false;
  std::vector<uint32_t> w(payload.size() / 4);
  std::memcpy(w.data(), payload.data(), payload.size());
  if (w[0] != spv::MagicNumber) return false;
  out->words = std::move(w);
  return true;
}

}  // namespace

// ---- Compiler ----------------------------------------------------------------------------------------------------

struct Compiler::Impl {
  std::string dir;
  std::unique_ptr<DiskCache> disk;  // none without a directory
  mutable std::mutex mu;
  std::unordered_map<std::string, SpirvBinary> memory;
  CompilerStats stats;
};

Compiler::Compiler(std::string cache_dir) : impl_(std::make_unique<Impl>()) {
  impl_->dir = std::move(cache_dir);
  if (!impl_->dir.empty()) impl_->disk = std::make_unique<DiskCache>(impl_->dir, ".spv", kCacheMagic, "the SPIR-V cache entry");
}
Compiler::~Compiler() = default;
const std::string& Compiler::cache_dir() const { return impl_->dir; }
CompilerStats Compiler::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

std::string Compiler::options_key() {
  return "glslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) + "." +
         std::to_string(GLSLANG_VERSION_PATCH) + GLSLANG_VERSION_FLAVOR + " vulkan1.2 spirv1.5 noopt, KHR cooperative matrix rewrite 1";
}

SpirvBinary Compiler::compile_glsl(const std::string& source, const std::string& name) {
  Impl& I = *impl_;
  {
    std::lock_guard lock(I.mu);
    auto it = I.memory.find(source);
    if (it != I.memory.end()) {
      I.stats.memory_hits++;
      return it->second;
    }
  }
  // the key: glslang's version and options, then the exact source
  const std::string key = I.disk ? options_key() + "\n" + source : std::string();
  if (I.disk) {
    SpirvBinary cached;
    if (auto payload = I.disk->get(key); payload && spirv_of(*payload, &cached)) {
      std::lock_guard lock(I.mu);
      I.stats.disk_hits++;
      I.memory.emplace(source, cached);
      return cached;
    }
  }
  // a rejected kernel's source with line numbers, as the compiler's messages count them
  auto numbered_lines = [](const std::string& src) {
    std::string out;
    int line = 1;
    for (size_t pos = 0; pos < src.size();) {
      size_t end = src.find('\n', pos);
      if (end == std::string::npos) end = src.size();
      out += std::to_string(line++) + ": " + src.substr(pos, end - pos) + "\n";
      pos = end + 1;
    }
    return out;
  };
  auto t0 = std::chrono::steady_clock::now();
  GlslangResult r = run_glslang(source);
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard lock(I.mu);
    I.stats.compiles++;
    I.stats.compile_seconds += dt;
  }
  if (!r.ok) throw Error("GLSL compile of kernel '" + name + "' failed:\n" + r.log + "the source:\n" + numbered_lines(source));
  // a tensor-core kernel for the KHR cooperative matrices: the NV binary validated (SPIRV-Tools knows it), then rewritten
  if (source.rfind(kKhrCoopmatMarker, 0) == 0) {
    const std::string invalid = validate_spirv(r.spirv, 2);
    if (!invalid.empty()) throw Error("kernel '" + name + "': invalid SPIR-V before its KHR rewrite: " + invalid);
    const size_t eol = source.find('\n');
    r.spirv = khr_cooperative_matrix(r.spirv, source.substr(0, eol).find(" bf16") != std::string::npos, name);
  }
  if (I.disk) {
    const std::string err = I.disk->put(key, std::string_view(reinterpret_cast<const char*>(r.spirv.words.data()), r.spirv.words.size() * 4));
    std::lock_guard lock(I.mu);
    if (err.empty()) {
      I.stats.disk_writes++;
    } else {
      I.stats.disk_errors++;
      I.stats.last_disk_error = err;
    }
  }
  std::lock_guard lock(I.mu);
  I.memory.emplace(source, r.spirv);
  return r.spirv;
}

double warm_up_compiler() {
  static std::once_flag once;
  double seconds = 0;
  std::call_once(once, [&] {
    auto t0 = std::chrono::steady_clock::now();
    GlslangResult r = run_glslang("#version 450\nlayout(local_size_x = 1) in;\n"
                                  "layout(set = 0, binding = 0) buffer B { uint d[]; };\n"
                                  "void main() { d[gl_GlobalInvocationID.x] += 1u; }\n");
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    (void)r;
  });
  return seconds;
}

// ---- SPIRV-Tools -------------------------------------------------------------------------------------------------

namespace {
struct SpvTools {
  spv_context ctx;
  explicit SpvTools(spv_target_env env) : ctx(spvContextCreate(env)) {}
  ~SpvTools() { spvContextDestroy(ctx); }
};
std::string diagnostic_text(spv_diagnostic d) {
  if (!d) return "unknown SPIRV-Tools error";
  std::string s = d->error ? d->error : "";
  if (!d->isTextSource) s = "at word " + std::to_string(d->position.index) + ": " + s;
  spvDiagnosticDestroy(d);
  return s;
}
}  // namespace

std::string disassemble(const SpirvBinary& spirv) {
  SpvTools t(SPV_ENV_VULKAN_1_3);
  spv_text text = nullptr;
  spv_diagnostic diag = nullptr;
  uint32_t opts = SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT;
  if (spvBinaryToText(t.ctx, spirv.words.data(), spirv.words.size(), opts, &text, &diag) != SPV_SUCCESS)
    throw Error("cannot disassemble SPIR-V: " + diagnostic_text(diag));
  std::string out(text->str, text->length);
  spvTextDestroy(text);
  return out;
}

std::string validate_spirv(const SpirvBinary& spirv, uint32_t vulkan_minor) {
  SpvTools t(vulkan_minor >= 3 ? SPV_ENV_VULKAN_1_3 : vulkan_minor == 2 ? SPV_ENV_VULKAN_1_2 : SPV_ENV_VULKAN_1_1);
  spv_const_binary_t bin{spirv.words.data(), spirv.words.size()};
  spv_diagnostic diag = nullptr;
  if (spvValidate(t.ctx, &bin, &diag) == SPV_SUCCESS) {
    if (diag) spvDiagnosticDestroy(diag);
    return {};
  }
  return diagnostic_text(diag);
}

// ---- reflection --------------------------------------------------------------------------------------------------

namespace {
struct TypeInfo {
  uint32_t op = 0;
  std::vector<uint32_t> operands;  // after the result id
};

struct Reflector {
  const std::vector<uint32_t>& w;
  std::string name;
  std::unordered_map<uint32_t, TypeInfo> types;             // type and constant ids
  std::unordered_map<uint32_t, std::vector<uint32_t>> consts;  // OpConstant id -> value words
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> decor;  // (id, decoration) -> first literal (or 1)
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> member_decor;  // (struct, member, decoration)
  std::unordered_map<uint32_t, uint32_t> member_count;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("kernel '" + name + "': malformed SPIR-V: " + what);
  }
  bool has(uint32_t id, uint32_t d) const { return decor.count({id, d}) != 0; }
  uint64_t const_value(uint32_t id) const {
    auto it = consts.find(id);
    if (it == consts.end() || it->second.empty()) fail("array length %" + std::to_string(id) + " is not a constant");
    uint64_t v = it->second[0];
    if (it->second.size() > 1) v |= static_cast<uint64_t>(it->second[1]) << 32;
    return v;
  }
  // Size in bytes of a type: with explicit layout (Offset / ArrayStride decorations) when present, else natural.
  uint64_t size_of(uint32_t id, int depth = 0) const {
    if (depth > 64) fail("type nesting too deep");
    auto it = types.find(id);
    if (it == types.end()) fail("unknown type %" + std::to_string(id));
    const TypeInfo& t = it->second;
    switch (t.op) {
      case spv::OpTypeBool: return 4;
      case spv::OpTypeInt:
      case spv::OpTypeFloat: return t.operands.at(0) / 8;
      case spv::OpTypeVector:
      case spv::OpTypeMatrix: return size_of(t.operands.at(0), depth + 1) * t.operands.at(1);
      case spv::OpTypeArray: {
        uint64_t n = const_value(t.operands.at(1));
        auto s = decor.find({id, spv::DecorationArrayStride});
        uint64_t stride = s != decor.end() ? s->second : size_of(t.operands.at(0), depth + 1);
        return n * stride;
      }
      case spv::OpTypeRuntimeArray: return 0;
      case spv::OpTypeStruct: {
        uint64_t end = 0, natural = 0;
        for (size_t m = 0; m < t.operands.size(); m++) {
          uint64_t sz = size_of(t.operands[m], depth + 1);
          auto off = member_decor.find({id, static_cast<uint32_t>(m), spv::DecorationOffset});
          uint64_t at = off != member_decor.end() ? off->second : natural;
          end = std::max(end, at + sz);
          natural = at + sz;
        }
        return end;
      }
      default: return 0;
    }
  }
};
}  // namespace

ShaderInterface reflect(const SpirvBinary& spirv, const std::string& name) {
  const std::vector<uint32_t>& w = spirv.words;
  Reflector R{w, name, {}, {}, {}, {}, {}};
  if (w.size() < 5 || w[0] != spv::MagicNumber) R.fail("no SPIR-V header (magic number 0x07230203)");
  ShaderInterface si;
  uint32_t entry_id = 0;
  bool have_local = false;
  std::vector<uint32_t> local_ids;
  uint32_t workgroup_size_builtin = 0;
  struct Var {
    uint32_t id, type, storage;
  };
  std::vector<Var> vars;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> composites;  // OpConstantComposite / OpSpecConstantComposite
  for (size_t i = 5; i < w.size();) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    if (count == 0 || i + count > w.size()) R.fail("instruction at word " + std::to_string(i) + " runs past the end");
    const uint32_t* a = &w[i + 1];
    uint32_t n = count - 1;
    auto need = [&](uint32_t k) {
      if (n < k) R.fail("instruction " + std::to_string(op) + " at word " + std::to_string(i) + " is too short");
    };
    switch (op) {
      case spv::OpCapability: need(1); si.capabilities.push_back(a[0]); break;
      case spv::OpEntryPoint:
        need(3);
        if (a[0] == spv::ExecutionModelGLCompute && !entry_id) {
          entry_id = a[1];
          const char* s = reinterpret_cast<const char*>(a + 2);
          si.entry_point.assign(s, strnlen(s, (n - 2) * 4));
        }
        break;
      case spv::OpExecutionMode:
      case spv::OpExecutionModeId:
        need(2);
        if (a[1] == spv::ExecutionModeLocalSize && n >= 5) {
          si.local_size = {a[2], a[3], a[4]};
          have_local = true;
        } else if (a[1] == spv::ExecutionModeLocalSizeId && n >= 5) {
          local_ids = {a[2], a[3], a[4]};
        }
        break;
      case spv::OpDecorate:
        need(2);
        R.decor[{a[0], a[1]}] = n >= 3 ? a[2] : 1;
        if (a[1] == spv::DecorationBuiltIn && n >= 3 && a[2] == spv::BuiltInWorkgroupSize) workgroup_size_builtin = a[0];
        break;
      case spv::OpMemberDecorate: need(3); R.member_decor[{a[0], a[1], a[2]}] = n >= 4 ? a[3] : 1; break;
      case spv::OpTypeBool: case spv::OpTypeInt: case spv::OpTypeFloat: case spv::OpTypeVector:
      case spv::OpTypeMatrix: case spv::OpTypeArray: case spv::OpTypeRuntimeArray: case spv::OpTypeStruct:
      case spv::OpTypePointer: case spv::OpTypeImage: case spv::OpTypeSampler: case spv::OpTypeSampledImage:
      case spv::OpTypeAccelerationStructureKHR:
        need(1);
        R.types[a[0]] = TypeInfo{op, std::vector<uint32_t>(a + 1, a + n)};
        if (op == spv::OpTypeStruct) R.member_count[a[0]] = n - 1;
        break;
      case spv::OpConstant:
      case spv::OpSpecConstant:
        need(3);
        R.consts[a[1]] = std::vector<uint32_t>(a + 2, a + n);
        break;
      case spv::OpConstantComposite:
      case spv::OpSpecConstantComposite:
        need(2);
        composites.push_back({a[1], std::vector<uint32_t>(a + 2, a + n)});
        break;
      case spv::OpVariable: need(3); vars.push_back({a[1], a[0], a[2]}); break;
      default: break;
    }
    i += count;
  }
  if (!entry_id) R.fail("no GLCompute entry point");
  if (!local_ids.empty()) {
    for (int k = 0; k < 3; k++) si.local_size[k] = static_cast<uint32_t>(R.const_value(local_ids[k]));
    have_local = true;
  }
  for (auto& [id, parts] : composites)
    if (id == workgroup_size_builtin && parts.size() == 3) {
      for (int k = 0; k < 3; k++) si.local_size[k] = static_cast<uint32_t>(R.const_value(parts[k]));
      have_local = true;
    }
  if (!have_local) R.fail("no local size (LocalSize execution mode or WorkgroupSize built-in)");

  auto pointee = [&](uint32_t ptr_type) -> uint32_t {
    auto it = R.types.find(ptr_type);
    if (it == R.types.end() || it->second.op != spv::OpTypePointer || it->second.operands.size() < 2)
      R.fail("variable type %" + std::to_string(ptr_type) + " is not a pointer");
    return it->second.operands[1];
  };
  auto unwrap_arrays = [&](uint32_t t) {
    for (int k = 0; k < 8; k++) {
      auto it = R.types.find(t);
      if (it == R.types.end() || (it->second.op != spv::OpTypeArray && it->second.op != spv::OpTypeRuntimeArray))
        break;
      t = it->second.operands.at(0);
    }
    return t;
  };
  for (const Var& v : vars) {
    uint32_t t = pointee(v.type);
    if (v.storage == spv::StorageClassPushConstant) {
      si.push_constant_bytes = std::max<uint32_t>(si.push_constant_bytes, static_cast<uint32_t>(R.size_of(t)));
    } else if (v.storage == spv::StorageClassWorkgroup) {
      si.shared_memory_bytes += R.size_of(t);
    } else if (v.storage == spv::StorageClassStorageBuffer || v.storage == spv::StorageClassUniform ||
               v.storage == spv::StorageClassUniformConstant) {
      ShaderInterface::Binding b;
      auto set = R.decor.find({v.id, spv::DecorationDescriptorSet});
      auto bind = R.decor.find({v.id, spv::DecorationBinding});
      b.set = set != R.decor.end() ? set->second : 0;
      b.binding = bind != R.decor.end() ? bind->second : 0;
      uint32_t block = unwrap_arrays(t);
      auto bt = R.types.find(block);
      uint32_t bop = bt != R.types.end() ? bt->second.op : 0;
      if (v.storage == spv::StorageClassStorageBuffer ||
          (v.storage == spv::StorageClassUniform && R.has(block, spv::DecorationBufferBlock)))
        b.kind = "storage buffer";
      else if (v.storage == spv::StorageClassUniform)
        b.kind = "uniform buffer";
      else if (bop == spv::OpTypeImage || bop == spv::OpTypeSampledImage)
        b.kind = "image";
      else if (bop == spv::OpTypeSampler)
        b.kind = "sampler";
      else
        b.kind = "other resource";
      // readonly / writeonly: on the variable, or on every member of the block
      bool ro = R.has(v.id, spv::DecorationNonWritable), wo = R.has(v.id, spv::DecorationNonReadable);
      auto mc = R.member_count.find(block);
      if (mc != R.member_count.end() && mc->second > 0) {
        bool all_ro = true, all_wo = true;
        for (uint32_t m = 0; m < mc->second; m++) {
          all_ro = all_ro && R.member_decor.count({block, m, spv::DecorationNonWritable});
          all_wo = all_wo && R.member_decor.count({block, m, spv::DecorationNonReadable});
        }
        ro = ro || all_ro;
        wo = wo || all_wo;
      }
      b.access = ro ? Access::Read : wo ? Access::Write : Access::ReadWrite;
      si.bindings.push_back(b);
    }
  }
  return si;
}

}  // namespace ts::vk
