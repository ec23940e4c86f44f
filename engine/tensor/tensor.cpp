// Tensor (tensor.h): the registry of live tensors, creation, elementwise ops, effects (assign, realize, reads)
#include "engine/tensor/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "engine/schedule/multi.h"
#include "engine/tensor/tensor_internal.h"
#include "engine/uop/buffer.h"
#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"

namespace ts {

// ---- registry -----------------------------------------------------------------------------------
namespace {
// every TensorData alive, linked in creation order (a link and an unlink per tensor, nothing allocated)
std::mutex g_reg_mu;
TensorData* g_live_first = nullptr;
TensorData* g_live_last = nullptr;
std::string& default_device_ref() {
  static std::string d = "CPU";  // install_realize sets the run's
  return d;
}
std::shared_ptr<TensorData> make_data(UOpRef u) {
  auto d = std::make_shared<TensorData>(std::move(u));
  static std::atomic<uint64_t> serial{0};
  d->serial = ++serial;
  std::lock_guard lk(g_reg_mu);
  d->prev_live = g_live_last;
  (g_live_last ? g_live_last->next_live : g_live_first) = d.get();
  g_live_last = d.get();
  return d;
}
DType weak_of(DType dt) {
  if (is_float(dt)) return dtypes::weakfloat;
  if (is_int(dt)) return dtypes::weakint;
  return dt;
}
}  // namespace

TensorData::TensorData(UOpRef u) : uop(std::move(u)) {}
TensorData::~TensorData() {
  std::lock_guard lk(g_reg_mu);
  if (!prev_live && g_live_first != this) return;  // never linked (make_data links every tensor it makes)
  (prev_live ? prev_live->next_live : g_live_first) = next_live;
  (next_live ? next_live->prev_live : g_live_last) = prev_live;
}

std::vector<std::shared_ptr<TensorData>> live_tensors() {
  std::lock_guard lk(g_reg_mu);
  std::vector<std::shared_ptr<TensorData>> out;
  for (TensorData* p = g_live_first; p; p = p->next_live)
    if (auto s = p->weak_from_this().lock()) out.push_back(std::move(s));
  return out;
}

TraceScopeHook& trace_scope_hook() {
  static TraceScopeHook h;
  return h;
}
TraceGraphHook& trace_graph_hook() {
  static TraceGraphHook h;
  return h;
}
RealizeHook& realize_hook() {
  static RealizeHook h;
  return h;
}
ReadHook& read_hook() {
  static ReadHook h;
  return h;
}
const std::string& default_device() { return default_device_ref(); }
void set_default_device(const std::string& d) { default_device_ref() = d; }
int64_t next_buffer_slot() {
  static std::atomic<int64_t> n{0};
  return n.fetch_add(1);
}
UOpRef new_buffer(const std::string& device, int64_t numel, DType dt) {
  if (is_multi_device(device)) throw Error("internal: one buffer on several devices (" + device + "): a multi-device value is an MSTACK of buffers");
  ParamArg pa;
  pa.slot = next_buffer_slot();
  pa.size = numel;
  pa.device = device;
  return UOp::make(Ops::BUFFER, dt, {}, pa);
}

Tensor::Tensor(UOpRef u) : d_(make_data(std::move(u))) {}

std::string Tensor::device() const { return uop()->device; }
int64_t Tensor::numel() const {
  int64_t n = 1;
  for (auto s : shape()) n *= s;
  return n;
}
namespace {
// buffer identity: a BUFFER, or a contiguous SHRINK range of one, behind RESHAPEs; a multi-device value's when every
// shard has one
bool realized_node(const UOp* u) {
  if (u->op == Ops::MSTACK) return std::all_of(u->src.begin(), u->src.end(), [](const UOpRef& s) { return realized_node(s.get()); });
  while (u->op == Ops::RESHAPE || (u->op == Ops::SHRINK && u->src.size() == 1 && u->src[0]->op == Ops::BUFFER)) u = u->src[0].get();
  return u->op == Ops::BUFFER;
}
}  // namespace
bool Tensor::is_realized() const { return realized_node(uop().get()); }

int64_t Tensor::resolve_dim(int64_t d, int64_t extra) const {
  int64_t n = ndim() + extra;
  // a 0-d tensor takes dims 0 and -1 (the reference's range check is against max(1, ndim))
  int64_t r = d < 0 ? d + std::max<int64_t>(n, 1) : d;
  if (r < 0 || r >= std::max<int64_t>(n, 1))
    throw Error("dim " + std::to_string(d) + " out of range for tensor of shape " + shape_str(shape()), Error::Kind::Index);
  return r;
}

// ---- creation -----------------------------------------------------------------------------------
namespace {
// a filled host buffer as a PYTHON BUFFER copied to `device` (the default device when empty), in `shape`
Tensor python_buffer_tensor(const std::shared_ptr<Buffer>& buf, const Shape& shape, const std::string& device) {
  const int64_t n = buf->size;
  UOpRef b = new_buffer(buf->device, n, buf->dtype);
  b->buffer = buf;
  std::string dev = device.empty() ? default_device() : device;
  UOpRef c = UOp::make(Ops::COPY, buf->dtype, {b}, std::string(dev));
  if (shape.size() != 1 || shape[0] != n) c = UOp::make(Ops::RESHAPE, buf->dtype, {c}, Shape(shape));
  return Tensor(c);
}
}  // namespace

Tensor Tensor::from_host(const HostData& h, const std::string& device) {
  int64_t n = 1;
  for (auto s : h.shape) n *= s;
  DType dt = h.dtype;
  auto buf = std::make_shared<Buffer>();
  buf->device = "PYTHON";
  buf->dtype = dt;
  buf->size = n;
  buf->ptr = std::calloc(std::max<size_t>(buf->nbytes(), 1), 1);
  buf->release = [](void* p, size_t) { std::free(p); };
  auto* p = static_cast<uint8_t*>(buf->ptr);
  for (int64_t i = 0; i < n; ++i) {
    bool fl = is_float(dt);
    double fv = fl ? (i < (int64_t)h.f.size() ? h.f[i] : 0) : 0;
    int64_t iv = fl ? 0 : (i < (int64_t)h.i.size() ? h.i[i] : 0);
    if (!fl && !h.f.empty() && h.i.empty()) iv = static_cast<int64_t>(h.f[i]);
    if (fl && h.f.empty() && !h.i.empty()) fv = static_cast<double>(h.i[i]);
    void* dst = p + i * dt->itemsize();
    if (dt == dtypes::float32) { float v = static_cast<float>(fv); std::memcpy(dst, &v, 4); }
    else if (dt == dtypes::float64) std::memcpy(dst, &fv, 8);
    else if (dt == dtypes::float16) { _Float16 v = static_cast<_Float16>(fv); std::memcpy(dst, &v, 2); }
    else if (dt == dtypes::bfloat16) {  // the upper half of the float, rounded to nearest even (NaN stays quiet)
      float f = static_cast<float>(fv);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t v = std::isnan(f) ? uint16_t{0x7fc0} : static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
      std::memcpy(dst, &v, 2);
    }
    else if (is_fp8(dt)) { uint8_t v = float_to_fp8(fv, dt); std::memcpy(dst, &v, 1); }  // rounded from the double
    else if (dt == dtypes::bool_) { bool v = iv != 0; std::memcpy(dst, &v, 1); }
    else std::memcpy(dst, &iv, dt->itemsize());  // little endian truncation
  }
  return python_buffer_tensor(buf, h.shape, device);
}

namespace {
// a PYTHON buffer of `shape` x `dt` that must hold exactly nbytes
std::shared_ptr<Buffer> host_buffer(size_t nbytes, const Shape& shape, DType dt) {
  int64_t n = 1;
  for (auto s : shape) {
    if (s < 0) throw Error("Tensor: negative dimension in shape " + shape_str(shape));
    n *= s;
  }
  if (static_cast<size_t>(n) * dt->itemsize() != nbytes)
    throw Error("Tensor: " + std::to_string(nbytes) + " bytes do not hold shape " + shape_str(shape) + " of " + dtype_repr(dt));
  auto buf = std::make_shared<Buffer>();
  buf->device = "PYTHON";
  buf->dtype = dt;
  buf->size = n;
  return buf;
}
}  // namespace

Tensor Tensor::from_bytes(const void* bytes, size_t nbytes, const Shape& shape, DType dt, const std::string& device) {
  auto buf = host_buffer(nbytes, shape, dt);
  buf->ptr = std::malloc(std::max<size_t>(nbytes, 1));
  buf->release = [](void* p, size_t) { std::free(p); };
  if (nbytes) std::memcpy(buf->ptr, bytes, nbytes);
  return python_buffer_tensor(buf, shape, device);
}

Tensor Tensor::from_memory(void* ptr, size_t nbytes, const Shape& shape, DType dt, const std::string& device,
                           std::function<void()> release) {
  auto buf = host_buffer(nbytes, shape, dt);
  buf->device = "NPY";
  buf->ptr = ptr;
  buf->release = [release = std::move(release)](void*, size_t) { release(); };
  return python_buffer_tensor(buf, shape, device);
}

Tensor Tensor::from_external(void* ptr, const Shape& shape, DType dt, const std::string& device) {
  const std::string dev = device.empty() ? default_device() : device;
  if (dev != "CPU" && dev.rfind("CPU:", 0) != 0)  // the host memory, or a CPU:N's own (host memory too)
    throw Error("from_blob: " + dev + "'s memory is not host memory: a blob is read where it lies (use a CPU device)");
  int64_t n = 1;
  for (auto s : shape) n *= s;
  auto buf = host_buffer(static_cast<size_t>(n) * dt->itemsize(), shape, dt);
  buf->device = dev;
  buf->ptr = ptr;
  buf->release = [](void*, size_t) {};  // the caller's memory
  UOpRef b = new_buffer(dev, n, dt);
  b->buffer = buf;
  if (shape.size() != 1) b = UOp::make(Ops::RESHAPE, dt, {b}, Shape(shape));
  return Tensor(b);
}

Tensor Tensor::scalar(double v, DType dt) { return Tensor(uconst(dt, v)); }

Tensor Tensor::empty(const Shape& shape, DType dt, const std::string& device) {
  if (!dt) dt = dtypes::default_float;
  int64_t n = 1;
  for (auto s : shape) {
    if (s < 0) throw Error("Tensor.empty: negative dimension in shape " + shape_str(shape));
    n *= s;
  }
  if (is_multi_device(device)) {  // a whole buffer on each device
    UOps each;
    for (auto& d : split_devices(device)) each.push_back(empty(shape, dt, d).uop());
    return Tensor(mstack(std::move(each), std::nullopt));
  }
  UOpRef b = new_buffer(device.empty() ? default_device() : device, n, dt);
  if (shape.size() != 1) b = UOp::make(Ops::RESHAPE, dt, {b}, Shape(shape));
  return Tensor(b);
}

Tensor Tensor::full(const Shape& shape, double v, DType dt, const std::string& device) {
  if (!dt) dt = dtypes::default_float;  // python's int/float/bool fill values pick their dtype in the front end
  Tensor val = Tensor(uconst(dt, v)).reshape(Shape(shape.size(), 1)).expand(std::vector<int64_t>(shape));
  Tensor ret = empty(shape, dt, device);
  UOpRef store = UOp::make(Ops::STORE, dtypes::void_, {ret.uop(), val.uop()});
  return Tensor(UOp::make(Ops::AFTER, dt, {ret.uop(), store}));
}
Tensor Tensor::zeros(const Shape& s, DType dt, const std::string& d) { return full(s, 0, dt, d); }
Tensor Tensor::ones(const Shape& s, DType dt, const std::string& d) { return full(s, 1, dt, d); }

// a broadcast constant with no device (the reference's full(..., buffer=False))
Tensor const_full(const Shape& shape, double v, DType dt) {
  return Tensor(uconst(dt, v)).reshape(Shape(shape.size(), 1)).expand(std::vector<int64_t>(shape));
}

// the reference's _cumalu for ADD: pad with n-1 zeros in front, slide a window of n, sum it
Tensor cumsum_pooled(const Tensor& t, int64_t a) {
  int64_t n = t.shape()[a];
  std::vector<std::pair<int64_t, int64_t>> pads(t.ndim(), {0, 0});
  pads.back() = {n - 1, 0};
  return t.transpose(a, -1).pad(pads).pool({n}).sum(std::vector<int64_t>{-1}).transpose(a, -1);
}

Tensor Tensor::arange(double start, std::optional<double> stop, double step, DType dt) {
  if (!stop) { stop = start; start = 0; }
  if (step == 0) throw Error("arange: step cannot be 0");
  bool any_float = start != std::floor(start) || *stop != std::floor(*stop) || step != std::floor(step);
  if (!dt) dt = any_float ? dtypes::default_float : dtypes::default_int;
  int64_t n = static_cast<int64_t>(std::ceil((*stop - start) / step));
  if (n <= 0) return const_full({0}, 0, dt);
  Tensor s = const_full({n}, step, dt);
  Tensor cs = cumsum_pooled(s, 0);  // one stage at any length (the reference's _cumalu), collapsed by the scheduler
  return cs.add(Tensor::scalar(start - step, is_float(dt) ? dtypes::weakfloat : dtypes::weakint)).cast(dt);
}

Tensor Tensor::eye(int64_t n, DType dt) {
  if (!dt) dt = dtypes::default_float;
  Tensor a = arange(static_cast<double>(n), std::nullopt).reshape({n, 1}), b = arange(static_cast<double>(n), std::nullopt).reshape({1, n});
  return a.eq(b).cast(dt);
}

// ---- elementwise --------------------------------------------------------------------------------
namespace {
std::pair<Tensor, Tensor> broadcasted(const Tensor& x, const Tensor& y) {
  DType out = least_upper(x.dtype(), y.dtype());
  auto promote = [&](const Tensor& t) {
    if (is_weak(t.dtype()) && t.uop()->base()->op == Ops::CONST) {
      const UOp* b = t.uop()->base();
      if (t.uop()->op == Ops::CONST) return Tensor(uconst(weak_of(out), b->const_float()));
      return t;
    }
    return t.cast(out);
  };
  // shape check with a readable error
  const Shape &a = x.shape(), &b = y.shape();
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())], db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) throw Error("cannot broadcast shapes " + shape_str(a) + " and " + shape_str(b), Error::Kind::Index);
  }
  return {promote(x), promote(y)};
}
Tensor raw_alu(Ops op, const Tensor& a, const Tensor& b) { return Tensor(ts::alu(op, a.uop(), b.uop())); }
Tensor raw_alu(Ops op, const Tensor& a) { return Tensor(ts::alu(op, a.uop())); }
Tensor pyf(double v) { return Tensor::scalar(v, dtypes::weakfloat); }
}  // namespace

