#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/uop/uop.h"

namespace ts {

// The state behind a Tensor handle. Every live TensorData is registered so realize can re-point tensors at
// the buffers that now hold their values (the reference's _apply_map_to_tensors).
struct TensorData : std::enable_shared_from_this<TensorData> {
  UOpRef uop;
  std::shared_ptr<TensorData> grad;  // filled by backward()
  bool is_param = true;              // optimizers update params; buffers (running stats, step counts) are not
  uint64_t serial = 0;               // creation order
  TensorData* prev_live = nullptr;   // the list of live tensors, in creation order (live_tensors())
  TensorData* next_live = nullptr;
  TensorData(UOpRef u);
  ~TensorData();
};
// snapshot of all live tensors (weak, so this never keeps one alive)
std::vector<std::shared_ptr<TensorData>> live_tensors();

// Host data: a flat array in row-major order, as doubles / int64 / bool depending on dtype.
struct HostData {
  Shape shape;
  DType dtype;
  std::vector<double> f;   // float dtypes
  std::vector<int64_t> i;  // int and bool dtypes
  std::vector<uint8_t> raw;  // the bytes as stored (a raw read fills this instead of f and i)
};

using AxisArg = std::optional<std::vector<int64_t>>;  // nullopt = all axes

// The lazy Tensor: every op builds UOps; nothing runs until realize()/data().
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(UOpRef u);
  explicit Tensor(std::shared_ptr<TensorData> d) : d_(std::move(d)) {}

  // ---- creation ----
  static Tensor from_host(const HostData& data, const std::string& device = "");  // PYTHON buffer + COPY
  // the same from `nbytes` bytes laid out as `dt` in row-major order (numpy arrays, bytes, the buffer protocol)
  static Tensor from_bytes(const void* bytes, size_t nbytes, const Shape& shape, DType dt, const std::string& device = "");
  // memory the caller owns (an NPY buffer: a numpy array), read when the tensor is realized; `release` runs when the
  // buffer is freed
  static Tensor from_memory(void* ptr, size_t nbytes, const Shape& shape, DType dt, const std::string& device,
                            std::function<void()> release);
  // memory the caller keeps (Tensor.from_blob): a realized host buffer over `ptr` itself, so every kernel that reads it
  // reads the memory as it is then; nothing is copied or freed. `device` must compute on host memory.
  static Tensor from_external(void* ptr, const Shape& shape, DType dt, const std::string& device = "");
  static Tensor scalar(double v, DType dt);  // deviceless python constant (dtype usually weak)
  static Tensor empty(const Shape& shape, DType dt = nullptr, const std::string& device = "");
  static Tensor full(const Shape& shape, double v, DType dt = nullptr, const std::string& device = "");
  static Tensor zeros(const Shape& shape, DType dt = nullptr, const std::string& device = "");
  static Tensor ones(const Shape& shape, DType dt = nullptr, const std::string& device = "");
  static Tensor arange(double start, std::optional<double> stop, double step = 1, DType dt = nullptr);
  static Tensor eye(int64_t n, DType dt = nullptr);

  // ---- properties ----
  const UOpRef& uop() const { return d_->uop; }
  void set_uop(UOpRef u) { d_->uop = std::move(u); }
  const std::shared_ptr<TensorData>& data_ptr() const { return d_; }
  const Shape& shape() const { return uop()->shape; }
  DType dtype() const { return uop()->dtype; }
  std::string device() const;  // "" when deviceless
  int64_t ndim() const { return static_cast<int64_t>(shape().size()); }
  int64_t numel() const;

