#include "engine/runtime/interp/interpreter.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>
#include <limits>
#include <unordered_map>
#include <vector>

#include "engine/uop/error.h"

namespace ts {

namespace {

// one value: floats in f (every float dtype's values are exactly representable), ints/bools in i (sign- or
// zero-extended from the dtype), addresses in p. An INDEX of a buffer also keeps the element index and the buffer
// PARAM, so every access is checked against the buffer's size.
struct Val {
  double f = 0;
  int64_t i = 0;
  char* p = nullptr;
  const UOp* buf = nullptr;
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

// bfloat16 is the high half of a float32: round to nearest even, NaN stays NaN (the reference's manual cast)
uint16_t bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return static_cast<uint16_t>(((u & 0xffffu) ? u | 0x10000u : u) >> 16);  // NaN
  return static_cast<uint16_t>((u + ((u >> 16) & 1u) + 0x7fffu) >> 16);
}
double bf16_value(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

double round_f(DType dt, double v) {
  if (dt == dtypes::float32 || dt == dtypes::weakfloat) return static_cast<double>(static_cast<float>(v));
  // float64 -> half/bfloat16 rounds through float32, as the rendered code does
  if (dt == dtypes::float16) return static_cast<double>(static_cast<_Float16>(static_cast<float>(v)));
  if (dt == dtypes::bfloat16) return bf16_value(bf16_bits(static_cast<float>(v)));
  return v;
}

void read_mem(DType dt, const char* p, Val& out) {
  if (dt == dtypes::float32) { float v; std::memcpy(&v, p, 4); out.f = v; return; }
  if (dt == dtypes::float64) { double v; std::memcpy(&v, p, 8); out.f = v; return; }
  if (dt == dtypes::float16) { _Float16 v; std::memcpy(&v, p, 2); out.f = static_cast<double>(v); return; }
  if (dt == dtypes::bfloat16) { uint16_t v; std::memcpy(&v, p, 2); out.f = bf16_value(v); return; }
  // fp8 values are their codes: a lowered program only loads, stores, selects and bitcasts them (math is float32)
  if (is_fp8(dt)) { out.i = *reinterpret_cast<const uint8_t*>(p); return; }
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
  if (dt == dtypes::float16) { _Float16 x = static_cast<_Float16>(static_cast<float>(v.f)); std::memcpy(p, &x, 2); return; }
  if (dt == dtypes::bfloat16) { uint16_t x = bf16_bits(static_cast<float>(v.f)); std::memcpy(p, &x, 2); return; }
  if (is_fp8(dt)) { *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v.i); return; }
  if (is_bool(dt)) { *reinterpret_cast<uint8_t*>(p) = v.i != 0; return; }
  int64_t x = v.i;
  std::memcpy(p, &x, dt->itemsize());  // little endian: the low bytes
}

// float -> int as x86-64 converts (what the reference's CPU device computes; the renderers emit the same guards):
// int32/int64 take the truncated value when it fits, else the "integer indefinite" INT_MIN; 8/16-bit ints go
// through int32 and keep the low bits; uint32/uint64 take the truncated value when it fits, else all ones.
int64_t float_to_int(double v, DType to) {
  constexpr double two31 = 2147483648.0, two32 = 4294967296.0, two63 = 9223372036854775808.0, two64 = 18446744073709551616.0;
  if (to->bitsize == 64 && !is_unsigned(to)) return v >= -two63 && v < two63 ? static_cast<int64_t>(v) : INT64_MIN;
  if (to->bitsize == 64) return v > -1.0 && v < two64 ? static_cast<int64_t>(static_cast<uint64_t>(v)) : -1;
  if (to->bitsize == 32 && is_unsigned(to)) return v > -1.0 && v < two32 ? static_cast<int64_t>(v) : UINT32_MAX;
  int64_t i32 = v >= -two31 && v < two31 ? static_cast<int64_t>(v) : INT32_MIN;
  return wrap(to, i32);
}

double int_to_float(DType from, int64_t i, DType to) {
  // one rounding straight to the target (a double detour would round twice for float32)
  bool uns = is_unsigned(from) || is_bool(from);
  if (to == dtypes::float64) return uns ? static_cast<double>(static_cast<uint64_t>(i)) : static_cast<double>(i);
  float f = uns ? static_cast<float>(static_cast<uint64_t>(i)) : static_cast<float>(i);
  if (to == dtypes::float16) return static_cast<double>(uns ? static_cast<_Float16>(static_cast<uint64_t>(i)) : static_cast<_Float16>(i));
  return round_f(to, f);
}

Val cast_val(DType from, DType to, const Val& v) {
  Val o;
  if (is_float(to)) {
    o.f = is_float(from) ? round_f(to, v.f) : int_to_float(from, v.i, to);
  } else if (is_bool(to)) {
    o.i = is_float(from) ? (v.f != 0) : (v.i != 0);
  } else if (is_float(from)) {
    o.i = float_to_int(v.f, to);
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

// integer division and remainder, defined everywhere as the reference's CPU results: x/0 = 0, x%0 = 0,
// MIN/-1 = MIN (wraps), MIN%-1 = 0
int64_t neg_wrap(int64_t x) { return static_cast<int64_t>(0 - static_cast<uint64_t>(x)); }
int64_t cdiv(int64_t a, int64_t b, bool uns) {
  if (b == 0) return 0;
  if (uns) return static_cast<int64_t>(static_cast<uint64_t>(a) / static_cast<uint64_t>(b));
  if (b == -1) return neg_wrap(a);
  return a / b;
}
int64_t cmod(int64_t a, int64_t b, bool uns) {
  if (b == 0) return 0;
  if (uns) return static_cast<int64_t>(static_cast<uint64_t>(a) % static_cast<uint64_t>(b));
  if (b == -1) return 0;
  return a % b;
}
int64_t floordiv(int64_t a, int64_t b, bool uns) {
  if (uns || b == 0 || b == -1) return cdiv(a, b, uns);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floormod(int64_t a, int64_t b, bool uns) {
  if (uns || b == 0 || b == -1) return cmod(a, b, uns);
  int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
// shifts by a count outside [0, bits) (negative counts included): SHL gives 0, SHR the sign fill (as the
// reference's vector shifts on x86; the renderers emit the same guard)
int64_t shift(Ops op, int64_t x, int64_t y, DType dt) {
  int bits = is_bool(dt) ? 1 : dt->bitsize;
  bool uns = is_unsigned(dt) || is_bool(dt);
  uint64_t n = static_cast<uint64_t>(y);
  bool out = n >= static_cast<uint64_t>(bits);
  if (op == Ops::SHL) return out ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x) << n);
  if (uns) return out ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x) >> n);
  return x >> (out ? 63 : n);
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
  // integers and bools, computed in 64 bits (wrapping) and wrapped to the dtype
  int64_t x = a->i, y = b ? b->i : 0, r;
  bool uns = is_unsigned(dt);
  auto add = [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) + static_cast<uint64_t>(q)); };
  auto mul = [](int64_t p, int64_t q) { return static_cast<int64_t>(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); };
  switch (u.op) {
    case Ops::ADD: r = add(x, y); break;
    case Ops::SUB: r = static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); break;
    case Ops::MUL: r = mul(x, y); break;
    case Ops::NEG: r = neg_wrap(x); break;
    case Ops::MAX: r = uns ? (static_cast<uint64_t>(x) < static_cast<uint64_t>(y) ? y : x) : (x < y ? y : x); break;
    case Ops::CDIV: r = cdiv(x, y, uns); break;
    case Ops::CMOD: r = cmod(x, y, uns); break;
    case Ops::FLOORDIV: r = floordiv(x, y, uns); break;
    case Ops::FLOORMOD: r = floormod(x, y, uns); break;
    case Ops::AND: r = x & y; break;
    case Ops::OR: r = x | y; break;
    case Ops::XOR: r = x ^ y; break;
    case Ops::SHL: case Ops::SHR: r = shift(u.op, x, y, dt); break;
    case Ops::MULACC: r = add(mul(x, y), c->i); break;
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
  std::vector<int> local_buffers;     // instructions that are LOCAL BUFFERs
  bool gpu = false;                   // has launch dims (SPECIAL), LOCAL memory or barriers
  bool barriers = false;
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
    const UOp& u = *p.ins[k];
    for (auto& s : u.src) {
      auto it = pos.find(resolve(s.get()));
      p.src[k].push_back(it == pos.end() ? -1 : it->second);
    }
    if (u.op == Ops::END) {
      int r = p.src[k].at(1);
      p.jump[k] = r;
      p.jump[r] = static_cast<int>(k);
    }
    if (u.op == Ops::BUFFER) {
      if (u.as<ParamArg>().addrspace != AddrSpace::LOCAL) throw Error("interpret: a BUFFER that is not LOCAL memory");
      p.local_buffers.push_back(static_cast<int>(k));
    }
    if (u.op == Ops::SPECIAL || u.op == Ops::BUFFER || u.op == Ops::BARRIER) p.gpu = true;
    if (u.op == Ops::BARRIER) p.barriers = true;
  }
  return p;
}

