#include "engine/tensor/tensor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "engine/schedule/multi.h"
#include "engine/uop/buffer.h"
#include "engine/uop/error.h"
#include "engine/uop/rewrite.h"
#include "engine/uop/symbolic.h"

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
std::string shape_str(const Shape& s) {
  std::string o = "(";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + (s.size() == 1 ? ",)" : ")");
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

namespace {
// a broadcast constant with no device (the reference's full(..., buffer=False))
Tensor const_full(const Shape& shape, double v, DType dt) {
  return Tensor(uconst(dt, v)).reshape(Shape(shape.size(), 1)).expand(std::vector<int64_t>(shape));
}
}  // namespace

namespace {
// the reference's _cumalu for ADD: pad with n-1 zeros in front, slide a window of n, sum it
Tensor cumsum_pooled(const Tensor& t, int64_t a) {
  int64_t n = t.shape()[a];
  std::vector<std::pair<int64_t, int64_t>> pads(t.ndim(), {0, 0});
  pads.back() = {n - 1, 0};
  return t.transpose(a, -1).pad(pads).pool({n}).sum(std::vector<int64_t>{-1}).transpose(a, -1);
}
}  // namespace

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
    if (da != db && da != 1 && db != 1) throw Error("cannot broadcast shapes " + shape_str(a) + " and " + shape_str(b));
  }
  return {promote(x), promote(y)};
}
Tensor raw_alu(Ops op, const Tensor& a, const Tensor& b) { return Tensor(ts::alu(op, a.uop(), b.uop())); }
Tensor raw_alu(Ops op, const Tensor& a) { return Tensor(ts::alu(op, a.uop())); }
Tensor py(double v) { return Tensor::scalar(v, v == std::floor(v) && std::fabs(v) < 1e15 ? dtypes::weakint : dtypes::weakfloat); }
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

// ---- movement -----------------------------------------------------------------------------------
Tensor Tensor::reshape(std::vector<int64_t> ns) const {
  int64_t known = 1, neg = -1;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] == -1) {
      if (neg >= 0) throw Error("reshape: only one dimension can be inferred, got " + shape_str(ns));
      neg = static_cast<int64_t>(i);
    } else if (ns[i] < 0) throw Error("reshape: invalid dimension in " + shape_str(ns));
    else known *= ns[i];
  }
  if (neg >= 0) {
    if (known == 0 || numel() % known) throw Error("reshape: cannot reshape " + shape_str(shape()) + " to " + shape_str(ns));
    ns[neg] = numel() / known;
  }
  int64_t n = 1;
  for (auto s : ns) n *= s;
  if (n != numel()) throw Error("reshape: size mismatch, can't reshape " + shape_str(shape()) + " -> " + shape_str(ns));
  if (ns == shape()) return *this;
  return Tensor(UOp::make(Ops::RESHAPE, dtype(), {uop()}, Shape(ns)));
}

Tensor Tensor::broadcast_to(const Tensor& t, const Shape& ns) {
  const Shape& s = t.shape();
  if (s == ns) return t;
  if (s.size() > ns.size()) throw Error("cannot broadcast tensor of shape " + shape_str(s) + " to fewer dimensions " + shape_str(ns));
  size_t nleft = ns.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != ns[nleft + i] && s[i] != 1) throw Error("cannot broadcast " + shape_str(s) + " to " + shape_str(ns));
  std::vector<int64_t> expand_at, kept;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1 && ns[nleft + i] != 1) expand_at.push_back(i);
    else kept.push_back(i);
  }
  Shape sq;
  for (auto i : kept) sq.push_back(s[i]);
  Tensor squeezed = t.reshape(sq);
  Shape arg(ns.begin(), ns.begin() + nleft);
  for (auto i : expand_at) arg.push_back(ns[nleft + i]);
  Tensor expanded = arg.empty() ? squeezed : Tensor(UOp::make(Ops::EXPAND, t.dtype(), {squeezed.uop()}, arg));
  std::vector<int64_t> perm;
  for (size_t i = 0; i < nleft; ++i) perm.push_back(i);
  for (size_t i = 0; i < s.size(); ++i) {
    auto e = std::find(expand_at.begin(), expand_at.end(), (int64_t)i);
    if (e != expand_at.end()) perm.push_back(nleft + (e - expand_at.begin()));
    else perm.push_back(nleft + expand_at.size() + (std::find(kept.begin(), kept.end(), (int64_t)i) - kept.begin()));
  }
  return expanded.permute(perm);
}

Tensor Tensor::expand(std::vector<int64_t> ns) const {
  size_t nleft = ns.size() >= shape().size() ? ns.size() - shape().size() : 0;
  for (size_t i = 0; i < ns.size(); ++i)
    if (ns[i] == -1) {
      if (i < nleft) throw Error("expand: -1 is not allowed for new leading dims");
      ns[i] = shape()[i - nleft];
    }
  return broadcast_to(*this, ns);
}

