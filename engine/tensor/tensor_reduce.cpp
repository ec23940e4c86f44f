// Tensor reductions (tensor.h): sum, max, mean, var, arg-reductions, cumsum, pooling, softmax; composites (matmul, conv2d)
#include "engine/tensor/tensor.h"

#include <algorithm>
#include <unordered_map>

#include "engine/tensor/tensor_internal.h"
#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"

namespace ts {

// ---- reductions ---------------------------------------------------------------------------------
Tensor Tensor::reduce(Ops op, const AxisArg& axis_in, bool keepdim, const char* opname) const {
  Tensor self = cast(strong(dtype()));
  std::vector<int64_t> axis;
  if (!axis_in) for (int64_t i = 0; i < ndim(); ++i) axis.push_back(i);
  else for (auto a : *axis_in) {
    if (ndim() == 0 && (a == 0 || a == -1)) continue;
    int64_t r = a < 0 ? a + ndim() : a;
    if (r < 0 || r >= ndim())
      throw Error(std::string(opname) + ": axis " + std::to_string(a) + " out of range for shape " + shape_str(shape()), Error::Kind::Index);
    axis.push_back(r);
  }
  if (ndim() == 0) axis.clear();
  std::sort(axis.begin(), axis.end());
  if (std::adjacent_find(axis.begin(), axis.end()) != axis.end())
    throw Error(std::string(opname) + ": axis " + shape_str(*axis_in) + " repeats a dim of shape " + shape_str(shape()));
  std::vector<int64_t> red;
  for (auto a : axis) if (shape()[a] != 1) red.push_back(a);
  Shape out_shape;
  for (int64_t i = 0; i < ndim(); ++i) if (std::find(axis.begin(), axis.end(), i) == axis.end()) out_shape.push_back(shape()[i]);
  Tensor ret;
  if (red.empty()) ret = self.reshape(out_shape);
  else {
    std::vector<int64_t> perm = red;
    for (int64_t i = 0; i < ndim(); ++i) if (std::find(red.begin(), red.end(), i) == red.end()) perm.push_back(i);
    Tensor p = self.permute(perm);
    ret = Tensor(UOp::make(Ops::REDUCE, p.dtype(), {p.uop()}, ReduceArg{op, static_cast<int>(red.size())}));
    if (axis != red) ret = ret.reshape(out_shape);
  }
  if (keepdim) {
    Shape ks;
    for (int64_t i = 0; i < ndim(); ++i) ks.push_back(std::find(axis.begin(), axis.end(), i) != axis.end() ? 1 : shape()[i]);
    ret = ret.reshape(ks);
  }
  return ret;
}
Tensor Tensor::sum(const AxisArg& axis, bool keepdim, DType acc) const {
  Tensor r = cast(acc ? acc : sum_acc(dtype())).reduce(Ops::ADD, axis, keepdim, "sum");
  if (!acc && (dtype() == dtypes::float16 || dtype() == dtypes::bfloat16 || is_fp8(dtype()))) r = r.cast(dtype());
  return r;
}
Tensor Tensor::rop(Ops op, const std::vector<int64_t>& axes) const { return reduce(op, axes, false, op_name(op).data()); }
Tensor Tensor::prod(const AxisArg& axis, bool keepdim) const { return reduce(Ops::MUL, axis, keepdim, "prod"); }
Tensor Tensor::max(const AxisArg& axis, bool keepdim) const { return reduce(Ops::MAX, axis, keepdim, "max"); }
Tensor Tensor::min(const AxisArg& axis, bool keepdim) const {
  if (is_float(dtype())) return neg().max(axis, keepdim).neg();
  if (is_bool(dtype())) return logical_not().max(axis, keepdim).logical_not();
  return bitwise_xor(py(-1)).max(axis, keepdim).bitwise_xor(py(-1));
}
namespace {
// How many elements a reduce over `axis` adds up, less `correction`, as a divisor: a number, or, where a reduced dim is
// symbolic (a[:, :vi]), a scalar of that Variable expression's value (floored at 0 as a number is)
Tensor reduced_count(const Tensor& x, const AxisArg& axis, double correction) {
  const Shape ks = x.sum(axis, true).shape();
  double n = 1;
  UOpRef sym;
  for (size_t i = 0; i < x.shape().size(); ++i) {
    if (x.shape()[i] == ks[i]) continue;
    const UOpRef d = x.uop()->dim(i);
    if (d->op == Ops::CONST) n *= static_cast<double>(x.shape()[i]);
    else sym = sym ? alu(Ops::MUL, sym, d) : d;
  }
  if (!sym) return Tensor::scalar(std::max(0.0, n - correction), dtypes::weakfloat);
  // (read through the Variables themselves: their values are the ones the shrink bound, passed to the kernel)
  std::unordered_map<const UOp*, UOpRef> unbind;
  for (const auto& u : sym->toposort())
    if (u->op == Ops::AFTER && !u->src.empty() && u->src[0]->is_variable()) unbind[u.get()] = u->src[0];
  const UOpRef count = ucast(alu(Ops::MUL, substitute(sym, unbind), iconst(static_cast<int64_t>(n))), dtypes::float32);
  return Tensor(count).sub(Tensor::scalar(correction, dtypes::weakfloat)).maximum(Tensor::scalar(0.0, dtypes::weakfloat));
}
}  // namespace

Tensor Tensor::mean(const AxisArg& axis, bool keepdim) const {
  DType out = is_float(dtype()) ? dtype() : dtypes::float32;
  Tensor num = cast(sum_acc(dtype())).sum(axis, keepdim);
  return num.div(reduced_count(*this, axis, 0)).cast(out);
}
Tensor Tensor::var(const AxisArg& axis, bool keepdim, double correction) const {
  Tensor sq = sub(mean(axis, true)).square();
  // summed in the accumulation dtype (half: float32, so 70,000 elements' denominator is not a half inf)
  const DType out = is_float(dtype()) ? dtype() : dtypes::float32;
  return sq.cast(sum_acc(dtype())).sum(axis, keepdim).div(reduced_count(*this, axis, correction)).cast(out);
}
Tensor Tensor::std(const AxisArg& axis, bool keepdim, double correction) const { return var(axis, keepdim, correction).sqrt(); }
Tensor Tensor::any(const AxisArg& axis, bool keepdim) const { return cast(dtypes::bool_).max(axis, keepdim); }
Tensor Tensor::all(const AxisArg& axis, bool keepdim) const { return logical_not().any(axis, keepdim).logical_not(); }
Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0, false);
  int64_t a = resolve_dim(*axis);
  int64_t n = shape()[a];
  Tensor m = eq(max(std::vector<int64_t>{a}, true));
  std::vector<int64_t> rs(ndim(), 1);
  rs[a] = n;
  Tensor idx = arange(static_cast<double>(n), 0.0, -1).reshape(rs);
  return Tensor::scalar(n, dtypes::weakint).sub(m.mul(idx).max(std::vector<int64_t>{a}, keepdim)).cast(dtypes::int32);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  if (is_float(dtype())) return neg().argmax(axis, keepdim);
  return bitwise_xor(py(-1)).argmax(axis, keepdim);
}

