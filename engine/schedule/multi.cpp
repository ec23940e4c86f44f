#include "engine/schedule/multi.h"
#include "engine/schedule/schedule.h"

#include <algorithm>

#include "engine/uop/error.h"
#include "engine/uop/pattern.h"

namespace ts {

namespace {

std::optional<int64_t> axis_of(const UOp& m) {
  if (m.is<int64_t>()) return m.as<int64_t>();
  return std::nullopt;
}
bool is_multi(const UOpRef& x) { return x->op == Ops::MSTACK; }
std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]) + (s.size() == 1 ? "," : "");
  return out + ")";
}
std::string devices_text(const std::string& d) {
  std::string out = "(";
  for (auto& x : split_devices(d)) out += "'" + x + "', ";
  return out.substr(0, out.size() - 2) + ")";
}

// x with dim `axis` cut to [start, end) (SHRINK) or padded by before/after zeros (PAD)
UOpRef along_axis(Ops op, const UOpRef& x, size_t axis, int64_t a, int64_t b) {
  Shape arg;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    arg.push_back(d == axis ? a : 0);
    arg.push_back(d == axis ? b : (op == Ops::SHRINK ? x->shape[d] : 0));
  }
  return UOp::make(op, x->dtype, {x}, arg);
}

// part i of n of a whole value along axis (a scalar is the same everywhere)
UOpRef part(const UOpRef& x, int64_t axis, size_t i, size_t n) {
  if (x->shape.empty()) return x;
  const int64_t len = x->shape.at(static_cast<size_t>(axis));
  if (len % static_cast<int64_t>(n) != 0)
    throw Error("multi axis uneven: shape " + shape_text(x->shape) + " axis=" + std::to_string(axis) + " across " + std::to_string(n) + " devices");
  const int64_t sz = len / static_cast<int64_t>(n);
  return along_axis(Ops::SHRINK, x, static_cast<size_t>(axis), static_cast<int64_t>(i) * sz, static_cast<int64_t>(i + 1) * sz);
}

// x's value on device d: itself there, else a copy (of its own buffer when x is computed: CONTIGUOUS first)
UOpRef to_device(const UOpRef& x, const std::string& d) {
  if (x->device.empty() || x->device == d) return x;
  UOpRef src = buffer_base(x.get()) ? x : UOp::make(Ops::CONTIGUOUS, x->dtype, {x});
  return UOp::make(Ops::COPY, x->dtype, {src}, d);
}

// the whole value of a multi-device value on device d: its copy there (or the first device's, copied), or its shards
// copied there and joined (each padded to the whole axis, then added: the reference's cat)
UOpRef gather(const UOpRef& m, const std::string& d) {
  const auto axis = axis_of(*m);
  if (!axis) {
    for (auto& s : m->src)
      if (s->device == d) return s;
    return to_device(m->src[0], d);
  }
  const int64_t n = static_cast<int64_t>(m->src.size()), sz = m->src[0]->shape.at(static_cast<size_t>(*axis));
  const Ops join = is_bool(m->dtype) ? Ops::OR : Ops::ADD;
  UOpRef acc;
  for (int64_t i = 0; i < n; ++i) {
    UOpRef p = along_axis(Ops::PAD, to_device(m->src[static_cast<size_t>(i)], d), static_cast<size_t>(*axis), i * sz, (n - 1 - i) * sz);
    acc = acc ? alu(join, acc, p) : p;
  }
  return acc;
}

// source s of an op computed per device, as device i sees it when the op's value (of shape `out`) is split along
// `axis`: s's shard, or its part of s whole (s's dims right-aligned with out's; a broadcast dim is not split)
UOpRef local_source(const UOpRef& s, const Shape& out, std::optional<int64_t> axis, size_t i, size_t n, const std::string& device) {
  const int64_t off = static_cast<int64_t>(out.size()) - static_cast<int64_t>(s->shape.size());
  if (is_multi(s) && axis_of(*s) && axis && *axis_of(*s) + off == *axis) return s->src[i];
  if (is_multi(s) && !axis_of(*s) && !axis) return s->src[i];
  UOpRef whole = s;
  if (is_multi(s)) whole = axis_of(*s) ? gather(s, device) : s->src[i];
  else if (!s->device.empty() && s->device != device)
    throw Error("an op of a value on " + devices_text(device) + " reads one on " + s->device + ": move it with .to() or .shard()");
  // (a value without a device, a constant, is the same on every device)
  if (!axis || *axis - off < 0 || s->shape[static_cast<size_t>(*axis - off)] != out[static_cast<size_t>(*axis)]) return whole;
  return part(whole, *axis - off, i, n);
}

