// The layout's field table (budget/layout_fields.hpp): one row per field, in the order
// `layout --format json` writes them. A row's range is the one a run file's "layout" has always been
// read with (sizes up to 2^24, seq_len up to 2^31, factors up to 1e6); ParallelLayout::validation_error()
// checks the layout as a whole (layout/parallel_layout.cpp).
#include "budget/layout_fields.hpp"

#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/error.hpp"

namespace budget {

namespace {

constexpr double max_field_size = 16777216.0;       // 2^24: a parallel size, a count of layers or micro-batches
constexpr double max_field_seq_len = 2147483648.0;  // 2^31 tokens
constexpr double max_fp8_amax_history = 1048576.0;  // 2^20, as validation_error() bounds it

using V = LayoutFieldValue;
using D = LayoutDerivation;
using L = ParallelLayout;
using T = LayoutFieldType;

/// A member's value, as the row's type holds it.
template <auto Member>
V member_value(const L& l, const D& /*derivation*/) {
  return V(l.*Member);
}

/// A member set from the row's value.
template <auto Member>
void set_member(L& l, const V& value, const std::string& /*where*/) {
  using Field = std::remove_reference_t<decltype(l.*Member)>;
  l.*Member = std::get<Field>(value);
}

/// The names of an enum's enumerators 0..Last (its to_string(), i.e. its name table), in order.
template <auto Last>
std::vector<std::string_view> enum_choices() {
  using Enum = decltype(Last);
  std::vector<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(Last); ++i) names.push_back(to_string(static_cast<Enum>(i)));
  return names;
}

/// The enumerator named `value`; budget::Error naming `where` and the allowed names otherwise.
template <auto Last>
decltype(Last) enum_value(const V& value, const std::string& where) {
  const std::string& text = std::get<std::string>(value);
  const std::vector<std::string_view> names = enum_choices<Last>();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<decltype(Last)>(i);
  }
  throw Error(fmt::format("value \"{}\" is not allowed; allowed: {}", text, fmt::join(names, ", ")), where);
}

template <auto Member>
V enum_member_value(const L& l, const D& /*derivation*/) {
  return std::string(to_string(l.*Member));
}

template <auto Member, auto Last>
void set_enum_member(L& l, const V& value, const std::string& where) {
  l.*Member = enum_value<Last>(value, where);
}

/// Selective recompute's modules as named (Megatron's default list, core_attn, when none are given).
V recompute_modules_value(const L& l, const D& /*derivation*/) {
  std::vector<std::string> names;
  if (l.recompute.kind != RecomputeKind::selective) return names;
  if (l.recompute.modules.empty()) return std::vector<std::string>{"core_attn"};
  for (const RecomputeModule m : l.recompute.modules) names.emplace_back(to_string(m));
  return names;
}

void set_recompute_modules(L& l, const V& value, const std::string& where) {
  const auto& names = std::get<std::vector<std::string>>(value);
  if (!names.empty() && l.recompute.kind != RecomputeKind::selective) {
    throw Error(fmt::format("recompute modules are given for recompute \"{}\"; allowed: only with \"selective\"",
                            to_string(l.recompute.kind)),
                where);
  }
  l.recompute.modules.clear();
  for (const std::string& name : names) l.recompute.modules.push_back(parse_recompute_module(name, where));
}

/// pipeline_layout: a Megatron layout string ("" leaves the split as read so far).
void set_pipeline_layout(L& l, const V& value, const std::string& where) {
  const std::string& text = std::get<std::string>(value);
  if (text.empty()) return;
  if (l.split.kind == PipelineSplit::Kind::first_last) {
    throw Error("a pipeline layout string excludes first/last-stage layer counts; give one", where);
  }
  l.split = PipelineSplit::per_stage(text, where);
}

