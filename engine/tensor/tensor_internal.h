#pragma once
// What the tensor*.cpp files share (private to them): shape text, python-style constants, a deviceless fill, a cumsum
#include <cmath>
#include <string>

#include "engine/tensor/tensor.h"

namespace ts {

inline std::string shape_str(const Shape& s) {
  std::string o = "(";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + (s.size() == 1 ? ",)" : ")");
}
// a python number as a weak constant: weakint when it is a whole number, else weakfloat
inline Tensor py(double v) { return Tensor::scalar(v, v == std::floor(v) && std::fabs(v) < 1e15 ? dtypes::weakint : dtypes::weakfloat); }
// a broadcast constant with no device (tensor.cpp)
Tensor const_full(const Shape& shape, double v, DType dt);
// the reference's _cumalu for ADD (tensor.cpp)
Tensor cumsum_pooled(const Tensor& t, int64_t a);

}  // namespace ts
