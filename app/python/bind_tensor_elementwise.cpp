// Tensor operators and elementwise methods. Python scalars become weak deviceless constants (as_tensor), so
// `x * 2` keeps x's dtype as tinygrad does; unsupported operands return NotImplemented.
#include <pybind11/stl.h>

#include "app/python/bindings.h"
#include "app/python/convert.h"
#include "engine/uop/error.h"

namespace tsp {

namespace {
using ts::Tensor;
using Binary = Tensor (Tensor::*)(const Tensor&) const;
using Unary = Tensor (Tensor::*)() const;

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }
bool is_operand(py::handle h) { return is_tensor(h) || is_py_scalar(h); }

// name(x, reverse=False), __op__(x), __rop__(x) and __iop__(x) (in place: t.assign(t op x), returning t itself);
// reverse=True computes x op self, as __rop__ does
void def_binary(TensorClass& t, const char* name, Binary fn, const char* op = nullptr, const char* rop = nullptr,
                const char* iop = nullptr) {
  if (name)
    t.def(name, [fn](const Tensor& a, py::object b, bool reverse) {
      return reverse ? (as_tensor(b).*fn)(a) : (a.*fn)(as_tensor(b));
    }, py::arg("x"), py::arg("reverse") = false);
  if (op)
    t.def(op, [fn](const Tensor& a, py::object b) -> py::object {
      if (!is_operand(b)) return not_implemented();
      return py::cast((a.*fn)(as_tensor(b)));
    });
  if (rop)
    t.def(rop, [fn](const Tensor& a, py::object b) -> py::object {
      if (!is_operand(b)) return not_implemented();
      return py::cast((as_tensor(b).*fn)(a));
    });
  if (iop)
    t.def(iop, [fn](py::object self, py::object b) -> py::object {
      if (!is_operand(b)) return not_implemented();
      Tensor& a = self.cast<Tensor&>();
      Tensor r = (a.*fn)(as_tensor(b));
      if (r.shape() != a.shape()) r = Tensor::broadcast_to(r, a.shape());
      a.assign(r);
      return self;
    });
}

void def_unary(TensorClass& t, const char* name, Unary fn, const char* dunder = nullptr) {
  t.def(name, [fn](const Tensor& a) { return (a.*fn)(); });
  if (dunder) t.def(dunder, [fn](const Tensor& a) { return (a.*fn)(); });
}

Tensor bitwise_not(const Tensor& a) {
  if (ts::is_bool(a.dtype())) return a.logical_not();
  if (!ts::is_int(a.dtype())) throw ts::Error(ts::dtype_repr(a.dtype()) + " is not supported by ~ (bitwise not)");
  return a.bitwise_xor(Tensor::scalar(-1, a.dtype()));
}

// tinygrad's div(x, rounding_mode): None = true division, "trunc" / "floor" round the quotient
Tensor div(const Tensor& a, const Tensor& b, const py::object& mode) {
  if (mode.is_none()) return a.div(b);
  std::string m = mode.cast<std::string>();
  ts::DType dt = ts::least_upper(a.dtype(), b.dtype());
  if (m == "floor") return ts::is_int(dt) ? a.floordiv(b) : a.div(b).floor();
  if (m == "trunc") return ts::is_int(dt) ? a.div(b).trunc().cast(ts::strong(dt)) : a.div(b).trunc();
  PyErr_SetString(PyExc_RuntimeError, ("rounding_mode must be None, 'trunc' or 'floor', got '" + m + "'").c_str());
  throw py::error_already_set();
}
}  // namespace

