// ArchConfig → the model arguments of Megatron-LM at the flag table's commit d98e8a64, written as a bash
// array file (megatron_model_args_file(), budget/megatron_args.hpp; export --to megatron):
//
//   # comments (target commit, how to use it, defaults left in place, what is not expressed)
//   MODEL_ARGS=(
//     --num-layers 12
//     --moe-layer-freq '([0]*1+[1]*27)'
//   )
//
// `source FILE` then `pretrain_gpt.py "${MODEL_ARGS[@]}"` passes every flag and value as one argv
// word each: the single quotes are bash syntax and never reach Megatron, whose --moe-layer-freq
// pattern parser (_eval_pattern, arguments.py:245) accepts only the characters ,0-9[]()+*. Every
// other value is a bare integer, float or word that needs no quoting.
//
// The flags and where Megatron defines them (megatron/training/arguments.py = A,
// megatron/core/transformer/transformer_config.py = TC; TC fields become flags through
// ArgumentGroupFactory, argument_utils.py:97 and :181: "--" + name with "_" → "-", a False bool a
// store_true flag): the test table tests/unit/export/megatron_flags.hpp, with line numbers.
//
// Besides the shapes, these make Megatron's model count what budget counts (docs/accounting.md):
// --disable-bias-linear (no linear biases; --add-qkv-bias puts back the q/k/v ones),
// --normalization RMSNorm|LayerNorm (one H-vector per norm, or weight and bias),
// --position-embedding-type rope (no learned position table; the default is learned_absolute),
// --swiglu (the gated 3-matrix MLP; without it Megatron's MLP has 2 matrices). With MLA,
// --qk-layernorm builds the norms of the query and KV latents that budget counts
// (gpt_layer_specs.py:104-113: without it they are IdentityOp).

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "budget/text_escape.hpp"

