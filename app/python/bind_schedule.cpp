// Tensor.schedule_linear() and run_linear(linear): the engine's schedule as tinygrad's LINEAR of CALLs.
#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "app/python/bindings.h"
#include "app/python/convert.h"
#include "engine/realize/realize.h"
#include "engine/schedule/schedule.h"

namespace tsp {

namespace {
// LINEAR(CALL(body, *buffers), ...): a kernel's body is its SINK, a copy's is COPY(src) onto the destination's device;
// a graph call's is CUSTOM_FUNCTION(LINEAR(its calls), arg="graph") over the buffers its calls use, as the reference's
ts::UOpRef linear_uop(const ts::Schedule& s) {
  auto call_of = [](const ts::ScheduleItem& item) {
    ts::UOps src;
    if (item.kind == ts::ScheduleItem::Kind::Kernel) {
      src.push_back(item.ast);
    } else {
      const ts::UOpRef& dst = item.bufs.at(0);
      src.push_back(ts::UOp::make(ts::Ops::COPY, dst->dtype, {item.bufs.at(1)}, std::string(dst->device)));
    }
    src.insert(src.end(), item.bufs.begin(), item.bufs.end());
    return ts::UOp::make(ts::Ops::CALL, ts::dtypes::void_, std::move(src));
  };
  ts::UOps calls;
  size_t g = 0;
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (g < s.graphs.size() && s.graphs[g].begin == i) {
      const ts::GraphCall& gc = s.graphs[g++];
      ts::UOps inner, args;
      for (size_t j = gc.begin; j < gc.end; ++j) {
        inner.push_back(call_of(s.items[j]));
        for (const ts::UOpRef& b : s.items[j].bufs)
          if (std::find(args.begin(), args.end(), b) == args.end()) args.push_back(b);
      }
      ts::UOps src{ts::UOp::make(ts::Ops::CUSTOM_FUNCTION, ts::dtypes::void_, {ts::UOp::make(ts::Ops::LINEAR, ts::dtypes::void_, std::move(inner))},
                                 std::string("graph"))};
      src.insert(src.end(), args.begin(), args.end());
      calls.push_back(ts::UOp::make(ts::Ops::CALL, ts::dtypes::void_, std::move(src)));
      i = gc.end - 1;
      continue;
    }
    calls.push_back(call_of(s.items[i]));
  }
  return ts::UOp::make(ts::Ops::LINEAR, ts::dtypes::void_, std::move(calls));
}
UOpHandle linear_handle(std::shared_ptr<ts::Schedule> s) { return UOpHandle{linear_uop(*s), std::move(s)}; }
ts::Schedule& schedule_of(const UOpHandle& linear, const char* fn) {
  if (!linear.schedule) throw py::type_error(std::string(fn) + " needs a captured LINEAR");
  return *linear.schedule;
}
ts::UOps uop_list(py::handle seq) {
  ts::UOps out;
  for (py::handle h : seq) out.push_back(h.cast<UOpHandle>().u);
  return out;
}

// a JIT input: the buffers a tensor's value lies in (one per device) when it is a view of realized buffers, the view
// over them as text (another view of another buffer of the same size reads the same way) and {name: value} of the
// bound Variables the view reads (a symbolic shrink's bounds, a[:, :vi]); None when it is not
py::object jit_input(const ts::Tensor& t) {
  py::dict vars;
  std::function<bool(const ts::UOp*, py::list&, std::string&)> walk = [&](const ts::UOp* u, py::list& bufs, std::string& view) {
    if (u->op == ts::Ops::MSTACK) {
      view += "MSTACK(" + ts::arg_repr(u->arg) + ")[";
      for (auto& s : u->src)
        if (!walk(s.get(), bufs, view)) return false;
      view += "]";
      return true;
    }
    while (ts::group::movement(u->op)) {
      view += std::string(ts::op_name(u->op)) + ts::arg_repr(u->arg) + " ";
      for (size_t k = 1; k < u->src.size(); ++k)
        for (const auto& x : u->src[k]->toposort())
          if (x->op == ts::Ops::AFTER && x->src.size() == 2 && x->src[0]->is_variable() && x->src[1]->op == ts::Ops::STORE)
            vars[py::str(x->src[0]->as<ts::ParamArg>().name)] = py::int_(x->src[1]->src.at(1)->const_int());
      u = u->src[0].get();
    }
    if (u->op != ts::Ops::BUFFER) return false;
    view += "BUFFER(" + std::to_string(u->numel()) + ", " + u->device + ") ";
    bufs.append(uop_object(u->ref()));
    return true;
  };
  py::list bufs;
  std::string view;
  if (!walk(t.uop().get(), bufs, view)) return py::none();
  return py::make_tuple(bufs, view, vars);
}
}  // namespace