Tensor Tensor::cumsum(int64_t axis) const {
  int64_t a = resolve_dim(axis);
  // nothing to accumulate (the reference's _split_cumalu): the value in the sum's dtype
  if (ndim() == 0 || numel() == 0) return cast(sum().dtype());
  int64_t s = shape()[a];
  constexpr int64_t kSplit = 256;
  if (s <= kSplit * 2) return cumsum_pooled(*this, a);
  // two stages (the reference's _split_cumalu): cumsums of 256-chunks, plus the running total of earlier chunks
  int64_t padded = (s + kSplit - 1) / kSplit * kSplit;
  std::vector<std::pair<int64_t, int64_t>> pads(ndim(), {0, 0});
  pads.back() = {padded - s, 0};
  Tensor x = transpose(a, -1).pad(pads);
  std::vector<int64_t> cs(x.shape().begin(), x.shape().end() - 1);
  cs.push_back(padded / kSplit);
  cs.push_back(kSplit);
  Tensor chunks = cumsum_pooled(x.reshape(cs), static_cast<int64_t>(cs.size()) - 1);
  std::vector<std::pair<int64_t, int64_t>> last;
  for (int64_t i = 0; i + 1 < chunks.ndim(); ++i) last.push_back({0, chunks.shape()[i]});
  last.push_back({kSplit - 1, kSplit});
  Tensor tails = chunks.shrink(last).squeeze(-1);
  Tensor base = cumsum_pooled(tails, tails.ndim() - 1);
  std::vector<std::pair<int64_t, int64_t>> shift(base.ndim(), {0, 0});
  shift.back() = {1, -1};
  base = base.pad(shift);
  Tensor summed = chunks.add(base.unsqueeze(-1)).flatten(-2);
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (int64_t i = 0; i + 1 < summed.ndim(); ++i) keep.push_back({0, summed.shape()[i]});
  keep.push_back({padded - s, padded});
  return summed.shrink(keep).transpose(a, -1);
}

