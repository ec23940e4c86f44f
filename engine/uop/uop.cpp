#include "engine/uop/uop.h"
#include "engine/uop/ptr_map.h"
#include "engine/uop/uop_hash.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "engine/uop/error.h"

namespace ts {

std::string_view axis_type_name(AxisType t) {
  static const char* n[] = {"DEVICE", "GLOBAL", "WARP", "LOCAL", "LOOP", "GROUP_REDUCE", "REDUCE", "UPCAST",
                            "UNROLL", "THREAD", "WEAK", "PLACEHOLDER"};
  return n[static_cast<int>(t)];
}
char axis_letter(AxisType t) {
  static const char l[] = {'d', 'g', 'w', 'l', 'L', 'G', 'R', 'u', 'r', 't', 'L', 'P'};
  return l[static_cast<int>(t)];
}

// ---- args ---------------------------------------------------------------------------------------
namespace {
inline size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
uint64_t dbits(double d) {
  if (std::isnan(d)) d = std::nan("");
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}
}  // namespace

bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a)) return dbits(*x) == dbits(std::get<double>(b));
  return a == b;
}

size_t arg_hash(const Arg& a) {
  size_t h = a.index() * 1315423911u;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) h = mix(h, std::hash<int64_t>()(v));
        else if constexpr (std::is_same_v<T, double>) h = mix(h, std::hash<uint64_t>()(dbits(v)));
        else if constexpr (std::is_same_v<T, bool>) h = mix(h, v);
        else if constexpr (std::is_same_v<T, std::string>) h = mix(h, std::hash<std::string>()(v));
        else if constexpr (std::is_same_v<T, Shape>) { for (auto s : v) h = mix(h, std::hash<int64_t>()(s)); }
        else if constexpr (std::is_same_v<T, ParamArg>) {
          h = mix(h, v.slot); h = mix(h, v.size); h = mix(h, std::hash<std::string>()(v.device));
          h = mix(h, std::hash<std::string>()(v.name)); h = mix(h, (size_t)v.addrspace);
        } else if constexpr (std::is_same_v<T, RangeArg>) { h = mix(h, v.id); h = mix(h, (size_t)v.type); }
        else if constexpr (std::is_same_v<T, ReduceArg>) { h = mix(h, (size_t)v.op); h = mix(h, v.n); }
        else if constexpr (std::is_same_v<T, StageArg>) { h = mix(h, std::hash<std::string>()(v.device)); h = mix(h, v.removable); }
        else if constexpr (std::is_same_v<T, KernelInfo>) { h = mix(h, std::hash<std::string>()(v.name)); }
      },
      a);
  return h;
}

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e16) {
    std::ostringstream o;
    o << static_cast<int64_t>(v) << ".0";
    if (v == 0 && std::signbit(v)) return "-0.0";
    return o.str();
  }
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string arg_repr(const Arg& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "None";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>) return format_double(v);
        else if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
        else if constexpr (std::is_same_v<T, Invalid>) return "Invalid";
        else if constexpr (std::is_same_v<T, std::string>) return "'" + v + "'";
        else if constexpr (std::is_same_v<T, Shape>) {
          std::string s = "(";
          for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
          return s + (v.size() == 1 ? ",)" : ")");
        } else if constexpr (std::is_same_v<T, ParamArg>) {
          std::string s = "ParamArg(" + std::to_string(v.slot);
          if (!v.device.empty()) s += ", device='" + v.device + "'";
          if (!v.name.empty()) s += ", name='" + v.name + "'";
          return s + ")";
        } else if constexpr (std::is_same_v<T, RangeArg>) {
          return "(" + std::to_string(v.id) + ", AxisType." + std::string(axis_type_name(v.type)) + ")";
        } else if constexpr (std::is_same_v<T, ReduceArg>) {
          return "(Ops." + std::string(op_name(v.op)) + ", " + std::to_string(v.n) + ")";
        } else if constexpr (std::is_same_v<T, StageArg>) {
          return "BufferizeOpts(device='" + v.device + "', removable=" + (v.removable ? "True" : "False") + ")";
        } else if constexpr (std::is_same_v<T, KernelInfo>) {
          return "KernelInfo(name='" + v.name + "')";
        }
        return "?";
      },
      a);
}