Tensor Tensor::permute(std::vector<int64_t> order) const {
  if ((int64_t)order.size() != ndim()) throw Error("permute: order " + shape_str(order) + " does not match shape " + shape_str(shape()));
  std::vector<bool> seen(order.size());
  for (auto& o : order) {
    o = resolve_dim(o);
    if (seen[o]) throw Error("permute: repeated dim in " + shape_str(order));
    seen[o] = true;
  }
  bool ident = true;
  for (size_t i = 0; i < order.size(); ++i) ident &= order[i] == (int64_t)i;
  if (ident) return *this;
  return Tensor(UOp::make(Ops::PERMUTE, dtype(), {uop()}, Shape(order)));
}

Tensor Tensor::pad(const std::vector<std::pair<int64_t, int64_t>>& pads, double value) const {
  if ((int64_t)pads.size() != ndim()) throw Error("pad: " + std::to_string(pads.size()) + " pads for shape " + shape_str(shape()));
  bool has_neg = false, any = false;
  for (auto& [b, a] : pads) { has_neg |= b < 0 || a < 0; any |= b != 0 || a != 0; }
  if (!any) return *this;
  Tensor x = *this;
  std::vector<std::pair<int64_t, int64_t>> p = pads;
  if (has_neg) {
    std::vector<std::pair<int64_t, int64_t>> sh;
    for (size_t i = 0; i < pads.size(); ++i) sh.push_back({-std::min<int64_t>(pads[i].first, 0), std::min(pads[i].second + shape()[i], shape()[i])});
    x = x.shrink(sh);
    for (auto& [b, a] : p) { b = std::max<int64_t>(b, 0); a = std::max<int64_t>(a, 0); }
  }
  Shape arg;
  bool nz = false;
  for (auto& [b, a] : p) { arg.push_back(b); arg.push_back(a); nz |= b || a; }
  if (!nz) return x;
  Tensor base(UOp::make(Ops::PAD, x.dtype(), {x.uop()}, arg));
  if (value == 0) return base;
  Tensor mask(UOp::make(Ops::PAD, dtypes::bool_, {const_full(x.shape(), 1, dtypes::bool_).uop()}, arg));
  return mask.where(base, Tensor::scalar(value, is_float(dtype()) ? dtypes::weakfloat : dtypes::weakint));
}

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& b) const {
  if ((int64_t)b.size() != ndim()) throw Error("shrink: " + std::to_string(b.size()) + " bounds for shape " + shape_str(shape()));
  Shape arg;
  bool noop = true;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i].first < 0 || b[i].second > shape()[i] || b[i].first > b[i].second)
      throw Error("shrink: bounds (" + std::to_string(b[i].first) + ", " + std::to_string(b[i].second) + ") out of range for dim " +
                  std::to_string(i) + " of shape " + shape_str(shape()));
    arg.push_back(b[i].first);
    arg.push_back(b[i].second);
    noop &= b[i].first == 0 && b[i].second == shape()[i];
  }
  if (noop) return *this;
  return Tensor(UOp::make(Ops::SHRINK, dtype(), {uop()}, arg));
}

namespace {
// the value of an expression of bound Variables at their bound values (its largest value where one is unbound)
int64_t bound_value(const UOpRef& e) {
  std::unordered_map<const UOp*, UOpRef> sub;
  for (const auto& u : e->toposort())
    if (u->op == Ops::AFTER && u->src.size() == 2 && u->src[0]->is_variable() && u->src[1]->op == Ops::STORE) sub[u.get()] = u->src[1]->src.at(1);
  const UOpRef v = simplify(substitute(e, sub));
  return v->op == Ops::CONST ? v->const_int() : v->vmax();
}
}  // namespace

Tensor Tensor::shrink(const std::vector<std::pair<int64_t, int64_t>>& b, const UOps& sym_starts, const UOps& sym_ends) const {
  auto sym = [](const UOps& v, size_t i) -> UOpRef { return i < v.size() ? v[i] : nullptr; };
  bool any = false;
  for (size_t i = 0; i < b.size(); ++i) any |= sym(sym_starts, i) != nullptr || sym(sym_ends, i) != nullptr;
  if (!any) return shrink(b);
  if ((int64_t)b.size() != ndim()) throw Error("shrink: " + std::to_string(b.size()) + " bounds for shape " + shape_str(shape()));
  // a symbolic bound is a source of the SHRINK; its entry in the arg is minus that source's index
  Shape arg;
  UOps src{uop()};
  auto bound = [&](const UOpRef& v, int64_t fixed, size_t i, const char* which) {
    if (!v) {
      if (fixed < 0 || fixed > shape()[i])
        throw Error(std::string("shrink: ") + which + " " + std::to_string(fixed) + " out of range for dim " + std::to_string(i) + " of shape " + shape_str(shape()));
      arg.push_back(fixed);
      return;
    }
    // checked at the values it is bound to now (as the reference, a Variable's range may reach past the dim: the
    // window a[3:5, vi:vi+2] of an 11-wide dim with vi in [1, 10])
    const int64_t now = bound_value(v);
    if (now > shape()[i] || now < 0 || v->vmin() < 0)
      throw Error(std::string("shrink: symbolic ") + which + " " + v->render() + " = " + std::to_string(now) + " (in [" + std::to_string(v->vmin()) + ", " +
                  std::to_string(v->vmax()) + "]) out of range for dim " + std::to_string(i) + " of shape " + shape_str(shape()));
    src.push_back(v);
    arg.push_back(-static_cast<int64_t>(src.size() - 1));
  };
  for (size_t i = 0; i < b.size(); ++i) {
    bound(sym(sym_starts, i), b[i].first, i, "start");
    bound(sym(sym_ends, i), b[i].second, i, "end");
  }
  UOpRef out = UOp::make(Ops::SHRINK, dtype(), src, arg);
  for (size_t i = 0; i < b.size(); ++i)
    if (out->shape[i] < 0) throw Error("shrink: the end of dim " + std::to_string(i) + " can be before its start");
  return Tensor(out);
}

