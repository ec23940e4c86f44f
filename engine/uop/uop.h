#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/uop/dtype.h"
#include "engine/uop/ops.h"

namespace ts {

using Shape = std::vector<int64_t>;

enum class AxisType : uint8_t { DEVICE, GLOBAL, WARP, LOCAL, LOOP, GROUP_REDUCE, REDUCE, UPCAST, UNROLL, THREAD, WEAK, PLACEHOLDER };
enum class AddrSpace : uint8_t { GLOBAL, LOCAL, REG, ALU };
std::string_view axis_type_name(AxisType t);
char axis_letter(AxisType t);

struct Invalid {
  bool operator==(const Invalid&) const = default;
};
// arg of BUFFER and PARAM. For a tensor BUFFER `slot` is a process-unique number; for a kernel PARAM its position.
// A Variable is a BUFFER/PARAM in AddrSpace::ALU with a name and bounds.
struct ParamArg {
  int64_t slot = 0;
  int64_t size = 0;  // elements
  std::string device;
  std::string name;
  int64_t vmin = 0, vmax = 0;
  AddrSpace addrspace = AddrSpace::GLOBAL;
  bool operator==(const ParamArg&) const = default;
};
struct RangeArg {
  int64_t id = 0;
  AxisType type = AxisType::WEAK;
  bool operator==(const RangeArg&) const = default;
};
struct ReduceArg {
  Ops op = Ops::ADD;
  int n = 0;  // number of leading axes reduced (0 once ranges are explicit)
  bool operator==(const ReduceArg&) const = default;
};
struct StageArg {
  std::string device;
  bool removable = true;
  // which realized value this stage holds, for provenance only: an index into rangeify's list of them (-1: a stage of
  // its own, limit_bufs'). Not part of the node's identity: stages equal otherwise are one node, as the reference's.
  int64_t origin = -1;
  bool operator==(const StageArg& o) const { return device == o.device && removable == o.removable; }
};
// arg of a kernel SINK: filled in by codegen's optimizer
struct KernelInfo {
  std::string name = "test";
  std::string colored_name;
  std::vector<std::string> applied_opts;
  // under the TC opt: the tensor core's index in the target's list, then the ids of its m, n and k ranges (else empty)
  std::vector<int64_t> tensor_core;
  bool operator==(const KernelInfo&) const = default;
};

using Arg = std::variant<std::monostate, int64_t, double, bool, Invalid, std::string, Shape, ParamArg, RangeArg,
                         ReduceArg, StageArg, KernelInfo>;

struct UOp;
using UOpRef = std::shared_ptr<const UOp>;
using UOps = std::vector<UOpRef>;

// An immutable, hash-consed node: the same (op, dtype, src, arg, tag) is always the same object.
struct UOp : std::enable_shared_from_this<UOp> {
  Ops op;
  DType dtype;
  UOps src;
  Arg arg;
  int64_t tag = -1;
  // derived, not part of identity
  size_t hash = 0;
  uint64_t id = 0;  // creation serial, stable within a process
  bool has_shape = false;
  Shape shape;  // the max shape when a dim is symbolic
  UOps sym;     // per dim: the symbolic size (a Variable expression) or nullptr; empty when every dim is concrete
  std::string device;
  // storage of a BUFFER node (a runtime Buffer), owned by the node: freed when the node dies
  mutable std::shared_ptr<void> buffer;

 private:
  int64_t vmin_ = 0, vmax_ = 0;
  int64_t compute_vmin() const;
  int64_t compute_vmax() const;

 public:

  static UOpRef make(Ops op, DType dtype, UOps src = {}, Arg arg = {}, int64_t tag = -1);

  UOpRef ref() const { return shared_from_this(); }
  UOpRef replace_src(UOps new_src) const;
  UOpRef with_tag(int64_t t) const;
  UOpRef with_arg(Arg a) const;

  template <class T> const T& as() const { return std::get<T>(arg); }
  template <class T> bool is() const { return std::holds_alternative<T>(arg); }
  int64_t numel() const;
  bool is_const() const { return op == Ops::CONST; }
  // value of an integer/bool CONST (throws otherwise)
  int64_t const_int() const;
  double const_float() const;  // any numeric CONST as double
  bool is_const_value(double v) const;
  const UOp* base() const;  // skip movement ops
  // ranges opened somewhere below and not closed (RANGE nodes), in id order
  std::vector<UOpRef> ranges() const;
  std::vector<UOpRef> toposort() const;  // post-order, sources first
  // integer bounds for index math (interval arithmetic)
  // integer bounds of index math (interval arithmetic), computed once when the node is made
  int64_t vmin() const { return vmin_; }
  int64_t vmax() const { return vmax_; }
  std::string render() const;  // index-math expression text ("r0*3+r1", "4")
  // size of dim i as index math: the symbolic size, or a constant
  UOpRef dim(size_t i) const;
  bool is_variable() const;  // a Variable leaf (BUFFER/PARAM in AddrSpace::ALU with a name)
};

// constructors ----------------------------------------------------------------------------------------
UOpRef uconst(DType dt, double v);
UOpRef uconst_int(DType dt, int64_t v);
UOpRef uconst_bool(bool v);
UOpRef uconst_invalid();
UOpRef uconst_like(const UOpRef& x, double v);
UOpRef alu(Ops op, UOps src);
UOpRef alu(Ops op, const UOpRef& a);
UOpRef alu(Ops op, const UOpRef& a, const UOpRef& b);
UOpRef alu(Ops op, const UOpRef& a, const UOpRef& b, const UOpRef& c);
UOpRef ucast(const UOpRef& x, DType dt);
UOpRef urange(int64_t size, int64_t id, AxisType t);
UOpRef urange(const UOpRef& size, int64_t id, AxisType t);  // symbolic size allowed
// index math helpers (weakint)
UOpRef iadd(const UOpRef& a, const UOpRef& b);
UOpRef imul(const UOpRef& a, const UOpRef& b);
UOpRef iconst(int64_t v);

// values of consts for hashing: -0.0 != 0.0, nan == nan
bool arg_equal(const Arg& a, const Arg& b);
size_t arg_hash(const Arg& a);
std::string arg_repr(const Arg& a);
std::string format_double(double v);  // python repr of a float

size_t live_uop_count();

// A multi-device value (Tensor.shard, a device tuple) lives on its devices joined by ',' ("CPU:1,CPU:2"); the Python
// API shows the tuple. Its tensor graph is lowered to one graph per device before it is scheduled (schedule/multi.h).
inline bool is_multi_device(const std::string& d) { return d.find(',') != std::string::npos; }
std::vector<std::string> split_devices(const std::string& d);  // "A,B" -> {A, B}; "A" -> {A}
std::string join_devices(const std::vector<std::string>& ds);
// whether an MSTACK (a multi-device value) was ever made: the multi pass has nothing to do before one is
bool multi_values_made();

}  // namespace ts