// the first multi-device source of x (nullptr: none)
const UOp* multi_source(const UOpRef& x) {
  for (auto& s : x->src)
    if (is_multi(s)) return s.get();
  return nullptr;
}

// the op on each device's shard, the shards' axis kept
UOpRef per_device(const UOpRef& x, const UOp& m, std::optional<int64_t> axis, Arg arg) {
  UOps out;
  for (auto& s : m.src) {
    UOps src = x->src;
    src[0] = s;
    out.push_back(UOp::make(x->op, x->dtype, std::move(src), arg));
  }
  return mstack(std::move(out), axis);
}

UOpRef elementwise_multi(const UOpRef& x) {
  const UOp* first = multi_source(x);
  if (!first) return nullptr;
  // the reference's choice: the shards' axis when they share one, else the last source's (the others are gathered and
  // split again along it)
  std::optional<int64_t> axis;
  for (auto& s : x->src)
    if (is_multi(s) && axis_of(*s)) axis = *axis_of(*s) + static_cast<int64_t>(x->shape.size() - s->shape.size());
  const std::vector<std::string> devices = split_devices(first->device);
  UOps out;
  for (size_t i = 0; i < devices.size(); ++i) {
    UOps src;
    for (auto& s : x->src) src.push_back(local_source(s, x->shape, axis, i, devices.size(), devices[i]));
    out.push_back(x->replace_src(std::move(src)));
  }
  return mstack(std::move(out), axis);
}

UOpRef reduce_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& m = *x->src[0];
  const ReduceArg& ra = x->as<ReduceArg>();
  const auto axis = axis_of(m);
  UOps partial;
  for (auto& s : m.src) partial.push_back(UOp::make(Ops::REDUCE, x->dtype, {s}, ra));
  if (!axis) return mstack(std::move(partial), std::nullopt);
  if (*axis >= ra.n) return mstack(std::move(partial), *axis - ra.n);
  // the split axis is reduced: every device combines all devices' partial results, in device order, so each device
  // holds the same bits (the reference's allreduce)
  UOps out;
  for (auto& mine : partial) {
    UOpRef acc;
    for (auto& p : partial) {
      UOpRef v = to_device(p, mine->device);
      acc = acc ? alu(ra.op, acc, v) : v;
    }
    out.push_back(acc);
  }
  return mstack(std::move(out), std::nullopt);
}

UOpRef reshape_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& m = *x->src[0];
  const auto axis = axis_of(m);
  Shape shape = x->as<Shape>();
  if (!axis) return per_device(x, m, axis, shape);
  // the split axis is the last new dim whose leading dims hold as many elements as the old ones before the axis, and
  // it must still split evenly: else the reshape would move elements between devices
  const int64_t n = static_cast<int64_t>(m.src.size());
  int64_t before = 1, acc = 1;
  for (int64_t i = 0; i < *axis; ++i) before *= m.shape[static_cast<size_t>(i)];
  std::optional<size_t> new_axis;
  for (size_t k = 0; k < shape.size(); acc *= shape[k], ++k)
    if (acc == before) new_axis = k;
  if (!new_axis || shape[*new_axis] % n != 0)
    throw Error("reshape " + shape_text(m.shape) + " -> " + shape_text(shape) + " moved items between shards");
  shape[*new_axis] /= n;
  return per_device(x, m, static_cast<int64_t>(*new_axis), shape);
}

UOpRef expand_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& m = *x->src[0];
  const auto axis = axis_of(m);
  // EXPAND adds leading dims: the split axis moves right by as many
  const int64_t shift = static_cast<int64_t>(x->as<Shape>().size());
  return per_device(x, m, axis ? std::optional<int64_t>(*axis + shift) : std::nullopt, x->arg);
}

