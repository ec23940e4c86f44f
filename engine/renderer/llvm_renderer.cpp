#include "engine/renderer/llvm_renderer.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <unordered_map>

#include "engine/renderer/c_renderer.h"
#include "engine/codegen/cpu/linear_passes.h"
#include "engine/codegen/linearize.h"
#include "engine/codegen/opt.h"
#include "engine/uop/error.h"

namespace ts {

namespace {

const UOp* resolve(const UOp* u) {
  while (u->op == Ops::AFTER || u->op == Ops::GROUP) u = u->src[0].get();
  return u;
}

// register type (bool is i1) and memory type (bool is i8)
std::string reg_type(DType dt) {
  if (is_bool(dt)) return "i1";
  if (dt == dtypes::float32) return "float";
  if (dt == dtypes::float64) return "double";
  if (dt == dtypes::float16) return "half";
  if (dt == dtypes::bfloat16) return "bfloat";
  if (dt == dtypes::weakint) return "i64";
  if (dt == dtypes::weakfloat) return "float";
  return "i" + std::to_string(dt->bitsize);
}
std::string mem_type(DType dt) { return is_bool(dt) ? "i8" : reg_type(dt); }
std::string fsuffix(DType dt) { return dt == dtypes::float64 ? "f64" : dt == dtypes::float16 ? "f16" : "f32"; }

std::string hex_double(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(b));
  return buf;
}

std::string const_literal(const UOp& c) {
  DType dt = c.dtype;
  if (c.is<Invalid>()) return is_float(dt) ? "0.0" : "0";
  if (is_bool(dt)) return c.const_float() != 0 ? "true" : "false";
  if (is_float(dt)) {
    double v = c.const_float();
    if (dt == dtypes::float32 || dt == dtypes::weakfloat) v = static_cast<double>(static_cast<float>(v));
    if (dt == dtypes::float16) {
      _Float16 h = static_cast<_Float16>(v);
      uint16_t b;
      std::memcpy(&b, &h, 2);
      char buf[16];
      std::snprintf(buf, sizeof buf, "0xH%04X", b);
      return buf;
    }
    return hex_double(v);
  }
  return std::to_string(int_const_value(c));
}

struct Emitter {
  explicit Emitter(const ProgramSpec& s) : spec(s) {}
  const ProgramSpec& spec;
  // float adds, subtractions and multiplies may fuse into an fma, as the C renderer's a*b+c under clang's
  // -ffp-contract=on (the reference's LLVM renderer flags them `contract` too); FP_CONTRACT=0: the unfused IEEE
  // evaluation the interpreter computes
  const std::string contract = codegen_option("FP_CONTRACT", 1) != 0 ? " contract" : "";
  std::ostringstream body;
  std::vector<std::string> allocas;
  std::set<std::string> intrinsics;
  std::unordered_map<const UOp*, std::string> r;
  int tmp = 0;

  std::string fresh(const std::string& base) { return "%" + base + "." + std::to_string(tmp++); }
  const std::string& get(const UOpRef& x) {
    auto it = r.find(resolve(x.get()));
    if (it == r.end()) throw Error("LLVM renderer: operand used before its definition: " + std::string(op_name(x->op)));
    return it->second;
  }
  const UOp* cur = nullptr;           // the UOp being rendered
  std::vector<const UOp*> line_uops;  // which one each body line renders
  void ins(const std::string& s) {
    body << "  " << s << "\n";
    line_uops.push_back(cur);
  }
  void label(const std::string& l) {
    body << l << ":\n";
    line_uops.push_back(cur);
  }
  std::string call_intrinsic(const std::string& name, DType dt, const std::vector<std::string>& args) {
    std::string t = reg_type(dt);
    std::string decl = "declare " + t + " @llvm." + name + "." + fsuffix(dt) + "(";
    std::string call = "call " + t + " @llvm." + name + "." + fsuffix(dt) + "(";
    for (size_t i = 0; i < args.size(); ++i) {
      decl += (i ? ", " : "") + t;
      call += (i ? ", " : "") + t + " " + args[i];
    }
    intrinsics.insert(decl + ")");
    std::string v = fresh("f");
    ins(v + " = " + call + ")");
    return v;
  }
  std::string op2(const std::string& inst, DType dt, const std::string& a, const std::string& b) {
    std::string v = fresh("a");
    ins(v + " = " + inst + " " + reg_type(dt) + " " + a + ", " + b);
    return v;
  }