/// first_stage_layers (first = true) or last_stage_layers: N ≥ 0 layers, or -1 (not given).
template <bool first>
void set_stage_layers(L& l, const V& value, const std::string& where) {
  const std::int64_t n = std::get<std::int64_t>(value);
  if (n == -1) return;
  if (l.split.kind == PipelineSplit::Kind::per_stage) {
    throw Error("a pipeline layout string excludes first/last-stage layer counts; give one", where);
  }
  l.split = first ? PipelineSplit::first_last(n, l.split.last_stage_layers)
                  : PipelineSplit::first_last(l.split.first_stage_layers, n);
}

template <bool first>
V stage_layers_value(const L& l, const D& /*derivation*/) {
  const PipelineSplit::Fields fields = l.split.json_fields();
  return first ? fields.first_stage_layers : fields.last_stage_layers;
}

/// The optimizer dtype rows (OptimizerDtypes members), parsed by parse_state_dtype().
template <StateDtype OptimizerDtypes::*Member>
V state_dtype_value(const L& l, const D& /*derivation*/) {
  return std::string(to_string(l.optimizer_dtypes.*Member));
}
template <StateDtype OptimizerDtypes::*Member>
void set_state_dtype(L& l, const V& value, const std::string& where) {
  l.optimizer_dtypes.*Member = parse_state_dtype(std::get<std::string>(value), where);
}

/// A row of the table, named and set piece by piece (the fields not set keep LayoutField's defaults).
class Row {
 public:
  explicit Row(std::string_view name, LayoutFieldType type = T::integer) {
    field_.name = name;
    field_.type = type;
  }
  Row& alias(std::string_view name) { return field_.alias = name, *this; }
  Row& python(std::string_view keyword) { return field_.python = keyword, *this; }
  Row& derived() { return field_.role = LayoutFieldRole::derived, *this; }
  Row& required() { return field_.required = true, *this; }
  Row& range(double minimum, double maximum) {
    field_.minimum = minimum;
    field_.maximum = maximum;
    return *this;
  }
  Row& choices(std::vector<std::string_view> (*names)()) { return field_.choices = names, *this; }
  Row& doc(std::string_view line) { return field_.doc = line, *this; }
  Row& get(LayoutFieldValue (*value)(const L&, const D&)) { return field_.get = value, *this; }
  Row& set(void (*assign)(L&, const V&, const std::string&)) { return field_.set = assign, *this; }
  /// A plain member, read and written as it is.
  template <auto Member>
  Row& member() {
    return get(member_value<Member>).set(set_member<Member>);
  }
  /// An enum member, read and written by its name table's names (enumerators 0..Last).
  template <auto Member, auto Last>
  Row& enum_member() {
    return choices(enum_choices<Last>).get(enum_member_value<Member>).set(set_enum_member<Member, Last>);
  }
  operator LayoutField() const { return field_; }  // NOLINT(google-explicit-constructor): a row is a field

 private:
  LayoutField field_;
};

