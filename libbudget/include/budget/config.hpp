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

/// Attention kind of one layer: full causal attention (its KV cache grows with the context),
/// sliding-window attention over at most `sliding_window` keys (its cache is bounded by the window),
/// or chunked local attention (Llama-4): a query attends to the earlier keys of its own chunk of
/// `chunk_size` tokens (its cache is bounded by the chunk).
enum class LayerAttention { full, sliding, chunked };

/// What mixes the tokens of a layer: softmax attention (AttentionConfig), linear attention (Gated
/// DeltaNet, LinearAttentionConfig), a Mamba-2 state-space layer (MambaConfig), or nothing (a
/// layer that is a single FFN block, Nemotron-H's "-" and "E").
enum class LayerMixer { attention, linear_attention, mamba, none };

/// The feed-forward block of a layer: a mixture of experts, a dense MLP of `ffn.dense_dim`, or
/// none (a layer that is a single mixer block, Nemotron-H's "M" and "*").
enum class LayerFfn { moe, dense, none };

std::string_view to_string(QkNorm norm);
std::string_view to_string(LayerAttention kind);
std::string_view to_string(LayerMixer kind);
std::string_view to_string(LayerFfn kind);

/// DeepSeek-V3.2's lightning indexer (DeepSeek Sparse Attention): per layer, index queries
/// q_lora_rank → num_heads·head_dim from MLA's query latent, one index key H → head_dim with a
/// LayerNorm, head weights H → num_heads; each query scores every earlier key (ReLU of q·k, weighted
/// over the index heads) and attends to the `top_k` best. The index keys are cached per token.
struct IndexerConfig {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t top_k = 0;  ///< keys each query attends to (at most)

