#include "engine/renderer/glsl_renderer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

#include "engine/codegen/cpu/linear_passes.h"
#include "engine/codegen/row_reads.h"
#include "engine/renderer/c_renderer.h"
#include "engine/renderer/cstyle.h"
#include "engine/codegen/tensor_core.h"
#include "engine/uop/error.h"

namespace ts {

namespace {

std::string glsl_type(DType dt) {
  dt = strong(dt);
  if (is_bool(dt)) return "bool";
  if (dt == dtypes::float32) return "float";
  if (dt == dtypes::float64) return "double";
  if (dt == dtypes::float16) return "float16_t";
  if (dt == dtypes::bfloat16) return "uint16_t";  // bfloat16 math runs in float32 on its bits (late decompositions)
  if (is_fp8(dt)) return "uint8_t";  // as fp8's: only its code is loaded, stored, selected and bitcast
  if (dt == dtypes::int32) return "int";
  if (dt == dtypes::uint32) return "uint";
  if (is_int(dt)) return std::string(is_unsigned(dt) ? "uint" : "int") + std::to_string(dt->bitsize) + "_t";
  throw Error("GLSL renderer: no GLSL type for " + std::string(dt->name));
}

// the bits of a float special value in dt: NaN, +inf, -inf
std::string float_special(double v, DType dt) {
  bool nan = std::isnan(v), neg = v < 0;
  if (dt == dtypes::float64) {
    const char* bits = nan ? "0x7ff8000000000000ul" : neg ? "0xfff0000000000000ul" : "0x7ff0000000000000ul";
    return "uint64BitsToDouble(" + std::string(bits) + ")";
  }
  std::string f = "uintBitsToFloat(" + std::string(nan ? "0x7fc00000u" : neg ? "0xff800000u" : "0x7f800000u") + ")";
  return dt == dtypes::float32 ? f : "float16_t(" + f + ")";
}

// |x|^y for x > 0 (x = 1, NaN and x = 0 are the caller's; a float's x is a normal double) in double, within a few ulps
// of double: log2 x from the exponent bits and atanh's series, 2^z as 2^round(z) (bits) times exp's series. Straight-line
// code with one division: lavapipe compiles dozens of inlined calls in a kernel in about a second (loops and frexp took
// minutes). POW of float32 and float16 calls it (its result rounded once to the dtype), so their power is the correctly
// rounded one but in rare ties, as C's powf (float64's POW is decomposed before it gets here)
const char* kPowHelper = R"(double ts_pow(double x, double y) {
  if (isinf(x)) return y > 0.0lf ? x : 0.0lf;
  uint64_t b = doubleBitsToUint64(x);
  int e = int(b >> 52) - 1023;
  double m = uint64BitsToDouble((b & 0x000ffffffffffffful) | 0x3ff0000000000000ul);
  if (m > 1.4142135623730951lf) { m *= 0.5lf; e += 1; }
  double s = (m - 1.0lf) / (m + 1.0lf), s2 = s * s;
  double t = 1.0lf + s2 * (0.3333333333333333lf + s2 * (0.2lf + s2 * (0.14285714285714285lf + s2 * (0.1111111111111111lf + s2 * (0.09090909090909091lf + s2 * (0.07692307692307693lf + s2 * (0.06666666666666667lf + s2 * (0.058823529411764705lf + s2 * (0.05263157894736842lf + s2 * (0.047619047619047616lf + s2 * (0.043478260869565216lf + s2 * (0.04lf))))))))))));
  double z = y * (double(e) + 2.8853900817779268lf * s * t);
  if (isnan(z) || z >= 1024.0lf) return uint64BitsToDouble(0x7ff0000000000000ul);
  if (z <= -1080.0lf) return 0.0lf;
  int n = int(z + (z < 0.0lf ? -0.5lf : 0.5lf)), h = n / 2;
  double f = (z - double(n)) * 0.69314718055994531lf;
  double q = 1.0lf + f * (1.0lf + f * (0.5lf + f * (0.16666666666666666lf + f * (0.041666666666666664lf + f * (0.008333333333333333lf + f * (0.001388888888888889lf + f * (0.0001984126984126984lf + f * (2.48015873015873e-05lf + f * (2.7557319223985893e-06lf + f * (2.755731922398589e-07lf + f * (2.505210838544172e-08lf + f * (2.08767569878681e-09lf + f * (1.6059043836821613e-10lf + f * (1.1470745597729725e-11lf + f * (7.647163731819816e-13lf + f * (4.779477332387385e-14lf + f * (2.8114572543455206e-15lf)))))))))))))))));
  return q * uint64BitsToDouble(uint64_t(h + 1023) << 52) * uint64BitsToDouble(uint64_t(n - h + 1023) << 52);
})";

