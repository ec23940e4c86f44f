// Reductions and composites with tinygrad's keyword names (axis, keepdim, dtype, correction, ...).
#include <pybind11/stl.h>

#include "app/python/bindings.h"
#include "app/python/convert.h"

namespace tsp {

namespace {
using ts::Tensor;
using Reduce = Tensor (Tensor::*)(const ts::AxisArg&, bool) const;

void def_reduce(TensorClass& t, const char* name, Reduce fn) {
  t.def(name, [fn](const Tensor& s, py::object axis, bool keepdim) { return (s.*fn)(axis_arg(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
}

std::optional<int64_t> opt_axis(const py::object& axis) {
  if (axis.is_none()) return std::nullopt;
  return axis.cast<int64_t>();
}

Tensor maybe_cast(const Tensor& s, const py::object& dtype) {
  if (dtype.is_none()) return s;
  ts::DType dt = to_dtype(dtype);
  return dt == s.dtype() ? s : s.cast(dt);
}

// conv2d's stride/dilation/padding: an int or a sequence of ints
std::vector<int64_t> int_or_ints(const py::object& v) { return int_list(v); }

// logsumexp/softmax take an int axis in the engine; None means over everything
Tensor logsumexp(const Tensor& s, const py::object& axis, bool keepdim) {
  if (!axis.is_none()) return s.logsumexp(axis.cast<int64_t>(), keepdim);
  Tensor r = s.flatten().logsumexp(0, false);
  return keepdim ? r.reshape(std::vector<int64_t>(s.shape().size(), 1)) : r;
}
}  // namespace

void bind_tensor_reduce(TensorClass& t) {
  t.def("sum", [](const Tensor& s, py::object axis, bool keepdim, py::object dtype) {
    return s.sum(axis_arg(axis), keepdim, to_dtype_or_null(dtype));
  }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
  t.def("prod", [](const Tensor& s, py::object axis, bool keepdim, py::object dtype) {
    return maybe_cast(s, dtype).prod(axis_arg(axis), keepdim);
  }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
  def_reduce(t, "max", &Tensor::max);
  def_reduce(t, "min", &Tensor::min);
  def_reduce(t, "mean", &Tensor::mean);
  def_reduce(t, "any", &Tensor::any);
  def_reduce(t, "all", &Tensor::all);
  t.def("var", [](const Tensor& s, py::object axis, bool keepdim, double correction) {
    return s.var(axis_arg(axis), keepdim, correction);
  }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1);
  t.def("std", [](const Tensor& s, py::object axis, bool keepdim, double correction) {
    return s.std(axis_arg(axis), keepdim, correction);
  }, py::arg("axis") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1);
  t.def("argmax", [](const Tensor& s, py::object axis, bool keepdim) { return s.argmax(opt_axis(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("argmin", [](const Tensor& s, py::object axis, bool keepdim) { return s.argmin(opt_axis(axis), keepdim); },
        py::arg("axis") = py::none(), py::arg("keepdim") = false);
  t.def("cumsum", &Tensor::cumsum, py::arg("axis") = 0);
  t.def("softmax", [](const Tensor& s, int64_t axis, py::object dtype) { return maybe_cast(s, dtype).softmax(axis); },
        py::arg("axis") = -1, py::arg("dtype") = py::none());
  t.def("log_softmax", [](const Tensor& s, int64_t axis, py::object dtype) { return maybe_cast(s, dtype).log_softmax(axis); },
        py::arg("axis") = -1, py::arg("dtype") = py::none());
  t.def("logsumexp", &logsumexp, py::arg("axis") = py::none(), py::arg("keepdim") = false);

  t.def("linear", [](const Tensor& s, const Tensor& w, std::optional<Tensor> bias) { return s.linear(w, bias); },
        py::arg("weight"), py::arg("bias") = py::none());
  t.def("conv2d", [](const Tensor& s, const Tensor& w, std::optional<Tensor> bias, int64_t groups, py::object stride,
                     py::object dilation, py::object padding) {
    return s.conv2d(w, bias, groups, int_or_ints(stride), int_or_ints(dilation), int_or_ints(padding));
  }, py::arg("weight"), py::arg("bias") = py::none(), py::arg("groups") = 1, py::arg("stride") = 1,
     py::arg("dilation") = 1, py::arg("padding") = 0);
  // the reference's _pool: sliding windows over the last len(k) dims -> (..., *out, *k)
  t.def("_pool", [](const Tensor& s, py::object k, py::object stride, py::object dilation) {
    return s.pool(int_or_ints(k), int_or_ints(stride), int_or_ints(dilation));
  }, py::arg("k_"), py::arg("stride") = 1, py::arg("dilation") = 1);
  // pooling: kernel_size / stride / dilation / padding as an int or a sequence (stride defaults to the kernel)
  auto pool_args = [](const py::object& k, const py::object& stride) {
    std::vector<int64_t> kk = int_or_ints(k);
    if (kk.size() == 1) kk.push_back(kk[0]);
    std::vector<int64_t> st = stride.is_none() ? kk : int_or_ints(stride);
    return std::make_pair(kk, st);
  };
  t.def("max_pool2d", [pool_args](const Tensor& s, py::object k, py::object stride, py::object dilation, py::object padding) {
    auto [kk, st] = pool_args(k, stride);
    return s.max_pool2d(kk, st, int_or_ints(dilation), int_or_ints(padding));
  }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0);
  t.def("avg_pool2d", [pool_args](const Tensor& s, py::object k, py::object stride, py::object dilation, py::object padding) {
    auto [kk, st] = pool_args(k, stride);
    return s.avg_pool2d(kk, st, int_or_ints(dilation), int_or_ints(padding));
  }, py::arg("kernel_size") = py::make_tuple(2, 2), py::arg("stride") = py::none(), py::arg("dilation") = 1, py::arg("padding") = 0);
}

}  // namespace tsp