UOpRef variable(const std::string& name, int64_t lo, int64_t hi) {
  if (lo > hi) throw Error("Variable " + name + ": empty range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  ParamArg pa;
  pa.slot = -1;
  pa.name = name;
  pa.vmin = lo;
  pa.vmax = hi;
  pa.addrspace = AddrSpace::ALU;
  return UOp::make(Ops::BUFFER, dtypes::weakint, {}, pa);
}
UOpRef bind_variable(const UOpRef& var, int64_t value) {
  const ParamArg& pa = var->as<ParamArg>();
  if (value < pa.vmin || value > pa.vmax)
    throw Error("bind: value " + std::to_string(value) + " out of range [" + std::to_string(pa.vmin) + ", " + std::to_string(pa.vmax) + "] of Variable " + pa.name);
  UOpRef st = UOp::make(Ops::STORE, dtypes::void_, {var, iconst(value)});
  return UOp::make(Ops::AFTER, var->dtype, {var, st});
}

Tensor Tensor::flip(std::vector<int64_t> axes) const {
  Shape arg(ndim(), 0);
  for (auto a : axes) {
    int64_t r = resolve_dim(a);
    if (arg[r]) throw Error("flip: dim " + std::to_string(a) + " appears more than once");
    arg[r] = 1;
  }
  if (std::all_of(arg.begin(), arg.end(), [](int64_t v) { return v == 0; })) return *this;
  return Tensor(UOp::make(Ops::FLIP, dtype(), {uop()}, arg));
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  std::vector<int64_t> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[resolve_dim(a)], order[resolve_dim(b)]);
  return permute(order);
}
Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (ndim() == 0) return reshape({1});
  int64_t s = resolve_dim(start), e = resolve_dim(end);
  std::vector<int64_t> ns(shape().begin(), shape().begin() + s);
  int64_t p = 1;
  for (int64_t i = s; i <= e; ++i) p *= shape()[i];
  ns.push_back(p);
  ns.insert(ns.end(), shape().begin() + e + 1, shape().end());
  return reshape(ns);
}
Tensor Tensor::squeeze(std::optional<int64_t> dim) const {
  std::vector<int64_t> ns;
  if (!dim) {
    for (auto s : shape()) if (s != 1) ns.push_back(s);
    return reshape(ns);
  }
  int64_t d = resolve_dim(*dim);  // a 0-d tensor takes dims 0 and -1 only
  if (ndim() == 0 || shape()[d] != 1) return *this;
  for (int64_t i = 0; i < ndim(); ++i) if (i != d) ns.push_back(shape()[i]);
  return reshape(ns);
}
Tensor Tensor::unsqueeze(int64_t dim) const {
  int64_t d = resolve_dim(dim, 1);
  std::vector<int64_t> ns(shape().begin(), shape().end());
  ns.insert(ns.begin() + d, 1);
  return reshape(ns);
}
Tensor Tensor::contiguous() const {
  if (is_weak(dtype())) return *this;
  if (uop()->op == Ops::CONTIGUOUS || device().empty() || is_realized()) return *this;
  return Tensor(UOp::make(Ops::CONTIGUOUS, dtype(), {uop()}));
}
Tensor Tensor::detach() const { return Tensor(UOp::make(Ops::DETACH, dtype(), {uop()})); }
Tensor Tensor::clone(const std::string& dev) const {
  std::string d = dev.empty() ? (device().empty() ? default_device() : device()) : dev;
  Tensor ret = empty(shape(), dtype(), d);
  Tensor src = *this;
  if (!device().empty() && device() != d) src = to(d);
  Tensor val = src;
  if (device().empty()) val = broadcast_to(*this, shape());
  UOpRef store = UOp::make(Ops::STORE, dtypes::void_, {ret.uop(), val.uop()});
  return Tensor(UOp::make(Ops::AFTER, dtype(), {ret.uop(), store}));
}
Tensor Tensor::to(const std::string& dev) const {
  if (dev == device() || device().empty()) return *this;
  // host data not yet copied anywhere goes straight to dev; a computed value is realized on its own device first
  // (the schedule copies buffers only; the reference's lazy CONTIGUOUS before a COPY of a computed view)
  const UOp* u = uop().get();
  while (u->op == Ops::RESHAPE) u = u->src[0].get();
  if (u->op == Ops::COPY && u->src[0]->op == Ops::BUFFER) {
    UOpRef c = UOp::make(Ops::COPY, dtype(), {u->src[0]}, std::string(dev));
    return Tensor(c).reshape(shape());
  }
  if (!is_realized()) return contiguous().realize().to(dev);
  return Tensor(UOp::make(Ops::COPY, dtype(), {uop()}, std::string(dev)));
}