class GlslLanguage final : public CStyleLanguage {
 public:
  std::string name() const override { return "GLSL renderer"; }
  std::string type(DType dt) const override { return glsl_type(dt); }
  std::string unsigned_type(int bits) const override { return bits == 32 ? "uint" : "uint" + std::to_string(bits) + "_t"; }
  std::string cast_bare(const std::string& t, const std::string& x) const override { return t + "(" + x + ")"; }
  bool promotes_narrow() const override { return false; }
  std::string render_const(const UOp& c) const override {
    DType dt = strong(c.dtype);
    if (c.is<Invalid>()) return "0";
    if (is_bool(dt)) return c.const_float() != 0 ? "true" : "false";
    if (is_float(dt)) {
      double v = c.const_float();
      if (std::isnan(v) || std::isinf(v)) return float_special(v, dt);
      if (dt == dtypes::bfloat16) throw Error("GLSL renderer: a bfloat16 constant outside float32 math");
      std::string s = float_digits(v, dt);
      if (dt == dtypes::float32) return s + "f";
      if (dt == dtypes::float64) return s + "lf";
      return "float16_t(" + s + ")";
    }
    return int_literal(c);
  }
  bool repeats_operands(const UOp& u) const override {
    return u.op == Ops::POW || u.op == Ops::EXP2 || u.op == Ops::LOG2 || CStyleLanguage::repeats_operands(u);
  }
  std::string one(DType dt) const override { return render_const(*uconst(dt, 1.0)); }
  std::string float_literal(const std::string& digits, DType dt) const override {
    return digits + (dt == dtypes::float64 ? "lf" : "f");
  }
  std::string builtin(Ops op, DType dt, const std::vector<std::string>& s, const UOp& u) const override {
    if (dt == dtypes::float64 && (op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN || op == Ops::POW))
      throw Error("GLSL renderer: " + std::string(op_name(op)) + " of float64 has no GLSL builtin (only float32 and float16 do)");
    switch (op) {
      case Ops::CMOD: return "(" + s[0] + "-" + s[1] + "*trunc(" + s[0] + "/" + s[1] + "))";
      case Ops::FLOORDIV: return "floor(" + s[0] + "/" + s[1] + ")";
      case Ops::FLOORMOD: return "(" + s[0] + "-" + s[1] + "*floor(" + s[0] + "/" + s[1] + "))";
      case Ops::SQRT: return "sqrt(" + s[0] + ")";
      // GLSL leaves exp2 and log2 undefined at infinities, NaN and log2(x <= 0) (lavapipe returns 0 for exp2(inf)):
      // those inputs, and exp2's overflow and underflow, take their IEEE results explicitly
      case Ops::EXP2: {
        auto c = [&](double v) { return render_const(*uconst(dt, v)); };
        const bool half = dt == dtypes::float16;
        const std::string& x = s[0];
        return "(isnan(" + x + ")?" + x + ":(" + x + ">=" + c(half ? 16 : 128) + ")?" + c(INFINITY) + ":(" + x + "<" + c(half ? -25 : -150) +
               ")?" + c(0) + ":exp2(" + x + "))";
      }
      case Ops::LOG2: {
        auto c = [&](double v) { return render_const(*uconst(dt, v)); };
        const std::string& x = s[0];
        return "(isnan(" + x + ")?" + x + ":(" + x + "<" + c(0) + ")?" + c(NAN) + ":(" + x + "==" + c(0) + ")?" + c(-INFINITY) + ":isinf(" + x +
               ")?" + x + ":log2(" + x + "))";
      }
      case Ops::SIN: return "sin(" + s[0] + ")";
      case Ops::TRUNC: return "trunc(" + s[0] + ")";
      case Ops::POW: {
        // C's pow: GLSL's is undefined for x < 0 and for x == 0 with y <= 0. x^0 = 1 and 1^y = 1 (NaN included); a
        // negative base takes an integral exponent's sign (odd: negative) and is NaN for others; 0^y is 0 or inf, of a -0
        // base's sign for an odd integral y
        const std::string &x = s[0], &y = s[1], T = glsl_type(dt);
        auto c = [&](double v) { return render_const(*uconst(dt, v)); };
        // |x|^y in double (kPowHelper): GLSL's pow is exp2(y*log2(x)) in the operands' precision, off by thousands of
        // ulps where y*log2(x) is large (lavapipe: 5^2 = 24.999998, 65504^1 in half = inf)
        const std::string p = T + "(ts_pow(double(abs(" + x + ")), double(" + y + ")))", yint = "(trunc(" + y + ")==" + y + ")",
                          odd = "(trunc(" + y + "*" + c(0.5) + ")*" + c(2.0) + "!=" + y + ")";
        // (-inf)^y: inf for y > 0 and 0 for y < 0, negative for an odd integral y
        const std::string neg_inf = "(" + x + "==" + c(-INFINITY) + ")?((" + y + ">" + c(0) + ")?((" + yint + "&&" + odd + ")?" + c(-INFINITY) + ":" +
                                    c(INFINITY) + "):((" + yint + "&&" + odd + ")?" + c(-0.0) + ":" + c(0) + ")):";
        return "(((" + y + "==" + c(0) + ")||(" + x + "==" + c(1) + "))?" + c(1) + ":(isnan(" + x + ")||isnan(" + y + "))?" + c(NAN) + ":(" + x + "==" + c(0) + ")?((" + y + ">" + c(0) + ")?" +
               "((" + yint + "&&" + odd + ")?" + x + ":" + c(0) + "):((" + yint + "&&" + odd + ")?(" + c(1) + "/" + x + "):" + c(INFINITY) + ")):" + neg_inf + "(" + x + "<" + c(0) + ")?(" + yint + "?(" + odd + "?(-" + p + "):" + p + "):" + c(NAN) + "):" + p + ")";
      }
      default: throw Error("GLSL renderer: unsupported op " + std::string(op_name(u.op)));
    }
  }
  std::string bitcast(const UOp& u, const std::string& x) const override {
    DType to = strong(u.dtype), from = strong(u.src[0]->dtype);
    auto is = [](DType d, DType e) { return d == e; };
    if (is(to, dtypes::float32)) return (is_unsigned(from) ? "uintBitsToFloat(" : "intBitsToFloat(") + x + ")";
    if (is(from, dtypes::float32)) return std::string(is_unsigned(to) ? "floatBitsToUint(" : "floatBitsToInt(") + x + ")";
    if (is(to, dtypes::float64)) return (is_unsigned(from) ? "uint64BitsToDouble(" : "int64BitsToDouble(") + x + ")";
    if (is(from, dtypes::float64)) return std::string(is_unsigned(to) ? "doubleBitsToUint64(" : "doubleBitsToInt64(") + x + ")";
    if (is(to, dtypes::float16)) return (is_unsigned(from) || from == dtypes::bfloat16 ? "uint16BitsToFloat16(" : "int16BitsToFloat16(") + x + ")";
    if (is(from, dtypes::float16)) return std::string(is_unsigned(to) || to == dtypes::bfloat16 ? "float16BitsToUint16(" : "float16BitsToInt16(") + x + ")";
    return glsl_type(to) + "(" + x + ")";  // integers of one width (bfloat16 is its uint16 bits)
  }
  // a signed int of 32 bits or fewer widened to 64 bits as its zero extension with the sign bit moved: lavapipe (Mesa 22.3)
  // gets the plain sign extension wrong inside comparisons: int64_t(-2) < 0l, and float(int64_t(-2)) < 0.0f (folded into
  // that), are false there while int64_t(-2) itself is -2
  std::string render_cast(const UOp& u, const std::string& x) const override {
    DType from = strong(u.src[0]->dtype), to = strong(u.dtype);
    if (is_int(to) && to->bitsize == 64 && is_int(from) && !is_unsigned(from) && from->bitsize <= 32) {
      const std::string sext = "((int64_t(uint(" + (from->bitsize == 32 ? x : "int(" + x + ")") + "))^0x80000000l)-0x80000000l)";
      return is_unsigned(to) ? "uint64_t" + sext : sext;
    }
    return CStyleLanguage::render_cast(u, x);
  }
  // signed 64-bit a < b as an unsigned compare with the sign bits flipped: lavapipe (Mesa 22.3, LLVM 15) gets
  // int64_t(int) < small positive constant wrong (1 < 2l is false there); the unsigned form is right everywhere
  std::string less_than(DType dt, const std::string& a, const std::string& b) const override {
    if (is_int(dt) && !is_unsigned(dt) && strong(dt)->bitsize == 64)
      return "((uint64_t(" + a + ")^0x8000000000000000ul)<(uint64_t(" + b + ")^0x8000000000000000ul))";
    return "(" + a + "<" + b + ")";
  }
  // GLSL has no arithmetic on bool: ADD and MAX are OR, MUL is AND, a<b is !a&&b (C's results stored back as bool)
  std::string bool_op(Ops op, const std::vector<std::string>& s) const override {
    switch (op) {
      case Ops::AND: case Ops::MUL: return "(" + s[0] + "&&" + s[1] + ")";
      case Ops::OR: case Ops::ADD: case Ops::MAX: return "(" + s[0] + "||" + s[1] + ")";
      case Ops::XOR: return "(" + s[0] + "^^" + s[1] + ")";
      case Ops::CMPLT: return "((!" + s[0] + ")&&" + s[1] + ")";
      default: return {};
    }
  }
  // GLSL subscripts are 32-bit: a 64-bit index (its math may pass 2^31, the element index never does: one binding
  // holds at most maxStorageBufferRange bytes) is narrowed at the access
  // A constant negative subscript is a load hoisted out of the loop whose gate guards every use of it (the value is
  // never read there): glslang rejects such a subscript, so it reads element 0 instead, which the gate discards too.
  std::string index(const std::string& buf, const std::string& idx, bool, DType idx_dtype) const override {
    std::string i = strip_parens(idx);
    if (i.size() > 1 && i[0] == '-' && i.find_first_not_of("0123456789", 1) == std::string::npos) i = "0";
    if (idx_dtype && idx_dtype->bitsize == 64) return buf + "[int(" + i + ")]";
    return buf + "[" + i + "]";
  }
  std::string deref(const std::string& access) const override { return access; }
  std::string load_value(DType dt, const std::string& v) const override { return is_bool(dt) ? "bool(" + v + ")" : v; }
  std::string store_value(DType dt, const std::string& v) const override { return is_bool(dt) ? "uint8_t(" + v + ")" : v; }
  std::string special(const UOp& u) const override {
    // gidxN: the work-group, lidxN: the lane in it, idxN: the invocation (program.h, "GPU programs")
    const std::string& nm = u.as<std::string>();
    if (nm.size() < 4 || (nm[0] != 'g' && nm[0] != 'l' && nm[0] != 'i') || nm[nm.size() - 1] < '0' || nm[nm.size() - 1] > '2')
      throw Error("GLSL renderer: unknown special index '" + nm + "'");
    const char* base = nm[0] == 'g' ? "gl_WorkGroupID" : nm[0] == 'l' ? "gl_LocalInvocationID" : "gl_GlobalInvocationID";
    return cast(glsl_type(u.dtype), std::string(base) + "." + "xyz"[nm.back() - '0']);
  }
  std::string barrier() const override { return "memoryBarrierShared(); barrier();"; }
  // 16-byte accesses (GlslRenderer::linear_passes groups them) through a vec4 view of the same binding (data0_v4
  // beside data0_16): one load instruction instead of four, which a memory-bound kernel needs to reach the bandwidth
  std::string vec_type(int) const override { return "vec4"; }
  std::string vec_load(const std::string& buf, const std::string& idx, int) const override { return vec4_view(buf) + "[" + quarter(idx) + "]"; }
  std::string vec_store(const std::string& buf, const std::string& idx, const std::vector<std::string>& lanes) const override {
    return vec4_view(buf) + "[" + quarter(idx) + "] = vec4(" + lanes[0] + "," + lanes[1] + "," + lanes[2] + "," + lanes[3] + ");";
  }
  // a body line with the packed work group's indexes in place of the shader's own
  static std::string packed(std::string l) {
    for (auto [from, to] : {std::pair<std::string, std::string>{"gl_WorkGroupID.x", "ts_group"}, {"gl_LocalInvocationID.x", "ts_lane"}})
      for (size_t p = l.find(from); p != std::string::npos; p = l.find(from, p + to.size())) l.replace(p, from.size(), to);
    return l;
  }
  // a body line with lidx0 and lidx1 read from the other components
  static std::string swapped(std::string l) {
    for (size_t p = l.find("gl_LocalInvocationID."); p != std::string::npos; p = l.find("gl_LocalInvocationID.", p + 1)) {
      char& c = l[p + 21];
      c = c == 'x' ? 'y' : c == 'y' ? 'x' : c;
    }
    return l;
  }
  static std::string vec4_view(const std::string& buf) { return buf.substr(0, buf.find('_')) + "_v4"; }
  // idx / 4 of an index that is a multiple of 4: a constant folded, else a shift
  static std::string quarter(const std::string& idx) {
    if (!idx.empty() && std::all_of(idx.begin(), idx.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::to_string(std::stoll(idx) / 4);
    return "(" + idx + ")>>2";
  }
  // the float widths a kernel computes in: 32 always (its indexes' float math, if any), 16 and 64 when it names them
  static std::vector<int> float_widths(const ProgramSpec& spec, bool doubles) {
    bool f16 = false, f64 = doubles;
    for (auto& u : spec.lowered->src) {
      f16 = f16 || u->dtype == dtypes::float16;
      f64 = f64 || u->dtype == dtypes::float64;
    }
    std::vector<int> w = {32};
    if (f16) w.push_back(16);
    if (f64) w.push_back(64);
    return w;
  }
  std::string local_decl(DType dt, const std::string& nm, int64_t size) const override {
    return "shared " + glsl_type(dt) + " " + nm + "[" + std::to_string(size) + "];";
  }
  std::string wrap(const ProgramSpec& spec, const std::vector<Param>& params, const std::vector<std::string>& body,
                   const std::vector<std::string>& prologue, const std::set<int>&, int* body_line) const override {
    // which explicit types the shader names, for its extensions
    bool arith = false, storage8 = false, storage16 = false;
    for (auto& u : spec.lowered->src) {
      DType dt = u->dtype;
      if (!dt || is_weak(dt) || dt == dtypes::void_) continue;
      if (dt->bitsize != 32 && !is_bool(dt)) arith = true;
      if (u->op == Ops::PARAM && u->as<ParamArg>().addrspace != AddrSpace::ALU) {
        if (is_bool(dt) || dt->bitsize == 8) storage8 = arith = true;
        if (dt->bitsize == 16) storage16 = true;
      }
    }
    const bool pow_helper = std::any_of(body.begin(), body.end(), [](const std::string& l) { return l.find("ts_pow(") != std::string::npos; });
    arith = arith || pow_helper;  // (its uint64 bits of inf)
    std::ostringstream o;
    o << "#version 450\n";
    if (arith) o << "#extension GL_EXT_shader_explicit_arithmetic_types : require\n";
    if (storage8) o << "#extension GL_EXT_shader_8bit_storage : require\n";
    if (storage16) o << "#extension GL_EXT_shader_16bit_storage : require\n";
    // IEEE infinities, NaNs and signed zeros kept (SPV_KHR_float_controls' SignedZeroInfNanPreserve) for each float
    // width the shader computes in: without it lavapipe's optimizer rewrites inf*a + inf*b as inf*(a+b) (-inf + inf is
    // NaN, inf*(-1 + 3e9) is inf) and the like; contraction into fma stays allowed
    o << "#extension GL_EXT_spirv_intrinsics : require\n";
    for (int bits : float_widths(spec, pow_helper))
      o << "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4466], 4461, " << bits << ");\n";
    const std::array<int64_t, 3> ls = spec.local_size.value_or(std::array<int64_t, 3>{1, 1, 1});
    const int pack = glsl_group_packing(spec);
    const bool swap = glsl_swaps_lanes(spec);
    if (swap)
      o << "// lidx1 is gl_LocalInvocationID.x: consecutive lanes of a subgroup take consecutive lidx1\n"
        << "layout(local_size_x = " << ls[1] << ", local_size_y = " << ls[0] << ", local_size_z = 1) in;\n";
    else
      o << "layout(local_size_x = " << ls[0] * pack << ", local_size_y = " << ls[1] << ", local_size_z = " << ls[2] << ") in;\n";
    const std::set<int> outs(spec.outs.begin(), spec.outs.end());
    std::vector<std::string> vars;
    for (auto& p : params) {
      const ParamArg& pa = p.uop->as<ParamArg>();
      if (pa.addrspace == AddrSpace::ALU) {
        vars.push_back("  layout(offset = " + std::to_string(8 * (pa.slot - spec.num_buffers)) + ") " + glsl_type(p.uop->dtype) + " " + p.name + ";");
        continue;
      }
      std::string elem = is_bool(p.uop->dtype) ? "uint8_t" : glsl_type(p.uop->dtype);
      const std::string access = outs.count(static_cast<int>(pa.slot)) ? "" : "readonly ";
      // a buffer read or written as vec4 is declared as a vec4 array; one accessed both ways has two views of its
      // binding, and then neither may be restrict (restrict is what lets NVIDIA cache read-only loads in L1)
      const std::string v4 = vec4_view(p.name);
      auto used = [&](const std::string& nm) {
        return std::any_of(body.begin(), body.end(), [&](const std::string& l) { return l.find(nm + "[") != std::string::npos; });
      };
      const bool vec = used(v4), scalar = used(p.name) || !vec;
      const std::string restrict = vec && scalar ? "" : "restrict ";
      if (scalar)
        o << "layout(std430, set = 0, binding = " << pa.slot << ") " << restrict << access << "buffer buf_" << pa.slot << " { " << elem << " "
          << p.name << "[]; };\n";
      if (vec)
        o << "layout(std430, set = 0, binding = " << pa.slot << ") " << restrict << access << "buffer buf_" << pa.slot << "_v4 { vec4 " << v4
          << "[]; };\n";
    }
    if (!vars.empty()) {
      o << "layout(push_constant) uniform vars_t {\n";
      for (auto& v : vars) o << v << "\n";
      o << "};\n";
    }
    for (auto& l : prologue) o << l << "\n";
    if (pow_helper) o << kPowHelper << "\n";
    o << "void main() {\n";
    if (pack > 1) {
      const std::string lx = std::to_string(ls[0]) + "u";
      o << "  // " << pack << " work groups of " << ls[0] << " lanes in one: gidx0 and lidx0 of this lane\n";
      o << "  const uint ts_group = gl_WorkGroupID.x * " << pack << "u + gl_LocalInvocationID.x / " << lx << ";\n";
      o << "  if (ts_group >= " << spec.global_size[0] << "u) return;\n";
      o << "  const uint ts_lane = gl_LocalInvocationID.x % " << lx << ";\n";
    }
    *body_line = count_lines(o.str()) + 1;
    for (auto& l : body) o << (pack > 1 ? packed(l) : swap ? swapped(l) : l) << "\n";
    o << "}\n";
    return o.str();
  }
};

}  // namespace

bool glsl_swaps_lanes(const ProgramSpec& spec) {
  if (!spec.local_size || codegen_option("GLSL_LANES_SWAP", 1) == 0) return false;
  const auto& ls = *spec.local_size;
  return ls[0] > 1 && ls[1] > 1 && ls[2] == 1;
}

int glsl_group_packing(const ProgramSpec& spec) {
  if (!spec.local_size || !spec.vars.empty() || !spec.lowered) return 1;
  const auto& ls = *spec.local_size;
  if (ls[1] != 1 || ls[2] != 1 || ls[0] < 1 || ls[0] >= 128) return 1;
  for (auto& u : spec.lowered->src) {
    // work groups whose lanes talk to each other (a staged matmul's CUSTOM reads its trip count from the launch too)
    if (u->op == Ops::BARRIER || u->op == Ops::BUFFER || u->op == Ops::WMMA || u->op == Ops::CUSTOM) return 1;
    if (u->op == Ops::SPECIAL && u->as<std::string>().rfind("idx", 0) == 0) return 1;
  }
  // packing never leaves fewer than 1024 work groups: a grid smaller than that in few big groups leaves most of a
  // GPU's multiprocessors idle (on the H200, 512 groups of 32 lanes packed into 64 of 256 ran on 64 of its 132)
  constexpr int64_t kMinGroups = 1024;
  int64_t pack = 256 / ls[0];
  while (pack > 1 && spec.global_size[0] / pack < kMinGroups) pack /= 2;
  return static_cast<int>(std::max<int64_t>(pack, 1));
}

namespace {

// one dimension of a tile: ranges from the outermost to the innermost, each with its coefficient in a buffer's index
struct TileDim {
  std::vector<std::pair<int64_t, int64_t>> digits;  // (size, coefficient)
  int64_t size() const {
    int64_t p = 1;
    for (auto& d : digits) p *= d.first;
    return p;
  }
};

// sum of coefficient x digit for a position `var` (GLSL uint) in a tile dimension
std::string tile_offset(const TileDim& d, const std::string& var) {
  std::string out;
  int64_t stride = d.size();
  for (auto& [size, coef] : d.digits) {
    stride /= size;
    if (coef == 0) continue;
    std::string digit = stride == 1 ? var : "(" + var + " / " + std::to_string(stride) + "u)";
    if (stride * size != d.size()) digit = "(" + digit + " % " + std::to_string(size) + "u)";
    out += (out.empty() ? "" : " + ") + (coef == 1 ? digit : std::to_string(coef) + "u * " + digit);
  }
  return out.empty() ? "0u" : out;
}

// mixed-radix digits of `var` over ranges (the last the fastest), each times its coefficient from `coef`
template <class F>
std::string digits_sum(const std::vector<TcRange>& rs, const std::string& var, F coef) {
  TileDim d;
  for (auto& r : rs) d.digits.emplace_back(r.size, coef(r));
  return tile_offset(d, var);
}

// an operand's tile: rows x cols of the matrix, staged in shared memory along its contiguous dimension
// The staged tile holds `stage` K blocks one after the other along its k dimension (A's columns, B's rows).
struct Operand {
  std::string name;  // "a" / "b"
  TileDim rows, cols;
  bool k_rows = false;     // k runs along the rows (B) rather than the columns (A)
  int64_t stage = 1;       // K blocks in the staged tile
  bool col_major = false;  // contiguous along rows (smem [cols][rows + 8]) rather than cols (smem [rows][cols + 8])
  int vec = 1;             // elements per global load (8: uvec4 in global and shared memory)
  int64_t slot = 0;
  std::string origin;      // GLSL: the tile's first element for the block `kn`
  int64_t staged_rows() const { return rows.size() * (k_rows ? stage : 1); }
  int64_t staged_cols() const { return cols.size() * (k_rows ? 1 : stage); }
  int64_t stride() const { return (col_major ? staged_rows() : staged_cols()) + 8; }
  int64_t units() const { return staged_rows() * staged_cols() / vec; }
  // elements per entry of its shared-memory array (a uvec4 array holds 8 halves: index >> 3), which counts the
  // array's size and the fragments' starts and strides
  int64_t shared_unit() const { return vec == 8 ? 8 : 1; }
};

// a tile dimension's digits: the ranges of a and b, then t, each with its coefficient; neighbours that are one
// contiguous run (outer coefficient = inner coefficient x inner size) are one digit
TileDim tile_dim(const std::vector<TcRange>& a, const std::vector<TcRange>& b, const TcRange& t, int64_t TcRange::*coef) {
  TileDim d;
  for (auto* v : {&a, &b})
    for (auto& r : *v) d.digits.emplace_back(r.size, r.*coef);
  d.digits.emplace_back(t.size, t.*coef);
  for (size_t i = d.digits.size() - 1; i-- > 0;) {
    auto &o = d.digits[i], &in = d.digits[i + 1];
    if (o.second == in.second * in.first) {
      in.first *= o.first;
      d.digits.erase(d.digits.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return d;
}

// the two operands of a tensor-core kernel: their tiles' rows and columns, layouts, load widths and origins
struct TcOperands {
  Operand A, B;
  std::vector<TcRange> locals_m, locals_n;  // the LOCAL ranges of the output's rows (m) and columns (n)
};
TcOperands tc_operands(const TcLayout& L) {
  TcOperands ops;
  std::vector<TcRange>& locals_m = ops.locals_m;
  std::vector<TcRange>& locals_n = ops.locals_n;
  Operand& A = ops.A;
  Operand& B = ops.B;
  for (auto& l : L.locals) (l.cb == 0 ? locals_m : locals_n).push_back(l);
  const std::vector<TcRange> none;
  A.name = "a", A.rows = tile_dim(locals_m, L.upcast_m, L.rm, &TcRange::ca), A.cols = tile_dim(none, L.unrolls, L.rk, &TcRange::ca);
  B.name = "b", B.rows = tile_dim(none, L.unrolls, L.rk, &TcRange::cb), B.cols = tile_dim(locals_n, L.upcast_n, L.rn, &TcRange::cb);
  A.col_major = L.rk.ca != 1, B.col_major = L.rn.cb != 1;
  B.k_rows = true;
  A.stage = B.stage = L.stage;
  A.slot = L.slot_a, B.slot = L.slot_b;
  // w-element loads when every coefficient and the start are multiples of w and the contiguous range holds whole
  // vectors: 8 halves (16 bytes, one uvec4 load, one shared store, fragments loaded from a uvec4 array), else 4
  auto vectorizable = [&](int64_t w, int64_t base, int64_t TcRange::*coef, const TcRange& contiguous) {
    if (base % w || contiguous.size % w) return false;
    for (auto* v : {&L.globals, &L.locals, &L.upcast_m, &L.upcast_n, &L.reduces, &L.unrolls})
      for (auto& r : *v)
        if (r.*coef % w) return false;
    for (const TcRange* r : {&L.rm, &L.rn, &L.rk})
      if (r != &contiguous && r->*coef % w) return false;
    return true;
  };
  auto width = [&](int64_t base, int64_t TcRange::*coef, const TcRange& contiguous) {
    if (L.dtype_in->itemsize() == 2 && codegen_option("TC_VEC8", 1) != 0 && vectorizable(8, base, coef, contiguous)) return 8;
    return vectorizable(4, base, coef, contiguous) ? 4 : 1;
  };
  A.vec = width(L.base_a, &TcRange::ca, A.col_major ? L.rm : L.rk);
  B.vec = width(L.base_b, &TcRange::cb, B.col_major ? L.rk : L.rn);
  const std::string k_a = digits_sum(L.reduces, "kn", [](const TcRange& r) { return r.ca; });
  const std::string k_b = digits_sum(L.reduces, "kn", [](const TcRange& r) { return r.cb; });
  A.origin = "oa + " + k_a, B.origin = "ob + " + k_b;
  return ops;
}

// the subgroup's rows of A's tile and columns of B's: its LOCAL digits at their place in the row (column) index
// (row index = (mine digits) * inner + (upcast digits) * tm + t: the mine digits are sg's digits over all locals)
std::string local_start(const TcLayout& L, const std::vector<TcRange>& mine, int64_t inner) {
  std::string out;
  int64_t stride = 1;
  for (size_t i = L.locals.size(); i-- > 0;) {
    const TcRange& r = L.locals[i];
    const bool is_mine = std::any_of(mine.begin(), mine.end(), [&](const TcRange& m) { return m.id == r.id; });
    if (is_mine) {
      int64_t place = inner;
      bool after = false;
      for (auto& m : mine) {
        if (after) place *= m.size;
        if (m.id == r.id) after = true;
      }
      std::string digit = stride == 1 ? "sg" : "(sg / " + std::to_string(stride) + "u)";
      digit = "(" + digit + " % " + std::to_string(r.size) + "u)";
      out += (out.empty() ? "" : " + ") + std::to_string(place) + "u * " + digit;
    }
    stride *= r.size;
  }
  return out.empty() ? "0u" : out;
}

// the output offset of upcast index `idx` over ranges `rs` (the last the fastest): its digits times their steps in C
int64_t upcast_offset(const std::vector<TcRange>& rs, int64_t idx) {
  int64_t off = 0;
  for (size_t k = rs.size(); k-- > 0;) {
    off += (idx % rs[k].size) * rs[k].cc;
    idx /= rs[k].size;
  }
  return off;
}

// each accumulator (i, j) of the subgroup stored at its upcast digits' place in the output (converted to its dtype)
void store_accumulators(std::ostringstream& o, const TcLayout& L, int64_t fm, int64_t fn, const std::string& out_t) {
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  const bool c_col = L.rn.cc != 1;
  const int64_t c_stride = c_col ? L.rn.cc : L.rm.cc;
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j) {
      const std::string a = "acc" + std::to_string(i) + "_" + std::to_string(j);
      const std::string v = L.dtype_out == L.dtype_acc ? a : out_t + "(" + a + ")";
      o << "  coopMatStoreNV(" << v << ", c, oc + " << u(upcast_offset(L.upcast_m, i) + upcast_offset(L.upcast_n, j)) << ", " << u(c_stride) << ", "
        << (c_col ? "true" : "false") << ");\n";
    }
}

// GLSL's type of a cooperative matrix of `t` at `scope` ("gl_ScopeSubgroup", "gl_ScopeWorkgroup")
std::string coopmat_type(DType t, const char* scope, int64_t rows, int64_t cols) {
  return "fcoopmatNV<" + std::to_string(t->bitsize) + ", " + scope + ", " + std::to_string(rows) + "u, " + std::to_string(cols) + "u>";
}

// a tensor-core shader's first lines: the KHR rewrite's marker line (vulkan.h kKhrCoopmatMarker), the version and
// extensions, what the kernel is, its work-group size and the output's binding (restrict: read-only loads are cached
// in L1 on NVIDIA unless A and B are one buffer, which `restrict` returns for their bindings)
std::string tc_shader_head(std::ostringstream& o, const ProgramSpec& spec, const TcLayout& L, int64_t lanes) {
  const bool bf16 = L.dtype_in == dtypes::bfloat16;
  if (L.khr) o << "// spirv: SPV_KHR_cooperative_matrix" << (bf16 ? " bf16" : "") << "\n";
  o << "#version 450\n#extension GL_NV_cooperative_matrix : require\n#extension GL_KHR_memory_scope_semantics : require\n"
       "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n#extension GL_EXT_shader_16bit_storage : require\n";
  if (bf16) o << "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n";
  o << "// " << spec.lowered->src.back()->as<std::string>() << "\n";
  o << "layout(local_size_x = " << lanes << ") in;\n";
  o << "layout(std430, set = 0, binding = " << L.slot_c << ") restrict writeonly buffer buf_c { " << glsl_type(L.dtype_out) << " c[]; };\n";
  return L.slot_a != L.slot_b ? "restrict " : "";
}

// A tensor-core kernel whose work-group tile is one workgroup-scope matrix (TcLayout::workgroup_scope): per K block
// the A and B tiles loaded straight from the buffers and one multiply-add; the compiler stages the loads through
// shared memory and splits the matrices among the work group's lanes.
std::string render_glsl_tensor_core_workgroup(const ProgramSpec& spec, const TcLayout& L) {
  const int64_t lanes = L.subgroups() * L.threads, bk = L.staged_k();
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  const char* wg = "gl_ScopeWorkgroup";
  const std::string acc_t = coopmat_type(L.dtype_acc, wg, L.tile_m(), L.tile_n()), out_t = coopmat_type(L.dtype_out, wg, L.tile_m(), L.tile_n());
  const std::string fa_t = coopmat_type(L.dtype_in, wg, L.tile_m(), bk), fb_t = coopmat_type(L.dtype_in, wg, bk, L.tile_n());
  std::ostringstream o;
  const std::string restrict = tc_shader_head(o, spec, L, lanes);
  o << "layout(std430, set = 0, binding = " << L.slot_a << ") " << restrict << "readonly buffer buf_a { " << glsl_type(L.dtype_in) << " a[]; };\n";
  if (L.slot_b != L.slot_a)
    o << "layout(std430, set = 0, binding = " << L.slot_b << ") " << restrict << "readonly buffer buf_b { " << glsl_type(L.dtype_in) << " b[]; };\n";
  const std::string b = L.slot_b != L.slot_a ? "b" : "a";
  auto coef = [](int64_t TcRange::*c) { return [c](const TcRange& r) { return r.*c; }; };
  o << "void main() {\n  const uint wg = gl_WorkGroupID.x;\n";
  o << "  // the tile's first element in A, B and the output\n";
  o << "  const uint oa = " << L.base_a << "u + " << digits_sum(L.globals, "wg", coef(&TcRange::ca)) << ";\n";
  o << "  const uint ob = " << L.base_b << "u + " << digits_sum(L.globals, "wg", coef(&TcRange::cb)) << ";\n";
  o << "  const uint oc = " << L.base_c << "u + " << digits_sum(L.globals, "wg", coef(&TcRange::cc)) << ";\n";
  o << "  " << acc_t << " acc = " << acc_t << "(0.0);\n";
  // (stage K blocks a trip: the whole K is one run, so trip kn starts stage * kn blocks in)
  const std::string kn = L.stage > 1 ? "(" + u(L.stage) + " * kn)" : "kn";
  o << "  for (uint kn = 0u; kn < " << u(L.k_blocks() / L.stage) << "; ++kn) {\n";
  o << "    " << fa_t << " fa; coopMatLoadNV(fa, a, oa + " << digits_sum(L.reduces, kn, coef(&TcRange::ca)) << ", " << u(L.a_stride) << ", "
    << (L.a_col ? "true" : "false") << ");\n";
  o << "    " << fb_t << " fb; coopMatLoadNV(fb, " << b << ", ob + " << digits_sum(L.reduces, kn, coef(&TcRange::cb)) << ", " << u(L.b_stride)
    << ", " << (L.b_col ? "true" : "false") << ");\n";
  o << "    acc = coopMatMulAddNV(fa, fb, acc);\n  }\n";
  o << "  coopMatStoreNV(" << (L.dtype_out == L.dtype_acc ? std::string("acc") : out_t + "(acc)") << ", c, oc, " << u(L.c_stride) << ", "
    << (L.c_col ? "true" : "false") << ");\n}\n";
  return o.str();
}

// A staged fp32 matmul (TcLayout::simt): every lane multiplies and adds an FM x FN block of outputs. Per fill, the
// work group's A tile (tile_m x staged_k) and B tile (staged_k x tile_n) are loaded from the buffers (coalesced, as
// vec4 where the buffer's contiguous dimension allows) into registers, stored in shared memory k-major, and each lane
// reads its rows and columns from there as vec4: a lane's 4 consecutive upcast rows (columns) sit together, the
// lanes' groups side by side, so a subgroup's reads are broadcasts or consecutive 16-byte words. The next fill's loads
// are issued before this fill's multiply-adds. The fill loop's trip count is written through gl_NumWorkGroups (its
// value, unknown to the device's compiler): NVIDIA's compiler schedules the loop better without a known trip count
// (the H100: 37.9 against 35.0 TFLOP/s for the same 4096 matmul shader, README).
namespace staged {

// a digit of a tile's element index: its size, its step in the buffer and in the shared tile (elements)
struct Digit {
  int64_t size = 1, g = 0, s = 0;
};

// the value of digits (the last the fastest) of flat index `var` times each digit's `coef`, as GLSL
std::string offset(const std::vector<Digit>& ds, const std::string& var, int64_t Digit::*coef) {
  TileDim t;
  for (auto& d : ds) t.digits.emplace_back(d.size, d.*coef);
  return tile_offset(t, var);
}

// a launch index expression (staged_matmul_layout: constants, gidxN / lidxN SPECIALs, + * // %) as GLSL uint; `swap`:
// lidx0 and lidx1 are the y and x components (as glsl_swaps_lanes has the lowered kernels)
std::string launch_expr(const UOpRef& e, bool swap) {
  auto bin = [&](const char* op) { return "(" + launch_expr(e->src[0], swap) + " " + op + " " + launch_expr(e->src[1], swap) + ")"; };
  switch (e->op) {
    case Ops::CONST: return std::to_string(e->const_int()) + "u";
    case Ops::SPECIAL: {
      const std::string& nm = e->as<std::string>();
      const int d = nm.back() - '0';
      if (nm.rfind("gidx", 0) == 0) return std::string("gl_WorkGroupID.") + "xyz"[d];
      return std::string("gl_LocalInvocationID.") + (swap && d < 2 ? "yx"[d] : "xyz"[d]);
    }
    case Ops::ADD: return bin("+");
    case Ops::MUL: return bin("*");
    case Ops::FLOORDIV:
    case Ops::CDIV: return bin("/");
    case Ops::FLOORMOD:
    case Ops::CMOD: return bin("%");
    default: throw Error("staged matmul: a launch index uses " + std::string(op_name(e->op)));
  }
}

// the place of each range in a mixed-radix number over `rs` (the last the fastest)
std::vector<int64_t> places(const std::vector<TcRange>& rs) {
  std::vector<int64_t> p(rs.size(), 1);
  for (size_t i = rs.size(); i-- > 1;) p[i - 1] = p[i] * rs[i].size;
  return p;
}

// One operand's tile: its digits (rows or columns of the output side, then k), the lane's slot in it, the vector
// width of its reads from shared memory (4 when its upcasts end in a multiple of 4)
struct Side {
  std::string name;                     // "a" / "b"
  std::vector<TcRange> locals, upcasts;  // its LOCAL and UPCAST ranges
  int64_t TcRange::*coef = nullptr;      // its index coefficient (ca / cb)
  int64_t lanes_side = 1, f = 1, w = 1;  // lanes along it (LM / LN), upcasts a lane (FM / FN), read width
  int64_t slots() const { return lanes_side * f; }  // elements of one k row of the shared tile
  std::vector<Digit> digits;            // the tile's digits in the buffer's order (largest step first)
  int vec = 1;                          // elements per global load
};

Side make_side(const TcLayout& L, bool is_a) {
  Side x;
  x.name = is_a ? "a" : "b";
  x.coef = is_a ? &TcRange::ca : &TcRange::cb;
  for (auto& l : L.locals)
    if ((is_a ? l.cb : l.ca) == 0) x.locals.push_back(l);
  x.upcasts = is_a ? L.upcast_m : L.upcast_n;
  for (auto& l : x.locals) x.lanes_side *= l.size;
  for (auto& u : x.upcasts) x.f *= u.size;
  x.w = !x.upcasts.empty() && x.upcasts.back().size % 4 == 0 ? 4 : 1;
  // shared position of an element: k * slots + ((i / w) * lanes_side + l) * w + i % w, i its upcast index, l its lane
  // index along the side, k its depth in the fill
  const int64_t S = x.slots();
  std::vector<Digit> ds;
  const auto lp = places(x.locals);
  for (size_t i = 0; i < x.locals.size(); ++i) ds.push_back({x.locals[i].size, x.locals[i].*x.coef, lp[i] * x.w});
  std::vector<TcRange> hi = x.upcasts;
  if (x.w > 1) hi.back().size /= x.w;
  const auto up = places(hi);
  for (size_t i = 0; i < hi.size(); ++i)
    ds.push_back({hi[i].size, hi[i].*x.coef * (i + 1 == hi.size() ? x.w : 1), up[i] * x.lanes_side * x.w});
  if (x.w > 1) ds.push_back({x.w, x.upcasts.back().*x.coef, 1});
  // k: the fill's K blocks (one reduce range), then the block's UNROLL digits
  const auto kp = places(L.unrolls);
  if (L.stage > 1) ds.push_back({L.stage, L.reduces.at(0).*x.coef, L.block_k() * S});
  for (size_t i = 0; i < L.unrolls.size(); ++i) ds.push_back({L.unrolls[i].size, L.unrolls[i].*x.coef, kp[i] * S});
  std::erase_if(ds, [](const Digit& d) { return d.size == 1; });
  if (ds.empty()) ds.push_back({1, 0, 0});  // a tile of one element
  std::stable_sort(ds.begin(), ds.end(), [](const Digit& p, const Digit& q) { return p.g > q.g; });
  x.digits = ds;
  return x;
}

}  // namespace staged

std::string render_glsl_staged_matmul(const ProgramSpec& spec, const TcLayout& L) {
  using staged::Digit;
  const int64_t lanes = L.subgroups();
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  staged::Side A = staged::make_side(L, true), B = staged::make_side(L, false);
  // global loads of 4 elements where the contiguous digit holds whole vectors and every other step, the start and the
  // work group's and K blocks' steps are multiples of 4
  for (staged::Side* x : {&A, &B}) {
    const int64_t base = x == &A ? L.base_a : L.base_b;
    bool ok = !x->digits.empty() && x->digits.back().g == 1 && x->digits.back().size % 4 == 0 && base % 4 == 0;
    for (size_t i = 0; ok && i + 1 < x->digits.size(); ++i) ok = x->digits[i].g % 4 == 0;
    for (auto* v : {&L.globals, &L.reduces})
      for (auto& r : *v) ok = ok && r.*(x->coef) % 4 == 0;
    x->vec = ok ? 4 : 1;
  }
  if (L.slot_b == L.slot_a) A.vec = B.vec = std::min(A.vec, B.vec);  // one buffer, one declaration: one load width
  const int64_t FM = A.f, FN = B.f;
  std::ostringstream o;
  o << "#version 450\n// " << spec.lowered->src.back()->as<std::string>() << "\n";
  // the lowered kernel's launch (its lidx1 the x component where glsl_swaps_lanes says so)
  const std::array<int64_t, 3> ls = spec.local_size.value_or(std::array<int64_t, 3>{lanes, 1, 1});
  const bool swap = glsl_swaps_lanes(spec);
  if (ls[0] * ls[1] * ls[2] != lanes) throw Error("kernel " + spec.name + ": the staged matmul's launch has " + std::to_string(ls[0] * ls[1] * ls[2]) + " lanes, its layout " + std::to_string(lanes));
  o << "layout(local_size_x = " << (swap ? ls[1] : ls[0]) << ", local_size_y = " << (swap ? ls[0] : ls[1]) << ", local_size_z = " << ls[2] << ") in;\n";
  // the output's stores: vec4 where a lane's 4 consecutive columns are contiguous and every other step a multiple of 4
  bool cvec = B.w == 4 && L.upcast_n.back().cc == 1 && L.base_c % 4 == 0;
  for (auto* v : {&L.globals, &L.locals, &L.upcast_m})
    for (auto& r : *v) cvec = cvec && r.cc % 4 == 0;
  for (size_t i = 0; i + 1 < L.upcast_n.size(); ++i) cvec = cvec && L.upcast_n[i].cc % 4 == 0;
  o << "layout(std430, set = 0, binding = " << L.slot_c << ") restrict writeonly buffer buf_c { " << (cvec ? "vec4" : "float") << " c[]; };\n";
  const std::string restrict = L.slot_a != L.slot_b ? "restrict " : "";
  o << "layout(std430, set = 0, binding = " << L.slot_a << ") " << restrict << "readonly buffer buf_a { " << (A.vec == 4 ? "vec4" : "float")
    << " a[]; };\n";
  if (L.slot_b != L.slot_a)
    o << "layout(std430, set = 0, binding = " << L.slot_b << ") " << restrict << "readonly buffer buf_b { " << (B.vec == 4 ? "vec4" : "float")
      << " b[]; };\n";
  const std::string bname = L.slot_b != L.slot_a ? "b" : "a";
  for (const staged::Side* x : {&A, &B})
    o << "shared " << (x->w == 4 ? "vec4" : "float") << " s" << x->name << "[" << L.staged_k() * x->slots() / x->w << "];\n";
  o << "void main() {\n  const uint lane = gl_LocalInvocationIndex;  // (the tiles' loads: any order of the lanes)\n";
  // each GLOBAL and LOCAL range's value, as the launch gives it
  for (size_t i = 0; i < L.globals.size(); ++i) o << "  const uint g" << i << " = " << staged::launch_expr(L.global_idx.at(i), swap) << ";\n";
  for (size_t i = 0; i < L.locals.size(); ++i) o << "  const uint l" << i << " = " << staged::launch_expr(L.local_idx.at(i), swap) << ";\n";
  // sum of coefficient x value over ranges named `prefix`N
  auto ranges_sum = [&](const std::vector<TcRange>& rs, const char* prefix, auto coef) {
    std::string e;
    for (size_t i = 0; i < rs.size(); ++i)
      if (const int64_t c = coef(rs[i])) e += (e.empty() ? "" : " + ") + (c == 1 ? "" : u(c) + " * ") + prefix + std::to_string(i);
    return e.empty() ? std::string("0u") : e;
  };
  auto coef = [](int64_t TcRange::*c) { return [c](const TcRange& r) { return r.*c; }; };
  o << "  // the work group's first element of A, B and the output, the lane's first output\n";
  o << "  const uint oa = " << L.base_a << "u + " << ranges_sum(L.globals, "g", coef(&TcRange::ca)) << ";\n";
  o << "  const uint ob = " << L.base_b << "u + " << ranges_sum(L.globals, "g", coef(&TcRange::cb)) << ";\n";
  o << "  const uint oc = " << L.base_c << "u + " << ranges_sum(L.globals, "g", coef(&TcRange::cc)) << " + "
    << ranges_sum(L.locals, "l", coef(&TcRange::cc)) << ";\n";
  // the lane's index along each side: its LOCAL ranges of that side as one number (the last the fastest), each range's
  // place times its value lN (N its position among all the LOCAL ranges)
  for (const staged::Side* x : {&A, &B}) {
    const auto mine = staged::places(x->locals);
    auto place = [&](const TcRange& r) -> int64_t {
      for (size_t j = 0; j < x->locals.size(); ++j)
        if (x->locals[j].id == r.id) return mine[j];
      return 0;
    };
    o << "  const uint l" << x->name << " = " << ranges_sum(L.locals, "l", place) << ";\n";
  }
  // loads: unit q = lane + lanes * i of the tile, the last digit counted in vectors
  auto units = [&](const staged::Side& x) { return L.staged_k() * x.slots() / x.vec; };
  auto regs = [&](const staged::Side& x) { return (units(x) + lanes - 1) / lanes; };
  auto unit_digits = [&](const staged::Side& x) {
    std::vector<Digit> d = x.digits;
    if (x.vec > 1) d.back().size /= x.vec, d.back().g *= x.vec, d.back().s *= x.vec;
    if (!d.empty() && d.back().size == 1) d.pop_back();
    return d;
  };
  auto fill_origin = [&](const staged::Side& x, const std::string& kb) {
    if (L.stage > 1) return "(" + kb + ") * " + u(L.stage * L.reduces.at(0).*(x.coef));
    return digits_sum(L.reduces, "(" + kb + ")", [&](const TcRange& r) { return r.*(x.coef); });
  };
  auto load = [&](const staged::Side& x, const std::string& kb, const std::string& indent) {
    std::ostringstream s;
    const std::vector<Digit> d = unit_digits(x);
    const std::string buf = x.name == "a" ? "a" : bname;
    for (int64_t i = 0; i < regs(x); ++i) {
      const std::string q = "(lane + " + u(lanes * i) + ")";
      const std::string at = "o" + x.name + " + " + fill_origin(x, kb) + " + " + staged::offset(d, q, &Digit::g);
      s << indent << (units(x) % lanes && (i + 1) * lanes > units(x) ? "if (" + q + " < " + u(units(x)) + ") " : "") << "r" << x.name << i << " = "
        << buf << "[" << (x.vec == 4 ? "(" + at + ") >> 2u" : at) << "];\n";
    }
    return s.str();
  };
  auto store = [&](const staged::Side& x, const std::string& indent) {
    std::ostringstream s;
    const std::vector<Digit> d = unit_digits(x);
    const int64_t last_s = x.digits.back().s;
    bool whole = x.vec == 4 && x.w == 4 && last_s == 1;
    for (const Digit& e : d) whole = whole && e.s % 4 == 0;  // (the vector's own digit steps 4 x last_s)
    for (int64_t i = 0; i < regs(x); ++i) {
      const std::string q = "(lane + " + u(lanes * i) + ")";
      const std::string guard = units(x) % lanes && (i + 1) * lanes > units(x) ? "if (" + q + " < " + u(units(x)) + ") " : "";
      const std::string at = staged::offset(d, q, &Digit::s);
      if (whole) {
        s << indent << guard << "s" << x.name << "[(" << at << ") >> 2u] = r" << x.name << i << ";\n";
        continue;
      }
      s << indent << guard << "{\n" << indent << "  const uint p = " << at << ";\n";
      for (int e = 0; e < x.vec; ++e) {
        const std::string pe = e == 0 ? "p" : "p + " + u(e * last_s);
        const std::string v = "r" + x.name + std::to_string(i) + (x.vec == 4 ? std::string(".") + "xyzw"[e] : "");
        s << indent << "  s" << x.name << (x.w == 4 ? "[(" + pe + ") >> 2u][(" + pe + ") & 3u]" : "[" + pe + "]") << " = " << v << ";\n";
      }
      s << indent << "}\n";
    }
    return s.str();
  };
  for (const staged::Side* x : {&A, &B})
    for (int64_t i = 0; i < regs(*x); ++i) o << "  " << (x->vec == 4 ? "vec4" : "float") << " r" << x->name << i << ";\n";
  o << load(A, "0u", "  ") << load(B, "0u", "  ");
  const int64_t FNv = FN / B.w;
  for (int64_t i = 0; i < FM; ++i)
    for (int64_t j = 0; j < FNv; ++j) o << "  " << (B.w == 4 ? "vec4" : "float") << " acc" << i << "_" << j << " = " << (B.w == 4 ? "vec4(0.0)" : "0.0") << ";\n";
  const int64_t fills = L.k_blocks() / L.stage;
  o << "  // " << fills << " fills (the trip count through gl_NumWorkGroups: unknown to the compiler)\n";
  o << "  const uint fills = " << u(fills) << " + (gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z - " << u(L.work_groups()) << ");\n";
  o << "  for (uint kb = 0u; kb < fills; ++kb) {\n";
  o << "    barrier();\n" << store(A, "    ") << store(B, "    ") << "    barrier();\n";
  o << "    if (kb + 1u < fills) {\n" << load(A, "kb + 1u", "      ") << load(B, "kb + 1u", "      ") << "    }\n";
  o << "    for (uint kk = 0u; kk < " << u(L.staged_k()) << "; ++kk) {\n";
  for (const staged::Side* x : {&A, &B}) {
    const int64_t row = x->slots() / x->w, groups = x->f / x->w;
    for (int64_t g = 0; g < groups; ++g)
      o << "      const " << (x->w == 4 ? "vec4" : "float") << " " << x->name << g << " = s" << x->name << "[kk * " << u(row) << " + "
        << (g ? u(g * x->lanes_side) + " + " : "") << "l" << x->name << "];\n";
  }
  for (int64_t i = 0; i < FM; ++i) {
    const std::string ai = A.w == 4 ? "a" + std::to_string(i / 4) + "." + "xyzw"[i % 4] : "a" + std::to_string(i);
    for (int64_t j = 0; j < FNv; ++j)
      o << "      acc" << i << "_" << j << " += " << (B.w == 4 ? "vec4(" + ai + ")" : ai) << " * b" << j << ";\n";
  }
  o << "    }\n  }\n";
  // outputs: (i, j) at the upcast digits' place
  for (int64_t i = 0; i < FM; ++i)
    for (int64_t j = 0; j < FNv; ++j) {
      const std::string acc = "acc" + std::to_string(i) + "_" + std::to_string(j);
      if (B.w == 1) {
        o << "  c[oc + " << u(upcast_offset(L.upcast_m, i) + upcast_offset(L.upcast_n, j)) << "] = " << acc << ";\n";
      } else if (cvec) {
        o << "  c[(oc + " << u(upcast_offset(L.upcast_m, i) + upcast_offset(L.upcast_n, j * 4)) << ") >> 2u] = " << acc << ";\n";
      } else {
        for (int e = 0; e < 4; ++e)
          o << "  c[oc + " << u(upcast_offset(L.upcast_m, i) + upcast_offset(L.upcast_n, j * 4 + e)) << "] = " << acc << "." << "xyzw"[e] << ";\n";
      }
    }
  o << "}\n";
  return o.str();
}

}  // namespace

std::string render_glsl_tensor_core(const ProgramSpec& spec, const TcLayout& L) {
  if (L.simt) return render_glsl_staged_matmul(spec, L);
  if (L.workgroup_scope) return render_glsl_tensor_core_workgroup(spec, L);
  const int64_t S = L.subgroups(), lanes = S * L.threads;
  auto u = [](int64_t v) { return std::to_string(v) + "u"; };
  TcOperands ops = tc_operands(L);
  Operand &A = ops.A, &B = ops.B;

  // (bf16: its bits as 16-bit integers, the matrices declared float16: the SPIR-V rewrite makes them bf16)
  const bool bf16 = L.dtype_in == dtypes::bfloat16;
  if (bf16 && !L.khr) throw Error("kernel " + spec.name + ": bf16 tensor cores are KHR cooperative matrices only");
  const std::string T = glsl_type(L.dtype_in), TV = L.dtype_in == dtypes::float16 ? "f16vec4" : bf16 ? "u16vec4" : "";
  // an operand's element type in global memory and registers; in shared memory the uvec4 ones stay uvec4
  auto elem_t = [&](const Operand& x) { return x.vec == 8 ? std::string("uvec4") : x.vec == 4 ? TV : T; };
  auto shared_t = [&](const Operand& x) { return x.vec == 8 ? std::string("uvec4") : T; };
  auto shift = [](const Operand& x) { return x.vec == 8 ? std::string(" >> 3u") : x.vec == 4 ? std::string(" >> 2u") : std::string(); };
  const char* sg = "gl_ScopeSubgroup";
  const std::string acc_t = coopmat_type(L.dtype_acc, sg, L.tm, L.tn), fa_t = coopmat_type(L.dtype_in, sg, L.tm, L.tk);
  const std::string fb_t = coopmat_type(L.dtype_in, sg, L.tk, L.tn), out_t = coopmat_type(L.dtype_out, sg, L.tm, L.tn);
  std::ostringstream o;
  const std::string restrict = tc_shader_head(o, spec, L, lanes);
  for (Operand* x : {&A, &B}) {
    const std::string nm = x->name + std::to_string(x->vec);
    o << "layout(std430, set = 0, binding = " << x->slot << ") " << restrict << "readonly buffer buf_" << nm << " { " << elem_t(*x) << " " << nm
      << "[]; };\n";
  }
  for (const Operand* x : {&A, &B})
    o << "shared " << shared_t(*x) << " s" << x->name << "[" << (x->col_major ? x->staged_cols() : x->staged_rows()) * x->stride() / x->shared_unit()
      << "];\n";
  o << "void main() {\n";
  o << "  const uint lane = gl_LocalInvocationID.x, sg = lane / " << u(L.threads) << ", wg = gl_WorkGroupID.x;\n";
  o << "  // the tile's first element in A, B and the output (work group), the subgroup's first row and column in the tile\n";
  o << "  const uint oa = " << L.base_a << "u + " << digits_sum(L.globals, "wg", [](const TcRange& r) { return r.ca; }) << ";\n";
  o << "  const uint ob = " << L.base_b << "u + " << digits_sum(L.globals, "wg", [](const TcRange& r) { return r.cb; }) << ";\n";
  o << "  const uint oc = " << L.base_c << "u + " << digits_sum(L.globals, "wg", [](const TcRange& r) { return r.cc; }) << " + "
    << digits_sum(L.locals, "sg", [](const TcRange& r) { return r.cc; }) << ";\n";
  int64_t fm = 1, fn = 1;
  for (auto& r : L.upcast_m) fm *= r.size;
  for (auto& r : L.upcast_n) fn *= r.size;
  o << "  const uint m0 = " << local_start(L, ops.locals_m, fm * L.tm) << ", n0 = " << local_start(L, ops.locals_n, fn * L.tn) << ";\n";

  // each lane's share of a tile: unit q = lane + lanes * i, its (row, col), global index and shared-memory index
  auto unit_pos = [&](const Operand& x, const std::string& q) {  // in the staged tile
    const int64_t along = (x.col_major ? x.staged_rows() : x.staged_cols()) / x.vec;
    std::string inner = "(" + q + " % " + u(along) + ") * " + u(x.vec), outer = "(" + q + " / " + u(along) + ")";
    return x.col_major ? std::make_pair(inner, outer) : std::make_pair(outer, inner);  // (row, col)
  };
  auto regs = [&](const Operand& x) { return (x.units() + lanes - 1) / lanes; };
  // the staged fill `kb`: K blocks kb * stage + d, the block d along the tile's k dimension
  auto global_load = [&](const Operand& x, const std::string& kb, const std::string& indent) {
    std::ostringstream s;
    const std::string nm = x.name + std::to_string(x.vec);
    s << indent << "for (uint i = 0u; i < " << u(regs(x)) << "; ++i) {\n";
    s << indent << "  const uint q = lane + " << u(lanes) << " * i;\n";
    if (x.units() % lanes) s << indent << "  if (q >= " << u(x.units()) << ") break;\n";
    auto [row, col] = unit_pos(x, "q");
    if (x.stage == 1) {
      s << indent << "  const uint kn = " << kb << ", r = " << row << ", c = " << col << ";\n";
    } else {
      const std::string bk = u(x.k_rows ? x.rows.size() : x.cols.size()), staged = x.k_rows ? row : col;
      s << indent << "  const uint ks = " << staged << ", kn = (" << kb << ") * " << u(x.stage) << " + ks / " << bk << ";\n";
      s << indent << "  const uint r = " << (x.k_rows ? "ks % " + bk : row) << ", c = " << (x.k_rows ? col : "ks % " + bk) << ";\n";
    }
    s << indent << "  const uint at = " << x.origin << " + " << tile_offset(x.rows, "r") << " + " << tile_offset(x.cols, "c") << ";\n";
    s << indent << "  r" << x.name << "[i] = " << nm << "[at" << shift(x) << "];\n";
    s << indent << "}\n";
    return s.str();
  };
  auto shared_store = [&](const Operand& x, const std::string& indent) {
    std::ostringstream s;
    s << indent << "for (uint i = 0u; i < " << u(regs(x)) << "; ++i) {\n";
    s << indent << "  const uint q = lane + " << u(lanes) << " * i;\n";
    if (x.units() % lanes) s << indent << "  if (q >= " << u(x.units()) << ") break;\n";
    auto [row, col] = unit_pos(x, "q");
    s << indent << "  const uint r = " << row << ", c = " << col << ", at = " << (x.col_major ? "c * " + u(x.stride()) + " + r" : "r * " + u(x.stride()) + " + c") << ";\n";
    if (x.vec == 8)
      s << indent << "  s" << x.name << "[at >> 3u] = r" << x.name << "[i];\n";
    else if (x.vec == 4)
      for (int e = 0; e < 4; ++e) s << indent << "  s" << x.name << "[at + " << e << "u] = r" << x.name << "[i]." << "xyzw"[e] << ";\n";
    else
      s << indent << "  s" << x.name << "[at] = r" << x.name << "[i];\n";
    s << indent << "}\n";
    return s.str();
  };
  for (const Operand* x : {&A, &B}) o << "  " << elem_t(*x) << " r" << x->name << "[" << regs(*x) << "];\n";
  o << global_load(A, "0u", "  ") << global_load(B, "0u", "  ");
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j) o << "  " << acc_t << " acc" << i << "_" << j << " = " << acc_t << "(0.0);\n";
  const int64_t fills = L.k_blocks() / L.stage;
  o << "  for (uint kb = 0u; kb < " << u(fills) << "; ++kb) {\n";
  o << "    barrier();\n" << shared_store(A, "    ") << shared_store(B, "    ") << "    barrier();\n";
  if (fills > 1) o << "    if (kb + 1u < " << u(fills) << ") {\n" << global_load(A, "kb + 1u", "      ") << global_load(B, "kb + 1u", "      ") << "    }\n";
  o << "    for (uint kk = 0u; kk < " << u(L.staged_k()) << "; kk += " << u(L.tk) << ") {\n";
  // (a uvec4 array counts its start and stride in 8-element units: every fragment starts on one)
  auto in_units = [&](const Operand& x, const std::string& at) { return x.shared_unit() > 1 ? "(" + at + ") >> 3u" : at; };
  for (int64_t i = 0; i < fm; ++i) {
    const std::string r0 = "m0 + " + u(i * L.tm);
    o << "      " << fa_t << " fa" << i << "; coopMatLoadNV(fa" << i << ", sa, "
      << in_units(A, A.col_major ? "kk * " + u(A.stride()) + " + " + r0 : "(" + r0 + ") * " + u(A.stride()) + " + kk") << ", "
      << u(A.stride() / A.shared_unit()) << ", " << (A.col_major ? "true" : "false") << ");\n";
  }
  for (int64_t j = 0; j < fn; ++j) {
    const std::string c0 = "n0 + " + u(j * L.tn);
    o << "      " << fb_t << " fb" << j << "; coopMatLoadNV(fb" << j << ", sb, "
      << in_units(B, B.col_major ? "(" + c0 + ") * " + u(B.stride()) + " + kk" : "kk * " + u(B.stride()) + " + " + c0) << ", "
      << u(B.stride() / B.shared_unit()) << ", " << (B.col_major ? "true" : "false") << ");\n";
  }
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j)
      o << "      acc" << i << "_" << j << " = coopMatMulAddNV(fa" << i << ", fb" << j << ", acc" << i << "_" << j << ");\n";
  o << "    }\n  }\n";
  store_accumulators(o, L, fm, fn, out_t);
  o << "}\n";
  return o.str();
}

namespace {
const GlslLanguage& glsl_language() {
  static const GlslLanguage lang;
  return lang;
}
}  // namespace

std::string render_glsl(const ProgramSpec& spec, SourceLines* lines) { return glsl_language().render(spec, lines); }

void check_glsl_dtypes(const ProgramSpec& spec, const std::vector<std::string>& features, const std::string& device) {
  auto has = [&](const char* f) { return std::find(features.begin(), features.end(), f) != features.end(); };
  for (auto& u : spec.lowered->src) {
    DType dt = u->dtype;
    if (!dt || is_weak(dt)) continue;
    const char* need = nullptr;
    if (dt == dtypes::float16) need = "float16";
    else if (dt == dtypes::float64) need = "float64";
    else if (is_int(dt) && dt->bitsize == 64) need = "int64";
    else if (is_int(dt) && dt->bitsize == 16) need = "int16";
    else if ((is_int(dt) && dt->bitsize == 8) || (is_bool(dt) && u->op == Ops::PARAM)) need = "int8";
    if (need && !has(need))
      throw Error("kernel " + spec.name + " uses " + std::string(dt->name) + ", which " + device + " cannot run (it lacks the " + need + " shader feature)");
  }
}


namespace {
// GLSL compute shaders for the Vulkan devices, tensor cores as GL_NV_cooperative_matrix
class GlslRenderer final : public Renderer {
 public:
  std::string name() const override { return "GLSL"; }
  std::string lang() const override { return "glsl"; }
  // adjacent float accesses as vec4 accesses; on a GPU, the rows a few lanes sum each read by their whole work group
  // (row_reads.h: 65536 lanes are a quarter of what an H200 keeps in flight)
  UOpRef linear_passes(const UOpRef& linear, const OptTarget& target) const override {
    return share_row_reads(vector_accesses(linear, {4}), target.coalesce_row_reads, 65536, target.shared_max);
  }
  // GLSL's sin is only accurate near [-pi, pi] (lavapipe gives +-1.0 for large arguments); lavapipe's exp2 is off by up
  // to 3 ulps where the polynomial's is 1 (its log2 is as close as the polynomial: kept). GLSL has no float64 exp2, log2,
  // sin or pow: those are the reference's float64 polynomials (pow through them)
  Transcendentals decomposed_transcendentals() const override { return {.exp2 = true, .log2 = false, .sin = true, .float64 = true}; }
  void render(ProgramSpec& spec) const override { spec.src = glsl_language().render(spec, &spec.source_lines); }
  void render_tensor_core(ProgramSpec& spec, const TcLayout& layout) const override { spec.src = render_glsl_tensor_core(spec, layout); }
};
}  // namespace

const Renderer& glsl_renderer() {
  static const GlslRenderer r;
  return r;
}

}  // namespace ts
