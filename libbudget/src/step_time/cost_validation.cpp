// Which measured runs validated each cost line of a step, and how far a priced step lies from them
// (issue 42 item 5; docs/calibration.md, "Which runs validated each cost line").
//
// A record is one group of runs `calibrate --from-runs` fitted: one GPU, training precision and model
// kind, with its leave-one-run-out |error| (one run: the model alone). Its cost lines are those its
// runs' steps exercise: every run prices GEMMs of its precision, attention, the DP collectives and the
// optimizer step; MoE runs the expert GEMMs and the EP all-to-all, and the expert-DP collectives where
// EP is below the GPU count (Mixtral on 64 and 256 GPUs at EP 8, GB300 on 32 to 256); TP, PP and CP
// where a run's layout has them. A priced step's line is matched to the record exercising it with the fewest differences
// (GPU, precision, model kind; ties: the most runs fitted): none is "inside the validated box".

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

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

/// One run fitted: its |error| is the model's alone, median = worst = |signed|.
ValidationRecord one_run(std::string gpu, std::string precision, std::string models, double signed_error) {
  return {std::move(gpu), std::move(precision), "MoE", std::move(models), moe_runs, 1,
          std::abs(signed_error), std::abs(signed_error), signed_error, moe_lines};
}
}  // namespace

/// The MoE runs (data/runs/moe_runs.jsonl, fitted on each GPU's published profile, 2026-12-07, with
/// TE's FP8 quantize kernels) and the dense and SimuMax runs (data/runs/measured_runs.jsonl, the shipped
/// profiles' run_fits, 2026-12-04).
const std::vector<ValidationRecord>& validation_records() {
  static const std::vector<ValidationRecord> records{
      {"NVIDIA H100", "bf16", "MoE", "Qwen3-30B-A3B, 16 GPUs, EP 16, HybridEP", moe_runs, 4, 0.029, 0.070, 0, moe_lines},
      one_run("NVIDIA H100", "fp8-tensorwise", "Qwen3-30B-A3B, 16 GPUs, EP 16, HybridEP", -0.208),
      {"NVIDIA B200", "fp8-delayed", "MoE", "Mixtral 8x7B (64 GPUs, EP 8), 8x22B (256 GPUs, TP 2, PP 4, CP 8, EP 8)",
       moe_runs, 2, 0.152, 0.164, 0, mixtral_lines},
      one_run("NVIDIA B200", "fp8-tensorwise", "Qwen3-30B-A3B, 8 GPUs, EP 8, all-to-all", -0.321),
      one_run("NVIDIA B200", "mxfp8", "Qwen3-30B-A3B, 8 GPUs, EP 8, HybridEP", -0.201),
      {"NVIDIA GB200", "fp8-delayed", "MoE", "Mixtral 8x7B (64 GPUs, EP 8), 8x22B (256 GPUs, TP 2, PP 4, CP 8, EP 8)",
       moe_runs, 2, 0.148, 0.262, 0, mixtral_lines},
      one_run("NVIDIA GB200", "fp8-tensorwise", "Qwen3-30B-A3B, 8 GPUs, EP 8, all-to-all", -0.270),
      one_run("NVIDIA GB200", "mxfp8", "Qwen3-30B-A3B, 8 GPUs, EP 8, HybridEP", -0.007),
      one_run("NVIDIA B300", "mxfp8", "Qwen3-30B-A3B, 8 GPUs, EP 8, HybridEP", 0.041),
      {"NVIDIA GB300", "mxfp8", "MoE", "Qwen3-30B-A3B, 8 to 256 GPUs, EP 8, HybridEP", moe_runs, 6, 0.029, 0.034, 0,
       moe_edp_lines},
      {"NVIDIA H100", "fp8-tensorwise", "dense", "Llama-3 70B, 64 GPUs, TP 4, PP 8", dense_runs, 6, 0.0105, 0.0309, 0,
       dense_tp_pp_lines},
      {"NVIDIA B200", "bf16", "dense and MoE", "SimuMax: Llama-3 70B/405B and DeepSeek-V2/V3 trimmed, 8 GPUs",
       dense_runs, 31, 0.0705, 0.2063, 0, simumax_lines},
      {"NVIDIA B200", "fp8-tensorwise", "dense", "Llama-3 8B, 8 GPUs", dense_runs, 2, 0.0359, 0.0491, 0, dense_lines},
      {"NVIDIA B200", "mxfp8", "dense", "Llama-3 8B, 8 GPUs", dense_runs, 2, 0.0548, 0.0576, 0, dense_lines},
      {"NVIDIA GB200", "fp8-tensorwise", "dense", "Llama-3 8B, 8 GPUs", dense_runs, 2, 0.0644, 0.0673, 0, dense_lines},
      {"NVIDIA GB200", "mxfp8", "dense", "Llama-3 8B and 70B, 8 to 64 GPUs", dense_runs, 7, 0.0190, 0.0461, 0,
       dense_tp_pp_lines},
  };
  return records;
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

std::vector<std::string> differences(const ValidationRecord& r, const ClusterStepTime& t, const std::string& precision) {
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

CostLineValidation validate_line(const std::string& key, std::string shown, const ClusterStepTime& t,
                                 const std::string& precision) {
  CostLineValidation v;
  v.line = std::move(shown);
  std::size_t best = 0;
  for (const ValidationRecord& r : validation_records()) {
    if (std::find(r.lines.begin(), r.lines.end(), key) == r.lines.end()) continue;
    std::vector<std::string> d = differences(r, t, precision);
    const bool better = v.nearest == nullptr || d.size() < best || (d.size() == best && r.fitted > v.nearest->fitted);
    if (!better) continue;
    v.nearest = &r;
    best = d.size();
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