// ---- interning ----------------------------------------------------------------------------------
namespace {
// The hash-consing table: every live node by its key's hash, open addressing with linear probing in one array of
// (hash, node) slots, so a lookup is one probe into one array (no bucket lists, no division, nothing allocated per
// node). Erasing shifts the following slots of the run back (no tombstones). A node is in the table from its making
// until its last reference is dropped: the deleter erases it under the lock before the node is freed, so a slot's
// node may be read under the lock; one whose count already reached zero is skipped (its weak reference fails to lock).
struct Table {
  struct Slot {
    size_t hash;
    const UOp* node;  // nullptr: empty
  };
  std::mutex mu;
  std::vector<Slot> slots = std::vector<Slot>(1 << 12, Slot{0, nullptr});
  size_t size = 0;

  size_t home(size_t h) const { return static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> 32) & (slots.size() - 1); }
  // A weak reference to the node with this key (expired: none, or one whose deleter is waiting for the lock). Only a
  // weak reference is taken under the table's lock: a strong one dropped there could be a node's last, and its
  // deleter takes the lock (a deadlock seen with BEAM's parallel compiles). make() turns it strong after the lock.
  // (weak_ptr<UOp>, the type enable_shared_from_this keeps: libstdc++ converts a weak_ptr<UOp> to weak_ptr<const UOp>
  // through a temporary strong reference, which is such a drop)
  std::weak_ptr<UOp> find(size_t h, Ops op, DType dt, const UOps& src, const Arg& arg, int64_t tag) const;
  void insert(size_t h, const UOp* node) {
    if (2 * (size + 1) > slots.size()) grow();
    const size_t mask = slots.size() - 1;
    size_t i = home(h);
    while (slots[i].node) i = (i + 1) & mask;
    slots[i] = {h, node};
    ++size;
  }
  void erase(size_t h, const UOp* node) {
    const size_t mask = slots.size() - 1;
    size_t i = home(h);
    while (slots[i].node != node) {
      if (!slots[i].node) return;
      i = (i + 1) & mask;
    }
    // backward shift: move each later slot of the run whose home is not in (i, j] into the hole
    for (size_t j = (i + 1) & mask; slots[j].node; j = (j + 1) & mask) {
      const size_t k = home(slots[j].hash);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots[i] = slots[j];
      i = j;
    }
    slots[i] = {0, nullptr};
    --size;
  }
  void grow() {
    std::vector<Slot> old(2 * slots.size(), Slot{0, nullptr});
    old.swap(slots);
    size = 0;
    for (const Slot& s : old)
      if (s.node) insert(s.hash, s.node);
  }
};
Table& table() {
  static Table* t = new Table();  // never destroyed: UOps may outlive static destruction order
  return *t;
}
std::atomic<uint64_t> g_serial{0};

// Deletes a node without recursing into its sources: a chain of 100,000 nodes frees in a loop, not 100,000 nested
// destructor calls. Sources whose last reference this drops are queued and freed by the outermost call.
thread_local std::vector<UOpRef>* t_pending = nullptr;
void release_node(const UOp* p) {
  auto* u = const_cast<UOp*>(p);
  if (t_pending) {
    for (auto& s : u->src) t_pending->push_back(std::move(s));
    for (auto& s : u->sym) t_pending->push_back(std::move(s));
    delete u;
    return;
  }
  std::vector<UOpRef> pending;
  t_pending = &pending;
  for (auto& s : u->src) pending.push_back(std::move(s));
  for (auto& s : u->sym) pending.push_back(std::move(s));
  delete u;
  while (!pending.empty()) {
    UOpRef last = std::move(pending.back());
    pending.pop_back();
    last.reset();  // may queue more
  }
  t_pending = nullptr;
}

bool same_key(const UOp& u, Ops op, DType dt, const UOps& src, const Arg& arg, int64_t tag) {
  if (u.op != op || u.dtype != dt || u.tag != tag || u.src.size() != src.size()) return false;
  for (size_t i = 0; i < src.size(); ++i)
    if (u.src[i].get() != src[i].get()) return false;
  return arg_equal(u.arg, arg);
}

std::weak_ptr<UOp> Table::find(size_t h, Ops op, DType dt, const UOps& src, const Arg& arg, int64_t tag) const {
  const size_t mask = slots.size() - 1;
  for (size_t i = home(h); slots[i].node; i = (i + 1) & mask)
    if (slots[i].hash == h && same_key(*slots[i].node, op, dt, src, arg, tag)) {
      std::weak_ptr<UOp> w = const_cast<UOp*>(slots[i].node)->weak_from_this();
      if (!w.expired()) return w;
    }
  return {};
}

