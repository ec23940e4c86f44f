#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace ts {

// The reference's Ops, in its declaration order (the order is used as a tie-breaker in orderings).
#define TS_OPS(X)                                                                                          \
  X(SPECIAL) X(BUFFER) X(NOOP) X(REWRITE_ERROR) X(PARAM) X(FUNCTION) X(CALL) X(PROGRAM) X(LINEAR) X(SOURCE) \
  X(BINARY) X(SINK) X(AFTER) X(GROUP) X(STACK) X(TUPLE) X(GETTUPLE) X(GETADDR) X(INDEX) X(SHRINK) X(LOAD)  \
  X(STORE) X(WMMA) X(CAST) X(BITCAST) X(EXP2) X(LOG2) X(SIN) X(SQRT) X(RECIPROCAL) X(NEG) X(TRUNC) X(ADD)   \
  X(MUL) X(SHL) X(SHR) X(CDIV) X(MAX) X(CMOD) X(CMPLT) X(CMPNE) X(CMPEQ) X(XOR) X(OR) X(AND) X(THREEFRY)   \
  X(SUB) X(FDIV) X(POW) X(FLOORDIV) X(FLOORMOD) X(WHERE) X(MULACC) X(BARRIER) X(RANGE) X(IF) X(END)        \
  X(ENDIF) X(WAIT) X(CONST) X(CUSTOM) X(CUSTOMI) X(INS) X(CONTIGUOUS) X(CONTIGUOUS_BACKWARD) X(DETACH)     \
  X(STAGE) X(COPY) X(MSELECT) X(MSTACK) X(CUSTOM_FUNCTION) X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(FLIP)  \
  X(UNSHARD) X(REDUCE) X(ALLREDUCE) X(PYLITERAL)                                                           \
  /* engine-internal, after linearize: the CPU's passes over the LINEAR (engine/codegen/cpu/linear_passes.h) */ \
  X(VLOAD) X(VSTORE) X(GEP) X(DEFINE_VACC) X(VACC_UPDATE) X(TRANSPOSED_ACC) X(PREFETCH)                      \
  X(DEFINE_ACC)

enum class Ops : uint8_t {
#define TS_OP_ENUM(n) n,
  TS_OPS(TS_OP_ENUM)
#undef TS_OP_ENUM
};

std::string_view op_name(Ops op);  // "ADD"
bool op_from_name(std::string_view name, Ops& out);

namespace group {
bool unary(Ops o);
bool binary(Ops o);
bool ternary(Ops o);
inline bool alu(Ops o) { return unary(o) || binary(o) || ternary(o); }
inline bool elementwise(Ops o) { return alu(o) || o == Ops::CAST || o == Ops::BITCAST; }
bool movement(Ops o);
bool commutative(Ops o);
bool comparison(Ops o);
// every op for which pred holds, in declaration order (a rule's list of ops)
std::vector<Ops> ops_where(bool (*pred)(Ops));
}  // namespace group

}  // namespace ts
