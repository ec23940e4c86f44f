// Tensor movement ops (tensor.h): reshape, expand, permute, pad, shrink (symbolic too), flip, cat, stack, gathers
#include "engine/tensor/tensor.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "engine/schedule/multi.h"
#include "engine/tensor/tensor_internal.h"
#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"
#include "engine/uop/symbolic.h"

namespace ts {

// ---- movement -----------------------------------------------------------------------------------
Tensor Tensor::reshape(std::vector<int64_t> ns) const {
  int64_t known = 1, neg = -1;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] == -1) {
      if (neg >= 0) throw Error("reshape: only one dimension can be inferred, got " + shape_str(ns));
      neg = static_cast<int64_t>(i);
    } else if (ns[i] < 0) throw Error("reshape: invalid dimension in " + shape_str(ns));
    else known *= ns[i];
  }
  if (neg >= 0) {
    if (known == 0) throw Error("reshape: cannot infer -1 of " + shape_str(ns) + " beside a 0 (division by zero)", Error::Kind::ZeroDivision);
    if (numel() % known) throw Error("reshape: cannot reshape " + shape_str(shape()) + " to " + shape_str(ns));
    ns[neg] = numel() / known;
  }
  int64_t n = 1;
  for (auto s : ns) n *= s;
  if (n != numel()) throw Error("reshape: size mismatch, can't reshape " + shape_str(shape()) + " -> " + shape_str(ns));
  if (ns == shape()) return *this;
  return Tensor(UOp::make(Ops::RESHAPE, dtype(), {uop()}, Shape(ns)));
}

Tensor Tensor::broadcast_to(const Tensor& t, const Shape& ns) {
  const Shape& s = t.shape();
  if (s == ns) return t;
  if (s.size() > ns.size()) throw Error("cannot broadcast tensor of shape " + shape_str(s) + " to fewer dimensions " + shape_str(ns));
  size_t nleft = ns.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != ns[nleft + i] && s[i] != 1) throw Error("cannot broadcast " + shape_str(s) + " to " + shape_str(ns));
  std::vector<int64_t> expand_at, kept;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1 && ns[nleft + i] != 1) expand_at.push_back(i);
    else kept.push_back(i);
  }
  Shape sq;
  for (auto i : kept) sq.push_back(s[i]);
  Tensor squeezed = t.reshape(sq);
  Shape arg(ns.begin(), ns.begin() + nleft);
  for (auto i : expand_at) arg.push_back(ns[nleft + i]);
  Tensor expanded = arg.empty() ? squeezed : Tensor(UOp::make(Ops::EXPAND, t.dtype(), {squeezed.uop()}, arg));
  std::vector<int64_t> perm;
  for (size_t i = 0; i < nleft; ++i) perm.push_back(i);
  for (size_t i = 0; i < s.size(); ++i) {
    auto e = std::find(expand_at.begin(), expand_at.end(), (int64_t)i);
    if (e != expand_at.end()) perm.push_back(nleft + (e - expand_at.begin()));
    else perm.push_back(nleft + expand_at.size() + (std::find(kept.begin(), kept.end(), (int64_t)i) - kept.begin()));
  }
  return expanded.permute(perm);
}

Tensor Tensor::expand(std::vector<int64_t> ns) const {
  size_t nleft = ns.size() >= shape().size() ? ns.size() - shape().size() : 0;
  for (size_t i = 0; i < ns.size(); ++i)
    if (ns[i] == -1) {
      if (i < nleft) throw Error("expand: -1 is not allowed for new leading dims");
      ns[i] = shape()[i - nleft];
    } else if (ns[i] < 0) {
      throw Error("expand: shape " + shape_str(ns) + " can't contain negative numbers other than -1 (keep the dim)");
    }
  return broadcast_to(*this, ns);
}

