// A config's training step time from its op list (docs/calibration.md, "Step time").
//
// Every op of layer_ops() becomes the profile queries of one step of T = tokens_per_step tokens
// on one GPU, each timed by the TimeModel, summed over its passes and multiplied by the op's
// executed layers (loops included):
//
//   GEMM ops (projections, router, dense/shared FFN, LM head): y = x·Wᵀ with M = T; passes
//     forward × f + input_grad + weight_grad, f = max(1, P − 2) forwards for P training passes
//     (P = 4: full recompute runs the forward twice); P = 1: the forward only.
//     Gated FFNs run up and gate as one GEMM of N = 2·width, then the down GEMM.
//   routed experts: grouped GEMMs of E groups of T·top_k/E rows (balanced routing), up(_gate) and down.
//   attention: one launch over T tokens packed as documents of L = 2Ā − 1 tokens (causal documents
//     of L tokens attend (L + 1)/2 keys per query on average, Ā the workload's attended keys),
//     forward+backward, plus (P − 3) forwards.
//   memory-bound ops: norms (2 RMSNorms a layer over T×H, forward+backward), the final norm,
//     router softmax/top-k (T×E), dispatch (gather of T·top_k rows of H; its backward is a
//     scatter-add of the same shape), combine (scatter-add; its backward a gather), the activation
//     (SwiGLU over T·top_k × expert_dim; a plain activation is taken as 2/3 of SwiGLU's time, the
//     ratio of their bytes), the embedding lookup (gather of T rows of H, backward scatter-add).
//   layer glue (is_layer_glue(); no profile rows): forward bytes × T × (1 + backward ratio) at the
//     profile's copy bandwidth, the ratio and the launches per op kind in glue_cost() below.
//
// Launches: one per profile query (two for a forward+backward query), the glue ops' own counts.
// The layer correction (time_model.hpp, LayerCorrection) then scales each op's time by its class's
// factor and adds launch_ms per launch: seconds = factor_c · t_op + launch_ms · launches.

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <string>

#include <fmt/format.h>

#include "budget/accounting.hpp"
#include "budget/kernel_class.hpp"
#include "budget/op_traits.hpp"
#include "budget/time_model.hpp"
#include "base/checked_math.hpp"
#include "time/step_terms.hpp"
#include "time/time_no_rows.hpp"
#include "base/enum_names.hpp"

namespace budget {

namespace {

using QOp = TimeQuery::Op;
using QPass = TimeQuery::Pass;

/// A time query: op, shape (TimeQuery dims order) and (expert GEMMs) matrix; the pass is set per add().
TimeQuery query_of(QOp op, std::initializer_list<std::int64_t> dims, TimeQuery::Matrix matrix = TimeQuery::Matrix::none) {
  TimeQuery q;
  q.op = op;
  q.matrix = matrix;
  std::size_t i = 0;
  for (const std::int64_t d : dims) q.dims[i++] = d;
  return q;
}

/// Bytes per stored weight of the gradient pass (add_gradient_pass()): one bf16 read or write.
constexpr double gradient_pass_bytes_per_weight = 2.0;

/// The gradient pass: a training step's weight gradients go once more through memory after the
/// GEMMs that make them (accumulated into the stored gradient, or copied out of the kernel's
/// layout), which the per-op rows do not time (they run each GEMM into a fresh output). Counted as
/// one bf16 pass, 2 bytes per stored weight of the op per execution, at the measured copy
/// bandwidth, added to the op's time (so in its own class, no fitted factor), for a timed op with
/// weights in a step with a weight-gradient pass (training_passes ≥ 3); docs/calibration.md
/// ("Gradient pass"). `with_note`: say so in the op's note.
void add_gradient_pass(const Op& op, const Workload& w, double copy_bytes_per_s, bool with_note, OpStepTime& t) {
  if (w.training_passes < 3 || op.params_per_layer <= 0 || !(t.seconds_per_step > 0)) return;
  t.seconds_per_step += gradient_pass_bytes_per_weight * static_cast<double>(op.params_per_layer) / copy_bytes_per_s;
  if (with_note) {
    t.note += fmt::format("{}with its weights' gradient pass ({} bytes a weight at the copy bandwidth)",
                          t.note.empty() ? "" : "; ", gradient_pass_bytes_per_weight);
  }
}

struct StepQueries {
  const TimeModel& model;
  std::int64_t tokens;
  std::int64_t passes;
  OpStepTime* out;
  double* launches;
  bool* from_peaks;  ///< set when a query has no rows in any pass (timed at the profile's peaks)
  detail::StepTermsPath path;
  const detail::StackPlan& plan;
  /// The precision of this op's GEMMs (the plan's for TE linear layers, else bf16).
  TimeQuery::Dtype gemm_dtype = TimeQuery::Dtype::bf16;
  detail::StackBytes bytes{};  ///< traffic of this op's kernels beyond its queries, per execution

