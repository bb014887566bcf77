// Fitting the step-time model's factors to measured runs (run_fit.hpp; docs/calibration.md,
// "Calibrating from runs").
#include "budget/run_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "budget/cluster_time.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/progress.hpp"
#include "budget/training_memory.hpp"
#include "runs/run_detail.hpp"
#include "runs/run_plausibility.hpp"
#include "time/time_fit.hpp"

namespace budget {

namespace {

/// The fitted numbers in their order: compute gemm, attention, expert GEMMs, memory-bound; links
/// intra-node, inter-node, all-to-all; µs per launch; the constant per step. The first seven are
/// factors (unit: 1, a prior pulls them to 1); the launch cost's unit is 1 µs (no prior).
constexpr std::size_t run_fit_params = 9, run_fit_factors = 7;

CalibrationRunFit fit_with(Precision precision, const std::array<double, run_fit_params>& f) {
  CalibrationRunFit fit;
  fit.precision = precision;
  fit.gemm = f[0];
  fit.attention = f[1];
  fit.expert_gemms = f[2];
  fit.memory_bound = f[3];
  fit.intra_node = f[4];
  fit.inter_node = f[5];
  fit.all_to_all = f[6];
  fit.launch_us = f[7];
  fit.overhead_s = f[8];
  return fit;
}

/// Time models of one profile, keyed by (precision, the doubled factor or −1, CUDA graphs, the graphed
/// modules' bits, main-gradient bytes).
class RunModels {
 public:
  RunModels(const CalibrationProfile& profile, const RunPricing& pricing) : profile_(profile), pricing_(pricing) {
    profile_.run_fits.clear();
    tie_expert_ = std::none_of(profile_.rows.begin(), profile_.rows.end(),
                               [](const CalibrationRow& row) { return row.op == ProfileOp::expert_gemms; });
  }

  /// The expert GEMMs take the GEMM factor: on a profile without expert_gemms rows the Megatron-Core
  /// stack times the grouped GEMMs from the GEMM rows (the same kernels' rate, step_stack.cpp), so the
  /// machine's GEMM rate is one number for both.
  bool tie_expert() const { return tie_expert_; }

  /// The model of `run`'s recipe (what the time model reads of it: the FP8 recipe and the
  /// main-gradient bytes) and CUDA graphs, with factor `doubled` doubled (−1: none).
  const TimeModel& model(const MeasuredRun& run, int doubled) {
    const Fp8Recipe recipe = run.layout.fp8;
    const CudaGraphModules& g = run.cuda_graph_modules;
    const int graphed = (g.attn ? 1 : 0) | (g.mlp ? 2 : 0) | (g.moe ? 4 : 0) | (g.moe_router ? 8 : 0) |
                        (g.moe_preprocess ? 16 : 0) | (g.mamba ? 32 : 0);
    const auto key =
        std::make_tuple(static_cast<int>(recipe), doubled, run.cuda_graphs, graphed, main_grad_bytes(run.layout));
    auto it = models_.find(key);
    if (it != models_.end()) return *it->second;
    std::array<double, run_fit_params> f{1, 1, 1, 1, 1, 1, 1, 0, 0};
    if (doubled >= 0) f[static_cast<std::size_t>(doubled)] += 1.0;  // a factor doubled, or 1 µs a launch
    if (doubled == 0 && tie_expert_) f[2] += 1.0;
    CalibrationProfile p = profile_;
    p.run_fits = {fit_with(kernel_precision(recipe), f)};
    TimeModelOptions o;
    o.recipe = run.layout;
    o.cuda_graphs = run.cuda_graphs;
    o.cuda_graph_modules = run.cuda_graph_modules;
    o.host_launch_seconds = pricing_.host_launch_seconds;
    return *models_.emplace(key, std::make_unique<TimeModel>(p, o)).first->second;
  }

