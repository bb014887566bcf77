#pragma once
/// \file
/// Workload: how the model is trained and served, as far as the budgets depend on it: sequence
/// length, attention mask (which sets the mean number of keys a query attends to), the number of
/// forward-equivalent passes per training step and the bytes per KV-cache element.
/// Schema and defaults: docs/config.md ("Workload"); document lengths, sliding windows and
/// kernel tiles: docs/attention.md.
///
/// Thread safety: paper_workload(), causal_workload(), validate(), parse_workload() and
/// load_workload() are reentrant: concurrent calls are safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "budget/attention_cost.hpp"

namespace budget {

enum class AttentionMask {
  causal,    ///< one causal mask over the whole packed window
  document,  ///< per-document (segment) causal masks inside packed windows
};

std::string_view to_string(AttentionMask mask);

struct Workload {
  std::int64_t seq_len = 4096;  ///< packed window length (tokens)
  AttentionMask attention_mask = AttentionMask::document;
  /// Mean keys attended per query, exact causal count (Σ over queries / tokens). For document
  /// masks Σ nᵢ(nᵢ+1)/2 / Σ nᵢ over document pieces; for a causal window (seq_len + 1)/2.
  /// The default 400 reproduces the SMELT paper's published per-token FLOPs (docs/accounting.md).
  /// Derived from `doc_lengths` when that is given (docs/attention.md).
  double attended_keys = 400.0;
  /// Mean keys per query that a tiled attention kernel actually computes (whole tiles), used for
  /// time prediction only. 0 means "not known": the exact count is used. Derived (with
  /// `attention_kernel` ≠ none) as the pass-weighted mean of the forward and backward kernels:
  /// pass_weighted_keys() — forward counted P − 2 times, backward twice, for P training passes.
  double kernel_attended_keys = 0.0;
  /// Training FLOPs = training_passes × forward: 3 (forward + backward), 4 with full recompute.
  std::int64_t training_passes = 3;
  std::int64_t kv_bytes = 2;  ///< bytes per KV-cache element (2: bf16/fp16)
  /// Tokens one GPU processes per training step (its micro-batch: 8 sequences of 4096 by
  /// default). Used only for time prediction (docs/calibration.md): it sets the M dimension of
  /// every GEMM and the rows of every memory-bound op; the budgets are per token and ignore it.
  std::int64_t tokens_per_step = 8 * 4096;
  std::string description;    ///< where attended_keys came from, for reports

  /// Sliding-window attention: a query attends to at most this many keys (itself included) of
  /// its context; 0 = none.
  std::int64_t sliding_window = 0;
  /// Which launch kernel_attended_keys models: none (given or unknown), varlen (one causal launch
  /// per document piece) or dense_masked (one launch per window skipping fully masked tiles).
  AttentionLaunch attention_kernel = AttentionLaunch::none;
  AttentionTile forward_tile = default_forward_tile;    ///< kernel tile of the forward pass
  AttentionTile backward_tile = default_backward_tile;  ///< kernel tile of the backward pass
  /// Executed keys per query of the forward and of the backward kernel alone (0: not derived).
  double kernel_forward_attended_keys = 0.0;
  double kernel_backward_attended_keys = 0.0;
  /// The document-length source attended_keys was derived from, if any.
  std::optional<DocLengthsSpec> doc_lengths;

  /// kernel_attended_keys if set, else attended_keys.
  double executed_attended_keys() const { return kernel_attended_keys > 0.0 ? kernel_attended_keys : attended_keys; }

  /// seq_len, sliding_window and the tiles, for the attention model.
  AttentionGeometry attention_geometry() const {
    return AttentionGeometry{seq_len, sliding_window, forward_tile, backward_tile};
  }
};

/// The SMELT paper's workload: 4096-token packed windows, document masks, 400 mean attended keys,
/// 3 passes, 2-byte KV elements.
Workload paper_workload();

/// A causal (no document mask) window: attended_keys = (seq_len + 1)/2.
Workload causal_workload(std::int64_t seq_len);

/// Why `workload` is invalid, as one line naming `source`, the field (JSON pointer), its value and
/// what is allowed; empty when it is valid.
std::string validation_error(const Workload& workload, const std::string& source = {});
/// Throws budget::Error (naming `source` and the field) with the problem validation_error() reports.
void validate(const Workload& workload, const std::string& source = {});

/// Parses a workload JSON object; absent keys take paper_workload()'s values, except that
/// "attention_mask": "causal" derives attended_keys = (seq_len + 1)/2 (giving attended_keys then
/// is an error) and "doc_lengths" derives attended_keys (and kernel_attended_keys) from document
/// lengths (giving either then is an error). Unknown keys are errors. Relative file paths inside
/// "doc_lengths" resolve against `base_directory` (the current directory when empty).
Workload parse_workload(std::string_view json_text, const std::string& source, const std::string& base_directory = {});
/// Reads a workload file; relative paths inside it resolve against the file's directory.
Workload load_workload(const std::string& path);

}  // namespace budget
