#include "engine/runtime/interp/interpreter.h"

#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "engine/uop/error.h"

namespace ts {

namespace {

// one value: floats in f (float32 values are exactly representable), ints/bools in i, addresses in p
struct Val {
  double f = 0;
  int64_t i = 0;
  char* p = nullptr;
  bool gate = true;
};

const UOp* resolve(const UOp* u) {
  while (u->op == Ops::AFTER || u->op == Ops::GROUP) u = u->src[0].get();
  return u;
}

int64_t wrap(DType dt, int64_t v) {
  if (is_bool(dt)) return v != 0;
  switch (dt->bitsize) {
    case 8: return is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint8_t>(v)) : static_cast<int8_t>(v);
    case 16: return is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint16_t>(v)) : static_cast<int16_t>(v);
    case 32: return is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint32_t>(v)) : static_cast<int32_t>(v);
    default: return v;
  }
}
double round_f(DType dt, double v) {
  if (dt == dtypes::float32) return static_cast<double>(static_cast<float>(v));
  if (dt == dtypes::float16) return static_cast<double>(static_cast<_Float16>(v));
  return v;
}

void read_mem(DType dt, const char* p, Val& out) {
  if (dt == dtypes::float32) { float v; std::memcpy(&v, p, 4); out.f = v; return; }
  if (dt == dtypes::float64) { double v; std::memcpy(&v, p, 8); out.f = v; return; }
  if (dt == dtypes::float16) { _Float16 v; std::memcpy(&v, p, 2); out.f = static_cast<double>(v); return; }
  if (is_bool(dt)) { out.i = *reinterpret_cast<const uint8_t*>(p) != 0; return; }
  switch (dt->bitsize) {
    case 8: out.i = is_unsigned(dt) ? static_cast<int64_t>(*reinterpret_cast<const uint8_t*>(p)) : static_cast<int64_t>(*reinterpret_cast<const int8_t*>(p)); return;
    case 16: { int16_t v; std::memcpy(&v, p, 2); out.i = is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint16_t>(v)) : static_cast<int64_t>(v); return; }
    case 32: { int32_t v; std::memcpy(&v, p, 4); out.i = is_unsigned(dt) ? static_cast<int64_t>(static_cast<uint32_t>(v)) : static_cast<int64_t>(v); return; }
    default: { int64_t v; std::memcpy(&v, p, 8); out.i = v; return; }
  }
}
void write_mem(DType dt, char* p, const Val& v) {
  if (dt == dtypes::float32) { float x = static_cast<float>(v.f); std::memcpy(p, &x, 4); return; }
  if (dt == dtypes::float64) { std::memcpy(p, &v.f, 8); return; }
  if (dt == dtypes::float16) { _Float16 x = static_cast<_Float16>(v.f); std::memcpy(p, &x, 2); return; }
  if (is_bool(dt)) { *reinterpret_cast<uint8_t*>(p) = v.i != 0; return; }
  int64_t x = v.i;
  std::memcpy(p, &x, dt->itemsize());  // little endian: the low bytes
}

Val cast_val(DType from, DType to, const Val& v) {
  Val o;
  if (is_float(to)) {
    o.f = round_f(to, is_float(from) ? v.f : (is_unsigned(from) ? static_cast<double>(static_cast<uint64_t>(v.i)) : static_cast<double>(v.i)));
  } else if (is_bool(to)) {
    o.i = is_float(from) ? (v.f != 0) : (v.i != 0);
  } else if (is_float(from)) {
    double t = std::trunc(v.f);
    if (std::isnan(t)) t = 0;
    if (is_unsigned(to)) o.i = wrap(to, static_cast<int64_t>(static_cast<uint64_t>(t < 0 ? 0 : t)));
    else o.i = wrap(to, t >= 9.2e18 ? INT64_MAX : t <= -9.2e18 ? INT64_MIN : static_cast<int64_t>(t));
  } else {
    o.i = wrap(to, v.i);
  }
  return o;
}
Val bitcast_val(DType from, DType to, const Val& v) {
  char buf[8] = {};
  write_mem(from, buf, v);
  Val o;
  read_mem(to, buf, o);
  return o;
}

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// float math of one ALU op at precision T (the interpreter evaluates float32 kernels in float, like the C)
template <class T>
T float_alu(Ops op, T x, T y, T z) {
  switch (op) {
    case Ops::ADD: return x + y;
    case Ops::SUB: return x - y;
    case Ops::MUL: return x * y;
    case Ops::FDIV: case Ops::CDIV: return x / y;
    case Ops::MAX: return x < y ? y : x;
    case Ops::NEG: return -x;
    case Ops::RECIPROCAL: return T(1) / x;
    case Ops::SQRT: return std::sqrt(x);
    case Ops::EXP2: return std::exp2(x);
    case Ops::LOG2: return std::log2(x);
    case Ops::SIN: return std::sin(x);
    case Ops::TRUNC: return std::trunc(x);
    case Ops::POW: return std::pow(x, y);
    case Ops::CMOD: return std::fmod(x, y);
    case Ops::FLOORDIV: return std::floor(x / y);
    case Ops::FLOORMOD: return x - y * std::floor(x / y);
    case Ops::MULACC: return x * y + z;
    default: throw Error("interpreter: unsupported float op " + std::string(op_name(op)));
  }
}