Shape broadcast_shapes(const UOps& src) {
  Shape out;
  for (auto& s : src) {
    if (!s->has_shape) continue;
    const Shape& sh = s->shape;
    if (sh.size() > out.size()) out.insert(out.begin(), sh.size() - out.size(), 1);
    size_t off = out.size() - sh.size();
    for (size_t i = 0; i < sh.size(); ++i) {
      if (out[off + i] == 1) out[off + i] = sh[i];
      else if (sh[i] != 1 && sh[i] != out[off + i]) throw Error("cannot broadcast shapes");
    }
  }
  return out;
}


// A SHRINK's bound on dim i: its int, or (negative in the arg) minus the index of the source holding a symbolic one
UOpRef shrink_bound(const UOp& u, size_t k) {
  const int64_t v = u.as<Shape>()[k];
  return v < 0 ? u.src.at(static_cast<size_t>(-v)) : nullptr;
}
// The size of a SHRINK's dim i: an int, or, when it depends on a Variable, its largest value and the expression (a
// symbolic start and an end that is that start plus a constant, x.shrink(((st, st + N),)), is the constant N)
std::pair<int64_t, UOpRef> shrink_size(const UOp& u, size_t i) {
  const Shape& a = u.as<Shape>();
  const UOpRef s = shrink_bound(u, 2 * i), e = shrink_bound(u, 2 * i + 1);
  if (!s && !e) return {a[2 * i + 1] - a[2 * i], nullptr};
  // (a Variable's range may reach past the dim; the size is at most what the dim holds)
  const int64_t dim = u.src.at(0)->shape.at(i);
  if (!s) return {std::min(e->vmax(), dim) - a[2 * i], a[2 * i] == 0 ? e : alu(Ops::ADD, e, iconst(-a[2 * i]))};
  if (e && e->op == Ops::ADD && e->src.size() == 2)
    for (int k = 0; k < 2; ++k)
      if (e->src[k] == s && e->src[1 - k]->op == Ops::CONST) return {e->src[1 - k]->const_int(), nullptr};
  const UOpRef size = alu(Ops::ADD, e ? e : iconst(a[2 * i + 1]), alu(Ops::MUL, s, iconst(-1)));
  return {std::min(size->vmax(), dim), size};
}

void infer_shape(UOp& u) {
  auto src_shape = [&](size_t i) -> const Shape& { return u.src.at(i)->shape; };
  switch (u.op) {
    case Ops::CONST: case Ops::RANGE: case Ops::SPECIAL: case Ops::DEFINE_ACC: case Ops::INDEX: case Ops::LOAD:
      u.has_shape = true; return;
    case Ops::BUFFER: case Ops::PARAM:
      u.has_shape = true;
      if (u.as<ParamArg>().addrspace != AddrSpace::ALU) u.shape = {u.as<ParamArg>().size};
      return;
    case Ops::RESHAPE: u.has_shape = true; u.shape = u.as<Shape>(); return;
    case Ops::EXPAND: {
      u.has_shape = true;
      u.shape = u.as<Shape>();
      const Shape& s = src_shape(0);
      u.shape.insert(u.shape.end(), s.begin(), s.end());
      return;
    }
    case Ops::PERMUTE: {
      u.has_shape = true;
      const Shape& p = u.as<Shape>();
      for (auto i : p) u.shape.push_back(src_shape(0).at(i));
      return;
    }
    case Ops::PAD: case Ops::SHRINK: {
      u.has_shape = true;
      const Shape& a = u.as<Shape>();
      const Shape& s = src_shape(0);
      for (size_t i = 0; i < s.size(); ++i) {
        if (u.op == Ops::PAD) u.shape.push_back(s[i] + a[2 * i] + a[2 * i + 1]);
        else u.shape.push_back(shrink_size(u, i).first);
      }
      return;
    }
    case Ops::FLIP: case Ops::COPY: case Ops::CONTIGUOUS: case Ops::CONTIGUOUS_BACKWARD: case Ops::DETACH:
    case Ops::AFTER: case Ops::CAST: case Ops::BITCAST:
      u.has_shape = u.src.at(0)->has_shape; u.shape = src_shape(0); return;
    case Ops::STAGE: u.has_shape = false; return;
    case Ops::MSTACK: {
      // one value per device, each its shard: the whole value's shape, the axis (arg) n times as long
      u.has_shape = u.src.at(0)->has_shape;
      u.shape = src_shape(0);
      for (auto& s : u.src)
        if (s->shape != u.shape) throw Error("MSTACK: shards of different shapes " + arg_repr(Arg(u.shape)) + " and " + arg_repr(Arg(s->shape)));
      if (u.has_shape && u.is<int64_t>()) u.shape.at(static_cast<size_t>(u.as<int64_t>())) *= static_cast<int64_t>(u.src.size());
      return;
    }
    case Ops::REDUCE: {
      u.has_shape = true;
      int n = u.as<ReduceArg>().n;
      if (n > 0) u.shape.assign(src_shape(0).begin() + n, src_shape(0).end());
      return;
    }
    default:
      if (group::elementwise(u.op)) {
        u.has_shape = true;
        u.shape = broadcast_shapes(u.src);
      }
      return;
  }
}