void bind_schedule(py::module_& m, TensorClass& t) {
  // like tinygrad, this already re-points the tensors at their (not yet filled) buffers
  t.def("schedule_linear", [](const ts::Tensor& self, py::args more) {
    std::vector<ts::Tensor> all{self};
    for (py::handle h : more) all.push_back(h.cast<ts::Tensor>());
    std::shared_ptr<ts::Schedule> s = ts::schedule_linear(all);
    if (!s->var_vals.empty()) throw py::value_error("schedule_linear: the schedule has bound Variables");
    return py::cast(UOpHandle{linear_uop(*s), s});
  });
  // (LINEAR, {variable name: bound value}): the values of the bound Variables the calls read
  t.def("linear_with_vars", [](const ts::Tensor& self, py::args more) {
    std::vector<ts::Tensor> all{self};
    for (py::handle h : more) all.push_back(h.cast<ts::Tensor>());
    std::shared_ptr<ts::Schedule> s = ts::schedule_linear(all);
    py::dict vars;
    for (const auto& [name, v] : s->var_vals) vars[py::str(name)] = py::int_(v);
    return py::make_tuple(py::cast(UOpHandle{linear_uop(*s), s}), vars);
  });
  m.def("compile_linear", [](const UOpHandle& linear) {
    if (!linear.schedule) throw py::type_error("compile_linear needs a LINEAR returned by Tensor.linear_with_vars()");
    ts::compile_schedule(*linear.schedule);
    return py::cast(linear);
  }, py::arg("linear"), "compile every kernel of a LINEAR for its device, running none; returns the LINEAR");
  // TinyJit (prelude): capture, replay, prune
  m.def("jit_begin_capture", [] { ts::begin_capture(); });
  // the captured schedules as one LINEAR, each of `inputs` (buffers) replaced by a placeholder of its size that never
  // holds memory (a replay puts that call's input there): (LINEAR, placeholders, how many realizes were captured)
  m.def("jit_end_capture", [](py::handle inputs) {
    auto [s, linears] = ts::end_capture();
    std::unordered_map<const ts::UOp*, ts::UOpRef> sub;
    py::list placeholders;
    const ts::UOps in = uop_list(inputs), written = ts::written_inputs(*s, in);
    for (const ts::UOpRef& b : in) {
      if (std::find(written.begin(), written.end(), b) != written.end()) {  // kept: what the captured results hold (a replay writes the caller's buffer)
        placeholders.append(uop_object(b));
        continue;
      }
      ts::UOpRef p = ts::new_buffer(b->device, b->numel(), b->dtype);
      sub.emplace(b.get(), p);
      placeholders.append(uop_object(p));
    }
    for (auto& it : s->items)
      for (auto& b : it.bufs)
        if (auto f = sub.find(b.get()); f != sub.end()) b = f->second;
    return py::make_tuple(linear_handle(s), placeholders, linears);
  }, py::arg("inputs"));
  m.def("jit_input", &jit_input, py::arg("tensor"));
  m.def("jit_replay", [](const UOpHandle& linear, py::handle from, py::handle to, py::dict var_vals) {
    std::map<std::string, int64_t> vv;
    for (auto [k, v] : var_vals) vv[k.cast<std::string>()] = v.cast<int64_t>();
    ts::replay(schedule_of(linear, "jit_replay"), uop_list(from), uop_list(to), vv);
  }, py::arg("linear"), py::arg("captured_inputs"), py::arg("inputs"), py::arg("var_vals"));
  m.def("jit_compile", [](const UOpHandle& linear, int graph_batch, bool graph_one_kernel) {
    ts::compile_captured(schedule_of(linear, "jit_compile"), graph_batch, graph_one_kernel);
    return linear_handle(linear.schedule);
  }, py::arg("linear"), py::arg("graph_batch") = -1, py::arg("graph_one_kernel") = false,
     "compiles the captured calls' kernels once, for every replay, and batches them into graph calls (graph_batch < 0: "
     "none); returns the LINEAR with its graph calls");
  m.def("jit_free_intermediates", [](const UOpHandle& linear, py::handle keep) {
    return ts::free_intermediates(schedule_of(linear, "jit_free_intermediates"), uop_list(keep));
  }, py::arg("linear"), py::arg("keep"), "frees the buffers the calls only write (the next replay allocates them); bytes freed");
  m.def("jit_prune", [](const UOpHandle& linear, py::handle needed) {
    auto [kept, once] = ts::prune_schedule(schedule_of(linear, "jit_prune"), uop_list(needed));
    return py::make_tuple(linear_handle(kept), linear_handle(once));
  }, py::arg("linear"), py::arg("needed"), "(the calls that read the needed buffers, the ones run once)");
  m.def("run_linear", [](const UOpHandle& linear, py::object var_vals, py::kwargs) {
    if (!linear.schedule) throw py::type_error("run_linear needs a LINEAR returned by Tensor.schedule_linear()");
    if (var_vals.is_none() || py::len(var_vals) == 0) return ts::run_linear(*linear.schedule);
    ts::Schedule s = *linear.schedule;  // the same calls with these Variable values
    for (auto [k, v] : var_vals.cast<py::dict>()) {
      std::string name = py::isinstance<py::str>(k) ? k.cast<std::string>() : py::str(k.attr("expr")).cast<std::string>();
      s.var_vals[name] = v.cast<int64_t>();
    }
    ts::run_linear(s);
  }, py::arg("linear"), py::arg("var_vals") = py::none(), "execute a LINEAR from Tensor.linear_with_vars()");
}

}  // namespace tsp
