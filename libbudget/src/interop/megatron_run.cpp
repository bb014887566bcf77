// Megatron-LM arguments → the training run budget prices (budget/megatron_args.hpp). Defaults are
// Megatron's at d98e8a64 (the table's source lines): fp32 without --bf16/--fp16, dropout 0.1,
// vocabulary padded to a multiple of 128·TP, the allgather MoE dispatcher, nothing overlapped.
#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "base/checked_math.hpp"
#include "base/json_reader.hpp"
#include "interop/megatron_reader.hpp"

namespace budget {
namespace interop_detail {
namespace {

std::int64_t positive_arg(const ParsedMegatronArgs& p, const std::string& dest, std::int64_t fallback) {
  const std::optional<std::int64_t> v = p.integer(dest);
  if (!v) return fallback;
  if (*v < 1) p.fail(dest, fmt::format("{} is below 1", *v));
  return *v;
}

/// a · b of sizes the arguments give (TP·CP, PP · layers per virtual stage, MBS·DP), exactly, or
/// budget::Error naming the product and the file (base/checked_math.hpp): never a wrapped value,
/// which as a divisor was a SIGFPE.
std::int64_t args_product(const ParsedMegatronArgs& p, std::int64_t a, std::int64_t b, std::string_view quantity) {
  try {
    return detail::checked_mul(a, b, quantity);
  } catch (const Error& e) {
    throw e.with_source(p.source);
  }
}

/// --decoder-first/last-pipeline-num-layers: at least 1 (transformer_config.py:2303 and :2319 at
/// d98e8a64 raise "must be larger than 0"); none when not given.
std::optional<std::int64_t> stage_layers_arg(const ParsedMegatronArgs& p, const std::string& dest) {
  const std::optional<std::int64_t> v = p.integer(dest);
  if (!v) return v;
  if (*v <= 0) p.fail(dest, fmt::format("{} is not above 0 (Megatron-LM: \"must be larger than 0\")", *v));
  return *v;
}

/// The pipeline split: --pipeline-model-parallel-layout, else the first/last counts, else the even
/// split. A layout string beside first/last counts is refused (one split or the other; the layout
/// check refused the pair with this message before the split was one value).
void read_megatron_pipeline_split(const ParsedMegatronArgs& p, ParallelLayout& l) {
  const std::optional<std::int64_t> first = stage_layers_arg(p, "decoder_first_pipeline_num_layers");
  const std::optional<std::int64_t> last = stage_layers_arg(p, "decoder_last_pipeline_num_layers");
  const std::optional<std::string> layout = p.text("pipeline_model_parallel_layout");
  if (!layout || layout->empty()) {
    l.split = PipelineSplit::first_last(first, last);
    return;
  }
  if (first || last) {
    p.fail("pipeline_model_parallel_layout",
           "a pipeline layout string excludes first/last-stage layer counts and the embedding/loss in the split");
  }
  l.split = PipelineSplit::per_stage(*layout, p.source);
}

/// TP, PP, V (or the layout string / first-last counts), EP, ETP, CP, SP.
void read_megatron_parallel(const ParsedMegatronArgs& p, const ArchConfig& config, ParallelLayout& l) {
  l.tp = positive_arg(p, "tensor_model_parallel_size", 1);
  l.pp = positive_arg(p, "pipeline_model_parallel_size", 1);
  l.ep = positive_arg(p, "expert_model_parallel_size", 1);
  l.etp = positive_arg(p, "expert_tensor_parallel_size", 0);
  l.cp = positive_arg(p, "context_parallel_size", 1);
  l.sequence_parallel = p.has("sequence_parallel");
  if (p.has("num_virtual_stages_per_pipeline_rank")) {
    l.virtual_stages = positive_arg(p, "num_virtual_stages_per_pipeline_rank", 1);
  }
  if (p.has("num_layers_per_virtual_pipeline_stage")) {
    const std::int64_t per = positive_arg(p, "num_layers_per_virtual_pipeline_stage", 1);
    const std::int64_t chunk_layers = args_product(p, l.pp, per, "PP x --num-layers-per-virtual-pipeline-stage");
    if (config.num_layers % chunk_layers != 0) {
      p.fail("num_layers_per_virtual_pipeline_stage",
             fmt::format("{} layers do not divide by PP · {} = {}", config.num_layers, per, chunk_layers));
    }
    l.virtual_stages = config.num_layers / chunk_layers;
  }
  l.embedding_in_split = p.has("account_for_embedding_in_pipeline_split");
  l.loss_in_split = p.has("account_for_loss_in_pipeline_split");
  read_megatron_pipeline_split(p, l);
  if (l.split.kind == PipelineSplit::Kind::per_stage && l.virtual_stages == 1) {
    const std::size_t stages = l.split.stages.size();
    if (stages % static_cast<std::size_t>(l.pp) != 0) {
      p.fail("pipeline_model_parallel_layout",
             fmt::format("{} virtual stages do not divide by PP = {}", stages, l.pp));
    }
    l.virtual_stages = static_cast<std::int64_t>(stages) / l.pp;
  }
}

/// DP = N / (TP·CP·PP), micro-batches = GBS / (MBS·DP) (Megatron's default GBS: MBS·DP).
void read_megatron_batch(const ParsedMegatronArgs& p, std::int64_t gpus, ParallelLayout& l, MegatronRun& run) {
  const std::int64_t group = args_product(p, args_product(p, l.tp, l.cp, "TP x CP"), l.pp, "TP x CP x PP");
  if (gpus < 1) throw Error("the GPU count (gpus) is needed to read Megatron-LM's arguments", p.source);
  if (gpus % group != 0) {
    throw Error(fmt::format("{} GPUs do not divide by TP·CP·PP = {}·{}·{} = {}: DP = N/(TP·CP·PP) is not whole", gpus,
                            l.tp, l.cp, l.pp, group),
                p.source);
  }
  l.gpus = gpus;
  l.dp = gpus / group;
  l.micro_batch_size = positive_arg(p, "micro_batch_size", 1);
  const std::int64_t sequences_per_micro_batch = args_product(p, l.micro_batch_size, l.dp, "--micro-batch-size x DP");
  run.global_batch_size = positive_arg(p, "global_batch_size", sequences_per_micro_batch);
  if (run.global_batch_size % sequences_per_micro_batch != 0) {
    p.fail("global_batch_size", fmt::format("{} sequences do not divide by MBS·DP = {}·{} = {}: the micro-batch count "
                                            "is not whole",
                                            run.global_batch_size, l.micro_batch_size, l.dp,
                                            sequences_per_micro_batch));
  }
  l.micro_batches = run.global_batch_size / sequences_per_micro_batch;
  if (!p.has("seq_length")) throw Error("--seq-length is needed (Megatron requires it for GPT)", p.source);
  l.seq_len = positive_arg(p, "seq_length", 4096);
  if (const auto max_pos = p.integer("max_position_embeddings"); max_pos && *max_pos < l.seq_len) {
    p.fail("max_position_embeddings", fmt::format("{} is below --seq-length {} (Megatron asserts it)", *max_pos, l.seq_len));
  }
}

/// Recompute as transformer_config.py:1900-1935 validates it: full needs a method and a layer
/// count; block with 0 layers recomputes nothing (transformer_block.py's block loop).
void read_megatron_recompute(const ParsedMegatronArgs& p, ParallelLayout& l, MegatronRun& run) {
  std::optional<std::string> granularity = p.text("recompute_granularity");
  if (p.has("recompute_activations")) granularity = "selective";
  if (granularity == std::optional<std::string>("selective")) {
    if (p.has("recompute_method")) p.fail("recompute_method", "is not supported with selective recompute (Megatron asserts it)");
    l.recompute.kind = RecomputeKind::selective;
    if (const auto it = p.by_dest.find("recompute_modules"); it != p.by_dest.end()) {
      for (const std::string& m : it->second.values) l.recompute.modules.push_back(parse_recompute_module(m, p.source));
    }
    return;
  }
  if (p.has("recompute_modules")) p.fail("recompute_modules", "is given without --recompute-granularity selective");
  if (granularity != std::optional<std::string>("full")) return;
  const auto method = p.text("recompute_method");
  const auto layers = p.integer("recompute_num_layers");
  if (!method) p.fail("recompute_granularity", "full recompute needs --recompute-method block or uniform");
  if (!layers) p.fail("recompute_granularity", "full recompute needs --recompute-num-layers");
  if (*layers < 0) p.fail("recompute_num_layers", "is negative");
  if (*method == "block" && *layers == 0) {
    run.read.push_back("--recompute-granularity full --recompute-method block --recompute-num-layers 0: no layer is "
                       "recomputed (Megatron's block loop checkpoints none)");
    return;
  }
  if (*layers == 0) p.fail("recompute_num_layers", "uniform recompute needs groups of at least 1 layer");
  l.recompute.kind = RecomputeKind::full;
  l.recompute.full_layers = *layers;
  l.recompute.method = *method == "uniform" ? RecomputeMethod::uniform : RecomputeMethod::block;
}

/// Precision, FP8, optimizer sharding, FSDP.
/// --fp8-format (dest fp8) with --fp8-recipe (Megatron's default delayed); FP4 and custom recipes
/// refused.
Fp8Recipe read_megatron_fp8(const ParsedMegatronArgs& p) {
  if (p.has("fp4")) p.fail("fp4", "FP4 training is not modelled");
  if (p.has("fp8")) {
    const std::string recipe = p.text("fp8_recipe").value_or("delayed");
    if (recipe == "custom") p.fail("fp8_recipe", "a custom FP8 recipe is not modelled");
    return recipe == "tensorwise" ? Fp8Recipe::tensorwise
           : recipe == "blockwise" ? Fp8Recipe::blockwise
           : recipe == "mxfp8"     ? Fp8Recipe::mxfp8
                                   : Fp8Recipe::delayed;
  }
  if (p.has("fp8_recipe") || p.has("fp8_param_gather")) {
    p.fail(p.has("fp8_recipe") ? "fp8_recipe" : "fp8_param_gather", "is given without --fp8-format (FP8 is off)");
  }
  return Fp8Recipe::none;
}

void read_megatron_precision(const ParsedMegatronArgs& p, ParallelLayout& l) {
  if (p.has("bf16") && p.has("fp16")) p.fail("fp16", "and --bf16 exclude each other");
  l.precision = p.has("bf16") ? TrainingPrecision::bf16 : p.has("fp16") ? TrainingPrecision::fp16 : TrainingPrecision::fp32;
  l.fp8 = read_megatron_fp8(p);
  l.fp8_param_gather = p.has("fp8_param_gather");
  l.fp8_amax_history = positive_arg(p, "fp8_amax_history_len", 1);
  l.distributed_optimizer = p.has("use_distributed_optimizer");
  l.distributed_optimizer_instances = positive_arg(p, "num_distributed_optimizer_instances", 1);
  if (p.has("use_megatron_fsdp") && p.has("use_torch_fsdp2")) p.fail("use_torch_fsdp2", "and --use-megatron-fsdp exclude each other");
  if (p.has("use_torch_fsdp2")) l.fsdp = FsdpKind::torch_fsdp2;
  if (p.has("use_megatron_fsdp")) {
    const std::string strategy = p.text("data_parallel_sharding_strategy").value_or("no_shard");
    if (strategy == "no_shard") {
      l.distributed_optimizer = false;
    } else {
      l.fsdp = FsdpKind::megatron_fsdp;
      l.fsdp_sharding = strategy == "optim" ? FsdpSharding::optim
                        : strategy == "optim_grads" ? FsdpSharding::optim_grads : FsdpSharding::optim_grads_params;
    }
  }
  l.gradient_accumulation_fusion = !p.has("gradient_accumulation_fusion");  // --no-gradient-accumulation-fusion
}

/// The optimizer (Adam only) and the dtypes of its gradients and states, as arguments.py:1207-1216
/// and optimizer/__init__.py:564-588 at d98e8a64 resolve them: with --bf16 the gradient buffer is
/// fp32 (--accumulate-allreduce-grads-in-fp32 set) unless --grad-reduce-in-bf16 or --main-grads-dtype
/// bf16; the state dtypes apply with --use-precision-aware-optimizer only.
void read_megatron_optimizer(const ParsedMegatronArgs& p, ParallelLayout& l, MegatronRun& run) {
  if (const auto optimizer = p.text("optimizer"); optimizer && *optimizer != "adam") {
    p.fail("optimizer", fmt::format("{}: only Adam's optimizer states are modelled", *optimizer));
  }
  OptimizerDtypes& d = l.optimizer_dtypes;
  const bool bf16_main = p.text("main_grads_dtype") == std::optional<std::string>("bf16");
  if (p.has("accumulate_allreduce_grads_in_fp32") && bf16_main && !p.has("grad_reduce_in_bf16")) {
    p.fail("main_grads_dtype", "bf16 with --accumulate-allreduce-grads-in-fp32 (Megatron asserts fp32)");
  }
  if (l.precision == TrainingPrecision::bf16) {
    d.bf16_main_grads = p.has("grad_reduce_in_bf16") || (bf16_main && !p.has("accumulate_allreduce_grads_in_fp32"));
  } else if (l.precision == TrainingPrecision::fp16 && p.has("accumulate_allreduce_grads_in_fp32")) {
    p.fail("accumulate_allreduce_grads_in_fp32", "fp32 gradients with --fp16 are not modelled");
  } else if (p.has("grad_reduce_in_bf16") || bf16_main) {
    run.read.push_back(fmt::format("{}: no effect without --bf16 (the gradients are in the parameters' dtype)",
                                   p.has("grad_reduce_in_bf16") ? "--grad-reduce-in-bf16" : "--main-grads-dtype bf16"));
  }
  d.precision_aware = p.has("use_precision_aware_optimizer");
  const std::pair<const char*, StateDtype*> states[] = {
      {"main_params_dtype", &d.main_params}, {"exp_avg_dtype", &d.exp_avg}, {"exp_avg_sq_dtype", &d.exp_avg_sq}};
  for (const auto& [dest, target] : states) {
    const auto text = p.text(dest);
    if (!text) continue;
    if (!d.precision_aware) {
      run.read.push_back(fmt::format("{} {}: no effect without --use-precision-aware-optimizer", p.by_dest.at(dest).name,
                                     *text));
      continue;
    }
    *target = parse_state_dtype(*text, p.source);
  }
}

/// Group-limited routing as Megatron-Core validates it (transformer_config.py:780-800 at d98e8a64 and
/// moe_utils.py:673-733, group_limited_topk: experts viewed as [G, E/G], top-(k/g) scores a group, g
/// groups kept): both or neither given, 1 ≤ g ≤ G, G dividing the experts and g dividing top-k (the
/// config's, which the shape arguments, when given, agree with).
void read_megatron_group_routing(const ParsedMegatronArgs& p, const ArchConfig& config, MegatronRun& run) {
  const auto groups = p.integer("moe_router_num_groups");
  const auto topk = p.integer("moe_router_group_topk");
  if (!groups && !topk) return;
  if (!groups || !topk) {
    p.fail(groups ? "moe_router_num_groups" : "moe_router_group_topk",
           "group-limited routing needs both --moe-router-num-groups and --moe-router-group-topk");
  }
  if (*groups < 1 || *topk < 1 || *topk > *groups) {
    p.fail("moe_router_group_topk", fmt::format("{} groups of {} is not 1 ≤ group top-k ≤ groups", *topk, *groups));
  }
  if (!config.ffn.is_moe()) p.fail("moe_router_num_groups", "group-limited routing needs an MoE config");
  const std::int64_t experts = p.integer("num_experts").value_or(config.ffn.num_experts);
  if (experts % *groups != 0) {
    p.fail("moe_router_num_groups", fmt::format("{} groups do not divide the {} experts", *groups, experts));
  }
  const std::optional<std::int64_t> k = p.integer("moe_router_topk").value_or(config.ffn.top_k);
  if (*k % *topk != 0) {
    p.fail("moe_router_group_topk", fmt::format("{} does not divide --moe-router-topk {} (top-(k/g) scores a group)",
                                                *topk, *k));
  }
  run.router_num_groups = *groups;
  run.router_group_topk = *topk;
}

/// The MoE settings that change memory (MoeMemoryRecipe; transformer_config.py at d98e8a64:
/// moe_grouped_gemm :850, moe_flex_dispatcher_backend :898, moe_expert_rank_capacity_factor :1019,
/// the flex dispatcher's SMs :964-973).
void read_megatron_moe_memory(const ParsedMegatronArgs& p, ParallelLayout& l) {
  MoeMemoryRecipe& m = l.moe_memory;
  m.hybridep = l.dispatcher == MoeDispatcher::flex && p.text("moe_flex_dispatcher_backend").value_or("deepep") == "hybridep";
  if (const auto f = p.number("moe_expert_rank_capacity_factor")) {
    if (!(*f > 0.0) || *f > 1e6) p.fail("moe_expert_rank_capacity_factor", "is not in (0, 1e6]");
    m.rank_capacity_factor = *f;
  }
  m.grouped_gemm = p.has("moe_grouped_gemm");
  m.ep_overlap_schedule = p.has("overlap_moe_expert_parallel_comm");
  m.flex_num_sms = l.dispatcher == MoeDispatcher::flex ? flex_dispatcher_num_sms(p) : 0;
}

/// Loss, vocabulary, dropout, attention kernel, offload, MoE routing.
void read_megatron_model_settings(const ParsedMegatronArgs& p, ParallelLayout& l, MegatronRun& run) {
  l.cross_entropy_fusion = p.has("cross_entropy_loss_fusion");
  l.vocab_divisible_by = positive_arg(p, "make_vocab_size_divisible_by", 128);
  const double hidden = p.number("hidden_dropout").value_or(0.1), attention = p.number("attention_dropout").value_or(0.1);
  l.dropout = hidden > 0.0 || attention > 0.0;
  const std::string backend = p.text("attention_backend").value_or("auto");
  l.flash_attention = backend != "unfused" && backend != "local";
  if (const auto n = p.integer("cpu_offloading_num_layers")) l.cpu_offload_layers = *n;
  l.moe_permute_fusion = p.has("moe_permute_fusion");
  const std::string dispatcher = p.text("moe_token_dispatcher_type").value_or("allgather");
  l.dispatcher = dispatcher == "alltoall" ? MoeDispatcher::alltoall
                 : dispatcher == "flex"   ? MoeDispatcher::flex
                                          : MoeDispatcher::allgather;
  if (const auto f = p.number("moe_expert_capacity_factor")) {
    if (*f <= 0.0) p.fail("moe_expert_capacity_factor", "is not positive");
    l.capacity_factor = *f;
    // Padded to capacity: every expert receives exactly its capacity (moe_utils.py drop-and-pad).
    if (p.has("moe_pad_expert_input_to_capacity")) l.imbalance = std::max(1.0, *f);
  }
  if (p.has("moe_router_force_load_balancing")) l.imbalance = 1.0;
  read_megatron_moe_memory(p, l);
  if (l.dispatcher != MoeDispatcher::alltoall && !l.moe_memory.hybridep) {
    run.read.push_back(fmt::format("--moe-token-dispatcher-type {}: its buffers are modelled as the alltoall "
                                   "dispatcher's",
                                   dispatcher));
  }
}

/// The recipe's settings that need neither the model nor the GPU count: recompute, precision and FP8,
/// the gradient and optimizer dtypes, the model settings (dropout, attention backend, dispatcher, MoE
/// memory settings).
void read_megatron_recipe(const ParsedMegatronArgs& p, ParallelLayout& l, MegatronRun& run) {
  read_megatron_recompute(p, l, run);
  read_megatron_precision(p, l);
  read_megatron_optimizer(p, l, run);
  read_megatron_model_settings(p, l, run);
}

void read_megatron_overlap(const ParsedMegatronArgs& p, const ParallelLayout& l, CommOverlap& o) {
  o.dp = p.has("overlap_grad_reduce");
  o.tp = p.has("tp_comm_overlap");
  o.ep = p.has("overlap_moe_expert_parallel_comm");
  o.cp = false;
  // overlap_p2p_comm defaults to True and is forced off without interleaving (arguments.py).
  o.pp = l.virtual_stages > 1 && !p.has("overlap_p2p_comm");
}

}  // namespace
}  // namespace interop_detail

namespace interop_detail {
void check_megatron_shapes(const ParsedMegatronArgs& p, const ArchConfig& config, MegatronRun& run);
}  // namespace interop_detail

MegatronRun interop_detail::read_parsed_megatron_args(const ParsedMegatronArgs& p, const ArchConfig& config,
                                                      std::int64_t gpus) {
  MegatronRun run;
  for (const auto& [dest, given] : p.by_dest) {
    const MegatronArgument& a = *given.argument;
    if (a.use == MegatronUse::modelled) run.modelled.push_back(given.name);
    if (a.use == MegatronUse::read) run.read.push_back(fmt::format("{}: {}", given.name, a.meaning));
    if (a.use == MegatronUse::not_modelled) run.not_modelled.push_back(given.name);
  }
  ParallelLayout& l = run.layout;
  read_megatron_parallel(p, config, l);
  read_megatron_batch(p, gpus, l, run);
  read_megatron_recipe(p, l, run);
  read_megatron_overlap(p, l, run.overlap);
  read_megatron_group_routing(p, config, run);
  run.document_mask = p.has("reset_attention_mask");
  check_megatron_shapes(p, config, run);
  return run;
}

MegatronRun read_megatron_args(const std::vector<std::string>& words, const ArchConfig& config, std::int64_t gpus,
                               const std::string& source) {
  return interop_detail::read_parsed_megatron_args(interop_detail::parse_megatron_words(words, source), config, gpus);
}

Fp8Recipe megatron_fp8_recipe(const std::vector<std::string>& words, const std::string& source) {
  return interop_detail::read_megatron_fp8(interop_detail::parse_megatron_words(words, source));
}

Fp8Recipe load_megatron_fp8_recipe(const std::string& path) {
  return megatron_fp8_recipe(megatron_words(detail::read_text_file(path), path), path);
}

TrainingRecipe megatron_training_recipe(const std::vector<std::string>& words, const std::string& source) {
  const interop_detail::ParsedMegatronArgs p = interop_detail::parse_megatron_words(words, source);
  MegatronRun run;
  interop_detail::read_megatron_recipe(p, run.layout, run);
  run.layout.micro_batch_size = interop_detail::positive_arg(p, "micro_batch_size", 1);
  return run.layout;
}

AttentionBackend load_megatron_attention_backend(const std::string& path) {
  return megatron_attention_backend(megatron_words(detail::read_text_file(path), path), path);
}

AttentionBackend megatron_attention_backend(const std::vector<std::string>& words, const std::string& source) {
  const auto parsed = interop_detail::parse_megatron_words(words, source);
  const std::string name = parsed.text("attention_backend").value_or("auto");
  if (name == "fused") return AttentionBackend::cudnn;
  if (name == "flash") return AttentionBackend::fa2;
  if (name == "unfused" || name == "local") return AttentionBackend::unfused;
  return AttentionBackend::te_default;
}

MegatronRun load_megatron_args(const std::string& path, const ArchConfig& config, std::int64_t gpus) {
  const std::string text = detail::read_text_file(path);
  return read_megatron_args(megatron_words(text, path), config, gpus, path);
}

}  // namespace budget