  void add(const TimeQuery& query, double multiplier) {
    *launches += multiplier * (query.pass == QPass::forward_backward ? 2.0 : 1.0);
    if (path == detail::StepTermsPath::indexed) {
      out->seconds_per_step += multiplier * model.predict_ms(query) * 1e-3;
      *from_peaks = *from_peaks || !model.measured(query.op);
      return;
    }
    const TimePrediction p = model.predict(to_row(query));
    out->seconds_per_step += multiplier * p.ms * 1e-3;
    out->provenance_seconds[static_cast<std::size_t>(p.provenance)] += multiplier * p.ms * 1e-3;
    out->out_of_range = out->out_of_range || p.out_of_range;
    out->no_rows = out->no_rows || p.no_rows;
    *from_peaks = *from_peaks || p.from_peaks;
    if (!p.note.empty() && out->note.find(p.note) == std::string::npos) {
      out->note += (out->note.empty() ? "" : "; ") + p.note;
    }
  }

  double forwards() const { return passes <= 2 ? 1.0 : static_cast<double>(passes - 2); }

  /// The training passes of one GEMM-like query.
  void gemm_passes(TimeQuery query) {
    query.pass = QPass::forward;
    add(query, forwards());
    if (passes >= 2) {
      query.pass = QPass::input_grad;
      add(query, 1.0);
    }
    if (passes >= 3) {
      query.pass = QPass::weight_grad;
      add(query, 1.0);
    }
  }

  /// A GEMM of `rows` × K by K × N (rows = the step's tokens unless given), at the op's precision,
  /// with its FP8 quantize traffic.
  void gemm(std::int64_t k, std::int64_t n, std::int64_t rows = 0, std::int64_t groups = 1) {
    TimeQuery query = query_of(QOp::gemm, {rows > 0 ? rows : tokens, k, n});
    query.dtype = gemm_dtype;
    if (gemm_dtype != TimeQuery::Dtype::bf16) {
      bytes.quantize += detail::quantize_bytes(plan, query.dims[0], k, n, passes);
      bytes.quantize_launches += detail::quantize_launches(plan, groups, passes);
    }
    gemm_passes(query);
  }

  /// forward+backward of a row with such passes, plus (P − 3) extra forwards; P = 1: forward only.
  void fused_passes(TimeQuery query, double multiplier) {
    if (passes == 1) {
      query.pass = QPass::forward;
      add(query, multiplier);
      return;
    }
    query.pass = QPass::forward_backward;
    add(query, multiplier);
    if (passes > 3) {
      query.pass = QPass::forward;
      add(query, multiplier * static_cast<double>(passes - 3));
    }
  }

  /// A gather of `rows` rows of `width` and its backward (a scatter-add), or the reverse.
  void gather_scatter(std::int64_t rows, std::int64_t width, bool gather_first) {
    TimeQuery gather = query_of(QOp::dispatch_gather, {rows, width});
    TimeQuery scatter = query_of(QOp::combine_scatter_add, {rows, width});
    gather.pass = scatter.pass = QPass::forward;
    add(gather_first ? gather : scatter, 1.0);
    if (passes >= 2) add(gather_first ? scatter : gather, 1.0);
  }