// symbolic dims follow the data through ops that keep dims in place
void infer_sym(UOp& u) {
  auto src_sym = [&](size_t i) -> const UOps& { return u.src.at(i)->sym; };
  switch (u.op) {
    case Ops::SHRINK: {
      const Shape& a = u.as<Shape>();
      (void)a;
      if (u.src.size() > 1) {
        u.sym.assign(u.shape.size(), nullptr);
        for (size_t i = 0; i < u.shape.size(); ++i) u.sym[i] = shrink_size(u, i).second;
      } else if (!src_sym(0).empty()) {
        u.sym = src_sym(0);
      }
      return;
    }
    case Ops::PERMUTE:
      if (!src_sym(0).empty())
        for (auto i : u.as<Shape>()) u.sym.push_back(src_sym(0)[i]);
      return;
    case Ops::EXPAND:
      // a symbolic dim stays (an expanded dim of 1 is the concrete size it was expanded to)
      if (!src_sym(0).empty() && src_sym(0).size() == u.shape.size()) {
        u.sym = src_sym(0);
        for (size_t i = 0; i < u.shape.size(); ++i)
          if (u.src[0]->shape[i] != u.shape[i]) u.sym[i] = nullptr;
      }
      return;
    case Ops::RESHAPE: {
      if (src_sym(0).empty()) return;
      if (u.shape == u.src[0]->shape) {
        u.sym = src_sym(0);
        return;
      }
      // a reshape that only adds or removes dims of 1 (a matmul's, a broadcast's) keeps each other dim's symbolic size
      const Shape& in = u.src[0]->shape;
      std::vector<size_t> a, b;
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i] != 1) a.push_back(i);
      for (size_t i = 0; i < u.shape.size(); ++i)
        if (u.shape[i] != 1) b.push_back(i);
      if (a.size() != b.size()) return;
      for (size_t k = 0; k < a.size(); ++k)
        if (in[a[k]] != u.shape[b[k]]) return;
      u.sym.assign(u.shape.size(), nullptr);
      for (size_t k = 0; k < a.size(); ++k) u.sym[b[k]] = src_sym(0)[a[k]];
      return;
    }
    case Ops::REDUCE:
      if (!src_sym(0).empty() && u.as<ReduceArg>().n > 0) u.sym.assign(src_sym(0).begin() + u.as<ReduceArg>().n, src_sym(0).end());
      return;
    case Ops::PAD: case Ops::FLIP: case Ops::COPY: case Ops::CONTIGUOUS: case Ops::DETACH: case Ops::CAST: case Ops::BITCAST:
      if (!u.src.empty()) u.sym = src_sym(0);
      return;
    default:
      if (group::elementwise(u.op)) {
        for (auto& s : u.src) {
          if (s->sym.empty()) continue;
          if (u.sym.empty()) u.sym.assign(u.shape.size(), nullptr);
          size_t off = u.shape.size() - s->sym.size();
          for (size_t i = 0; i < s->sym.size(); ++i)
            if (s->sym[i]) u.sym[off + i] = s->sym[i];
        }
      }
      return;
  }
}

void infer_device(UOp& u) {
  if (u.op == Ops::BUFFER || u.op == Ops::PARAM) { u.device = u.as<ParamArg>().device; return; }
  if (u.op == Ops::SHRINK) { u.device = u.src[0]->device; return; }
  if (u.op == Ops::COPY) { u.device = u.as<std::string>(); return; }
  if (u.op == Ops::STAGE) { u.device = u.as<StageArg>().device; return; }
  if (u.op == Ops::MSTACK) {
    std::vector<std::string> ds;
    for (auto& s : u.src) ds.push_back(s->device);
    u.device = join_devices(ds);
    return;
  }
  for (auto& s : u.src)
    if (!s->device.empty()) { u.device = s->device; return; }
}
}  // namespace