/// The fields of the parallel sizes and the batch.
void add_size_fields(std::vector<LayoutField>& t) {
  t.push_back(Row("gpus")
                  .python("gpus")
                  .range(0, max_field_size)
                  .doc("GPU count N; 0: derived from dp")
                  .member<&L::gpus>());
  t.push_back(Row("tp")
                  .python("tp")
                  .range(1, max_field_size)
                  .doc("tensor parallel size")
                  .member<&L::tp>());
  t.push_back(Row("sequence_parallel", T::boolean)
                  .python("sequence_parallel")
                  .doc("Megatron --sequence-parallel (written as in effect: false at tp = 1)")
                  .get([](const L& l, const D&) -> V { return l.sequence_parallel_active(); })
                  .set(set_member<&L::sequence_parallel>));
  t.push_back(Row("pp")
                  .python("pp")
                  .range(1, max_field_size)
                  .doc("pipeline stages")
                  .member<&L::pp>());
  t.push_back(Row("virtual_stages")
                  .alias("vp")
                  .python("virtual_stages")
                  .range(1, max_field_size)
                  .doc("model chunks per pipeline rank (interleaved 1F1B when > 1)")
                  .member<&L::virtual_stages>());
  t.push_back(Row("ep")
                  .python("ep")
                  .range(1, max_field_size)
                  .doc("expert parallel size")
                  .member<&L::ep>());
  t.push_back(Row("etp")
                  .python("etp")
                  .range(0, max_field_size)
                  .doc("expert tensor parallel size; 0: equal to tp (written as the size in effect)")
                  .get([](const L& l, const D&) -> V { return l.expert_tp(); })
                  .set(set_member<&L::etp>));
  t.push_back(Row("cp")
                  .python("cp")
                  .range(1, max_field_size)
                  .doc("context parallel size")
                  .member<&L::cp>());
  t.push_back(Row("dp")
                  .python("dp")
                  .range(0, max_field_size)
                  .doc("data parallel size; 0: derived from gpus (N / (TP·CP·PP)); neither given: 1")
                  .get([](const L& l, const D&) -> V { return l.data_parallel(); })
                  .set(set_member<&L::dp>));
  t.push_back(Row("expert_dp")
                  .derived()
                  .range(1, max_field_size * max_field_size)
                  .doc("expert data parallel size N / (ETP·EP·PP) (derived)")
                  .get([](const L& l, const D&) -> V { return l.expert_data_parallel(); }));
}

/// The batch: micro-batch size, micro-batches, sequence length.
void add_batch_fields(std::vector<LayoutField>& t) {
  t.push_back(Row("micro_batch_size")
                  .python("micro_batch_size")
                  .required()
                  .range(1, max_field_size)
                  .doc("sequences per micro-batch (--micro-batch-size)")
                  .member<&L::micro_batch_size>());
  t.push_back(Row("micro_batches")
                  .python("micro_batches")
                  .required()
                  .range(1, max_field_size)
                  .doc("micro-batches per step on each pipeline (m)")
                  .member<&L::micro_batches>());
  t.push_back(Row("seq_len")
                  .python("seq_len")
                  .range(1, max_field_seq_len)
                  .doc("tokens per sequence (split over CP)")
                  .member<&L::seq_len>());
}

/// Recompute, the optimizer, precision and the MoE routing terms.
void add_memory_fields(std::vector<LayoutField>& t) {
  t.push_back(Row("recompute", T::text)
                  .python("recompute")
                  .doc("none, selective, full (written as the kind; read also as selective:M,..., full:N, "
                       "full-uniform:N)")
                  .get([](const L& l, const D&) -> V { return std::string(to_string(l.recompute.kind)); })
                  .set([](L& l, const V& v, const std::string& where) {
                    l.recompute = parse_recompute(std::get<std::string>(v), where);
                  }));
  t.push_back(
      Row("recompute_full_layers")
          .range(0, max_field_size)
          .doc("full recompute: layer executions per chunk (block; 0: all) or per group (uniform)")
          .get([](const L& l, const D&) -> V { return l.recompute.full_layers; })
          .set([](L& l, const V& v, const std::string&) { l.recompute.full_layers = std::get<std::int64_t>(v); }));
  t.push_back(Row("distributed_optimizer", T::boolean)
                  .python("distributed_optimizer")
                  .doc("--use-distributed-optimizer")
                  .member<&L::distributed_optimizer>());
  t.push_back(Row("precision", T::choice)
                  .python("precision")
                  .doc("training precision (--bf16, --fp16)")
                  .enum_member<&L::precision, TrainingPrecision::fp32>());
  t.push_back(Row("cross_entropy_fusion", T::boolean)
                  .python("cross_entropy_fusion")
                  .doc("--cross-entropy-loss-fusion")
                  .member<&L::cross_entropy_fusion>());
  t.push_back(Row("capacity_factor", T::number)
                  .python("capacity_factor")
                  .range(0, 1e6)
                  .doc("routed-expert capacity factor (--moe-expert-capacity-factor); 0: dropless")
                  .member<&L::capacity_factor>());
  t.push_back(Row("imbalance", T::number)
                  .python("imbalance")
                  .range(1, 1e6)
                  .doc("rows of the most loaded expert rank over the balanced count (1: balanced)")
                  .member<&L::imbalance>());
  t.push_back(Row("padded_vocab")
                  .derived()
                  .range(0, 1e15)
                  .doc("the vocabulary as trained, padded to a multiple of vocab_divisible_by·TP (derived)")
                  .get([](const L&, const D& d) -> V { return d.padded_vocab; }));
}

