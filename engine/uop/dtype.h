#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace ts {

enum class DKind : uint8_t { Void, Bool, Signed, Unsigned, Float, WeakInt, WeakFloat };

// A scalar dtype. Interned: compare pointers. Weak dtypes are the types of python constants and index math.
struct DTypeInfo {
  int priority;
  int bitsize;
  const char* name;   // tinygrad name: "float", "int", "bool", "weakint", ...
  const char* cname;  // C spelling in rendered kernels
  char fmt;           // python struct format char ('\0' if none)
  DKind kind;
  int itemsize() const { return (bitsize + 7) / 8; }
};
using DType = const DTypeInfo*;

namespace dtypes {
extern const DType void_, bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16,
    float32, float64, weakint, weakfloat;
inline const DType& default_float = float32;
inline const DType& default_int = int32;
DType from_name(std::string_view name);  // "float32", "float", "int32", "bool", ...; nullptr if unknown
}  // namespace dtypes

inline bool is_float(DType d) { return d->kind == DKind::Float || d->kind == DKind::WeakFloat; }
inline bool is_int(DType d) { return d->kind == DKind::Signed || d->kind == DKind::Unsigned || d->kind == DKind::WeakInt; }
inline bool is_unsigned(DType d) { return d->kind == DKind::Unsigned; }
inline bool is_weak(DType d) { return d->kind == DKind::WeakInt || d->kind == DKind::WeakFloat; }
inline bool is_bool(DType d) { return d->kind == DKind::Bool; }
// weakint -> int32, weakfloat -> float32, others unchanged
DType strong(DType d);
// least upper bound in the promotion lattice (JAX style, as the reference)
DType least_upper(DType a, DType b);
// accumulator dtype of a sum
DType sum_acc(DType d);
// "dtypes.float" etc, as python prints a dtype
std::string dtype_repr(DType d);

}  // namespace ts
