#include "engine/tensor/gradient.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <source_location>
#include <algorithm>

#include "engine/uop/error.h"

#include "engine/uop/rewrite.h"

namespace ts {
namespace {

using Grads = std::vector<std::optional<Tensor>>;  // one entry per source of the node; nullopt: no gradient flows

// A gradient rule: the ops it applies to, the function from the gradient flowing into `ret` (ctx) to the gradients
// of ret's sources, and the rule as a tracer sees it ("gradient of MUL" at the rule's line).
struct GradRule {
  std::vector<Ops> ops;
  std::function<Grads(const Tensor& ctx, const UOpRef& ret)> fn;
  Rule traced;
};
GradRule grad_rule(std::initializer_list<Ops> ops, std::function<Grads(const Tensor&, const UOpRef&)> fn,
                   std::source_location loc = std::source_location::current()) {
  std::string name = "gradient of";
  for (Ops o : ops) name += " " + std::string(op_name(o));
  return GradRule{std::vector<Ops>(ops), std::move(fn), Rule{name, loc, std::vector<Ops>(ops), nullptr}};
}

Tensor T(const UOpRef& u) { return Tensor(u); }
Tensor pyf(double v) { return Tensor::scalar(v, dtypes::weakfloat); }
Tensor pyi(int64_t v) { return Tensor::scalar(static_cast<double>(v), dtypes::weakint); }
// a constant with t's dtype (or dt) broadcast to t's shape, without a device
Tensor const_like(const Tensor& t, double v, DType dt = nullptr) {
  return Tensor::broadcast_to(Tensor(uconst(dt ? dt : t.dtype(), v)), t.shape());
}
Shape src_shape(const UOpRef& ret, size_t i = 0) { return ret->src.at(i)->shape; }
void only_plain_movement(const UOpRef& ret) {
  if (ret->src.size() != 1) throw Error(std::string("gradient: ") + std::string(op_name(ret->op)) + " with a symbolic size has no gradient");
}

Grads reduce_gradient(const Tensor& ctx, const UOpRef& ret) {
  const ReduceArg& ra = ret->as<ReduceArg>();
  Tensor x = T(ret->src[0]), r = T(ret);
  std::vector<int64_t> axes(ra.n);
  std::iota(axes.begin(), axes.end(), 0);
  switch (ra.op) {
    case Ops::ADD: return {Tensor::broadcast_to(ctx, x.shape())};
    case Ops::MAX: {
      // the gradient goes to the maximal elements, shared equally between ties
      Tensor mask = x.eq(r).cast(ctx.dtype());
      return {mask.div(mask.rop(Ops::ADD, axes)).mul(ctx)};
    }
    case Ops::MUL: {
      // d(prod x)/dx_j is the product of the others: ret/x_j when x_j != 0; with one zero, the zero's gradient is the
      // product of the rest; with more, every gradient is 0
      Tensor is_zero = x.eq(pyi(0));
      Tensor safe_x = is_zero.where(pyi(1), x);
      Tensor zero_count = is_zero.cast(sum_acc(is_zero.dtype())).rop(Ops::ADD, axes);
      return {ctx.mul(is_zero.where(zero_count.eq(pyi(1)).where(safe_x.rop(Ops::MUL, axes), pyi(0)), r.div(safe_x)))};
    }
    default: throw Error(std::string("gradient: REDUCE ") + std::string(op_name(ra.op)) + " has no gradient");
  }
}

// The rules, one per op family; first match wins.
const std::vector<GradRule>& gradient_rules() {
  static const std::vector<GradRule> rules = {
      grad_rule({Ops::CAST}, [](const Tensor& ctx, const UOpRef& ret) -> Grads { return {ctx.cast(ret->src[0]->dtype)}; }),
      grad_rule({Ops::RECIPROCAL}, [](const Tensor& ctx, const UOpRef& ret) -> Grads { return {ctx.neg().mul(T(ret)).mul(T(ret))}; }),
      grad_rule({Ops::SIN}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        return {pyf(M_PI / 2).sub(T(ret->src[0])).sin().mul(ctx)};
      }),
      grad_rule({Ops::LOG2}, [](const Tensor& ctx, const UOpRef& ret) -> Grads { return {ctx.div(T(ret->src[0]).mul(pyf(std::log(2.0))))}; }),
      grad_rule({Ops::EXP2}, [](const Tensor& ctx, const UOpRef& ret) -> Grads { return {T(ret).mul(ctx).mul(pyf(std::log(2.0)))}; }),
      grad_rule({Ops::SQRT}, [](const Tensor& ctx, const UOpRef& ret) -> Grads { return {ctx.div(T(ret).mul(pyi(2)))}; }),
      grad_rule({Ops::TRUNC}, [](const Tensor& ctx, const UOpRef&) -> Grads { return {const_like(ctx, 0)}; }),
      grad_rule({Ops::CMPLT, Ops::CMPNE}, [](const Tensor&, const UOpRef&) -> Grads { return {std::nullopt, std::nullopt}; }),
      grad_rule({Ops::ADD}, [](const Tensor& ctx, const UOpRef&) -> Grads { return {ctx, ctx}; }),
      grad_rule({Ops::POW}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        Tensor b = T(ret->src[0]), e = T(ret->src[1]), r = T(ret);
        Tensor db = ctx.mul(e.eq(pyi(0)).where(e, e.mul(b.pow(e.sub(pyi(1))))));
        Tensor de = ctx.mul(b.eq(pyi(0)).where(e.lt(pyi(0)).where(const_like(r, -std::numeric_limits<double>::infinity()), pyi(0)),
                                               r.mul(b.log2()).mul(pyf(std::log(2.0)))));
        return {db, de};
      }),
      grad_rule({Ops::MAX}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        // ties share the gradient
        Tensor x = T(ret->src[0]), y = T(ret->src[1]);
        Tensor half = x.eq(y).where(ctx.mul(pyf(0.5)), pyi(0));
        return {x.gt(y).where(ctx, half), x.lt(y).where(ctx, half)};
      }),
      grad_rule({Ops::MUL}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        return {T(ret->src[1]).mul(ctx), T(ret->src[0]).mul(ctx)};
      }),
      grad_rule({Ops::WHERE}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        Tensor c = T(ret->src[0]);
        return {std::nullopt, c.where(ctx, const_like(ctx, 0)), c.where(const_like(ctx, 0), ctx)};
      }),
      grad_rule({Ops::REDUCE}, reduce_gradient),
      grad_rule({Ops::CONTIGUOUS}, [](const Tensor& ctx, const UOpRef&) -> Grads { return {ctx}; }),
      grad_rule({Ops::CONTIGUOUS_BACKWARD}, [](const Tensor& ctx, const UOpRef&) -> Grads { return {ctx.contiguous()}; }),
      grad_rule({Ops::RESHAPE}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        only_plain_movement(ret);
        return {ctx.reshape(src_shape(ret))};
      }),
      // EXPAND adds dims on the left: the generic sum back to the source's shape below does the work
      grad_rule({Ops::EXPAND}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        only_plain_movement(ret);
        return {ctx};
      }),
      grad_rule({Ops::PAD}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        only_plain_movement(ret);
        const Shape& a = ret->as<Shape>();
        Shape s = src_shape(ret);
        std::vector<std::pair<int64_t, int64_t>> b;
        for (size_t i = 0; i < s.size(); ++i) b.push_back({a[2 * i], a[2 * i] + s[i]});
        return {ctx.shrink(b)};
      }),
      grad_rule({Ops::SHRINK}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        only_plain_movement(ret);
        const Shape& a = ret->as<Shape>();
        Shape s = src_shape(ret);
        std::vector<std::pair<int64_t, int64_t>> p;
        for (size_t i = 0; i < s.size(); ++i) p.push_back({a[2 * i], s[i] - a[2 * i + 1]});
        return {ctx.pad(p)};
      }),
      grad_rule({Ops::PERMUTE}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        const Shape& order = ret->as<Shape>();
        std::vector<int64_t> inv(order.size());
        for (size_t i = 0; i < order.size(); ++i) inv[order[i]] = static_cast<int64_t>(i);
        return {ctx.permute(inv)};
      }),
      grad_rule({Ops::FLIP}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        const Shape& f = ret->as<Shape>();
        std::vector<int64_t> axes;
        for (size_t i = 0; i < f.size(); ++i) if (f[i]) axes.push_back(static_cast<int64_t>(i));
        return {ctx.flip(axes)};
      }),
      grad_rule({Ops::COPY}, [](const Tensor& ctx, const UOpRef& ret) -> Grads { return {ctx.to(ret->src[0]->device)}; }),
      // a multi-device value: each shard gets its part of the gradient on its own device; of a whole copy on each
      // device the first takes it (the reference reads a copied value from its first device)
      grad_rule({Ops::MSTACK}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        Grads out;
        for (size_t i = 0; i < ret->src.size(); ++i) {
          const std::string& d = ret->src[i]->device;
          if (!ret->is<int64_t>()) {
            out.push_back(i == 0 ? std::optional<Tensor>(ctx.to(d)) : std::nullopt);
            continue;
          }
          const size_t a = static_cast<size_t>(ret->as<int64_t>());
          const int64_t sz = ret->src[i]->shape[a];
          std::vector<std::pair<int64_t, int64_t>> part;
          for (size_t k = 0; k < ret->shape.size(); ++k)
            part.push_back(k == a ? std::pair<int64_t, int64_t>{static_cast<int64_t>(i) * sz, static_cast<int64_t>(i + 1) * sz} : std::pair<int64_t, int64_t>{0, ret->shape[k]});
          out.push_back(ctx.shrink(part).to(d));
        }
        return out;
      }),
      // an assign or a clone: the gradient passes through to the stored value
      grad_rule({Ops::AFTER}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        if (ret->src.size() != 2 || ret->src[1]->op != Ops::STORE) throw Error("gradient: AFTER without a STORE has no gradient");
        return {std::nullopt, ctx};
      }),
      grad_rule({Ops::STORE}, [](const Tensor& ctx, const UOpRef& ret) -> Grads {
        if (ret->src.size() != 2) throw Error("gradient: STORE has no gradient");
        return {std::nullopt, ctx};
      }),
      grad_rule({Ops::BITCAST}, [](const Tensor&, const UOpRef&) -> Grads { return {std::nullopt}; }),
  };
  return rules;
}