  // ---- elementwise ----
  Tensor alu(Ops op, const Tensor& y) const;  // broadcasting + dtype promotion
  Tensor add(const Tensor& y) const;
  Tensor sub(const Tensor& y) const;
  Tensor mul(const Tensor& y) const;
  Tensor div(const Tensor& y) const;
  Tensor floordiv(const Tensor& y) const;
  Tensor mod(const Tensor& y) const;
  Tensor pow(const Tensor& y) const;
  Tensor maximum(const Tensor& y) const;
  Tensor minimum(const Tensor& y) const;
  Tensor lt(const Tensor& y) const;
  Tensor gt(const Tensor& y) const;
  Tensor le(const Tensor& y) const;
  Tensor ge(const Tensor& y) const;
  Tensor eq(const Tensor& y) const;
  Tensor ne(const Tensor& y) const;
  Tensor bitwise_and(const Tensor& y) const;
  Tensor bitwise_or(const Tensor& y) const;
  Tensor bitwise_xor(const Tensor& y) const;
  Tensor threefry(const Tensor& key) const;  // THREEFRY: threefry2x32 of a uint64 counter under a uint64 key
  Tensor logical_not() const;
  Tensor where(const Tensor& x, const Tensor& y) const;  // self is the condition
  Tensor neg() const;
  Tensor reciprocal() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor trunc() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor gelu() const;
  Tensor silu() const;
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor square() const;
  Tensor clip(std::optional<double> lo, std::optional<double> hi) const;
  Tensor cast(DType dt) const;
  Tensor bitcast(DType dt) const;

  // ---- movement ----
  Tensor reshape(std::vector<int64_t> shape) const;  // one -1 allowed
  Tensor expand(std::vector<int64_t> shape) const;   // -1 keeps a dim; numpy broadcasting
  Tensor permute(std::vector<int64_t> order) const;
  Tensor pad(const std::vector<std::pair<int64_t, int64_t>>& pads, double value = 0) const;
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const;  // (start, end) per dim
  // shrink where dim i starts at sym_starts[i] and ends at sym_ends[i], symbolic bounds over bound Variables
  // (nullptr, or an empty list: the integer bound of `bounds`)
  Tensor shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds, const UOps& sym_starts, const UOps& sym_ends) const;
  Tensor flip(std::vector<int64_t> axes) const;
  Tensor transpose(int64_t a = 1, int64_t b = 0) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor squeeze(std::optional<int64_t> dim = std::nullopt) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor contiguous() const;
  Tensor detach() const;
  Tensor clone(const std::string& device = "") const;
  Tensor to(const std::string& device) const;
  // on several devices: split along axis into one part per device, or (no axis) whole on each (schedule/multi.h)
  Tensor shard(const std::vector<std::string>& devices, std::optional<int64_t> axis = std::nullopt) const;
  static Tensor cat(const std::vector<Tensor>& ts, int64_t dim = 0);
  static Tensor stack(const std::vector<Tensor>& ts, int64_t dim = 0);
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor repeat(std::vector<int64_t> repeats) const;
  // sliding windows over the last len(k) dims: (..., *out, *k) (the reference's _pool)
  Tensor pool(const std::vector<int64_t>& k, std::vector<int64_t> stride = {}, std::vector<int64_t> dilation = {}) const;
  Tensor max_pool2d(std::vector<int64_t> kernel = {2, 2}, std::vector<int64_t> stride = {}, std::vector<int64_t> dilation = {1},
                    std::vector<int64_t> padding = {0}) const;
  Tensor avg_pool2d(std::vector<int64_t> kernel = {2, 2}, std::vector<int64_t> stride = {}, std::vector<int64_t> dilation = {1},
                    std::vector<int64_t> padding = {0}) const;
  // t[idx] along the leading axes with integer tensors (one-hot form)
  Tensor index_tensor(int64_t dim, const Tensor& idx) const;

  // ---- reductions ----
  Tensor sum(const AxisArg& axis = std::nullopt, bool keepdim = false, DType acc = nullptr) const;
  Tensor prod(const AxisArg& axis = std::nullopt, bool keepdim = false) const;
  Tensor max(const AxisArg& axis = std::nullopt, bool keepdim = false) const;
  Tensor min(const AxisArg& axis = std::nullopt, bool keepdim = false) const;
  Tensor mean(const AxisArg& axis = std::nullopt, bool keepdim = false) const;
  Tensor var(const AxisArg& axis = std::nullopt, bool keepdim = false, double correction = 1) const;
  Tensor std(const AxisArg& axis = std::nullopt, bool keepdim = false, double correction = 1) const;
  Tensor any(const AxisArg& axis = std::nullopt, bool keepdim = false) const;
  Tensor all(const AxisArg& axis = std::nullopt, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor cumsum(int64_t axis = 0) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(int64_t axis = -1, bool keepdim = false) const;

  // ---- composites ----
  Tensor matmul(const Tensor& w) const;
  Tensor dot(const Tensor& w) const { return matmul(w); }
  Tensor linear(const Tensor& w, const std::optional<Tensor>& bias) const;
  Tensor conv2d(const Tensor& w, const std::optional<Tensor>& bias = std::nullopt, int64_t groups = 1,
                std::vector<int64_t> stride = {1}, std::vector<int64_t> dilation = {1}, std::vector<int64_t> padding = {0}) const;

  // ---- autograd (engine/tensor/gradient.cpp) ----
  // d(self)/d(target) for each target, as lazy tensors; `grad` seeds the gradient (required unless self is a scalar)
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets, const std::optional<Tensor>& grad = std::nullopt) const;
  // fills .grad of every live floating-point tensor on a device that self depends on (accumulating into an existing .grad)
  Tensor& backward(const std::optional<Tensor>& grad = std::nullopt);
  std::optional<Tensor> grad() const;
  void set_grad(const std::optional<Tensor>& g);
  bool is_param() const { return d_->is_param; }
  void set_is_param(bool p) { d_->is_param = p; }
  // the reference's _rop: reduce the given axes away (no keepdim, no accumulation dtype)
  Tensor rop(Ops op, const std::vector<int64_t>& axes) const;

  // ---- effects ----
  Tensor& assign(const Tensor& x);  // in place: writes into this tensor's buffer
  Tensor& realize();
  static void realize_all(const std::vector<Tensor>& ts);
  HostData data() const;  // realizes a contiguous copy and reads it back (does not change this tensor)
  HostData bytes() const;  // the same, as the stored bytes (HostData::raw)
  bool is_realized() const;  // has buffer identity

  // helpers
  int64_t resolve_dim(int64_t d, int64_t ndim_plus = 0) const;  // negative dims; throws naming the op
  static Tensor broadcast_to(const Tensor& t, const Shape& shape);

 private:
  HostData read(bool raw) const;  // data() and bytes()
  Tensor reduce(Ops op, const AxisArg& axis, bool keepdim, const char* opname) const;
  std::shared_ptr<TensorData> d_;
};