Tensor Tensor::permute(std::vector<int64_t> order) const {
  const std::vector<int64_t> given = order;
  for (auto& o : order) o = resolve_dim(o);  // a dim out of range first: the IndexError
  if ((int64_t)order.size() != ndim()) throw Error("permute: order " + shape_str(given) + " does not match shape " + shape_str(shape()));
  std::vector<bool> seen(order.size());
  for (auto& o : order) {
    if (seen[o]) throw Error("permute: repeated dim in " + shape_str(given));
    seen[o] = true;
  }
  bool ident = true;
  for (size_t i = 0; i < order.size(); ++i) ident &= order[i] == (int64_t)i;
  if (ident) return *this;
  return Tensor(UOp::make(Ops::PERMUTE, dtype(), {uop()}, Shape(order)));
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& pads, double value) const {
  if ((int64_t)pads.size() != ndim()) throw Error("pad: " + std::to_string(pads.size()) + " pads for shape " + shape_str(shape()));
  bool has_neg = false, any = false;
  for (auto& [b, a] : pads) { has_neg |= b < 0 || a < 0; any |= b != 0 || a != 0; }
  if (!any) return *this;
  Tensor x = *this;
  std::vector<std::pair<int64_t, int64_t>> p = pads;
  if (has_neg) {
    std::vector<std::pair<int64_t, int64_t>> sh;
    for (size_t i = 0; i < pads.size(); ++i) sh.push_back({-std::min<int64_t>(pads[i].first, 0), std::min(pads[i].second + shape()[i], shape()[i])});
    x = x.shrink(sh);
    for (auto& [b, a] : p) { b = std::max<int64_t>(b, 0); a = std::max<int64_t>(a, 0); }
  }
  Shape arg;
  bool nz = false;
  for (auto& [b, a] : p) { arg.push_back(b); arg.push_back(a); nz |= b || a; }
  if (!nz) return x;
  Tensor base(UOp::make(Ops::PAD, x.dtype(), {x.uop()}, arg));
  if (value == 0) return base;
  Tensor mask(UOp::make(Ops::PAD, dtypes::bool_, {const_full(x.shape(), 1, dtypes::bool_).uop()}, arg));
  return mask.where(base, Tensor::scalar(value, is_float(dtype()) ? dtypes::weakfloat : dtypes::weakint));
}

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& b) const {
  if ((int64_t)b.size() != ndim()) throw Error("shrink: " + std::to_string(b.size()) + " bounds for shape " + shape_str(shape()));
  Shape arg;
  bool noop = true;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i].first < 0 || b[i].second > shape()[i] || b[i].first > b[i].second)
      throw Error("shrink: bounds (" + std::to_string(b[i].first) + ", " + std::to_string(b[i].second) + ") out of range for dim " +
                  std::to_string(i) + " of shape " + shape_str(shape()));
    arg.push_back(b[i].first);
    arg.push_back(b[i].second);
    noop &= b[i].first == 0 && b[i].second == shape()[i];
  }
  if (noop) return *this;
  return Tensor(UOp::make(Ops::SHRINK, dtype(), {uop()}, arg));
}