Tensor Tensor::shard(const std::vector<std::string>& devices, std::optional<int64_t> axis) const {
  if (device().empty()) return *this;
  if (is_multi_device(device())) throw Error("can't shard a multi-device tensor");
  if (devices.size() == 1) return to(devices[0]);
  return Tensor(ts::shard(uop(), devices, axis ? std::optional<int64_t>(resolve_dim(*axis)) : std::nullopt));
}

Tensor Tensor::cat(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) throw Error("cat: no tensors");
  if (ts[0].ndim() == 0) throw Error("cat: zero-dimensional tensors cannot be concatenated", Error::Kind::Index);
  int64_t d = ts[0].resolve_dim(dim);
  for (auto& t : ts) {
    if (t.ndim() != ts[0].ndim()) throw Error("cat: tensors have different ranks: " + shape_str(ts[0].shape()) + " and " + shape_str(t.shape()));
    for (int64_t i = 0; i < t.ndim(); ++i)
      if (i != d && t.shape()[i] != ts[0].shape()[i]) throw Error("cat: shape mismatch " + shape_str(ts[0].shape()) + " and " + shape_str(t.shape()) + " on dim " + std::to_string(i));
  }
  int64_t total = 0;
  for (auto& t : ts) total += t.shape()[d];
  Tensor out;
  int64_t off = 0;
  for (auto& t : ts) {
    std::vector<std::pair<int64_t, int64_t>> p(t.ndim(), {0, 0});
    p[d] = {off, total - off - t.shape()[d]};
    off += t.shape()[d];
    Tensor padded = t.pad(p);
    out = out.d_ ? out.add(padded) : padded;
  }
  return out;
}
Tensor Tensor::stack(const std::vector<Tensor>& ts, int64_t dim) {
  std::vector<Tensor> us;
  for (auto& t : ts) us.push_back(t.unsqueeze(dim));
  return cat(us, dim);
}

Tensor Tensor::index_tensor(int64_t dim, const Tensor& idx) const {
  // one-hot: (idx[..., None] == arange(n)) selects x along `dim`, summed over it
  int64_t d = resolve_dim(dim);
  int64_t n = shape()[d];
  std::vector<int64_t> perm{d};
  for (int64_t i = 0; i < ndim(); ++i) if (i != d) perm.push_back(i);
  Tensor x = permute(perm);  // indexed dim first, others in order
  Shape rest(x.shape().begin() + 1, x.shape().end());
  Tensor oh = idx.unsqueeze(-1).eq(arange(static_cast<double>(n), std::nullopt));  // idx.shape + (n,)
  std::vector<int64_t> ohs = oh.shape();
  for (size_t i = 0; i < rest.size(); ++i) ohs.push_back(1);
  oh = oh.reshape(ohs);
  std::vector<int64_t> xs(idx.ndim(), 1);
  xs.insert(xs.end(), x.shape().begin(), x.shape().end());
  Tensor r = oh.where(x.reshape(xs), py(0)).sum(std::vector<int64_t>{idx.ndim()}, false, dtype());
  if (d == 0) return r;
  // r: idx dims + rest; put the idx dims where `dim` was
  int64_t ni = idx.ndim(), nr = static_cast<int64_t>(rest.size());
  std::vector<int64_t> order;
  for (int64_t i = 0; i < d; ++i) order.push_back(ni + i);
  for (int64_t i = 0; i < ni; ++i) order.push_back(i);
  for (int64_t i = d; i < nr; ++i) order.push_back(ni + i);
  return r.permute(order);
}

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  if (index.ndim() != ndim()) throw Error("gather: index rank " + std::to_string(index.ndim()) + " != tensor rank " + std::to_string(ndim()));
  if (!is_int(index.dtype()) || is_bool(index.dtype())) throw Error("gather: the index must be an int tensor, got " + dtype_repr(index.dtype()));
  int64_t d = resolve_dim(dim);
  std::vector<std::pair<int64_t, int64_t>> sh;
  for (int64_t i = 0; i < ndim(); ++i) sh.push_back({0, i == d ? shape()[i] : index.shape()[i]});
  Tensor x = shrink(sh).unsqueeze(-1).transpose(-1, d);
  Tensor oh = index.unsqueeze(-1).eq(arange(static_cast<double>(shape()[d]), std::nullopt));
  return oh.where(x, py(0)).sum(std::vector<int64_t>{-1}, false, dtype());
}

