#include "budget/parallel_layout.hpp"
#include "budget/kernel_stack.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <utility>
#include <tuple>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/checked_math.hpp"
#include "layout/chunk_plan_check.hpp"
#include "base/enum_names.hpp"
#include "layout/layer_kinds.hpp"
#include "layout/optimizer_dtypes.hpp"

namespace budget {

std::int64_t ParallelLayout::padded_vocab(std::int64_t vocab_size) const {
  // Megatron's _vocab_size_with_padding: round up to a multiple of
  // make_vocab_size_divisible_by × tensor_model_parallel_size.
  if (vocab_divisible_by <= 0 || vocab_size <= 0) return vocab_size;
  const std::int64_t multiple = detail::checked_mul(vocab_divisible_by, tp, "vocabulary multiple (vocab_divisible_by x TP)");
  const std::int64_t rounded = detail::checked_add(vocab_size, multiple - 1, "padded vocabulary");
  return rounded / multiple * multiple;
}

std::vector<std::int64_t> executed_layer_sequence(const ArchConfig& config) {
  std::vector<std::int64_t> sequence;
  sequence.reserve(static_cast<std::size_t>(config.executed_layers()));
  const std::int64_t first = config.loop ? config.loop->first : config.num_layers + 1;
  const std::int64_t last = config.loop ? config.loop->last : config.num_layers;
  const std::int64_t repeats = config.loop ? config.loop->repeats : 1;
  for (std::int64_t l = 1; l < first; ++l) sequence.push_back(l);
  for (std::int64_t r = 0; r < repeats; ++r) {
    for (std::int64_t l = first; l <= last; ++l) sequence.push_back(l);
  }
  for (std::int64_t l = std::max(last + 1, first); l <= config.num_layers; ++l) sequence.push_back(l);
  return sequence;
}

namespace {

// The checks of ParallelLayout::validation_error, in the order it runs them. Each returns the
// message of the first rule the layout breaks, or an empty string; a later check may assume that
// every earlier one passed (sizes at least 1, products within 64 bits, GPU count given).

// Each degree and count at or above its minimum (0 where 0 means "derive it" or "none").
// Written here, not read from the field table (budget/layout_fields.hpp): it checks the members as
// set (etp and dp before they are derived), where the table's rows give the values in effect
// (expert_tp(), data_parallel()); the minimums are the table's (a test reads both).
std::string layout_minimum_error(const ParallelLayout& l, const ArchConfig& /*config*/) {
  const auto below = [](std::string_view name, std::int64_t value, std::int64_t min) {
    return value < min ? fmt::format("{} = {} is below {}", name, value, min) : std::string();
  };
  for (const auto& [name, value, min] :
       {std::tuple<std::string_view, std::int64_t, std::int64_t>{"tp", l.tp, 1}, {"pp", l.pp, 1},
        {"virtual_stages", l.virtual_stages, 1}, {"ep", l.ep, 1}, {"etp", l.etp, 0}, {"cp", l.cp, 1},
        {"gpus", l.gpus, 0}, {"dp", l.dp, 0}, {"micro_batch_size", l.micro_batch_size, 1},
        {"micro_batches", l.micro_batches, 1}, {"seq_len", l.seq_len, 1},
        {"vocab_divisible_by", l.vocab_divisible_by, 0}, {"recompute full layers", l.recompute.full_layers, 0}}) {
    if (std::string e = below(name, value, min); !e.empty()) return e;
  }
  return {};
}

// Upper bounds: each size (and vocab_divisible_by) at most 2^20 and N at most 2^40, so products of
// parallel sizes never overflow 64 bits; seq_len at most 2^32; tokens a step at most 2^50;
// imbalance in [1, 1e6], capacity factor in [0, 1e6]; flex dispatcher SMs in [0, 4096]; the GPU
// count or DP given; at most 2^20 layer executions.
std::string layout_range_error(const ParallelLayout& l, const ArchConfig& config) {
  constexpr std::int64_t max_size = std::int64_t{1} << 20;
  constexpr std::int64_t max_step_tokens = std::int64_t{1} << 50;
  for (const std::int64_t v :
       {l.tp, l.pp, l.virtual_stages, l.ep, l.etp, l.cp, l.dp, l.micro_batch_size, l.micro_batches}) {
    if (v > max_size) return fmt::format("a parallel size or batch count ({}) is above {}", v, max_size);
  }
  constexpr std::int64_t max_gpus = std::int64_t{1} << 40;
  if (l.gpus > max_gpus) return fmt::format("gpus = {} is above 2^40", l.gpus);
  if (l.gpus == 0 && l.dp > 0 && l.tp * l.cp * l.pp > max_gpus / l.dp) return "the GPU count TP·CP·DP·PP is above 2^40";
  if (l.seq_len > (std::int64_t{1} << 32)) return fmt::format("seq_len = {} is above 2^32", l.seq_len);
  if (l.vocab_divisible_by > max_size) {
    return fmt::format("vocab_divisible_by = {} is above {} (Megatron's default is 128)", l.vocab_divisible_by, max_size);
  }
  // Tokens a step b·s·m·DP, checked before any product is formed (sizes up to 2^20, s up to 2^32
  // and DP up to 2^40 multiply past 64 bits): at most 2^50, the global batch a search takes.
  if (!detail::product_within({l.micro_batch_size, l.seq_len, l.micro_batches, l.data_parallel()}, max_step_tokens)) {
    return fmt::format("a step of micro_batch_size x seq_len x micro_batches x DP = {} x {} x {} x {} tokens is more "
                       "than the 2^50 a layout is planned for",
                       l.micro_batch_size, l.seq_len, l.micro_batches, l.data_parallel());
  }
  if (!(l.imbalance >= 1.0) || l.imbalance > 1e6) {
    return fmt::format("imbalance = {} is not in [1, 1e6] (1 = balanced routing)", l.imbalance);
  }
  if (!(l.capacity_factor >= 0.0) || l.capacity_factor > 1e6) {
    return fmt::format("capacity factor = {} is not in [0, 1e6] (0 = dropless)", l.capacity_factor);
  }
  if (!(l.moe_memory.rank_capacity_factor >= 0.0) || l.moe_memory.rank_capacity_factor > 1e6) {
    return fmt::format("expert rank capacity factor = {} is not in [0, 1e6] (0 = sized by the routed rows)",
                       l.moe_memory.rank_capacity_factor);
  }
  if (l.moe_memory.flex_num_sms < 0 || l.moe_memory.flex_num_sms > 4096) {
    return fmt::format("flex dispatcher SMs = {} is not in [0, 4096] (0 = the backend's default)",
                       l.moe_memory.flex_num_sms);
  }
  if (l.gpus == 0 && l.dp == 0) return "neither the GPU count nor the data-parallel size is given";
  if (config.executed_layers() > max_size) {
    return fmt::format("{} layer executions are more than the {} a layout is planned for", config.executed_layers(),
                       max_size);
  }
  return {};
}

// A given GPU count N divides by TP·CP·PP and, with DP also given, equals TP·CP·DP·PP.
std::string layout_gpu_group_error(const ParallelLayout& l, const ArchConfig& /*config*/) {
  const std::int64_t attention_group = l.tp * l.cp * l.pp;
  if (l.gpus > 0 && l.gpus % attention_group != 0) {
    return fmt::format("{} GPUs do not divide by TP·CP·PP = {}·{}·{} = {}", l.gpus, l.tp, l.cp, l.pp, attention_group);
  }
  if (l.gpus > 0 && l.dp > 0 && l.gpus != attention_group * l.dp) {
    return fmt::format("{} GPUs are not TP·CP·DP·PP = {}·{}·{}·{} = {}", l.gpus, l.tp, l.cp, l.dp, l.pp,
                       attention_group * l.dp);
  }
  return {};
}

// Attention heads, KV heads and the dense FFN width divide by TP.
std::string layout_tensor_split_error(const ParallelLayout& l, const ArchConfig& config) {
  const auto& a = config.attention;
  if (a.num_heads % l.tp != 0) return fmt::format("{} attention heads do not divide by TP = {}", a.num_heads, l.tp);
  if (!a.mla && a.num_kv_heads % l.tp != 0) {
    // Megatron-Core transformer_config.py: num_query_groups must be a multiple of TP.
    return fmt::format("{} KV heads (query groups) do not divide by TP = {}", a.num_kv_heads, l.tp);
  }
  const auto& f = config.ffn;
  if (config.dense_ffn_layers() > 0 && f.dense_dim % l.tp != 0) {
    return fmt::format("dense FFN width {} does not divide by TP = {}", f.dense_dim, l.tp);
  }
  return {};
}

// MoE: experts divide by EP, expert width by ETP, shared-expert width by TP, N by ETP·EP·PP, and
// TP > 1 needs sequence parallelism. Dense: EP = 1, ETP unset or TP, no capacity factor or imbalance.
std::string layout_expert_error(const ParallelLayout& l, const ArchConfig& config) {
  const auto& f = config.ffn;
  if (!f.is_moe()) {
    if (l.ep != 1) return fmt::format("EP = {} on a dense model (no experts): EP must be 1", l.ep);
    if (l.etp > 1 && l.etp != l.tp) return fmt::format("ETP = {} on a dense model (no experts)", l.etp);
    if (l.capacity_factor > 0.0 || l.imbalance != 1.0) return "capacity factor and imbalance apply to MoE models only";
    return {};
  }
  if (f.num_experts % l.ep != 0) return fmt::format("{} experts do not divide by EP = {}", f.num_experts, l.ep);
  // The flex dispatcher runs HybridEP's kernels (--moe-flex-dispatcher-backend hybridep; the rules
  // that need the cluster: layout/dispatcher_limits.hpp) or DeepEP's on the ETP·EP group
  // (budget/kernel_stack.hpp).
  if (l.dispatcher == MoeDispatcher::flex && l.moe_memory.hybridep) {
    const std::string hybridep = hybridep_layout_refusal(f.num_experts, l.ep, l.expert_tp(), config.hidden_size, 0, 0);
    if (!hybridep.empty()) return "the flex dispatcher (HybridEP) refuses this expert layout: " + hybridep;
  } else if (l.dispatcher == MoeDispatcher::flex) {
    const std::string deepep = expert_layout_refusal(true, f.num_experts, l.ep, l.expert_tp(), f.top_k);
    if (!deepep.empty()) return "the flex dispatcher (DeepEP) refuses this expert layout: " + deepep;
    // DeepEP's Buffer.set_num_sms asserts an even count (buffer.py:160 at hybrid-ep 94a9f8f).
    if (l.moe_memory.flex_num_sms % 2 != 0) {
      return fmt::format("the flex dispatcher (DeepEP) takes an even SM count; {} SMs", l.moe_memory.flex_num_sms);
    }
  }
  if (f.expert_dim % l.expert_tp() != 0) {
    return fmt::format("expert width {} does not divide by ETP = {}", f.expert_dim, l.expert_tp());
  }
  if (f.num_shared_experts > 0 && (f.num_shared_experts * f.shared_expert_dim) % l.tp != 0) {
    return fmt::format("shared-expert width {} does not divide by TP = {}", f.num_shared_experts * f.shared_expert_dim,
                       l.tp);
  }
  const std::int64_t expert_group = l.expert_tp() * l.ep * l.pp;
  const std::int64_t n = l.gpu_count();
  if (n % expert_group != 0) {
    return fmt::format("{} GPUs do not divide by ETP·EP·PP = {}·{}·{} = {} (MoE parallel folding)", n, l.expert_tp(),
                       l.ep, l.pp, expert_group);
  }
  if (l.tp > 1 && !l.sequence_parallel) {
    return fmt::format("MoE with TP = {} needs sequence parallelism (--sequence-parallel): the layout without it "
                       "is not modelled",
                       l.tp);
  }
  return {};
}

// Context parallelism: seq_len divides by 2·CP and FlashAttention is on; sequence parallelism:
// seq_len / CP divides by TP; the padded vocabulary divides by TP.
std::string layout_sequence_and_vocab_error(const ParallelLayout& l, const ArchConfig& config) {
  if (l.cp > 1 && l.seq_len % (2 * l.cp) != 0) {
    // Transformer Engine's load-balanced context parallelism splits each sequence into 2·CP chunks.
    return fmt::format("seq_len {} does not divide by 2·CP = {}", l.seq_len, 2 * l.cp);
  }
  if (l.cp > 1 && !l.flash_attention) return "context parallelism needs FlashAttention (the s² terms are not modelled)";
  const std::int64_t local_seq = l.seq_len / l.cp;
  if (l.sequence_parallel_active() && local_seq % l.tp != 0) {
    return fmt::format("seq_len / CP = {} does not divide by TP = {} (sequence parallelism)", local_seq, l.tp);
  }
  if (config.vocab_size > 0 && l.padded_vocab(config.vocab_size) % l.tp != 0) {
    return fmt::format("vocab_size {} does not divide by TP = {}; pad it with --vocab-divisible-by (Megatron's "
                       "--make-vocab-size-divisible-by)",
                       config.vocab_size, l.tp);
  }
  return {};
}

// Virtual stages need PP > 1 and micro-batches in whole groups of PP; a layout string sets V.
std::string layout_pipeline_error(const ParallelLayout& l, const ArchConfig& config) {
  if (l.virtual_stages > 1 && l.pp == 1) return "virtual pipeline stages need PP > 1";
  if (l.virtual_stages > 1 && l.micro_batches % l.pp != 0) {
    // Megatron's interleaved schedule runs micro-batches in groups of PP
    // (microbatch_group_size_per_vp_stage, default PP): the warm-up count assumes whole groups.
    return fmt::format("{} micro-batches do not divide by PP = {} (interleaved schedule)", l.micro_batches, l.pp);
  }
  if (l.split.first_stage_layers.value_or(0) < 0 || l.split.last_stage_layers.value_or(0) < 0) {
    return "first/last-stage layer counts are below 0";
  }
  if (l.split.kind == PipelineSplit::Kind::first_last && l.pp == 1) {
    return "first/last-stage layer counts need PP > 1";
  }
  return chunk_plan_error(l, config);
}

// Sharding, FP8 and offload settings in range: optimizer instances divide DP·CP, an amax history
// of at least 1, offloaded layers fewer than the layers (Megatron asserts
// cpu_offloading_num_layers < num_layers).
std::string layout_memory_option_error(const ParallelLayout& l, const ArchConfig& config) {
  const std::int64_t dp_cp = l.data_parallel() * l.cp;
  if (l.distributed_optimizer_instances < 1 || dp_cp % l.distributed_optimizer_instances != 0) {
    return fmt::format("{} distributed-optimizer instances do not divide DP·CP = {}", l.distributed_optimizer_instances,
                       dp_cp);
  }
  if (l.fp8_amax_history < 1 || l.fp8_amax_history > (std::int64_t{1} << 20)) {
    return fmt::format("FP8 amax history length {} is not in [1, 2^20]", l.fp8_amax_history);
  }
  if (l.fp8_param_gather && l.fp8 == Fp8Recipe::none) return "FP8 parameters (--fp8-param-gather) need an FP8 recipe";
  if (l.cpu_offload_layers < 0 || l.cpu_offload_layers >= std::max<std::int64_t>(1, config.num_layers)) {
    return fmt::format("{} CPU-offloaded layers: must be in [0, {})", l.cpu_offload_layers, config.num_layers);
  }
  if (l.recompute.kind != RecomputeKind::selective && !l.recompute.modules.empty()) {
    return "recompute modules are given without selective recompute";
  }
  if (l.recompute.recomputes(RecomputeModule::mla_up_proj) && !config.attention.mla) {
    return "recompute module mla_up_proj needs multi-latent attention (Megatron asserts it)";
  }
  return optimizer_dtypes_error(l);
}

// Recompute layers only with full recompute, and at most the layer executions of the smallest
// model chunk (every chunk executes the same count with replicated loop weights).
std::string layout_recompute_error(const ParallelLayout& l, const ArchConfig& config) {
  if (l.recompute.kind != RecomputeKind::full && l.recompute.full_layers != 0) {
    return "recompute layers are given without full recompute";
  }
  if (l.recompute.kind != RecomputeKind::full || l.recompute.full_layers <= 0) return {};
  std::int64_t largest = 0;
  for (const ModelChunk& c : model_chunks(config, l)) {
    largest = std::max(largest, static_cast<std::int64_t>(c.executed_layers.size()));
  }
  if (l.recompute.full_layers > largest) {
    return fmt::format("full recompute of {} layers per chunk exceeds the {} layer executions of the largest "
                       "chunk",
                       l.recompute.full_layers, largest);
  }
  return {};
}

}  // namespace

// The checks run one after another in this order (each may assume the earlier ones passed), and
// the first failing one's message is returned.
std::string ParallelLayout::validation_error(const ArchConfig& config) const {
  using LayoutCheck = std::string (*)(const ParallelLayout&, const ArchConfig&);
  constexpr std::array<LayoutCheck, 10> checks{layout_minimum_error,      layout_range_error,
                                                layout_gpu_group_error,    layout_tensor_split_error,
                                                layout_layer_kinds_error,  layout_expert_error,
                                                layout_sequence_and_vocab_error, layout_pipeline_error,
                                                layout_recompute_error,    layout_memory_option_error};
  for (const LayoutCheck check : checks) {
    if (std::string error = check(*this, config); !error.empty()) return error;
  }
  return {};
}

void ParallelLayout::validate(const ArchConfig& config, const std::string& source) const {
  const std::string error = validation_error(config);
  if (!error.empty()) throw Error(error, source);
}

ParallelLayout resolve_layout(ParallelLayout layout, const std::string& source) {
  if (layout.tp < 1 || layout.cp < 1 || layout.pp < 1) throw Error("TP, CP and PP must be at least 1", source);
  constexpr std::int64_t max_size = std::int64_t{1} << 20;
  if (layout.tp > max_size || layout.cp > max_size || layout.pp > max_size) {
    throw Error("TP, CP and PP must be at most 2^20", source);
  }
  const std::int64_t group = layout.tp * layout.cp * layout.pp;  // at most 2^60: the bounds above
  if (layout.gpus <= 0 && layout.dp <= 0) throw Error("give the GPU count (gpus) or the data-parallel size (dp)", source);
  if (layout.gpus > 0) {
    if (layout.gpus % group != 0) {
      throw Error(fmt::format("{} GPUs do not divide by TP·CP·PP = {}·{}·{} = {}", layout.gpus, layout.tp, layout.cp,
                              layout.pp, group),
                  source);
    }
    const std::int64_t dp = layout.gpus / group;
    if (layout.dp > 0 && layout.dp != dp) {
      throw Error(fmt::format("dp = {} disagrees with {} GPUs / (TP·CP·PP = {}) = {}", layout.dp, layout.gpus, group, dp),
                  source);
    }
    layout.dp = dp;
  } else {
    if (layout.dp > (std::int64_t{1} << 20) || group > (std::int64_t{1} << 40) / layout.dp) {
      throw Error("the GPU count TP·CP·DP·PP is too large", source);
    }
    layout.gpus = group * layout.dp;
  }
  // A pipeline layout string sets the virtual stages (its stage count / PP); one that does not
  // divide is left for validation to refuse.
  if (layout.split.kind == PipelineSplit::Kind::per_stage && layout.virtual_stages == 1) {
    const std::size_t stages = layout.split.stages.size();
    if (stages % static_cast<std::size_t>(layout.pp) == 0 && layout.virtual_stages == 1) {
      layout.virtual_stages = static_cast<std::int64_t>(stages) / layout.pp;
    }
  }
  return layout;
}

}  // namespace budget
