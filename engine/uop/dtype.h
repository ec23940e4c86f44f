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
  int id = 0;  // its own number, the same in every process (a UOp's hash, hence a kernel's program key, uses it)
  int itemsize() const { return (bitsize + 7) / 8; }
};
using DType = const DTypeInfo*;

namespace dtypes {
extern const DType void_, bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16,
    float32, float64, weakint, weakfloat;
// the 8-bit floats: OCP e4m3 (no inf, one NaN per sign) and e5m2 (IEEE-like), and the fnuz variants (one NaN at
// 0x80, no inf, no negative zero, bias one more). Stored as one byte; their math runs in float32
extern const DType fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz;
// DEFAULT_FLOAT / DEFAULT_INT: the dtypes python floats and ints (and weak dtypes made strong) become; float32 and
// int32 unless the entry point sets them from its environment or a script's Context sets them for a block
extern DType default_float;
extern DType default_int;
// sets DEFAULT_FLOAT (float_default) or DEFAULT_INT; an Error for a dtype that is not a strong float / int
void set_default(DType dt, bool float_default);
DType from_name(std::string_view name);  // "float32", "float", "int32", "bool", ...; nullptr if unknown
}  // namespace dtypes

inline bool is_float(DType d) { return d->kind == DKind::Float || d->kind == DKind::WeakFloat; }
inline bool is_int(DType d) { return d->kind == DKind::Signed || d->kind == DKind::Unsigned || d->kind == DKind::WeakInt; }
inline bool is_unsigned(DType d) { return d->kind == DKind::Unsigned; }
inline bool is_weak(DType d) { return d->kind == DKind::WeakInt || d->kind == DKind::WeakFloat; }
inline bool is_bool(DType d) { return d->kind == DKind::Bool; }
bool is_fp8(DType d);
bool is_fp8_fnuz(DType d);
// the layout of an 8-bit float: exponent and mantissa bits, exponent bias
struct Fp8Format {
  int exp_bits, man_bits, bias;
};
Fp8Format fp8_format(DType d);  // d must be an fp8 dtype
// the largest finite code: e4m3 keeps its top mantissa for NaN, e5m2 its top exponent for inf/NaN, fnuz uses all
uint8_t fp8_max_code(DType d);
// a value's fp8 code: rounded to nearest even, finite values past the largest saturate to it; NaN and inf as each
// format has them (e4m3: both NaN, e5m2: NaN and inf, fnuz: both the one NaN 0x80); fnuz has no -0
uint8_t float_to_fp8(double x, DType d);
// the value of an fp8 code (exact: every fp8 value is a float32)
double fp8_to_float(uint8_t code, DType d);
// weakint -> int32, weakfloat -> float32, others unchanged
DType strong(DType d);
// least upper bound in the promotion lattice (JAX style, as the reference)
DType least_upper(DType a, DType b);
// accumulator dtype of a sum
DType sum_acc(DType d);
// "dtypes.float" etc, as python prints a dtype
std::string dtype_repr(DType d);

}  // namespace ts
