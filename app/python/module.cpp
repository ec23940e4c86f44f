// The embedded `tinyscope` module: the engine's Tensor with tinygrad's Python API. The prelude
// (prelude.py) adds the pure-Python parts and the `tinygrad` import aliases on top of it.
#include <algorithm>
#include <utility>

#include <pybind11/embed.h>

#include "app/python/bindings.h"
#include "app/python/convert.h"
#include "engine/codegen/opt.h"
#include "engine/device/device.h"
#include "engine/realize/realize.h"
#include "engine/runtime/allocator.h"

namespace py = pybind11;

PYBIND11_EMBEDDED_MODULE(tinyscope, m) {
  m.doc() = "tinyscope: tinygrad's Tensor API over the C++ engine";
  tsp::bind_errors(m);
  tsp::bind_dtype(m);
  tsp::bind_uop(m);
  tsp::TensorClass t(m, "Tensor", py::dynamic_attr());
  tsp::bind_tensor_core(m, t);
  tsp::bind_tensor_elementwise(t);
  tsp::bind_tensor_movement(t);
  tsp::bind_tensor_reduce(t);
  tsp::bind_schedule(m, t);
  m.def("_set_ops_enum", &tsp::set_ops_enum, "register the python Ops enum (called once by the prelude)");
  m.def("default_device", [] { return ts::default_device(); });
  m.def("_default_dtypes", [] { return py::make_tuple(tsp::dtype_object(ts::dtypes::default_float), tsp::dtype_object(ts::dtypes::default_int)); },
        "(DEFAULT_FLOAT, DEFAULT_INT) as the engine uses them now");
  m.def("device_config", [] {
    const auto& c = ts::realize_config();
    return py::make_tuple(c.device, c.debug);
  }, "(DEV, DEBUG) as the engine reads them");
  // a ContextVar the engine reads, set while a script runs (Context(DEBUG=2), Context(NOOPT=1), Context(BEAM=2)):
  // returns (whether the engine reads that name, its value before), the value None restoring an option to unset
  m.def("_set_engine_var", [](const std::string& key, py::object value) -> py::tuple {
    auto as_int = [&] { return py::isinstance<py::bool_>(value) ? int(value.cast<bool>()) : value.cast<int>(); };
    auto& c = ts::realize_config();
    const auto& names = ts::codegen_option_names();
    py::object before = py::none();
    if (key == "DEBUG") before = py::int_(std::exchange(c.debug, value.is_none() ? 0 : as_int()));
    else if (key == "BEAM") before = py::int_(std::exchange(c.beam, value.is_none() ? 0 : std::max(0, as_int())));
    else if (key == "DEFAULT_FLOAT" || key == "DEFAULT_INT") {
      const bool f = key == "DEFAULT_FLOAT";
      before = tsp::dtype_object(f ? ts::dtypes::default_float : ts::dtypes::default_int);
      ts::dtypes::set_default(value.is_none() ? (f ? ts::dtypes::float32 : ts::dtypes::int32) : tsp::to_dtype(value), f);
    } else if (key == "CAPTURING") before = py::int_(int(!std::exchange(ts::capture_paused(), !value.is_none() && as_int() == 0)));
    else if (key == "IGNORE_BEAM_CACHE") before = py::int_(int(std::exchange(c.beam_ignore_cache, !value.is_none() && as_int() != 0)));
    else if (std::find(names.begin(), names.end(), key) != names.end()) {
      auto& o = ts::codegen_options();
      if (auto it = o.find(key); it != o.end()) before = py::str(it->second);
      if (value.is_none()) o.erase(key);
      else o[key] = py::isinstance<py::int_>(value) ? std::to_string(as_int()) : py::str(value).cast<std::string>();
    } else return py::make_tuple(false, py::none());
    return py::make_tuple(true, before);
  }, py::arg("key"), py::arg("value"));
  m.def("call_log", [] {
    py::list out;
    for (const auto& c : ts::call_log()) {
      py::dict d;
      d["kind"] = c.kind;
      d["name"] = c.name;
      d["device"] = c.device;
      d["counter"] = c.counter;
      d["num_args"] = c.num_args;
      d["first_run"] = c.first_run;
      d["program_key"] = c.program_key;
      d["seconds"] = c.timed ? py::object(py::float_(c.seconds)) : py::object(py::none());
      d["schedule_index"] = c.schedule_index;
      out.append(d);
    }
    return out;
  }, "the latest executed, counted calls of this process, in order (the log keeps the last ten thousand)");
  auto str_list = [](const std::vector<std::string>& v) {
    py::list out;
    for (const auto& x : v) out.append(x);
    return out;
  };
  m.def("_device_names", [str_list] { return str_list(ts::device_names()); }, "the devices this build can open");
  m.def("_check_device", [](const std::string& name) { return ts::require_device(name); },
        "the canonical name of a device, or the engine's error naming the devices there are");
  m.def("_device_graph", [](const std::string& name) -> py::object {
    ts::Device& d = ts::get_device(ts::require_device(name));
    if (!d.make_graph()) return py::none();
    return py::str(d.graph_name());
  }, "the name of a device's graph handler (None: it has none)");
  m.def("_device_dtypes", [str_list](const std::string& name) { return str_list(ts::get_device(ts::require_device(name)).dtypes()); },
        "the dtypes a device's kernels can use (empty: every dtype)");
  m.def("call_count", [] { return ts::call_count(); }, "how many calls this process executed and counted");
  m.def("work_totals", [] {
    const ts::WorkTotals w = ts::work_totals();
    return py::make_tuple(w.ops, w.mem);
  }, "(estimated ops, bytes moved) of every executed call so far");
  m.def("allocated_bytes", [] { return ts::allocated_bytes(); }, "bytes held by live device buffers");
}