// ---- reductions ---------------------------------------------------------------------------------
Tensor Tensor::reduce(Ops op, const AxisArg& axis_in, bool keepdim, const char* opname) const {
  Tensor self = cast(strong(dtype()));
  std::vector<int64_t> axis;
  if (!axis_in) for (int64_t i = 0; i < ndim(); ++i) axis.push_back(i);
  else for (auto a : *axis_in) {
    if (ndim() == 0 && (a == 0 || a == -1)) continue;
    int64_t r = a < 0 ? a + ndim() : a;
    if (r < 0 || r >= ndim())
      throw Error(std::string(opname) + ": axis " + std::to_string(a) + " out of range for shape " + shape_str(shape()), Error::Kind::Index);
    axis.push_back(r);
  }
  if (ndim() == 0) axis.clear();
  std::sort(axis.begin(), axis.end());
  if (std::adjacent_find(axis.begin(), axis.end()) != axis.end())
    throw Error(std::string(opname) + ": axis " + shape_str(*axis_in) + " repeats a dim of shape " + shape_str(shape()));
  std::vector<int64_t> red;
  for (auto a : axis) if (shape()[a] != 1) red.push_back(a);
  Shape out_shape;
  for (int64_t i = 0; i < ndim(); ++i) if (std::find(axis.begin(), axis.end(), i) == axis.end()) out_shape.push_back(shape()[i]);
  Tensor ret;
  if (red.empty()) ret = self.reshape(out_shape);
  else {
    std::vector<int64_t> perm = red;
    for (int64_t i = 0; i < ndim(); ++i) if (std::find(red.begin(), red.end(), i) == red.end()) perm.push_back(i);
    Tensor p = self.permute(perm);
    ret = Tensor(UOp::make(Ops::REDUCE, p.dtype(), {p.uop()}, ReduceArg{op, static_cast<int>(red.size())}));
    if (axis != red) ret = ret.reshape(out_shape);
  }
  if (keepdim) {
    Shape ks;
    for (int64_t i = 0; i < ndim(); ++i) ks.push_back(std::find(axis.begin(), axis.end(), i) != axis.end() ? 1 : shape()[i]);
    ret = ret.reshape(ks);
  }
  return ret;
}
Tensor Tensor::sum(const AxisArg& axis, bool keepdim, DType acc) const {
  Tensor r = cast(acc ? acc : sum_acc(dtype())).reduce(Ops::ADD, axis, keepdim, "sum");
  if (!acc && (dtype() == dtypes::float16 || dtype() == dtypes::bfloat16 || is_fp8(dtype()))) r = r.cast(dtype());
  return r;
}
Tensor Tensor::rop(Ops op, const std::vector<int64_t>& axes) const { return reduce(op, axes, false, op_name(op).data()); }
Tensor Tensor::prod(const AxisArg& axis, bool keepdim) const { return reduce(Ops::MUL, axis, keepdim, "prod"); }
Tensor Tensor::max(const AxisArg& axis, bool keepdim) const { return reduce(Ops::MAX, axis, keepdim, "max"); }
Tensor Tensor::min(const AxisArg& axis, bool keepdim) const {
  if (is_float(dtype())) return neg().max(axis, keepdim).neg();
  if (is_bool(dtype())) return logical_not().max(axis, keepdim).logical_not();
  return bitwise_xor(py(-1)).max(axis, keepdim).bitwise_xor(py(-1));
}
namespace {
// How many elements a reduce over `axis` adds up, less `correction`, as a divisor: a number, or, where a reduced dim is
// symbolic (a[:, :vi]), a scalar of that Variable expression's value (floored at 0 as a number is)
Tensor reduced_count(const Tensor& x, const AxisArg& axis, double correction) {
  const Shape ks = x.sum(axis, true).shape();
  double n = 1;
  UOpRef sym;
  for (size_t i = 0; i < x.shape().size(); ++i) {
    if (x.shape()[i] == ks[i]) continue;
    const UOpRef d = x.uop()->dim(i);
    if (d->op == Ops::CONST) n *= static_cast<double>(x.shape()[i]);
    else sym = sym ? alu(Ops::MUL, sym, d) : d;
  }
  if (!sym) return Tensor::scalar(std::max(0.0, n - correction), dtypes::weakfloat);
  // (read through the Variables themselves: their values are the ones the shrink bound, passed to the kernel)
  std::unordered_map<const UOp*, UOpRef> unbind;
  for (const auto& u : sym->toposort())
    if (u->op == Ops::AFTER && !u->src.empty() && u->src[0]->is_variable()) unbind[u.get()] = u->src[0];
  const UOpRef count = ucast(alu(Ops::MUL, substitute(sym, unbind), iconst(static_cast<int64_t>(n))), dtypes::float32);
  return Tensor(count).sub(Tensor::scalar(correction, dtypes::weakfloat)).maximum(Tensor::scalar(0.0, dtypes::weakfloat));
}
}  // namespace