namespace {
// the value of an expression of bound Variables at their bound values (its largest value where one is unbound)
int64_t bound_value(const UOpRef& e) {
  std::unordered_map<const UOp*, UOpRef> sub;
  for (const auto& u : e->toposort())
    if (u->op == Ops::AFTER && u->src.size() == 2 && u->src[0]->is_variable() && u->src[1]->op == Ops::STORE) sub[u.get()] = u->src[1]->src.at(1);
  const UOpRef v = simplify(substitute(e, sub));
  return v->op == Ops::CONST ? v->const_int() : v->vmax();
}
}  // namespace

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& b, const UOps& sym_starts, const UOps& sym_ends) const {
  auto sym = [](const UOps& v, size_t i) -> UOpRef { return i < v.size() ? v[i] : nullptr; };
  bool any = false;
  for (size_t i = 0; i < b.size(); ++i) any |= sym(sym_starts, i) != nullptr || sym(sym_ends, i) != nullptr;
  if (!any) return shrink(b);
  if ((int64_t)b.size() != ndim()) throw Error("shrink: " + std::to_string(b.size()) + " bounds for shape " + shape_str(shape()));
  // a symbolic bound is a source of the SHRINK; its entry in the arg is minus that source's index
  Shape arg;
  UOps src{uop()};
  auto bound = [&](const UOpRef& v, int64_t fixed, size_t i, const char* which) {
    if (!v) {
      if (fixed < 0 || fixed > shape()[i])
        throw Error(std::string("shrink: ") + which + " " + std::to_string(fixed) + " out of range for dim " + std::to_string(i) + " of shape " + shape_str(shape()));
      arg.push_back(fixed);
      return;
    }
    // checked at the values it is bound to now (as the reference, a Variable's range may reach past the dim: the
    // window a[3:5, vi:vi+2] of an 11-wide dim with vi in [1, 10])
    const int64_t now = bound_value(v);
    if (now > shape()[i] || now < 0 || v->vmin() < 0)
      throw Error(std::string("shrink: symbolic ") + which + " " + v->render() + " = " + std::to_string(now) + " (in [" + std::to_string(v->vmin()) + ", " +
                  std::to_string(v->vmax()) + "]) out of range for dim " + std::to_string(i) + " of shape " + shape_str(shape()));
    src.push_back(v);
    arg.push_back(-static_cast<int64_t>(src.size() - 1));
  };
  for (size_t i = 0; i < b.size(); ++i) {
    bound(sym(sym_starts, i), b[i].first, i, "start");
    bound(sym(sym_ends, i), b[i].second, i, "end");
  }
  UOpRef out = UOp::make(Ops::SHRINK, dtype(), src, arg);
  for (size_t i = 0; i < b.size(); ++i)
    if (out->shape[i] < 0) throw Error("shrink: the end of dim " + std::to_string(i) + " can be before its start");
  return Tensor(out);
}