Tensor Tensor::repeat(std::vector<int64_t> reps) const {
  if (reps.size() < shape().size()) throw Error("repeat: need at least " + std::to_string(ndim()) + " repeats for shape " + shape_str(shape()));
  Shape base(reps.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  std::vector<int64_t> un, ex, fin;
  for (size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] < 0) throw Error("repeat: negative repeat count");
    if (reps[i] == 1) { un.push_back(base[i]); ex.push_back(base[i]); }
    else { un.push_back(1); un.push_back(base[i]); ex.push_back(reps[i]); ex.push_back(base[i]); }
    fin.push_back(reps[i] * base[i]);
  }
  return reshape(un).expand(ex).reshape(fin);
}

Tensor Tensor::pool(const std::vector<int64_t>& k, std::vector<int64_t> s, std::vector<int64_t> d) const {
  size_t nk = k.size();
  if (shape().size() < nk) throw Error("pool: can't pool " + shape_str(shape()) + " with kernel " + shape_str(k));
  if (s.size() <= 1) s.assign(nk, s.empty() ? 1 : s[0]);
  if (d.size() <= 1) d.assign(nk, d.empty() ? 1 : d[0]);
  if (s.size() != nk || d.size() != nk) throw Error("pool: stride/dilation do not match kernel " + shape_str(k), Error::Kind::Assertion);
  for (size_t j = 0; j < nk; ++j)
    if (k[j] <= 0 || s[j] <= 0 || d[j] <= 0)
      throw Error("pool: kernel size " + shape_str(k) + ", stride " + shape_str(s) + " and dilation " + shape_str(d) +
                      " must be positive (integer division or modulo by zero)",
                  Error::Kind::ZeroDivision);
  size_t nn = shape().size() - nk;
  std::vector<int64_t> noop(shape().begin(), shape().begin() + nn), i_(shape().begin() + nn, shape().end());
  auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  std::vector<int64_t> o, f;
  for (size_t j = 0; j < nk; ++j) {
    if (d[j] * (k[j] - 1) + 1 > i_[j]) throw Error("pool: kernel size " + shape_str(k) + " cannot be greater than the input size " + shape_str(i_), Error::Kind::Assertion);
    o.push_back(cdiv(i_[j] - d[j] * (k[j] - 1), s[j]));
    f.push_back(std::max<int64_t>(1, cdiv(o[j] * s[j] - d[j], i_[j])));
  }
  std::vector<int64_t> reps(nn, 1);
  for (size_t j = 0; j < nk; ++j) reps.push_back(cdiv(k[j] * (i_[j] * f[j] + d[j]), i_[j]));
  Tensor x = repeat(reps);
  auto shrink_to = [&](const Tensor& t, const std::vector<int64_t>& to) {
    std::vector<std::pair<int64_t, int64_t>> b;
    for (size_t j = 0; j < to.size(); ++j) b.push_back({0, to[j]});
    return t.shrink(b);
  };
  std::vector<int64_t> t1 = noop, t2 = noop, t3 = noop, t4 = noop, t5 = noop, t6 = noop;
  for (size_t j = 0; j < nk; ++j) {
    int64_t w = i_[j] * f[j] + d[j];
    t1.push_back(k[j] * w);
    t2.push_back(k[j]); t2.push_back(w);
    t3.push_back(k[j]); t3.push_back(o[j] * s[j]);
    t4.push_back(k[j]); t4.push_back(o[j]); t4.push_back(s[j]);
    t5.push_back(k[j]); t5.push_back(o[j]); t5.push_back(1);
    t6.push_back(k[j]); t6.push_back(o[j]);
  }
  x = shrink_to(x, t1).reshape(t2);
  x = shrink_to(x, t3).reshape(t4);
  x = shrink_to(x, t5).reshape(t6);
  std::vector<int64_t> perm;
  for (size_t j = 0; j < nn; ++j) perm.push_back(j);
  for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2 + 1);
  for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2);
  return x.permute(perm);
}

