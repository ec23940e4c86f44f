// SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix (and SPV_KHR_bfloat16), on the binary glslang makes of a
// tensor-core kernel (vulkan.h, khr_cooperative_matrix). Debian 12's glslang compiles only GL_NV_cooperative_matrix;
// the two SPIR-V extensions differ in five instructions and in one fact the NV one leaves out: a KHR matrix type says
// its use (A, B or accumulator). The use of every NV matrix value is read off the program (the operand it is of a
// multiply-add, carried through loads, stores, copies, selects, phis, conversions and arithmetic), and each NV type is
// declared once per use it has. A workgroup-scope matrix (GLSL's gl_ScopeWorkgroup, which glslang passes through)
// makes the module declare SPV_NV_cooperative_matrix2 and SPIR-V 1.6, as that extension asks.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/runtime/vulkan/vulkan.h"
#include "engine/uop/error.h"

namespace ts::vk {
namespace {

// the opcodes and enumerants this rewrite reads or writes (SPIR-V 1.6 unified headers, revision 4 of the KHR extension)
enum : uint32_t {
  OpExtension = 10, OpTypeInt = 21, OpTypeFloat = 22, OpTypePointer = 32, OpConstantTrue = 41, OpConstantFalse = 42,
  OpConstant = 43, OpConstantComposite = 44, OpFunction = 54, OpVariable = 59, OpLoad = 61, OpStore = 62,
  OpCompositeConstruct = 80, OpCopyObject = 83, OpFConvert = 115, OpFNegate = 127, OpFAdd = 129, OpFSub = 131,
  OpFMul = 133, OpFDiv = 136, OpMatrixTimesScalar = 143, OpSelect = 169, OpPhi = 245, OpCapability = 17, OpUndef = 1, OpName = 5, OpDecorate = 71,
  OpTypeCooperativeMatrixNV = 5358, OpCooperativeMatrixLoadNV = 5359, OpCooperativeMatrixStoreNV = 5360,
  OpCooperativeMatrixMulAddNV = 5361, OpCooperativeMatrixLengthNV = 5362,
  OpTypeCooperativeMatrixKHR = 4456, OpCooperativeMatrixLoadKHR = 4457, OpCooperativeMatrixStoreKHR = 4458,
  OpCooperativeMatrixMulAddKHR = 4459,
  CapabilityCooperativeMatrixNV = 5357, CapabilityCooperativeMatrixKHR = 6022, CapabilityBFloat16TypeKHR = 5116,
  CapabilityBFloat16CooperativeMatrixKHR = 5118, FPEncodingBFloat16KHR = 0,
  UseA = 0, UseB = 1, UseAccumulator = 2, LayoutRowMajor = 0, LayoutColumnMajor = 1, ScopeWorkgroup = 2, ScopeSubgroup = 3,
};

struct Inst {
  uint32_t op = 0;
  std::vector<uint32_t> w;  // the operands (after the opcode word)
};

std::vector<uint32_t> string_words(const std::string& s) {
  std::vector<uint32_t> w((s.size() + 4) / 4, 0);
  std::memcpy(w.data(), s.data(), s.size());
  return w;
}
std::string word_string(const std::vector<uint32_t>& w, size_t from) {
  std::string s;
  for (size_t i = from; i < w.size(); ++i)
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((w[i] >> (8 * b)) & 0xff);
      if (!c) return s;
      s += c;
    }
  return s;
}

// union-find over ids: values and pointers that must share one use
struct Groups {
  std::unordered_map<uint32_t, uint32_t> parent;
  uint32_t find(uint32_t x) {
    auto it = parent.find(x);
    if (it == parent.end()) return parent[x] = x;
    if (it->second == x) return x;
    return it->second = find(it->second);
  }
  void join(uint32_t a, uint32_t b) { parent[find(a)] = find(b); }
};

}  // namespace

