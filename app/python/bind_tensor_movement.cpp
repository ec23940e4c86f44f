// Movement ops with tinygrad's argument conventions (f(2, 3) or f((2, 3)); None keeps a dimension).
#include <pybind11/stl.h>

#include "app/python/bindings.h"
#include "app/python/convert.h"
#include "engine/schedule/multi.h"

namespace tsp {

namespace {
using ts::Tensor;

std::vector<Tensor> tensors_of(const Tensor& self, const py::args& more) {
  std::vector<Tensor> out{self};
  for (py::handle h : more) {  // the reference reads .ndim of each: a non-Tensor is its AttributeError
    if (!is_tensor(h)) throw py::attribute_error("cat/stack: expected Tensors, got " + std::string(py::str(py::type::of(h).attr("__name__"))));
    out.push_back(h.cast<Tensor>());
  }
  return out;
}

// reshape: argfix, None keeps the dimension, -1 is inferred by the engine
std::vector<int64_t> reshape_arg(const Tensor& self, const py::args& args) {
  py::sequence seq = args.size() == 1 && (py::isinstance<py::list>(args[0]) || py::isinstance<py::tuple>(args[0]))
                         ? py::reinterpret_borrow<py::sequence>(args[0])
                         : py::reinterpret_borrow<py::sequence>(args);
  std::vector<int64_t> out;
  size_t i = 0;
  for (py::handle h : seq) {
    if (h.is_none()) {
      if (i >= self.shape().size()) throw py::value_error("reshape: None at position " + std::to_string(i) + " has no dimension to keep");
      out.push_back(self.shape()[i]);
    } else {
      out.push_back(shape_list(h).at(0));
    }
    ++i;
  }
  return out;
}

Tensor reshape(const Tensor& self, py::args args) {
  std::vector<int64_t> s = reshape_arg(self, args);
  return s == self.shape() ? self : self.reshape(s);
}
}  // namespace

void bind_tensor_movement(TensorClass& t) {
  t.def("reshape", &reshape);
  t.def("view", &reshape);
  // a -1 or None keeps that dim's size
  t.def("expand", [](const Tensor& s, py::args shape) {
    py::object seq = shape;
    if (shape.size() == 1 && (py::isinstance<py::tuple>(shape[0]) || py::isinstance<py::list>(shape[0]))) seq = shape[0];
    py::list dims;
    for (py::handle d : seq) dims.append(d.is_none() ? py::object(py::int_(-1)) : py::reinterpret_borrow<py::object>(d));
    return s.expand(int_list(dims));
  });
  t.def("permute", [](const Tensor& s, py::args order) { return s.permute(argfix(order)); });
  t.def("flip", [](const Tensor& s, py::args axis) { return s.flip(argfix(axis)); });
  // the prelude's pad/shrink normalize tinygrad's forms (None entries, flat torch-style pads) into these
  t.def("_pad", [](const Tensor& s, const std::vector<std::pair<int64_t, int64_t>>& pads, double value) {
    return s.pad(pads, value);
  }, py::arg("pads"), py::arg("value") = 0.0);
  // (start, end) per dim; either may be a bound Variable or an expression of one (a UOp)
  t.def("_shrink", [](const Tensor& s, py::list bounds) {
    std::vector<std::pair<int64_t, int64_t>> b;
    ts::UOps sym_starts, sym_ends;
    auto bound = [](py::handle h, ts::UOps& sym, int64_t& fixed) {
      if (py::isinstance<UOpHandle>(h)) {
        sym.push_back(h.cast<const UOpHandle&>().u);
        fixed = 0;
      } else {
        sym.push_back(nullptr);
        fixed = h.cast<int64_t>();
      }
    };
    for (py::handle pair : bounds) {
      py::sequence se = py::reinterpret_borrow<py::sequence>(pair);
      if (se.size() != 2) throw py::value_error("shrink: expected (start, end) pairs");
      int64_t start = 0, end = 0;
      bound(se[0], sym_starts, start);
      bound(se[1], sym_ends, end);
      b.emplace_back(start, end);
    }
    return s.shrink(b, sym_starts, sym_ends);
  });
  t.def("transpose", &Tensor::transpose, py::arg("dim0") = 1, py::arg("dim1") = 0);
  t.def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  t.def("squeeze", [](const Tensor& s, py::object dim) {
    if (dim.is_none()) return s.squeeze();
    return s.squeeze(dim.cast<int64_t>());
  }, py::arg("dim") = py::none());
  t.def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"));
  t.def("contiguous", &Tensor::contiguous);
  t.def("detach", &Tensor::detach);
  // a marker that is a no-op forward and makes the gradient flowing through it contiguous
  t.def("contiguous_backward", [](const Tensor& s) {
    return Tensor(ts::UOp::make(ts::Ops::CONTIGUOUS_BACKWARD, s.dtype(), {s.uop()}));
  });
  t.def("clone", [](const Tensor& s, py::object device) { return s.clone(device_arg(device)); }, py::arg("device") = py::none());
  // several devices: `devices` a tuple of names, axis a dim (resolved) or None (tinygrad's shard without its checks)
  t.def("_shard", [](const Tensor& s, py::tuple devices, std::optional<int64_t> axis) {
    return s.shard(ts::split_devices(device_arg(devices)), axis);
  }, py::arg("devices"), py::arg("axis") = py::none());
  // a multi-device tensor of one tensor per device, split along axis (None: each whole)
  t.def_static("_mstack", [](const std::vector<Tensor>& shards, std::optional<int64_t> axis) {
    ts::UOps us;
    for (auto& x : shards) us.push_back(x.uop());
    return Tensor(ts::mstack(std::move(us), axis));
  }, py::arg("shards"), py::arg("axis") = py::none());
  t.def("to", [](const Tensor& s, py::object device) {
    std::string d = device_arg(device);
    return d.empty() ? s : s.to(d);
  }, py::arg("device"));
  // tinygrad: cat/stack are methods (t.cat(u, dim=1)); Tensor.cat(a, b) binds a as self
  t.def("cat", [](const Tensor& s, py::args more, int64_t dim) { return Tensor::cat(tensors_of(s, more), dim); },
        py::kw_only(), py::arg("dim") = 0);
  t.def("stack", [](const Tensor& s, py::args more, int64_t dim) { return Tensor::stack(tensors_of(s, more), dim); },
        py::kw_only(), py::arg("dim") = 0);
  t.def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"));
  t.def("_index_tensor", &Tensor::index_tensor, py::arg("dim"), py::arg("idx"));
  t.def("_broadcast_to", [](const Tensor& s, py::args shape) { return Tensor::broadcast_to(s, argfix(shape)); });
}

}  // namespace tsp
