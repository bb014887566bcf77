// The one table of Megatron-LM's arguments (budget/megatron_args.hpp): every argument of the
// parser at d98e8a64 (megatron_arguments_d98e8a64.tsv, compiled in) joined with what it means
// here. Sources of the rows: the TSV's last column (file:line at the commit).
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"
#include "base/enum_names.hpp"

namespace budget {
namespace interop_detail {
extern const std::string_view megatron_arguments_tsv;
}  // namespace interop_detail

namespace {

constexpr auto megatron_use_names = detail::enum_names<MegatronUse::not_modelled>(
    {{MegatronUse::modelled, "modelled"}, {MegatronUse::shape, "shape"}, {MegatronUse::read, "read, not modelled"},
     {MegatronUse::not_modelled, "not modelled"}});

struct MegatronUseRow {
  std::string_view flag;
  MegatronUse use;
  std::string_view meaning;
};

// What each argument means here; every argument not listed changes nothing here ("not modelled").
// A test checks that every flag named exists in Megatron's table.
using U = MegatronUse;
constexpr MegatronUseRow megatron_use_table[] = {
      // Parallel sizes and placement.
      {"--tensor-model-parallel-size", U::modelled, "TP"},
      {"--pipeline-model-parallel-size", U::modelled, "PP"},
      {"--num-layers-per-virtual-pipeline-stage", U::modelled, "V = layers / (PP · this)"},
      {"--num-virtual-stages-per-pipeline-rank", U::modelled, "V, virtual stages per pipeline rank"},
      {"--pipeline-model-parallel-layout", U::modelled, "the pipeline layout string (E t m L | *N)"},
      {"--decoder-first-pipeline-num-layers", U::modelled, "transformer layers on the first pipeline rank"},
      {"--decoder-last-pipeline-num-layers", U::modelled, "transformer layers on the last pipeline rank"},
      {"--account-for-embedding-in-pipeline-split", U::modelled, "the embedding counts as a layer of the split"},
      {"--account-for-loss-in-pipeline-split", U::modelled, "the loss counts as a layer of the split"},
      {"--expert-model-parallel-size", U::modelled, "EP"},
      {"--expert-tensor-parallel-size", U::modelled, "ETP (default TP)"},
      {"--context-parallel-size", U::modelled, "CP"},
      {"--sequence-parallel", U::modelled, "sequence parallelism (off at TP 1, as Megatron turns it off)"},
      // Batch.
      {"--micro-batch-size", U::modelled, "sequences per micro-batch"},
      {"--global-batch-size", U::modelled, "sequences per step: micro-batches = GBS / (MBS · DP)"},
      {"--seq-length", U::modelled, "tokens per sequence"},
      // Recompute.
      {"--recompute-granularity", U::modelled, "full or selective recompute"},
      {"--recompute-method", U::modelled, "block or uniform (full recompute)"},
      {"--recompute-num-layers", U::modelled, "block: layers per chunk; uniform: layers per group"},
      {"--recompute-modules", U::modelled, "selective recompute's modules"},
      {"--recompute-activations", U::modelled, "selective recompute of the attention core"},
      {"--cpu-offloading-num-layers", U::modelled, "layers whose activations live in host memory"},
      // Precision and optimizer.
      {"--bf16", U::modelled, "bf16 weights, fp32 main gradients and Adam (without --bf16/--fp16: fp32)"},
      {"--fp16", U::modelled, "fp16 weights and gradients, fp32 master and Adam"},
      {"--fp8-format", U::modelled, "FP8 GEMMs on (e4m3 or hybrid): FP8 weight copies and saved inputs"},
      {"--fp8-recipe", U::modelled, "tensorwise, delayed, blockwise or mxfp8"},
      {"--fp8-param-gather", U::modelled, "FP8 parameters (no bf16 weight copy)"},
      {"--fp8-amax-history-len", U::modelled, "delayed scaling's amax history"},
      {"--use-distributed-optimizer", U::modelled, "optimizer states sharded over DP·CP (experts: EDP)"},
      {"--num-distributed-optimizer-instances", U::modelled, "optimizer sharded within DP·CP / instances"},
      {"--use-megatron-fsdp", U::modelled, "Megatron-FSDP (sharding by --data-parallel-sharding-strategy)"},
      {"--use-torch-fsdp2", U::modelled, "PyTorch FSDP2: parameters, gradients and optimizer sharded"},
      {"--data-parallel-sharding-strategy", U::modelled, "Megatron-FSDP: optim, optim_grads, optim_grads_params"},
      {"--no-gradient-accumulation-fusion", U::modelled, "no TE dummy weight gradients"},
      {"--optimizer", U::modelled, "Adam (its states modelled; other optimizers refused)"},
      {"--grad-reduce-in-bf16", U::modelled, "bf16 gradient buffer and DP reduction (bf16 training)"},
      {"--accumulate-allreduce-grads-in-fp32", U::modelled, "fp32 gradient buffer (Megatron's default for bf16)"},
      {"--main-grads-dtype", U::modelled, "bf16: bf16 gradient buffer (bf16 training)"},
      {"--use-precision-aware-optimizer", U::modelled, "TE FusedAdam: master weights and moments in their dtypes"},
      {"--main-params-dtype", U::modelled, "master weights' dtype (precision-aware optimizer)"},
      {"--exp-avg-dtype", U::modelled, "Adam first moment's dtype (precision-aware optimizer)"},
      {"--exp-avg-sq-dtype", U::modelled, "Adam second moment's dtype (precision-aware optimizer)"},
      {"--cross-entropy-loss-fusion", U::modelled, "fused cross-entropy: bf16 logits only"},
      {"--make-vocab-size-divisible-by", U::modelled, "vocabulary padded to a multiple of this × TP"},
      {"--hidden-dropout", U::modelled, "dropout masks counted when > 0"},
      {"--attention-dropout", U::modelled, "dropout masks counted when > 0"},
      {"--attention-backend", U::modelled, "unfused/local: the s² softmax terms; else FlashAttention-like"},
      {"--reset-attention-mask", U::modelled, "a document mask (the workload's document lengths); without: causal"},
      // MoE routing.
      {"--moe-token-dispatcher-type", U::modelled, "alltoall, allgather or flex"},
      {"--moe-expert-capacity-factor", U::modelled, "capacity factor (token dropping)"},
      {"--moe-pad-expert-input-to-capacity", U::modelled, "every expert receives exactly its capacity"},
      {"--moe-router-force-load-balancing", U::modelled, "balanced routing (imbalance 1)"},
      {"--moe-permute-fusion", U::modelled, "fused permutation: TE's row map per token instead of an index per row"},
      {"--moe-flex-dispatcher-backend", U::modelled, "DeepEP or HybridEP buffers outside the allocator; a2a time"},
      {"--moe-expert-rank-capacity-factor", U::modelled, "HybridEP's static budget of permuted rows (memory)"},
      {"--moe-grouped-gemm", U::modelled, "grouped expert GEMMs: TE's per-stream cuBLAS workspaces (memory), time"},
      // Overlap (communication time).
      {"--overlap-grad-reduce", U::modelled, "DP gradient reduce overlapped with the backward"},
      {"--overlap-param-gather", U::modelled, "DP parameter gather overlapped with the forward"},
      {"--tp-comm-overlap", U::modelled, "TP collectives overlapped (TE userbuffers)"},
      {"--overlap-moe-expert-parallel-comm", U::modelled, "EP all-to-alls overlapped"},
      {"--no-overlap-p2p-communication", U::modelled, "PP send/recv exposed (interleaved default: overlapped)"},
      // A measured run's kernel settings (MegatronKernelOptions, read_megatron_timed_run(): run files);
      // the layout commands take --cuda-graphs instead and price the router unfused.
      {"--cuda-graph-impl", U::modelled, "CUDA graphs: no CPU launch gaps in a run's step (run files; not their buffers)"},
      {"--enable-cuda-graph", U::modelled, "CUDA graphs, as --cuda-graph-impl (run files)"},
      {"--external-cuda-graph", U::modelled, "CUDA graphs, as --cuda-graph-impl (run files)"},
      {"--cuda-graph-modules", U::modelled, "graphs of these modules only: a run timed without graphs (run files)"},
      {"--cuda-graph-scope", U::modelled, "deprecated alias of --cuda-graph-modules (run files)"},
      {"--moe-router-fusion", U::modelled, "fused router top-k and softmax: fewer launches (run files)"},
      {"--moe-flex-dispatcher-num-sms", U::modelled,
       "SMs of the dispatcher's communication (run files); DeepEP's buffers"},
      {"--moe-deepep-num-sms", U::modelled, "SMs of the dispatcher's communication (run files); DeepEP's buffers"},
      {"--moe-hybridep-num-sms", U::modelled, "SMs of the dispatcher's communication (run files); DeepEP's buffers"},
      // Model shape: must agree with the config.
      {"--num-layers", U::shape, "layers"},
      {"--hidden-size", U::shape, "hidden size"},
      {"--ffn-hidden-size", U::shape, "dense FFN width"},
      {"--num-attention-heads", U::shape, "attention heads"},
      {"--group-query-attention", U::shape, "grouped-query attention"},
      {"--num-query-groups", U::shape, "KV heads"},
      {"--kv-channels", U::shape, "head dim"},
      {"--multi-latent-attention", U::shape, "multi-latent attention"},
      {"--q-lora-rank", U::shape, "MLA query latent"},
      {"--kv-lora-rank", U::shape, "MLA KV latent"},
      {"--qk-head-dim", U::shape, "MLA per-head q/k dim without rope"},
      {"--qk-pos-emb-head-dim", U::shape, "MLA rope dim"},
      {"--v-head-dim", U::shape, "MLA value head dim"},
      {"--num-experts", U::shape, "routed experts"},
      {"--moe-ffn-hidden-size", U::shape, "expert width"},
      {"--moe-router-topk", U::shape, "top_k"},
      {"--moe-shared-expert-intermediate-size", U::shape, "total shared-expert width"},
      {"--moe-layer-freq", U::shape, "which layers are MoE (the config's first dense layers)"},
      {"--swiglu", U::shape, "gated MLPs"},
      {"--untie-embeddings-and-output-weights", U::shape, "untied LM head"},
      {"--vocab-size", U::shape, "vocabulary"},
      {"--mtp-num-layers", U::shape, "multi-token-prediction layers"},
      {"--normalization", U::shape, "norm kind"},
      {"--max-position-embeddings", U::shape, "at least --seq-length"},
      // Read: they change memory, communication or time in Megatron; not modelled here.
      {"--cross-entropy-fusion-impl", U::read, "the fused loss's kernel (time)"},
      {"--moe-shared-expert-overlap", U::read, "shared experts overlapped with dispatch (time)"},
      {"--delay-wgrad-compute", U::read, "weight gradients delayed for EP overlap (time)"},
      {"--overlap-param-gather-with-optimizer-step", U::read, "parameter gather beside the optimizer step (time)"},
      {"--moe-router-padding-for-fp8", U::read, "routing map padded for FP8 (memory)"},
      {"--cp-comm-type", U::read, "CP's p2p / a2a / allgather (communication)"},
      {"--hierarchical-context-parallel-sizes", U::read, "hierarchical CP groups (communication)"},
      {"--fine-grained-activation-offloading", U::read, "per-module activation offload (memory)"},
      {"--offload-modules", U::read, "modules offloaded (memory)"},
      {"--tp-comm-overlap-cfg", U::read, "userbuffer settings (time)"},
      {"--transformer-impl", U::read, "transformer_engine assumed (TE's dummy gradients, fusions)"},
      {"--use-flash-attn", U::read, "flash attention (the modelled default)"},
      {"--fsdp-double-buffer", U::read, "Megatron-FSDP double buffer (the modelled two gathered layers)"},
      {"--torch-fsdp2-no-reshard-after-forward", U::read, "FSDP2 keeps gathered weights (memory, communication)"},
      {"--first-last-layers-bf16", U::read, "FP8 off in the first/last layers (memory)"},
      {"--moe-router-topk-scaling-factor", U::read, "router weight scaling (no memory or time effect)"},
      {"--moe-router-num-groups", U::modelled, "group-limited routing: the flex dispatcher's inter-node copies"},
      {"--moe-router-group-topk", U::modelled, "group-limited routing: the flex dispatcher's inter-node copies"},
      {"--moe-paged-stash", U::read, "paged stash of expert activations (memory; not modelled)"},
      {"--moe-router-dtype", U::read, "router logits' dtype (memory: T x E; not modelled)"},
};

std::vector<std::string> split_tsv_field(std::string_view field, char separator) {
  std::vector<std::string> out;
  if (field.empty()) return out;
  std::size_t start = 0;
  while (start <= field.size()) {
    const std::size_t end = std::min(field.find(separator, start), field.size());
    out.emplace_back(field.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<MegatronArgument> build_megatron_arguments() {
  std::vector<MegatronArgument> table;
  std::string_view text = interop_detail::megatron_arguments_tsv;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> f = split_tsv_field(line, '\t');
    if (f.size() != 6) throw Error(fmt::format("malformed row \"{}\"", line), "megatron argument table");
    MegatronArgument a;
    a.names = split_tsv_field(f[0], ' ');
    a.dest = f[1];
    a.arity = f[2];
    a.type = f[3];
    a.choices = split_tsv_field(f[4], '|');
    a.source = f[5];
    table.push_back(std::move(a));
  }
  for (const MegatronUseRow& row : megatron_use_table) {
    const auto it = std::find_if(table.begin(), table.end(), [&](const MegatronArgument& a) {
      return std::find(a.names.begin(), a.names.end(), row.flag) != a.names.end();
    });
    if (it == table.end()) throw Error(fmt::format("{} is not a Megatron-LM argument", row.flag), "megatron use table");
    it->use = row.use;
    it->meaning = std::string(row.meaning);
  }
  return table;
}

}  // namespace

std::string_view megatron_arguments_commit() { return "d98e8a64ddf34856e74b24714e3bedb2f5a39553"; }

std::string_view to_string(MegatronUse use) { return detail::name_of(megatron_use_names, use); }

const std::vector<MegatronArgument>& megatron_arguments() {
  static const std::vector<MegatronArgument> table = build_megatron_arguments();
  return table;
}

const MegatronArgument* find_megatron_argument(std::string_view flag) {
  static const std::map<std::string, const MegatronArgument*, std::less<>> index = [] {
    std::map<std::string, const MegatronArgument*, std::less<>> m;
    for (const MegatronArgument& a : megatron_arguments()) {
      for (const std::string& n : a.names) m.emplace(n, &a);
    }
    return m;
  }();
  const auto it = index.find(flag);
  return it == index.end() ? nullptr : it->second;
}

void require_megatron_argument(std::string_view flag) {
  if (find_megatron_argument(flag) == nullptr) {
    throw Error(fmt::format("internal error: {} is not an argument of Megatron-LM at {}", flag,
                            megatron_arguments_commit()),
                "megatron export");
  }
}

}  // namespace budget