Val alu_val(const UOp& u, const Val* a, const Val* b, const Val* c) {
  Val o;
  DType dt = u.dtype;
  DType in = u.src[0]->dtype;
  if (u.op == Ops::WHERE) return a->i ? *b : *c;
  if (group::comparison(u.op)) {
    bool r;
    if (is_float(in)) {
      if (u.op == Ops::CMPLT) r = a->f < b->f;
      else if (u.op == Ops::CMPNE) r = a->f != b->f;
      else r = a->f == b->f;
    } else if (is_unsigned(in)) {
      uint64_t x = static_cast<uint64_t>(a->i), y = static_cast<uint64_t>(b->i);
      r = u.op == Ops::CMPLT ? x < y : u.op == Ops::CMPNE ? x != y : x == y;
    } else {
      r = u.op == Ops::CMPLT ? a->i < b->i : u.op == Ops::CMPNE ? a->i != b->i : a->i == b->i;
    }
    o.i = r;
    return o;
  }
  if (is_float(dt)) {
    // doubles in double precision, everything narrower in float (then rounded to the dtype)
    if (dt == dtypes::float64) o.f = float_alu<double>(u.op, a->f, b ? b->f : 0, c ? c->f : 0);
    else o.f = round_f(dt, float_alu<float>(u.op, static_cast<float>(a->f), b ? static_cast<float>(b->f) : 0.f, c ? static_cast<float>(c->f) : 0.f));
    return o;
  }
  // integers and bools, computed in 64 bits and wrapped to the dtype
  int64_t x = a->i, y = b ? b->i : 0, r;
  bool uns = is_unsigned(dt);
  switch (u.op) {
    case Ops::ADD: r = static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); break;
    case Ops::SUB: r = static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); break;
    case Ops::MUL: r = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); break;
    case Ops::NEG: r = -x; break;
    case Ops::MAX: r = uns ? (static_cast<uint64_t>(x) < static_cast<uint64_t>(y) ? y : x) : (x < y ? y : x); break;
    case Ops::CDIV:
      if (y == 0) throw Error("interpreter: integer division by zero");
      r = uns ? static_cast<int64_t>(static_cast<uint64_t>(x) / static_cast<uint64_t>(y)) : x / y;
      break;
    case Ops::CMOD:
      if (y == 0) throw Error("interpreter: integer modulo by zero");
      r = uns ? static_cast<int64_t>(static_cast<uint64_t>(x) % static_cast<uint64_t>(y)) : x % y;
      break;
    case Ops::FLOORDIV:
      if (y == 0) throw Error("interpreter: integer division by zero");
      r = floordiv(x, y);
      break;
    case Ops::FLOORMOD:
      if (y == 0) throw Error("interpreter: integer modulo by zero");
      r = x - floordiv(x, y) * y;
      break;
    case Ops::AND: r = x & y; break;
    case Ops::OR: r = x | y; break;
    case Ops::XOR: r = x ^ y; break;
    case Ops::SHL: r = static_cast<int64_t>(static_cast<uint64_t>(x) << (y & 63)); break;
    case Ops::SHR: r = uns ? static_cast<int64_t>(static_cast<uint64_t>(x) >> (y & 63)) : (x >> (y & 63)); break;
    case Ops::MULACC: r = x * y + c->i; break;
    case Ops::TRUNC: r = x; break;
    default: throw Error("interpreter: unsupported int op " + std::string(op_name(u.op)));
  }
  o.i = wrap(dt, r);
  return o;
}

struct Program {
  std::vector<const UOp*> ins;
  std::vector<std::vector<int>> src;  // operand slots (AFTER/GROUP resolved)
  std::vector<int> jump;              // RANGE -> its END, END -> its RANGE
};