  // uses of each UOp in the program (its readers), for the float sums and products evaluated as the C renderer does
  std::unordered_map<const UOp*, int> uses;
  // A float ADD or MUL whose operands are the same op, used once, is evaluated left to right over the leaves of that
  // tree, as the C renderer writes it (a+(b+c) as a+b+c, its parentheses stripped) and clang computes it: CPU and
  // CPU:LLVM then sum in one order, and a chain acc+p1+p2+... contracts into a chain of fmas. (A tree deeper than
  // the C renderer inlines, 64 levels, keeps the rest as computed.)
  void leaves_of(const UOp& u, std::vector<const UOp*>& out, int depth) {
    for (auto& x : u.src) {
      const UOp* y = resolve(x.get());
      auto n = uses.find(y);
      if (y->op == u.op && y->dtype == u.dtype && n != uses.end() && n->second == 1 && depth < 64) leaves_of(*y, out, depth + 1);
      else out.push_back(y);
    }
  }
  std::string alu(const UOp& u) {
    if ((u.op == Ops::ADD || u.op == Ops::MUL) && is_float(u.dtype)) {
      std::vector<const UOp*> leaves;
      leaves_of(u, leaves, 0);
      const std::string inst = (u.op == Ops::ADD ? "fadd" : "fmul") + contract;
      std::string acc = r.at(leaves[0]);
      for (size_t k = 1; k < leaves.size(); ++k) acc = op2(inst, u.dtype, acc, r.at(leaves[k]));
      return acc;
    }
    std::vector<std::string> s;
    for (auto& x : u.src) s.push_back(get(x));
    DType dt = u.dtype;
    DType in = u.src[0]->dtype;
    bool fl = is_float(dt);
    switch (u.op) {
      case Ops::ADD: return op2(fl ? "fadd" + contract : "add", dt, s[0], s[1]);
      case Ops::SUB: return op2(fl ? "fsub" + contract : "sub", dt, s[0], s[1]);
      case Ops::MUL: return op2(fl ? "fmul" + contract : "mul", dt, s[0], s[1]);
      case Ops::FDIV: return op2("fdiv", dt, s[0], s[1]);
      case Ops::CDIV: return fl ? op2("fdiv", dt, s[0], s[1]) : int_divmod(u.op, dt, s[0], s[1], u);
      case Ops::CMOD: return fl ? op2("frem", dt, s[0], s[1]) : int_divmod(u.op, dt, s[0], s[1], u);
      case Ops::AND: return op2("and", dt, s[0], s[1]);
      case Ops::OR: return op2("or", dt, s[0], s[1]);
      case Ops::XOR: return op2("xor", dt, s[0], s[1]);
      case Ops::SHL: case Ops::SHR: return shift(u.op, dt, s[0], s[1], u);
      case Ops::NEG: {
        std::string v = fresh("a");
        if (fl) ins(v + " = fneg " + reg_type(dt) + " " + s[0]);
        else ins(v + " = sub " + reg_type(dt) + " 0, " + s[0]);
        return v;
      }
      case Ops::RECIPROCAL: return op2("fdiv", dt, hex_double(1.0), s[0]);
      case Ops::SQRT: return call_intrinsic("sqrt", dt, {s[0]});
      case Ops::EXP2: return call_intrinsic("exp2", dt, {s[0]});
      case Ops::LOG2: return call_intrinsic("log2", dt, {s[0]});
      case Ops::SIN: return call_intrinsic("sin", dt, {s[0]});
      case Ops::TRUNC: return fl ? call_intrinsic("trunc", dt, {s[0]}) : s[0];
      case Ops::POW: return call_intrinsic("pow", dt, {s[0], s[1]});
      case Ops::MULACC: return op2(fl ? "fadd" + contract : "add", dt, op2(fl ? "fmul" + contract : "mul", dt, s[0], s[1]), s[2]);
      case Ops::MAX: {
        std::string c = cmp(Ops::CMPLT, in, s[0], s[1]);
        return select(c, dt, s[1], s[0]);
      }
      case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: return cmp(u.op, in, s[0], s[1]);
      case Ops::WHERE: return select(s[0], dt, s[1], s[2]);
      case Ops::FLOORDIV: case Ops::FLOORMOD: {
        if (fl) {
          std::string fd = call_intrinsic("floor", dt, {op2("fdiv", dt, s[0], s[1])});
          if (u.op == Ops::FLOORDIV) return fd;
          return op2("fsub", dt, s[0], op2("fmul", dt, s[1], fd));
        }
        return int_divmod(u.op, dt, s[0], s[1], u);
      }
      default: throw Error("LLVM renderer: unsupported op " + std::string(op_name(u.op)));
    }
  }
  // integer division and remainder, defined for every divisor (udiv/sdiv by 0 and sdiv MIN/-1 are undefined in
  // LLVM): x/0 = 0, x%0 = 0, MIN/-1 = MIN, MIN%-1 = 0 (the reference's CPU results); floor forms round toward -inf
  std::string int_divmod(Ops op, DType dt, const std::string& a, const std::string& b, const UOp& u) {
    bool uns = is_unsigned(dt), div = op == Ops::CDIV || op == Ops::FLOORDIV;
    std::string t = reg_type(dt);
    const UOp* c = resolve(u.src[1].get());
    bool is_c = c->op == Ops::CONST && !c->is<Invalid>();
    int64_t cv = is_c ? int_const_value(*c) : 0;
    if (is_c && cv == 0) return "0";
    if (is_c && cv == -1 && !uns) return div ? op2("sub", dt, "0", a) : "0";
    std::string sb = b, zero, minus1;
    if (!is_c) {  // a divisor the division cannot trap on
      zero = fresh("a");
      ins(zero + " = icmp eq " + t + " " + b + ", 0");
      std::string bad = zero;
      if (!uns) {
        minus1 = fresh("a");
        ins(minus1 + " = icmp eq " + t + " " + b + ", -1");
        bad = op2("or", dtypes::bool_, zero, minus1);
      }
      sb = select(bad, dt, "1", b);
    }
    std::string res;
    if (uns) {
      res = op2(div ? "udiv" : "urem", dt, a, sb);
    } else {
      std::string q = op2("sdiv", dt, a, sb), rem = op2("srem", dt, a, sb);
      if (op == Ops::CDIV) res = q;
      else if (op == Ops::CMOD) res = rem;
      else {
        std::string nz = fresh("a"), rn = fresh("a"), bn = fresh("a");
        ins(nz + " = icmp ne " + t + " " + rem + ", 0");
        ins(rn + " = icmp slt " + t + " " + rem + ", 0");
        ins(bn + " = icmp slt " + t + " " + sb + ", 0");
        std::string fix = op2("and", dtypes::bool_, nz, op2("xor", dtypes::bool_, rn, bn));
        res = op == Ops::FLOORDIV ? select(fix, dt, op2("sub", dt, q, "1"), q) : select(fix, dt, op2("add", dt, rem, sb), rem);
      }
    }
    if (is_c) return res;
    if (!uns) res = select(minus1, dt, div ? op2("sub", dt, "0", a) : "0", res);
    return select(zero, dt, "0", res);
  }
  // shifts by a count outside [0, bits) (negative counts included; shl/lshr/ashr make poison there): SHL gives 0,
  // SHR the sign fill
  std::string shift(Ops op, DType dt, const std::string& a, const std::string& b, const UOp& u) {
    bool uns = is_unsigned(dt) || is_bool(dt);
    int bits = is_bool(dt) ? 1 : dt->bitsize;
    if (dt == dtypes::weakint) bits = 64;
    std::string inst = op == Ops::SHL ? "shl" : uns ? "lshr" : "ashr", t = reg_type(dt), top = std::to_string(bits - 1);
    const UOp* c = resolve(u.src[1].get());
    if (c->op == Ops::CONST && !c->is<Invalid>()) {
      if (static_cast<uint64_t>(int_const_value(*c)) < static_cast<uint64_t>(bits)) return op2(inst, dt, a, b);
      return op == Ops::SHL || uns ? "0" : op2("ashr", dt, a, top);
    }
    std::string ok = fresh("a");
    ins(ok + " = icmp ult " + t + " " + b + ", " + std::to_string(bits));
    if (op == Ops::SHR && !uns) return op2("ashr", dt, a, select(ok, dt, b, top));
    return select(ok, dt, op2(inst, dt, a, select(ok, dt, b, "0")), "0");
  }
  std::string cmp(Ops op, DType in, const std::string& a, const std::string& b) {
    std::string v = fresh("c");
    std::string pred;
    if (is_float(in)) {
      pred = op == Ops::CMPLT ? "fcmp olt" : op == Ops::CMPNE ? "fcmp une" : "fcmp oeq";
    } else {
      bool uns = is_unsigned(in) || is_bool(in);
      pred = op == Ops::CMPLT ? (uns ? "icmp ult" : "icmp slt") : op == Ops::CMPNE ? "icmp ne" : "icmp eq";
    }
    ins(v + " = " + pred + " " + reg_type(in) + " " + a + ", " + b);
    return v;
  }
  std::string select(const std::string& c, DType dt, const std::string& a, const std::string& b) {
    std::string v = fresh("s");
    std::string t = reg_type(dt);
    ins(v + " = select i1 " + c + ", " + t + " " + a + ", " + t + " " + b);
    return v;
  }
  // float -> int as x86-64 converts (the reference's CPU results; fptosi/fptoui make poison out of range):
  // int32/int64 take the truncated value when it fits, else INT_MIN; 8/16-bit ints go through int32 and keep the
  // low bits; uint32/uint64 take the value when it fits, else all ones
  std::string float_to_int(DType from, DType to, const std::string& x0) {
    if (from->bitsize < 32) return float_to_int(dtypes::float32, to, cast(from, dtypes::float32, x0));
    std::string x = x0, ft = reg_type(from);
    auto guarded = [&](const char* lo_pred, double lo, double hi, DType dt, const std::string& fallback) {
      std::string a = fresh("c"), b = fresh("c"), v = fresh("cast");
      ins(a + " = fcmp " + lo_pred + " " + ft + " " + x + ", " + hex_double(lo));
      ins(b + " = fcmp olt " + ft + " " + x + ", " + hex_double(hi));
      ins(v + " = " + (is_unsigned(dt) ? "fptoui " : "fptosi ") + ft + " " + x + " to " + reg_type(dt));
      return select(op2("and", dtypes::bool_, a, b), dt, v, fallback);
    };
    if (to->bitsize == 64 && !is_unsigned(to)) return guarded("oge", -9223372036854775808.0, 9223372036854775808.0, to, "-9223372036854775808");
    if (to->bitsize == 64) return guarded("ogt", -1.0, 18446744073709551616.0, to, "-1");
    if (to == dtypes::uint32) return guarded("ogt", -1.0, 4294967296.0, to, "-1");
    std::string i32 = guarded("oge", -2147483648.0, 2147483648.0, dtypes::int32, "-2147483648");
    if (to == dtypes::int32) return i32;
    std::string v = fresh("cast");
    ins(v + " = trunc i32 " + i32 + " to " + reg_type(to));
    return v;
  }
  std::string cast(DType from, DType to, const std::string& x) {
    std::string ft = reg_type(from), tt = reg_type(to);
    if (ft == tt && is_float(from) == is_float(to)) return x;
    std::string v = fresh("cast");
    if (is_bool(to)) {
      if (is_float(from)) ins(v + " = fcmp une " + ft + " " + x + ", 0.0");
      else ins(v + " = icmp ne " + ft + " " + x + ", 0");
    } else if (is_float(to) && is_float(from)) {
      // double -> half rounds through float (as the C renderer; x86 has no direct conversion)
      if (from == dtypes::float64 && to == dtypes::float16) return cast(dtypes::float32, to, cast(from, dtypes::float32, x));
      ins(v + " = " + (from->bitsize < to->bitsize ? "fpext " : "fptrunc ") + ft + " " + x + " to " + tt);
    } else if (is_float(to)) {
      ins(v + " = " + (is_unsigned(from) || is_bool(from) ? "uitofp " : "sitofp ") + ft + " " + x + " to " + tt);
    } else if (is_float(from)) {
      return float_to_int(from, to, x);
    } else {
      int fb = is_bool(from) ? 1 : from->bitsize, tb = to->bitsize;
      if (fb == tb) return x;
      if (fb > tb) ins(v + " = trunc " + ft + " " + x + " to " + tt);
      else ins(v + " = " + (is_unsigned(from) || is_bool(from) ? "zext " : "sext ") + ft + " " + x + " to " + tt);
    }
    return v;
  }
};

// INDEX, LOAD and STORE: addresses (a gated access clamps its index), loads and stores of buffers and accumulators
void emit_memory(Emitter& e, const UOp& u, int& store_no) {
  switch (u.op) {
    case Ops::INDEX: {
      std::string idx = e.get(u.src[1]);
      std::string it = reg_type(u.src[1]->dtype);
      if (u.src.size() > 2) {  // a gated access never leaves the buffer: clamp the index to 0 when the gate is off
        std::string safe = e.fresh("i");
        e.ins(safe + " = select i1 " + e.get(u.src[2]) + ", " + it + " " + idx + ", " + it + " 0");
        idx = safe;
      }
      std::string v = e.fresh("p");
      e.ins(v + " = getelementptr inbounds " + mem_type(u.src[0]->dtype) + ", ptr " + e.get(u.src[0]) + ", " + it + " " + idx);
      e.r[&u] = v;
      break;
    }
    case Ops::LOAD: {
      const UOp* src = resolve(u.src[0].get());
      std::string v = e.fresh("val");
      if (src->op == Ops::DEFINE_ACC || src->op == Ops::GEP) {  // an accumulator (or a vector accumulator's lane)
        e.ins(v + " = load " + reg_type(u.dtype) + ", ptr " + e.r.at(src));
        e.r[&u] = v;
        break;
      }
      e.ins(v + " = load " + mem_type(u.dtype) + ", ptr " + e.r.at(src));
      if (is_bool(u.dtype)) {
        std::string b = e.fresh("val");
        e.ins(b + " = icmp ne i8 " + v + ", 0");
        v = b;
      }
      if (src->src.size() > 2) v = e.select(e.get(src->src[2]), u.dtype, v, is_float(u.dtype) ? "0.0" : is_bool(u.dtype) ? "false" : "0");
      e.r[&u] = v;
      break;
    }
    case Ops::STORE: {
      const UOp* dst = resolve(u.src[0].get());
      DType dt = u.src[1]->dtype;
      std::string v = e.get(u.src[1]);
      if (dst->op == Ops::DEFINE_ACC || dst->op == Ops::GEP) {
        e.ins("store " + reg_type(dt) + " " + v + ", ptr " + e.r.at(dst));
        break;
      }
      if (is_bool(dt)) {
        std::string z = e.fresh("b");
        e.ins(z + " = zext i1 " + v + " to i8");
        v = z;
      }
      std::string st = "store " + mem_type(dt) + " " + v + ", ptr " + e.r.at(dst);
      if (dst->src.size() > 2) {
        std::string l = "st" + std::to_string(store_no++);
        e.ins("br i1 " + e.get(dst->src[2]) + ", label %" + l + ".then, label %" + l + ".end");
        e.label(l + ".then");
        e.ins(st);
        e.ins("br label %" + l + ".end");
        e.label(l + ".end");
      } else {
        e.ins(st);
      }
      break;
    }
    default: break;
  }
}

// ---- the CPU passes' UOps (engine/codegen/cpu/linear_passes.h): vectors of floats --------------------------------

std::string vec_t(int w, DType dt = dtypes::float32) { return "<" + std::to_string(w) + " x " + reg_type(dt) + ">"; }

// a scalar in every lane of a w-wide vector
std::string splat(Emitter& e, int w, DType dt, const std::string& x) {
  const std::string v = vec_t(w, dt), one = e.fresh("sp"), all = e.fresh("sp");
  e.ins(one + " = insertelement " + v + " poison, " + reg_type(dt) + " " + x + ", i32 0");
  e.ins(all + " = shufflevector " + v + " " + one + ", " + v + " poison, <" + std::to_string(w) + " x i32> zeroinitializer");
  return all;
}

// values (of one dtype) as the lanes of one vector
std::string gather(Emitter& e, DType dt, const std::vector<std::string>& lanes) {
  const std::string v = vec_t(static_cast<int>(lanes.size()), dt);
  std::string cur = "poison";
  for (size_t k = 0; k < lanes.size(); ++k) {
    const std::string nx = e.fresh("vec");
    e.ins(nx + " = insertelement " + v + " " + cur + ", " + reg_type(dt) + " " + lanes[k] + ", i32 " + std::to_string(k));
    cur = nx;
  }
  return cur;
}

// a VLOAD's or VSTORE's lane 0 address: its buffer at its index less its lane number (a constant index: its value)
std::string vec_addr(Emitter& e, const UOp& u) {
  const Shape& a = u.as<Shape>();
  const bool indexed = u.src.size() > (u.op == Ops::VSTORE ? static_cast<size_t>(a[0]) + 1 : 1);
  std::string it = "i32", idx = std::to_string(a[2]);
  if (indexed) {
    idx = e.get(u.src[1]);
    it = reg_type(u.src[1]->dtype);
    if (a[1]) idx = e.op2("sub", u.src[1]->dtype, idx, std::to_string(a[1]));
  }
  const std::string p = e.fresh("p");
  e.ins(p + " = getelementptr inbounds float, ptr " + e.get(u.src[0]) + ", " + it + " " + idx);
  return p;
}

// A TRANSPOSED_ACC: the 16 rows' 4-wide loads as four 16-wide columns (column j: element j of rows 0..15), each
// column's term computed 16 rows at a time from the scalar term's expression (a lane leaf: the column; a common
// leaf: the scalar in every lane; a per-row leaf: its 16 rows' values), then acc + t0 + t1 + t2 + t3 (or the running
// max) lane by lane: every lane computes what the scalar code computes, in the same order
void emit_transposed(Emitter& e, const UOp& u) {
  const TransposedAccView ta = transposed_acc_view(u);
  const DType f32 = dtypes::float32;
  // the 16 rows side by side (64 floats), then every fourth element
  std::vector<std::string> level;
  for (const UOp* r : ta.rows) level.push_back(e.r.at(r));
  for (int w = 4; level.size() > 1; w *= 2) {
    std::vector<std::string> next;
    for (size_t k = 0; k < level.size(); k += 2) {
      std::string idx;
      for (int i = 0; i < 2 * w; ++i) idx += (i ? ", i32 " : "i32 ") + std::to_string(i);
      const std::string v = e.fresh("trows");
      e.ins(v + " = shufflevector " + vec_t(w) + " " + level[k] + ", " + vec_t(w) + " " + level[k + 1] + ", <" + std::to_string(2 * w) + " x i32> <" + idx + ">");
      next.push_back(v);
    }
    level = std::move(next);
  }
  std::string col[4];
  for (int j = 0; j < 4; ++j) {
    std::string idx;
    for (int i = 0; i < 16; ++i) idx += (i ? ", i32 " : "i32 ") + std::to_string(4 * i + j);
    col[j] = e.fresh("tcol");
    e.ins(col[j] + " = shufflevector " + vec_t(64) + " " + level[0] + ", " + vec_t(64) + " poison, <16 x i32> <" + idx + ">");
  }
  enum class Leaf { lane, common, per_row };
  std::unordered_map<const UOp*, Leaf> leaves;
  std::unordered_map<const UOp*, std::string> leaf_vec;  // common and per-row leaves, computed once
  for (const UOp* x : ta.lanes) leaves[x] = Leaf::lane;
  for (const UOp* x : ta.commons) leaves[x] = Leaf::common, leaf_vec[x] = splat(e, 16, x->dtype, e.r.at(resolve(x)));
  for (auto& vals : ta.per_rows) {
    leaves[vals[0]] = Leaf::per_row;
    const UOp* g = vals[0]->op == Ops::GEP && vals[0]->src[0]->op == Ops::VLOAD ? vals[0]->src[0].get() : nullptr;
    bool whole = g && g->as<Shape>()[0] == 16;
    for (size_t k = 0; k < 16 && whole; ++k) whole = vals[k]->op == Ops::GEP && vals[k]->src[0].get() == g && vals[k]->as<int64_t>() == static_cast<int64_t>(k);
    std::vector<std::string> lanes;
    if (!whole)
      for (const UOp* v : vals) lanes.push_back(e.r.at(resolve(v)));
    leaf_vec[vals[0]] = whole ? e.r.at(g) : gather(e, vals[0]->dtype, lanes);
  }
  auto op2 = [&](const std::string& inst, const std::string& t, const std::string& a, const std::string& b) {
    const std::string v = e.fresh("tv");
    e.ins(v + " = " + inst + " " + t + " " + a + ", " + b);
    return v;
  };
  auto sel = [&](const std::string& c, const std::string& t, const std::string& a, const std::string& b) {
    const std::string v = e.fresh("tv");
    e.ins(v + " = select <16 x i1> " + c + ", " + t + " " + a + ", " + t + " " + b);
    return v;
  };
  std::string terms[4];
  for (int j = 0; j < 4; ++j) {
    std::unordered_map<const UOp*, std::string> vr;
    std::function<std::string(const UOp*)> expr = [&](const UOp* n) -> std::string {
      if (auto lf = leaves.find(n); lf != leaves.end()) return lf->second == Leaf::lane ? col[j] : leaf_vec.at(n);
      if (auto v = vr.find(n); v != vr.end()) return v->second;
      if (n->op == Ops::CONST) return vr[n] = splat(e, 16, n->dtype, const_literal(*n));
      std::vector<std::string> a;
      for (auto& x : n->src) a.push_back(expr(resolve(x.get())));
      const DType dt = n->dtype, in = n->src[0]->dtype;
      if (dt != f32 && dt != dtypes::int32 && dt != dtypes::uint32 && !is_bool(dt))
        throw Error("LLVM renderer: a transposed accumulation computes " + std::string(dt->name));
      const std::string t = vec_t(16, dt), ti = vec_t(16, in);
      const bool fl = is_float(dt), fin = is_float(in), uin = is_unsigned(in) || is_bool(in);
      auto cmp = [&](Ops op) {
        const char* pred = fin ? (op == Ops::CMPLT ? "fcmp olt" : op == Ops::CMPNE ? "fcmp une" : "fcmp oeq")
                               : (op == Ops::CMPLT ? (uin ? "icmp ult" : "icmp slt") : op == Ops::CMPNE ? "icmp ne" : "icmp eq");
        return op2(pred, ti, a[0], a[1]);
      };
      std::string v;
      switch (n->op) {
        case Ops::ADD: v = op2(fl ? "fadd" + e.contract : "add", t, a[0], a[1]); break;
        case Ops::SUB: v = op2(fl ? "fsub" + e.contract : "sub", t, a[0], a[1]); break;
        case Ops::MUL: v = op2(fl ? "fmul" + e.contract : "mul", t, a[0], a[1]); break;
        case Ops::FDIV: v = op2("fdiv", t, a[0], a[1]); break;
        case Ops::AND: v = op2("and", t, a[0], a[1]); break;
        case Ops::OR: v = op2("or", t, a[0], a[1]); break;
        case Ops::XOR: v = op2("xor", t, a[0], a[1]); break;
        case Ops::MAX: v = sel(cmp(Ops::CMPLT), t, a[1], a[0]); break;
        case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: v = cmp(n->op); break;
        case Ops::WHERE: v = sel(a[0], t, a[1], a[2]); break;
        case Ops::NEG:
          v = e.fresh("tv");
          e.ins(v + " = " + (fl ? "fneg " + t + " " + a[0] : "sub " + t + " zeroinitializer, " + a[0]));
          break;
        case Ops::RECIPROCAL: v = op2("fdiv", t, splat(e, 16, dt, hex_double(1.0)), a[0]); break;
        case Ops::SHL: case Ops::SHR: v = op2(n->op == Ops::SHL ? "shl" : is_unsigned(dt) ? "lshr" : "ashr", t, a[0], a[1]); break;
        case Ops::BITCAST: v = e.fresh("tv"), e.ins(v + " = bitcast " + ti + " " + a[0] + " to " + t); break;
        case Ops::CAST:
          if (reg_type(in) == reg_type(dt) && fin == fl) {
            v = a[0];
          } else if (fl && !fin) {
            v = e.fresh("tv"), e.ins(v + " = " + (uin ? "uitofp " : "sitofp ") + ti + " " + a[0] + " to " + t);
          } else if (fin && !fl) {  // as the scalar cast: the truncated value where it fits, else INT_MIN (uint32: all ones)
            const bool u32 = dt == dtypes::uint32;
            const std::string lo = op2(u32 ? "fcmp ogt" : "fcmp oge", ti, a[0], splat(e, 16, in, hex_double(u32 ? -1.0 : -2147483648.0)));
            const std::string hi = op2("fcmp olt", ti, a[0], splat(e, 16, in, hex_double(u32 ? 4294967296.0 : 2147483648.0)));
            const std::string c = e.fresh("tv"), ok = op2("and", "<16 x i1>", lo, hi);
            e.ins(c + " = " + (u32 ? "fptoui " : "fptosi ") + ti + " " + a[0] + " to " + t);
            v = sel(ok, t, c, splat(e, 16, dt, u32 ? "-1" : "-2147483648"));
          } else {
            throw Error("LLVM renderer: a transposed accumulation casts " + std::string(in->name) + " to " + std::string(dt->name));
          }
          break;
        default: throw Error("LLVM renderer: a transposed accumulation computes " + std::string(op_name(n->op)));
      }
      return vr[n] = v;
    };
    terms[j] = expr(ta.root);
  }
  const std::string t16 = vec_t(16);
  std::vector<std::string> init;
  for (const UOp* acc : ta.accs) {
    const std::string v = e.fresh("val");
    e.ins(v + " = load float, ptr " + e.r.at(acc));
    init.push_back(v);
  }
  std::string sv = gather(e, f32, init);
  if (ta.max) {  // (as the scalar code: each max a select on a <)
    auto mx = [&](const std::string& a, const std::string& b) { return sel(op2("fcmp olt", t16, a, b), t16, b, a); };
    sv = mx(sv, mx(mx(mx(terms[0], terms[1]), terms[2]), terms[3]));
  } else {
    for (const std::string& x : terms) sv = op2("fadd" + e.contract, t16, sv, x);
  }
  for (size_t i = 0; i < ta.accs.size(); ++i) {
    const std::string v = e.fresh("val");
    e.ins(v + " = extractelement " + t16 + " " + sv + ", i32 " + std::to_string(i));
    e.ins("store float " + v + ", ptr " + e.r.at(ta.accs[i]));
  }
}

void emit_vector(Emitter& e, const UOp& u) {
  switch (u.op) {
    case Ops::BUFFER: {  // a program's own array (the packing passes' panels), on the stack of the thread running it
      const ParamArg& pa = u.as<ParamArg>();
      if (pa.addrspace != AddrSpace::REG) throw Error("LLVM renderer: a BUFFER outside the program's own arrays");
      const std::string nm = "%panel" + std::to_string(pa.slot);
      e.allocas.push_back(nm + " = alloca [" + std::to_string(pa.size) + " x " + mem_type(u.dtype) + "], align 64");
      e.r[&u] = nm;
      break;
    }
    case Ops::VLOAD: {
      const std::string p = vec_addr(e, u), v = e.fresh("val");
      e.ins(v + " = load " + vec_t(static_cast<int>(u.as<Shape>()[0])) + ", ptr " + p + ", align 4");
      e.r[&u] = v;
      break;
    }
    case Ops::VSTORE: {
      const int w = static_cast<int>(u.as<Shape>()[0]);
      std::vector<std::string> lanes;
      for (size_t k = u.src.size() - static_cast<size_t>(w); k < u.src.size(); ++k) lanes.push_back(e.get(u.src[k]));
      const std::string v = gather(e, dtypes::float32, lanes), p = vec_addr(e, u);
      e.ins("store " + vec_t(w) + " " + v + ", ptr " + p + ", align 4");
      break;
    }
    case Ops::GEP: {  // a lane of a VLOAD (a value) or of a DEFINE_VACC (its place, loaded and stored as an accumulator)
      const UOp& src = *u.src[0];
      const std::string k = std::to_string(u.as<int64_t>()), v = e.fresh(src.op == Ops::VLOAD ? "val" : "p");
      if (src.op == Ops::VLOAD)
        e.ins(v + " = extractelement " + vec_t(static_cast<int>(src.as<Shape>()[0])) + " " + e.r.at(&src) + ", i32 " + k);
      else
        e.ins(v + " = getelementptr inbounds [" + std::to_string(src.src.size()) + " x float], ptr " + e.r.at(&src) + ", i32 0, i32 " + k);
      e.r[&u] = v;
      break;
    }
    case Ops::DEFINE_VACC: {  // the accumulators' vector, each lane its own start
      const int w = static_cast<int>(u.src.size());
      const std::string nm = e.fresh("vacc");
      e.allocas.push_back(nm + " = alloca [" + std::to_string(w) + " x float], align 64");
      std::string init;
      for (auto& c : u.src) init += (init.empty() ? "float " : ", float ") + const_literal(*c);
      e.ins("store " + vec_t(w) + " <" + init + ">, ptr " + nm);
      e.r[&u] = nm;
      break;
    }
    case Ops::VACC_UPDATE: {  // vacc = vacc + s1*v1 + s2*v2 + ...
      const UOp& vacc = *u.src[0];
      const int w = static_cast<int>(vacc.src.size());
      const std::string t = vec_t(w);
      std::string cur = e.fresh("val");
      e.ins(cur + " = load " + t + ", ptr " + e.r.at(&vacc));
      for (size_t k = 1; k < u.src.size(); k += 2) {
        const std::string sc = splat(e, w, dtypes::float32, e.get(u.src[k])), m = e.fresh("a"), n = e.fresh("a");
        e.ins(m + " = fmul" + e.contract + " " + t + " " + sc + ", " + e.get(u.src[k + 1]));
        e.ins(n + " = fadd" + e.contract + " " + t + " " + cur + ", " + m);
        cur = n;
      }
      e.ins("store " + t + " " + cur + ", ptr " + e.r.at(&vacc));
      break;
    }
    case Ops::PREFETCH: {  // buf+(t1*c1+...+range*step+constant), a hint that never faults
      const Shape& c = u.as<Shape>();
      std::string off = std::to_string(c.back());
      auto term = [&](const UOpRef& x, int64_t coef) {
        std::string v = e.get(x);
        if (reg_type(x->dtype) != "i64") v = e.cast(x->dtype, dtypes::int64, v);
        off = e.op2("add", dtypes::int64, off, e.op2("mul", dtypes::int64, v, std::to_string(coef)));
      };
      for (size_t k = 2; k < u.src.size(); ++k) term(u.src[k], c[k - 2]);
      term(u.src[1], c[c.size() - 2]);
      const std::string p = e.fresh("p");
      e.ins(p + " = getelementptr float, ptr " + e.get(u.src[0]) + ", i64 " + off);
      e.intrinsics.insert("declare void @llvm.prefetch.p0(ptr, i32, i32, i32)");
      e.ins("call void @llvm.prefetch.p0(ptr " + p + ", i32 0, i32 3, i32 1)");
      break;
    }
    case Ops::TRANSPOSED_ACC: emit_transposed(e, u); break;
    default: throw Error("LLVM renderer: unexpected " + std::string(op_name(u.op)) + " in the program");
  }
}

// the module around the emitted body: the kernel's signature and allocas, the uniform entry that unpacks the buffer
// and Variable arrays, and the intrinsics it declares
std::string llvm_module(const ProgramSpec& spec, Emitter& e, std::vector<const UOp*> params, SourceLines* source_lines) {
  std::sort(params.begin(), params.end(), [](const UOp* a, const UOp* b) { return a->as<ParamArg>().slot < b->as<ParamArg>().slot; });
  const std::string& name = spec.function_name;
  std::ostringstream o, sig, entry, args;
  for (size_t i = 0; i < params.size(); ++i) {
    const UOp* p = params[i];
    const ParamArg& pa = p->as<ParamArg>();
    std::string sep = i ? ", " : "";
    std::string a = "%a" + std::to_string(i);
    if (pa.addrspace == AddrSpace::ALU) {
      std::string t = reg_type(p->dtype);
      sig << sep << t << " " << e.r.at(p);
      if (pa.name == "core_id") {
        entry << "  " << a << " = " << (t == "i32" ? "add i32 %core_id, 0" : "sext i32 %core_id to " + t) << "\n";
      } else {
        entry << "  " << a << ".p = getelementptr i64, ptr %vars, i64 " << (pa.slot - spec.num_buffers) << "\n";
        entry << "  " << a << ".l = load i64, ptr " << a << ".p\n";
        if (t == "i64") entry << "  " << a << " = add i64 " << a << ".l, 0\n";
        else entry << "  " << a << " = trunc i64 " << a << ".l to " << t << "\n";
      }
      args << sep << t << " " << a;
    } else {
      sig << sep << "ptr noalias " << e.r.at(p);
      entry << "  " << a << ".p = getelementptr ptr, ptr %bufs, i64 " << pa.slot << "\n";
      entry << "  " << a << " = load ptr, ptr " << a << ".p\n";
      args << sep << "ptr " << a;
    }
  }
  o << "; " << spec.name << "\n";
  o << "define void @" << name << "(" << sig.str() << ") nounwind {\n";
  o << "entry:\n";
  for (auto& a : e.allocas) o << "  " << a << "\n";
  if (source_lines) *source_lines = source_lines_of(count_lines(o.str()) + 1, e.line_uops);
  o << e.body.str();
  o << "  ret void\n}\n\n";
  o << "define void @" << name << "_entry(ptr %bufs, ptr %vars, i32 %core_id) nounwind {\n";
  o << "entry:\n" << entry.str();
  o << "  call void @" << name << "(" << args.str() << ")\n";
  o << "  ret void\n}\n";
  for (auto& d : e.intrinsics) o << "\n" << d;
  if (!e.intrinsics.empty()) o << "\n";
  return o.str();
}

}  // namespace

