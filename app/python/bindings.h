#pragma once
// The parts of the embedded `tinyscope` module, one binding file each (small translation units).
#include <pybind11/pybind11.h>

#include "engine/tensor/tensor.h"

namespace tsp {
namespace py = pybind11;
using TensorClass = py::class_<ts::Tensor>;

void bind_errors(py::module_& m);                           // ts::Error -> tinyscope.EngineError (a RuntimeError)
void bind_dtype(py::module_& m);                            // DType and the engine's dtype table
void bind_uop(py::module_& m);                              // UOp (a read-only view of a node), op names
void bind_tensor_core(py::module_& m, TensorClass& t);      // construction, creation, properties, effects, tolist
void bind_tensor_elementwise(TensorClass& t);               // operators and elementwise methods
void bind_tensor_movement(TensorClass& t);                  // movement ops, cat/stack/gather
void bind_tensor_reduce(TensorClass& t);                    // reductions and composites (matmul, conv2d, softmax)
void bind_schedule(py::module_& m, TensorClass& t);         // Tensor.schedule_linear and run_linear

}  // namespace tsp
