// A layout → the Megatron-LM arguments that run it (budget/megatron_args.hpp), the inverse of
// read_megatron_args(): every flag checked against the table (require_megatron_argument).
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"

namespace budget {
namespace {

struct MegatronLines {
  std::vector<std::string> lines;
  void flag(std::string_view name) {
    require_megatron_argument(name);
    lines.emplace_back(name);
  }
  template <typename Value>
  void add(std::string_view name, const Value& value) {
    require_megatron_argument(name);
    lines.push_back(fmt::format("{} {}", name, value));
  }
};

void write_megatron_pipeline(const ParallelLayout& l, MegatronLines& out) {
  if (l.loop_placement != LoopPlacement::in_chunk) {
    // Chunks over the executed sequence are not Megatron behaviour (docs/cluster.md, "Loops across
    // pipeline stages"): Megatron-LM builds each layer once and would read the string's t as layers.
    throw Error(fmt::format("loop placement {} has no Megatron-LM arguments: Megatron-LM builds every layer once and "
                            "has no chunks that share parameters; write a layout with loop placement in_chunk",
                            to_string(l.loop_placement)),
                "megatron_out");
  }
  out.add("--pipeline-model-parallel-size", l.pp);
  if (!l.split.sets_chunks()) {
    if (l.embedding_in_split) out.flag("--account-for-embedding-in-pipeline-split");
    if (l.loss_in_split) out.flag("--account-for-loss-in-pipeline-split");
  }
  for (const auto& [flag, value] : l.split.megatron_arguments()) out.add(flag, value);
  if (l.virtual_stages > 1 && !l.split.sets_chunks()) {
    out.add("--num-virtual-stages-per-pipeline-rank", l.virtual_stages);
  }
}

void write_megatron_recompute(const RecomputeSpec& r, MegatronLines& out) {
  if (r.kind == RecomputeKind::selective) {
    out.add("--recompute-granularity", "selective");
    if (!r.modules.empty()) {
      std::string modules;
      for (const RecomputeModule m : r.modules) modules += (modules.empty() ? "" : " ") + std::string(to_string(m));
      out.add("--recompute-modules", modules);
    }
  } else if (r.kind == RecomputeKind::full) {
    out.add("--recompute-granularity", "full");
    out.add("--recompute-method", to_string(r.method));
    // Block with 0 layers recomputes nothing in Megatron: "every layer" is written as uniform 1.
    if (r.method == RecomputeMethod::block && r.full_layers == 0) {
      out.lines.back() = "--recompute-method uniform";
      out.add("--recompute-num-layers", 1);
    } else {
      out.add("--recompute-num-layers", r.full_layers);
    }
  }
}

void write_megatron_precision(const ParallelLayout& l, MegatronLines& out) {
  if (l.precision == TrainingPrecision::bf16) out.flag("--bf16");
  if (l.precision == TrainingPrecision::fp16) out.flag("--fp16");
  if (l.fp8 != Fp8Recipe::none) {
    out.add("--fp8-format", "hybrid");
    out.add("--fp8-recipe", to_string(l.fp8));
    if (l.fp8_param_gather) out.flag("--fp8-param-gather");
    if (l.fp8_amax_history != 1) out.add("--fp8-amax-history-len", l.fp8_amax_history);
  }
  if (l.fsdp == FsdpKind::torch_fsdp2) out.flag("--use-torch-fsdp2");
  if (l.fsdp == FsdpKind::megatron_fsdp) {
    out.flag("--use-megatron-fsdp");
    out.add("--data-parallel-sharding-strategy", to_string(l.fsdp_sharding));
  }
  if (l.distributed_optimizer) out.flag("--use-distributed-optimizer");
  if (l.distributed_optimizer_instances != 1) out.add("--num-distributed-optimizer-instances", l.distributed_optimizer_instances);
  if (!l.gradient_accumulation_fusion) out.flag("--no-gradient-accumulation-fusion");
  const OptimizerDtypes& d = l.optimizer_dtypes;
  if (d.bf16_main_grads) out.flag("--grad-reduce-in-bf16");
  if (d.precision_aware) {
    out.flag("--use-precision-aware-optimizer");
    out.add("--main-params-dtype", to_string(d.main_params));
    out.add("--exp-avg-dtype", to_string(d.exp_avg));
    out.add("--exp-avg-sq-dtype", to_string(d.exp_avg_sq));
  }
}

void write_megatron_settings(const ParallelLayout& l, MegatronLines& out) {
  if (l.cross_entropy_fusion) out.flag("--cross-entropy-loss-fusion");
  // Megatron pads to a multiple of this × TP (default 128); 1 keeps the vocabulary (validation
  // already requires it to divide by TP).
  out.add("--make-vocab-size-divisible-by", l.vocab_divisible_by > 0 ? l.vocab_divisible_by : 1);
  const char* dropout = l.dropout ? "0.1" : "0.0";
  out.add("--hidden-dropout", dropout);
  out.add("--attention-dropout", dropout);
  if (!l.flash_attention) out.add("--attention-backend", "unfused");
  if (l.cpu_offload_layers > 0) out.add("--cpu-offloading-num-layers", l.cpu_offload_layers);
}

void write_megatron_moe_and_overlap(const ParallelLayout& l, const CommOverlap& o, MegatronLines& out) {
  // Always written: Megatron's default (allgather) is not the layout's (alltoall).
  out.add("--moe-token-dispatcher-type", to_string(l.dispatcher));
  if (l.moe_permute_fusion) out.flag("--moe-permute-fusion");
  // The MoE memory settings (MoeMemoryRecipe), as read_megatron_moe_memory() reads them.
  if (l.moe_memory.grouped_gemm) out.flag("--moe-grouped-gemm");
  if (l.moe_memory.hybridep) out.add("--moe-flex-dispatcher-backend", "hybridep");
  if (l.moe_memory.flex_num_sms > 0) out.add("--moe-flex-dispatcher-num-sms", l.moe_memory.flex_num_sms);
  if (l.moe_memory.rank_capacity_factor > 0.0) {
    out.add("--moe-expert-rank-capacity-factor", fmt::format("{}", l.moe_memory.rank_capacity_factor));
  }
  if (l.capacity_factor > 0.0) {
    out.add("--moe-expert-capacity-factor", fmt::format("{}", l.capacity_factor));
    if (l.imbalance >= l.capacity_factor && l.imbalance > 1.0) out.flag("--moe-pad-expert-input-to-capacity");
  }
  if (o.dp) {
    out.flag("--overlap-grad-reduce");
    if (l.distributed_optimizer) out.flag("--overlap-param-gather");
  }
  if (o.tp) out.flag("--tp-comm-overlap");
  if (o.ep) out.flag("--overlap-moe-expert-parallel-comm");
  if (l.virtual_stages > 1 && !o.pp) out.flag("--no-overlap-p2p-communication");
}

}  // namespace

std::vector<std::string> megatron_layout_args(const ParallelLayout& l, const CommOverlap& overlap) {
  MegatronLines out;
  out.add("--tensor-model-parallel-size", l.tp);
  if (l.sequence_parallel) out.flag("--sequence-parallel");
  write_megatron_pipeline(l, out);
  if (l.ep > 1) out.add("--expert-model-parallel-size", l.ep);
  if (l.etp > 0) out.add("--expert-tensor-parallel-size", l.etp);
  if (l.cp > 1) out.add("--context-parallel-size", l.cp);
  out.add("--micro-batch-size", l.micro_batch_size);
  out.add("--global-batch-size", l.micro_batch_size * l.data_parallel() * l.micro_batches);
  out.add("--seq-length", l.seq_len);
  write_megatron_recompute(l.recompute, out);
  write_megatron_precision(l, out);
  write_megatron_settings(l, out);
  write_megatron_moe_and_overlap(l, overlap, out);
  return out.lines;
}

}  // namespace budget