UOpRef permute_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& m = *x->src[0];
  auto axis = axis_of(m);
  const Shape& order = x->as<Shape>();
  if (axis) axis = std::find(order.begin(), order.end(), *axis) - order.begin();
  return per_device(x, m, axis, x->arg);
}

UOpRef pad_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& m = *x->src[0];
  const auto axis = axis_of(m);
  const Shape& pads = x->as<Shape>();
  if (axis && (pads[2 * *axis] != 0 || pads[2 * *axis + 1] != 0))
    throw Error("padding not supported on the sharded axis " + std::to_string(*axis) + " of shape " + shape_text(m.shape));
  return per_device(x, m, axis, x->arg);
}

UOpRef flip_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& m = *x->src[0];
  const auto axis = axis_of(m);
  if (axis && x->as<Shape>()[static_cast<size_t>(*axis)]) throw Error("flipping not supported on sharded axis " + std::to_string(*axis));
  return per_device(x, m, axis, x->arg);
}

UOpRef shrink_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& m = *x->src[0];
  const auto axis = axis_of(m);
  if (!axis) return per_device(x, m, axis, x->arg);
  const size_t a = static_cast<size_t>(*axis);
  Shape arg = x->as<Shape>();
  const int64_t start = arg[2 * a], end = arg[2 * a + 1], sz = m.src[0]->shape[a];
  arg[2 * a] = 0;
  arg[2 * a + 1] = sz;
  // the whole axis stays split; exactly one device's part is that part, copied to every device
  if (start == 0 && end == m.shape[a]) return per_device(x, m, axis, arg);
  if (end >= 0 && end - start == sz && start % sz == 0) {
    UOps src = x->src;
    src[0] = m.src[static_cast<size_t>(start / sz)];
    UOpRef one = UOp::make(Ops::SHRINK, x->dtype, std::move(src), arg);
    UOps out;
    for (auto& s : m.src) out.push_back(to_device(one, s->device));
    return mstack(std::move(out), std::nullopt);
  }
  std::string bounds = "(";
  for (size_t d = 0; d < m.shape.size(); ++d)
    bounds += (d ? ", (" : "(") + std::to_string(x->as<Shape>()[2 * d]) + ", " + std::to_string(x->as<Shape>()[2 * d + 1]) + ")";
  throw Error("shrinking not supported for " + bounds + ") of shape " + shape_text(m.shape) + " split on axis " +
              std::to_string(*axis));
}

UOpRef copy_multi(const UOpRef& x) {
  const UOpRef& src = x->src[0];
  if (is_multi(src)) {
    if (!is_multi_device(x->device)) return gather(src, x->device);
    if (src->device == x->device && !axis_of(*src)) return src;
    UOps out;
    for (auto& d : split_devices(x->device)) out.push_back(gather(src, d));
    return mstack(std::move(out), std::nullopt);
  }
  if (!is_multi_device(x->device)) return nullptr;
  // one device's value to several: a copy on each
  UOps out;
  for (auto& d : split_devices(x->device)) out.push_back(to_device(src, d));
  return mstack(std::move(out), std::nullopt);
}

// STORE(target, value) into a multi-device target: each device stores its part of the value into its shard
UOpRef store_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& target = *x->src[0];
  const auto axis = axis_of(target);
  const std::vector<std::string> devices = split_devices(target.device);
  UOps out;
  for (size_t i = 0; i < devices.size(); ++i)
    out.push_back(UOp::make(Ops::STORE, x->dtype, {target.src[i], local_source(x->src[1], target.shape, axis, i, devices.size(), devices[i])}, x->arg, x->tag));
  return mstack(std::move(out), axis);
}

// AFTER(target, effects) of a multi-device target: each device's shard after its own effects
UOpRef after_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  const UOp& target = *x->src[0];
  UOps out;
  for (size_t i = 0; i < target.src.size(); ++i) {
    UOps src{target.src[i]};
    for (size_t k = 1; k < x->src.size(); ++k) {
      const UOpRef& e = x->src[k];
      if (!is_multi(e) || e->src.size() != target.src.size())
        throw Error("an effect on one device (" + std::string(op_name(e->op)) + ") after a value on " + devices_text(target.device));
      src.push_back(e->src[i]);
    }
    out.push_back(UOp::make(Ops::AFTER, x->dtype, std::move(src), x->arg, x->tag));
  }
  return mstack(std::move(out), axis_of(target));
}

