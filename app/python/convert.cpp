#include "app/python/convert.h"

#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/uop/error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <unordered_map>

namespace tsp {

namespace {
// Leaked on purpose: python objects must not be destroyed after the interpreter is finalized.
std::unordered_map<ts::DType, py::object>& dtype_cache() {
  static auto* cache = new std::unordered_map<ts::DType, py::object>();
  return *cache;
}
py::object*& ops_enum_ptr() {
  static py::object* ops = nullptr;
  return ops;
}

int64_t to_int64(py::handle h) {
  py::object idx = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!idx) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
  if (overflow != 0) throw py::value_error("integer out of range for int64");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

// a python int as the 64 bits the engine stores: int64's range, and 2**63 .. 2**64-1 (uint64 values) as their bits
int64_t int_bits(py::handle h) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(h.ptr());
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      PyErr_SetString(PyExc_OverflowError, ("Python int " + py::repr(h).cast<std::string>() + " does not fit in 64 bits").c_str());
      throw py::error_already_set();
    }
    return static_cast<int64_t>(u);
  }
  if (overflow < 0) {
    PyErr_SetString(PyExc_OverflowError, ("Python int " + py::repr(h).cast<std::string>() + " does not fit in 64 bits").c_str());
    throw py::error_already_set();
  }
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

bool is_sequence(py::handle h) { return py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h); }
}  // namespace

ts::DType to_dtype(py::handle h) {
  if (py::isinstance<ts::DTypeInfo>(h)) return h.cast<const ts::DTypeInfo*>();
  if (py::isinstance<py::str>(h)) {
    std::string name = h.cast<std::string>();
    if (name.rfind("dtypes.", 0) == 0) name = name.substr(7);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (ts::DType d = ts::dtypes::from_name(name)) return d;
    PyErr_SetString(PyExc_AttributeError, ("type object 'dtypes' has no attribute '" + name + "'").c_str());
    throw py::error_already_set();
  }
  // the reference's to_dtype reads anything else as a name (`dtype.lower()`): an AttributeError
  PyErr_SetString(PyExc_AttributeError, ("expected a DType or a dtype name, got " + std::string(py::str(py::type::of(h).attr("__name__")))).c_str());
  throw py::error_already_set();
}

ts::DType to_dtype_or_null(py::handle h) { return h.is_none() ? nullptr : to_dtype(h); }

py::object dtype_object(ts::DType d) {
  if (d == nullptr) return py::none();
  auto& cache = dtype_cache();
  auto it = cache.find(d);
  if (it != cache.end()) return it->second;
  py::object o = py::cast(const_cast<ts::DTypeInfo*>(d), py::return_value_policy::reference);
  cache.emplace(d, o);
  return o;
}

ts::DType dtype_of_scalar(py::handle h) {
  if (py::isinstance<py::bool_>(h)) return ts::dtypes::bool_;
  if (py::isinstance<py::int_>(h)) return ts::dtypes::weakint;
  if (py::isinstance<py::float_>(h)) return ts::dtypes::weakfloat;
  throw ts::Error("could not infer dtype of " + std::string(py::repr(h)) + " with type " +  // (the reference's RuntimeError)
                       std::string(py::str(py::type::of(h).attr("__name__"))));
}

void set_ops_enum(py::object ops_enum) {
  if (ops_enum_ptr() == nullptr) ops_enum_ptr() = new py::object();
  *ops_enum_ptr() = std::move(ops_enum);
}

py::object ops_object(ts::Ops op) {
  if (ops_enum_ptr() == nullptr) return py::int_(static_cast<int>(op));  // before the prelude ran
  return (*ops_enum_ptr())(static_cast<int>(op));
}

bool is_py_scalar(py::handle h) {
  return py::isinstance<py::bool_>(h) || py::isinstance<py::int_>(h) || py::isinstance<py::float_>(h);
}
bool is_tensor(py::handle h) { return py::isinstance<ts::Tensor>(h); }