Tensor Tensor::alu(Ops op, const Tensor& y) const {
  auto [a, b] = broadcasted(*this, y);
  // bitwise ops and shifts are for integers and bools: say so here, at the op, not in a compiler diagnostic later
  bool bitwise = op == Ops::AND || op == Ops::OR || op == Ops::XOR || op == Ops::SHL || op == Ops::SHR;
  if (bitwise && (is_float(a.dtype()) || is_float(b.dtype())))
    throw Error(std::string(op_name(op)) + " of " + a.dtype()->name + " and " + b.dtype()->name +
                ": bitwise ops need integer or bool tensors");
  try {
    return raw_alu(op, a, b);
  } catch (const Error& e) {
    throw Error(std::string(op_name(op)) + ": " + e.what());
  }
}
Tensor Tensor::add(const Tensor& y) const { return alu(Ops::ADD, y); }
Tensor Tensor::mul(const Tensor& y) const { return alu(Ops::MUL, y); }
Tensor Tensor::sub(const Tensor& y) const {
  auto [a, b] = broadcasted(*this, y);
  return raw_alu(Ops::ADD, a, b.neg());
}
Tensor Tensor::neg() const {
  if (dtype() == dtypes::bool_) return logical_not();
  return mul(py(-1));
}
Tensor Tensor::div(const Tensor& y) const {
  auto [a, b] = broadcasted(*this, y);
  if (is_int(a.dtype()) || is_bool(a.dtype())) a = a.cast(dtypes::default_float);
  if (is_int(b.dtype()) || is_bool(b.dtype())) b = b.cast(is_weak(b.dtype()) ? dtypes::weakfloat : dtypes::default_float);
  return raw_alu(Ops::MUL, a, b.reciprocal());
}
Tensor Tensor::floordiv(const Tensor& y) const {
  auto [a, b] = broadcasted(*this, y);
  if (is_int(a.dtype()) && is_int(b.dtype())) return raw_alu(Ops::FLOORDIV, a, b);
  return a.div(b).floor();
}
Tensor Tensor::mod(const Tensor& y) const {
  auto [a, b] = broadcasted(*this, y);
  if (is_int(a.dtype()) && is_int(b.dtype())) return raw_alu(Ops::FLOORMOD, a, b);
  return a.sub(a.div(b).floor().mul(b));
}
Tensor Tensor::pow(const Tensor& y) const {
  // POW, simplified by symbolic for constant exponents (squaring, sqrt for halves, reciprocal for negatives)
  auto [base, exponent] = broadcasted(*this, y);
  if (!is_float(least_upper(base.dtype(), exponent.dtype())) && y.uop()->op == Ops::CONST && y.uop()->const_float() < 0)
    throw Error("pow: base needs to be float for a negative exponent (dtype " + dtype_repr(dtype()) + ")");
  return raw_alu(Ops::POW, base, exponent);
}
Tensor Tensor::maximum(const Tensor& y) const { return alu(Ops::MAX, y); }
Tensor Tensor::minimum(const Tensor& y) const {
  auto [t, x] = broadcasted(*this, y);
  DType dt = least_upper(t.dtype(), x.dtype());
  if (is_float(dt)) return raw_alu(Ops::MAX, t.neg(), x.neg()).neg();
  // the reference's integer minimum: k = dt.min + dt.max flips the order (-1 for signed, all ones for unsigned, True
  // for bool), so min(t, x) = max(t ^ k, x ^ k) ^ k; symbolic folds it by bounds (a clamp of an index disappears)
  int64_t k = is_bool(dt) ? 1 : is_unsigned(dt) ? (dt->bitsize >= 64 ? -1 : (int64_t{1} << dt->bitsize) - 1) : -1;
  Tensor kt(uconst_int(dt, k));
  return raw_alu(Ops::MAX, t.bitwise_xor(kt), x.bitwise_xor(kt)).bitwise_xor(kt);
}
Tensor Tensor::lt(const Tensor& y) const { return alu(Ops::CMPLT, y); }
Tensor Tensor::gt(const Tensor& y) const {
  auto [a, b] = broadcasted(y, *this);
  return raw_alu(Ops::CMPLT, a, b);
}
Tensor Tensor::ge(const Tensor& y) const { return lt(y).logical_not(); }
Tensor Tensor::le(const Tensor& y) const { return gt(y).logical_not(); }
Tensor Tensor::ne(const Tensor& y) const { return alu(Ops::CMPNE, y); }
Tensor Tensor::eq(const Tensor& y) const { return ne(y).logical_not(); }
Tensor Tensor::logical_not() const { return cast(dtypes::bool_).ne(Tensor::scalar(1, dtypes::bool_)); }
Tensor Tensor::bitwise_and(const Tensor& y) const { return alu(Ops::AND, y); }
Tensor Tensor::bitwise_or(const Tensor& y) const { return alu(Ops::OR, y); }
Tensor Tensor::bitwise_xor(const Tensor& y) const { return alu(Ops::XOR, y); }
Tensor Tensor::threefry(const Tensor& key) const {
  if (dtype() != dtypes::uint64 || key.dtype() != dtypes::uint64)
    throw Error("threefry: counter and key must be uint64, got " + dtype_repr(dtype()) + " and " + dtype_repr(key.dtype()));
  return alu(Ops::THREEFRY, key);
}
Tensor Tensor::where(const Tensor& x, const Tensor& y) const {
  auto [a, b] = broadcasted(x, y);
  Tensor c = cast(dtypes::bool_);
  // readable shape check
  broadcasted(c, a);
  broadcasted(c, b);
  return Tensor(ts::alu(Ops::WHERE, c.uop(), a.uop(), b.uop()));
}
namespace {
// the reference's SQRT, RECIPROCAL, EXP2 and LOG2 of an int or bool tensor compute in the least float above its dtype
Tensor float_operand(const Tensor& x) {
  if (is_float(x.dtype())) return x;
  const DType up = least_upper(x.dtype(), dtypes::weakfloat);
  return x.cast(up == dtypes::weakfloat ? dtypes::float32 : up);
}
}  // namespace
Tensor Tensor::reciprocal() const { return raw_alu(Ops::RECIPROCAL, float_operand(*this)); }
Tensor Tensor::sqrt() const { return raw_alu(Ops::SQRT, cast(least_upper(dtype(), dtypes::weakfloat) == dtypes::weakfloat ? dtypes::float32 : least_upper(dtype(), dtypes::weakfloat))); }
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::exp2() const { return raw_alu(Ops::EXP2, float_operand(*this)); }
Tensor Tensor::log2() const { return raw_alu(Ops::LOG2, float_operand(*this)); }
Tensor Tensor::exp() const {
  Tensor x = cast(is_float(dtype()) && !is_weak(dtype()) ? dtype() : dtypes::float32);
  return x.mul(pyf(1.0 / std::log(2.0))).exp2();
}
Tensor Tensor::log() const {
  Tensor x = cast(is_float(dtype()) && !is_weak(dtype()) ? dtype() : dtypes::float32);
  return x.log2().mul(pyf(std::log(2.0)));
}
Tensor Tensor::sin() const { return raw_alu(Ops::SIN, cast(is_float(dtype()) && !is_weak(dtype()) ? dtype() : dtypes::float32)); }
Tensor Tensor::cos() const { return Tensor::scalar(M_PI / 2, dtypes::weakfloat).sub(cast(is_float(dtype()) && !is_weak(dtype()) ? dtype() : dtypes::float32)).sin(); }
Tensor Tensor::tan() const { return sin().div(cos()); }
Tensor Tensor::trunc() const { return raw_alu(Ops::TRUNC, *this); }
Tensor Tensor::floor() const {
  if (!is_float(dtype())) return *this;
  Tensor t = trunc();
  return lt(t).where(t.sub(py(1)), t);
}
Tensor Tensor::ceil() const {
  if (!is_float(dtype())) return *this;
  Tensor t = trunc();
  return gt(t).where(t.add(py(1)), t);
}
Tensor Tensor::round() const {
  // half to even: where trunc(x)/2 is whole, round toward that even neighbour
  Tensor b = trunc().div(pyf(2.0));
  return gt(py(0)).eq(b.trunc().eq(b)).where(sub(pyf(0.5)).ceil(), add(pyf(0.5)).floor());
}
Tensor Tensor::abs() const {
  if (is_unsigned(dtype()) || is_bool(dtype())) return *this;
  return mul(sign());  // the reference's x * sign(x): its gradient is sign(x), 0 at 0
}
Tensor Tensor::sign() const {
  auto c = [&](double v) { return Tensor::scalar(v, dtype()); };  // const_like: the tensor's own dtype
  return ne(py(0)).where(lt(py(0)).where(c(-1), c(1)), c(0));
}
Tensor Tensor::relu() const { return gt(py(0)).where(*this, py(0)); }
Tensor Tensor::sigmoid() const { return Tensor::scalar(1, dtypes::weakint).add(mul(pyf(-1.0 / std::log(2.0))).exp2()).reciprocal(); }
Tensor Tensor::tanh() const { return mul(py(2)).sigmoid().mul(py(2)).sub(py(1)); }
Tensor Tensor::gelu() const {
  return mul(pyf(0.5)).mul(add(mul(*this).mul(*this).mul(pyf(0.044715))).mul(pyf(std::sqrt(2.0 / M_PI))).tanh().add(py(1)));
}
Tensor Tensor::silu() const { return mul(sigmoid()); }
Tensor Tensor::leaky_relu(double s) const { return lt(py(0)).where(mul(pyf(s)), *this); }
Tensor Tensor::square() const { return mul(*this); }
Tensor Tensor::clip(std::optional<double> lo, std::optional<double> hi) const {
  // the reference's clamp: two selects, (x < lo).where(lo, x) then (r > hi).where(hi, r)
  Tensor r = *this;
  if (lo) r = r.lt(py(*lo)).where(py(*lo), r);
  if (hi) r = r.gt(py(*hi)).where(py(*hi), r);
  return r;
}
Tensor Tensor::cast(DType dt) const {
  if (dt == dtype()) return *this;
  if (uop()->op == Ops::CONST && is_weak(dtype())) return Tensor(uconst(dt, uop()->const_float()));
  return Tensor(UOp::make(Ops::CAST, dt, {uop()}));
}
namespace {
DType uint_of_size(int64_t bytes) {
  return bytes == 1 ? dtypes::uint8 : bytes == 2 ? dtypes::uint16 : bytes == 4 ? dtypes::uint32 : dtypes::uint64;
}
}  // namespace

