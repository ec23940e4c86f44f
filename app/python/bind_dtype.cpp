// DType: one python object per engine dtype (the engine interns dtypes, so pointer identity is dtype identity).
#include "app/python/bindings.h"
#include "app/python/convert.h"

namespace tsp {

void bind_dtype(py::module_& m) {
  py::class_<ts::DTypeInfo>(m, "DType")
      .def_property_readonly("name", [](const ts::DTypeInfo& d) { return std::string(d.name); })
      .def_property_readonly("priority", [](const ts::DTypeInfo& d) { return d.priority; })
      .def_property_readonly("bitsize", [](const ts::DTypeInfo& d) { return d.bitsize; })
      .def_property_readonly("itemsize", [](const ts::DTypeInfo& d) { return d.itemsize(); })
      .def_property_readonly("fmt", [](const ts::DTypeInfo& d) -> py::object {
        if (d.fmt == '\0') return py::none();
        return py::str(std::string(1, d.fmt));
      })
      .def_property_readonly("count", [](const ts::DTypeInfo&) { return 1; })
      .def_property_readonly("scalar", [](const ts::DTypeInfo& d) { return dtype_object(&d); })
      .def("vec", [](const ts::DTypeInfo& d, int n) -> py::object {
        if (n == 1) return dtype_object(&d);
        throw py::value_error("vector dtypes do not exist in this tinygrad version: vector width is a shape");
      })
      .def("is_float", [](const ts::DTypeInfo& d) { return ts::is_float(&d); })
      .def("is_int", [](const ts::DTypeInfo& d) { return ts::is_int(&d); })
      .def("is_unsigned", [](const ts::DTypeInfo& d) { return ts::is_unsigned(&d); })
      .def("is_weak", [](const ts::DTypeInfo& d) { return ts::is_weak(&d); })
      .def("is_bool", [](const ts::DTypeInfo& d) { return ts::is_bool(&d); })
      .def("__repr__", [](const ts::DTypeInfo& d) { return ts::dtype_repr(&d); })
      .def("__lt__", [](const ts::DTypeInfo& a, const ts::DTypeInfo& b) {
        return std::tuple(a.priority, a.bitsize, std::string(a.name)) < std::tuple(b.priority, b.bitsize, std::string(b.name));
      })
      .def("__reduce__", [](const ts::DTypeInfo& d) {  // pickle/copy by name
        return py::make_tuple(py::module_::import("tinyscope").attr("_dtype_by_name"), py::make_tuple(std::string(d.name)));
      });

  m.def("_dtype_by_name", [](const std::string& name) { return dtype_object(to_dtype(py::str(name))); });
  // the engine's dtype table: (tinygrad attribute name, DType); aliases map to the same object
  m.def("_dtype_table", [] {
    namespace d = ts::dtypes;
    const std::pair<const char*, ts::DType> table[] = {
        {"void", d::void_},     {"bool", d::bool_},     {"int8", d::int8},         {"char", d::int8},
        {"uint8", d::uint8},    {"uchar", d::uint8},    {"int16", d::int16},       {"short", d::int16},
        {"uint16", d::uint16},  {"ushort", d::uint16},  {"int32", d::int32},       {"int", d::int32},
        {"uint32", d::uint32},  {"uint", d::uint32},    {"int64", d::int64},       {"long", d::int64},
        {"uint64", d::uint64},  {"ulong", d::uint64},   {"float16", d::float16},   {"half", d::float16},
        {"bfloat16", d::bfloat16}, {"float32", d::float32}, {"float", d::float32}, {"float64", d::float64},
        {"double", d::float64}, {"weakint", d::weakint}, {"weakfloat", d::weakfloat},
        {"fp8e4m3", d::fp8e4m3}, {"fp8e5m2", d::fp8e5m2}, {"fp8e4m3fnuz", d::fp8e4m3fnuz}, {"fp8e5m2fnuz", d::fp8e5m2fnuz}};
    py::list out;
    for (const auto& [name, dt] : table) out.append(py::make_tuple(name, dtype_object(dt)));
    return out;
  });
  m.def("_least_upper_dtype", [](py::object a, py::object b) { return dtype_object(ts::least_upper(to_dtype(a), to_dtype(b))); });
  m.def("_strong_dtype", [](py::object a) { return dtype_object(ts::strong(to_dtype(a))); });
  m.def("_sum_acc_dtype", [](py::object a) { return dtype_object(ts::sum_acc(to_dtype(a))); });
  // the engine's fp8 conversions (the host side of Tensor creation and reading): one code <-> a python float
  m.def("_float_to_fp8", [](double x, py::object d) {
    ts::DType dt = to_dtype(d);
    if (!ts::is_fp8(dt)) throw py::value_error("Only for fp8s");
    return static_cast<int>(ts::float_to_fp8(x, dt));
  });
  m.def("_fp8_to_float", [](int code, py::object d) {
    ts::DType dt = to_dtype(d);
    if (!ts::is_fp8(dt)) throw py::value_error("Only for fp8s");
    return ts::fp8_to_float(static_cast<uint8_t>(code & 0xff), dt);
  });
}

}  // namespace tsp