const GradRule* find_rule(Ops op) {
  for (auto& r : gradient_rules())
    for (Ops o : r.ops)
      if (o == op) return &r;
  return nullptr;
}


// the reference's broadcast_axes: out axes that were added on the left or expanded from 1
std::vector<int64_t> broadcast_axes(const Shape& src, const Shape& out) {
  if (out.size() < src.size()) throw Error("gradient: cannot sum a gradient of a smaller rank back to its source");
  size_t nleft = out.size() - src.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < nleft; ++i) axes.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i] == 1 && out[nleft + i] != 1) axes.push_back(static_cast<int64_t>(nleft + i));
  return axes;
}

std::string shape_text(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

std::unordered_map<const UOp*, Tensor> compute_gradient(const UOpRef& root, const Tensor& root_grad,
                                                        const std::unordered_set<const UOp*>& targets) {
  // the nodes on a path from root to a target, in topological order (sources first)
  std::vector<UOpRef> topo = root->toposort();
  std::unordered_map<const UOp*, bool> on_path;
  std::vector<UOpRef> walk;
  for (auto& u : topo) {
    bool p = false;
    for (auto& s : u->src) p = p || on_path[s.get()] || targets.count(s.get());
    on_path[u.get()] = p;
    if (p && u->op != Ops::DETACH) walk.push_back(u);
  }
  std::unordered_map<const UOp*, Tensor> grads;
  grads.emplace(root.get(), root_grad);
  // tracing: the pass is the gradient wavefront, SINK(gradients not yet propagated + the targets' gradients), one match
  // per rule applied; its root is the seed gradient and its result the targets' gradients
  RewriteListener* listener = rewrite_listener();
  std::vector<const UOp*> order{root.get()};
  std::unordered_set<const UOp*> done, in_walk;
  if (listener)
    for (auto& u : walk) in_walk.insert(u.get());
  auto wavefront = [&] {
    UOps src;
    for (const UOp* k : order)
      if (targets.count(k) || (in_walk.count(k) && !done.count(k))) src.push_back(grads.at(k).uop());
    return UOp::make(Ops::SINK, dtypes::void_, src);
  };
  UOpRef front;
  if (listener) listener->on_pass_begin("gradient", front = wavefront());
  for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
    const UOpRef& t0 = *it;
    auto g = grads.find(t0.get());
    if (g == grads.end()) continue;
    const GradRule* rule = find_rule(t0->op);
    if (!rule) throw Error("gradient: " + std::string(op_name(t0->op)) + " of shape " + shape_text(t0->shape) + " has no gradient");
    Tensor ctx = g->second;
    Grads lg = rule->fn(ctx, t0);
    if (lg.size() != t0->src.size())
      throw Error("gradient: the rule for " + std::string(op_name(t0->op)) + " gave " + std::to_string(lg.size()) + " gradients for " +
                  std::to_string(t0->src.size()) + " sources");
    for (size_t i = 0; i < lg.size(); ++i) {
      if (!lg[i]) continue;
      const UOpRef& k = t0->src[i];
      Tensor v = *lg[i];
      // a source broadcast into its consumer gets the gradient summed back to its own shape
      if (k->has_shape && v.uop()->has_shape && k->shape != v.shape()) {
        DType dt = v.dtype();
        v = v.cast(sum_acc(dt)).rop(Ops::ADD, broadcast_axes(k->shape, v.shape())).reshape(k->shape).cast(dt);
      }
      auto have = grads.find(k.get());
      if (have != grads.end()) have->second = have->second.add(v);
      else {
        grads.emplace(k.get(), v);
        order.push_back(k.get());
      }
    }
    if (listener) {
      done.insert(t0.get());
      UOpRef next = wavefront();
      listener->on_match(front, next, rule->traced);
      front = next;
    }
  }
  if (listener) {
    UOps out;
    for (const UOp* k : order)
      if (targets.count(k)) out.push_back(grads.at(k).uop());
    listener->on_pass_end("gradient", UOp::make(Ops::SINK, dtypes::void_, out));
  }
  return grads;
}

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets, const std::optional<Tensor>& grad) const {
  if (!grad && !shape().empty())
    throw Error("backward: when no gradient is given, backward must be called on a scalar tensor, not one of shape " + shape_text(shape()),
                Error::Kind::Assertion);
  if (!is_float(dtype())) throw Error("backward: only float tensors have a gradient, this one is " + dtype_repr(dtype()));
  for (auto& t : targets) {
    if (!is_float(t.dtype())) throw Error("gradient: only float tensors have a gradient, a target is " + dtype_repr(t.dtype()));
    if (is_weak(t.dtype())) throw Error("gradient: cannot take the gradient with respect to a python constant");
  }
  if (grad && grad->shape() != shape())
    throw Error("backward: the gradient's shape " + shape_text(grad->shape()) + " does not match the tensor's shape " + shape_text(shape()));
  Tensor seed = grad ? *grad : const_like(*this, 1.0);
  std::unordered_set<const UOp*> tset;
  for (auto& t : targets) tset.insert(t.uop().get());
  // its own trace context: the window shows the backward graph as it is built, rule by rule
  std::shared_ptr<void> scope = trace_scope_hook() ? trace_scope_hook()("Gradient") : nullptr;
  auto grads = compute_gradient(uop(), seed, tset);
  std::vector<Tensor> out;
  UOps graph;
  for (auto& t : targets) {
    auto it = grads.find(t.uop().get());
    out.push_back(it != grads.end() ? it->second : const_like(t, 0));
    graph.push_back(out.back().uop());
  }
  if (scope && trace_graph_hook()) trace_graph_hook()(graph);
  return out;
}