  bool operator==(const IndexerConfig& o) const {
    return num_heads == o.num_heads && head_dim == o.head_dim && top_k == o.top_k;
  }
};

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
  std::int64_t chunk_size = 0;                  ///< tokens of a chunked layer's chunk (0: none)
  /// Per physical layer: full, sliding or chunked. Empty: every layer full. Layers whose mixer is not
  /// attention (ArchConfig::layer_mixers) are "full" here and have no attention.
  std::vector<LayerAttention> layer_types = {};
  /// A learned sink logit per head in every softmax denominator (gpt-oss): num_heads parameters a
  /// layer, no counted FLOPs.
  bool sinks = false;
  /// Gated attention (Qwen3-Next): the query projection also emits a gate of the query width, and
  /// the attention output is multiplied by sigmoid(gate) before W_o: H·q more weights, 2·H·q FLOPs.
  bool output_gate = false;
  std::optional<IndexerConfig> indexer = std::nullopt;  ///< DeepSeek-V3.2 (needs MLA with q_lora_rank)

  std::int64_t query_width() const { return num_heads * head_dim; }
  std::int64_t kv_width() const { return num_kv_heads * head_dim; }
  /// Width of the attention output (the values of all heads): heads·v_head_dim for MLA, else q.
  std::int64_t value_width() const { return mla ? num_heads * mla->v_head_dim : query_width(); }
  /// KV-cache elements one layer stores per token: 2·kv (K and V) for GQA, kv_lora_rank +
  /// qk_rope_head_dim for MLA (absorbed form); + the indexer's key (head_dim) with an indexer.
  std::int64_t kv_elements_per_layer() const {
    return (mla ? mla->kv_lora_rank + mla->qk_rope_head_dim : 2 * kv_width()) + (indexer ? indexer->head_dim : 0);
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

/// Gated DeltaNet linear attention (Yang et al. 2024, arXiv:2412.06464; Qwen3-Next's
/// Qwen3NextGatedDeltaNet): q, k (num_key_heads × key_head_dim each), v and the output gate z
/// (num_value_heads × value_head_dim each) and the per-head β and decay a from one H-input projection,
/// a depthwise causal convolution of `conv_kernel` taps over q, k, v, the gated delta rule computed
/// in chunks of `chunk_size` tokens, a gated RMSNorm of value_head_dim, and value width → H. Each
/// sequence keeps a recurrent state of num_value_heads × key_head_dim × value_head_dim and the last
/// conv_kernel − 1 inputs of the convolution instead of a per-token KV cache.
struct LinearAttentionConfig {
  std::int64_t num_key_heads = 0;
  std::int64_t num_value_heads = 0;   ///< a multiple of num_key_heads (keys are shared like GQA)
  std::int64_t key_head_dim = 0;
  std::int64_t value_head_dim = 0;
  std::int64_t conv_kernel = 4;
  std::int64_t chunk_size = 64;       ///< the chunked kernel's chunk (FLOPs only)

  std::int64_t key_width() const { return num_key_heads * key_head_dim; }
  std::int64_t value_width() const { return num_value_heads * value_head_dim; }
  /// Channels of the convolution: q, k and v.
  std::int64_t conv_width() const { return 2 * key_width() + value_width(); }
  /// Outputs of the input projection: q, k, v, z and β, a per value head.
  std::int64_t in_projection_width() const { return 2 * key_width() + 2 * value_width() + 2 * num_value_heads; }
  /// Recurrent state of one layer and sequence: the delta-rule state and the convolution's inputs.
  std::int64_t state_elements() const {
    return num_value_heads * key_head_dim * value_head_dim + conv_width() * (conv_kernel - 1);
  }
  bool operator==(const LinearAttentionConfig& o) const {
    return num_key_heads == o.num_key_heads && num_value_heads == o.num_value_heads &&
           key_head_dim == o.key_head_dim && value_head_dim == o.value_head_dim && conv_kernel == o.conv_kernel &&
           chunk_size == o.chunk_size;
  }
};

/// A Mamba-2 layer (Dao & Gu 2024, arXiv:2405.21060, the SSD layer; Nemotron-H's NemotronHMamba2Mixer):
/// one H-input projection to z and x (inner = num_heads·head_dim each), B and C (num_groups ×
/// state_size each) and dt (num_heads); a depthwise causal convolution of `conv_kernel` taps over x,
/// B, C; the SSD scan in chunks of `chunk_size`; a gated RMSNorm of inner; inner → H. Each sequence
/// keeps num_heads × head_dim × state_size of SSM state and the last conv_kernel − 1 convolution inputs.
struct MambaConfig {
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t state_size = 0;
  std::int64_t num_groups = 1;      ///< B and C are shared by num_heads / num_groups heads
  std::int64_t conv_kernel = 4;
  std::int64_t chunk_size = 128;    ///< the SSD chunk (FLOPs only)
  bool conv_bias = true;            ///< a bias per convolution channel
  bool projection_bias = false;     ///< biases on the in and out projections

  std::int64_t inner() const { return num_heads * head_dim; }
  std::int64_t conv_width() const { return inner() + 2 * num_groups * state_size; }
  std::int64_t in_projection_width() const { return 2 * inner() + 2 * num_groups * state_size + num_heads; }
  std::int64_t state_elements() const {
    return num_heads * head_dim * state_size + conv_width() * (conv_kernel - 1);
  }
  bool operator==(const MambaConfig& o) const {
    return num_heads == o.num_heads && head_dim == o.head_dim && state_size == o.state_size &&
           num_groups == o.num_groups && conv_kernel == o.conv_kernel && chunk_size == o.chunk_size &&
           conv_bias == o.conv_bias && projection_bias == o.projection_bias;
  }
};

/// Physical layers and executions per token (loops included) of one kind of layer.
struct LayerCount {
  std::int64_t physical = 0;
  std::int64_t executed = 0;
};

/// How many layers of each kind a config has (ArchConfig::layer_counts()): attention layers by
/// attention kind, the other mixers, and the FFN kinds.
struct LayerCounts {
  LayerCount full_attention, sliding_attention, chunked_attention;
  LayerCount linear_attention, mamba, no_mixer;
  LayerCount moe, dense, no_ffn;
  /// Layers with softmax attention of any kind.
  LayerCount attention() const {
    return {full_attention.physical + sliding_attention.physical + chunked_attention.physical,
            full_attention.executed + sliding_attention.executed + chunked_attention.executed};
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
  /// Partial RoPE: the fraction of each head's query/key dims that is rotated (GLM-4.5 0.5,
  /// Qwen3-Next 0.25, MiniMax-M2 rotary_dim / head_dim); absent: all (or not said). No weights.
  std::optional<double> partial_rotary_factor = std::nullopt;
  /// Layers (1-based) whose attention uses no rotary embedding (Llama-4's no_rope_layers).
  std::vector<std::int64_t> nope_layers = {};
  /// The routed experts' weights multiplied by this after the top-k (DeepSeek's
  /// routed_scaling_factor); absent: 1, no scaling.
  std::optional<double> router_scaling_factor = std::nullopt;
  std::optional<RouterGroups> router_groups = std::nullopt;  ///< absent: every routed expert a candidate

  bool operator==(const ModelSettings& o) const {
    return rope_theta == o.rope_theta && norm_epsilon == o.norm_epsilon &&
           max_position_embeddings == o.max_position_embeddings && router_score == o.router_score &&
           router_normalize_top_k == o.router_normalize_top_k && rope_scaling == o.rope_scaling &&
           partial_rotary_factor == o.partial_rotary_factor && nope_layers == o.nope_layers &&
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
  /// Per physical layer: what mixes its tokens. Empty: every layer has attention. Hybrid stacks
  /// (Qwen3-Next's 3 linear : 1 full, Nemotron-H's Mamba/attention/MLP blocks) list every layer.
  std::vector<LayerMixer> layer_mixers = {};
  /// Per physical layer: its FFN. Empty: the first `ffn.first_dense_layers` layers dense, the others
  /// MoE (all dense for a dense model). Given, first_dense_layers must be 0.
  std::vector<LayerFfn> layer_ffns = {};
  std::optional<LinearAttentionConfig> linear_attention = std::nullopt;  ///< the linear_attention layers
  std::optional<MambaConfig> mamba = std::nullopt;                       ///< the mamba layers
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
  /// The mixer and the FFN of physical layer `layer` (1-based).
  LayerMixer mixer_of_layer(std::int64_t layer) const;
  LayerFfn ffn_of_layer(std::int64_t layer) const;
  /// True when the stack is not one kind of layer throughout the per-layer lists describe
  /// (layer_mixers, layer_ffns or layer_types given).
  bool has_per_layer_kinds() const {
    return !layer_mixers.empty() || !layer_ffns.empty() || !attention.layer_types.empty();
  }
  /// Physical and executed layers of every kind.
  LayerCounts layer_counts() const;
  /// The period of the layer pattern: the smallest p <= num_layers / 2 with layer l and layer l + p
  /// of the same kind (mixer, attention kind, FFN) for every l; 1 when every layer is alike (gpt-oss:
  /// 2, Qwen3-Next and Llama-4: 4); 0 when the pattern does not repeat within the stack (Nemotron-3
  /// Nano). The matcher's loops span whole periods (LoopSpec::period).
  std::int64_t layer_pattern_period() const;
  /// Physical and executed layers with sliding-window attention (the rest are full).
  std::int64_t sliding_attention_layers() const;
  std::int64_t executed_sliding_attention_layers() const;
  /// Parameters of one norm over `width` (width for RMSNorm, 2·width for LayerNorm).
  std::int64_t norm_params(std::int64_t width) const { return norm == NormKind::layernorm ? 2 * width : width; }
  /// KV-cache elements per token that grow with the context: executed full-attention layers ×
  /// attention.kv_elements_per_layer(). Sliding-window and chunked layers keep a bounded cache
  /// instead (Budgets::kv_window_elements_per_sequence), linear-attention and Mamba layers a
  /// recurrent state (state_elements_per_sequence(); docs/accounting.md).
  std::int64_t kv_elements_per_token() const;
  /// Recurrent state of one sequence: executed linear-attention layers × their state + executed
  /// Mamba layers × theirs (each execution of a looped layer keeps its own state).
  std::int64_t state_elements_per_sequence() const;
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
