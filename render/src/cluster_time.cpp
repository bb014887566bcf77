#include "budget_render/cluster_time.hpp"

#include <string>

#include <nlohmann/json.hpp>

namespace budget::render {

namespace {
/// The compute's shares by provenance (time_model.hpp, TimeProvenance), each named.
nlohmann::ordered_json provenance_json(const ClusterStepTime& t) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < time_provenance_count; ++k) {
    out[std::string(to_string(static_cast<TimeProvenance>(k)))] = t.provenance_share[k];
  }
  return out;
}

/// Each cost line and the runs that validated it (cost_line_validation()).
nlohmann::ordered_json validation_json(const ClusterStepTime& t) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const CostLineValidation& v : cost_line_validation(t)) {
    nlohmann::ordered_json by = nullptr;
    if (v.nearest != nullptr) {
      const ValidationRecord& r = *v.nearest;
      by = {{"gpu", r.gpu},
            {"precision", r.precision},
            {"model_kind", r.model_kind},
            {"models", r.models},
            {"runs_file", r.runs_file},
            {"runs_fitted", r.fitted},
            {"median_abs_error", r.median_error},
            {"worst_abs_error", r.worst_error},
            {"gpus", {r.gpus.min, r.gpus.max}},
            {"tp", {r.tp.min, r.tp.max}},
            {"pp", {r.pp.min, r.pp.max}},
            {"cp", {r.cp.min, r.cp.max}},
            {"ep", {r.ep.min, r.ep.max}},
            {"ep_nvlink_domains", {r.ep_domains.min, r.ep_domains.max}},
            {"dispatchers", r.dispatchers}};
    }
    out.push_back({{"line", v.line},
                   {"validated_by", by},
                   {"inside_validated_box", v.nearest != nullptr && v.differences.empty()},
                   {"differences", v.differences}});
  }
  return out;
}
}  // namespace

nlohmann::ordered_json cluster_step_time_json(const ClusterStepTime& t) {
  nlohmann::ordered_json components = nlohmann::ordered_json::object();
  for (const TimeComponent& c : t.by_component) {
    components[c.name] = {{"seconds", c.seconds}, {"overlapped", c.overlapped}};
  }
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageTime& s : t.stages) {
    stages.push_back({{"pipeline_rank", s.pipeline_rank},
                      {"micro_batch_compute_seconds", s.micro_batch_compute_seconds},
                      {"compute_seconds", s.compute_seconds},
                      {"exposed_communication_seconds", s.exposed_communication_seconds},
                      {"overlapped_communication_seconds", s.overlapped_communication_seconds},
                      {"seconds", s.seconds}});
  }
  nlohmann::ordered_json out{{"seconds_per_step", t.seconds_per_step},
                             {"tokens_per_step", t.tokens_per_step},
                             {"tokens_per_second_per_gpu", t.tokens_per_second_per_gpu},
                             {"mfu", t.mfu},
                             {"mfu_denominator", t.mfu_denominator},
                             {"slowest_stage", t.slowest_stage},
                             {"by_component", components},
                             {"stages", stages},
                             {"out_of_range", t.out_of_range},
                             {"compute_timed_on",
                              {{"profile_gpu", t.profile_gpu},
                               {"same_gpu_as_cluster", t.profile_gpu_is_cluster_gpu},
                               {"rescaled", false},
                               {"memory_bound_share", t.memory_bound_share},
                               {"stack", t.stack},
                               {"fp8_recipe", std::string(to_string(t.fp8_recipe))},
                               {"provenance", provenance_json(t)},
                               {"run_fit", t.run_fit_precision ? nlohmann::ordered_json(to_string(*t.run_fit_precision))
                                                                : nlohmann::ordered_json(nullptr)}}},
                             {"validation", validation_json(t)},
                             {"notes", t.notes}};
  return out;
}

nlohmann::ordered_json run_cost_json(const RunCost& run) {
  return {{"wall_clock_seconds", run.wall_clock_seconds}, {"gpu_hours", run.gpu_hours}, {"steps", run.steps}};
}

}  // namespace budget::render
