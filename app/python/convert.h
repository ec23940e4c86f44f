#pragma once
// Conversions between Python objects and the engine's C++ types, shared by the binding files.
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "engine/tensor/tensor.h"

namespace tsp {
namespace py = pybind11;

// DType python object (or a name such as "float32") -> engine dtype; raises TypeError otherwise
ts::DType to_dtype(py::handle h);
// like to_dtype, but None -> nullptr
ts::DType to_dtype_or_null(py::handle h);
// the unique python object of a dtype (so `dtypes.float32 is dtypes.float`)
py::object dtype_object(ts::DType d);
// dtype of a python constant as tinygrad infers it (bool, weakint, weakfloat)
ts::DType dtype_of_scalar(py::handle h);

// Ops(int) from the python enum the prelude registers (enum lookup returns the singleton member)
py::object ops_object(ts::Ops op);
void set_ops_enum(py::object ops_enum);

bool is_py_scalar(py::handle h);  // bool, int or float
bool is_tensor(py::handle h);
// a Tensor, or a python scalar as a deviceless weak constant
ts::Tensor as_tensor(py::handle h);

// "cpu" -> "CPU"; None -> "" (the default device)
std::string device_arg(py::handle h);
// an engine device as Python sees it: None (no device), its name, or a tuple of names (a multi-device value)
py::object device_object(const std::string& d);
// f(2, 3), f((2, 3)) or f([2, 3]) -> {2, 3}
std::vector<int64_t> argfix(const py::args& args);
std::vector<int64_t> int_list(py::handle seq);
std::vector<int64_t> shape_list(py::handle seq);  // int_list of shape dims (a non-int: the EngineError)
// None -> all axes; int or sequence of ints
ts::AxisArg axis_arg(py::handle h);
py::tuple shape_tuple(const ts::Shape& s);

// nested python lists/tuples of scalars -> flat host data (dtype nullptr = infer like tinygrad's from_py)
ts::HostData host_from_py(py::handle data, ts::DType dt);
// host data -> nested python lists (0-d -> a scalar); floats, ints or bools by dtype
py::object host_to_py(const ts::HostData& data);

}  // namespace tsp

namespace ts {
struct Schedule;
}

namespace tsp {
// A python handle on one UOp node (nodes are hash-consed, so equality is pointer identity). The LINEAR that
// Tensor.schedule_linear returns also carries the engine's schedule, which run_linear executes.
struct UOpHandle {
  ts::UOpRef u;
  std::shared_ptr<ts::Schedule> schedule = nullptr;  // a LINEAR's; none for any other node
};
py::object uop_object(const ts::UOpRef& u);
}  // namespace tsp