UOpRef passthrough_multi(const UOpRef& x) {
  if (!is_multi(x->src[0])) return nullptr;
  return per_device(x, *x->src[0], axis_of(*x->src[0]), x->arg);
}

UOpRef unsupported_multi(const UOpRef& x) {
  if (x->op == Ops::SINK || x->op == Ops::MSTACK || !multi_source(x)) return nullptr;
  throw Error(std::string(op_name(x->op)) + " of a value on " + devices_text(multi_source(x)->device) + " is not supported");
}

}  // namespace

UOpRef mstack(UOps shards, std::optional<int64_t> axis) {
  if (shards.empty()) throw Error("MSTACK of no shards");
  DType dt = shards[0]->dtype;
  return UOp::make(Ops::MSTACK, dt, std::move(shards), axis ? Arg(*axis) : Arg{});
}

UOpRef shard(const UOpRef& x, const std::vector<std::string>& devices, std::optional<int64_t> axis) {
  if (devices.size() < 2) throw Error("shard: a multi-device value needs two devices or more");
  UOps out;
  for (size_t i = 0; i < devices.size(); ++i)
    out.push_back(to_device(axis ? part(x, *axis, i, devices.size()) : x, devices[i]));
  return mstack(std::move(out), x->shape.empty() ? std::nullopt : axis);
}

const PatternMatcher& pm_multi() {
  static const PatternMatcher pm({
      on_ops(group::ops_where([](Ops o) { return group::elementwise(o); }),
             rule("an elementwise op of multi-device values -> the op on each device's shards", {}, elementwise_multi)),
      rule("REDUCE of a multi-device value -> each device's reduce (added across devices over the split axis)", {Ops::REDUCE}, reduce_multi),
      rule("RESHAPE of a multi-device value -> each shard reshaped (the split axis mapped through)", {Ops::RESHAPE}, reshape_multi),
      rule("EXPAND of a multi-device value -> each shard expanded", {Ops::EXPAND}, expand_multi),
      rule("PERMUTE of a multi-device value -> each shard permuted", {Ops::PERMUTE}, permute_multi),
      rule("PAD of a multi-device value -> each shard padded (not on the split axis)", {Ops::PAD}, pad_multi),
      rule("SHRINK of a multi-device value -> each shard shrunk, or one device's part copied to all", {Ops::SHRINK}, shrink_multi),
      rule("FLIP of a multi-device value -> each shard flipped (not on the split axis)", {Ops::FLIP}, flip_multi),
      rule("COPY to or from several devices -> a copy per device, shards gathered for one device", {Ops::COPY}, copy_multi),
      rule("STORE into a multi-device value -> each device's part stored into its shard", {Ops::STORE}, store_multi),
      rule("AFTER of a multi-device value -> each shard after its own effects", {Ops::AFTER}, after_multi),
      rule("CONTIGUOUS, DETACH of a multi-device value -> one per shard", {Ops::CONTIGUOUS, Ops::DETACH, Ops::CONTIGUOUS_BACKWARD}, passthrough_multi),
      rule("any other op of a multi-device value -> an error naming it", {}, unsupported_multi),
  });
  return pm;
}

UOps lower_multi(const UOps& roots, std::unordered_map<const UOp*, UOpRef>* node_map) {
  if (!multi_values_made() || roots.empty()) return roots;
  UOpRef sink = UOp::make(Ops::SINK, dtypes::void_, roots);
  UOps out = graph_rewrite(sink, pm_multi(), "multi: one graph per device", false, node_map)->src;
  // the walk's own SINK dies here: the map keeps only the callers' nodes (its key was read after it was freed)
  if (node_map) node_map->erase(sink.get());
  return out;
}

std::optional<int64_t> multi_axis(const UOpRef& x) {
  if (!is_multi_device(x->device)) return std::nullopt;
  if (is_multi(x)) return axis_of(*x);
  UOps low = lower_multi({x});
  return is_multi(low[0]) ? axis_of(*low[0]) : std::nullopt;
}

}  // namespace ts