SpirvBinary khr_cooperative_matrix(const SpirvBinary& nv, bool bf16, const std::string& name) {
  auto fail = [&](const std::string& what) -> Error { return Error("kernel '" + name + "': cannot rewrite its cooperative matrices to the KHR extension: " + what); };
  const std::vector<uint32_t>& in = nv.words;
  if (in.size() < 5) throw fail("no SPIR-V header");
  std::vector<Inst> insts;
  for (size_t i = 5; i < in.size();) {
    const uint32_t count = in[i] >> 16;
    if (!count || i + count > in.size()) throw fail("an instruction at word " + std::to_string(i) + " runs past the end");
    insts.push_back({in[i] & 0xffff, std::vector<uint32_t>(in.begin() + static_cast<long>(i) + 1, in.begin() + static_cast<long>(i + count))});
    i += count;
  }
  uint32_t bound = in[3];

  // the NV matrix types and what refers to them: pointer types, values (result type), constants
  std::set<uint32_t> nv_types;
  std::unordered_map<uint32_t, uint32_t> pointee;  // pointer type -> NV matrix type
  std::unordered_map<uint32_t, uint32_t> type_of;  // value or variable id -> its type
  std::unordered_map<uint32_t, bool> bool_const;   // OpConstantTrue / False
  std::unordered_map<uint32_t, uint32_t> uint_const;  // 32-bit unsigned OpConstant -> its value
  uint32_t uint_type = 0;
  bool workgroup_scope = false;  // a matrix a whole work group holds (SPV_NV_cooperative_matrix2, SPIR-V 1.6)
  for (const Inst& x : insts) {
    if (x.op == OpTypeCooperativeMatrixNV) {
      nv_types.insert(x.w.at(0));
      auto scope = uint_const.find(x.w.at(2));
      if (scope == uint_const.end()) throw fail("a matrix type whose scope is not a constant");
      if (scope->second == ScopeWorkgroup) workgroup_scope = true;
      else if (scope->second != ScopeSubgroup) throw fail("a matrix type of scope " + std::to_string(scope->second) + " (only subgroup and workgroup)");
    } else if (x.op == OpConstant && x.w.at(0) == uint_type && uint_type) uint_const[x.w.at(1)] = x.w.at(2);
    else if (x.op == OpTypePointer && nv_types.count(x.w.at(2))) pointee[x.w[0]] = x.w[2];
    else if (x.op == OpTypeInt && x.w.at(1) == 32 && x.w.at(2) == 0) uint_type = x.w[0];
    else if (x.op == OpConstantTrue || x.op == OpConstantFalse) bool_const[x.w.at(1)] = x.op == OpConstantTrue;
    else if (x.op == OpCooperativeMatrixLengthNV) throw fail("OpCooperativeMatrixLengthNV (the KHR length needs a use)");
  }
  if (nv_types.empty()) throw fail("it has no NV cooperative matrix type");
  if (!uint_type) throw fail("it declares no 32-bit unsigned integer type");
  auto is_matrix = [&](uint32_t type) { return nv_types.count(type) || pointee.count(type); };
  // results typed by an instruction's first operand (inside functions and constants)
  auto has_result_type = [](uint32_t op) {
    switch (op) {
      case OpConstantComposite: case OpVariable: case OpLoad: case OpCompositeConstruct: case OpCopyObject: case OpFConvert:
      case OpFNegate: case OpFAdd: case OpFSub: case OpFMul: case OpFDiv: case OpMatrixTimesScalar: case OpSelect: case OpPhi:
      case OpUndef: case OpCooperativeMatrixLoadNV: case OpCooperativeMatrixMulAddNV: return true;
      default: return false;
    }
  };

  // which values and pointers share a use, and the uses the multiply-adds give them
  Groups g;
  std::unordered_map<uint32_t, uint32_t> seed;  // id -> use
  for (const Inst& x : insts) {
    if (has_result_type(x.op) && x.w.size() >= 2 && is_matrix(x.w[0])) type_of[x.w[1]] = x.w[0];
    switch (x.op) {
      case OpCooperativeMatrixMulAddNV:
        seed[x.w.at(2)] = UseA, seed[x.w.at(3)] = UseB, seed[x.w.at(4)] = UseAccumulator, seed[x.w.at(1)] = UseAccumulator;
        break;
      case OpLoad: case OpCopyObject: case OpFConvert: case OpFNegate:
        if (is_matrix(x.w.at(0))) g.join(x.w.at(1), x.w.at(2));
        break;
      case OpStore:
        if (type_of.count(x.w.at(0))) g.join(x.w[0], x.w.at(1));
        break;
      case OpFAdd: case OpFSub: case OpFMul: case OpFDiv:
        if (is_matrix(x.w.at(0))) g.join(x.w[1], x.w.at(2)), g.join(x.w[1], x.w.at(3));
        break;
      case OpMatrixTimesScalar:
        if (is_matrix(x.w.at(0))) g.join(x.w[1], x.w.at(2));
        break;
      case OpSelect:
        if (is_matrix(x.w.at(0))) g.join(x.w[1], x.w.at(3)), g.join(x.w[1], x.w.at(4));
        break;
      case OpPhi:
        if (is_matrix(x.w.at(0)))
          for (size_t k = 2; k < x.w.size(); k += 2) g.join(x.w[1], x.w[k]);
        break;
      default: break;
    }
  }
  std::unordered_map<uint32_t, uint32_t> group_use;
  for (auto [id, use] : seed) {
    auto [it, fresh] = group_use.emplace(g.find(id), use);
    if (!fresh && it->second != use)
      throw fail("the matrix %" + std::to_string(id) + " is used both as " + std::to_string(it->second) + " and as " + std::to_string(use) + " (0: A, 1: B, 2: accumulator)");
  }
  // anything the multiply-adds do not reach (a conversion of the result for the store) is an accumulator
  auto use_of = [&](uint32_t id) {
    auto it = group_use.find(g.find(id));
    return it == group_use.end() ? static_cast<uint32_t>(UseAccumulator) : it->second;
  };

  // the KHR types: one per (NV type, use) and (pointer type, use) that occurs
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> khr_type, khr_ptr;
  for (auto [id, type] : type_of) {
    const uint32_t use = use_of(id);
    if (nv_types.count(type)) khr_type.emplace(std::make_pair(type, use), 0);
    else khr_type.emplace(std::make_pair(pointee.at(type), use), 0), khr_ptr.emplace(std::make_pair(type, use), 0);
  }
  for (auto& [key, id] : khr_type) id = bound++;
  for (auto& [key, id] : khr_ptr) id = bound++;
  uint32_t use_const[3], layout_const[2], bf16_type = 0;
  for (uint32_t& c : use_const) c = bound++;
  layout_const[LayoutRowMajor] = use_const[UseA], layout_const[LayoutColumnMajor] = use_const[UseB];  // (0 and 1)
  std::unordered_map<uint32_t, uint32_t> half_types;  // 16-bit float types (bf16: replaced in the A and B matrices)
  for (const Inst& x : insts)
    if (x.op == OpTypeFloat && x.w.at(1) == 16) half_types[x.w[0]] = 1;
  if (bf16) bf16_type = bound++;

  std::vector<Inst> out;
  bool declared = false;
  auto retype = [&](uint32_t type, uint32_t id) -> uint32_t {
    if (nv_types.count(type)) return khr_type.at({type, use_of(id)});
    if (pointee.count(type)) return khr_ptr.at({type, use_of(id)});
    return type;
  };
  for (const Inst& x : insts) {
    Inst y = x;
    switch (x.op) {
      case OpName: case OpDecorate:  // (of a type declared anew: dropped with it)
        if (nv_types.count(x.w.at(0)) || pointee.count(x.w.at(0))) continue;
        break;
      case OpCapability:
        if (x.w.at(0) == CapabilityCooperativeMatrixNV) {
          y.w[0] = CapabilityCooperativeMatrixKHR;
          out.push_back(y);
          if (bf16) out.push_back({OpCapability, {CapabilityBFloat16TypeKHR}}), out.push_back({OpCapability, {CapabilityBFloat16CooperativeMatrixKHR}});
          continue;
        }
        break;
      case OpExtension:
        if (word_string(x.w, 0) == "SPV_NV_cooperative_matrix") {
          out.push_back({OpExtension, string_words("SPV_KHR_cooperative_matrix")});
          if (workgroup_scope) out.push_back({OpExtension, string_words("SPV_NV_cooperative_matrix2")});
          if (bf16) out.push_back({OpExtension, string_words("SPV_KHR_bfloat16")});
          continue;
        }
        break;
      case OpTypeCooperativeMatrixNV: {
        if (!declared) {  // the use constants (also the layouts' 0 and 1), and the bf16 type, before the first matrix type
          for (uint32_t u = 0; u < 3; ++u) out.push_back({OpConstant, {uint_type, use_const[u], u}});
          if (bf16) out.push_back({OpTypeFloat, {bf16_type, 16, FPEncodingBFloat16KHR}});
          declared = true;
        }
        for (auto& [key, id] : khr_type) {
          if (key.first != x.w[0]) continue;
          uint32_t component = x.w.at(1);
          // bf16: the kernel's 16-bit float matrices hold bfloat16 bits (the GLSL has no bfloat16 type)
          if (bf16 && half_types.count(component)) component = bf16_type;
          out.push_back({OpTypeCooperativeMatrixKHR, {id, component, x.w.at(2), x.w.at(3), x.w.at(4), use_const[key.second]}});
        }
        continue;
      }
      case OpTypePointer:
        if (pointee.count(x.w[0])) {
          for (auto& [key, id] : khr_ptr)
            if (key.first == x.w[0]) out.push_back({OpTypePointer, {id, x.w[1], khr_type.at({pointee.at(x.w[0]), key.second})}});
          continue;
        }
        break;
      case OpCooperativeMatrixLoadNV: {  // rt res ptr stride colmajor [memory operands] -> rt res ptr layout stride [...]
        auto b = bool_const.find(x.w.at(4));
        if (b == bool_const.end()) throw fail("a load whose column-major operand is not a constant");
        y = {OpCooperativeMatrixLoadKHR, {retype(x.w[0], x.w[1]), x.w[1], x.w.at(2), layout_const[b->second ? LayoutColumnMajor : LayoutRowMajor], x.w.at(3)}};
        y.w.insert(y.w.end(), x.w.begin() + 5, x.w.end());
        out.push_back(y);
        continue;
      }
      case OpCooperativeMatrixStoreNV: {  // ptr obj stride colmajor [memory operands] -> ptr obj layout stride [...]
        auto b = bool_const.find(x.w.at(3));
        if (b == bool_const.end()) throw fail("a store whose column-major operand is not a constant");
        y = {OpCooperativeMatrixStoreKHR, {x.w.at(0), x.w.at(1), layout_const[b->second ? LayoutColumnMajor : LayoutRowMajor], x.w.at(2)}};
        y.w.insert(y.w.end(), x.w.begin() + 4, x.w.end());
        out.push_back(y);
        continue;
      }
      case OpCooperativeMatrixMulAddNV:
        out.push_back({OpCooperativeMatrixMulAddKHR, {retype(x.w[0], x.w[1]), x.w[1], x.w.at(2), x.w.at(3), x.w.at(4)}});
        continue;
      default: break;
    }
    if (has_result_type(x.op) && y.w.size() >= 2) y.w[0] = retype(y.w[0], y.w[1]);
    out.push_back(std::move(y));
  }
  if (!declared) throw fail("no matrix type was declared");

  SpirvBinary r;
  r.words.assign(in.begin(), in.begin() + 5);
  r.words[3] = bound;
  if (workgroup_scope) r.words[1] = std::max<uint32_t>(r.words[1], 0x00010600);  // SPV_NV_cooperative_matrix2 asks for SPIR-V 1.6
  for (const Inst& x : out) {
    r.words.push_back(static_cast<uint32_t>((x.w.size() + 1) << 16) | x.op);
    r.words.insert(r.words.end(), x.w.begin(), x.w.end());
  }
  return r;
}

}  // namespace ts::vk
