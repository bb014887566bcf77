// The compute of one layer's parts on one GPU's shard (step_time/step_compute.hpp; docs/cluster.md,
// "Step time"): the time model's per-op predictions grouped by the part of the layer each op belongs
// to, with their memory-bound and provenance shares and the seconds of each op kind.
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "budget/ops.hpp"
#include "step_time/step_compute.hpp"
#include "time/step_terms.hpp"

namespace budget {

namespace {

/// The time classes that move bytes rather than multiply matrices (time_model.hpp, TimeClass): their
/// time follows the GPU's memory bandwidth, the others' its tensor-core rate.
bool is_memory_bound_class(TimeClass cls) {
  return cls == TimeClass::indexed || cls == TimeClass::elementwise || cls == TimeClass::glue;
}

/// predict_step_time(model, c, w).by_op's kinds and seconds, bit for bit, through the indexed path
/// (TimeModel::predict_ms(), detail::StepTermsPath::indexed): each op's corrected seconds
/// factor_class · t + launch_ms · launches, as predict_step_time() writes it, without its flags
/// and notes (tests/unit/cluster/test_layout_search.cpp compares the two paths). Only the ops of the
/// `wanted` parts are timed (each op's term is its own: the same seconds as in the whole list).
std::vector<OpStepTime> indexed_op_times(const TimeModel& model, const ArchConfig& c, const Workload& w,
                                         std::initializer_list<LayerPart> wanted, bool every_op) {
  const auto in_wanted = [](OpKind kind, const void* parts) {
    const auto& list = *static_cast<const std::initializer_list<LayerPart>*>(parts);
    return std::find(list.begin(), list.end(), op_traits(kind).part) != list.end();
  };
  const detail::StepTerms terms = detail::step_terms(model, c, w, detail::StepTermsPath::indexed,
                                                     every_op ? nullptr : +in_wanted, &wanted);
  const LayerCorrection& correction = model.layer_correction();
  std::vector<OpStepTime> out;
  for (const detail::OpTerm& term : terms.ops) {
    OpStepTime t;
    t.kind = term.time.kind;
    if (term.time.seconds_per_step <= 0) continue;
    const double launch_s = correction.launch_ms * 1e-3 * term.time.launches_per_step;
    t.seconds_per_step = correction.factor[static_cast<std::size_t>(term.cls)] * term.time.seconds_per_step + launch_s;
    out.push_back(t);
  }
  return out;
}

}  // namespace

/// Times per part of a one-layer config `c` at `tokens` tokens and `passes` training passes;
/// `indexed`: through indexed_op_times() (the same seconds, out_of_range not known, left false).
LayerPartTimes part_times(const TimeModel& model, const ArchConfig& c, Workload w, std::int64_t tokens,
                          std::int64_t passes, std::initializer_list<LayerPart> wanted, bool indexed, bool every_op) {
  w.tokens_per_step = std::max<std::int64_t>(1, tokens);
  w.training_passes = passes;
  LayerPartTimes out;
  std::vector<OpStepTime> by_op;
  if (indexed) {
    by_op = indexed_op_times(model, c, w, wanted, every_op);
  } else {
    StepTime st = predict_step_time(model, c, w);
    out.out_of_range = st.out_of_range;
    by_op = std::move(st.by_op);
  }
  for (const OpStepTime& op : by_op) {
    const LayerPart part = op_traits(op.kind).part;
    if (std::find(wanted.begin(), wanted.end(), part) == wanted.end()) continue;
    add_part_seconds(out, part, op.seconds_per_step);
    out.by_kind[static_cast<std::size_t>(op.kind)] += op.seconds_per_step;
    if (is_memory_bound_class(time_class_of(op.kind))) add_part_seconds(out.memory_bound, part, op.seconds_per_step);
    for (std::size_t k = 0; k < time_provenance_count; ++k) add_part_seconds(out.by_provenance[k], part, op.provenance_seconds[k]);
  }
  return out;
}

}  // namespace budget