std::string memory_name(const ParamArg& pa) {
  return (pa.addrspace == AddrSpace::LOCAL ? "local" : "data") + std::to_string(pa.slot) + "_" + std::to_string(pa.size);
}

// an access outside [0, size) of its buffer is an error that names the kernel, the buffer and the index
void check_access(const ProgramSpec& spec, const Val& a, bool store) {
  if (!a.buf) throw Error("interpret: kernel " + spec.name + " accesses memory that is not a buffer");
  const ParamArg& pa = a.buf->as<ParamArg>();
  if (a.i >= 0 && a.i < pa.size) return;
  throw Error("interpret: kernel " + spec.name + " " + (store ? "stores to" : "reads") + " " + memory_name(pa) + "[" +
              std::to_string(a.i) + "], outside its " + std::to_string(pa.size) + " elements");
}

// what a value was computed from, while provenance is recorded (provenance.h): buffer elements, sorted, each once
using Deps = std::vector<ElementRef>;

// into |= from (scratch: reused storage)
void unite(Deps& into, const Deps& from, Deps& scratch) {
  if (from.empty()) return;
  if (into.empty()) {
    into = from;
    return;
  }
  scratch.clear();
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(scratch));
  into.swap(scratch);
}

// what one lane sees: its buffers, Variables, thread / work-group / lane ids and its work-group's LOCAL memory; while
// provenance is recorded, where stores record it and what each LOCAL element holds
struct Env {
  const ProgramSpec& spec;
  const Program& p;
  std::span<void*> bufs;
  std::span<const int64_t> vars;
  int core_id = 0;
  std::array<int64_t, 3> gid{}, lid{}, lsize{1, 1, 1};
  std::vector<std::vector<char>>* local_mem = nullptr;  // per LOCAL BUFFER instruction (index into p.local_buffers)
  Provenance* provenance = nullptr;
  std::vector<std::vector<Deps>>* local_deps = nullptr;  // per LOCAL BUFFER instruction, per element
};