// the bytes of each element as another dtype. Of another itemsize the last axis is rescaled (as the reference, the
// bytes of a contiguous last axis, little endian): the elements' unsigned bits are split into, or joined from,
// the narrower ones with shifts (a multiply or divide by a power of two) in the wider unsigned type
Tensor Tensor::bitcast(DType dt) const {
  const int64_t in = dtype()->itemsize(), out = dt->itemsize();
  if (is_weak(dtype()) || is_weak(dt)) throw Error("bitcast requires concrete dtypes, got " + dtype_repr(dtype()) + " -> " + dtype_repr(dt));
  if (dt == dtype()) return *this;  // the reference's: no BITCAST to the dtype it has
  if (in == out) return Tensor(UOp::make(Ops::BITCAST, dt, {uop()}));
  if (ndim() == 0 || (shape().back() * in) % out) throw Error("unsupported size in bitcast: " + shape_str(shape()) + " of " + dtype_repr(dtype()) + " to " + dtype_repr(dt));
  const Tensor bits = is_bool(dtype()) ? cast(dtypes::uint8) : bitcast(uint_of_size(in));
  const DType wide = uint_of_size(std::max(in, out)), narrow = uint_of_size(std::min(in, out));
  Shape lead(shape().begin(), shape().end() - 1);
  const int64_t last = shape().back();
  Tensor joined;
  if (out > in) {  // r consecutive elements, the first in the low bits
    const int64_t r = out / in;
    Shape grouped = lead;
    grouped.insert(grouped.end(), {last / r, r});
    const Tensor g = bits.reshape(grouped);
    for (int64_t k = 0; k < r; ++k) {
      std::vector<std::pair<int64_t, int64_t>> bounds;
      for (int64_t d : grouped) bounds.emplace_back(0, d);
      bounds.back() = {k, k + 1};
      Tensor part = g.shrink(bounds).reshape(Shape(grouped.begin(), grouped.end() - 1)).cast(wide);
      if (k) part = part.mul(Tensor::scalar(std::ldexp(1.0, static_cast<int>(8 * in * k)), wide));
      joined = k ? joined.add(part) : part;
    }
  } else {  // each element as r narrower ones, its low bits first
    const int64_t r = in / out;
    std::vector<Tensor> parts;
    for (int64_t k = 0; k < r; ++k) {
      Tensor part = k ? bits.floordiv(Tensor::scalar(std::ldexp(1.0, static_cast<int>(8 * out * k)), wide)) : bits;
      parts.push_back(part.cast(narrow));
    }
    Shape flat = lead;
    flat.push_back(last * r);
    joined = Tensor::stack(parts, -1).reshape(flat);
  }
  return joined.bitcast(dt);
}