  void activation(std::int64_t rows, std::int64_t width, bool gated) {
    fused_passes(query_of(QOp::swiglu, {rows, width}), gated ? 1.0 : 2.0 / 3.0);
    if (!gated && path == detail::StepTermsPath::rows && out->note.find("plain activation") == std::string::npos) {
      out->note += std::string(out->note.empty() ? "" : "; ") + "plain activation: 2/3 of SwiGLU's time (bytes ratio)";
    }
  }
};

/// Equivalent causal document length of Ā mean attended keys: (L + 1)/2 = Ā, within [1, seq_len].
std::int64_t equivalent_doc_len(double attended_keys, const Workload& w) {
  const double L = std::round(2.0 * attended_keys - 1.0);
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(L), 1, w.seq_len);
}

/// The mean attended keys of an attention_scores op: its forward FLOPs are
/// 2·heads·(qk_dim + v_dim)·Ā (ops.cpp), so Ā = forward / (2·heads·(qk_dim + v_dim)). Sliding-window
/// layers carry their own (window-bounded) Ā this way.
double attended_keys_of(const Op& scores) {
  const double width = 2.0 * static_cast<double>(scores.matrices) *
                       static_cast<double>(scores.in_features + scores.value_features);
  return width > 0 ? scores.forward_flops / width : 0.0;
}

/// T·top_k: the rows the routed experts see in a step (checked for overflow).
std::int64_t routed_rows_of(std::int64_t tokens, const FfnConfig& f) {
  return detail::checked_mul(tokens, f.top_k, "routed tokens per step (tokens x top_k)");
}

/// KernelClass::mlp_gemms: one wide FFN, up(+gate) H → up_factor·width then down width → H, where
/// width = num_shared·out_features for shared experts (op.matrices = count·m), up_factor 2 if gated.
void query_mlp_gemms(StepQueries& q, const Op& op, const ArchConfig& c) {
  const auto& f = c.ffn;
  const std::int64_t up_factor = f.gated ? 2 : 1;
  const std::int64_t width = detail::checked_mul(
      op.out_features, op.kind == OpKind::shared_experts ? f.num_shared_experts : 1, "shared expert width");
  q.gemm(c.hidden_size, detail::checked_mul(up_factor, width, "FFN up-projection width"));
  q.gemm(width, c.hidden_size);
}

/// The Megatron-Core stack's grouped expert GEMM (--moe-grouped-gemm, TE's GroupedLinear) on a
/// profile without expert_gemms rows: E groups of r rows, K → N. Timed as
///   one GEMM of E·⌈r/128⌉·128 rows at the table's rate (every group's rows, each rounded up to a
///     128-row tile: a partial tile costs a whole one), each training pass;
///   + (E − 1)·K·N weight elements read again in each forward and input-gradient pass (the one GEMM
///     reads one K×N weight; the groups read E), at the copy bandwidth;
///   + E·K·N·2·g bytes in the weight-gradient pass: every group's gradient read and written in the
///     main gradients of g bytes an element (--gradient-accumulation-fusion), at the copy bandwidth
///     (it replaces the 2-byte gradient pass of the other ops).
/// Checked against TE's grouped GEMMs measured on a B200 in training (SimuMax v1.2's table of
/// kernel efficiencies, MooreThreads/SimuMax@4dcaae5:configs/system/b200_bf16_ceperm.json,
/// group_matmul): the forward at 32 groups of 1024 rows (7168 → 4096) and the weight gradient at 32 and
/// 256 groups with fp32 and bf16 main gradients come within 10% of the measured times once the
/// machine's dense GEMM rate is taken (tests/unit/time/test_grouped_gemm.cpp; docs/calibration.md,
/// "Grouped GEMMs"). FP8 weights are read as 1 byte an element.
void grouped_gemm_stack_terms(StepQueries& q, std::int64_t groups, std::int64_t rows_per_group, std::int64_t k,
                              std::int64_t n) {
  const std::int64_t rows = detail::checked_mul(groups, (rows_per_group + 127) / 128 * 128, "grouped GEMM rows");
  q.gemm(k, n, rows, groups);
  const double weight = static_cast<double>(k) * static_cast<double>(n);
  const double element = q.gemm_dtype == TimeQuery::Dtype::bf16 ? 2.0 : 1.0;
  const double reads = q.forwards() + (q.passes >= 2 ? 1.0 : 0.0);
  q.bytes.grouped_weights += static_cast<double>(groups - 1) * weight * element * reads;
  if (q.passes >= 3) q.bytes.grad_accumulate += static_cast<double>(groups) * weight * 2.0 * q.plan.main_grad_bytes;
}

/// The rows each expert's grouped GEMM computes for `rows` reaching it: the kernel target's padding
/// (padded_expert_rows()), else that of the FP8 recipe the model times the GEMMs with: Megatron pads
/// each expert's rows under FP8 whether or not a target is named (moe/experts.py:890-903 at
/// d98e8a64dd; memory/moe_memory.cpp counts the same rows), so a layout's FP8 recipe prices it
/// (issue 43); BF16 pads nothing.
std::int64_t executed_expert_rows(const TimeModelOptions& o, std::int64_t rows) {
  return o.kernels ? padded_expert_rows(o.kernels, rows) : padded_expert_tokens(rows, kernel_precision(o.recipe.fp8));
}

/// KernelClass::expert_gemms: grouped GEMMs of E groups of max(1, round(T·top_k/E)) rows (balanced
/// routing), padded as executed_expert_rows() says, up(_gate) then down, each over its training passes.
void query_expert_gemms(StepQueries& q, const ArchConfig& c) {
  const auto& f = c.ffn;
  const std::int64_t E = f.num_experts;
  const std::int64_t per_expert = executed_expert_rows(
      q.model.options(),
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(static_cast<double>(routed_rows_of(q.tokens, f)) /
                                                                        static_cast<double>(E)))));
  if (q.plan.megatron && !q.model.measured(QOp::expert_gemms)) {
    const std::int64_t up_width = detail::checked_mul(f.gated ? 2 : 1, f.expert_dim, "expert up width");
    grouped_gemm_stack_terms(q, E, per_expert, c.hidden_size, up_width);
    grouped_gemm_stack_terms(q, E, per_expert, f.expert_dim, c.hidden_size);
    if (q.path == detail::StepTermsPath::rows) {
      q.out->note += fmt::format("{}grouped GEMM of {} groups of {} rows: one GEMM of their rows (each group rounded "
                                 "up to 128) and the further groups' weights",
                                 q.out->note.empty() ? "" : "; ", E, per_expert);
    }
    return;
  }
  TimeQuery up = query_of(QOp::expert_gemms, {E, per_expert, c.hidden_size, f.expert_dim, f.top_k, q.tokens},
                          f.gated ? TimeQuery::Matrix::up_gate : TimeQuery::Matrix::up);
  q.gemm_passes(up);
  up.matrix = TimeQuery::Matrix::down;
  q.gemm_passes(up);
}

}  // namespace