struct Lane {
  std::vector<Val> v;
  std::vector<Deps> d;  // per instruction, what its value was computed from (only while provenance is recorded)
  Deps scratch;
  int pc = 0;
  std::array<int64_t, 3> lid{};
};

// which LOCAL BUFFER instruction (index into p.local_buffers) a LOCAL access addresses
size_t local_slot(const Program& p, const UOp* buf) {
  for (size_t k = 0; k < p.local_buffers.size(); ++k)
    if (p.ins[p.local_buffers[k]] == buf) return k;
  throw Error("interpret: a LOCAL access to memory that is no LOCAL BUFFER");
}

int64_t special_value(const Env& e, const Lane& lane, const UOp& u) {
  const std::string& name = u.as<std::string>();
  int dim = name.empty() ? -1 : name.back() - '0';
  if (dim < 0 || dim > 2) throw Error("interpret: kernel " + e.spec.name + " has SPECIAL " + name + ", not a launch dim");
  if (name.rfind("gidx", 0) == 0) return e.gid[dim];
  if (name.rfind("lidx", 0) == 0) return lane.lid[dim];
  if (name.rfind("idx", 0) == 0) return e.gid[dim] * e.lsize[dim] + lane.lid[dim];
  throw Error("interpret: kernel " + e.spec.name + " has SPECIAL " + name + ", not a launch dim");
}