Tensor Tensor::mean(const AxisArg& axis, bool keepdim) const {
  DType out = is_float(dtype()) ? dtype() : dtypes::float32;
  Tensor num = cast(sum_acc(dtype())).sum(axis, keepdim);
  return num.div(reduced_count(*this, axis, 0)).cast(out);
}
Tensor Tensor::var(const AxisArg& axis, bool keepdim, double correction) const {
  Tensor sq = sub(mean(axis, true)).square();
  // summed in the accumulation dtype (half: float32, so 70,000 elements' denominator is not a half inf)
  const DType out = is_float(dtype()) ? dtype() : dtypes::float32;
  return sq.cast(sum_acc(dtype())).sum(axis, keepdim).div(reduced_count(*this, axis, correction)).cast(out);
}
Tensor Tensor::std(const AxisArg& axis, bool keepdim, double correction) const { return var(axis, keepdim, correction).sqrt(); }
Tensor Tensor::any(const AxisArg& axis, bool keepdim) const { return cast(dtypes::bool_).max(axis, keepdim); }
Tensor Tensor::all(const AxisArg& axis, bool keepdim) const { return logical_not().any(axis, keepdim).logical_not(); }
Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0, false);
  int64_t a = resolve_dim(*axis);
  int64_t n = shape()[a];
  Tensor m = eq(max(std::vector<int64_t>{a}, true));
  std::vector<int64_t> rs(ndim(), 1);
  rs[a] = n;
  Tensor idx = arange(static_cast<double>(n), 0.0, -1).reshape(rs);
  return Tensor::scalar(n, dtypes::weakint).sub(m.mul(idx).max(std::vector<int64_t>{a}, keepdim)).cast(dtypes::int32);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  if (is_float(dtype())) return neg().argmax(axis, keepdim);
  return bitwise_xor(py(-1)).argmax(axis, keepdim);
}

Tensor Tensor::cumsum(int64_t axis) const {
  int64_t a = resolve_dim(axis);
  // nothing to accumulate (the reference's _split_cumalu): the value in the sum's dtype
  if (ndim() == 0 || numel() == 0) return cast(sum().dtype());
  int64_t s = shape()[a];
  constexpr int64_t kSplit = 256;
  if (s <= kSplit * 2) return cumsum_pooled(*this, a);
  // two stages (the reference's _split_cumalu): cumsums of 256-chunks, plus the running total of earlier chunks
  int64_t padded = (s + kSplit - 1) / kSplit * kSplit;
  std::vector<std::pair<int64_t, int64_t>> pads(ndim(), {0, 0});
  pads.back() = {padded - s, 0};
  Tensor x = transpose(a, -1).pad(pads);
  std::vector<int64_t> cs(x.shape().begin(), x.shape().end() - 1);
  cs.push_back(padded / kSplit);
  cs.push_back(kSplit);
  Tensor chunks = cumsum_pooled(x.reshape(cs), static_cast<int64_t>(cs.size()) - 1);
  std::vector<std::pair<int64_t, int64_t>> last;
  for (int64_t i = 0; i + 1 < chunks.ndim(); ++i) last.push_back({0, chunks.shape()[i]});
  last.push_back({kSplit - 1, kSplit});
  Tensor tails = chunks.shrink(last).squeeze(-1);
  Tensor base = cumsum_pooled(tails, tails.ndim() - 1);
  std::vector<std::pair<int64_t, int64_t>> shift(base.ndim(), {0, 0});
  shift.back() = {1, -1};
  base = base.pad(shift);
  Tensor summed = chunks.add(base.unsqueeze(-1)).flatten(-2);
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (int64_t i = 0; i + 1 < summed.ndim(); ++i) keep.push_back({0, summed.shape()[i]});
  keep.push_back({padded - s, padded});
  return summed.shrink(keep).transpose(a, -1);
}

Tensor Tensor::repeat(std::vector<int64_t> reps) const {
  if (reps.size() < shape().size()) throw Error("repeat: need at least " + std::to_string(ndim()) + " repeats for shape " + shape_str(shape()));
  Shape base(reps.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  std::vector<int64_t> un, ex, fin;
  for (size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] < 0) throw Error("repeat: negative repeat count");
    if (reps[i] == 1) { un.push_back(base[i]); ex.push_back(base[i]); }
    else { un.push_back(1); un.push_back(base[i]); ex.push_back(reps[i]); ex.push_back(base[i]); }
    fin.push_back(reps[i] * base[i]);
  }
  return reshape(un).expand(ex).reshape(fin);
}