std::pair<std::int64_t, std::int64_t> executed_attention_head_dims(const std::optional<KernelTarget>& kernels,
                                                                   std::int64_t qk, std::int64_t v) {
  if (!kernels) return {qk, v};
  const AttentionFit fit = attention_fit_brief(*kernels, qk, v);
  if (fit.kind != KernelFitKind::padded) return {qk, v};
  return {fit.executed_qk, fit.executed_v};
}

std::int64_t padded_expert_rows(const std::optional<KernelTarget>& kernels, std::int64_t rows) {
  return kernels ? padded_expert_tokens(rows, kernels->precision) : rows;
}

namespace {

/// KernelClass::attention: one launch over T tokens packed as documents of the equivalent length L
/// (forward+backward plus extra forwards). On the rows path the backend the model picks for the
/// forward+backward query is recorded in `st` for the report.
void query_attention(StepQueries& q, const Op& op, const ArchConfig& c, const Workload& w, detail::StepTerms& st) {
  const std::int64_t T = q.tokens;
  const std::int64_t L = equivalent_doc_len(attended_keys_of(op), w);
  const std::int64_t docs = std::max<std::int64_t>(1, T / L);
  // MLA trains in the non-absorbed form: every head has its own key (qk_nope + qk_rope) and
  // value (v_head_dim) after the kv up-projection, so the kernel runs num_heads KV heads.
  const std::int64_t kv_heads = c.attention.mla ? c.attention.num_heads : c.attention.num_kv_heads;
  const std::int64_t v = op.value_features > 0 ? op.value_features : c.attention.head_dim;
  const auto [qk_run, v_run] = executed_attention_head_dims(q.model.options().kernels, c.attention.head_dim, v);
  TimeQuery a = query_of(QOp::attention, {docs, L, T, c.attention.num_heads, kv_heads, qk_run});
  if (v_run != qk_run) a.v_head_dim = v_run;
  if (q.path == detail::StepTermsPath::rows) {
    // The backend is chosen per query; record it for the report.
    TimeQuery probe_query = a;
    probe_query.pass = QPass::forward_backward;
    const TimePrediction probe = q.model.predict(to_row(probe_query));
    st.attention_backend = probe.backend;
    st.attention_backend_reason = probe.note;
  }
  q.fused_passes(a, 1.0);
}

/// Times one execution of `op` into q.out / q.launches / q.from_peaks by its kernel class
/// (budget/kernel_class.hpp, the op-kind → kernel-class map shared with budget-profile; the shapes
/// of each query are this model's). Returns false for an op that is not timed (reported apart
/// from the budgets).
bool time_one_execution(StepQueries& q, const Op& op, const ArchConfig& c, const Workload& w,
                        double copy_bytes_per_s, detail::StepTerms& st) {
  const std::int64_t T = q.tokens;
  const std::int64_t H = c.hidden_size;
  const auto& f = c.ffn;
  switch (kernel_class(op.kind)) {
    case KernelClass::projection_gemm: q.gemm(op.in_features, op.out_features); break;
    case KernelClass::not_timed: return false;
    case KernelClass::mlp_gemms: query_mlp_gemms(q, op, c); break;
    case KernelClass::expert_gemms: query_expert_gemms(q, c); break;
    case KernelClass::attention: query_attention(q, op, c, w, st); break;
    case KernelClass::rms_norm:
      q.fused_passes(query_of(QOp::rms_norm, {T, H}), static_cast<double>(op.matrices));
      break;
    case KernelClass::router_topk:
      q.fused_passes(query_of(QOp::router_softmax_topk, {T, f.num_experts, f.top_k}), 1.0);
      break;
    case KernelClass::gather_scatter:  // dispatch gathers, combine scatter-adds top_k rows of H
      q.gather_scatter(routed_rows_of(T, f), H, op.kind == OpKind::expert_dispatch);
      break;
    case KernelClass::activation:
      if (op.kind == OpKind::expert_activation) {
        q.activation(routed_rows_of(T, f), f.expert_dim, f.gated);
      } else {
        q.activation(T, op.in_features, f.gated);
      }
      break;
    case KernelClass::embedding_lookup: q.gather_scatter(T, H, true); break;
    case KernelClass::layer_glue: time_layer_glue(op, w, copy_bytes_per_s, q.path, *q.out, *q.launches); break;
    case KernelClass::short_convolution:
    case KernelClass::recurrent_scan:
    case KernelClass::indexer_scores:
      // No profile rows: the roofline at the profile's peaks, flagged (time_no_rows.cpp).
      detail::time_without_rows(op, w, q.model.profile().peaks, *q.out, *q.launches);
      *q.from_peaks = true;
      break;
  }
  return true;
}

/// The layer-correction class of `op`: time_class_of(), except that an attention of head_dim not a
/// multiple of 8 has its own class (another backend, layout copies of unaligned views), and a
/// memory-bound op the profile has no rows for (`from_peaks`) is timed from its bytes at the copy
/// bandwidth like the glue, and scaled as the glue.
TimeClass step_time_class(const Op& op, const ArchConfig& c, bool from_peaks) {
  TimeClass cls = time_class_of(op.kind);
  if (cls == TimeClass::attention_aligned && c.attention.head_dim % 8 != 0) cls = TimeClass::attention_unaligned;
  if (from_peaks && is_memory_bound(op.kind)) cls = TimeClass::glue;
  return cls;
}

/// The term of `op` from the time `t` and `launches` of one execution: per execution as given, per
/// step × executed layers, the step's FLOPs = training passes × total forward FLOPs × T.
detail::OpTerm make_op_term(const Op& op, const Workload& w, TimeClass cls, OpStepTime t, double launches) {
  detail::OpTerm term;
  term.cls = cls;
  term.seconds_per_execution = t.seconds_per_step;
  term.launches_per_execution = launches;
  const LayerPart part = op_traits(op.kind).part;  // the model-level parts are not layers
  term.layer_op = part != LayerPart::embedding && part != LayerPart::head && part != LayerPart::final_norm;
  t.seconds_per_step *= static_cast<double>(op.executed_layers);
  for (double& s : t.provenance_seconds) s *= static_cast<double>(op.executed_layers);
  t.launches_per_step = launches * static_cast<double>(op.executed_layers);
  t.flops_per_step = static_cast<double>(w.training_passes) * op.total_forward_flops() * static_cast<double>(w.tokens_per_step);
  term.time = std::move(t);
  return term;
}

/// The op's seconds by provenance after the correction: its queries' times scaled by the class
/// factor, and the rest of its time (gradient pass, glue and stack kernels at the copy bandwidth,
/// launch costs) "assumed".
void set_op_provenance(OpStepTime& t, double factor) {
  double known = 0;
  for (double& s : t.provenance_seconds) {
    s *= factor;
    known += s;
  }
  t.provenance_seconds[static_cast<std::size_t>(TimeProvenance::assumed)] += std::max(0.0, t.seconds_per_step - known);
}

}  // namespace