std::vector<std::string> split_devices(const std::string& d) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t comma; (comma = d.find(',', start)) != std::string::npos; start = comma + 1) out.push_back(d.substr(start, comma - start));
  out.push_back(d.substr(start));
  return out;
}
std::string join_devices(const std::vector<std::string>& ds) {
  std::string out;
  for (size_t i = 0; i < ds.size(); ++i) out += (i ? "," : "") + ds[i];
  return out;
}
namespace {
std::atomic<bool> g_multi_made{false};
}
bool multi_values_made() { return g_multi_made.load(std::memory_order_relaxed); }

size_t live_uop_count() {
  auto& t = table();
  std::lock_guard lk(t.mu);
  return t.size;
}

size_t uop_key_hash(Ops op, DType dtype, std::span<const size_t> src_hashes, const Arg& arg, int64_t tag) {
  size_t h = mix(static_cast<size_t>(op) * 31 + 7, dtype ? static_cast<size_t>(dtype->id) : 0);
  for (size_t s : src_hashes) h = mix(h, s);
  h = mix(h, arg_hash(arg));
  return mix(h, static_cast<size_t>(tag));
}

UOpRef UOp::make(Ops op, DType dtype, UOps src, Arg arg, int64_t tag) {
  size_t hs[8];
  std::vector<size_t> more;
  if (src.size() > 8) more.resize(src.size());
  size_t* sh = src.size() > 8 ? more.data() : hs;
  for (size_t i = 0; i < src.size(); ++i) sh[i] = src[i]->hash;
  const size_t h = uop_key_hash(op, dtype, std::span<const size_t>(sh, src.size()), arg, tag);
  auto& t = table();
  {
    std::weak_ptr<UOp> w;
    {
      std::lock_guard lk(t.mu);
      w = t.find(h, op, dtype, src, arg, tag);
    }
    if (UOpRef sp = w.lock()) return sp;  // (none, or one that died meanwhile: a new one)
  }
  auto* raw = new UOp();
  raw->op = op;
  raw->dtype = dtype;
  raw->src = std::move(src);
  raw->arg = std::move(arg);
  raw->tag = tag;
  raw->hash = h;
  raw->id = g_serial.fetch_add(1);
  try {
    infer_shape(*raw);
  } catch (...) {
    delete raw;
    throw;
  }
  infer_device(*raw);
  if (op == Ops::MSTACK) g_multi_made.store(true, std::memory_order_relaxed);
  // an ALU op over two devices' memories is an error at the op (the reference asserts the same): one of them moves
  if (group::alu(raw->op))
    for (auto& x : raw->src)
      if (!x->device.empty() && x->device != raw->device) {
        std::string msg = "operands on " + raw->device + " and " + x->device + ": one op computes on one device (move one with .to())";
        delete raw;
        throw Error(msg);
      }
  if (raw->has_shape) infer_sym(*raw);
  try {
    raw->vmin_ = raw->compute_vmin();
    raw->vmax_ = raw->compute_vmax();
  } catch (...) {
    delete raw;
    throw;
  }
  if (raw->has_shape) {
    int64_t n = 1;
    for (auto d : raw->shape)
      if (d > 0 && __builtin_mul_overflow(n, d, &n)) {
        std::string shape = "(";
        for (size_t i = 0; i < raw->shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(raw->shape[i]);
        delete raw;
        throw Error(std::string(op_name(op)) + ": shape " + shape + ") has more elements than int64 can count", Error::Kind::Overflow);
      }
  }
  std::shared_ptr<const UOp> sp(raw, [h](const UOp* p) {
    {
      auto& tb = table();
      std::lock_guard lk(tb.mu);
      tb.erase(h, p);
    }
    release_node(p);
  });
  // another thread may have created the same node meanwhile: prefer the existing one. The new node is then dropped
  // after the table's lock is released: its deleter takes that lock (dropping it under the lock deadlocked)
  for (;;) {
    std::weak_ptr<UOp> w;
    {
      std::lock_guard lk(t.mu);
      w = t.find(h, raw->op, raw->dtype, raw->src, raw->arg, raw->tag);
      if (w.expired()) {
        t.insert(h, raw);
        return sp;
      }
    }
    if (UOpRef existing = w.lock()) return existing;  // (sp, never inserted, is dropped here, outside the lock)
  }
}

UOpRef UOp::replace_src(UOps new_src) const {
  bool same = new_src.size() == src.size();
  for (size_t i = 0; same && i < src.size(); ++i) same = new_src[i].get() == src[i].get();
  if (same) return ref();
  DType dt = dtype;
  // re-derive dtype of ALU ops whose sources changed dtype
  if (group::alu(op) && !group::comparison(op)) {
    size_t first = op == Ops::WHERE ? 1 : 0;
    if (first < new_src.size()) dt = new_src[first]->dtype;
    if (op != Ops::WHERE && new_src.size() == 2 && new_src[0]->dtype != new_src[1]->dtype)
      dt = least_upper(new_src[0]->dtype, new_src[1]->dtype);
    if (op == Ops::WHERE && new_src.size() == 3 && new_src[1]->dtype != new_src[2]->dtype)
      dt = least_upper(new_src[1]->dtype, new_src[2]->dtype);
  }
  return make(op, dt, std::move(new_src), arg, tag);
}
UOpRef UOp::with_tag(int64_t t) const { return t == tag ? ref() : make(op, dtype, src, arg, t); }
UOpRef UOp::with_arg(Arg a) const { return make(op, dtype, src, std::move(a), tag); }

int64_t UOp::numel() const {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}
int64_t UOp::const_int() const {
  if (auto* i = std::get_if<int64_t>(&arg)) return *i;
  if (auto* b = std::get_if<bool>(&arg)) return *b;
  if (auto* d = std::get_if<double>(&arg)) return static_cast<int64_t>(*d);
  throw Error("not an integer constant: " + arg_repr(arg));
}
double UOp::const_float() const {
  if (auto* i = std::get_if<int64_t>(&arg)) return static_cast<double>(*i);
  if (auto* b = std::get_if<bool>(&arg)) return *b;
  if (auto* d = std::get_if<double>(&arg)) return *d;
  throw Error("not a numeric constant: " + arg_repr(arg));
}
bool UOp::is_const_value(double v) const {
  if (op != Ops::CONST || is<Invalid>()) return false;
  return const_float() == v;
}
const UOp* UOp::base() const {
  const UOp* u = this;
  while (group::movement(u->op) || u->op == Ops::DETACH) u = u->src[0].get();
  return u;
}

std::vector<UOpRef> UOp::toposort() const {
  std::vector<UOpRef> out;
  PtrMap<char> seen;
  std::vector<std::pair<const UOp*, size_t>> stack{{this, 0}};
  seen.try_emplace(this);
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->src.size()) {
      const UOp* s = u->src[i++].get();
      if (seen.try_emplace(s).second) stack.push_back({s, 0});
    } else {
      out.push_back(u->ref());
      stack.pop_back();
    }
  }
  return out;
}

