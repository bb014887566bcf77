// The one mapping table of Megatron-Bridge config fields onto Megatron-LM arguments (docs/megatron.md,
// "Megatron-Bridge configs"), and the fields the ConfigContainer's dataclasses have
// (bridge_fields_067f987d.tsv, written by scripts/bridge_fields.py from NVIDIA-NeMo/Megatron-Bridge
// @067f987d and the NVIDIA/Megatron-LM@2a75ac12 it pins, compiled in).
//
// A field of a section is, in this order: a row of the table below (its Megatron-LM destination
// named, or Bridge-only); else, when its name is a destination of Megatron-LM's parser at d98e8a64,
// that argument (TransformerConfig, TrainingConfig, OptimizerConfig and DDP config fields mostly carry
// the argparse names: megatron/training/arguments.py core_transformer_config_from_args copies them by
// name); else inert: it changes nothing here and is listed.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "interop/bridge_detail.hpp"

namespace budget::interop_detail {
extern const std::string_view bridge_fields_tsv;

namespace {

using K = BridgeFieldKind;
// section, field, Megatron-LM destination (or what it is), kind, where Bridge/MCore defines the field's
// meaning (Megatron-Bridge@067f987d unless said).
constexpr BridgeFieldRow bridge_field_rows[] = {
    {"model", "num_moe_experts", "num_experts", K::argument, "MCore transformer_config.py:232 (--num-experts)"},
    {"model", "share_embeddings_and_output_weights", "untie_embeddings_and_output_weights", K::negated_flag,
     "src/megatron/bridge/models/gpt_provider.py (--untie-embeddings-and-output-weights = not shared)"},
    {"model", "gated_linear_unit", "swiglu", K::argument, "MCore transformer_config.py:214 (--swiglu sets it)"},
    {"model", "cuda_graph_scope", "cuda_graph_modules", K::argument,
     "MCore transformer_config.py:1093 (--cuda-graph-modules at d98e8a64)"},
    {"model", "disable_parameter_transpose_cache", "", K::bridge_only,
     "MCore transformer_config.py:1110 (TE keeps no FP8 weight transpose between micro-batches)"},
    {"model", "virtual_pipeline_model_parallel_size", "num_virtual_stages_per_pipeline_rank", K::argument,
     "MCore model_parallel_config.py (virtual stages per pipeline rank)"},
    {"ddp", "grad_reduce_in_fp32", "accumulate_allreduce_grads_in_fp32", K::grad_reduce,
     "MCore distributed_data_parallel_config.py (arguments.py: --accumulate-allreduce-grads-in-fp32 / "
     "--grad-reduce-in-bf16)"},
    {"mixed_precision", "grad_reduce_in_fp32", "accumulate_allreduce_grads_in_fp32", K::grad_reduce,
     "src/megatron/bridge/training/mixed_precision.py (copied onto ddp)"},
    {"mixed_precision", "fp8_param", "fp8_param_gather", K::argument,
     "src/megatron/bridge/training/mixed_precision.py (--fp8-param-gather sets both)"},
    {"ddp", "bucket_size", "ddp_bucket_size", K::argument, "MCore distributed_data_parallel_config.py"},
    {"ddp", "num_buckets", "ddp_num_buckets", K::argument, "MCore distributed_data_parallel_config.py"},
    {"ddp", "average_in_collective", "ddp_average_in_collective", K::argument, "MCore distributed_data_parallel_config.py"},
    {"ddp", "pad_buckets_for_high_nccl_busbw", "ddp_pad_buckets_for_high_nccl_busbw", K::argument,
     "MCore distributed_data_parallel_config.py"},
    {"ddp", "check_for_nan_in_grad", "check_for_nan_in_loss_and_grad", K::argument,
     "MCore distributed_data_parallel_config.py"},
    {"dataset", "sequence_length", "seq_length", K::argument, "MCore gpt_dataset.py (GPTDatasetConfig)"},
    {"dataset", "inter_document_masking", "reset_attention_mask", K::true_sets,
     "Megatron-LM@2a75ac12 megatron/core/datasets/gpt_dataset.py:80,287 (attention restricted to each document, "
     "as --reset-attention-mask restricts it: a document mask)"},
    {"comm_overlap", "tp_comm_overlap_cfg", "tp_comm_overlap_cfg", K::bridge_only,
     "src/megatron/bridge/training/comm_overlap.py:377 (userbuffer settings per GEMM)"},
};

/// section → field → the declaring source (file:line) of the TSV.
std::map<std::string, std::map<std::string, std::string>> build_bridge_fields() {
  std::map<std::string, std::map<std::string, std::string>> table;
  std::string_view text = bridge_fields_tsv;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> f;
    std::size_t start = 0;
    while (start <= line.size()) {
      const std::size_t end = std::min(line.find('\t', start), line.size());
      f.emplace_back(line.substr(start, end - start));
      start = end + 1;
    }
    if (f.size() != 4) throw Error(fmt::format("malformed row \"{}\"", line), "bridge field table");
    table[f[0]][f[1]] = f[3];
  }
  return table;
}

}  // namespace

const std::map<std::string, std::map<std::string, std::string>>& bridge_fields() {
  static const auto table = build_bridge_fields();
  return table;
}

const BridgeFieldRow* bridge_field_row(const std::string& section, const std::string& field) {
  for (const BridgeFieldRow& row : bridge_field_rows) {
    if (row.section == section && row.field == field) return &row;
  }
  return nullptr;
}

void check_bridge_field_rows() {
  for (const BridgeFieldRow& row : bridge_field_rows) {
    const auto section = bridge_fields().find(std::string(row.section));
    if (section == bridge_fields().end() || section->second.count(std::string(row.field)) == 0) {
      throw Error(fmt::format("{}.{} is not a field of Megatron-Bridge's config", row.section, row.field),
                  "bridge mapping table");
    }
    if (!row.dest.empty() && row.kind != K::bridge_only && megatron_argument_by_dest(std::string(row.dest)) == nullptr) {
      throw Error(fmt::format("{}.{}: {} is not a Megatron-LM destination", row.section, row.field, row.dest),
                  "bridge mapping table");
    }
  }
}

std::vector<BridgeFieldRow> bridge_mapping_table() {
  return std::vector<BridgeFieldRow>(std::begin(bridge_field_rows), std::end(bridge_field_rows));
}

}  // namespace budget::interop_detail