namespace {
// padding spec -> per-dim (before, after) for the last `dims` dims (int, per-dim, or torch-style flat list)
std::vector<std::pair<int64_t, int64_t>> pool_pads(const std::vector<int64_t>& p, size_t dims) {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (p.size() <= 1) { for (size_t i = 0; i < dims; ++i) out.push_back({p.empty() ? 0 : p[0], p.empty() ? 0 : p[0]}); return out; }
  if (p.size() == dims) { for (auto v : p) out.push_back({v, v}); return out; }
  if (p.size() == 2 * dims) {
    // (left, right, top, bottom, ...) -> per dim from the last
    for (size_t i = 0; i < dims; ++i) out.push_back({p[2 * (dims - 1 - i)], p[2 * (dims - 1 - i) + 1]});
    return out;
  }
  throw Error("padding must be an int or a sequence of length " + std::to_string(dims) + " or " + std::to_string(2 * dims));
}
}  // namespace

namespace {
// the windows of a 2-d pooling (stride defaults to the kernel) and the axes to reduce them over
std::pair<Tensor, std::vector<int64_t>> pool_windows(const Tensor& t, std::vector<int64_t> k, std::vector<int64_t> s,
                                                     const std::vector<int64_t>& d, const std::vector<int64_t>& p, double pad_value) {
  if (k.size() == 1) k.push_back(k[0]);
  if (s.empty()) s = k;
  auto pads = pool_pads(p, k.size());
  std::vector<std::pair<int64_t, int64_t>> full(t.ndim() - k.size(), {0, 0});
  full.insert(full.end(), pads.begin(), pads.end());
  std::vector<int64_t> axes;
  for (size_t i = 0; i < k.size(); ++i) axes.push_back(-1 - static_cast<int64_t>(i));
  return {t.pad(full, pad_value).pool(k, s, d), axes};
}
}  // namespace

Tensor Tensor::max_pool2d(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d, std::vector<int64_t> p) const {
  auto [x, axes] = pool_windows(*this, k, s, d, p, is_float(dtype()) ? -INFINITY : -2147483648.0);
  return x.max(axes);
}
Tensor Tensor::avg_pool2d(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d, std::vector<int64_t> p) const {
  auto [x, axes] = pool_windows(*this, k, s, d, p, 0);
  return x.mean(axes);
}

Tensor Tensor::softmax(int64_t axis) const {
  Tensor m = sub(max(std::vector<int64_t>{axis}, true).detach());
  Tensor e = m.exp();
  return e.mul(e.sum(std::vector<int64_t>{axis}, true).reciprocal());
}
Tensor Tensor::log_softmax(int64_t axis) const {
  Tensor m = sub(max(std::vector<int64_t>{axis}, true).detach());
  Tensor e = m.exp();
  return m.sub(e.sum(std::vector<int64_t>{axis}, true).log());
}
Tensor Tensor::logsumexp(int64_t axis, bool keepdim) const {
  Tensor m = max(std::vector<int64_t>{axis}, true).detach();
  Tensor r = sub(m).exp().sum(std::vector<int64_t>{axis}, keepdim).log();
  return r.add(keepdim ? m : m.squeeze(axis));
}