std::vector<UOpRef> UOp::ranges() const {
  // open ranges: RANGEs reachable, minus those closed by END/REDUCE (their range sources)
  std::map<const UOp*, std::set<const UOp*>> memo;
  std::function<const std::set<const UOp*>&(const UOp*)> go = [&](const UOp* u) -> const std::set<const UOp*>& {
    auto it = memo.find(u);
    if (it != memo.end()) return it->second;
    std::set<const UOp*> r;
    if (u->op == Ops::RANGE) r.insert(u);
    size_t start = (u->op == Ops::END || u->op == Ops::REDUCE || u->op == Ops::STAGE) ? 1 : u->src.size();
    for (size_t i = 0; i < u->src.size(); ++i) {
      const auto& sr = go(u->src[i].get());
      r.insert(sr.begin(), sr.end());
    }
    if (start < u->src.size())
      for (size_t i = start; i < u->src.size(); ++i) r.erase(u->src[i].get());
    return memo[u] = std::move(r);
  };
  const auto& s = go(this);
  std::vector<UOpRef> out;
  for (auto* u : s) out.push_back(u->ref());
  std::sort(out.begin(), out.end(), [](const UOpRef& a, const UOpRef& b) { return a->as<RangeArg>().id < b->as<RangeArg>().id; });
  return out;
}

// interval arithmetic over integer index math (saturating: a bound past int64 is the int64 limit)
namespace {
int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}
int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}
int64_t sat_neg(int64_t a) { return a == INT64_MIN ? INT64_MAX : -a; }
}  // namespace

