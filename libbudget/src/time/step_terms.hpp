#pragma once
// Private: the uncorrected per-op terms of a step (time_step.cpp), shared by predict_step_time(),
// predict_layer_time() and the layer correction's fit (layer_fit.cpp).

#include <string>
#include <vector>

#include "budget/time_model.hpp"

namespace budget::detail {

/// One op of the op list over a step, before the layer correction.
struct OpTerm {
  OpStepTime time;                     ///< seconds_per_step: the per-op predictions × executed layers
  TimeClass cls = TimeClass::gemm;
  double seconds_per_execution = 0;    ///< one execution (one layer) of the op
  double launches_per_execution = 0;
  bool layer_op = true;                ///< false for the model-level ops (embedding, LM head, final norm)
};

struct StepTerms {
  std::vector<OpTerm> ops;  ///< in op-list order, every op that is timed (zero times included)
  std::string attention_backend;
  std::string attention_backend_reason;
  double forward_flops_per_token = 0;
};

/// The op list of `config` under `workload` timed by `model`'s per-op fit alone.
/// How the per-op times are predicted: `rows` through TimeModel::predict() with its notes and flags
/// (the attention backend recorded), `indexed` through TimeModel::predict_ms() (the same times, no
/// notes, flags or backend).
/// `timed`, when set, keeps only the ops whose kind it accepts (the others are left out of `ops` and
/// of forward_flops_per_token): each op's term depends on that op alone, so the kept terms are those
/// of the whole list, bit for bit (the cluster's part times, cluster_time.cpp).
enum class StepTermsPath { rows, indexed };
StepTerms step_terms(const TimeModel& model, const ArchConfig& config, const Workload& workload,
                     StepTermsPath path = StepTermsPath::rows, bool (*timed)(OpKind, const void*) = nullptr,
                     const void* timed_context = nullptr);

/// The workload of a layer row: `tokens` tokens in causal documents of `doc_len` tokens
/// ((doc_len + 1)/2 mean attended keys), forward + backward (3 passes).
Workload layer_workload(std::int64_t tokens, std::int64_t doc_len);

/// The layer correction fitted on `layers` with `model`'s per-op fit (layer_fit.cpp); the backend
/// map is the caller's.
LayerCorrection fit_layer_correction(const TimeModel& model, const std::vector<CalibrationLayerRow>& layers);

}  // namespace budget::detail