// ---- composites ---------------------------------------------------------------------------------
Tensor Tensor::matmul(const Tensor& w) const {
  int64_t dx = ndim(), dw = w.ndim();
  if (dx == 0 || dw == 0) throw Error("matmul: both tensors need to be at least 1D, got " + std::to_string(dx) + "D and " + std::to_string(dw) + "D");
  int64_t axis_w = dw >= 2 ? dw - 2 : 0;
  if (shape().back() != w.shape()[axis_w]) throw Error("matmul: cannot dot " + shape_str(shape()) + " and " + shape_str(w.shape()));
  int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  std::vector<int64_t> xs(shape().begin(), shape().end() - 1);
  for (int64_t i = 0; i < ones; ++i) xs.push_back(1);
  xs.push_back(shape().back());
  std::vector<int64_t> ws(w.shape().begin(), w.shape().end() - std::min<int64_t>(dw, 2));
  for (int64_t i = 0; i < ones; ++i) ws.push_back(1);
  ws.insert(ws.end(), w.shape().begin() + axis_w, w.shape().end());
  Tensor x = reshape(xs);
  Tensor ww = w.reshape(ws).transpose(-1, -std::min<int64_t>(dw, 2));
  return x.mul(ww).sum(std::vector<int64_t>{-1}).cast(least_upper(dtype(), w.dtype()));
}
Tensor Tensor::linear(const Tensor& w, const std::optional<Tensor>& bias) const {
  Tensor x = w.ndim() == 1 ? mul(w) : matmul(w);
  return bias ? x.add(*bias) : x;
}
Tensor Tensor::conv2d(const Tensor& w, const std::optional<Tensor>& bias, int64_t groups, std::vector<int64_t> stride,
                      std::vector<int64_t> dilation, std::vector<int64_t> padding) const {
  if (ndim() < 3 || w.ndim() != ndim())
    throw Error("conv2d: input " + shape_str(shape()) + " does not match the shape of the weights " + shape_str(w.shape()), Error::Kind::Assertion);
  int64_t bs = shape()[0], cin_ = shape()[1], cout = w.shape()[0], cin = w.shape()[1];
  std::vector<int64_t> HW(w.shape().begin() + 2, w.shape().end());
  size_t nd = HW.size();
  if (groups * cin != cin_)
    throw Error("conv2d: input tensor shape " + shape_str(shape()) + " does not match the shape of the weights " + shape_str(w.shape()) +
                ". (" + std::to_string(groups * cin) + " vs. " + std::to_string(cin_) + ")", Error::Kind::Assertion);
  auto pads = pool_pads(padding, nd);
  std::vector<std::pair<int64_t, int64_t>> full(ndim() - nd, {0, 0});
  full.insert(full.end(), pads.begin(), pads.end());
  Tensor x = pad(full).pool(HW, stride, dilation);
  int64_t rcout = cout / groups;
  std::vector<int64_t> oyx(x.shape().begin() + 2, x.shape().end() - nd);
  std::vector<int64_t> r1{bs, groups, cin, 1}, e1{bs, groups, cin, rcout};
  r1.insert(r1.end(), oyx.begin(), oyx.end()); r1.insert(r1.end(), HW.begin(), HW.end());
  e1.insert(e1.end(), oyx.begin(), oyx.end()); e1.insert(e1.end(), HW.begin(), HW.end());
  std::vector<int64_t> perm{0, 1, 3};
  for (size_t i = 0; i < oyx.size(); ++i) perm.push_back(4 + i);
  perm.push_back(2);
  for (size_t i = 0; i < nd; ++i) perm.push_back(4 + oyx.size() + i);
  x = x.reshape(r1).expand(e1).permute(perm);
  std::vector<int64_t> ws{1, groups, rcout};
  for (size_t i = 0; i < oyx.size(); ++i) ws.push_back(1);
  ws.push_back(cin);
  ws.insert(ws.end(), HW.begin(), HW.end());
  std::vector<int64_t> axes;
  for (size_t i = 0; i < 1 + oyx.size(); ++i) axes.push_back(-1 - (int64_t)i);
  std::vector<int64_t> out{bs, cout};
  out.insert(out.end(), oyx.begin(), oyx.end());
  Tensor ret = x.mul(w.reshape(ws)).sum(axes, true).reshape(out);
  if (!bias) return ret;
  std::vector<int64_t> bsh{1, -1};
  for (size_t i = 0; i < nd; ++i) bsh.push_back(1);
  return ret.add(bias->reshape(bsh));
}

}  // namespace ts