// provenance of instruction pc, which just ran (provenance.h): what its value depends on, what a STORE records
void track(const Env& e, Lane& lane, int pc) {
  const Program& p = e.p;
  const UOp& u = *p.ins[pc];
  const auto& s = p.src[pc];
  std::vector<Deps>& d = lane.d;
  switch (u.op) {
    case Ops::CONST: case Ops::PARAM: case Ops::BUFFER: case Ops::SPECIAL: case Ops::RANGE: case Ops::END: case Ops::BARRIER:
      break;
    case Ops::DEFINE_ACC: d[pc] = d[s[0]]; break;
    case Ops::INDEX:  // the address: what the index and the gate depend on
      d[pc].clear();
      for (size_t k = 1; k < s.size(); ++k) unite(d[pc], d[s[k]], lane.scratch);
      break;
    case Ops::LOAD: {
      d[pc] = d[s[0]];
      if (p.ins[s[0]]->op == Ops::DEFINE_ACC) break;
      const Val& a = lane.v[s[0]];
      if (!a.gate) break;  // nothing loaded
      if (a.buf->op == Ops::BUFFER) {
        unite(d[pc], (*e.local_deps)[local_slot(p, a.buf)][static_cast<size_t>(a.i)], lane.scratch);
      } else {
        const Deps one{ElementRef{static_cast<int>(a.buf->as<ParamArg>().slot), a.i}};
        unite(d[pc], one, lane.scratch);
      }
      break;
    }
    case Ops::STORE: {
      if (p.ins[s[0]]->op == Ops::DEFINE_ACC) {
        d[s[0]] = d[s[1]];
        break;
      }
      const Val& a = lane.v[s[0]];
      if (!a.gate) break;
      if (a.buf->op == Ops::BUFFER) {
        (*e.local_deps)[local_slot(p, a.buf)][static_cast<size_t>(a.i)] = d[s[1]];
        break;
      }
      Deps& into = e.provenance->stores[ElementRef{static_cast<int>(a.buf->as<ParamArg>().slot), a.i}];
      unite(into, d[s[1]], lane.scratch);
      break;
    }
    default:  // ALU ops, CAST, BITCAST
      d[pc].clear();
      for (int k : s) unite(d[pc], d[k], lane.scratch);
      break;
  }
}

