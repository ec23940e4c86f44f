// Tensor: construction from python data, creation functions, properties, effects (realize, assign) and reads.
#include <cmath>
#include <algorithm>
#include <unordered_set>
#include <cstdio>

#include "app/python/bindings.h"
#include "engine/uop/error.h"
#include "app/python/convert.h"

namespace tsp {

namespace {
using ts::Tensor;

bool is_numpy_ndarray(py::handle h) { return py::str(py::type::of(h)).cast<std::string>() == "<class 'numpy.ndarray'>"; }

// a C-contiguous array's memory as a PYTHON buffer, read when the tensor is realized (as the reference's NPY buffer);
// the buffer keeps the array alive
Tensor from_array(py::object arr, py::handle shape, py::handle dtype, py::handle device) {
  py::buffer_info info = py::buffer(arr).request();
  ts::DType dt = to_dtype(dtype);
  ts::Shape sh = int_list(shape);
  size_t nbytes = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
  if (static_cast<size_t>(info.itemsize) != static_cast<size_t>(dt->itemsize()))
    throw py::value_error("array items of " + std::to_string(info.itemsize) + " bytes do not hold " + ts::dtype_repr(dt));
  auto* keep = new py::object(std::move(arr));
  return Tensor::from_memory(info.ptr, nbytes, sh, dt, device_arg(device), [keep] {
    if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing left to release
    py::gil_scoped_acquire gil;
    delete keep;
  });
}

// tinygrad's Tensor.__init__: constants stay deviceless and weak (cast if a dtype is given), lists become a
// PYTHON buffer copied to the device
Tensor make_tensor(py::handle data, py::handle device, py::handle dtype) {
  ts::DType dt = to_dtype_or_null(dtype);
  std::string dev = device_arg(device);
  if (dt && (ts::is_int(dt) || ts::is_bool(dt)) && py::isinstance<py::int_>(data) && !py::isinstance<py::bool_>(data)) {
    Tensor t = as_tensor(data);  // the int's 64 bits exactly (a cast would fold through a double)
    return ts::is_int(dt) ? Tensor(ts::uconst_int(dt, t.uop()->as<int64_t>())) : t.cast(dt);
  }
  if (data.is_none() || is_py_scalar(data)) {
    Tensor t = data.is_none() ? Tensor::scalar(0.0, ts::dtypes::weakfloat) : as_tensor(data);
    return dt && dt != t.dtype() ? t.cast(dt) : t;
  }
  if (is_tensor(data)) {
    Tensor t = data.cast<Tensor>();
    if (!dev.empty() && !t.device().empty() && dev != t.device()) t = t.to(dev);
    return dt && dt != t.dtype() ? t.cast(dt) : t;
  }
  if (py::isinstance<UOpHandle>(data)) {
    Tensor t(data.cast<const UOpHandle&>().u);
    return dt && dt != t.dtype() ? t.cast(dt) : t;
  }
  if (py::isinstance<py::bytes>(data)) {
    std::string b = data.cast<std::string>();
    ts::HostData h;
    h.shape = {static_cast<int64_t>(b.size())};
    h.dtype = ts::dtypes::uint8;
    for (unsigned char c : b) h.i.push_back(c);
    Tensor t = Tensor::from_host(h, dev);
    return dt && dt != t.dtype() ? t.bitcast(dt) : t;
  }
  if (py::isinstance<py::list>(data) || py::isinstance<py::tuple>(data)) return Tensor::from_host(host_from_py(data, dt), dev);
  if (is_numpy_ndarray(data))  // numpy's dtype maps live in the prelude (tinygrad.dtype._from_np_dtype)
    return py::module_::import("tinyscope").attr("_prelude")["_tensor_from_numpy"](data, device, dtype).cast<Tensor>();
  throw ts::Error("can't create Tensor from " + std::string(py::repr(data)) + " with type " +  // (a RuntimeError, as the reference's)
                  std::string(py::str(py::type::of(data).attr("__name__"))));
}

// dtype of a python fill value when no dtype is given (tinygrad: strong(from_py(v)))
ts::DType fill_dtype(py::handle v, py::handle dtype) {
  if (!dtype.is_none()) return to_dtype(dtype);
  return ts::strong(dtype_of_scalar(v));
}

double scalar_value(py::handle v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? 1.0 : 0.0;
  if (!is_py_scalar(v)) throw py::type_error("expected a python scalar, got " + std::string(py::repr(v)));
  return v.cast<double>();
}

ts::Shape shape_arg(py::handle shape) { return shape_list(shape); }

// half/bfloat16/fp8 are read as float32 (tinygrad casts before reading); weak dtypes as their strong dtype
Tensor readable(const Tensor& t) {
  if (ts::is_weak(t.dtype())) return t.cast(ts::strong(t.dtype()));
  if (t.dtype() == ts::dtypes::float16 || t.dtype() == ts::dtypes::bfloat16 || ts::is_fp8(t.dtype())) return t.cast(ts::dtypes::float32);
  return t;
}

bool has_zero_dim(const ts::Shape& s) { return std::find(s.begin(), s.end(), 0) != s.end(); }


py::object tolist(const Tensor& self) {
  Tensor t = readable(self);
  if (has_zero_dim(t.shape())) {
    ts::HostData empty;
    empty.shape = t.shape();
    empty.dtype = t.dtype();
    return host_to_py(empty);
  }
  return host_to_py(t.data());
}

std::string tensor_repr(const Tensor& t) {
  std::string shape = py::repr(shape_tuple(t.shape()));
  std::string dev = t.device().empty() ? "None" : t.device();
  std::string dt = ts::dtype_repr(t.dtype()).substr(7);
  return "<Tensor <UOp " + dev + " " + shape + " " + dt + "> on " + dev + " with grad None>";
}

// creation: empty, zeros, ones, full, arange, eye, scalar
void bind_creation(TensorClass& t) {
  t.def_static("empty", [](py::args shape, py::object device, py::object dtype) {
    return Tensor::empty(argfix(shape), to_dtype_or_null(dtype), device_arg(device));
  }, py::kw_only(), py::arg("device") = py::none(), py::arg("dtype") = py::none());
  t.def_static("zeros", [](py::args shape, py::object device, py::object dtype) {
    return Tensor::full(argfix(shape), 0.0, fill_dtype(py::float_(0.0), dtype), device_arg(device));
  }, py::kw_only(), py::arg("device") = py::none(), py::arg("dtype") = py::none());
  t.def_static("ones", [](py::args shape, py::object device, py::object dtype) {
    return Tensor::full(argfix(shape), 1.0, fill_dtype(py::float_(1.0), dtype), device_arg(device));
  }, py::kw_only(), py::arg("device") = py::none(), py::arg("dtype") = py::none());
  t.def_static("full", [](py::object shape, py::object fill_value, py::object dtype, py::object device) {
    ts::DType dt = fill_dtype(fill_value, dtype);
    double v = scalar_value(fill_value);
    // an integer or bool tensor cannot hold nan or inf (python's int(nan) raises the same errors)
    if (ts::is_int(dt) && std::isnan(v)) throw py::value_error("cannot convert float NaN to integer");
    if (ts::is_int(dt) && std::isinf(v)) {
      PyErr_SetString(PyExc_OverflowError, "cannot convert float infinity to integer");
      throw py::error_already_set();
    }
    return Tensor::full(shape_arg(shape), v, dt, device_arg(device));
  }, py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  // arange and eye are deviceless, as in tinygrad (a device= argument is accepted and ignored)
  // arange and eye take no device (the reference's are deviceless: a device= is its TypeError, not ignored)
  t.def_static("arange", [](py::object start, py::object stop, py::object step, py::object dtype) {
    if (stop.is_none()) {  // arange(n) = arange(0, n)
      stop = start;
      start = py::int_(0);
    }
    double a = scalar_value(start), b = scalar_value(stop), st = scalar_value(step);
    if (st == 0) throw ts::Error("arange: step must not be 0", ts::Error::Kind::ZeroDivision);  // (the reference divides by it)
    if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(st))  // (a ValueError, as the reference's)
      throw ts::Error("arange: start, stop and step must be finite, got " + std::string(py::str(py::make_tuple(start, stop, step))));
    ts::DType dt;
    if (dtype.is_none()) {  // default_float if any argument is a float, else default_int (int64 when it does not fit)
      bool any_float = py::isinstance<py::float_>(start) || py::isinstance<py::float_>(stop) || py::isinstance<py::float_>(step);
      double lo = st > 0 ? a : b - st, hi = st > 0 ? b - st : a;
      dt = any_float ? ts::dtypes::default_float
                     : (lo < -2147483648.0 || hi > 2147483647.0 ? ts::dtypes::int64 : ts::dtypes::default_int);
    } else {
      dt = to_dtype(dtype);
    }
    // the range's first and last values must fit the dtype (the reference raises OverflowError, as numpy would wrap)
    double lo = st > 0 ? a : b - st, hi = st > 0 ? b - st : a;
    if (ts::is_int(dt) || ts::is_bool(dt)) {
      int bits = ts::is_bool(dt) ? 1 : dt->bitsize;
      double mn = ts::is_bool(dt) || ts::is_unsigned(dt) ? 0.0 : -std::ldexp(1.0, bits - 1);
      double mx = std::ldexp(1.0, bits) - 1 + mn;
      if (lo < mn || mx < hi) {
        std::string msg = "arange [" + py::repr(start).cast<std::string>() + ", " + py::repr(stop).cast<std::string>() +
                          ") is not representable in dtype " + ts::dtype_repr(dt);
        PyErr_SetString(PyExc_OverflowError, msg.c_str());
        throw py::error_already_set();
      }
    }
    return Tensor::arange(a, b, st, dt);
  }, py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = 1, py::arg("dtype") = py::none());
  t.def_static("eye", [](int64_t n, py::object m_cols, py::object dtype) {
    int64_t mc = m_cols.is_none() ? n : m_cols.cast<int64_t>();
    if (n < 0 || mc < 0) throw py::value_error("eye: cannot have negative n=" + std::to_string(n) + ", m=" + std::to_string(mc));
    ts::DType dt = dtype.is_none() ? ts::dtypes::default_float : to_dtype(dtype);
    if (mc == n) return Tensor::eye(n, dt);
    Tensor rows = Tensor::arange(static_cast<double>(n), std::nullopt, 1, ts::dtypes::default_int).reshape({n, 1});
    Tensor cols = Tensor::arange(static_cast<double>(mc), std::nullopt, 1, ts::dtypes::default_int).reshape({1, mc});
    return rows.eq(cols).cast(dt);
  }, py::arg("n"), py::arg("m") = py::none(), py::arg("dtype") = py::none());
  t.def_static("scalar", [](py::object v, py::object dtype) {
    return Tensor::scalar(scalar_value(v), dtype.is_none() ? dtype_of_scalar(v) : to_dtype(dtype));
  }, py::arg("value"), py::arg("dtype") = py::none(), "a deviceless constant (weak unless a dtype is given)");
}

// properties: shape, dtype, device, uop, sizes, repr, hash, bool, len
void bind_properties(TensorClass& t) {
  t.def_property_readonly("shape", [](const Tensor& s) { return shape_tuple(s.shape()); });
  t.def_property_readonly("dtype", [](const Tensor& s) { return dtype_object(s.dtype()); });
  t.def_property_readonly("device", [](const Tensor& s) { return device_object(s.device()); });
  t.def_property("uop", [](const Tensor& s) { return uop_object(s.uop()); },
                 [](Tensor& s, const UOpHandle& u) { s.set_uop(u.u); });
  t.def_property_readonly("ndim", [](const Tensor& s) { return s.ndim(); });
  t.def("numel", [](const Tensor& s) { return s.numel(); });
  t.def("element_size", [](const Tensor& s) { return s.dtype()->itemsize(); });
  t.def("nbytes", [](const Tensor& s) { return s.numel() * s.dtype()->itemsize(); });
  t.def("is_realized", [](const Tensor& s) { return s.is_realized(); });
  t.def("__repr__", &tensor_repr);
  t.def("__hash__", [](py::object self) { return static_cast<py::ssize_t>(reinterpret_cast<uintptr_t>(self.ptr()) >> 4); });
  t.def("__bool__", [](const Tensor&) -> bool { throw py::type_error("__bool__ on Tensor is not defined"); });
  t.def("__len__", [](const Tensor& s) {
    if (s.shape().empty()) throw py::type_error("len() of a 0-d tensor");
    return s.shape()[0];
  });
}

// a Tensor argument where the reference reads a Tensor attribute of it: anything else is its AttributeError
Tensor tensor_attr_arg(py::handle h, const char* op) {
  if (!is_tensor(h)) throw py::attribute_error(std::string(op) + ": expected a Tensor, got " + std::string(py::str(py::type::of(h).attr("__name__"))));
  return h.cast<Tensor>();
}

// effects: realize, assign, replace
void bind_effects(TensorClass& t) {
  // Tensor.realize(a, b, ...) on the class binds a as self: both call forms realize everything in one schedule
  // do_update_stats is accepted as tinygrad's is: the call log records every kernel regardless
  t.def("realize", [](py::object self, py::args more, py::object /*do_update_stats*/) {
    std::vector<Tensor> all{self.cast<Tensor>()};
    for (py::handle h : more) all.push_back(tensor_attr_arg(h, "realize"));
    Tensor::realize_all(all);
    return self;
  }, py::kw_only(), py::arg("do_update_stats") = true);
  t.def("assign", [](py::object self, py::object x) {
    Tensor& s = self.cast<Tensor&>();
    Tensor v = is_tensor(x) ? x.cast<Tensor>() : make_tensor(x, py::str(s.device()), dtype_object(s.dtype()));
    if (v.uop() == s.uop()) return self;  // a self assign is a no-op
    if (v.shape() != s.shape()) v = Tensor::broadcast_to(v, s.shape());
    // the dtype must match (no silent cast that may lose precision); a python constant takes the target's
    if (ts::is_weak(v.dtype())) v = v.cast(ts::least_upper(s.dtype(), v.dtype()));
    if (v.dtype() != s.dtype() && !ts::is_weak(s.dtype()))
      throw std::runtime_error("assign dtype mismatch " + ts::dtype_repr(s.dtype()) + " != " + ts::dtype_repr(v.dtype()));
    if (!v.device().empty() && !s.device().empty() && v.device() != s.device())
      throw ts::Error("assign device mismatch " + s.device() + " != " + v.device());
    s.assign(v);
    return self;
  }, py::arg("x"));
  t.def("replace", [](py::object self, const Tensor& x) {
    Tensor& s = self.cast<Tensor&>();
    if (s.shape() != x.shape())
      throw py::value_error("replace shape mismatch " + py::repr(shape_tuple(s.shape())).cast<std::string>() + " != " +
                            py::repr(shape_tuple(x.shape())).cast<std::string>());
    s.set_uop(x.uop());
    return self;
  }, py::arg("x"));
}

// autograd: grad, the other uses a setitem checks for, is_param, backward, gradient
void bind_autograd(TensorClass& t) {
  auto opt_tensor = [](py::handle h) -> std::optional<Tensor> {
    if (h.is_none()) return std::nullopt;
    return h.cast<Tensor>();
  };
  t.def_property("grad", [](const Tensor& s) -> py::object {
    auto g = s.grad();
    return g ? py::cast(*g) : py::none();
  }, [opt_tensor](Tensor& s, py::object g) { s.set_grad(opt_tensor(g)); });
  // which tensor a wrapper holds: Python wrappers of one tensor are distinct objects, and `.grad` keeps one wrapper
  // per gradient tensor with this key (the reference's `x.grad is old_grad` after an accumulating backward)
  t.def_property_readonly("_data_key", [](const Tensor& s) { return reinterpret_cast<uintptr_t>(s.data_ptr().get()); });
  // a setitem that another live tensor would see change: that tensor still reads self's lazy value, so the eager
  // meaning and the lazy one part (the reference refuses it). Views of the same realized buffer and the tensors of
  // v's own graph are not other uses, and neither is anything of a tensor that has no buffer below it.
  t.def("_has_other_uses", [](const Tensor& s, py::object v) {
    const ts::UOp* me = s.uop().get();
    const auto mine = s.uop()->toposort();
    if (std::none_of(mine.begin(), mine.end(), [](const ts::UOpRef& u) { return u->op == ts::Ops::BUFFER; })) return false;
    const ts::UOp* shared = s.is_realized() ? s.uop()->base() : nullptr;
    std::unordered_set<const ts::UOp*> v_graph;
    const ts::TensorData* vd = nullptr;
    if (py::isinstance<Tensor>(v)) {
      const Tensor& vt = v.cast<const Tensor&>();
      vd = vt.data_ptr().get();
      for (auto& u : vt.uop()->toposort()) v_graph.insert(u.get());
    }
    std::unordered_set<const ts::UOp*> seen;  // one walk over every other tensor's graph: reached once is enough
    std::vector<const ts::UOp*> stack;
    for (auto& d : ts::live_tensors()) {
      if (d.get() == s.data_ptr().get() || d.get() == vd || v_graph.count(d->uop.get()) || d->uop->base() == shared) continue;
      stack.push_back(d->uop.get());
      while (!stack.empty()) {
        const ts::UOp* u = stack.back();
        stack.pop_back();
        if (u == me) return true;
        if (!seen.insert(u).second) continue;
        for (auto& x : u->src) stack.push_back(x.get());
      }
    }
    return false;
  }, py::arg("v"));
  t.def_property("is_param", [](const Tensor& s) { return s.is_param(); }, [](Tensor& s, bool p) { s.set_is_param(p); });
  t.def("is_param_", [](py::object self, bool p) {
    self.cast<Tensor&>().set_is_param(p);
    return self;
  }, py::arg("is_param") = true);
  t.def("backward", [opt_tensor](py::object self, py::object gradient) {
    self.cast<Tensor&>().backward(opt_tensor(gradient));
    return self;
  }, py::arg("gradient") = py::none());
  t.def("gradient", [opt_tensor](const Tensor& self, py::args targets, py::object gradient) {
    std::vector<Tensor> ts;
    for (py::handle h : targets) ts.push_back(tensor_attr_arg(h, "gradient"));
    py::list out;
    for (auto& g : self.gradient(ts, opt_tensor(gradient))) out.append(py::cast(g));
    return out;
  }, py::arg("gradient") = py::none());
}

// reads (tolist, item, the bytes) and tensors over arrays, addresses and bytes
void bind_reads(TensorClass& t) {
  t.def("tolist", &tolist);
  t.def("item", [](const Tensor& self) {
    if (self.numel() != 1)  // (the reference asserts it)
      throw ts::Error("item: must have one element, not " + std::to_string(self.numel()), ts::Error::Kind::Assertion);
    ts::HostData d = readable(self).data();
    d.shape.clear();
    return host_to_py(d);
  });
  t.def_static("_from_array", &from_array, py::arg("array"), py::arg("shape"), py::arg("dtype"), py::arg("device") = py::none(),
               "a C-contiguous buffer-protocol object (a numpy array) as a tensor that reads it when realized");
  t.def_static("_from_address", [](uintptr_t ptr, py::handle shape, py::handle dtype, py::handle device) {
    return Tensor::from_external(reinterpret_cast<void*>(ptr), int_list(shape), to_dtype(dtype), device_arg(device));
  }, py::arg("ptr"), py::arg("shape"), py::arg("dtype"), py::arg("device") = py::none(),
     "host memory at an address as a realized tensor that reads it where it lies (Tensor.from_blob)");
  t.def_static("_from_bytes", [](py::buffer b, py::handle shape, py::handle dtype, py::handle device) {
    py::buffer_info info = b.request();
    ts::DType dt = to_dtype(dtype);
    return Tensor::from_bytes(info.ptr, static_cast<size_t>(info.size * info.itemsize), int_list(shape), dt, device_arg(device));
  }, py::arg("data"), py::arg("shape"), py::arg("dtype"), py::arg("device") = py::none(), "a copy of the bytes as a tensor");
  t.def("_bytes", [](const Tensor& self) {
    ts::HostData d = self.bytes();
    return py::reinterpret_steal<py::object>(
        PyByteArray_FromStringAndSize(reinterpret_cast<const char*>(d.raw.data()), static_cast<py::ssize_t>(d.raw.size())));
  }, "the realized contents as stored, row-major (a bytearray)");
}

}  // namespace

void bind_tensor_core(py::module_& m, TensorClass& t) {
  t.def(py::init([](py::object data, py::object device, py::object dtype) { return make_tensor(data, device, dtype); }),
        py::arg("data") = py::none(), py::arg("device") = py::none(), py::arg("dtype") = py::none());

  bind_creation(t);
  bind_properties(t);
  bind_effects(t);
  bind_autograd(t);
  bind_reads(t);

  // Variable("n", 1, 10).bind(3) is a bound symbolic int, usable as a shrink end (t.shrink(((0, v),)))
  m.def("Variable", [](const std::string& name, int64_t min_val, int64_t max_val) {
    return uop_object(ts::variable(name, min_val, max_val));
  }, py::arg("name"), py::arg("min_val"), py::arg("max_val"));
}

}  // namespace tsp