Tensor Tensor::pool(const std::vector<int64_t>& k, std::vector<int64_t> s, std::vector<int64_t> d) const {
  size_t nk = k.size();
  if (shape().size() < nk) throw Error("pool: can't pool " + shape_str(shape()) + " with kernel " + shape_str(k));
  if (s.size() <= 1) s.assign(nk, s.empty() ? 1 : s[0]);
  if (d.size() <= 1) d.assign(nk, d.empty() ? 1 : d[0]);
  if (s.size() != nk || d.size() != nk) throw Error("pool: stride/dilation do not match kernel " + shape_str(k));
  for (size_t j = 0; j < nk; ++j)
    if (k[j] <= 0 || s[j] <= 0 || d[j] <= 0)
      throw Error("pool: kernel size " + shape_str(k) + ", stride " + shape_str(s) + " and dilation " + shape_str(d) +
                      " must be positive (integer division or modulo by zero)",
                  Error::Kind::ZeroDivision);
  size_t nn = shape().size() - nk;
  std::vector<int64_t> noop(shape().begin(), shape().begin() + nn), i_(shape().begin() + nn, shape().end());
  auto cdiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  std::vector<int64_t> o, f;
  for (size_t j = 0; j < nk; ++j) {
    if (d[j] * (k[j] - 1) + 1 > i_[j]) throw Error("pool: kernel size " + shape_str(k) + " cannot be greater than the input size " + shape_str(i_));
    o.push_back(cdiv(i_[j] - d[j] * (k[j] - 1), s[j]));
    f.push_back(std::max<int64_t>(1, cdiv(o[j] * s[j] - d[j], i_[j])));
  }
  std::vector<int64_t> reps(nn, 1);
  for (size_t j = 0; j < nk; ++j) reps.push_back(cdiv(k[j] * (i_[j] * f[j] + d[j]), i_[j]));
  Tensor x = repeat(reps);
  auto shrink_to = [&](const Tensor& t, const std::vector<int64_t>& to) {
    std::vector<std::pair<int64_t, int64_t>> b;
    for (size_t j = 0; j < to.size(); ++j) b.push_back({0, to[j]});
    return t.shrink(b);
  };
  std::vector<int64_t> t1 = noop, t2 = noop, t3 = noop, t4 = noop, t5 = noop, t6 = noop;
  for (size_t j = 0; j < nk; ++j) {
    int64_t w = i_[j] * f[j] + d[j];
    t1.push_back(k[j] * w);
    t2.push_back(k[j]); t2.push_back(w);
    t3.push_back(k[j]); t3.push_back(o[j] * s[j]);
    t4.push_back(k[j]); t4.push_back(o[j]); t4.push_back(s[j]);
    t5.push_back(k[j]); t5.push_back(o[j]); t5.push_back(1);
    t6.push_back(k[j]); t6.push_back(o[j]);
  }
  x = shrink_to(x, t1).reshape(t2);
  x = shrink_to(x, t3).reshape(t4);
  x = shrink_to(x, t5).reshape(t6);
  std::vector<int64_t> perm;
  for (size_t j = 0; j < nn; ++j) perm.push_back(j);
  for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2 + 1);
  for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2);
  return x.permute(perm);
}

namespace {
// padding spec -> per-dim (before, after) for the last `dims` dims (int, per-dim, or torch-style flat list)
std::vector<std::pair<int64_t, int64_t>> pool_pads(const std::vector<int64_t>& p, size_t dims) {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (p.size() <= 1) { for (size_t i = 0; i < dims; ++i) out.push_back({p.empty() ? 0 : p[0], p.empty() ? 0 : p[0]}); return out; }
  if (p.size() == dims) { for (auto v : p) out.push_back({v, v}); return out; }
  if (p.size() == 2 * dims) {
    // (left, right, top, bottom, ...) -> per dim from the last
    for (size_t i = 0; i < dims; ++i) out.push_back({p[2 * (dims - 1 - i)], p[2 * (dims - 1 - i) + 1]});
    return out;
  }
  throw Error("padding must be an int or a sequence of length " + std::to_string(dims) + " or " + std::to_string(2 * dims));
}
}  // namespace

namespace {
// the windows of a 2-d pooling (stride defaults to the kernel) and the axes to reduce them over
std::pair<Tensor, std::vector<int64_t>> pool_windows(const Tensor& t, std::vector<int64_t> k, std::vector<int64_t> s,
                                                     const std::vector<int64_t>& d, const std::vector<int64_t>& p, double pad_value) {
  if (k.size() == 1) k.push_back(k[0]);
  if (s.empty()) s = k;
  auto pads = pool_pads(p, k.size());
  std::vector<std::pair<int64_t, int64_t>> full(t.ndim() - k.size(), {0, 0});
  full.insert(full.end(), pads.begin(), pads.end());
  std::vector<int64_t> axes;
  for (size_t i = 0; i < k.size(); ++i) axes.push_back(-1 - static_cast<int64_t>(i));
  return {t.pad(full, pad_value).pool(k, s, d), axes};
}
}  // namespace

Tensor Tensor::max_pool2d(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d, std::vector<int64_t> p) const {
  auto [x, axes] = pool_windows(*this, k, s, d, p, is_float(dtype()) ? -INFINITY : -2147483648.0);
  return x.max(axes);
}
Tensor Tensor::avg_pool2d(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d, std::vector<int64_t> p) const {
  auto [x, axes] = pool_windows(*this, k, s, d, p, 0);
  return x.mean(axes);
}