namespace budget {
namespace {

/// "NVIDIA/Megatron-LM d98e8a64": the target the file names (export.hpp's megatron_target_commit).
std::string megatron_target() { return fmt::format("NVIDIA/Megatron-LM {}", megatron_arguments_commit().substr(0, 8)); }

/// Throws budget::Error naming `field` for a feature Megatron-LM's arguments cannot write.
[[noreturn]] void refuse_in_megatron(const ArchConfig& c, const char* field, const std::string& what) {
  throw Error(fmt::format("{} cannot be expressed in Megatron-LM's arguments ({}); export to native or hf instead",
                          what, megatron_target()),
              c.name.empty() ? "<config>" : c.name, field);
}

/// The features Megatron-LM has no argument for, refused by their native field.
void refuse_unexpressed_in_megatron(const ArchConfig& c, RouterScore score) {
  const AttentionConfig& a = c.attention;
  const FfnConfig& f = c.ffn;
  // Megatron's biases: --add-bias-linear (the default) puts a bias on every linear layer (q/k/v,
  // output, MLP, experts); --add-qkv-bias on q/k/v only. Other combinations have no argument.
  const bool all_linear_biases = a.qkv_bias && a.output_bias && f.bias;
  if (!all_linear_biases) {
    if (a.output_bias) refuse_in_megatron(c, "/attention/output_bias", "an output-projection bias without MLP biases");
    if (f.bias) refuse_in_megatron(c, "/ffn/bias", "MLP biases without attention biases");
  }
  if (a.mla && a.qkv_bias) refuse_in_megatron(c, "/attention/qkv_bias", "attention biases with multi-head latent attention");
  if (a.qk_norm == QkNorm::full) refuse_in_megatron(c, "/attention/qk_norm", "q/k norms over the whole query/KV width (full)");
  if (a.mla && a.qk_norm != QkNorm::none) {
    refuse_in_megatron(c, "/attention/qk_norm", "per-head q/k norms with multi-head latent attention");
  }
  if (c.sliding_attention_layers() > 0) refuse_in_megatron(c, "/attention/layer_types", "sliding-window attention layers");
  if (c.lm_head_bias) refuse_in_megatron(c, "/lm_head_bias", "an LM-head bias (Megatron's output layer has none)");
  if (f.router_bias && c.settings.router_score == RouterScore::softmax) {
    // TC:2617: the expert bias needs a sigmoid (or sqrtsoftplus) score function.
    refuse_in_megatron(c, "/ffn/router_bias", "a router expert bias with a softmax router");
  }
  // moe_utils.py:915-928: a sigmoid router always renormalises its top-k (k > 1) weights.
  if (f.is_moe() && f.top_k > 1 && score == RouterScore::sigmoid &&
      c.settings.router_normalize_top_k == false) {
    refuse_in_megatron(c, "/settings/router_normalize_top_k", "a sigmoid router without renormalised top-k weights");
  }
}

/// "1e-06" and "1000000": Python's float() and int() read them as the intended value.
std::string number_text(double value) { return fmt::format("{}", value); }

/// Throws budget::Error naming /settings/rope_scaling for rope scaling Megatron-LM cannot write.
[[noreturn]] void refuse_megatron_rope_scaling(const ArchConfig& c, const std::string& what) {
  refuse_in_megatron(c, "/settings/rope_scaling", what);
}

/// Appends the argument "<flag> <value>" to `args`.
void push_megatron_arg(std::vector<std::string>& args, const std::string& flag, const std::string& value) {
  args.push_back(flag + " " + value);
}

/// original_max_position_embeddings as a double, for the checks of a fixed Megatron value.
std::optional<double> original_max_positions_of(const RopeScaling& r) {
  std::optional<double> original;
  if (r.original_max_position_embeddings) original = static_cast<double>(*r.original_max_position_embeddings);
  return original;
}

/// Refuses the scaling types Megatron-LM has no argument for (dynamic, longrope), then any but
/// yarn with multi-head latent attention.
void refuse_megatron_rope_scaling_type(const ArchConfig& c, const RopeScaling& r, bool mla) {
  if (r.type != RopeScalingType::yarn && r.type != RopeScalingType::llama3 && r.type != RopeScalingType::linear) {
    refuse_megatron_rope_scaling(c, fmt::format("{} rope scaling", to_string(r.type)));
  }
  if (mla && r.type != RopeScalingType::yarn) {
    refuse_megatron_rope_scaling(c, fmt::format("{} rope scaling with multi-head latent attention (its rope types are "
                                                "rope and yarn)",
                                                to_string(r.type)));
  }
}

/// linear scaling: --rotary-seq-len-interpolation-factor, an int (refused otherwise).
void write_megatron_linear_rope_scaling(const ArchConfig& c, const RopeScaling& r, std::vector<std::string>& args) {
  if (*r.factor != std::floor(*r.factor) || *r.factor < 1.0 || *r.factor > 1e9) {
    refuse_megatron_rope_scaling(c, fmt::format("linear rope scaling by the non-integer factor {} (--rotary-seq-len-"
                                                "interpolation-factor takes an int)",
                                                number_text(*r.factor)));
  }
  push_megatron_arg(args, "--position-embedding-type", "rope");
  push_megatron_arg(args, "--rotary-seq-len-interpolation-factor",
                    std::to_string(static_cast<std::int64_t>(*r.factor)));
}

/// A llama3 parameter RotaryEmbedding._apply_scaling fixes at `megatron`: stated in `defaults`
/// when the config gives none, refused when it gives another value.
void check_megatron_llama3_fixed(const ArchConfig& c, const char* name, std::optional<double> value, double megatron,
                                 std::vector<std::string>& defaults) {
  if (!value) {
    defaults.push_back(fmt::format("llama3 rope scaling {} {} (RotaryEmbedding._apply_scaling; the config gives "
                                   "none)",
                                   name, number_text(megatron)));
  } else if (*value != megatron) {
    refuse_megatron_rope_scaling(c, fmt::format("llama3 rope scaling with {} {} (Megatron's RotaryEmbedding fixes it "
                                                "at {}, rotary_pos_embedding.py:93-98)",
                                                name, number_text(*value), number_text(megatron)));
  }
}

/// llama3 scaling (GQA): --use-rope-scaling --rope-scaling-factor, the fixed parameters checked.
void write_megatron_llama3_rope_scaling(const ArchConfig& c, const RopeScaling& r, std::vector<std::string>& args,
                                        std::vector<std::string>& defaults) {
  check_megatron_llama3_fixed(c, "low_freq_factor", r.low_freq_factor, 1.0, defaults);
  check_megatron_llama3_fixed(c, "high_freq_factor", r.high_freq_factor, 4.0, defaults);
  check_megatron_llama3_fixed(c, "original_max_position_embeddings", original_max_positions_of(r), 8192.0, defaults);
  push_megatron_arg(args, "--position-embedding-type", "rope");
  args.emplace_back("--use-rope-scaling");
  push_megatron_arg(args, "--rope-scaling-factor", number_text(*r.factor));
}

/// An MLATransformerConfig yarn field without an argument (TC:3318-3324), fixed at `megatron`:
/// stated in `defaults` when the config gives none, refused when it gives another value.
void check_megatron_mla_yarn_fixed(const ArchConfig& c, const char* name, std::optional<double> value,
                                   double megatron, std::vector<std::string>& defaults) {
  if (!value) {
    defaults.push_back(fmt::format("MLATransformerConfig.{} {} (yarn; the config gives none)", name,
                                   number_text(megatron)));
  } else if (*value != megatron) {
    refuse_megatron_rope_scaling(c, fmt::format("yarn rope scaling with {} {} (Megatron's MLA takes it from "
                                                "MLATransformerConfig.{} = {}, which has no argument: the "
                                                "--yarn-* arguments set non-MLA models only, argument_utils.py:"
                                                "397-399; transformer_config.py:3318-3324)",
                                                name, number_text(*value), name, number_text(megatron)));
  }
}

/// yarn with MLA: --rope-type yarn; the fixed MLATransformerConfig fields checked.
void write_megatron_mla_yarn_rope(const ArchConfig& c, const RopeScaling& r, std::vector<std::string>& args,
                                  std::vector<std::string>& defaults) {
  check_megatron_mla_yarn_fixed(c, "original_max_position_embeddings", original_max_positions_of(r), 4096.0,
                                defaults);
  check_megatron_mla_yarn_fixed(c, "beta_fast", r.beta_fast, 32.0, defaults);
  check_megatron_mla_yarn_fixed(c, "beta_slow", r.beta_slow, 1.0, defaults);
  push_megatron_arg(args, "--position-embedding-type", "rope");
  push_megatron_arg(args, "--rope-type", "yarn");
}

/// yarn with GQA: --position-embedding-type yarn and the --yarn-* arguments the config gives.
void write_megatron_gqa_yarn_rope(const ArchConfig& c, const RopeScaling& r, std::vector<std::string>& args,
                                  std::vector<std::string>& defaults) {
  if (c.mtp_layers > 0) {
    // validate_args: MTP only with rope or no position embedding (A:882-886).
    refuse_megatron_rope_scaling(c, "yarn rope scaling with multi-token prediction without MLA (Megatron's MTP takes "
                                    "--position-embedding-type rope or none, arguments.py:882-886)");
  }
  push_megatron_arg(args, "--position-embedding-type", "yarn");
  if (r.original_max_position_embeddings) {
    push_megatron_arg(args, "--yarn-original-max-position-embeddings",
                      std::to_string(*r.original_max_position_embeddings));
  } else {
    defaults.push_back("--yarn-original-max-position-embeddings 4096 (the config gives none)");
  }
  if (r.beta_fast) push_megatron_arg(args, "--yarn-beta-fast", number_text(*r.beta_fast));
  if (r.beta_slow) push_megatron_arg(args, "--yarn-beta-slow", number_text(*r.beta_slow));
  if (!r.beta_fast) defaults.push_back("--yarn-beta-fast 32 (the config gives none)");
  if (!r.beta_slow) defaults.push_back("--yarn-beta-slow 1 (the config gives none)");
}

/// yarn: the MLA or GQA position arguments, then the factor and the mscales; a yarn
/// attention_factor is refused (Megatron derives it).
void write_megatron_yarn_rope_scaling(const ArchConfig& c, const RopeScaling& r, bool mla,
                                      std::vector<std::string>& args, std::vector<std::string>& defaults) {
  if (r.attention_factor) {
    refuse_megatron_rope_scaling(c, fmt::format("a yarn attention_factor ({}; Megatron derives it from mscale and "
                                                "mscale_all_dim)",
                                                number_text(*r.attention_factor)));
  }
  if (mla) {
    write_megatron_mla_yarn_rope(c, r, args, defaults);
  } else {
    write_megatron_gqa_yarn_rope(c, r, args, defaults);
  }
  push_megatron_arg(args, "--rotary-scaling-factor", number_text(*r.factor));
  if (r.mscale) push_megatron_arg(args, "--mscale", number_text(*r.mscale));
  if (r.mscale_all_dim) push_megatron_arg(args, "--mscale-all-dim", number_text(*r.mscale_all_dim));
  if (!r.mscale || !r.mscale_all_dim) {
    defaults.push_back("--mscale 1.0 --mscale-all-dim 0.0 where the config gives none (attention scale "
                       "0.1 ln(factor) + 1, as transformers' yarn default)");
  }
}

/// settings.rope_scaling as Megatron-LM's arguments at d98e8a64 (A = arguments.py):
/// - MLA, yarn: --rope-type yarn (A:2906), --rotary-scaling-factor (A:3558), --mscale (A:3560),
///   --mscale-all-dim (A:3562). MLATransformerConfig's original_max_position_embeddings (4096),
///   beta_fast (32) and beta_slow (1) (TC:3318-3324) have no argument: another value is refused.
/// - GQA, yarn: --position-embedding-type yarn (A:2397), --rotary-scaling-factor,
///   --yarn-original-max-position-embeddings, --yarn-beta-fast, --yarn-beta-slow (A:2400-2404),
///   --mscale, --mscale-all-dim (mapped to config.yarn_* by argument_utils.py:384-413).
/// - GQA, llama3: --use-rope-scaling --rope-scaling-factor (A:2424-2426); RotaryEmbedding's
///   _apply_scaling fixes low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings
///   8192 (rotary_pos_embedding.py:93-98): another value is refused.
/// - GQA, linear with an integer factor: --rotary-seq-len-interpolation-factor (A:2422, type=int).
/// - dynamic and longrope: no argument, refused; so is a yarn attention_factor.
/// Absent parameters leave Megatron's default, stated in `defaults`. Megatron's concentration
/// factor with its defaults mscale 1, mscale_all_dim 0 is 0.1·ln(factor) + 1
/// (yarn_rotary_pos_embedding.py:275-294), transformers' default for yarn without mscale.
void write_rope_scaling(const ArchConfig& c, std::vector<std::string>& args, std::vector<std::string>& defaults) {
  const std::optional<RopeScaling>& scaling = c.settings.rope_scaling;
  const bool mla = c.attention.mla.has_value();
  if (!scaling) {
    push_megatron_arg(args, "--position-embedding-type", "rope");
    if (mla) push_megatron_arg(args, "--rope-type", "rope");  // MLA's default rope type is yarn (TC:3306)
    return;
  }
  const RopeScaling& r = *scaling;
  refuse_megatron_rope_scaling_type(c, r, mla);
  if (r.type == RopeScalingType::linear) {
    write_megatron_linear_rope_scaling(c, r, args);
  } else if (r.type == RopeScalingType::llama3) {
    write_megatron_llama3_rope_scaling(c, r, args, defaults);
  } else {
    write_megatron_yarn_rope_scaling(c, r, mla, args, defaults);
  }
}

/// The argument lines of the MODEL_ARGS array, in order, and the Megatron defaults the export
/// leaves in place (written as comments).
struct MegatronArgList {
  RouterScore router_score = RouterScore::softmax;  ///< the router score function written
  std::vector<std::string> args;
  std::vector<std::string> defaults;
  /// Appends the line "FLAG VALUE".
  template <typename Value>
  void add(const std::string& flag, const Value& value) {
    args.push_back(fmt::format("{} {}", flag, value));
  }
};

/// Attention: heads, then MLA's latent ranks and head dims, or GQA's query groups and head dim.
void write_megatron_attention(const ArchConfig& c, MegatronArgList& list) {
  const AttentionConfig& a = c.attention;
  list.add("--num-attention-heads", a.num_heads);
  if (a.mla) {
    list.args.emplace_back("--multi-latent-attention");
    if (a.mla->q_lora_rank > 0) list.add("--q-lora-rank", a.mla->q_lora_rank);  // absent: None, no query latent
    list.add("--kv-lora-rank", a.mla->kv_lora_rank);
    list.add("--qk-head-dim", a.mla->qk_nope_head_dim);  // Megatron: q_head_dim = qk_head_dim + qk_pos_emb_head_dim
    list.add("--qk-pos-emb-head-dim", a.mla->qk_rope_head_dim);
    list.add("--v-head-dim", a.mla->v_head_dim);
    list.args.emplace_back("--qk-layernorm");  // the latents' norms (see the file comment)
    // MLA reads no kv_channels; validate_args derives it as hidden/heads and asserts divisibility.
    if (c.hidden_size % a.num_heads != 0) list.add("--kv-channels", a.mla->v_head_dim);
  } else {
    if (a.num_kv_heads != a.num_heads) {
      list.args.emplace_back("--group-query-attention");
      list.add("--num-query-groups", a.num_kv_heads);
    }
    list.add("--kv-channels", a.head_dim);
    // Megatron's --qk-layernorm normalises each head's queries and keys (one head_dim vector each).
    if (a.qk_norm == QkNorm::per_head) list.args.emplace_back("--qk-layernorm");
  }
}

/// The gated MLP, the linear biases, the norm kind and its epsilon.
void write_megatron_mlp_bias_norm(const ArchConfig& c, MegatronArgList& list) {
  const AttentionConfig& a = c.attention;
  const FfnConfig& f = c.ffn;
  if (f.gated) list.args.emplace_back("--swiglu");
  if (!(a.qkv_bias && a.output_bias && f.bias)) {
    list.args.emplace_back("--disable-bias-linear");
    if (a.qkv_bias) list.args.emplace_back("--add-qkv-bias");
  }
  list.add("--normalization", c.norm == NormKind::layernorm ? "LayerNorm" : "RMSNorm");
  if (c.settings.norm_epsilon) {
    list.add("--norm-epsilon", number_text(*c.settings.norm_epsilon));
  } else {
    list.defaults.push_back("--norm-epsilon 1e-05 (the config gives no norm epsilon)");
  }
}

/// --rotary-base, which is type=int (arguments.py:2418): a rope_theta that is not an integer (or
/// above 9e15) is refused at /settings/rope_theta.
void write_megatron_rotary_base(const ArchConfig& c, const std::string& source, MegatronArgList& list) {
  const ModelSettings& s = c.settings;
  if (s.rope_theta) {
    if (*s.rope_theta != std::floor(*s.rope_theta) || *s.rope_theta > 9.0e15) {
      throw Error(fmt::format("rope_theta {} is not an integer, and Megatron-LM's --rotary-base takes an int",
                              number_text(*s.rope_theta)),
                  source, "/settings/rope_theta");
    }
    list.add("--rotary-base", static_cast<std::int64_t>(*s.rope_theta));
  } else {
    list.defaults.push_back("--rotary-base 10000 (the config gives no rope_theta)");
  }
}

/// Tied embeddings and the vocabulary (a vocabulary of 0 is reported as not expressed).
void write_megatron_embeddings(const ArchConfig& c, MegatronArgList& list, std::vector<std::string>& not_expressed) {
  if (!c.tie_embeddings) list.args.emplace_back("--untie-embeddings-and-output-weights");
  if (c.vocab_size > 0) {
    list.add("--vocab-size", c.vocab_size);
    // Megatron pads the vocabulary to a multiple of --make-vocab-size-divisible-by × TP
    // (arguments.py:2441, default 128); budget counts the vocabulary as given.
    if (c.vocab_size % 128 != 0) {
      list.defaults.push_back(fmt::format("--make-vocab-size-divisible-by 128 (Megatron pads the vocabulary of {} "
                                          "to a multiple of 128 x TP; budget counts {})",
                                          c.vocab_size, c.vocab_size));
    }
  } else {
    not_expressed.push_back("vocab_size is 0 (embeddings not modelled): add --vocab-size or a tokenizer");
  }
}

/// --seq-length and --max-position-embeddings. validate_args requires the latter
/// (arguments.py:1314) and asserts it is at least --seq-length (arguments.py:1354): a shorter one
/// is refused at /settings/max_position_embeddings.
void write_megatron_sequence(const ArchConfig& c, std::int64_t seq_length, const std::string& source,
                             MegatronArgList& list) {
  const std::int64_t max_positions =
      c.settings.max_position_embeddings > 0 ? c.settings.max_position_embeddings : seq_length;
  if (max_positions < seq_length) {
    throw Error(fmt::format("the training sequence length {} exceeds max_position_embeddings {}, which Megatron-LM "
                            "refuses (max_position_embeddings must be >= seq_length); train shorter sequences or "
                            "raise max_position_embeddings",
                            seq_length, max_positions),
                source, "/settings/max_position_embeddings");
  }
  list.add("--seq-length", seq_length);
  list.add("--max-position-embeddings", max_positions);
}

/// DeepSeek's routed_scaling_factor and expert groups (TC:804 --moe-router-topk-scaling-factor:
/// the top-k weights times it after any renormalisation, moe_utils.py:933-934, as transformers'
/// DeepSeek-V3 router; TC:780 --moe-router-num-groups and TC:796 --moe-router-group-topk, checked
/// at TC:2671-2687). Megatron scores a group by the sum of its top_k / group_topk highest router
/// scores (group_limited_topk, moe_utils.py:710-713): the sigmoid scores plus the expert bias, a
/// softmax router's probabilities with --moe-router-pre-softmax, its logits otherwise
/// (moe_utils.py:900-926). The config's groups are written where that is its own rule (a sigmoid or
/// pre-softmax router whose top_k / top_groups is its score_top: DeepSeek-V3's 8 / 4 = 2), and
/// stated as not expressed otherwise (DeepSeek-V2's highest score per group).
void write_megatron_router_groups(const ArchConfig& c, MegatronArgList& list, std::vector<std::string>& not_expressed) {
  const ModelSettings& s = c.settings;
  if (s.router_scaling_factor) list.add("--moe-router-topk-scaling-factor", *s.router_scaling_factor);
  if (!s.router_groups) return;
  const RouterGroups& g = *s.router_groups;
  // What Megatron groups on: the sigmoid scores; a softmax router's probabilities under
  // --moe-router-pre-softmax (written for unrenormalised weights), its logits otherwise.
  const RouterScore score = list.router_score;
  const bool pre_softmax = score == RouterScore::softmax && s.router_normalize_top_k == false;
  const char* grouped_on = score == RouterScore::sigmoid ? "sigmoid scores" : pre_softmax ? "softmax scores" : "router logits";
  if ((score == RouterScore::sigmoid || pre_softmax) && c.ffn.top_k / g.top_groups == g.score_top) {
    list.add("--moe-router-num-groups", g.groups);
    list.add("--moe-router-group-topk", g.top_groups);
    return;
  }
  not_expressed.push_back(fmt::format(
      "the expert groups ({} groups, {} a token, each scored by the sum of its {} highest {} scores): Megatron-LM "
      "scores a group by the sum of its top_k / group_topk = {} highest {}; the model is written ungrouped",
      g.groups, g.top_groups, g.score_top, to_string(score), c.ffn.top_k / g.top_groups, grouped_on));
}

/// The MoE arguments (none for a dense model): experts, shared experts, dense layers, router.
void write_megatron_moe(const ArchConfig& c, MegatronArgList& list, std::vector<std::string>& not_expressed) {
  const FfnConfig& f = c.ffn;
  if (!f.is_moe()) return;
  list.add("--num-experts", f.num_experts);
  list.add("--moe-router-topk", f.top_k);
  list.add("--moe-ffn-hidden-size", f.expert_dim);
  // Megatron's shared experts are one MLP of this total width (n experts of width w ≡ one of n·w).
  if (f.num_shared_experts > 0) {
    list.add("--moe-shared-expert-intermediate-size", f.num_shared_experts * f.shared_expert_dim);
    if (f.shared_expert_gate) list.args.emplace_back("--moe-shared-expert-gate");
  }
  if (f.first_dense_layers > 0) {
    // Grammar of _eval_pattern: only , digits [ ] ( ) + * (arguments.py:250).
    list.add("--moe-layer-freq",
             fmt::format("'([0]*{}+[1]*{})'", f.first_dense_layers, c.num_layers - f.first_dense_layers));
  }
  const RouterScore score = list.router_score;
  list.add("--moe-router-score-function", to_string(score));
  if (!c.settings.router_score) {
    not_expressed.push_back(fmt::format("the config gives no router score function: {} is written{}",
                                        to_string(score), f.router_bias ? " (the expert-bias router)" : ""));
  }
  // A softmax after the top-k selection (Megatron's default, moe_utils.py:909-914) is a softmax
  // over the chosen experts: renormalised weights. --moe-router-pre-softmax scores all experts
  // first and keeps their unrenormalised top-k weights.
  if (score == RouterScore::softmax && c.settings.router_normalize_top_k == false) {
    list.args.emplace_back("--moe-router-pre-softmax");
  }
  if (f.router_bias) list.args.emplace_back("--moe-router-enable-expert-bias");
  write_megatron_router_groups(c, list, not_expressed);
}

/// Every line's flag is one of Megatron's at the target commit: the library's one table of
/// Megatron-LM arguments (budget/megatron_args.hpp), shared with the --megatron-args reader.
void check_megatron_lines(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) require_megatron_argument(line.substr(0, line.find(' ')));
}

/// The bash array file: header comments (target, use, defaults left, not expressed), then MODEL_ARGS
/// and, when a layout is given, TRAINING_ARGS.
std::string megatron_args_file(const ArchConfig& c, const MegatronArgList& list,
                               const std::vector<std::string>& not_expressed,
                               const std::vector<std::string>& training_args) {
  check_megatron_lines(list.args);
  check_megatron_lines(training_args);
  // Every comment line's text from data through comment_text(): the file is `source`d, so a newline
  // in a name would start a bash command.
  std::string out = fmt::format("# Megatron-LM model arguments for {} (budget-match export; docs/export.md)\n",
                                comment_text(c.name.empty() ? "the config" : c.name));
  out += fmt::format("# Target: {} (megatron/training/arguments.py)\n", megatron_target());
  out += "# Use: source this file, then: torchrun ... pretrain_gpt.py \"${MODEL_ARGS[@]}\" <data, training and "
         "parallelism arguments>\n";
  for (const auto& d : list.defaults) out += "# Megatron default left in place: " + comment_text(d) + "\n";
  for (const auto& note : not_expressed) out += "# NOT EXPRESSED: " + comment_text(note) + "\n";
  out += "MODEL_ARGS=(\n";
  for (const auto& line : list.args) out += "  " + line + "\n";
  out += ")\n";
  if (!training_args.empty()) {
    out += "# The training run (parallel layout, batch, recompute, precision, overlap); with MODEL_ARGS it gives "
           "budget-match layout --megatron-args this file's layout back\n";
    out += "TRAINING_ARGS=(\n";
    for (const auto& line : training_args) {
      const std::string flag = line.substr(0, line.find(' '));
      const bool in_model = std::any_of(list.args.begin(), list.args.end(), [&](const std::string& m) {
        return m.substr(0, m.find(' ')) == flag;
      });
      if (!in_model) out += "  " + line + "\n";  // e.g. --seq-length, written once in MODEL_ARGS
    }
    out += ")\n";
  }
  return out;
}

}  // namespace

