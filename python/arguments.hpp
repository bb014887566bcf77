#pragma once
// Python arguments converted by the module itself, so that a value of the wrong type or out of
// range raises budget.Error naming the argument (docs/python.md, "Errors") instead of pybind11's
// TypeError ("incompatible function arguments") or OverflowError: an int beyond 64 bits, a str
// where a number belongs, a float where an int belongs, a dict json.dumps cannot write.
// Functions that take such arguments declare them py::object and convert them with these.

#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "budget/error.hpp"

namespace budget_python {

namespace py = pybind11;

inline std::string type_name(const py::handle& value) {
  return py::str(py::type::of(value).attr("__name__")).cast<std::string>();
}

/// repr(value), cut to 60 characters.
inline std::string shown(const py::handle& value) {
  std::string text = py::repr(value).cast<std::string>();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

/// An int (or an object with __index__, e.g. numpy.int64; not a bool, not a float) within the
/// signed 64-bit range.
inline std::int64_t int_argument(const py::handle& value, const char* name) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    throw budget::Error("value " + shown(value) + " (a " + type_name(value) + ") is not allowed; allowed: an integer",
                        name);
  }
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long out = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw budget::Error("value " + shown(value) + " is outside the 64-bit integer range; allowed: an integer in [" +
                            std::to_string(INT64_MIN) + ", " + std::to_string(INT64_MAX) + "]",
                        name);
  }
  if (out == -1 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<std::int64_t>(out);
}

/// None, or int_argument().
inline std::optional<std::int64_t> optional_int_argument(const py::handle& value, const char* name) {
  if (value.is_none()) return std::nullopt;
  return int_argument(value, name);
}

/// A real number: an int or a float (or an object with __float__; not a bool, not a str). An int
/// beyond the double range is refused; the callee checks the value's own range.
inline double float_argument(const py::handle& value, const char* name) {
  const bool number = !PyBool_Check(value.ptr()) && !py::isinstance<py::str>(value) &&
                      (PyFloat_Check(value.ptr()) || PyIndex_Check(value.ptr()) || py::hasattr(value, "__float__"));
  if (!number) {
    throw budget::Error("value " + shown(value) + " (a " + type_name(value) + ") is not allowed; allowed: a number",
                        name);
  }
  const double out = PyFloat_AsDouble(value.ptr());
  if (out == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw budget::Error("value " + shown(value) + " is outside the range of a double (about ±1.8e308)", name);
  }
  return out;
}

/// True or False (not 0 or 1, not a str).
inline bool bool_argument(const py::handle& value, const char* name) {
  if (!PyBool_Check(value.ptr())) {
    throw budget::Error("value " + shown(value) + " (a " + type_name(value) + ") is not allowed; allowed: True or False",
                        name);
  }
  return value.ptr() == Py_True;
}

/// A str.
inline std::string string_argument(const py::handle& value, const char* name) {
  if (!py::isinstance<py::str>(value)) {
    throw budget::Error("value " + shown(value) + " (a " + type_name(value) + ") is not allowed; allowed: a string",
                        name);
  }
  return value.cast<std::string>();
}

/// json.dumps(value): a dict (or list) as JSON text; what json cannot write (a set, bytes, an
/// object) is budget.Error naming the argument.
inline std::string json_argument(const py::handle& value, const std::string& name) {
  try {
    return py::module_::import("json").attr("dumps")(value).cast<std::string>();
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError) && !e.matches(PyExc_ValueError) && !e.matches(PyExc_OverflowError)) throw;
    throw budget::Error(std::string("cannot be read as JSON: ") + e.what(), name);
  }
}

}  // namespace budget_python
