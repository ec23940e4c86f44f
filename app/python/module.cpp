// The embedded `tinyscope` module: the engine's Tensor with tinygrad's Python API. The prelude
// (prelude.py) adds the pure-Python parts and the `tinygrad` import aliases on top of it.
#include <pybind11/embed.h>

#include "app/python/bindings.h"
#include "app/python/convert.h"
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
  m.def("device_config", [] {
    const auto& c = ts::realize_config();
    return py::make_tuple(c.device, c.debug);
  }, "(DEV, DEBUG) as the engine reads them");
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
  m.def("_device_dtypes", [str_list](const std::string& name) { return str_list(ts::get_device(ts::require_device(name)).dtypes()); },
        "the dtypes a device's kernels can use (empty: every dtype)");
  m.def("call_count", [] { return ts::call_count(); }, "how many calls this process executed and counted");
  m.def("work_totals", [] {
    const ts::WorkTotals w = ts::work_totals();
    return py::make_tuple(w.ops, w.mem);
  }, "(estimated ops, bytes moved) of every executed call so far");
  m.def("allocated_bytes", [] { return ts::allocated_bytes(); }, "bytes held by live device buffers");
}