Program prepare(const UOpRef& lin) {
  Program p;
  std::unordered_map<const UOp*, int> pos;
  for (auto& u : lin->src) {
    pos[u.get()] = static_cast<int>(p.ins.size());
    p.ins.push_back(u.get());
  }
  p.src.resize(p.ins.size());
  p.jump.assign(p.ins.size(), -1);
  for (size_t k = 0; k < p.ins.size(); ++k) {
    for (auto& s : p.ins[k]->src) {
      auto it = pos.find(resolve(s.get()));
      p.src[k].push_back(it == pos.end() ? -1 : it->second);
    }
    if (p.ins[k]->op == Ops::END) {
      int r = p.src[k].at(1);
      p.jump[k] = r;
      p.jump[r] = static_cast<int>(k);
    }
  }
  return p;
}

}  // namespace

void interpret_core(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars, int core_id) {
  if (!spec.lowered || spec.lowered->op != Ops::LINEAR) throw Error("interpret: ProgramSpec.lowered is not a LINEAR");
  Program p = prepare(spec.lowered);
  std::vector<Val> v(p.ins.size());
  auto need = [&](int slot) -> const Val& {
    if (slot < 0) throw Error("interpret: operand outside the instruction list");
    return v[slot];
  };
  const int n = static_cast<int>(p.ins.size());
  for (int pc = 0; pc < n; ++pc) {
    const UOp& u = *p.ins[pc];
    const auto& s = p.src[pc];
    switch (u.op) {
      case Ops::CONST:
        if (u.is<Invalid>()) break;
        if (is_float(u.dtype)) v[pc].f = round_f(u.dtype, u.const_float());
        else v[pc].i = u.const_int();
        break;
      case Ops::PARAM: {
        const ParamArg& pa = u.as<ParamArg>();
        if (pa.addrspace != AddrSpace::ALU) {
          if (pa.slot < 0 || pa.slot >= static_cast<int64_t>(bufs.size())) throw Error("interpret: missing buffer for slot " + std::to_string(pa.slot));
          v[pc].p = static_cast<char*>(bufs[pa.slot]);
        } else if (pa.name == "core_id") {
          v[pc].i = core_id;
        } else {
          int64_t k = pa.slot - spec.num_buffers;
          if (k < 0 || k >= static_cast<int64_t>(vars.size())) throw Error("interpret: missing value for Variable " + pa.name);
          v[pc].i = vars[k];
        }
        break;
      }
      case Ops::RANGE:
        v[pc].i = 0;
        if (need(s[0]).i <= 0) pc = p.jump[pc];  // skip the body, continue after END
        break;
      case Ops::END: {
        int r = p.jump[pc];
        if (++v[r].i < v[p.src[r][0]].i) pc = r;  // next iteration starts after the RANGE
        break;
      }
      case Ops::DEFINE_ACC: v[pc] = need(s[0]); break;
      case Ops::INDEX: {
        const Val& base = need(s[0]);
        v[pc].p = base.p + need(s[1]).i * u.src[0]->dtype->itemsize();
        v[pc].gate = s.size() > 2 ? need(s[2]).i != 0 : true;
        break;
      }
      case Ops::LOAD: {
        const UOp* src = p.ins[s[0]];
        if (src->op == Ops::DEFINE_ACC) { v[pc] = v[s[0]]; break; }
        const Val& a = v[s[0]];
        v[pc] = Val{};
        if (a.gate) read_mem(u.dtype, a.p, v[pc]);
        break;
      }
      case Ops::STORE: {
        const UOp* dst = p.ins[s[0]];
        if (dst->op == Ops::DEFINE_ACC) { v[s[0]] = need(s[1]); break; }
        const Val& a = v[s[0]];
        if (a.gate) write_mem(u.src[1]->dtype, a.p, need(s[1]));
        break;
      }
      case Ops::CAST: v[pc] = cast_val(u.src[0]->dtype, u.dtype, need(s[0])); break;
      case Ops::BITCAST: v[pc] = bitcast_val(u.src[0]->dtype, u.dtype, need(s[0])); break;
      default:
        if (!group::alu(u.op)) throw Error("interpret: unexpected " + std::string(op_name(u.op)));
        v[pc] = alu_val(u, &need(s[0]), s.size() > 1 ? &need(s[1]) : nullptr, s.size() > 2 ? &need(s[2]) : nullptr);
        break;
    }
  }
}

void interpret(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars) {
  for (int c = 0; c < std::max(1, spec.threads); ++c) interpret_core(spec, bufs, vars, c);
}

}  // namespace ts