Tensor Tensor::softmax(int64_t axis) const {
  Tensor m = sub(max(std::vector<int64_t>{axis}, true).detach());
  Tensor e = m.exp();
  return e.mul(e.sum(std::vector<int64_t>{axis}, true).reciprocal());
}
Tensor Tensor::log_softmax(int64_t axis) const {
  Tensor m = sub(max(std::vector<int64_t>{axis}, true).detach());
  Tensor e = m.exp();
  return m.sub(e.sum(std::vector<int64_t>{axis}, true).log());
}
Tensor Tensor::logsumexp(int64_t axis, bool keepdim) const {
  Tensor m = max(std::vector<int64_t>{axis}, true).detach();
  Tensor r = sub(m).exp().sum(std::vector<int64_t>{axis}, keepdim).log();
  return r.add(keepdim ? m : m.squeeze(axis));
}

// ---- composites ---------------------------------------------------------------------------------
Tensor Tensor::matmul(const Tensor& w) const {
  int64_t dx = ndim(), dw = w.ndim();
  if (dx == 0 || dw == 0) throw Error("matmul: both tensors need to be at least 1D, got " + std::to_string(dx) + "D and " + std::to_string(dw) + "D");
  int64_t axis_w = dw >= 2 ? dw - 2 : 0;
  if (shape().back() != w.shape()[axis_w]) throw Error("matmul: cannot dot " + shape_str(shape()) + " and " + shape_str(w.shape()));
  int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  std::vector<int64_t> xs(shape().begin(), shape().end() - 1);
  for (int64_t i = 0; i < ones; ++i) xs.push_back(1);
  xs.push_back(shape().back());
  std::vector<int64_t> ws(w.shape().begin(), w.shape().end() - std::min<int64_t>(dw, 2));
  for (int64_t i = 0; i < ones; ++i) ws.push_back(1);
  ws.insert(ws.end(), w.shape().begin() + axis_w, w.shape().end());
  Tensor x = reshape(xs);
  Tensor ww = w.reshape(ws).transpose(-1, -std::min<int64_t>(dw, 2));
  return x.mul(ww).sum(std::vector<int64_t>{-1}).cast(least_upper(dtype(), w.dtype()));
}
Tensor Tensor::linear(const Tensor& w, const std::optional<Tensor>& bias) const {
  Tensor x = w.ndim() == 1 ? mul(w) : matmul(w);
  return bias ? x.add(*bias) : x;
}
Tensor Tensor::conv2d(const Tensor& w, const std::optional<Tensor>& bias, int64_t groups, std::vector<int64_t> stride,
                      std::vector<int64_t> dilation, std::vector<int64_t> padding) const {
  if (ndim() < 3 || w.ndim() != ndim())
    throw Error("conv2d: input " + shape_str(shape()) + " does not match the shape of the weights " + shape_str(w.shape()));
  int64_t bs = shape()[0], cin_ = shape()[1], cout = w.shape()[0], cin = w.shape()[1];
  std::vector<int64_t> HW(w.shape().begin() + 2, w.shape().end());
  size_t nd = HW.size();
  if (groups * cin != cin_)
    throw Error("conv2d: input tensor shape " + shape_str(shape()) + " does not match the shape of the weights " + shape_str(w.shape()) +
                ". (" + std::to_string(groups * cin) + " vs. " + std::to_string(cin_) + ")");
  auto pads = pool_pads(padding, nd);
  std::vector<std::pair<int64_t, int64_t>> full(ndim() - nd, {0, 0});
  full.insert(full.end(), pads.begin(), pads.end());
  Tensor x = pad(full).pool(HW, stride, dilation);
  int64_t rcout = cout / groups;
  std::vector<int64_t> oyx(x.shape().begin() + 2, x.shape().end() - nd);
  std::vector<int64_t> r1{bs, groups, cin, 1}, e1{bs, groups, cin, rcout};
  r1.insert(r1.end(), oyx.begin(), oyx.end()); r1.insert(r1.end(), HW.begin(), HW.end());
  e1.insert(e1.end(), oyx.begin(), oyx.end()); e1.insert(e1.end(), HW.begin(), HW.end());
  std::vector<int64_t> perm{0, 1, 3};
  for (size_t i = 0; i < oyx.size(); ++i) perm.push_back(4 + i);
  perm.push_back(2);
  for (size_t i = 0; i < nd; ++i) perm.push_back(4 + oyx.size() + i);
  x = x.reshape(r1).expand(e1).permute(perm);
  std::vector<int64_t> ws{1, groups, rcout};
  for (size_t i = 0; i < oyx.size(); ++i) ws.push_back(1);
  ws.push_back(cin);
  ws.insert(ws.end(), HW.begin(), HW.end());
  std::vector<int64_t> axes;
  for (size_t i = 0; i < 1 + oyx.size(); ++i) axes.push_back(-1 - (int64_t)i);
  std::vector<int64_t> out{bs, cout};
  out.insert(out.end(), oyx.begin(), oyx.end());
  Tensor ret = x.mul(w.reshape(ws)).sum(axes, true).reshape(out);
  if (!bias) return ret;
  std::vector<int64_t> bsh{1, -1};
  for (size_t i = 0; i < nd; ++i) bsh.push_back(1);
  return ret.add(bias->reshape(bsh));
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