/// Loop placement, the activation switches and the pipeline split.
void add_pipeline_fields(std::vector<LayoutField>& t) {
  t.push_back(Row("replicate_loop_weights", T::boolean)
                  .python("replicate_loop_weights")
                  .derived()
                  .doc("loop_placement is replicated (derived)")
                  .get([](const L& l, const D&) -> V { return l.loop_placement == LoopPlacement::replicated; }));
  t.push_back(Row("loop_placement", T::choice)
                  .python("loop_placement")
                  .choices(enum_choices<LoopPlacement::replicated>)
                  .doc("where a repeated loop sits on the pipeline (docs/cluster.md)")
                  .get(enum_member_value<&L::loop_placement>)
                  .set([](L& l, const V& v, const std::string& where) {
                    l.loop_placement = parse_loop_placement(std::get<std::string>(v), where);
                  }));
  t.push_back(Row("flash_attention", T::boolean)
                  .doc("FlashAttention: no s² softmax terms")
                  .member<&L::flash_attention>());
  t.push_back(Row("dropout", T::boolean)
                  .doc("dropout masks counted (dropout > 0)")
                  .member<&L::dropout>());
  t.push_back(Row("gradient_accumulation_fusion", T::boolean)
                  .doc("--gradient-accumulation-fusion (Megatron's default)")
                  .member<&L::gradient_accumulation_fusion>());
  t.push_back(Row("pipeline_layout", T::text)
                  .python("pipeline_layout")
                  .doc("Megatron's --pipeline-model-parallel-layout string; \"\": none")
                  .get([](const L& l, const D&) -> V { return l.split.json_fields().pipeline_layout; })
                  .set(set_pipeline_layout));
  t.push_back(Row("first_stage_layers")
                  .python("first_stage_layers")
                  .range(-1, max_field_size)
                  .doc("--decoder-first-pipeline-num-layers; -1: not given")
                  .get(stage_layers_value<true>)
                  .set(set_stage_layers<true>));
  t.push_back(Row("last_stage_layers")
                  .python("last_stage_layers")
                  .range(-1, max_field_size)
                  .doc("--decoder-last-pipeline-num-layers; -1: not given")
                  .get(stage_layers_value<false>)
                  .set(set_stage_layers<false>));
  t.push_back(Row("embedding_in_split", T::boolean)
                  .doc("--account-for-embedding-in-pipeline-split")
                  .member<&L::embedding_in_split>());
  t.push_back(Row("loss_in_split", T::boolean)
                  .doc("--account-for-loss-in-pipeline-split")
                  .member<&L::loss_in_split>());
  t.push_back(Row("recompute_method", T::choice)
                  .choices(enum_choices<RecomputeMethod::uniform>)
                  .doc("full recompute's --recompute-method")
                  .get([](const L& l, const D&) -> V { return std::string(to_string(l.recompute.method)); })
                  .set([](L& l, const V& v, const std::string& where) {
                    l.recompute.method = enum_value<RecomputeMethod::uniform>(v, where);
                  }));
  t.push_back(Row("recompute_modules", T::names)
                  .choices(enum_choices<RecomputeModule::shared_experts>)
                  .doc("selective recompute's --recompute-modules (written: core_attn when none are given)")
                  .get(recompute_modules_value)
                  .set(set_recompute_modules));
}