namespace detail {

Workload layer_workload(std::int64_t tokens, std::int64_t doc_len) {
  Workload w;
  w.seq_len = doc_len;
  w.attention_mask = AttentionMask::causal;
  w.attended_keys = (static_cast<double>(doc_len) + 1.0) / 2.0;
  w.training_passes = 3;
  w.tokens_per_step = tokens;
  return w;
}

StepTerms step_terms(const TimeModel& model, const ArchConfig& c, const Workload& w, StepTermsPath path,
                     bool (*timed)(OpKind, const void*), const void* timed_context) {
  const std::vector<Op> ops = layer_ops(c, w);
  StepTerms st;
  const double copy_bytes_per_s = model.profile().peaks.copy_gbytes_per_s * 1e9;
  const StackPlan plan = stack_plan(model);
  st.stack = plan.megatron ? "megatron-core-te" : "pytorch-eager";
  for (const Op& op : ops) {
    if (timed != nullptr && !timed(op.kind, timed_context)) continue;
    OpStepTime t;
    t.kind = op.kind;
    double launches = 0;
    bool from_peaks = false;
    if (stack_drops(plan, op.kind)) continue;  // not run by this stack
    StepQueries q{model, w.tokens_per_step, w.training_passes, &t, &launches, &from_peaks, path, plan};
    if (op_traits(op.kind).fp8_linear) q.gemm_dtype = plan.gemm_dtype;
    if (!time_one_execution(q, op, c, w, copy_bytes_per_s, st)) continue;  // not timed
    add_stack_time(plan, op, c, w, copy_bytes_per_s, q.bytes, path, t, launches);
    // A grouped GEMM that accumulates its weight gradients (above) has no separate gradient pass.
    if (q.bytes.grad_accumulate <= 0) add_gradient_pass(op, w, copy_bytes_per_s, path == StepTermsPath::rows, t);
    const TimeClass cls = step_time_class(op, c, from_peaks);
    st.forward_flops_per_token += op.total_forward_flops();
    st.ops.push_back(make_op_term(op, w, cls, std::move(t), launches));
  }
  return st;
}

}  // namespace detail

