#pragma once
// The parts of the module budget._budget bound outside budget_module.cpp (which binds budget.Error,
// Config, load_config, account, predict_time and export itself): each binds its functions on the
// module `m`, and PYBIND11_MODULE calls each once. No binding file declares another's functions:
// what several share is library_arguments.hpp (Python values as the library's) and arguments.hpp.

#include <pybind11/pybind11.h>

/// match and grid (match_bindings.cpp).
void bind_match(pybind11::module_& m);
/// layout, layout_search, peak_saved_layer_executions (cluster_bindings.cpp).
void bind_cluster(pybind11::module_& m);
/// The op list and shapes budget.torch reads (torch_bindings.cpp).
void bind_torch_support(pybind11::module_& m);
/// The time limit and progress of long calls (call_limits.cpp).
void bind_call_limits(pybind11::module_& m);