int64_t UOp::compute_vmin() const {
  if (is_float(dtype)) return INT32_MIN;  // bounds are for integer index math only
  switch (op) {
    case Ops::CONST: return is<Invalid>() ? 0 : const_int();
    case Ops::RANGE: return 0;
    case Ops::SPECIAL: return 0;
    case Ops::PARAM: case Ops::BUFFER: return as<ParamArg>().vmin;
    case Ops::ADD: return sat_add(src[0]->vmin(), src[1]->vmin());
    case Ops::MUL: {
      int64_t a = src[0]->vmin(), b = src[0]->vmax(), c = src[1]->vmin(), d = src[1]->vmax();
      return std::min({sat_mul(a, c), sat_mul(a, d), sat_mul(b, c), sat_mul(b, d)});
    }
    case Ops::FLOORDIV: case Ops::CDIV:
      if (src[1]->is_const() && src[1]->const_int() > 0) {
        int64_t c = src[1]->const_int(), lo = src[0]->vmin();
        return lo >= 0 ? lo / c : -(sat_add(sat_neg(lo), c - 1) / c);
      }
      return INT32_MIN;
    case Ops::FLOORMOD: case Ops::CMOD:
      if (src[1]->is_const() && src[1]->const_int() > 0) {
        if (src[0]->vmin() >= 0 && src[0]->vmax() < src[1]->const_int()) return src[0]->vmin();
        return 0;
      }
      return INT32_MIN;
    case Ops::NEG: return sat_neg(src[0]->vmax());
    case Ops::MAX: return std::max(src[0]->vmin(), src[1]->vmin());
    case Ops::XOR:  // x ^ -1 == -x - 1 (the integer order flip of min); other XORs are unbounded
      if (src[1]->is_const() && !src[1]->is<Invalid>() && src[1]->const_int() == -1) return sat_add(sat_neg(src[0]->vmax()), -1);
      return INT32_MIN;
    case Ops::WHERE: return std::min(src[1]->vmin(), src[2]->vmin());
    case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: case Ops::AND: case Ops::OR:
      if (dtype == dtypes::bool_) {
        int64_t lo = 0;
        if (op == Ops::CMPLT && src[0]->vmax() < src[1]->vmin()) lo = 1;
        return lo;
      }
      return INT32_MIN;
    case Ops::CAST: return is_float(src[0]->dtype) ? INT32_MIN : src[0]->vmin();
    case Ops::AFTER: return src[0]->vmin();
    default: return INT32_MIN;
  }
}
int64_t UOp::compute_vmax() const {
  if (is_float(dtype)) return INT32_MAX;
  switch (op) {
    case Ops::CONST: return is<Invalid>() ? 0 : const_int();
    case Ops::RANGE: return sat_add(src[0]->vmax(), -1);
    case Ops::SPECIAL: return sat_add(src[0]->vmax(), -1);
    case Ops::PARAM: case Ops::BUFFER: return as<ParamArg>().vmax;
    case Ops::ADD: return sat_add(src[0]->vmax(), src[1]->vmax());
    case Ops::MUL: {
      int64_t a = src[0]->vmin(), b = src[0]->vmax(), c = src[1]->vmin(), d = src[1]->vmax();
      return std::max({sat_mul(a, c), sat_mul(a, d), sat_mul(b, c), sat_mul(b, d)});
    }
    case Ops::FLOORDIV: case Ops::CDIV:
      if (src[1]->is_const() && src[1]->const_int() > 0) {
        int64_t c = src[1]->const_int(), hi = src[0]->vmax();
        return hi >= 0 ? hi / c : -(sat_add(sat_neg(hi), c - 1) / c);
      }
      return INT32_MAX;
    case Ops::FLOORMOD: case Ops::CMOD:
      if (src[1]->is_const() && src[1]->const_int() > 0) {
        if (src[0]->vmin() >= 0 && src[0]->vmax() < src[1]->const_int()) return src[0]->vmax();
        return src[1]->const_int() - 1;
      }
      return INT32_MAX;
    case Ops::NEG: return sat_neg(src[0]->vmin());
    case Ops::MAX: return std::max(src[0]->vmax(), src[1]->vmax());
    case Ops::XOR:
      if (src[1]->is_const() && !src[1]->is<Invalid>() && src[1]->const_int() == -1) return sat_add(sat_neg(src[0]->vmin()), -1);
      return INT32_MAX;
    case Ops::WHERE: return std::max(src[1]->vmax(), src[2]->vmax());
    case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: case Ops::AND: case Ops::OR:
      if (dtype == dtypes::bool_) {
        if (op == Ops::CMPLT && src[0]->vmin() >= src[1]->vmax()) return 0;
        return 1;
      }
      return INT32_MAX;
    case Ops::CAST: return is_float(src[0]->dtype) ? INT32_MAX : src[0]->vmax();
    case Ops::AFTER: return src[0]->vmax();
    default: return INT32_MAX;
  }
}