std::string render_llvm(const ProgramSpec& spec, SourceLines* source_lines) {
  const UOpRef& lin = spec.lowered;
  if (!lin || lin->op != Ops::LINEAR) throw Error("render_llvm: ProgramSpec.lowered is not a LINEAR");
  Emitter e(spec);
  for (auto& up : lin->src)
    for (auto& x : up->src) e.uses[resolve(x.get())]++;
  std::vector<const UOp*> params;
  int acc_no = 0, store_no = 0;
  for (auto& up : lin->src) {
    const UOp& u = *up;
    e.cur = &u;
    switch (u.op) {
      case Ops::CONST: e.r[&u] = const_literal(u); break;
      case Ops::PARAM: {
        const ParamArg& pa = u.as<ParamArg>();
        e.r[&u] = "%data" + std::to_string(pa.slot) + "_" + (pa.addrspace == AddrSpace::ALU ? "" : std::to_string(pa.size));
        params.push_back(&u);
        break;
      }
      case Ops::RANGE: {
        const RangeArg& ra = u.as<RangeArg>();
        std::string nm = std::string(1, axis_letter(ra.type)) + "idx" + std::to_string(ra.id);
        std::string t = reg_type(u.dtype);
        e.allocas.push_back("%" + nm + ".p = alloca " + t);
        e.ins("store " + t + " 0, ptr %" + nm + ".p");
        e.ins("br label %" + nm + ".cond");
        e.label(nm + ".cond");
        e.ins("%" + nm + ".c = load " + t + ", ptr %" + nm + ".p");
        e.ins("%" + nm + ".cmp = icmp slt " + t + " %" + nm + ".c, " + e.get(u.src[0]));
        e.ins("br i1 %" + nm + ".cmp, label %" + nm + ".body, label %" + nm + ".exit");
        e.label(nm + ".body");
        e.ins("%" + nm + " = load " + t + ", ptr %" + nm + ".p");
        e.r[&u] = "%" + nm;
        break;
      }
      case Ops::END: {
        const UOp* rng = resolve(u.src[1].get());
        std::string nm = e.r.at(rng).substr(1);
        std::string t = reg_type(rng->dtype);
        e.ins("%" + nm + ".n = add " + t + " %" + nm + ", 1");
        e.ins("store " + t + " %" + nm + ".n, ptr %" + nm + ".p");
        e.ins("br label %" + nm + ".cond");
        e.label(nm + ".exit");
        break;
      }
      case Ops::DEFINE_ACC: {
        std::string nm = "%acc" + std::to_string(acc_no++);
        e.allocas.push_back(nm + " = alloca " + reg_type(u.dtype));
        e.ins("store " + reg_type(u.dtype) + " " + e.get(u.src[0]) + ", ptr " + nm);
        e.r[&u] = nm;
        break;
      }
      case Ops::INDEX:
      case Ops::LOAD:
      case Ops::STORE: emit_memory(e, u, store_no); break;
      case Ops::BUFFER: case Ops::GEP: case Ops::VLOAD: case Ops::VSTORE: case Ops::DEFINE_VACC: case Ops::VACC_UPDATE:
      case Ops::PREFETCH: case Ops::TRANSPOSED_ACC:
        emit_vector(e, u);
        break;
      case Ops::CAST: e.r[&u] = e.cast(u.src[0]->dtype, u.dtype, e.get(u.src[0])); break;
      case Ops::BITCAST: {
        std::string v = e.fresh("bc");
        e.ins(v + " = bitcast " + reg_type(u.src[0]->dtype) + " " + e.get(u.src[0]) + " to " + reg_type(u.dtype));
        e.r[&u] = v;
        break;
      }
      default:
        if (!group::alu(u.op)) throw Error("LLVM renderer: unexpected " + std::string(op_name(u.op)) + " in the program");
        e.r[&u] = e.alu(u);
        break;
    }
  }

  return llvm_module(spec, e, std::move(params), source_lines);
}


namespace {
// the reference's LLVMRenderer: textual LLVM IR for the CPU's ORC JIT
class LlvmRenderer final : public Renderer {
 public:
  std::string name() const override { return "LLVM"; }
  std::string lang() const override { return "llvm"; }
  // the CPU's packing passes and schemes, as the C renderer's
  UOpRef lowered_passes(const UOpRef& sink, const OptTarget& target) const override { return cpu_lowered_passes(sink, target); }
  UOpRef linear_passes(const UOpRef& linear, const OptTarget&) const override { return cpu_linear_passes(linear); }
  bool decomposes_transcendentals() const override { return true; }
  void render(ProgramSpec& spec) const override {
    require_cpu_program(spec.lowered, "LLVM", spec.name);
    spec.src = render_llvm(spec, &spec.source_lines);
  }
};
}  // namespace

const Renderer& llvm_renderer() {
  static const LlvmRenderer r;
  return r;
}

}  // namespace ts