// runs `lane` from its pc until it reaches a BARRIER (returns true, pc on the barrier) or the end (false). P: each
// value also carries what it was computed from (lane.d), and each STORE records it (provenance.h); without P that
// bookkeeping is compiled out.
template <bool P>
bool run_lane(const Env& e, Lane& lane) {
  const Program& p = e.p;
  const ProgramSpec& spec = e.spec;
  std::vector<Val>& v = lane.v;
  auto need = [&](int slot) -> const Val& {
    if (slot < 0) throw Error("interpret: operand outside the instruction list");
    return v[slot];
  };
  const int n = static_cast<int>(p.ins.size());
  for (int pc = lane.pc; pc < n; ++pc) {
    [[maybe_unused]] const int at = pc;  // (RANGE and END move pc)
    const UOp& u = *p.ins[pc];
    const auto& s = p.src[pc];
    switch (u.op) {
      case Ops::CONST:
        if (u.is<Invalid>()) break;
        if (is_float(u.dtype)) v[pc].f = round_f(u.dtype, u.const_float());
        else v[pc].i = wrap(u.dtype, u.const_int());
        break;
      case Ops::PARAM: {
        const ParamArg& pa = u.as<ParamArg>();
        if (pa.addrspace != AddrSpace::ALU) {
          if (pa.slot < 0 || pa.slot >= static_cast<int64_t>(e.bufs.size())) throw Error("interpret: missing buffer for slot " + std::to_string(pa.slot));
          v[pc].p = static_cast<char*>(e.bufs[pa.slot]);
          v[pc].buf = &u;
        } else if (pa.name == "core_id") {
          v[pc].i = e.core_id;
        } else {
          int64_t k = pa.slot - spec.num_buffers;
          if (k < 0 || k >= static_cast<int64_t>(e.vars.size())) throw Error("interpret: missing value for Variable " + pa.name);
          v[pc].i = e.vars[k];
        }
        break;
      }
      case Ops::BUFFER: {
        size_t k = static_cast<size_t>(std::find(p.local_buffers.begin(), p.local_buffers.end(), pc) - p.local_buffers.begin());
        if (!e.local_mem || k >= e.local_mem->size()) throw Error("interpret: kernel " + spec.name + " has LOCAL memory but no work-group");
        v[pc] = Val{};
        v[pc].p = (*e.local_mem)[k].data();
        v[pc].buf = &u;
        break;
      }
      case Ops::SPECIAL: v[pc].i = special_value(e, lane, u); break;
      case Ops::BARRIER: lane.pc = pc; return true;
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
        int64_t idx = need(s[1]).i;
        // the address is formed only for an access that happens (a gated-off index may be anything)
        v[pc] = Val{};
        v[pc].i = idx;
        v[pc].buf = base.buf;
        v[pc].p = base.p;
        v[pc].gate = s.size() > 2 ? need(s[2]).i != 0 : true;
        break;
      }
      case Ops::LOAD: {
        const UOp* src = p.ins[s[0]];
        if (src->op == Ops::DEFINE_ACC) { v[pc] = v[s[0]]; break; }
        const Val& a = v[s[0]];
        v[pc] = Val{};
        if (a.gate) {
          check_access(spec, a, false);
          read_mem(u.dtype, a.p + a.i * a.buf->dtype->itemsize(), v[pc]);
        }
        break;
      }
      case Ops::STORE: {
        const UOp* dst = p.ins[s[0]];
        if (dst->op == Ops::DEFINE_ACC) { v[s[0]] = need(s[1]); break; }
        const Val& a = v[s[0]];
        if (a.gate) {
          check_access(spec, a, true);
          write_mem(u.src[1]->dtype, a.p + a.i * a.buf->dtype->itemsize(), need(s[1]));
        }
        break;
      }
      case Ops::CAST: v[pc] = cast_val(u.src[0]->dtype, u.dtype, need(s[0])); break;
      case Ops::BITCAST: v[pc] = bitcast_val(u.src[0]->dtype, u.dtype, need(s[0])); break;
      default:
        if (!group::alu(u.op)) throw Error("interpret: unexpected " + std::string(op_name(u.op)));
        v[pc] = alu_val(u, &need(s[0]), s.size() > 1 ? &need(s[1]) : nullptr, s.size() > 2 ? &need(s[2]) : nullptr);
        break;
    }
    if constexpr (P) track(e, lane, at);
  }
  lane.pc = n;
  return false;
}

std::string dims_str(const std::array<int64_t, 3>& d) {
  return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
}

// one work-group: every lane runs until it reaches a barrier; when all lanes of the group wait at the same barrier
// they all continue past it. A lane that ends while others wait (or lanes at different barriers) is an error.
template <bool P>
void run_group(Env& e, std::vector<Lane>& lanes) {
  for (auto& mem : *e.local_mem) std::fill(mem.begin(), mem.end(), 0);
  if constexpr (P)
    for (auto& elements : *e.local_deps)
      for (Deps& x : elements) x.clear();
  const size_t nins = e.p.ins.size();
  const int64_t lx = e.lsize[0], ly = e.lsize[1];
  for (size_t l = 0; l < lanes.size(); ++l) {
    Lane& lane = lanes[l];
    lane.pc = 0;
    const int64_t li = static_cast<int64_t>(l);
    lane.lid = {li % lx, (li / lx) % ly, li / (lx * ly)};
  }
  if (!e.p.barriers) {
    // no barrier: each lane runs to the end on its own (one register file reused)
    Lane one;
    one.v.resize(nins);
    if constexpr (P) one.d.resize(nins);
    for (auto& lane : lanes) {
      one.pc = 0;
      one.lid = lane.lid;
      run_lane<P>(e, one);
    }
    return;
  }
  for (auto& lane : lanes) {
    lane.v.assign(nins, Val{});
    if constexpr (P) lane.d.assign(nins, Deps{});
  }
  std::vector<char> done(lanes.size(), 0);
  for (;;) {
    int barrier_pc = -1;
    size_t waiting = 0, finished = 0, first_finished = 0, first_waiting = 0;
    for (size_t l = 0; l < lanes.size(); ++l) {
      if (done[l]) { ++finished; continue; }
      if (run_lane<P>(e, lanes[l])) {
        if (waiting++ == 0) { barrier_pc = lanes[l].pc; first_waiting = l; }
        if (lanes[l].pc != barrier_pc)
          throw Error("interpret: barrier divergence in kernel " + e.spec.name + ": in work-group " + dims_str(e.gid) + " lane " +
                      std::to_string(first_waiting) + " waits at the barrier of instruction " + std::to_string(barrier_pc) + ", lane " +
                      std::to_string(l) + " at instruction " + std::to_string(lanes[l].pc));
      } else {
        done[l] = 1;
        if (finished++ == 0) first_finished = l;
      }
    }
    if (waiting == 0) return;
    if (finished > 0)
      throw Error("interpret: barrier divergence in kernel " + e.spec.name + ": in work-group " + dims_str(e.gid) + " lane " +
                  std::to_string(first_finished) + " finished while lane " + std::to_string(first_waiting) +
                  " waits at the barrier of instruction " + std::to_string(barrier_pc));
    for (size_t l = 0; l < lanes.size(); ++l) ++lanes[l].pc;  // all arrived: past the barrier
  }
}

