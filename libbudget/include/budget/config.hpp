#pragma once
/// \file
/// ArchConfig: the architecture of a (possibly looped) decoder-only MoE transformer, and its
/// validation. Field meanings, units and defaults are documented in docs/config.md.
///
/// Thread safety: validate(), validation_error(), centred_loop() and the ArchConfig member functions are reentrant:
/// concurrent calls are safe, including on one shared const config.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace budget {

/// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2). Queries: x·W_dq (H × q_lora_rank), RMSNorm,
/// ·W_uq (q_lora_rank × heads·(qk_nope + qk_rope)); without q_lora_rank (0) one H × heads·(qk_nope +
/// qk_rope) matrix. Keys and values: x·W_dkv (H × (kv_lora_rank + qk_rope)) gives the latent c_kv and
/// the shared rotary key; RMSNorm(c_kv)·W_ukv (kv_lora_rank × heads·(qk_nope + v_head_dim)). Output:
/// heads·v_head_dim × H. Served in the absorbed form, the KV cache holds c_kv and the rotary key:
/// kv_lora_rank + qk_rope_head_dim elements per layer and token (docs/accounting.md, "MLA").
struct MlaConfig {
  std::int64_t q_lora_rank = 0;       ///< 0: queries projected directly from the hidden state
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;  ///< per-head query/key dims without rotary embedding
  std::int64_t qk_rope_head_dim = 0;  ///< per-head query dims with rotary embedding (one shared key)
  std::int64_t v_head_dim = 0;

  std::int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const MlaConfig& o) const {  // written out: public headers stay C++17
    return q_lora_rank == o.q_lora_rank && kv_lora_rank == o.kv_lora_rank &&
           qk_nope_head_dim == o.qk_nope_head_dim && qk_rope_head_dim == o.qk_rope_head_dim &&
           v_head_dim == o.v_head_dim;
  }
};

/// Query/key normalisation weights: none; one head_dim vector each for queries and keys (Qwen3:
/// 2·head_dim per layer); or one vector over the whole query width and one over the whole KV width
/// (OLMoE: q + kv per layer).
enum class QkNorm { none, per_head, full };

/// Attention kind of one layer: full causal attention (its KV cache grows with the context) or
/// sliding-window attention over at most `sliding_window` keys (its cache is bounded by the window).
enum class LayerAttention { full, sliding };

std::string_view to_string(QkNorm norm);
std::string_view to_string(LayerAttention kind);

/// Grouped-query attention, or multi-head latent attention when `mla` is set. Query width
/// q = num_heads·head_dim, KV width kv = num_kv_heads·head_dim. The query width need not equal
/// hidden_size. With MLA, head_dim = qk_nope + qk_rope and num_kv_heads = 1: in the absorbed form
/// every query head attends to one shared latent (multi-query attention).
struct AttentionConfig {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t num_kv_heads = 0;
  std::optional<MlaConfig> mla = std::nullopt;  ///< multi-head latent attention
  bool qkv_bias = false;                        ///< biases on the query, key and value projections
  bool output_bias = false;                     ///< bias on the output projection
  QkNorm qk_norm = QkNorm::none;
  std::int64_t sliding_window = 0;              ///< keys a sliding-window layer attends to (0: none)
  /// Per physical layer: full or sliding. Empty: every layer full.
  std::vector<LayerAttention> layer_types = {};

  std::int64_t query_width() const { return num_heads * head_dim; }
  std::int64_t kv_width() const { return num_kv_heads * head_dim; }
  /// Width of the attention output (the values of all heads): heads·v_head_dim for MLA, else q.
  std::int64_t value_width() const { return mla ? num_heads * mla->v_head_dim : query_width(); }
  /// KV-cache elements one layer stores per token: 2·kv (K and V) for GQA, kv_lora_rank +
  /// qk_rope_head_dim for MLA (absorbed form).
  std::int64_t kv_elements_per_layer() const {
    return mla ? mla->kv_lora_rank + mla->qk_rope_head_dim : 2 * kv_width();
  }
  /// Query/key-norm weights per layer.
  std::int64_t qk_norm_params() const {
    return qk_norm == QkNorm::per_head ? 2 * head_dim : qk_norm == QkNorm::full ? query_width() + kv_width() : 0;
  }
};