// How realize hands work to realize/ (installed by engine/realize, so tensor/ does not depend on it).
// realize: bufferize + schedule + run the given tensors, re-pointing live tensors at their buffers.
using RealizeHook = std::function<void(const std::vector<std::shared_ptr<TensorData>>& tensors)>;
RealizeHook& realize_hook();
// Opens a named trace context around work that is not a realize (the gradient pass) and snapshots `graph` as its
// tensor graph when given; the context lasts as long as the returned token. Installed by realize/ (the tracer's owner).
using TraceScopeHook = std::function<std::shared_ptr<void>(const std::string& name)>;
TraceScopeHook& trace_scope_hook();
using TraceGraphHook = std::function<void(const UOps& graph)>;
TraceGraphHook& trace_graph_hook();
// read a realized BUFFER node's bytes back to the host
// (raw: the bytes as stored in HostData::raw, not decoded)
using ReadHook = std::function<HostData(const UOpRef& buffer_view, bool raw)>;
ReadHook& read_hook();

// Variable(name, lo, hi): a symbolic integer; bind gives it a value for one realize (the value is not part of any
// cache key, so the schedule and the compiled kernels are reused across values)
UOpRef variable(const std::string& name, int64_t lo, int64_t hi);
UOpRef bind_variable(const UOpRef& var, int64_t value);

const std::string& default_device();  // "CPU" unless DEV says otherwise
void set_default_device(const std::string& d);
int64_t next_buffer_slot();
// a new BUFFER node on `device` holding `numel` elements of `dt`
UOpRef new_buffer(const std::string& device, int64_t numel, DType dt);

}  // namespace ts