/// Sharding, FP8, offload, the dispatcher and the optimizer's dtypes.
void add_recipe_fields(std::vector<LayoutField>& t) {
  t.push_back(Row("fsdp", T::choice)
                  .python("fsdp")
                  .doc("--use-megatron-fsdp, --use-torch-fsdp2")
                  .enum_member<&L::fsdp, FsdpKind::torch_fsdp2>());
  t.push_back(Row("fsdp_sharding", T::choice)
                  .python("fsdp_sharding")
                  .doc("--data-parallel-sharding-strategy")
                  .enum_member<&L::fsdp_sharding, FsdpSharding::optim_grads_params>());
  t.push_back(Row("distributed_optimizer_instances")
                  .range(1, max_field_size)
                  .doc("--num-distributed-optimizer-instances")
                  .member<&L::distributed_optimizer_instances>());
  t.push_back(Row("fp8", T::choice)
                  .python("fp8")
                  .doc("FP8 recipe (--fp8-format with --fp8-recipe)")
                  .enum_member<&L::fp8, Fp8Recipe::mxfp8>());
  t.push_back(Row("fp8_param_gather", T::boolean)
                  .python("fp8_param_gather")
                  .doc("--fp8-param-gather")
                  .member<&L::fp8_param_gather>());
  t.push_back(Row("cpu_offload_layers")
                  .python("cpu_offload_layers")
                  .range(0, max_field_size)
                  .doc("--cpu-offloading-num-layers")
                  .member<&L::cpu_offload_layers>());
  t.push_back(Row("dispatcher", T::choice)
                  .python("dispatcher")
                  .doc("--moe-token-dispatcher-type")
                  .enum_member<&L::dispatcher, MoeDispatcher::flex>());
  t.push_back(Row("moe_permute_fusion", T::boolean)
                  .python("moe_permute_fusion")
                  .doc("--moe-permute-fusion")
                  .member<&L::moe_permute_fusion>());
}

void add_optimizer_fields(std::vector<LayoutField>& t) {
  t.push_back(
      Row("bf16_main_grads", T::boolean)
          .python("grad_reduce_in_bf16")
          .doc("bf16 gradient buffer and reduction (--grad-reduce-in-bf16; bf16 training)")
          .get([](const L& l, const D&) -> V { return l.optimizer_dtypes.bf16_main_grads; })
          .set([](L& l, const V& v, const std::string&) { l.optimizer_dtypes.bf16_main_grads = std::get<bool>(v); }));
  t.push_back(
      Row("precision_aware_optimizer", T::boolean)
          .python("precision_aware_optimizer")
          .doc("--use-precision-aware-optimizer")
          .get([](const L& l, const D&) -> V { return l.optimizer_dtypes.precision_aware; })
          .set([](L& l, const V& v, const std::string&) { l.optimizer_dtypes.precision_aware = std::get<bool>(v); }));
  t.push_back(Row("main_params_dtype", T::choice)
                  .python("main_params_dtype")
                  .choices(enum_choices<StateDtype::fp8>)
                  .doc("--main-params-dtype (fp32 or fp16)")
                  .get(state_dtype_value<&OptimizerDtypes::main_params>)
                  .set(set_state_dtype<&OptimizerDtypes::main_params>));
  t.push_back(Row("exp_avg_dtype", T::choice)
                  .python("exp_avg_dtype")
                  .choices(enum_choices<StateDtype::fp8>)
                  .doc("--exp-avg-dtype")
                  .get(state_dtype_value<&OptimizerDtypes::exp_avg>)
                  .set(set_state_dtype<&OptimizerDtypes::exp_avg>));
  t.push_back(Row("exp_avg_sq_dtype", T::choice)
                  .python("exp_avg_sq_dtype")
                  .choices(enum_choices<StateDtype::fp8>)
                  .doc("--exp-avg-sq-dtype")
                  .get(state_dtype_value<&OptimizerDtypes::exp_avg_sq>)
                  .set(set_state_dtype<&OptimizerDtypes::exp_avg_sq>));
}