Tensor& Tensor::backward(const std::optional<Tensor>& grad) {
  std::unordered_set<const UOp*> in_graph;
  for (auto& u : uop()->toposort()) in_graph.insert(u.get());
  // every live floating-point tensor on a device that this one depends on, in creation order
  std::vector<std::shared_ptr<TensorData>> need;
  for (auto& d : live_tensors())
    if (in_graph.count(d->uop.get()) && is_float(d->uop->dtype) && !d->uop->device.empty()) need.push_back(d);
  std::sort(need.begin(), need.end(), [](const auto& a, const auto& b) { return a->serial < b->serial; });
  std::vector<Tensor> targets;
  for (auto& d : need) targets.push_back(Tensor(d));
  std::vector<Tensor> gs = gradient(targets, grad);
  for (size_t i = 0; i < targets.size(); ++i) {
    Tensor g = gs[i];
    Tensor& t = targets[i];
    if (g.shape() != t.shape())
      throw Error("backward: gradient shape " + shape_text(g.shape()) + " does not match tensor shape " + shape_text(t.shape()));
    if (g.device().empty()) g = g.clone(t.device());
    if (!t.data_ptr()->grad) t.data_ptr()->grad = g.data_ptr();
    else {
      Tensor old(t.data_ptr()->grad);
      old.assign(old.add(g.to(old.device())));
    }
  }
  return *this;
}

std::optional<Tensor> Tensor::grad() const {
  if (!d_->grad) return std::nullopt;
  return Tensor(d_->grad);
}
void Tensor::set_grad(const std::optional<Tensor>& g) { d_->grad = g ? g->data_ptr() : nullptr; }

}  // namespace ts