std::string UOp::render() const {
  switch (op) {
    case Ops::CONST: return arg_repr(arg);
    case Ops::RANGE: return "r" + std::to_string(as<RangeArg>().id);
    case Ops::PARAM: case Ops::BUFFER: return as<ParamArg>().name.empty() ? "p" + std::to_string(as<ParamArg>().slot) : as<ParamArg>().name;
    case Ops::ADD: return "(" + src[0]->render() + "+" + src[1]->render() + ")";
    case Ops::MUL: return "(" + src[0]->render() + "*" + src[1]->render() + ")";
    case Ops::FLOORDIV: return "(" + src[0]->render() + "//" + src[1]->render() + ")";
    case Ops::FLOORMOD: return "(" + src[0]->render() + "%" + src[1]->render() + ")";
    case Ops::CMPLT: return "(" + src[0]->render() + "<" + src[1]->render() + ")";
    case Ops::CMPNE: return "(" + src[0]->render() + "!=" + src[1]->render() + ")";
    case Ops::AND: return "(" + src[0]->render() + "&" + src[1]->render() + ")";
    case Ops::WHERE: return "(" + src[1]->render() + " if " + src[0]->render() + " else " + src[2]->render() + ")";
    case Ops::NEG: return "(-" + src[0]->render() + ")";
    default: return std::string(op_name(op));
  }
}

UOpRef UOp::dim(size_t i) const {
  if (i < sym.size() && sym[i]) return sym[i];
  return iconst(shape.at(i));
}
bool UOp::is_variable() const {
  return (op == Ops::BUFFER || op == Ops::PARAM) && as<ParamArg>().addrspace == AddrSpace::ALU && !as<ParamArg>().name.empty();
}

// ---- constructors -------------------------------------------------------------------------------
UOpRef uconst(DType dt, double v) {
  if (is_bool(dt)) return UOp::make(Ops::CONST, dt, {}, Arg(std::in_place_type<bool>, v != 0));
  if (is_int(dt)) return UOp::make(Ops::CONST, dt, {}, Arg(std::in_place_type<int64_t>, static_cast<int64_t>(v)));
  return UOp::make(Ops::CONST, dt, {}, Arg(std::in_place_type<double>, v));
}
UOpRef uconst_int(DType dt, int64_t v) {
  if (is_float(dt)) return uconst(dt, static_cast<double>(v));
  if (is_bool(dt)) return uconst_bool(v != 0);
  return UOp::make(Ops::CONST, dt, {}, Arg(std::in_place_type<int64_t>, v));
}
UOpRef uconst_bool(bool v) { return UOp::make(Ops::CONST, dtypes::bool_, {}, Arg(std::in_place_type<bool>, v)); }
UOpRef uconst_invalid() { return UOp::make(Ops::CONST, dtypes::weakint, {}, Arg(Invalid{})); }
UOpRef uconst_like(const UOpRef& x, double v) { return uconst(x->dtype, v); }
UOpRef iconst(int64_t v) { return uconst_int(dtypes::weakint, v); }

UOpRef alu(Ops op, UOps src) {
  DType dt;
  if (group::comparison(op)) dt = dtypes::bool_;
  else if (op == Ops::WHERE) dt = src.at(1)->dtype == src.at(2)->dtype ? src[1]->dtype : least_upper(src[1]->dtype, src[2]->dtype);
  else if (src.size() >= 2 && src[0]->dtype != src[1]->dtype) dt = least_upper(src[0]->dtype, src[1]->dtype);
  else dt = src.at(0)->dtype;
  return UOp::make(op, dt, std::move(src));
}
UOpRef alu(Ops op, const UOpRef& a) { return alu(op, UOps{a}); }
UOpRef alu(Ops op, const UOpRef& a, const UOpRef& b) { return alu(op, UOps{a, b}); }
UOpRef alu(Ops op, const UOpRef& a, const UOpRef& b, const UOpRef& c) { return alu(op, UOps{a, b, c}); }
UOpRef ucast(const UOpRef& x, DType dt) { return x->dtype == dt ? x : UOp::make(Ops::CAST, dt, {x}); }
UOpRef urange(int64_t size, int64_t id, AxisType t) {
  if (size == 1) return iconst(0);
  return UOp::make(Ops::RANGE, dtypes::weakint, {iconst(size)}, RangeArg{id, t});
}
UOpRef urange(const UOpRef& size, int64_t id, AxisType t) {
  if (size->op == Ops::CONST) return urange(size->const_int(), id, t);
  return UOp::make(Ops::RANGE, dtypes::weakint, {size}, RangeArg{id, t});
}
UOpRef iadd(const UOpRef& a, const UOpRef& b) { return alu(Ops::ADD, a, b); }
UOpRef imul(const UOpRef& a, const UOpRef& b) { return alu(Ops::MUL, a, b); }

}  // namespace ts