/// The settings `layout --format json` wrote only from issue 40 on (before it, a pasted object with a
/// padded vocabulary or these MoE settings did not read back as its layout): the vocabulary padding,
/// FP8's amax history and the MoE memory settings (MoeMemoryRecipe; the flex dispatcher's SMs from
/// issue 42's dispatcher buffers on).
void add_padding_and_moe_memory_fields(std::vector<LayoutField>& t) {
  t.push_back(Row("vocab_divisible_by")
                  .python("vocab_divisible_by")
                  .range(0, max_field_size)
                  .doc("--make-vocab-size-divisible-by (times TP); 0: the config's vocabulary")
                  .member<&L::vocab_divisible_by>());
  t.push_back(Row("moe_grouped_gemm", T::boolean)
                  .python("moe_grouped_gemm")
                  .doc("--moe-grouped-gemm (TE's grouped-GEMM workspaces)")
                  .get([](const L& l, const D&) -> V { return l.moe_memory.grouped_gemm; })
                  .set([](L& l, const V& v, const std::string&) { l.moe_memory.grouped_gemm = std::get<bool>(v); }));
  t.push_back(Row("fp8_amax_history")
                  .range(1, max_fp8_amax_history)
                  .doc("--fp8-amax-history-len (delayed scaling's amax history)")
                  .member<&L::fp8_amax_history>());
  t.push_back(Row("moe_hybridep", T::boolean)
                  .doc("the flex dispatcher on HybridEP (--moe-flex-dispatcher-backend hybridep; false: DeepEP)")
                  .get([](const L& l, const D&) -> V { return l.moe_memory.hybridep; })
                  .set([](L& l, const V& v, const std::string&) { l.moe_memory.hybridep = std::get<bool>(v); }));
  t.push_back(
      Row("moe_expert_rank_capacity_factor", T::number)
          .range(0, 1e6)
          .doc("--moe-expert-rank-capacity-factor (HybridEP's static row budget); 0: sized by the routed rows")
          .get([](const L& l, const D&) -> V { return l.moe_memory.rank_capacity_factor; })
          .set([](L& l, const V& v, const std::string&) { l.moe_memory.rank_capacity_factor = std::get<double>(v); }));
  t.push_back(
      Row("ep_overlap_schedule", T::boolean)
          .doc("--overlap-moe-expert-parallel-comm's schedule: one more layer execution's activations held (a run "
               "file's agrees with time's overlap)")
          .get([](const L& l, const D&) -> V { return l.moe_memory.ep_overlap_schedule; })
          .set([](L& l, const V& v, const std::string&) { l.moe_memory.ep_overlap_schedule = std::get<bool>(v); }));
  t.push_back(
      Row("moe_flex_num_sms")
          .range(0, 4096)
          .doc("--moe-flex-dispatcher-num-sms (DeepEP's buffers are sized by them); 0: the backend's default, 20")
          .get([](const L& l, const D&) -> V { return l.moe_memory.flex_num_sms; })
          .set([](L& l, const V& v, const std::string&) { l.moe_memory.flex_num_sms = std::get<std::int64_t>(v); }));
}

std::vector<LayoutField> build_layout_fields() {
  std::vector<LayoutField> t;
  add_size_fields(t);
  add_batch_fields(t);
  add_memory_fields(t);
  add_pipeline_fields(t);
  add_recipe_fields(t);
  add_optimizer_fields(t);
  add_padding_and_moe_memory_fields(t);
  return t;
}

}  // namespace

const std::vector<LayoutField>& layout_fields() {
  static const std::vector<LayoutField> table = build_layout_fields();
  return table;
}

}  // namespace budget
