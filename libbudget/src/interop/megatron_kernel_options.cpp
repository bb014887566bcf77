// The kernel settings of Megatron-LM arguments that a measured run's step time needs beyond the layout
// (budget/megatron_args.hpp, read_megatron_timed_run(); docs/calibration.md, "Run files"): CUDA
// graphs, the MoE dispatcher's settings and the main gradients' bytes, read from the same parsed
// arguments as the layout (the flag table at d98e8a64).
#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "interop/megatron_reader.hpp"

namespace budget {
namespace interop_detail {
namespace {

/// CUDA graphs over whole layers (--cuda-graph-impl local|transformer_engine|full_iteration,
/// --enable-cuda-graph, --external-cuda-graph): the step is timed without CPU launch gaps. Graphs of
/// some modules only (--cuda-graph-modules / --cuda-graph-scope given, other than full_iteration)
/// leave the rest launched by the CPU: `modules` says which are graphed (CudaGraphModule at d98e8a64,
/// enums.py:61-73; the parser has checked each value against its choices), and the run's notes.
bool read_cuda_graphs(const ParsedMegatronArgs& p, CudaGraphModules& modules, std::vector<std::string>& notes) {
  const std::string impl = p.text("cuda_graph_impl").value_or("none");
  const bool graphs = impl != "none" || p.has("enable_cuda_graph") || p.has("external_cuda_graph");
  if (!graphs) return false;
  if (impl == "full_iteration") return true;
  for (const char* dest : {"cuda_graph_modules", "cuda_graph_scope_deprecated"}) {
    const auto it = p.by_dest.find(dest);
    if (it == p.by_dest.end()) continue;
    const auto& values = it->second.values;
    if (std::find(values.begin(), values.end(), "full_iteration") != values.end()) return true;
    for (const std::string& v : values) {
      if (!add_cuda_graph_module(modules, v)) {
        p.fail(dest, fmt::format("CUDA graph module \"{}\" is not modelled (attn, mlp, moe, moe_router, "
                                 "moe_preprocess, mamba and full_iteration are)", v));
      }
    }
    notes.push_back(fmt::format("{} {}: CUDA graphs of these modules only; the rest launched by the CPU, {:g} µs a "
                                "launch", it->second.name, fmt::join(values, " "), megatron_host_launch_seconds * 1e6));
    return false;
  }
  return true;
}

/// The MoE dispatcher's settings (transformer_config.py at d98e8a64: moe_pad_expert_input_to_capacity
/// :921, moe_router_fusion :944, moe_flex_dispatcher_backend :898, the SM counts :964-973).
void read_moe_settings(const ParsedMegatronArgs& p, MoeDispatcher dispatcher, MoeDispatchOptions& moe) {
  moe.pad_to_capacity = p.has("moe_pad_expert_input_to_capacity");
  moe.router_fusion = p.has("moe_router_fusion");
  const std::string backend = p.text("moe_flex_dispatcher_backend").value_or("deepep");
  if (dispatcher == MoeDispatcher::flex && backend == "ncclep") {
    p.fail("moe_flex_dispatcher_backend", "ncclep is not modelled (deepep and hybridep are)");
  }
  moe.flex_backend = backend == "hybridep" ? FlexBackend::hybridep : FlexBackend::deepep;
  moe.comm_sms = flex_dispatcher_num_sms(p);
}

}  // namespace

std::int64_t flex_dispatcher_num_sms(const ParsedMegatronArgs& p) {
  std::optional<std::int64_t> deprecated;
  for (const char* dest : {"moe_flex_dispatcher_num_sms", "moe_deepep_num_sms", "moe_hybridep_num_sms"}) {
    const auto sms = p.integer(dest);
    if (!sms) continue;
    if (*sms < 1 || *sms > 4096) p.fail(dest, fmt::format("{} SMs is not in [1, 4096]", *sms));
    if (std::string(dest) == "moe_flex_dispatcher_num_sms") return *sms;
    if (deprecated && *deprecated != *sms) {
      p.fail(dest, fmt::format("{} conflicts with --moe-deepep-num-sms {} (transformer_config.py:1805-1810 "
                               "refuses conflicting deprecated SM counts)",
                               *sms, *deprecated));
    }
    deprecated = *sms;
  }
  return deprecated.value_or(0);
}

}  // namespace interop_detail

void set_cuda_graphs(TimeModelOptions& options, const MegatronKernelOptions& kernels) {
  options.cuda_graphs = kernels.cuda_graphs;
  options.cuda_graph_modules = kernels.cuda_graph_modules;
}

MegatronKernelOptions megatron_cuda_graphs(const std::vector<std::string>& words, const std::string& source) {
  const interop_detail::ParsedMegatronArgs p = interop_detail::parse_megatron_words(words, source);
  MegatronKernelOptions k;
  k.cuda_graphs = interop_detail::read_cuda_graphs(p, k.cuda_graph_modules, k.notes);
  return k;
}

MegatronTimedRun read_megatron_timed_run(const std::vector<std::string>& words, const ArchConfig& config,
                                         std::int64_t gpus, const std::string& source) {
  const interop_detail::ParsedMegatronArgs p = interop_detail::parse_megatron_words(words, source);
  MegatronTimedRun t;
  t.run = interop_detail::read_parsed_megatron_args(p, config, gpus);
  t.kernels.cuda_graphs = interop_detail::read_cuda_graphs(p, t.kernels.cuda_graph_modules, t.kernels.notes);
  interop_detail::read_moe_settings(p, t.run.layout.dispatcher, t.kernels.moe);
  t.kernels.moe.router_num_groups = t.run.router_num_groups;
  t.kernels.moe.router_group_topk = t.run.router_group_topk;
  return t;
}

}  // namespace budget