double predict_step_seconds(const TimeModel& model, const ArchConfig& c, const Workload& w) {
  const detail::StepTerms terms = detail::step_terms(model, c, w, detail::StepTermsPath::indexed);
  const LayerCorrection& correction = model.layer_correction();
  // predict_step_time()'s sum, term for term in the same order.
  double seconds = 0;
  for (const detail::OpTerm& term : terms.ops) {
    const double op_seconds = term.time.seconds_per_step;
    if (op_seconds <= 0) continue;
    const double launch_s = correction.launch_ms * 1e-3 * term.time.launches_per_step;
    const double factor = correction.factor[static_cast<std::size_t>(term.cls)];
    seconds += factor * op_seconds + launch_s;
  }
  return seconds;
}

StepTime predict_step_time(const TimeModel& model, const ArchConfig& c, const Workload& w) {
  const detail::StepTerms terms = detail::step_terms(model, c, w);
  const LayerCorrection& correction = model.layer_correction();
  const std::int64_t T = w.tokens_per_step;
  StepTime st;
  st.tokens_per_step = T;
  st.stack = terms.stack;
  st.fp8_recipe = model.options().recipe.fp8;
  st.attention_backend = terms.attention_backend;
  st.attention_backend_reason = terms.attention_backend_reason;
  st.layer_corrected = correction.fitted;
  for (const detail::OpTerm& term : terms.ops) {
    OpStepTime t = term.time;
    if (t.seconds_per_step <= 0) continue;
    const double launch_s = correction.launch_ms * 1e-3 * t.launches_per_step;
    const double factor = correction.factor[static_cast<std::size_t>(term.cls)];
    t.seconds_per_step = factor * t.seconds_per_step + launch_s;
    set_op_provenance(t, factor);
    if (correction.fitted && factor == 0) {
      t.note += fmt::format("{}layer correction: factor 0 for its class ({}): the layer rows show no time for it "
                            "beyond the other classes'",
                            t.note.empty() ? "" : "; ", to_string(term.cls));
    }
    st.launch_seconds_per_step += launch_s;
    st.seconds_per_step += t.seconds_per_step;
    for (std::size_t k = 0; k < time_provenance_count; ++k) st.provenance_seconds[k] += t.provenance_seconds[k];
    st.out_of_range = st.out_of_range || t.out_of_range;
    st.by_op.push_back(std::move(t));
  }
  const double forward_flops_per_token = terms.forward_flops_per_token;
  st.seconds_per_token = st.seconds_per_step / static_cast<double>(T);
  st.tokens_per_second = static_cast<double>(T) / st.seconds_per_step;
  // MFU (PaLM, Chowdhery et al. 2022, appendix B): the model's useful FLOPs over the peak, a
  // training step counting 3 forwards (forward + backward, recompute not counted), a forward-only
  // workload (training_passes = 1) one.
  const double useful_passes = static_cast<double>(std::min<std::int64_t>(w.training_passes, 3));
  const CalibrationPeaks& peaks = model.profile().peaks;
  st.mfu_peak_tflops = peaks.bf16_gemm_tflops;
  st.mfu = useful_passes * forward_flops_per_token * static_cast<double>(T) / (st.seconds_per_step * peaks.bf16_gemm_tflops * 1e12);
  if (peaks.datasheet_peak_tflops > 0) {
    st.mfu_datasheet = useful_passes * forward_flops_per_token * static_cast<double>(T) /
                       (st.seconds_per_step * peaks.datasheet_peak_tflops * 1e12);
  }
  return st;
}

}  // namespace budget