// ---- effects ------------------------------------------------------------------------------------
Tensor& Tensor::assign(const Tensor& x) {
  if (x.shape() != shape()) throw Error("assign: shape mismatch " + shape_str(shape()) + " <- " + shape_str(x.shape()));
  Tensor v = x.dtype() == dtype() ? x : x.cast(dtype());
  if (v.device().empty()) v = broadcast_to(v, shape());
  if (v.uop() == uop()) return *this;  // a self assign is a no-op
  // a detached view (t.detach()[i] = x) writes where the view looks: the store's target has no DETACH in it
  UOpRef target = uop();
  for (const UOp* u = uop().get(); group::movement(u->op) || u->op == Ops::DETACH; u = u->src[0].get())
    if (u->op == Ops::DETACH) target = substitute(target, {{u, u->src[0]}});
  UOpRef store = UOp::make(Ops::STORE, dtypes::void_, {target, v.uop()});
  UOpRef assigned = UOp::make(Ops::AFTER, dtype(), {target, store});
  // a view assign (a[0].assign(x), a.shrink(...).assign(x)): the write lands in the buffer the view looks at, so
  // every tensor of that buffer (the view itself included) now reads it after the store, as the reference's
  // "Embed View Assign" does
  auto has_identity = [](const UOp* u, bool after_ok) {
    while (u->op == Ops::RESHAPE || (after_ok && u->op == Ops::AFTER)) u = u->src[0].get();
    return u->op == Ops::BUFFER || u->op == Ops::PARAM;
  };
  const UOp* ib = uop().get();
  while (!has_identity(ib, false) && (group::movement(ib->op) || ib->op == Ops::BITCAST || ib->op == Ops::DETACH))
    ib = ib->src[0].get();
  if (ib == uop().get() || !has_identity(ib, true)) {
    set_uop(assigned);
    return *this;
  }
  const std::unordered_map<const UOp*, UOpRef> map{{ib, UOp::make(Ops::AFTER, ib->dtype, {ib->ref(), assigned})}};
  for (auto& t : live_tensors())
    if (UOpRef n = substitute(t->uop, map); n != t->uop) t->uop = n;
  return *this;
}

Tensor& Tensor::realize() {
  realize_all({*this});
  return *this;
}

void Tensor::realize_all(const std::vector<Tensor>& ts) {
  std::vector<std::shared_ptr<TensorData>> todo;
  for (auto& t : ts) {
    if (t.device().empty() || is_weak(t.dtype())) continue;  // deviceless: nothing to do
    if (t.is_realized()) continue;
    todo.push_back(t.d_);
  }
  if (todo.empty()) return;
  if (!realize_hook()) throw Error("no realize backend installed");
  realize_hook()(todo);
}

HostData Tensor::read(bool raw) const {
  // the reference's Tensor._buffer: contiguous (a no-op when deviceless), clone to the device if deviceless, a
  // multi-device value gathered on the host
  Tensor c = contiguous();
  if (device().empty()) c = c.clone();
  if (is_multi_device(device())) c = c.to("CPU");
  c.realize();
  if (!read_hook()) throw Error("no realize backend installed");
  return read_hook()(c.uop(), raw);
}
HostData Tensor::data() const { return read(false); }
HostData Tensor::bytes() const { return read(true); }

}  // namespace ts
