// A measured run described by its Megatron-LM arguments (docs/calibration.md, "Run files"): the
// layout, overlap and batch through the interop reader (read_megatron_args(), budget/megatron_args.hpp,
// the flag table at d98e8a64), and the kernel settings the step time needs beyond them from the same
// parsed arguments: the FP8 recipe, CUDA graphs, the MoE dispatcher's settings and the main
// gradients' precision.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "interop/megatron_reader.hpp"
#include "runs/run_detail.hpp"

namespace budget::runs_detail {

namespace {

/// CUDA graphs over whole layers (--cuda-graph-impl local|transformer_engine|full_iteration,
/// --enable-cuda-graph, --external-cuda-graph): the step is timed without CPU launch gaps. Graphs of
/// some modules only (--cuda-graph-modules / --cuda-graph-scope given, other than full_iteration)
/// leave the rest launched by the CPU: timed without graphs, and said in the run's notes.
bool read_cuda_graphs(const interop_detail::ParsedMegatronArgs& p, std::vector<std::string>& notes) {
  const std::string impl = p.text("cuda_graph_impl").value_or("none");
  const bool graphs = impl != "none" || p.has("enable_cuda_graph") || p.has("external_cuda_graph");
  if (!graphs) return false;
  if (impl == "full_iteration") return true;
  for (const char* dest : {"cuda_graph_modules", "cuda_graph_scope_deprecated"}) {
    const auto it = p.by_dest.find(dest);
    if (it == p.by_dest.end()) continue;
    const auto& values = it->second.values;
    if (std::find(values.begin(), values.end(), "full_iteration") != values.end()) return true;
    notes.push_back(fmt::format("{} {}: CUDA graphs of some modules only, timed without CUDA graphs", it->second.name,
                                fmt::join(values, " ")));
    return false;
  }
  return true;
}

/// The MoE dispatcher's settings (transformer_config.py at d98e8a64: moe_pad_expert_input_to_capacity
/// :921, moe_router_fusion :944, moe_flex_dispatcher_backend :898, the SM counts :964-973).
void read_moe_settings(const interop_detail::ParsedMegatronArgs& p, MeasuredRun& run) {
  run.moe.pad_to_capacity = p.has("moe_pad_expert_input_to_capacity");
  run.moe.router_fusion = p.has("moe_router_fusion");
  const std::string backend = p.text("moe_flex_dispatcher_backend").value_or("deepep");
  if (run.layout.dispatcher == MoeDispatcher::flex && backend == "ncclep") {
    p.fail("moe_flex_dispatcher_backend", "ncclep is not modelled (deepep and hybridep are)");
  }
  run.moe.flex_backend = backend == "hybridep" ? FlexBackend::hybridep : FlexBackend::deepep;
  for (const char* dest : {"moe_flex_dispatcher_num_sms", "moe_deepep_num_sms", "moe_hybridep_num_sms"}) {
    if (const auto sms = p.integer(dest)) {
      if (*sms < 1 || *sms > 4096) p.fail(dest, fmt::format("{} SMs is not in [1, 4096]", *sms));
      run.moe.comm_sms = *sms;
      break;
    }
  }
}

}  // namespace

void read_run_megatron_words(const std::vector<std::string>& words, const std::string& where, MeasuredRun& run) {
  const std::int64_t gpus = run.cluster.total_gpus();
  const MegatronRun m = read_megatron_args(words, run.config, gpus, where);
  run.layout = m.layout;
  run.overlap = m.overlap;
  run.fp8 = m.layout.fp8;
  const interop_detail::ParsedMegatronArgs p = interop_detail::parse_megatron_words(words, where);
  run.cuda_graphs = read_cuda_graphs(p, run.notes);
  read_moe_settings(p, run);
  run.moe.router_num_groups = m.router_num_groups;
  run.moe.router_group_topk = m.router_group_topk;
  // The main gradients (the DDP grad buffer) are fp32 when accumulate_allreduce_grads_in_fp32, which
  // arguments.py:1207-1216 at d98e8a64 sets for --bf16 unless --grad-reduce-in-bf16 or --main-grads-dtype
  // bf16, else in the parameters' dtype (param_and_grad_buffer.py:924): the bytes the memory model
  // prices (parameter_bytes(), optimizer_dtypes.cpp), so the time and the memory of a run agree.
  run.main_grad_bytes = parameter_bytes(m.layout).gradients;
  for (const std::string& r : m.read) run.notes.push_back(r);
}

}  // namespace budget::runs_detail