UOpRef variable(const std::string& name, int64_t lo, int64_t hi) {
  if (lo > hi) throw Error("Variable " + name + ": empty range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  ParamArg pa;
  pa.slot = -1;
  pa.name = name;
  pa.vmin = lo;
  pa.vmax = hi;
  pa.addrspace = AddrSpace::ALU;
  return UOp::make(Ops::BUFFER, dtypes::weakint, {}, pa);
}
UOpRef bind_variable(const UOpRef& var, int64_t value) {
  const ParamArg& pa = var->as<ParamArg>();
  if (value < pa.vmin || value > pa.vmax)
    throw Error("bind: value " + std::to_string(value) + " out of range [" + std::to_string(pa.vmin) + ", " + std::to_string(pa.vmax) + "] of Variable " + pa.name);
  UOpRef st = UOp::make(Ops::STORE, dtypes::void_, {var, iconst(value)});
  return UOp::make(Ops::AFTER, var->dtype, {var, st});
}

Tensor Tensor::flip(std::vector<int64_t> axes) const {
  Shape arg(ndim(), 0);
  for (auto a : axes) {
    int64_t r = resolve_dim(a);
    if (arg[r]) throw Error("flip: dim " + std::to_string(a) + " appears more than once");
    arg[r] = 1;
  }
  if (std::all_of(arg.begin(), arg.end(), [](int64_t v) { return v == 0; })) return *this;
  return Tensor(UOp::make(Ops::FLIP, dtype(), {uop()}, arg));
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  std::vector<int64_t> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[resolve_dim(a)], order[resolve_dim(b)]);
  return permute(order);
}
Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (ndim() == 0) return reshape({1});
  int64_t s = resolve_dim(start), e = resolve_dim(end);
  std::vector<int64_t> ns(shape().begin(), shape().begin() + s);
  int64_t p = 1;
  for (int64_t i = s; i <= e; ++i) p *= shape()[i];
  ns.push_back(p);
  ns.insert(ns.end(), shape().begin() + e + 1, shape().end());
  return reshape(ns);
}
Tensor Tensor::squeeze(std::optional<int64_t> dim) const {
  std::vector<int64_t> ns;
  if (!dim) {
    for (auto s : shape()) if (s != 1) ns.push_back(s);
    return reshape(ns);
  }
  int64_t d = resolve_dim(*dim);  // a 0-d tensor takes dims 0 and -1 only
  if (ndim() == 0 || shape()[d] != 1) return *this;
  for (int64_t i = 0; i < ndim(); ++i) if (i != d) ns.push_back(shape()[i]);
  return reshape(ns);
}
Tensor Tensor::unsqueeze(int64_t dim) const {
  int64_t d = resolve_dim(dim, 1);
  std::vector<int64_t> ns(shape().begin(), shape().end());
  ns.insert(ns.begin() + d, 1);
  return reshape(ns);
}
Tensor Tensor::contiguous() const {
  if (is_weak(dtype())) return *this;
  if (uop()->op == Ops::CONTIGUOUS || device().empty() || is_realized()) return *this;
  return Tensor(UOp::make(Ops::CONTIGUOUS, dtype(), {uop()}));
}
Tensor Tensor::detach() const { return Tensor(UOp::make(Ops::DETACH, dtype(), {uop()})); }
Tensor Tensor::clone(const std::string& dev) const {
  std::string d = dev.empty() ? (device().empty() ? default_device() : device()) : dev;
  Tensor ret = empty(shape(), dtype(), d);
  Tensor src = *this;
  if (!device().empty() && device() != d) src = to(d);
  Tensor val = src;
  if (device().empty()) val = broadcast_to(*this, shape());
  UOpRef store = UOp::make(Ops::STORE, dtypes::void_, {ret.uop(), val.uop()});
  return Tensor(UOp::make(Ops::AFTER, dtype(), {ret.uop(), store}));
}
Tensor Tensor::to(const std::string& dev) const {
  if (dev == device() || device().empty()) return *this;
  // host data not yet copied anywhere goes straight to dev; a computed value is realized on its own device first
  // (the schedule copies buffers only; the reference's lazy CONTIGUOUS before a COPY of a computed view)
  const UOp* u = uop().get();
  while (u->op == Ops::RESHAPE) u = u->src[0].get();
  if (u->op == Ops::COPY && u->src[0]->op == Ops::BUFFER) {
    UOpRef c = UOp::make(Ops::COPY, dtype(), {u->src[0]}, std::string(dev));
    return Tensor(c).reshape(shape());
  }
  // a python scalar's value has no storage to copy (the reference's RuntimeError)
  if (is_weak(dtype())) throw Error("cannot create storage for weak dtype " + dtype_repr(dtype()) + " (to " + dev + "): cast it first");
  if (!is_realized()) {
    Tensor r = contiguous().realize();
    if (!r.is_realized()) throw Error("to(" + dev + "): the value on " + device() + " realized to no buffer to copy");
    return r.to(dev);
  }
  return Tensor(UOp::make(Ops::COPY, dtype(), {uop()}, std::string(dev)));
}

Tensor Tensor::shard(const std::vector<std::string>& devices, std::optional<int64_t> axis) const {
  if (device().empty()) return *this;
  if (is_multi_device(device())) throw Error("can't shard a multi-device tensor");
  if (devices.size() == 1) return to(devices[0]);
  return Tensor(ts::shard(uop(), devices, axis ? std::optional<int64_t>(resolve_dim(*axis)) : std::nullopt));
}