void bind_tensor_elementwise(TensorClass& t) {
  def_binary(t, "add", &Tensor::add, "__add__", "__radd__", "__iadd__");
  def_binary(t, "sub", &Tensor::sub, "__sub__", "__rsub__", "__isub__");
  def_binary(t, "mul", &Tensor::mul, "__mul__", "__rmul__", "__imul__");
  def_binary(t, nullptr, &Tensor::div, "__truediv__", "__rtruediv__", "__itruediv__");
  def_binary(t, "floordiv", &Tensor::floordiv, "__floordiv__", "__rfloordiv__", "__ifloordiv__");
  def_binary(t, "mod", &Tensor::mod, "__mod__", "__rmod__", "__imod__");
  def_binary(t, "pow", &Tensor::pow, "__pow__", "__rpow__", "__ipow__");
  def_binary(t, "matmul", &Tensor::matmul, "__matmul__", "__rmatmul__", "__imatmul__");
  def_binary(t, "dot", &Tensor::matmul);
  def_binary(t, "bitwise_and", &Tensor::bitwise_and, "__and__", "__rand__", "__iand__");
  def_binary(t, "bitwise_or", &Tensor::bitwise_or, "__or__", "__ror__", "__ior__");
  def_binary(t, "bitwise_xor", &Tensor::bitwise_xor, "__xor__", "__rxor__", "__ixor__");
  def_binary(t, "threefry", &Tensor::threefry);
  def_binary(t, "maximum", &Tensor::maximum);
  def_binary(t, "minimum", &Tensor::minimum);
  // comparisons: python reflects them itself (2 < t calls t.__gt__(2))
  def_binary(t, "lt", &Tensor::lt, "__lt__");
  def_binary(t, "le", &Tensor::le, "__le__");
  def_binary(t, "gt", &Tensor::gt, "__gt__");
  def_binary(t, "ge", &Tensor::ge, "__ge__");
  def_binary(t, "eq", &Tensor::eq, "__eq__");
  def_binary(t, "ne", &Tensor::ne, "__ne__");
  t.def("div", [](const Tensor& a, py::object b, bool reverse, py::object mode) {
    return reverse ? div(as_tensor(b), a, mode) : div(a, as_tensor(b), mode);
  }, py::arg("x"), py::arg("reverse") = false, py::arg("rounding_mode") = py::none());
  // lshift / rshift are the SHL / SHR ALU ops (tinygrad's _binop), reverse=True shifts x by self
  for (auto [name, op, dunder, rdunder, idunder] :
       {std::tuple{"lshift", ts::Ops::SHL, "__lshift__", "__rlshift__", "__ilshift__"},
        std::tuple{"rshift", ts::Ops::SHR, "__rshift__", "__rrshift__", "__irshift__"}}) {
    t.def(name, [op](const Tensor& a, py::object b, bool reverse) {
      return reverse ? as_tensor(b).alu(op, a) : a.alu(op, as_tensor(b));
    }, py::arg("x"), py::arg("reverse") = false);
    t.def(dunder, [op](const Tensor& a, py::object b) -> py::object {
      if (!is_operand(b)) return not_implemented();
      return py::cast(a.alu(op, as_tensor(b)));
    });
    t.def(rdunder, [op](const Tensor& a, py::object b) -> py::object {
      if (!is_operand(b)) return not_implemented();
      return py::cast(as_tensor(b).alu(op, a));
    });
    t.def(idunder, [op](py::object self, py::object b) -> py::object {
      if (!is_operand(b)) return not_implemented();
      Tensor& a = self.cast<Tensor&>();
      Tensor r = a.alu(op, as_tensor(b));
      if (r.shape() != a.shape()) r = Tensor::broadcast_to(r, a.shape());
      a.assign(r);
      return self;
    });
  }
  t.def("where", [](const Tensor& c, py::object x, py::object y) {
          if (!ts::is_bool(c.dtype()))  // (a RuntimeError, as the reference's)
            throw ts::Error("where: the condition must be bool, got " + ts::dtype_repr(c.dtype()));
          return c.where(as_tensor(x), as_tensor(y));
        },
        py::arg("x"), py::arg("y"));

  def_unary(t, "neg", &Tensor::neg, "__neg__");
  def_unary(t, "abs", &Tensor::abs, "__abs__");
  t.def("__pos__", [](const Tensor& a) { return a; });
  t.def("bitwise_not", &bitwise_not);
  t.def("__invert__", &bitwise_not);
  def_unary(t, "logical_not", &Tensor::logical_not);
  def_unary(t, "reciprocal", &Tensor::reciprocal);
  def_unary(t, "sqrt", &Tensor::sqrt);
  def_unary(t, "rsqrt", &Tensor::rsqrt);
  def_unary(t, "exp", &Tensor::exp);
  def_unary(t, "exp2", &Tensor::exp2);
  def_unary(t, "log", &Tensor::log);
  def_unary(t, "log2", &Tensor::log2);
  def_unary(t, "sin", &Tensor::sin);
  def_unary(t, "cos", &Tensor::cos);
  def_unary(t, "tan", &Tensor::tan);
  def_unary(t, "trunc", &Tensor::trunc);
  def_unary(t, "floor", &Tensor::floor);
  def_unary(t, "ceil", &Tensor::ceil);
  def_unary(t, "round", &Tensor::round);
  def_unary(t, "sign", &Tensor::sign);
  def_unary(t, "relu", &Tensor::relu);
  def_unary(t, "sigmoid", &Tensor::sigmoid);
  def_unary(t, "tanh", &Tensor::tanh);
  def_unary(t, "gelu", &Tensor::gelu);
  def_unary(t, "silu", &Tensor::silu);
  def_unary(t, "swish", &Tensor::silu);
  def_unary(t, "square", &Tensor::square);
  t.def("leaky_relu", &Tensor::leaky_relu, py::arg("neg_slope") = 0.01);
  auto clip = [](const Tensor& a, std::optional<double> lo, std::optional<double> hi) {
    if (!lo && !hi) {  // the reference raises RuntimeError here
      PyErr_SetString(PyExc_RuntimeError, "at least one of 'min_' or 'max_' must not be None");
      throw py::error_already_set();
    }
    return a.clip(lo, hi);
  };
  t.def("clip", clip, py::arg("min_") = py::none(), py::arg("max_") = py::none());
  t.def("clamp", clip, py::arg("min_") = py::none(), py::arg("max_") = py::none());
  t.def("cast", [](const Tensor& a, py::object dtype) {
    ts::DType dt = to_dtype(dtype);
    return dt == a.dtype() ? a : a.cast(dt);
  }, py::arg("dtype"));
  t.def("bitcast", [](const Tensor& a, py::object dtype) { return a.bitcast(to_dtype(dtype)); }, py::arg("dtype"));
}

}  // namespace tsp
