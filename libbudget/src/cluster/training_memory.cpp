// Memory per GPU per pipeline stage (docs/cluster.md). Sources cited below at Megatron-LM commit
// d98e8a64ddf34856e74b24714e3bedb2f5a39553 and Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models" (arXiv 2205.05198), §4 and Table 2.
#include "budget/training_memory.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/ops.hpp"
#include "budget/workload.hpp"

namespace budget {
namespace {

/// Parameters of one physical layer by how they are held (Megatron's theoretical_memory_usage.py
/// lines 214-230 split them the same way): sharded by TP, replicated on every TP rank, and routed
/// experts sharded by ETP·EP.
struct LayerParams {
  double tp_sharded = 0.0;
  double replicated = 0.0;
  double expert = 0.0;
  LayerParams& operator+=(const LayerParams& o) {
    tp_sharded += o.tp_sharded;
    replicated += o.replicated;
    expert += o.expert;
    return *this;
  }
};

/// Widths and per-layer parameters read off the op list (layer_ops), so every family the accounting
/// knows (GQA, MLA, dense, MoE, shared experts, first dense layers) is handled the same way here.
struct OpListShapes {
  LayerParams attention;  ///< every layer: projections and the layer's norms
  LayerParams dense_ffn;  ///< a dense-FFN layer's MLP
  LayerParams moe_ffn;    ///< an MoE layer's router, routed and shared experts
  double final_norm = 0.0;
  double embedding = 0.0;      ///< V·H (unpadded; the padded size is used instead)
  double lm_head_own = 0.0;    ///< untied head weights (0 when tied) plus its bias
  double mtp_params = 0.0;     ///< all multi-token-prediction modules
  double mtp_expert_params = 0.0;
  // Activation widths (elements per token).
  double query_width = 0.0;   ///< Q as the attention kernel reads it (MLA: heads·(nope + rope))
  double key_width = 0.0;     ///< K (GQA: kv; MLA: heads·(nope + rope))
  double value_width = 0.0;   ///< V (GQA: kv; MLA: heads·v_head_dim)
  double output_width = 0.0;  ///< attention output = output-projection input
  double mla_latent = 0.0;    ///< MLA: q_lora + kv_lora (each stored twice: norm input, up-projection input) …
  double mla_rope = 0.0;      ///< … and the shared rotary key
  double dense_dim = 0.0;
  double expert_dim = 0.0;
  double shared_width = 0.0;
};

OpListShapes read_shapes(const ArchConfig& c) {
  OpListShapes s;
  const auto& a = c.attention;
  const std::vector<Op> ops = layer_ops(c, paper_workload());  // parameters and widths do not depend on the workload
  for (const Op& op : ops) {
    const double p = static_cast<double>(op.params_per_layer);
    switch (op.kind) {
      case OpKind::qkv_projection:
        s.attention.tp_sharded += p;
        break;
      case OpKind::q_up_projection:
      case OpKind::kv_up_projection:
      case OpKind::output_projection:
        s.attention.tp_sharded += p;
        break;
      case OpKind::q_down_projection:
      case OpKind::kv_down_projection:
        // Megatron-Core MLA builds the down projections as TELinear with parallel_mode='duplicated'
        // (megatron/core/transformer/multi_latent_attention.py lines 526-527, 573-574): replicated.
        s.attention.replicated += p;
        break;
      case OpKind::norms: s.attention.replicated += p; break;
      case OpKind::router: s.moe_ffn.replicated += p; break;
      case OpKind::routed_experts: s.moe_ffn.expert += p; break;
      case OpKind::shared_experts: {
        const double gate = c.ffn.shared_expert_gate ? static_cast<double>(c.hidden_size) : 0.0;
        s.moe_ffn.tp_sharded += p - gate;
        s.moe_ffn.replicated += gate;  // theoretical_memory_usage.py line 225: the gate is replicated
        break;
      }
      case OpKind::dense_ffn: s.dense_ffn.tp_sharded += p; break;
      case OpKind::final_norm: s.final_norm += p; break;
      case OpKind::embedding: s.embedding += p; break;
      case OpKind::lm_head: s.lm_head_own += p; break;
      case OpKind::mtp_module: s.mtp_params += p * static_cast<double>(op.physical_layers); break;
      default: break;
    }
  }
  const bool last_is_moe = c.ffn.is_moe() && c.num_layers > c.dense_ffn_layers();
  if (c.mtp_layers > 0 && last_is_moe) s.mtp_expert_params = s.moe_ffn.expert * static_cast<double>(c.mtp_layers);
  if (a.mla) {
    const MlaConfig& m = *a.mla;
    s.query_width = static_cast<double>(a.num_heads * m.qk_head_dim());
    s.key_width = s.query_width;
    s.value_width = static_cast<double>(a.num_heads * m.v_head_dim);
    s.mla_latent = static_cast<double>(m.q_lora_rank + m.kv_lora_rank);
    s.mla_rope = static_cast<double>(m.qk_rope_head_dim);
  } else {
    s.query_width = static_cast<double>(a.query_width());
    s.key_width = static_cast<double>(a.kv_width());
    s.value_width = s.key_width;
  }
  s.output_width = static_cast<double>(a.value_width());
  s.dense_dim = static_cast<double>(c.ffn.dense_dim);
  s.expert_dim = static_cast<double>(c.ffn.expert_dim);
  s.shared_width = static_cast<double>(c.ffn.num_shared_experts * c.ffn.shared_expert_dim);
  return s;
}

bool layer_is_moe(const ArchConfig& c, std::int64_t layer) {
  return c.ffn.is_moe() && layer > c.ffn.first_dense_layers;
}

/// Tokens of one micro-batch on one GPU before sequence parallelism: b·s/CP.
double micro_batch_tokens(const ParallelLayout& l) {
  return static_cast<double>(l.micro_batch_size) * static_cast<double>(l.seq_len / l.cp);
}

/// Rows of H the most loaded expert rank receives per token it sends: top_k · min(F, G) with a
/// capacity factor F (tokens over capacity are dropped), top_k · G dropless (G = imbalance).
double routed_rows_per_token(const ArchConfig& c, const ParallelLayout& l) {
  const double factor = l.capacity_factor > 0.0 ? std::min(l.capacity_factor, l.imbalance) : l.imbalance;
  return static_cast<double>(c.ffn.top_k) * factor;
}

LayerActivationBytes activation_bytes(const ArchConfig& c, const OpListShapes& s, std::int64_t layer,
                                      const ParallelLayout& l, bool recomputed) {
  // Korthikanti et al. 2022 §4.1 and Table 2, per layer and micro-batch, s·b tokens, 2 bytes an
  // element (bf16). Their GPT layer (hidden h, FFN 4h, a heads, dropout, no FlashAttention) keeps
  //   attention 11sbh + 5as²b, MLP 19sbh, the two LayerNorms 4sbh: sbh(34 + 5as/h) in all.
  // Terms of two classes:
  //   "replicated": norm inputs 4sbh, QKV input 2sbh, fc1 input 2sbh, dropout masks 2sbh — the
  //     10sbh whole on every TP rank without sequence parallelism, divided by t with it (§4.2.2);
  //   "sharded": everything inside the TP region, divided by t: sbh(10 + 24/t + 5as/(ht)) (Table 2).
  // Generalised here to the op list's widths: Q/K/V of q, kv, kv (GQA), MLA's latents, SwiGLU's
  // fc1 output of 2d and product of d, MoE layers. Full recompute keeps only the layer input 2sbh
  // (Table 2, "full"), divided by t under SP; selective recompute drops the attention core's
  // kept softmax terms (5as²b; with FlashAttention its fp32 log-sum-exp, 4·a bytes a token).
  const double T = micro_batch_tokens(l);
  const double t = static_cast<double>(l.tp);
  const double r = l.sequence_parallel_active() ? t : 1.0;  // divisor of the replicated class
  const double H = static_cast<double>(c.hidden_size);
  const double heads = static_cast<double>(c.attention.num_heads);
  LayerActivationBytes bytes;
  if (recomputed) {
    bytes.attention = 2.0 * H * T / r;
    return bytes;
  }
  const double dropout_mask = l.dropout ? 1.0 : 0.0;  // one byte an element (Korthikanti: sbh per mask)
  // Attention block.
  double replicated = 2.0 * H      // input norm's input
                      + 2.0 * H    // QKV (MLA: down projections') input = norm output
                      + dropout_mask * H;
  replicated += 4.0 * s.mla_latent + 2.0 * s.mla_rope;  // MLA: latent norm inputs and up-projection inputs, rotary key
  double sharded = 2.0 * (s.query_width + s.key_width + s.value_width)  // Q, K, V for the attention core
                   + 2.0 * s.output_width;                              // output projection input
  if (c.attention.qk_norm != QkNorm::none) sharded += 2.0 * (s.query_width + s.key_width);  // q/k norm inputs
  if (l.recompute.kind != RecomputeKind::selective) {
    if (l.flash_attention) {
      sharded += 4.0 * heads;  // FlashAttention keeps the fp32 softmax log-sum-exp per head and query
    } else {
      // Softmax output 2as (kept for P·V's backward); with dropout its mask as and output 2as.
      sharded += heads * static_cast<double>(l.seq_len) * (l.dropout ? 5.0 : 2.0);
    }
  }
  bytes.attention = T * (replicated / r + sharded / t);
  // FFN block.
  const double gated_factor = c.ffn.gated ? 6.0 : 4.0;  // fc1 output (2d, or 4d gate+up) + fc2 input (2d)
  if (!layer_is_moe(c, layer)) {
    const double ffn_replicated = 2.0 * H + 2.0 * H + dropout_mask * H;  // norm input, fc1 input, dropout mask
    bytes.ffn = T * (ffn_replicated / r + gated_factor * s.dense_dim / t);
    return bytes;
  }
  const double E = static_cast<double>(c.ffn.num_experts);
  // MoE (Megatron-Core, alltoall dispatcher): the norm input and output (the router's, the shared
  // experts' and the dispatch's input), fp32 router probabilities (4E) and the boolean routing map
  // (E), on the rank's tokens (T / r).
  const double moe_replicated = 2.0 * H + 2.0 * H + 4.0 * E + E + dropout_mask * H;
  const double shared = gated_factor * s.shared_width / t;
  // Routed experts: rows received per token sent, top_k · min(F, G); ETP all-gathers the rows of
  // its group (etp×), each rank computing d / etp of each: fc1 input 2H·etp, fc1 output and
  // activation (gated_factor · d / etp, etp× the rows), the expert output 2H kept for the
  // probability weighting of the combine, and an int64 permutation index (8 bytes) per row.
  const double etp = static_cast<double>(l.expert_tp());
  const double rows = routed_rows_per_token(c, l);
  const double routed = rows * (2.0 * H * etp + gated_factor * s.expert_dim + 2.0 * H + 8.0);
  bytes.ffn = T * (moe_replicated / r + shared) + (T / r) * routed;
  return bytes;
}

struct StagePlan {
  std::vector<const ModelChunk*> chunks;  ///< this rank's chunks, v = 0..V−1
};

/// Transient bytes of one layer execution (the largest is the stage's `buffers`): the MoE
/// dispatch's all-to-all send and receive buffers, 2H·(top_k + rows) per token of the rank, and
/// under sequence parallelism the all-gathered layer input 2H·T.
double layer_transient_bytes(const ArchConfig& c, const ParallelLayout& l, std::int64_t layer) {
  const double T = micro_batch_tokens(l);
  const double r = l.sequence_parallel_active() ? static_cast<double>(l.tp) : 1.0;
  const double H = static_cast<double>(c.hidden_size);
  double bytes = l.sequence_parallel_active() ? 2.0 * H * T : 0.0;
  if (layer_is_moe(c, layer)) {
    bytes = std::max(bytes, (T / r) * 2.0 * H * (static_cast<double>(c.ffn.top_k) + routed_rows_per_token(c, l)));
  }
  return bytes;
}

}  // namespace

LayerActivationBytes layer_activation_bytes(const ArchConfig& config, std::int64_t layer, const ParallelLayout& layout,
                                            bool recomputed) {
  layout.validate(config, "layout");
  if (layer < 1 || layer > config.num_layers) {
    throw Error(fmt::format("layer {} is not in [1, {}]", layer, config.num_layers), "layer");
  }
  return activation_bytes(config, read_shapes(config), layer, layout, recomputed);
}

namespace {

/// What every stage's memory shares: the op list's shapes, the chunks and the divisors.
struct MemoryStageShared {
  MemoryStageShared(const ArchConfig& arch, const ParallelLayout& layout) : config(arch), l(layout) {}
  const ArchConfig& config;
  const ParallelLayout& l;
  OpListShapes s;
  std::vector<ModelChunk> chunks;
  ParameterBytes per_param;
  double t = 1.0;              ///< TP
  double r = 1.0;              ///< TP under sequence parallelism, else 1
  double expert_shards = 1.0;  ///< ETP·EP
  double dense_shards = 1.0;   ///< optimizer-state shards of dense parameters
  double expert_dp_shards = 1.0;  ///< optimizer-state shards of routed experts
  double H = 0.0;
  std::int64_t padded_vocab = 0;
  double V = 0.0;  ///< padded vocabulary
  double T = 0.0;  ///< b·s/CP, tokens of one micro-batch on a rank
};

MemoryStageShared memory_stage_shared(const ArchConfig& config, const ParallelLayout& l) {
  MemoryStageShared m(config, l);
  m.s = read_shapes(config);
  m.chunks = model_chunks(config, l);
  m.per_param = parameter_bytes(l.precision);
  m.t = static_cast<double>(l.tp);
  m.r = l.sequence_parallel_active() ? m.t : 1.0;
  m.expert_shards = static_cast<double>(l.expert_tp() * l.ep);
  // Distributed optimizer: dense parameters' states sharded over the data-parallel group with
  // context parallelism (DP·CP ranks hold the same weights), routed experts' over the expert
  // data-parallel group EDP = N / (ETP·EP·PP). theoretical_memory_usage.py lines 293-303 divides
  // by DP and EDP (6 + 12/d bytes a parameter).
  m.dense_shards = l.distributed_optimizer ? static_cast<double>(l.data_parallel() * l.cp) : 1.0;
  m.expert_dp_shards = l.distributed_optimizer ? static_cast<double>(l.expert_data_parallel()) : 1.0;
  m.H = static_cast<double>(config.hidden_size);
  m.padded_vocab = l.padded_vocab(config.vocab_size);
  m.V = static_cast<double>(m.padded_vocab);
  m.T = micro_batch_tokens(l);
  return m;
}

/// Parameters of the layers the stage stores: every stored layer once (a looped layer counts once
/// however often it runs; a rank's chunks share one copy of replicated loop weights). Fills the
/// stage's sorted stored layers and its executed-layer count.
LayerParams memory_stored_layer_params(const MemoryStageShared& m, const std::vector<const ModelChunk*>& own,
                                       StageMemory& stage) {
  // The chunks' stored layers gathered, sorted and made unique (replicated loop weights: a rank's
  // chunks share one copy): O(n log n) in the stage's layers, not a search per layer.
  for (const ModelChunk* chunk : own) {
    stage.stored_layers.insert(stage.stored_layers.end(), chunk->stored_layers.begin(), chunk->stored_layers.end());
    stage.executed_layers += static_cast<std::int64_t>(chunk->executed_layers.size());
  }
  std::sort(stage.stored_layers.begin(), stage.stored_layers.end());
  stage.stored_layers.erase(std::unique(stage.stored_layers.begin(), stage.stored_layers.end()),
                            stage.stored_layers.end());
  LayerParams params;
  for (const std::int64_t layer : stage.stored_layers) {
    params += m.s.attention;
    params += layer_is_moe(m.config, layer) ? m.s.moe_ffn : m.s.dense_ffn;
  }
  return params;
}

/// Embedding on the first stage, LM head and final norm on the last (vocab-parallel over TP,
/// theoretical_memory_usage.py lines 247-267). Tied embeddings with PP > 1: the last stage keeps
/// its own copy of the word embeddings (Megatron's shared_embedding_or_output_weight), its
/// gradient all-reduced with the first stage's. Multi-token prediction modules sit on the last
/// stage (theoretical_memory_usage.py line 247).
void add_memory_end_stage_params(const MemoryStageShared& m, std::int64_t rank, const StageMemory& stage,
                                 LayerParams& params) {
  const ArchConfig& config = m.config;
  if (stage.has_embedding) params.tp_sharded += m.V * m.H;
  if (stage.has_lm_head) {
    const double head_bias = config.lm_head_bias ? m.V : 0.0;
    if (!config.tie_embeddings) params.tp_sharded += m.V * m.H + head_bias;
    else if (m.l.pp > 1) params.tp_sharded += m.V * m.H + head_bias;
    else params.tp_sharded += head_bias;
  }
  if (rank == m.l.pp - 1) {
    params.replicated += m.s.final_norm;
    params.tp_sharded += m.s.mtp_params - m.s.mtp_expert_params;
    params.expert += m.s.mtp_expert_params;
  }
}

/// Parameters per GPU (TP-sharded / t + replicated; routed experts / (ETP·EP)) and their weights,
/// gradients and optimizer states (the last sharded under the distributed optimizer).
void set_memory_parameter_components(const MemoryStageShared& m, const LayerParams& params, StageMemory& stage) {
  stage.dense_params = params.tp_sharded / m.t + params.replicated;
  stage.expert_params = params.expert / m.expert_shards;
  MemoryComponents& c = stage.by_component;
  c.weights = (stage.dense_params + stage.expert_params) * m.per_param.weights;
  c.gradients = (stage.dense_params + stage.expert_params) * m.per_param.gradients;
  c.optimizer_states = stage.dense_params * m.per_param.optimizer / m.dense_shards +
                       stage.expert_params * m.per_param.optimizer / m.expert_dp_shards;
}

/// Activations of one micro-batch for each of the rank's chunks, and the transient bytes their
/// executions need: the largest layer transient and the largest fully recomputed layer's
/// activations (rebuilt during its backward).
struct MemoryChunkActivations {
  std::vector<double> per_chunk;
  double largest_recomputed_layer = 0.0;
  double transient = 0.0;
};

MemoryChunkActivations memory_chunk_activations(const MemoryStageShared& m, const std::vector<const ModelChunk*>& own) {
  const ParallelLayout& l = m.l;
  MemoryChunkActivations out;
  for (const ModelChunk* chunk : own) {
    double bytes = 0.0;
    for (std::size_t i = 0; i < chunk->executed_layers.size(); ++i) {
      const std::int64_t layer = chunk->executed_layers[i];
      // Full recompute, block method: the first `full_layers` executions of each chunk (0: all).
      const bool recomputed = l.recompute.kind == RecomputeKind::full &&
                              (l.recompute.full_layers == 0 || static_cast<std::int64_t>(i) < l.recompute.full_layers);
      bytes += activation_bytes(m.config, m.s, layer, l, recomputed).total();
      if (recomputed) {
        out.largest_recomputed_layer =
            std::max(out.largest_recomputed_layer, activation_bytes(m.config, m.s, layer, l, false).total());
      }
      out.transient = std::max(out.transient, layer_transient_bytes(m.config, l, layer));
    }
    if (chunk->index == 0 && m.config.vocab_size > 0) {
      // Embedding: the int64 token ids (8 bytes a token) and, with dropout, its mask (sbh),
      // theoretical_memory_usage.py lines 329-339.
      bytes += 8.0 * m.T + (l.dropout ? m.H * m.T / m.r : 0.0);
    }
    out.per_chunk.push_back(bytes);
  }
  return out;
}

/// Micro-batches in flight at the stage's peak (Megatron-Core pipeline_parallel/schedules.py
/// lines 955-965): 1F1B runs PP − s − 1 warm-up forwards and one more before its first backward,
/// so min(m, PP − s) micro-batches; interleaved, 2·(PP − s − 1) + (V − 1)·PP warm-up chunk
/// forwards plus one, at most m·V, forward k running chunk (k / PP) mod V. PP = 1: one.
std::int64_t memory_in_flight_micro_batches(const ParallelLayout& l, std::int64_t rank) {
  if (l.pp <= 1) return 1;
  return l.virtual_stages == 1 ? std::min(l.micro_batches, l.pp - rank)
                               : std::min(l.micro_batches * l.virtual_stages,
                                          2 * (l.pp - rank - 1) + (l.virtual_stages - 1) * l.pp + 1);
}

/// Logits on the last stage, one micro-batch (the last stage runs each backward right after its
/// forward): the final norm's output 2H (the LM head input) and the fp32 logits the vocab-parallel
/// cross-entropy keeps for backward, 4·V/t a token (theoretical_memory_usage.py lines 368-376:
/// 4sbh(1 + V/h)/t); with cross-entropy fusion the bf16 logits only, 2·V/t. Each MTP module
/// computes its own logits and loss. Without fusion the bf16 logits exist beside their fp32 copy
/// while it is made (raises `transient`).
void set_memory_logits(const MemoryStageShared& m, MemoryComponents& c, double& transient) {
  const ParallelLayout& l = m.l;
  const double per_token = (l.cross_entropy_fusion ? 2.0 : 4.0) * m.V / m.t;
  const double heads_of_loss = 1.0 + static_cast<double>(m.config.mtp_layers);
  c.logits = m.T * (2.0 * m.H / m.r + heads_of_loss * per_token);
  if (!l.cross_entropy_fusion) transient = std::max(transient, 2.0 * m.T * m.V / m.t);
}

/// Memory of pipeline rank `rank`: its chunks are virtual stages rank, rank + PP, ... (Megatron's
/// interleaved placement).
StageMemory memory_of_stage(const MemoryStageShared& m, std::int64_t rank) {
  const ParallelLayout& l = m.l;
  StageMemory stage;
  stage.pipeline_rank = rank;
  stage.has_embedding = rank == 0 && m.config.vocab_size > 0;
  stage.has_lm_head = rank == l.pp - 1 && m.config.vocab_size > 0;
  std::vector<const ModelChunk*> own;
  for (std::int64_t v = 0; v < l.virtual_stages; ++v) {
    own.push_back(&m.chunks[static_cast<std::size_t>(v * l.pp + rank)]);
  }
  LayerParams params = memory_stored_layer_params(m, own, stage);
  add_memory_end_stage_params(m, rank, stage, params);
  set_memory_parameter_components(m, params, stage);
  MemoryComponents& c = stage.by_component;
  const MemoryChunkActivations chunk = memory_chunk_activations(m, own);
  double transient = chunk.transient;
  stage.in_flight_micro_batches = memory_in_flight_micro_batches(l, rank);
  for (std::int64_t k = 0; k < stage.in_flight_micro_batches; ++k) {
    c.activations += chunk.per_chunk[static_cast<std::size_t>((k / l.pp) % l.virtual_stages)];
  }
  if (stage.has_lm_head) set_memory_logits(m, c, transient);
  transient = std::max(transient, chunk.largest_recomputed_layer);
  c.buffers = transient;
  stage.peak_bytes = c.total();
  return stage;
}

/// Notes on the loop, the routed rows, the padded vocabulary and what the peak leaves out.
void add_training_memory_notes(TrainingMemory& out, const ArchConfig& config, const ParallelLayout& l) {
  if (config.loop && config.loop->repeats > 1) {
    out.notes.push_back(fmt::format(
        "loop over layers {}-{} x{}: weights, gradients and optimizer states once per stored layer, activations once "
        "per execution ({} executions of {} layers){}",
        config.loop->first, config.loop->last, config.loop->repeats, config.executed_layers(), config.num_layers,
        l.replicate_loop_weights ? "; loop weights replicated on every stage that runs them" : ""));
  }
  if (config.ffn.is_moe()) {
    out.notes.push_back(fmt::format("routed experts: {} rows per token on the most loaded expert rank (top_k {} x {})",
                                    routed_rows_per_token(config, l), config.ffn.top_k,
                                    l.capacity_factor > 0.0 ? fmt::format("min(capacity {}, imbalance {})",
                                                                          l.capacity_factor, l.imbalance)
                                                            : fmt::format("imbalance {}, dropless", l.imbalance)));
  }
  if (out.padded_vocab != config.vocab_size) {
    out.notes.push_back(fmt::format("vocabulary padded from {} to {}", config.vocab_size, out.padded_vocab));
  }
  out.notes.push_back("peak allocated memory: the CUDA context, NCCL buffers and allocator fragmentation are not "
                      "counted (the cluster's reserved memory is subtracted from the capacity instead)");
}

}  // namespace

TrainingMemory training_memory(const ArchConfig& config, const ParallelLayout& given, const ClusterSpec& cluster,
                               const std::string& source) {
  const ParallelLayout l = resolve_layout(given, source);
  l.validate(config, source);
  if (l.gpus > cluster.total_gpus()) {
    throw Error(fmt::format("the layout needs {} GPUs; the cluster has {} ({} node{} of {}); set more nodes (--nodes)",
                            l.gpus, cluster.total_gpus(), cluster.nodes, cluster.nodes == 1 ? "" : "s",
                            cluster.gpus_per_node),
                source);
  }
  const MemoryStageShared shared = memory_stage_shared(config, l);
  TrainingMemory out;
  out.layout = l;
  out.padded_vocab = shared.padded_vocab;
  out.capacity_bytes = static_cast<double>(cluster.usable_memory_bytes());
  for (std::int64_t rank = 0; rank < l.pp; ++rank) out.stages.push_back(memory_of_stage(shared, rank));
  // The peak is the first stage with the largest peak.
  for (const StageMemory& stage : out.stages) {
    if (stage.peak_bytes > out.peak_bytes) {
      out.peak_bytes = stage.peak_bytes;
      out.peak_stage = stage.pipeline_rank;
    }
  }
  out.headroom_bytes = out.capacity_bytes - out.peak_bytes;
  out.fits = out.headroom_bytes >= 0.0;
  add_training_memory_notes(out, config, l);
  return out;
}

}  // namespace budget
