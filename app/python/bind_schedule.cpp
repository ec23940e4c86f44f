// Tensor.schedule_linear() and run_linear(linear): the engine's schedule as tinygrad's LINEAR of CALLs.
#include "app/python/bindings.h"
#include "app/python/convert.h"
#include "engine/realize/realize.h"
#include "engine/schedule/schedule.h"

namespace tsp {

namespace {
// LINEAR(CALL(body, *buffers), ...): a kernel's body is its SINK, a copy's is COPY(src) onto the destination's device
ts::UOpRef linear_uop(const ts::Schedule& s) {
  ts::UOps calls;
  for (const auto& item : s.items) {
    ts::UOps src;
    if (item.kind == ts::ScheduleItem::Kind::Kernel) {
      src.push_back(item.ast);
    } else {
      const ts::UOpRef& dst = item.bufs.at(0);
      src.push_back(ts::UOp::make(ts::Ops::COPY, dst->dtype, {item.bufs.at(1)}, std::string(dst->device)));
    }
    src.insert(src.end(), item.bufs.begin(), item.bufs.end());
    calls.push_back(ts::UOp::make(ts::Ops::CALL, ts::dtypes::void_, std::move(src)));
  }
  return ts::UOp::make(ts::Ops::LINEAR, ts::dtypes::void_, std::move(calls));
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
