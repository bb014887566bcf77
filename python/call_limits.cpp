// Time limit and Ctrl-C for every Python call (docs/python.md, "Time limits and Ctrl-C"): the
// library's work checks its time limit and cancel check between units of work
// (budget/progress.hpp); budget/__init__.py runs each call through _call_bounded(), which sets the
// limit for the call (max_seconds=, None: no limit) and a cancel check that runs Python's signal
// handlers on the calling thread, so Ctrl-C raises KeyboardInterrupt between units of work rather
// than when the call returns. Both are cleared when the call ends, however it ends.

#include <pybind11/pybind11.h>

#include <cmath>
#include <string>
#include <thread>

#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "bindings.hpp"

namespace py = pybind11;

namespace {

/// max_seconds= as a number of seconds (0: no limit); budget::Error naming it for anything but
/// None or a finite number in (0, 10⁹] (a bool is refused too: True is not a time).
double max_seconds_of(const py::handle& value) {
  if (value.is_none()) return 0.0;
  const bool number = (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)) &&
                      !py::isinstance<py::bool_>(value);
  const std::string shown = py::repr(value).cast<std::string>();
  if (!number) {
    throw budget::Error("value " + shown + " is not a number of seconds; allowed: None (no limit) or a number in (0, 1e9]",
                        "max_seconds");
  }
  const double seconds = py::cast<double>(value);
  if (!(seconds > 0.0 && seconds <= 1e9)) {
    throw budget::Error("value " + shown + " is out of range; allowed: None (no limit) or a number in (0, 1e9]",
                        "max_seconds");
  }
  return seconds;
}

/// Sets the call's time limit and cancel check; clears both at the end of the call.
class CallBounds {
 public:
  explicit CallBounds(double seconds) {
    budget::set_work_time_limit(seconds, "raise it with max_seconds= (None: no limit)");
    const std::thread::id caller = std::this_thread::get_id();
    budget::set_cancel_check([caller] {
      // Python's signal handlers run only on the thread that holds the GIL here, the caller's; a
      // worker thread of the library's parallel loop is left alone (its caller checks every 200 ms).
      if (std::this_thread::get_id() == caller && PyErr_CheckSignals() != 0) throw py::error_already_set();
    });
  }
  CallBounds(const CallBounds&) = delete;
  CallBounds& operator=(const CallBounds&) = delete;
  ~CallBounds() {
    budget::set_cancel_check({});
    budget::set_work_time_limit(0.0);
  }
};

}  // namespace

void bind_call_limits(py::module_& m) {
  m.def(
      "_call_bounded",
      [](const py::function& function, const py::handle& max_seconds, const py::args& args, const py::kwargs& kwargs) {
        const CallBounds bounds(max_seconds_of(max_seconds));
        return function(*args, **kwargs);
      },
      py::arg("function"), py::arg("max_seconds"),
      "Calls function(*args, **kwargs) under a time limit of max_seconds (None: none) with Ctrl-C checked between "
      "units of work (budget.Error naming the limit; KeyboardInterrupt). Used by every function of budget.");
}