 private:
  CalibrationProfile profile_;
  RunPricing pricing_;
  bool tie_expert_ = false;
  std::map<std::tuple<int, int, bool, int, double>, std::unique_ptr<TimeModel>> models_;
};

double step_seconds(const TimeModel& model, const MeasuredRun& run) {
  const TrainingMemory memory = training_memory(run.config, run.layout, run.cluster, run.id);
  return cluster_step_time(model, run.config, memory, run.cluster, runs_detail::run_time_options(run)).seconds_per_step;
}

/// The run's step at unit factors and its regressors (the change of the step when each factor is
/// doubled; the constant's regressor is 1), and what the regressors do not add up to: the step is
/// not linear in the factors (the slowest stage, the EP overlap's windows, the DP overlap's excess),
/// so the fit predicts
///   step(f) = remainder + Σ_k f_k·x_k,   remainder = before − Σ_k x_k (at unit factors, no constant),
/// which is the model's own step at unit factors (a group no run fits predicts its runs as before).
struct RunTerms {
  double before = 0;
  double remainder = 0;
  std::array<double, run_fit_params> x{};
};

RunTerms run_terms(RunModels& models, const MeasuredRun& run) {
  RunTerms t;
  t.before = step_seconds(models.model(run, -1), run);
  for (int k = 0; k < static_cast<int>(run_fit_params) - 1; ++k) {
    // The launch cost is not fitted (its regressor left 0, so it stays 0): on the handed-over runs
    // it came out at 55 µs a launch, unphysical, and the leave-one-run-out median rose from 6.6% to
    // 8.7% (docs/calibration.md, "Calibrating from runs"). A profile may still carry one.
    if (k == 7 || (k == 2 && models.tie_expert())) continue;
    t.x[static_cast<std::size_t>(k)] = std::max(0.0, step_seconds(models.model(run, k), run) - t.before);
  }
  double linear = 0.0;
  for (std::size_t k = 0; k < run_fit_factors; ++k) linear += t.x[k];
  t.remainder = t.before - linear;
  t.x[run_fit_params - 1] = 1.0;
  return t;
}

/// The factors fitted to `terms` (relative error, non-negative), with a prior of one run's weight
/// pulling each factor to 1.
std::array<double, run_fit_params> fit_terms(const std::vector<std::pair<RunTerms, double>>& terms, bool tie_expert) {
  std::vector<detail::TimeSample> samples;
  for (const auto& [t, measured] : terms) {
    detail::TimeSample s;
    s.features.assign(t.x.begin(), t.x.end());
    s.ms = measured - t.remainder;  // the regressors' part of the measured step
    s.relative_to_ms = measured;      // the error relative to the step
    samples.push_back(std::move(s));
  }
  for (std::size_t k = 0; k < run_fit_factors; ++k) {
    detail::TimeSample prior;
    prior.features.assign(run_fit_params, 0.0);
    prior.features[k] = 1.0;
    prior.ms = 1.0;
    samples.push_back(std::move(prior));
  }
  const std::vector<double> beta = detail::fit_nonnegative_relative(samples);
  std::array<double, run_fit_params> f{1, 1, 1, 1, 1, 1, 1, 0, 0};
  for (std::size_t k = 0; k < run_fit_params && k < beta.size(); ++k) f[k] = beta[k];
  if (tie_expert) f[2] = f[0];
  return f;
}

double predict_terms(const RunTerms& t, const std::array<double, run_fit_params>& f) {
  double s = t.remainder;
  for (std::size_t k = 0; k < run_fit_params; ++k) s += f[k] * t.x[k];
  return s;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// A key of a run without its micro-batch count: runs that share it differ only in how many
/// micro-batches a step runs.
std::string run_shape_key(const MeasuredRun& r) {
  const ParallelLayout& l = r.layout;
  return fmt::format("{}|{}|{} {} {} {} {} {} {} {} {}|{}", arch_config_to_json(r.config, 0), r.cluster.gpu_name, l.tp,
                     l.pp, l.virtual_stages, l.ep, l.cp, l.gpu_count(), l.data_parallel(), l.micro_batch_size, l.seq_len,
                     precision_name(r.layout.fp8));
}

/// Whether the fitted runs identify a constant per step: two of them that differ only in their
/// micro-batch count (a step's fixed part is then what their times do not share). Without such a
/// pair a constant would take up any factor's share of the runs' time (on the Megatron-Bridge groups
/// it came out at 0.2-0.7 s a step, unphysical): it is not fitted.
bool constant_identified(const std::vector<const MeasuredRun*>& runs, const std::vector<std::size_t>& fitted) {
  std::map<std::string, std::set<std::int64_t>> micro_batches;
  for (std::size_t i : fitted) micro_batches[run_shape_key(*runs[i])].insert(runs[i]->layout.micro_batches);
  return std::any_of(micro_batches.begin(), micro_batches.end(), [](const auto& kv) { return kv.second.size() > 1; });
}

/// The fitted runs left out one at a time: every one up to this many, else this many evenly spaced
/// (the k-th of K at ⌊k·n / K⌋). A fit on n runs costs O(n), so the leave-one-run-out costs O(K·n):
/// linear in the runs (4,000 runs: 199 s when each was left out).
constexpr std::size_t max_leave_one_out_runs = 100;

/// Sets every fitted run's prediction (`fit_index[j]` of out.runs has terms fitted[j]): by the fit
/// of the others for the runs left out (max_leave_one_out_runs), by the fit `all` of every run for
/// the rest (in_sample); returns the left-out runs' |predicted / measured − 1|.
std::vector<double> leave_one_out(const std::vector<std::pair<RunTerms, double>>& fitted, bool tie_expert,
                                  const std::array<double, run_fit_params>& all, const std::vector<std::size_t>& fit_index,
                                  RunFitResult& out);

constexpr std::string_view pricing_runs = "calibrate --from-runs (runs priced)";
constexpr std::string_view leaving_one_out = "calibrate --from-runs (leave-one-run-out fits)";

/// One precision's fit: the runs' terms, the leave-one-run-out errors, the validation.
RunFitResult fit_precision(RunModels& models, const std::vector<const MeasuredRun*>& runs, Fp8Recipe recipe,
                           const std::string& runs_name) {
  RunFitResult out;
  std::vector<std::pair<RunTerms, double>> fit_terms_list;
  std::vector<std::size_t> fit_index, validate_index;
  std::vector<RunTerms> all_terms(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    report_progress(pricing_runs, i, runs.size());
    RunPrediction p{runs[i]->id, runs[i]->role, runs[i]->step_time_s, 0, 0, ""};
    try {
      const MeasuredRun& r = *runs[i];
      p.skipped = runs_detail::implausible_run_reason(models.model(r, -1), r);
      if (p.skipped.empty()) {
        all_terms[i] = run_terms(models, r);
        p.before_s = all_terms[i].before;
        if (r.memory_gib >= 0) {
          p.measured_memory_gib = r.memory_gib;
          p.predicted_memory_gib = training_memory(r.config, r.layout, r.cluster, r.id).peak_bytes / 1073741824.0;
        }
        (r.role == "fit" ? fit_index : validate_index).push_back(i);
      }
    } catch (const TimeLimitError&) {
      throw;
    } catch (const Error& e) {
      p.skipped = e.what();
    }
    out.runs.push_back(p);
  }
  report_progress(pricing_runs, runs.size(), runs.size());
  if (!constant_identified(runs, fit_index)) {
    for (RunTerms& t : all_terms) t.x[run_fit_params - 1] = 0.0;
  }
  for (std::size_t i : fit_index) fit_terms_list.emplace_back(all_terms[i], runs[i]->step_time_s);
  const std::array<double, run_fit_params> f = fit_terms(fit_terms_list, models.tie_expert());
  const std::vector<double> loo = leave_one_out(fit_terms_list, models.tie_expert(), f, fit_index, out);
  std::vector<double> validation, before;
  for (std::size_t i : validate_index) {
    out.runs[i].predicted_s = predict_terms(all_terms[i], f);
    validation.push_back(std::abs(out.runs[i].predicted_s / runs[i]->step_time_s - 1.0));
  }
  for (const RunPrediction& p : out.runs) {
    if (p.skipped.empty()) before.push_back(std::abs(p.before_s / p.measured_s - 1.0));
  }
  out.fit = fit_with(kernel_precision(recipe), f);
  out.fit.runs = runs_name;
  for (std::size_t i : fit_index) out.fit.fitted_on.push_back(runs[i]->id);
  for (std::size_t i : validate_index) out.fit.validated_on.push_back(runs[i]->id);
  out.fit.loo_median_error = median_of(loo);
  out.fit.loo_max_error = loo.empty() ? 0.0 : *std::max_element(loo.begin(), loo.end());
  out.validation_median_error = median_of(validation);
  out.validation_max_error = validation.empty() ? 0.0 : *std::max_element(validation.begin(), validation.end());
  out.before_median_error = median_of(before);
  out.before_max_error = before.empty() ? 0.0 : *std::max_element(before.begin(), before.end());
  return out;
}

std::vector<double> leave_one_out(const std::vector<std::pair<RunTerms, double>>& fitted, bool tie_expert,
                                  const std::array<double, run_fit_params>& all, const std::vector<std::size_t>& fit_index,
                                  RunFitResult& out) {
  const std::size_t n = fitted.size(), left_out = std::min(n, max_leave_one_out_runs);
  for (std::size_t j = 0; j < n; ++j) {
    RunPrediction& p = out.runs[fit_index[j]];
    p.predicted_s = predict_terms(fitted[j].first, all);
    p.in_sample = true;
  }
  std::vector<double> errors;
  for (std::size_t k = 0; k < left_out; ++k) {
    report_progress(leaving_one_out, k, left_out);
    const std::size_t j = k * n / left_out;
    std::vector<std::pair<RunTerms, double>> others = fitted;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(j));
    RunPrediction& p = out.runs[fit_index[j]];
    p.predicted_s = predict_terms(fitted[j].first, fit_terms(others, tie_expert));
    p.in_sample = false;
    errors.push_back(std::abs(p.predicted_s / p.measured_s - 1.0));
  }
  report_progress(leaving_one_out, left_out, left_out);
  out.loo_runs = left_out;
  return errors;
}

/// budget::Error naming each run and why it was skipped when no run of `gpu` could be used.
void throw_if_every_run_skipped(const std::vector<RunFitResult>& fits, const std::string& gpu, const std::string& runs_name) {
  std::string reasons;
  std::size_t skipped = 0;
  for (const RunFitResult& f : fits) {
    for (const RunPrediction& p : f.runs) {
      if (p.skipped.empty()) return;
      if (++skipped <= 5) reasons += fmt::format("{}run {}: {}", reasons.empty() ? "" : "; ", p.id, p.skipped);
    }
  }
  throw Error(fmt::format("every one of the {} runs of {} was skipped, nothing to fit: {}{}", skipped, gpu, reasons,
                          skipped > 5 ? fmt::format("; and {} more", skipped - 5) : std::string()),
              runs_name);
}

}  // namespace

std::vector<RunFitResult> fit_measured_runs(const CalibrationProfile& profile, const std::vector<MeasuredRun>& runs,
                                            const std::string& runs_name, const std::string& gpu,
                                            const RunPricing& pricing) {
  const std::string wanted = gpu.empty() ? profile.device.name : gpu;
  RunModels models(profile, pricing);
  std::vector<RunFitResult> out;
  for (const Fp8Recipe recipe :
       {Fp8Recipe::none, Fp8Recipe::delayed, Fp8Recipe::tensorwise, Fp8Recipe::blockwise, Fp8Recipe::mxfp8}) {
    std::vector<const MeasuredRun*> selected;
    for (const MeasuredRun& r : runs) {
      if (r.gpu == wanted && r.layout.fp8 == recipe) selected.push_back(&r);
    }
    if (!selected.empty()) out.push_back(fit_precision(models, selected, recipe, runs_name));
  }
  if (out.empty()) throw Error(fmt::format("no run of {} in {}", wanted, runs_name), "from_runs");
  throw_if_every_run_skipped(out, wanted, runs_name);
  return out;
}

double predict_measured_run(const CalibrationProfile& profile, const MeasuredRun& run, const RunPricing& pricing) {
  TimeModelOptions o;
  o.recipe = run.layout;
  o.cuda_graphs = run.cuda_graphs;
  o.cuda_graph_modules = run.cuda_graph_modules;
  o.host_launch_seconds = pricing.host_launch_seconds;
  return step_seconds(TimeModel(profile, o), run);
}

}  // namespace budget