/// The feed-forward block. A layer is MoE when num_experts > 0 and it is not one of the first
/// `first_dense_layers` layers; otherwise it is a dense FFN of width dense_dim. An expert (routed
/// or shared) and a dense FFN are MLPs with (gated ? 3 : 2) weight matrices of hidden × width.
struct FfnConfig {
  std::int64_t num_experts = 0;         ///< routed experts per MoE layer (0: dense model)
  std::int64_t top_k = 0;               ///< routed experts each token uses
  std::int64_t expert_dim = 0;          ///< routed expert width
  bool gated = true;                    ///< SwiGLU-style (3 matrices) or plain (2)
  /// Biases on every MLP matrix (dense, routed and shared): (gated ? 2 : 1)·width + H per MLP.
  bool bias = false;
  bool router_bias = false;             ///< an E-vector per MoE layer (DeepSeek-V3 e_score_correction_bias)
  bool shared_expert_gate = false;      ///< an H → 1 sigmoid gate on the shared experts (Qwen-MoE)
  std::int64_t num_shared_experts = 0;  ///< always-active experts per MoE layer
  std::int64_t shared_expert_dim = 0;   ///< width of each shared expert
  std::int64_t first_dense_layers = 0;  ///< leading layers with a dense FFN instead of MoE
  std::int64_t dense_dim = 0;           ///< dense FFN width (dense layers / dense models)

  bool is_moe() const { return num_experts > 0; }
  std::int64_t matrices_per_mlp() const { return gated ? 3 : 2; }
  /// Bias parameters of one MLP of `width` (0 without biases).
  std::int64_t mlp_bias_params(std::int64_t hidden, std::int64_t width) const {
    return bias ? (gated ? 2 : 1) * width + hidden : 0;
  }
};

/// Layers [first, last] (1-based, inclusive) run `repeats` times in a row with shared weights.
struct LoopConfig {
  std::int64_t first = 1;
  std::int64_t last = 1;
  std::int64_t repeats = 1;

  std::int64_t span() const { return last - first + 1; }
  /// Executed layers added by the loop: (repeats − 1)·span.
  std::int64_t extra_executed_layers() const { return (repeats - 1) * span(); }
};

/// Normalisation layers: RMSNorm (a weight vector) or LayerNorm (weight and bias).
enum class NormKind { rmsnorm, layernorm };
std::string_view to_string(NormKind kind);

/// How the router turns its logits into the weights of the chosen experts: a softmax or a sigmoid
/// of each logit (DeepSeek-V3, Kimi-K2).
enum class RouterScore { softmax, sigmoid };
std::string_view to_string(RouterScore score);

/// The RoPE frequency rescaling of a long-context model, as transformers' `rope_scaling` names it
/// (transformers/modeling_rope_utils.py, ROPE_INIT_FUNCTIONS): `linear` (positions divided by
/// `factor`), `dynamic` (NTK-aware, base grown with the sequence), `yarn` (Peng et al. 2023,
/// arXiv:2309.00071: frequencies between the beta_fast and beta_slow rotations interpolated by
/// `factor`; DeepSeek-V3 and Kimi-K2 add mscale / mscale_all_dim to the attention scale), `llama3`
/// (Llama-3.1: wavelengths above original/low_freq_factor divided by `factor`, below
/// original/high_freq_factor kept, smoothed between), `longrope` (Phi-3: one factor per frequency,
/// short_factor up to original_max_position_embeddings, long_factor beyond).
enum class RopeScalingType { linear, dynamic, yarn, llama3, longrope };
std::string_view to_string(RopeScalingType type);