ts::Tensor as_tensor(py::handle h) {
  if (is_tensor(h)) return h.cast<ts::Tensor>();
  if (py::isinstance<py::bool_>(h)) return ts::Tensor::scalar(h.cast<bool>() ? 1.0 : 0.0, ts::dtypes::bool_);
  if (py::isinstance<py::int_>(h)) return ts::Tensor(ts::uconst_int(ts::dtypes::weakint, int_bits(h)));
  if (py::isinstance<py::float_>(h)) return ts::Tensor::scalar(h.cast<double>(), ts::dtypes::weakfloat);
  throw ts::Error("expected a Tensor or a python scalar, got " +  // (a RuntimeError: the reference cannot infer its dtype)
                  std::string(py::str(py::type::of(h).attr("__name__"))));
}

std::string device_arg(py::handle h) {
  if (h.is_none()) return "";
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    // several devices (a multi-device tensor): each canonicalized, one device alone is that device
    std::vector<std::string> ds;
    for (py::handle d : h) ds.push_back(device_arg(d));
    if (ds.empty()) throw py::value_error("no devices given");
    return ts::join_devices(ds);
  }
  if (!py::isinstance<py::str>(h)) throw py::type_error("device must be a str or a tuple of them, got " + std::string(py::str(py::type::of(h).attr("__name__"))));
  // tinygrad canonicalizes the device name (upper case, no ":0"); a name that is no device is an error. A device with
  // its own memory (VULKAN, CPU:N) holds the tensor there; the host devices all compute on host memory ("CPU") and DEV
  // picks which runs the kernels, so naming a host device other than this run's would silently run on this one
  std::string d = ts::require_device(h.cast<std::string>());
  const ts::Device& dev = ts::get_device(d);
  if (!dev.host_memory()) return dev.memory();
  const std::string& running = ts::realize_config().device;
  if (d != "CPU" && d != running)
    throw py::value_error("device '" + d + "' is not this run's device (DEV=" + running + "): a run computes on one host device");
  return "CPU";
}

py::object device_object(const std::string& d) {
  if (d.empty()) return py::none();
  if (!ts::is_multi_device(d)) return py::str(d);
  py::list out;
  for (auto& x : ts::split_devices(d)) out.append(py::str(x));
  return py::tuple(out);
}

std::vector<int64_t> int_list(py::handle seq) {
  if (!is_sequence(seq)) return {to_int64(seq)};
  std::vector<int64_t> out;
  for (py::handle item : seq) out.push_back(to_int64(item));
  return out;
}

// a dimension of a shape: an int; a float or str is the reference's RuntimeError in creation (it cannot be a shape)
// and its ValueError in reshape (a size mismatch): the EngineError, both
int64_t shape_dim(py::handle h) {
  if (!PyIndex_Check(h.ptr()))
    throw ts::Error("shape must be int, got " + std::string(py::repr(h)) + " of type " + std::string(py::str(py::type::of(h).attr("__name__"))));
  return to_int64(h);
}
std::vector<int64_t> shape_list(py::handle seq) {
  if (!is_sequence(seq)) return {shape_dim(seq)};
  std::vector<int64_t> out;
  for (py::handle item : seq) out.push_back(shape_dim(item));
  return out;
}

std::vector<int64_t> argfix(const py::args& args) {
  if (args.size() > 0 && is_sequence(args[0])) {  // one shape, as a tuple or list, or separate ints (the reference's argfix)
    if (args.size() != 1) throw py::value_error("bad arg " + std::string(py::repr(args)));
    return shape_list(args[0]);
  }
  std::vector<int64_t> out;
  for (py::handle a : args) out.push_back(shape_dim(a));
  return out;
}

ts::AxisArg axis_arg(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return int_list(h);
}

py::tuple shape_tuple(const ts::Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  return t;
}

