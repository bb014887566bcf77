// Support for budget.torch (python/budget/torch/): the per-layer operation list of a config, so
// that the reference PyTorch module can be checked against exactly what the planner counts
// (parameters per component, forward FLOPs per op). The config and workload arrive as JSON text
// (budget.torch passes budget.load_config(...).to_dict(), the native form, and a workload dict or
// file), so this file needs nothing from the other bindings (bindings.hpp).

#include <pybind11/pybind11.h>

#include <string>

#include "budget/config_io.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"
#include "bindings.hpp"

namespace py = pybind11;

void bind_torch_support(py::module_& m) {
  m.def(
      "_layer_ops",
      [](const std::string& config_json, const std::string& workload_json) {
        const budget::ArchConfig config = budget::parse_arch_config(config_json, "config");
        budget::validate(config, "config");
        const budget::Workload workload =
            workload_json.empty() ? budget::paper_workload() : budget::parse_workload(workload_json, "workload");
        budget::validate(workload, "workload");
        py::list out;
        for (const budget::Op& op : budget::layer_ops(config, workload)) {
          py::dict d;
          d["kind"] = std::string(budget::to_string(op.kind));
          d["in_features"] = op.in_features;
          d["out_features"] = op.out_features;
          d["matrices"] = op.matrices;
          d["value_features"] = op.value_features;
          d["params_per_layer"] = op.params_per_layer;
          d["active_params_per_layer"] = op.active_params_per_layer;
          d["forward_flops"] = op.forward_flops;
          d["physical_layers"] = op.physical_layers;
          d["executed_layers"] = op.executed_layers;
          d["memory_bound"] = budget::is_memory_bound(op.kind);
          d["non_embedding"] = budget::is_non_embedding(op.kind);
          out.append(d);
        }
        return out;
      },
      py::arg("config_json"), py::arg("workload_json") = std::string(),
      "The operation list of budget::layer_ops() (docs/accounting.md) for a native config and a workload, both "
      "JSON text (empty workload: the paper's). One dict per op: kind, shapes, params_per_layer, "
      "active_params_per_layer, forward_flops (per token and execution), physical_layers, executed_layers. "
      "Used by budget.torch.");
}