/// `rope_scaling`: its type and the parameters the file gives (absent ones stay unset: each
/// framework has its own default, which an export states).
struct RopeScaling {
  RopeScalingType type = RopeScalingType::linear;
  std::optional<double> factor = std::nullopt;                               ///< every type but longrope
  std::optional<std::int64_t> original_max_position_embeddings = std::nullopt;  ///< yarn, llama3, longrope, dynamic
  std::optional<double> beta_fast = std::nullopt;         ///< yarn
  std::optional<double> beta_slow = std::nullopt;         ///< yarn
  std::optional<double> mscale = std::nullopt;            ///< yarn (DeepSeek)
  std::optional<double> mscale_all_dim = std::nullopt;    ///< yarn (DeepSeek)
  std::optional<double> attention_factor = std::nullopt;  ///< yarn, longrope
  std::optional<double> low_freq_factor = std::nullopt;   ///< llama3
  std::optional<double> high_freq_factor = std::nullopt;  ///< llama3
  std::vector<double> short_factor = {};                  ///< longrope: one per rotary frequency
  std::vector<double> long_factor = {};                   ///< longrope

  bool operator==(const RopeScaling& o) const {
    return type == o.type && factor == o.factor &&
           original_max_position_embeddings == o.original_max_position_embeddings && beta_fast == o.beta_fast &&
           beta_slow == o.beta_slow && mscale == o.mscale && mscale_all_dim == o.mscale_all_dim &&
           attention_factor == o.attention_factor && low_freq_factor == o.low_freq_factor &&
           high_freq_factor == o.high_freq_factor && short_factor == o.short_factor && long_factor == o.long_factor;
  }
  bool operator!=(const RopeScaling& o) const { return !(*this == o); }
};

/// Group-limited routing (DeepSeek's `n_group`, `topk_group`): the routed experts split into
/// `groups` equal groups; a token's top_k experts are chosen among the experts of the `top_groups`
/// groups of highest score, a group's score being the sum of its `score_top` highest expert scores
/// (DeepSeek-V3 and Kimi-K2: 2, transformers' modeling_deepseek_v3 `topk(2).sum`; DeepSeek-V2's
/// `group_limited_greedy`: 1, the group's highest score). Changes which experts a token uses, not
/// how many: no budget depends on it.
struct RouterGroups {
  std::int64_t groups = 0;
  std::int64_t top_groups = 0;
  std::int64_t score_top = 0;
  bool operator==(const RouterGroups& o) const {
    return groups == o.groups && top_groups == o.top_groups && score_top == o.score_top;
  }
  bool operator!=(const RouterGroups& o) const { return !(*this == o); }
  /// The groups split `ffn`'s routed experts equally, hold its top_k, and score_top fits a group
  /// (what validate() checks of settings.router_groups).
  bool fits(const FfnConfig& ffn) const;
};

/// Settings a trainer needs to build the same model that size no weight and change no budget
/// (docs/config.md, "settings"). Each is optional: absent means the input did not say, and an
/// export then states the trainer's default it leaves in place. The accounting never reads them.
struct ModelSettings {
  std::optional<double> rope_theta = std::nullopt;     ///< rotary base (HF rope_theta)
  std::optional<double> norm_epsilon = std::nullopt;   ///< epsilon of every norm (HF rms_norm_eps)
  std::int64_t max_position_embeddings = 0;            ///< longest context trained for (0: not given)
  std::optional<RouterScore> router_score = std::nullopt;
  /// Top-k weights renormalised to sum to 1 (HF norm_topk_prob; a softmax over the top-k logits).
  std::optional<bool> router_normalize_top_k = std::nullopt;
  std::optional<RopeScaling> rope_scaling = std::nullopt;  ///< absent: unscaled RoPE (or not said)
  /// The routed experts' weights multiplied by this after the top-k (DeepSeek's
  /// routed_scaling_factor); absent: 1, no scaling.
  std::optional<double> router_scaling_factor = std::nullopt;
  std::optional<RouterGroups> router_groups = std::nullopt;  ///< absent: every routed expert a candidate