std::string megatron_model_args_file(const ArchConfig& c, const MegatronModelArgsOptions& options,
                                    std::vector<std::string>& not_expressed) {
  refuse_unexpressed_in_megatron(c, options.router_score);
  const FfnConfig& f = c.ffn;
  const std::string source = c.name.empty() ? "<config>" : c.name;
  MegatronArgList list;
  list.router_score = options.router_score;
  list.add("--num-layers", c.num_layers);
  list.add("--hidden-size", c.hidden_size);
  // Dense layers' width; MoE layers use --moe-ffn-hidden-size. A pure MoE model has no dense
  // layer, and Megatron still derives a value (validate_args): the expert width is written.
  list.add("--ffn-hidden-size", f.is_moe() && f.first_dense_layers == 0 ? f.expert_dim : f.dense_dim);
  write_megatron_attention(c, list);
  write_megatron_mlp_bias_norm(c, list);
  write_rope_scaling(c, list.args, list.defaults);
  write_megatron_rotary_base(c, source, list);
  write_megatron_embeddings(c, list, not_expressed);
  write_megatron_sequence(c, options.seq_length, source, list);
  write_megatron_moe(c, list, not_expressed);
  if (c.mtp_layers > 0) list.add("--mtp-num-layers", c.mtp_layers);
  if (c.loop) {
    not_expressed.push_back(fmt::format(
        "the loop ({}): Megatron-LM has no weight-shared layer loop; these arguments build the {} stored layers "
        "unlooped, so its FLOPs and KV cache are those of {} layers, not {}",
        options.loop_description, c.num_layers, c.num_layers, c.executed_layers()));
  }
  return megatron_args_file(c, list, not_expressed, options.training_args);
}

}  // namespace budget
