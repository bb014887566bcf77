// Which measured runs validated each cost line of a step, and how far a priced step lies from them
// (issue 42 item 5; docs/calibration.md, "Which runs validated each cost line").
//
// A record is one group of runs `calibrate --from-runs` fitted: one GPU, training precision and model
// kind, with its leave-one-run-out |error| (one run: the model alone). Its cost lines are those its
// runs' steps exercise: every run prices GEMMs of its precision, attention, the DP collectives and the
// optimizer step; MoE runs the expert GEMMs and the EP all-to-all, and the expert-DP collectives where
// EP is below the GPU count (Mixtral on 64 and 256 GPUs at EP 8, GB300 on 32 to 256); TP, PP and CP
// where a run's layout has them. A record's box is its fitted runs' GPU, precision and model kind and,
// for the collective lines, their layouts: the GPU count, the line's own parallel size (EP, TP, PP, CP)
// and, for the all-to-all, the dispatcher. A priced step's line is matched to the record exercising it
// with the fewest differences in GPU, precision and kind, then in layout (ties: the most runs fitted):
// none is "inside the validated box".

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/cluster_time.hpp"

namespace budget {

namespace {
const std::vector<std::string> moe_lines{"gemm", "attention", "expert_gemms", "ep", "dp", "optimizer"};
const std::vector<std::string> moe_edp_lines{"gemm", "attention", "expert_gemms", "ep", "dp", "expert_dp", "optimizer"};
const std::vector<std::string> mixtral_lines{"gemm", "attention", "expert_gemms", "ep", "dp", "expert_dp",
                                             "tp",   "pp",        "cp",           "optimizer"};
const std::vector<std::string> dense_lines{"gemm", "attention", "dp", "optimizer"};
const std::vector<std::string> dense_tp_pp_lines{"gemm", "attention", "dp", "tp", "pp", "optimizer"};
const std::vector<std::string> simumax_lines{"gemm", "attention", "expert_gemms", "ep", "dp", "tp", "pp", "cp", "optimizer"};

const std::string moe_runs = "data/runs/moe_runs.jsonl";
const std::string dense_runs = "data/runs/measured_runs.jsonl";
const std::vector<std::string> hybridep{"flex-hybridep"};
const std::vector<std::string> alltoall{"alltoall"};

/// The fitted runs' layouts (ValidationRecord's box): GPU count, TP, PP, CP, EP and dispatchers.
struct Box {
  SizeRange gpus, tp, pp, cp, ep, ep_domains;
  std::vector<std::string> dispatchers;
};

/// One group's record: what it is, its figures, the lines its runs exercise and their layouts.
ValidationRecord record(std::string gpu, std::string precision, std::string model_kind, std::string models,
                        const std::string& runs_file, int fitted, double median, double worst,
                        const std::vector<std::string>& lines, Box box) {
  ValidationRecord r;
  r.gpu = std::move(gpu);
  r.precision = std::move(precision);
  r.model_kind = std::move(model_kind);
  r.models = std::move(models);
  r.runs_file = runs_file;
  r.fitted = fitted;
  r.median_error = median;
  r.worst_error = worst;
  r.lines = lines;
  r.gpus = box.gpus;
  r.tp = box.tp;
  r.pp = box.pp;
  r.cp = box.cp;
  r.ep = box.ep;
  r.ep_domains = box.ep_domains;
  r.dispatchers = std::move(box.dispatchers);
  return r;
}

/// One MoE run fitted: its |error| is the model's alone, median = worst = |signed|.
ValidationRecord one_run(std::string gpu, std::string precision, std::string models, double signed_error, Box box) {
  ValidationRecord r = record(std::move(gpu), std::move(precision), "MoE", std::move(models), moe_runs, 1,
                              std::abs(signed_error), std::abs(signed_error), moe_lines, std::move(box));
  r.signed_error = signed_error;
  return r;
}

const Box qwen3_h100{{16, 16}, {1, 1}, {1, 1}, {1, 1}, {16, 16}, {2, 2}, hybridep};
const Box qwen3_8_hybridep{{8, 8}, {1, 1}, {1, 1}, {1, 1}, {8, 8}, {1, 1}, hybridep};
const Box qwen3_8_alltoall{{8, 8}, {1, 1}, {1, 1}, {1, 1}, {8, 8}, {1, 1}, alltoall};
const Box mixtral{{64, 256}, {1, 2}, {1, 4}, {1, 8}, {8, 8}, {1, 1}, alltoall};
const Box llama_8b{{8, 8}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {}};
}  // namespace

/// The MoE runs (data/runs/moe_runs.jsonl, fitted on each GPU's published profile, 2026-12-07, with
/// TE's FP8 quantize kernels, the fitted host time per launch and partial CUDA graphs) and the dense
/// and SimuMax runs (data/runs/measured_runs.jsonl, the shipped profiles' run_fits, refitted
/// 2026-12-07 at the same host time per launch).
const std::vector<ValidationRecord>& validation_records() {
  static const std::vector<ValidationRecord> records{
      record("NVIDIA H100", "bf16", "MoE", "Qwen3-30B-A3B, 16 GPUs, EP 16, HybridEP", moe_runs, 4, 0.029, 0.078, moe_lines,
             qwen3_h100),
      one_run("NVIDIA H100", "fp8-tensorwise", "Qwen3-30B-A3B, 16 GPUs, EP 16, HybridEP", 0.020, qwen3_h100),
      record("NVIDIA B200", "fp8-delayed", "MoE", "Mixtral 8x7B (64 GPUs, EP 8), 8x22B (256 GPUs, TP 2, PP 4, CP 8, EP 8)",
             moe_runs, 2, 0.132, 0.175, mixtral_lines, mixtral),
      one_run("NVIDIA B200", "fp8-tensorwise", "Qwen3-30B-A3B, 8 GPUs, EP 8, all-to-all", -0.321, qwen3_8_alltoall),
      one_run("NVIDIA B200", "mxfp8", "Qwen3-30B-A3B, 8 GPUs, EP 8, HybridEP", -0.196, qwen3_8_hybridep),
      record("NVIDIA GB200", "fp8-delayed", "MoE", "Mixtral 8x7B (64 GPUs, EP 8), 8x22B (256 GPUs, TP 2, PP 4, CP 8, EP 8)",
             moe_runs, 2, 0.123, 0.199, mixtral_lines, mixtral),
      one_run("NVIDIA GB200", "fp8-tensorwise", "Qwen3-30B-A3B, 8 GPUs, EP 8, all-to-all", -0.270, qwen3_8_alltoall),
      one_run("NVIDIA GB200", "mxfp8", "Qwen3-30B-A3B, 8 GPUs, EP 8, HybridEP", -0.010, qwen3_8_hybridep),
      one_run("NVIDIA B300", "mxfp8", "Qwen3-30B-A3B, 8 GPUs, EP 8, HybridEP", 0.040, qwen3_8_hybridep),
      record("NVIDIA GB300", "mxfp8", "MoE", "Qwen3-30B-A3B, 8 to 256 GPUs, EP 8, HybridEP", moe_runs, 6, 0.029, 0.034,
             moe_edp_lines, {{8, 256}, {1, 1}, {1, 1}, {1, 1}, {8, 8}, {1, 1}, hybridep}),
      record("NVIDIA H100", "fp8-tensorwise", "dense", "Llama-3 70B, 64 GPUs, TP 4, PP 8", dense_runs, 6, 0.0163, 0.0369,
             dense_tp_pp_lines, {{64, 64}, {4, 4}, {8, 8}, {1, 1}, {1, 1}, {1, 1}, {}}),
      record("NVIDIA B200", "bf16", "dense and MoE", "SimuMax: Llama-3 70B/405B and DeepSeek-V2/V3 trimmed, 8 GPUs",
             dense_runs, 31, 0.0711, 0.2029, simumax_lines, {{8, 8}, {1, 8}, {1, 2}, {1, 8}, {1, 8}, {1, 1}, alltoall}),
      record("NVIDIA B200", "fp8-tensorwise", "dense", "Llama-3 8B, 8 GPUs", dense_runs, 2, 0.0207, 0.0343, dense_lines,
             llama_8b),
      record("NVIDIA B200", "mxfp8", "dense", "Llama-3 8B, 8 GPUs", dense_runs, 2, 0.0441, 0.0469, dense_lines, llama_8b),
      record("NVIDIA GB200", "fp8-tensorwise", "dense", "Llama-3 8B, 8 GPUs", dense_runs, 2, 0.0479, 0.0509, dense_lines,
             llama_8b),
      record("NVIDIA GB200", "mxfp8", "dense", "Llama-3 8B and 70B, 8 to 64 GPUs", dense_runs, 7, 0.0203, 0.0449,
             dense_tp_pp_lines, {{8, 64}, {1, 2}, {1, 4}, {1, 1}, {1, 1}, {1, 1}, {}}),
  };
  return records;
}

StepShape step_shape_of(const ParallelLayout& l, bool moe, std::int64_t nvlink_domain) {
  StepShape s{l.gpu_count(), l.tp, l.pp, l.cp, l.ep, group_placement(l.ep, l.expert_tp(), nvlink_domain).nodes, ""};
  if (moe) {
    s.dispatcher = l.dispatcher != MoeDispatcher::flex ? std::string(to_string(l.dispatcher))
                   : l.moe_memory.hybridep             ? "flex-hybridep"
                                                       : "flex-deepep";
  }
  return s;
}

namespace {
/// The run fit's spelling of the step's precision (the one precision name table; FP8 "none" is bf16).
std::string precision_of(const ClusterStepTime& t) { return std::string(precision_name(t.fp8_recipe)); }

/// The cost line a component of the step belongs to ("" for one no record speaks of: the run fit's
/// constant).
std::string line_of_component(const std::string& name) {
  for (const char* prefix : {"expert_dp", "ep", "dp", "tp", "pp", "cp"}) {
    if (name.rfind(prefix, 0) == 0) return prefix;
  }
  if (name == "bubble") return "pp";
  if (name == "overhead" || name == "compute") return "";
  return name;
}

std::string range_text(const SizeRange& r) {
  return r.min == r.max ? fmt::format("{}", r.min) : fmt::format("{} to {}", r.min, r.max);
}

/// A collective line's own sizes: EP (and the NVLink domains its group spans) for the all-to-all, TP,
/// PP (p2p and the bubble), CP; the data-parallel lines have none beyond the GPU count.
struct LineSize {
  const char* key;    ///< the cost line
  const char* label;  ///< as the difference names it
  SizeRange ValidationRecord::*validated;
  std::int64_t StepShape::*priced;
};
constexpr LineSize line_sizes[] = {
    {"ep", "EP size", &ValidationRecord::ep, &StepShape::ep},
    {"ep", "NVLink domains an EP group spans", &ValidationRecord::ep_domains, &StepShape::ep_domains},
    {"tp", "TP size", &ValidationRecord::tp, &StepShape::tp},
    {"pp", "PP size", &ValidationRecord::pp, &StepShape::pp},
    {"cp", "CP size", &ValidationRecord::cp, &StepShape::cp},
};

/// Where a collective line (`key`) of the step lies outside the record's layouts: the GPU count, the
/// line's own size, and for the all-to-all the dispatcher. Compute lines and the optimizer compare
/// none of these (their cost does not grow with the GPU count).
void layout_differences(const ValidationRecord& r, const StepShape& s, const std::string& key,
                        std::vector<std::string>& out) {
  static const std::vector<std::string> collectives{"ep", "dp", "expert_dp", "tp", "pp", "cp"};
  if (std::find(collectives.begin(), collectives.end(), key) == collectives.end()) return;
  if (!r.gpus.contains(s.gpus)) {
    out.push_back(fmt::format("GPU count (validated {}, priced {})", range_text(r.gpus), s.gpus));
  }
  for (const LineSize& size : line_sizes) {
    if (key != size.key || (r.*size.validated).contains(s.*size.priced)) continue;
    out.push_back(fmt::format("{} (validated {}, priced {})", size.label, range_text(r.*size.validated), s.*size.priced));
  }
  if (key == "ep" && !s.dispatcher.empty() &&
      std::find(r.dispatchers.begin(), r.dispatchers.end(), s.dispatcher) == r.dispatchers.end()) {
    out.push_back(fmt::format("dispatcher (validated {}, priced {})", fmt::join(r.dispatchers, " and "), s.dispatcher));
  }
}

/// Where the step differs from the record in what the record is: GPU, precision, model kind.
std::vector<std::string> identity_differences(const ValidationRecord& r, const ClusterStepTime& t,
                                              const std::string& precision) {
  std::vector<std::string> out;
  if (t.profile_gpu.rfind(r.gpu, 0) != 0) {
    out.push_back(fmt::format("GPU (validated on {}, priced on {})", r.gpu, t.profile_gpu));
  }
  if (r.precision != precision) {
    out.push_back(fmt::format("precision (validated {}, priced {})", r.precision, precision));
  }
  const std::string kind = t.moe ? "MoE" : "dense";
  if (r.model_kind.find(kind) == std::string::npos) {
    out.push_back(fmt::format("model kind (validated {}, priced {})", r.model_kind, kind));
  }
  return out;
}

/// The record nearest to the step's line `key`: the fewest differences in GPU, precision and model
/// kind, then the fewest in the line's layout sizes, then the most runs fitted.
CostLineValidation validate_line(const std::string& key, std::string shown, const ClusterStepTime& t,
                                 const std::string& precision) {
  CostLineValidation v;
  v.line = std::move(shown);
  std::pair<std::size_t, std::size_t> best{0, 0};
  for (const ValidationRecord& r : validation_records()) {
    if (std::find(r.lines.begin(), r.lines.end(), key) == r.lines.end()) continue;
    std::vector<std::string> d = identity_differences(r, t, precision);
    const std::size_t identity = d.size();
    layout_differences(r, t.shape, key, d);
    const std::pair<std::size_t, std::size_t> distance{identity, d.size() - identity};
    const bool better =
        v.nearest == nullptr || distance < best || (distance == best && r.fitted > v.nearest->fitted);
    if (!better) continue;
    v.nearest = &r;
    best = distance;
    v.differences = std::move(d);
  }
  return v;
}
}  // namespace

std::vector<CostLineValidation> cost_line_validation(const ClusterStepTime& t) {
  const std::string precision = precision_of(t);
  std::vector<CostLineValidation> out;
  out.push_back(validate_line("gemm", fmt::format("GEMMs ({})", precision), t, precision));
  out.push_back(validate_line("attention", "attention", t, precision));
  if (t.moe) out.push_back(validate_line("expert_gemms", fmt::format("expert GEMMs ({})", precision), t, precision));
  std::vector<std::string> seen;
  for (const TimeComponent& c : t.by_component) {
    const std::string key = line_of_component(c.name);
    if (key.empty() || c.seconds <= 0.0 || std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out.push_back(validate_line(key, key, t, precision));
  }
  return out;
}

}  // namespace budget