Tensor Tensor::cat(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw Error("cat: no tensors");
  if (ts[0].ndim() == 0) throw Error("cat: zero-dimensional tensors cannot be concatenated", Error::Kind::Index);
  int64_t d = ts[0].resolve_dim(dim);
  for (auto& t : ts) {
    if (t.ndim() != ts[0].ndim())
      throw Error("cat: tensors have different ranks: " + shape_str(ts[0].shape()) + " and " + shape_str(t.shape()), Error::Kind::Assertion);
    for (int64_t i = 0; i < t.ndim(); ++i)
      if (i != d && t.shape()[i] != ts[0].shape()[i]) throw Error("cat: shape mismatch " + shape_str(ts[0].shape()) + " and " + shape_str(t.shape()) + " on dim " + std::to_string(i),
                                                                           Error::Kind::Assertion);
  }
  int64_t total = 0;
  for (auto& t : ts) total += t.shape()[d];
  Tensor out;
  int64_t off = 0;
  for (auto& t : ts) {
    std::vector<std::pair<int64_t, int64_t>> p(t.ndim(), {0, 0});
    p[d] = {off, total - off - t.shape()[d]};
    off += t.shape()[d];
    Tensor padded = t.pad(p);
    out = out.d_ ? out.add(padded) : padded;
  }
  return out;
}
Tensor Tensor::stack(const std::vector<Tensor>& ts, int64_t dim) {
  for (auto& t : ts)
    if (t.shape() != ts[0].shape()) {
      std::string all;
      for (auto& u : ts) all += (all.empty() ? "" : ", ") + shape_str(u.shape());
      throw Error("stack: all shapes must match, got [" + all + "]", Error::Kind::Assertion);
    }
  std::vector<Tensor> us;
  for (auto& t : ts) us.push_back(t.unsqueeze(dim));
  return cat(us, dim);
}

Tensor Tensor::index_tensor(int64_t dim, const Tensor& idx) const {
  // one-hot: (idx[..., None] == arange(n)) selects x along `dim`, summed over it
  int64_t d = resolve_dim(dim);
  int64_t n = shape()[d];
  std::vector<int64_t> perm{d};
  for (int64_t i = 0; i < ndim(); ++i) if (i != d) perm.push_back(i);
  Tensor x = permute(perm);  // indexed dim first, others in order
  Shape rest(x.shape().begin() + 1, x.shape().end());
  Tensor oh = idx.unsqueeze(-1).eq(arange(static_cast<double>(n), std::nullopt));  // idx.shape + (n,)
  std::vector<int64_t> ohs = oh.shape();
  for (size_t i = 0; i < rest.size(); ++i) ohs.push_back(1);
  oh = oh.reshape(ohs);
  std::vector<int64_t> xs(idx.ndim(), 1);
  xs.insert(xs.end(), x.shape().begin(), x.shape().end());
  Tensor r = oh.where(x.reshape(xs), py(0)).sum(std::vector<int64_t>{idx.ndim()}, false, dtype());
  if (d == 0) return r;
  // r: idx dims + rest; put the idx dims where `dim` was
  int64_t ni = idx.ndim(), nr = static_cast<int64_t>(rest.size());
  std::vector<int64_t> order;
  for (int64_t i = 0; i < d; ++i) order.push_back(ni + i);
  for (int64_t i = 0; i < ni; ++i) order.push_back(i);
  for (int64_t i = d; i < nr; ++i) order.push_back(ni + i);
  return r.permute(order);
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  if (index.ndim() != ndim()) throw Error("gather: index rank " + std::to_string(index.ndim()) + " != tensor rank " + std::to_string(ndim()));
  if (!is_int(index.dtype()) || is_bool(index.dtype())) throw Error("gather: the index must be an int tensor, got " + dtype_repr(index.dtype()));
  int64_t d = resolve_dim(dim);
  for (int64_t i = 0; i < ndim(); ++i)  // (the reference asserts it)
    if (i != d && index.shape()[i] > shape()[i])
      throw Error("gather: requires the tensor's shape " + shape_str(shape()) + " >= the index's " + shape_str(index.shape()) +
                  " on every dim but " + std::to_string(d), Error::Kind::Assertion);
  std::vector<std::pair<int64_t, int64_t>> sh;
  for (int64_t i = 0; i < ndim(); ++i) sh.push_back({0, i == d ? shape()[i] : index.shape()[i]});
  Tensor x = shrink(sh).unsqueeze(-1).transpose(-1, d);
  Tensor oh = index.unsqueeze(-1).eq(arange(static_cast<double>(shape()[d]), std::nullopt));
  return oh.where(x, py(0)).sum(std::vector<int64_t>{-1}, false, dtype());
}

}  // namespace ts
