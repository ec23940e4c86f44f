#include "engine/renderer/c_renderer.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "engine/codegen/cpu/linear_passes.h"
#include "engine/codegen/opt.h"
#include "engine/codegen/lowering.h"
#include "engine/codegen/linearize.h"
#include "engine/renderer/cstyle.h"
#include "engine/uop/error.h"

namespace ts {

std::string c_type(DType dt) {
  if (is_bool(dt)) return "_Bool";
  if (dt == dtypes::float16) return "__fp16";
  return strong(dt)->cname;
}

int64_t int_const_value(const UOp& c) {
  int64_t v = c.const_int();
  DType dt = c.dtype;
  if (is_bool(dt)) return v != 0;
  if (is_weak(dt) || dt->bitsize >= 64) return v;
  int bits = dt->bitsize;
  uint64_t low = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  if (!is_unsigned(dt) && (low >> (bits - 1))) return static_cast<int64_t>(low | ~((uint64_t{1} << bits) - 1));
  return static_cast<int64_t>(low);
}

namespace {

std::string fsuffix(DType dt) { return dt == dtypes::float64 ? "" : "f"; }

// the reference's CLANG renderer
class CLanguage final : public CStyleLanguage {
 public:
  std::string name() const override { return "C renderer"; }
  std::string type(DType dt) const override { return c_type(dt); }
  std::string unsigned_type(int bits) const override {
    switch (bits) {
      case 8: return "unsigned char";
      case 16: return "unsigned short";
      case 32: return "unsigned int";
      default: return "unsigned long";
    }
  }
  std::string cast_bare(const std::string& t, const std::string& x) const override { return "(" + t + ")(" + x + ")"; }
  std::string render_const(const UOp& c) const override {
    DType dt = c.dtype;
    if (c.is<Invalid>()) return "0";
    if (is_bool(dt)) return c.const_float() != 0 ? "1" : "0";
    if (dt == dtypes::bfloat16) {
      // __bf16 is a storage type to clang (no conversion from float is spelled): its bits, rounded to nearest even
      const float f = static_cast<float>(c.const_float());
      uint32_t b;
      std::memcpy(&b, &f, 4);
      const uint32_t h = std::isnan(f) ? 0x7FC0u : (b + 0x7FFFu + ((b >> 16) & 1u)) >> 16;
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%04X", static_cast<unsigned>(h & 0xFFFFu));
      return "__builtin_bit_cast(__bf16, (unsigned short)" + std::string(hex) + ")";
    }
    if (is_float(dt)) {
      double v = c.const_float();
      bool f32 = dt != dtypes::float64;
      const std::string cast = std::string("(").append(c_type(dt)).append(")");
      if (std::isnan(v)) return "(" + cast + "(" + (f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")") + "))";
      if (std::isinf(v)) return "(" + cast + "(" + std::string(v < 0 ? "-" : "") + (f32 ? "__builtin_inff()" : "__builtin_inf()") + "))";
      std::string s = float_digits(v, dt);
      if (dt == dtypes::float32) return s + "f";
      if (dt == dtypes::float64) return s;
      return "((" + c_type(dt) + ")(" + s + "f))";
    }
    return int_literal(c);
  }
  std::string float_literal(const std::string& digits, DType dt) const override { return digits + fsuffix(dt); }
  std::string builtin(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const override {
    std::string sf = fsuffix(dt);
    switch (op) {
      case Ops::CMOD: return "__builtin_fmod" + sf + "(" + s[0] + ", " + s[1] + ")";
      case Ops::FLOORDIV: return "__builtin_floor" + sf + "(" + s[0] + "/" + s[1] + ")";
      case Ops::FLOORMOD: return "(" + s[0] + "-" + s[1] + "*__builtin_floor" + sf + "(" + s[0] + "/" + s[1] + "))";
      case Ops::SQRT: return "__builtin_sqrt" + sf + "(" + s[0] + ")";
      case Ops::EXP2: return "__builtin_exp2" + sf + "(" + s[0] + ")";
      case Ops::LOG2: return "__builtin_log2" + sf + "(" + s[0] + ")";
      case Ops::SIN: return "__builtin_sin" + sf + "(" + s[0] + ")";
      case Ops::TRUNC: return "__builtin_trunc" + sf + "(" + s[0] + ")";
      case Ops::POW: return "__builtin_pow" + sf + "(" + s[0] + ", " + s[1] + ")";
      default: throw Error("C renderer: unsupported op " + std::string(op_name(u.op)));
    }
  }
  std::string bitcast(const UOp& u, const std::string& x) const override {
    return "__builtin_bit_cast(" + c_type(u.dtype) + ", (" + c_type(u.src[0]->dtype) + ")(" + x + "))";
  }
  std::string index(const std::string& buf, const std::string& idx, bool idx_is_add, DType) const override {
    return "(" + buf + "+" + (idx_is_add ? strip_parens(idx) : idx) + ")";
  }
  std::string deref(const std::string& access) const override { return "*" + access; }
  // clang emits `c ? expr : y` with an expression arm as a branch around it, which keeps the SLP vectorizer off the
  // block (an EXP2 polynomial under its overflow check stayed scalar); a variable arm is a select
  bool where_arms_as_variables() const override { return true; }
  // the CPU passes' PREFETCH (never faults: an address past the buffer, as the last block's next one, is only not fetched)
  std::string prefetch(const std::string& addr) const override { return "__builtin_prefetch(" + addr + ");"; }
  // on the stack of the thread that runs the kernel (each core its own), 64-byte aligned for whole-line vectors
  std::string array_decl(DType dt, const std::string& nm, int64_t size) const override {
    return c_type(dt) + " " + nm + "[" + std::to_string(size) + "] __attribute__((aligned(64)));";
  }
  std::string wrap(const ProgramSpec& spec, const std::vector<Param>& params, const std::vector<std::string>& body,
                   const std::vector<std::string>&, const std::set<int>& vec_widths_used, int* body_line) const override {
    const std::string& name = spec.function_name;
    std::ostringstream o;
    // a*b+c in one expression may be one fma, as the reference's clang compiles it; FP_CONTRACT=0 asks for the unfused
    // IEEE evaluation the interpreter computes (the differential tests compare against it)
    if (codegen_option("FP_CONTRACT", 1) == 0) o << "#pragma clang fp contract(off)\n";
    // (aligned(4), not the reference's aligned(16): buffer views may start at any element)
    for (int w : vec_widths_used)
      o << "typedef float float" << w << " __attribute__((aligned(4),ext_vector_type(" << w << ")));\n";
    o << "void " << name << "(";
    std::ostringstream call;
    call << "  " << name << "(";
    for (size_t i = 0; i < params.size(); ++i) {
      const UOp* p = params[i].uop;
      const ParamArg& pa = p->as<ParamArg>();
      std::string sep = i ? ", " : "";
      if (pa.addrspace == AddrSpace::ALU) {
        o << sep << "const " << c_type(p->dtype) << " " << params[i].name;
        if (pa.name == "core_id") call << sep << "core_id";
        else call << sep << "(" << c_type(p->dtype) << ")vars[" << (pa.slot - spec.num_buffers) << "]";
      } else {
        o << sep << c_type(p->dtype) << "* restrict " << params[i].name;
        call << sep << "(" << c_type(p->dtype) << "*)bufs[" << pa.slot << "]";
      }
    }
    o << ") {\n";
    *body_line = count_lines(o.str()) + 1;
    for (auto& l : body) o << l << "\n";
    o << "}\n\n";
    o << "void " << name << "_entry(void** bufs, const long long* vars, int core_id) {\n";
    o << "  (void)bufs; (void)vars; (void)core_id;\n";
    o << call.str() << ");\n}\n";
    return o.str();
  }
};

const CLanguage& c_language() {
  static const CLanguage lang;
  return lang;
}

// the CPU's schemes (engine/codegen/cpu/linear_passes.h), each a named pass: prefetches (PREFETCH=0: none), vector
// accesses (a 16-wide group is one AVX-512 access, and the SLP vectorizer carries the vector through the arithmetic
// from there), transposed accumulations (TRANSPOSE=0: the 16 scalar chains as written), vector accumulators
// (VECACC=0: one scalar accumulator per lane, as written)
}  // namespace

UOpRef cpu_linear_passes(const UOpRef& linear) {
  UOpRef l = linear;
  if (codegen_option("PREFETCH", 1) != 0) l = cpu_prefetch(l);
  l = vector_accesses(l, {16, 8, 4});
  if (codegen_option("TRANSPOSE", 1) != 0) l = transposed_accumulation(l);
  if (codegen_option("VECACC", 1) != 0) l = vector_accumulators(l);
  return l;
}

// the packing passes over the lowered kernel (PACK=0: reads as the loops make them)
UOpRef cpu_lowered_passes(const UOpRef& sink, const OptTarget& target) {
  if (!target.has_threads || codegen_option("PACK", 1) == 0) return sink;
  return pack_spread_lanes(pack_panels(sink, 256 << 10), 256 << 10, 16);
}

std::string render_c(const ProgramSpec& spec, SourceLines* lines) { return c_language().render(spec, lines); }


namespace {
// the reference's ClangRenderer: C99 for clang's library, with the CPU's packing passes
class ClangRenderer final : public Renderer {
 public:
  std::string name() const override { return "CLANG"; }
  std::string lang() const override { return "c"; }
  UOpRef lowered_passes(const UOpRef& sink, const OptTarget& target) const override { return cpu_lowered_passes(sink, target); }
  UOpRef linear_passes(const UOpRef& linear, const OptTarget&) const override { return cpu_linear_passes(linear); }
  bool decomposes_transcendentals() const override { return true; }
  void render(ProgramSpec& spec) const override {
    require_cpu_program(spec.lowered, "C", spec.name);
    spec.src = c_language().render(spec, &spec.source_lines);
  }
};
}  // namespace

const Renderer& clang_renderer() {
  static const ClangRenderer r;
  return r;
}

}  // namespace ts