  bool operator==(const ModelSettings& o) const {
    return rope_theta == o.rope_theta && norm_epsilon == o.norm_epsilon &&
           max_position_embeddings == o.max_position_embeddings && router_score == o.router_score &&
           router_normalize_top_k == o.router_normalize_top_k && rope_scaling == o.rope_scaling &&
           router_scaling_factor == o.router_scaling_factor && router_groups == o.router_groups;
  }
};

struct ArchConfig {
  std::string name;
  std::int64_t hidden_size = 0;
  std::int64_t num_layers = 0;            ///< physical layers (distinct weights)
  std::int64_t vocab_size = 0;            ///< 0: embedding and LM head not modelled
  bool tie_embeddings = false;            ///< LM head shares the embedding matrix
  bool lm_head_bias = false;              ///< a V-vector bias on the LM head (Phi-3.5-MoE)
  NormKind norm = NormKind::rmsnorm;      ///< every norm of the model (per layer, final, MTP)
  AttentionConfig attention;
  FfnConfig ffn;
  /// Multi-token-prediction modules (DeepSeek-V3): each one decoder layer of the main stack's last
  /// kind plus a 2H × H projection and three norms; reported apart from the main budgets.
  std::int64_t mtp_layers = 0;
  std::optional<LoopConfig> loop = std::nullopt;  ///< absent: unlooped
  ModelSettings settings = {};                     ///< change no budget (exports write them)
  /// What reading the config took that the file did not say (a Hugging Face key absent and taken
  /// at its transformers default, a transformers alias read as the family's key): one line each,
  /// shown by the CLI with the config and in JSON `notes`. Empty for native configs. Counts never
  /// depend on it.
  std::vector<std::string> notes = {};

  /// How many times physical layer `layer` (1-based) is executed per token.
  std::int64_t executions_of_layer(std::int64_t layer) const;
  /// Executed ("effective") depth: num_layers + (repeats − 1)·span.
  std::int64_t executed_layers() const;
  /// Layers with a dense FFN (all of them for a dense model).
  std::int64_t dense_ffn_layers() const;
  /// Executions of the dense-FFN layers (the first dense_ffn_layers() layers), loops included.
  std::int64_t executed_dense_ffn_layers() const;
  /// The attention kind of physical layer `layer` (1-based).
  LayerAttention attention_of_layer(std::int64_t layer) const;
  /// Physical and executed layers with sliding-window attention (the rest are full).
  std::int64_t sliding_attention_layers() const;
  std::int64_t executed_sliding_attention_layers() const;
  /// Parameters of one norm over `width` (width for RMSNorm, 2·width for LayerNorm).
  std::int64_t norm_params(std::int64_t width) const { return norm == NormKind::layernorm ? 2 * width : width; }
  /// KV-cache elements per token that grow with the context: executed full-attention layers ×
  /// attention.kv_elements_per_layer(). Sliding-window layers keep a bounded cache instead
  /// (Budgets::kv_window_elements_per_sequence, docs/accounting.md).
  std::int64_t kv_elements_per_token() const;
};

/// Upper bound accepted for every size field (hidden_size, head_dim, widths, counts): 2^31 − 1.
/// Totals are computed in 64-bit integers and validate() rejects configs whose parameter count or
/// per-token FLOPs would not fit.
inline constexpr std::int64_t max_dimension = 2147483647;

/// The centred loop of SMELT: span = round(fraction·L) layers, first = floor((L − span)/2) + 1.
/// L = 10, 12, 20, 30 at 0.5 give layers 3–7, 4–9, 6–15, 8–22. Throws budget::Error if the
/// fraction is outside (0, 1], the span rounds to 0, or repeats < 1.
LoopConfig centred_loop(std::int64_t num_layers, double span_fraction, std::int64_t repeats);

/// The first constraint of docs/config.md that `config` breaks, as "<JSON path>: <message>" (the
/// value and what is allowed); empty when the config is valid.
std::string validation_error(const ArchConfig& config);

/// Checks every constraint of docs/config.md; throws budget::Error naming `source`, the JSON
/// path of the offending field, its value and what is allowed (the problem validation_error()
/// describes).
void validate(const ArchConfig& config, const std::string& source = {});

}  // namespace budget
