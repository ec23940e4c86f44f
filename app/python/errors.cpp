// Engine errors surface in Python as tinyscope.EngineError (a RuntimeError and ValueError) carrying the engine's message.
#include <exception>

#include "app/python/bindings.h"
#include "engine/uop/error.h"

namespace tsp {

namespace {
PyObject* engine_error_type() {
  // leaked on purpose: never decref'd after the interpreter is finalized
  // both a RuntimeError and a ValueError: tinygrad raises either for invalid programs (shapes, axes, dtypes)
  static PyObject* type = PyErr_NewExceptionWithDoc("tinyscope.EngineError",
                                                    "an invalid Tensor program (the engine's ts::Error)",
                                                    PyTuple_Pack(2, PyExc_RuntimeError, PyExc_ValueError), nullptr);
  return type;
}
// an engine error that is also the Python exception the reference raises there (ZeroDivisionError, OverflowError,
// IndexError, AssertionError)
PyObject* engine_error_type(PyObject* base, const char* name) {
  return PyErr_NewExceptionWithDoc(name, "an invalid Tensor program (the engine's ts::Error)",
                                   PyTuple_Pack(2, base, engine_error_type()), nullptr);
}
PyObject* zero_division_type() {
  static PyObject* type = engine_error_type(PyExc_ZeroDivisionError, "tinyscope.EngineZeroDivisionError");
  return type;
}
PyObject* index_type() {
  static PyObject* type = engine_error_type(PyExc_IndexError, "tinyscope.EngineIndexError");
  return type;
}
PyObject* assertion_type() {
  static PyObject* type = engine_error_type(PyExc_AssertionError, "tinyscope.EngineAssertionError");
  return type;
}
PyObject* overflow_type() {
  static PyObject* type = engine_error_type(PyExc_OverflowError, "tinyscope.EngineOverflowError");
  return type;
}
// the reference's tinygrad.engine.jit.JitError: what TinyJit refuses (an Exception, not an engine error)
PyObject* jit_error_type() {
  static PyObject* type = PyErr_NewExceptionWithDoc("tinygrad.engine.jit.JitError", "what TinyJit refuses", PyExc_Exception, nullptr);
  return type;
}
}  // namespace

void bind_errors(py::module_& m) {
  m.attr("EngineError") = py::reinterpret_borrow<py::object>(engine_error_type());
  m.attr("JitError") = py::reinterpret_borrow<py::object>(jit_error_type());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ts::Error& e) {
      PyObject* type = e.kind == ts::Error::Kind::ZeroDivision ? zero_division_type()
                       : e.kind == ts::Error::Kind::Overflow   ? overflow_type()
                       : e.kind == ts::Error::Kind::Index      ? index_type()
                       : e.kind == ts::Error::Kind::Assertion  ? assertion_type()
                       : e.kind == ts::Error::Kind::Jit        ? jit_error_type()
                                                               : engine_error_type();
      PyErr_SetString(type, e.what());
    }
  });
}

}  // namespace tsp