template <bool P>
void run_grid(const ProgramSpec& spec, const Program& p, std::span<void*> bufs, std::span<const int64_t> vars, Provenance* provenance) {
  LaunchDims d = launch_dims(spec, vars);
  std::array<int64_t, 3> lsize = d.local_size.value_or(std::array<int64_t, 3>{1, 1, 1});
  int64_t lanes_n = 1, groups = 1;
  for (int i = 0; i < 3; ++i) {
    if (d.global_size[i] < 0 || lsize[i] < 1)
      throw Error("interpret: kernel " + spec.name + " has launch dims " + dims_str(d.global_size) + " x " + dims_str(lsize));
    lanes_n *= lsize[i];
    groups *= d.global_size[i];
  }
  if (lanes_n > (1 << 20)) throw Error("interpret: kernel " + spec.name + " has " + std::to_string(lanes_n) + " lanes per work-group");
  std::vector<std::vector<char>> local_mem;
  std::vector<std::vector<Deps>> local_deps;
  for (int k : p.local_buffers) {
    const UOp& b = *p.ins[k];
    local_mem.emplace_back(static_cast<size_t>(b.as<ParamArg>().size * b.dtype->itemsize()));
    if constexpr (P) local_deps.emplace_back(static_cast<size_t>(b.as<ParamArg>().size));
  }
  Env e{spec, p, bufs, vars};
  e.lsize = lsize;
  e.local_mem = &local_mem;
  e.provenance = provenance;
  e.local_deps = &local_deps;
  std::vector<Lane> lanes(static_cast<size_t>(lanes_n));
  for (int64_t g = 0; g < groups; ++g) {
    e.gid = {g % d.global_size[0], (g / d.global_size[0]) % d.global_size[1], g / (d.global_size[0] * d.global_size[1])};
    run_group<P>(e, lanes);
  }
}

template <bool P>
void run_core(const ProgramSpec& spec, const Program& p, std::span<void*> bufs, std::span<const int64_t> vars, int core_id,
              Provenance* provenance) {
  if (p.gpu) {
    // a GPU program has no core_id: its whole grid of work-groups runs here
    if (core_id != 0) return;
    run_grid<P>(spec, p, bufs, vars, provenance);
    return;
  }
  Env e{spec, p, bufs, vars};
  e.core_id = core_id;
  e.provenance = provenance;
  Lane lane;
  lane.v.resize(p.ins.size());
  if constexpr (P) lane.d.resize(p.ins.size());
  run_lane<P>(e, lane);
}

}  // namespace

void interpret_core(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars, int core_id, Provenance* provenance) {
  if (!spec.lowered || spec.lowered->op != Ops::LINEAR) throw Error("interpret: ProgramSpec.lowered is not a LINEAR");
  Program p = prepare(spec.lowered);
  if (provenance) {
    if (provenance->kernel.empty()) provenance->kernel = spec.name;
    run_core<true>(spec, p, bufs, vars, core_id, provenance);
  } else {
    run_core<false>(spec, p, bufs, vars, core_id, nullptr);
  }
}

void interpret(const ProgramSpec& spec, std::span<void*> bufs, std::span<const int64_t> vars, Provenance* provenance) {
  for (int c = 0; c < std::max(1, spec.threads); ++c) interpret_core(spec, bufs, vars, c, provenance);
}

}  // namespace ts
