// UOp: a read-only python view of an engine node (op, dtype, src, arg, base, shape, device).
#include <functional>
#include <sstream>
#include <unordered_map>

#include "app/python/bindings.h"
#include "app/python/convert.h"
#include "engine/schedule/multi.h"
#include "engine/uop/rewrite.h"
#include "engine/uop/symbolic.h"

namespace tsp {

py::object uop_object(const ts::UOpRef& u) {
  if (!u) return py::none();
  return py::cast(UOpHandle{u});
}

namespace {
struct ArgVisitor {
  const ts::Arg& arg;
  py::object operator()(std::monostate) const { return py::none(); }
  py::object operator()(int64_t v) const { return py::int_(v); }
  py::object operator()(double v) const { return py::float_(v); }
  py::object operator()(bool v) const { return py::bool_(v); }
  py::object operator()(const std::string& v) const { return py::str(v); }
  py::object operator()(const ts::Shape& v) const { return shape_tuple(v); }
  py::object operator()(const ts::ReduceArg& v) const { return py::make_tuple(ops_object(v.op), v.n); }
  py::object operator()(const ts::RangeArg& v) const {
    return py::make_tuple(v.id, py::str(std::string(ts::axis_type_name(v.type))));
  }
  template <class T> py::object operator()(const T&) const { return py::str(ts::arg_repr(arg)); }
};

py::object arg_object(const ts::Arg& a) { return std::visit(ArgVisitor{a}, a); }

// a UOp's binary op with another UOp or a Python number (a const of the UOp's dtype; a float beside an int UOp is a
// weak float), the number first when reflected
py::object uop_alu(ts::Ops op, const ts::UOpRef& u, py::object other, bool reflected) {
  ts::UOpRef o;
  if (py::isinstance<UOpHandle>(other)) o = other.cast<const UOpHandle&>().u;
  else if (py::isinstance<py::bool_>(other)) o = ts::uconst(u->dtype, other.cast<bool>() ? 1 : 0);
  else if (py::isinstance<py::int_>(other)) o = ts::is_float(u->dtype) ? ts::uconst(u->dtype, other.cast<double>()) : ts::uconst_int(u->dtype, other.cast<int64_t>());
  else if (py::isinstance<py::float_>(other)) o = ts::uconst(ts::is_float(u->dtype) ? u->dtype : ts::dtypes::weakfloat, other.cast<double>());
  else return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return uop_object(reflected ? ts::alu(op, o, u) : ts::alu(op, u, o));
}

// tinygrad-like tree print; shared nodes are printed once and then referred to as x<N>
std::string uop_repr(const ts::UOpRef& root) {
  std::unordered_map<const ts::UOp*, int> uses, names;
  for (const auto& n : root->toposort())
    for (const auto& s : n->src) uses[s.get()]++;
  std::ostringstream os;
  int lines = 0;
  std::function<void(const ts::UOpRef&, int)> rec = [&](const ts::UOpRef& u, int depth) {
    std::string pad(depth * 2, ' ');
    if (auto it = names.find(u.get()); it != names.end()) {
      os << pad << "x" << it->second;
      return;
    }
    if (++lines > 400) {
      os << pad << "...";
      return;
    }
    os << pad;
    if (uses[u.get()] > 1) {
      int id = static_cast<int>(names.size());
      names[u.get()] = id;
      os << "x" << id << ":=";
    }
    os << "UOp(Ops." << ts::op_name(u->op) << ", " << ts::dtype_repr(u->dtype) << ", arg=" << ts::arg_repr(u->arg);
    if (u->tag >= 0) os << ", tag=" << u->tag;
    os << ", src=(";
    if (!u->src.empty()) os << "\n";
    for (const auto& s : u->src) {
      rec(s, depth + 1);
      os << ",\n";
    }
    if (!u->src.empty()) os << pad;
    os << "))";
  };
  rec(root, 0);
  return os.str();
}
}  // namespace

void bind_uop(py::module_& m) {
  m.def("_op_names", [] {
    py::list names;
    for (int i = 0; i <= static_cast<int>(ts::Ops::DEFINE_ACC); ++i) names.append(std::string(ts::op_name(static_cast<ts::Ops>(i))));
    return names;
  }, "the engine's Ops in declaration order (the python Ops enum is built from this)");

  py::class_<UOpHandle>(m, "UOp")
      .def_property_readonly("op", [](const UOpHandle& h) { return ops_object(h.u->op); })
      .def_property_readonly("dtype", [](const UOpHandle& h) { return dtype_object(h.u->dtype); })
      .def_property_readonly("src", [](const UOpHandle& h) {
        py::tuple t(h.u->src.size());
        for (size_t i = 0; i < h.u->src.size(); ++i) t[i] = uop_object(h.u->src[i]);
        return t;
      })
      .def_property_readonly("arg", [](const UOpHandle& h) { return arg_object(h.u->arg); })
      .def_property_readonly("tag", [](const UOpHandle& h) -> py::object {
        if (h.u->tag < 0) return py::none();
        return py::int_(h.u->tag);
      })
      .def_property_readonly("base", [](const UOpHandle& h) { return uop_object(h.u->base()->ref()); })
      // the reference's: its base is a BUFFER that has memory
      .def_property_readonly("is_realized", [](const UOpHandle& h) {
        const ts::UOp* b = h.u->base();
        return b->op == ts::Ops::BUFFER && b->buffer != nullptr;
      })
      .def_property_readonly("shape", [](const UOpHandle& h) -> py::object {
        if (!h.u->has_shape) return py::none();
        return shape_tuple(h.u->shape);
      })
      .def_property_readonly("device", [](const UOpHandle& h) { return device_object(h.u->device); })
      // the axis a multi-device value is split along (None: whole on each device, or one device)
      .def_property_readonly("axis", [](const UOpHandle& h) -> py::object {
        auto a = ts::multi_axis(h.u);
        return a ? py::object(py::int_(*a)) : py::object(py::none());
      })
      .def_property_readonly("size", [](const UOpHandle& h) { return h.u->numel(); })
      .def_property_readonly("id", [](const UOpHandle& h) { return h.u->id; })
      .def("numel", [](const UOpHandle& h) { return h.u->numel(); })
      .def("toposort", [](const UOpHandle& h) {
        py::list out;
        for (const auto& n : h.u->toposort()) out.append(uop_object(n));
        return out;
      })
      .def("render", [](const UOpHandle& h) { return h.u->render(); })
      .def_property_readonly("vmin", [](const UOpHandle& h) { return h.u->vmin(); })
      .def_property_readonly("vmax", [](const UOpHandle& h) { return h.u->vmax(); })
      // Variables: a BUFFER in AddrSpace::ALU with a name; bound = AFTER(var, STORE(var, value))
      .def_property_readonly("expr", [](const UOpHandle& h) -> py::object {
        const ts::UOp* v = h.u->op == ts::Ops::AFTER ? h.u->src.at(0).get() : h.u.get();
        if (!v->is<ts::ParamArg>()) return py::none();
        return py::str(v->as<ts::ParamArg>().name);
      })
      .def("bind", [](const UOpHandle& h, int64_t value) { return uop_object(ts::bind_variable(h.u, value)); }, py::arg("val"))
      // the int a symbolic expression (a shape with Variables) takes for these Variables' values (by name)
      .def("sym_infer", [](const UOpHandle& h, py::dict var_vals) {
        std::unordered_map<const ts::UOp*, ts::UOpRef> sub;
        for (const auto& u : h.u->toposort()) {
          const ts::UOp* v = u->op == ts::Ops::AFTER && !u->src.empty() && u->src[0]->is_variable() ? u->src[0].get() : u.get();
          if (!v->is_variable()) continue;
          const std::string& name = v->as<ts::ParamArg>().name;
          if (!var_vals.contains(name)) throw py::type_error("sym_infer: no value for Variable " + name);
          sub[u.get()] = ts::uconst_int(u->dtype, var_vals[py::str(name)].cast<int64_t>());
        }
        const ts::UOpRef r = ts::simplify(ts::substitute(h.u, sub));
        if (r->op != ts::Ops::CONST) throw py::value_error("sym_infer: " + h.u->render() + " is not a number for these values");
        return r->const_int();
      }, py::arg("var_vals"))
      .def("unbind", [](const UOpHandle& h) {
        if (h.u->op != ts::Ops::AFTER || h.u->src.size() < 2 || h.u->src[1]->op != ts::Ops::STORE)
          throw py::value_error("unbind: not a bound Variable");
        return py::make_tuple(uop_object(h.u->src[0]), h.u->src[1]->src.at(1)->const_int());
      })
      // building values, as the reference's UOp: UOp.const(2.0) (a weak float), .cast(dtype), and arithmetic with
      // UOps and Python numbers (a Variable's bounds: st + N, 2 * v); the result is a new UOp (a graph a Tensor
      // takes, or a symbolic bound a shrink takes)
      .def_static("const", [](py::object b, py::object dtype) -> py::object {
        const ts::DType dt = to_dtype_or_null(dtype);
        if (py::isinstance<UOpHandle>(b)) {
          const ts::UOpRef& u = b.cast<const UOpHandle&>().u;
          return uop_object(dt ? ts::ucast(u, dt) : u);
        }
        if (py::isinstance<py::bool_>(b)) return uop_object(dt ? ts::uconst(dt, b.cast<bool>() ? 1 : 0) : ts::uconst_bool(b.cast<bool>()));
        if (py::isinstance<py::int_>(b)) return uop_object(ts::uconst_int(dt ? dt : ts::dtypes::weakint, b.cast<int64_t>()));
        if (py::isinstance<py::float_>(b)) return uop_object(ts::uconst(dt ? dt : ts::dtypes::weakfloat, b.cast<double>()));
        throw py::type_error("UOp.const: " + std::string(py::repr(b)) + " is no bool, int, float or UOp");
      }, py::arg("b"), py::arg("dtype") = py::none())
      .def("cast", [](const UOpHandle& h, py::object dtype) { return uop_object(ts::ucast(h.u, to_dtype(dtype))); }, py::arg("dtype"))
      .def("__add__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::ADD, h.u, o, false); }, py::is_operator())
      .def("__radd__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::ADD, h.u, o, true); }, py::is_operator())
      .def("__sub__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::SUB, h.u, o, false); }, py::is_operator())
      .def("__rsub__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::SUB, h.u, o, true); }, py::is_operator())
      .def("__mul__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::MUL, h.u, o, false); }, py::is_operator())
      .def("__rmul__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::MUL, h.u, o, true); }, py::is_operator())
      .def("__floordiv__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::FLOORDIV, h.u, o, false); }, py::is_operator())
      .def("__mod__", [](const UOpHandle& h, py::object o) { return uop_alu(ts::Ops::FLOORMOD, h.u, o, false); }, py::is_operator())
      .def("__neg__", [](const UOpHandle& h) { return uop_alu(ts::Ops::MUL, h.u, py::int_(-1), false); })
      .def("simplify", [](const UOpHandle& h) { return uop_object(ts::simplify(h.u)); })
      .def("__eq__", [](const UOpHandle& a, py::object b) -> py::object {
        if (!py::isinstance<UOpHandle>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(a.u.get() == b.cast<const UOpHandle&>().u.get());
      })
      .def("__ne__", [](const UOpHandle& a, py::object b) -> py::object {
        if (!py::isinstance<UOpHandle>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(a.u.get() != b.cast<const UOpHandle&>().u.get());
      })
      .def("__hash__", [](const UOpHandle& h) { return static_cast<py::ssize_t>(reinterpret_cast<uintptr_t>(h.u.get()) >> 4); })
      .def("__repr__", [](const UOpHandle& h) { return uop_repr(h.u); })
      .def("__str__", [](const UOpHandle& h) { return uop_repr(h.u); });
}

}  // namespace tsp