namespace {
// shape of a nested list; raises ValueError for ragged input
ts::Shape py_shape(py::handle x) {
  if (!is_sequence(x)) return {};
  py::sequence s = py::reinterpret_borrow<py::sequence>(x);
  ts::Shape shape{static_cast<int64_t>(s.size())};
  if (s.size() == 0) return shape;
  ts::Shape first = py_shape(s[0]);
  for (size_t i = 1; i < s.size(); ++i)
    if (py_shape(s[i]) != first) throw py::value_error("inhomogeneous shape from " + std::string(py::repr(x)));
  shape.insert(shape.end(), first.begin(), first.end());
  return shape;
}

// strongest python scalar kind in a nested list: 0 bool, 1 int, 2 float
int max_kind(py::handle x) {
  if (is_sequence(x)) {
    int k = 0;
    for (py::handle item : x) k = std::max(k, max_kind(item));
    return k;
  }
  if (py::isinstance<py::bool_>(x)) return 0;
  if (py::isinstance<py::int_>(x)) return 1;
  if (py::isinstance<py::float_>(x)) return 2;
  throw ts::Error("can't create Tensor from element " + std::string(py::repr(x)) + " with type " +
                  std::string(py::str(py::type::of(x).attr("__name__"))));
}

void flatten_into(py::handle x, ts::HostData& out, bool as_float) {
  if (is_sequence(x)) {
    for (py::handle item : x) flatten_into(item, out, as_float);
    return;
  }
  if (as_float) {
    out.f.push_back(PyFloat_AsDouble(x.ptr()));
    if (PyErr_Occurred()) throw py::error_already_set();
  } else if (ts::is_bool(out.dtype)) {
    out.i.push_back(PyObject_IsTrue(x.ptr()) ? 1 : 0);
  } else if (py::isinstance<py::float_>(x)) {
    double v = x.cast<double>();
    if (!std::isfinite(v)) throw py::value_error("cannot convert " + std::string(py::repr(x)) + " to an integer dtype");
    out.i.push_back(static_cast<int64_t>(v));  // python int() truncates
  } else {
    out.i.push_back(int_bits(x));
  }
}
}  // namespace

ts::HostData host_from_py(py::handle data, ts::DType dt) {
  ts::HostData out;
  out.shape = py_shape(data);
  if (dt == nullptr) {
    bool empty = std::find(out.shape.begin(), out.shape.end(), 0) != out.shape.end();
    int k = empty ? 2 : max_kind(data);
    dt = k == 2 ? ts::dtypes::default_float : k == 1 ? ts::dtypes::default_int : ts::dtypes::bool_;
  } else {
    max_kind(data);  // type check the elements
  }
  if (ts::is_weak(dt)) throw py::value_error("cannot create storage for weak dtype " + ts::dtype_repr(dt));
  out.dtype = dt;
  flatten_into(data, out, ts::is_float(dt));
  return out;
}

namespace {
// a value held in an N-bit integer dtype, sign- or zero-extended from its low N bits (the engine's reads may hand
// back an int32 zero-extended)
int64_t wrap_to_dtype(int64_t v, ts::DType dt) {
  int bits = dt->bitsize;
  if (bits >= 64 || bits <= 0 || ts::is_weak(dt)) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1, u = static_cast<uint64_t>(v) & mask;
  if (!ts::is_unsigned(dt) && (u >> (bits - 1)) != 0) u |= ~mask;
  return static_cast<int64_t>(u);
}

py::object element(const ts::HostData& d, size_t i) {
  if (ts::is_float(d.dtype)) return py::float_(i < d.f.size() ? d.f[i] : static_cast<double>(d.i.at(i)));
  int64_t v = i < d.i.size() ? d.i[i] : static_cast<int64_t>(d.f.at(i));
  if (ts::is_bool(d.dtype)) return py::bool_(v != 0);
  v = wrap_to_dtype(v, d.dtype);
  if (d.dtype == ts::dtypes::uint64 && v < 0) return py::reinterpret_steal<py::object>(PyLong_FromUnsignedLongLong(static_cast<uint64_t>(v)));
  return py::int_(v);
}

py::object build(const ts::HostData& d, size_t dim, size_t& pos) {
  if (dim == d.shape.size()) return element(d, pos++);
  py::list l(0);
  for (int64_t k = 0; k < d.shape[dim]; ++k) l.append(build(d, dim + 1, pos));
  return l;
}
}  // namespace

py::object host_to_py(const ts::HostData& data) {
  size_t pos = 0;
  return build(data, 0, pos);
}

}  // namespace tsp
