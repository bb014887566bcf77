// budget-profile: measures libbudget's op list on a GPU and writes calibration profiles.
//
//   budget-profile sweep --out P.json [--dry-run | --simulate] [--tokens N ...] [--gemms-from F] [--warmup W] [--repeats R]
//   budget-profile configs A.json B.json ... [--workload W.json] [--calibration P.json] [--tokens N]
//   budget-profile check
//   budget-profile collectives --out M.json [--cluster-out C.json --base-cluster B.json] [--dry-run | --simulate]
//                  [--collectives K ...] [--ranks N ...] [--min-bytes S] [--max-bytes S] [--size-factor F]
//
// Exit codes: 0 done; 1 a correctness check failed (that op's cases are not timed, the rest is
// written); 2 bad input or usage;
// 3 no usable GPU (one sentence on stderr); 4 a CUDA/cuBLAS/cuDNN call failed while measuring (the
// cases it spoiled are listed and left out; what was measured is still written).

#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/file_write.hpp"
#include "budget/link_fit.hpp"
#include "budget/profiler/collectives.hpp"
#include "budget/profiler/config_cases.hpp"
#include "budget/profiler/cuda_timer.hpp"
#include "budget/profiler/run.hpp"
#include "budget/profiler/sweep.hpp"
#include "budget/time_model.hpp"
#include "budget/version.hpp"
#include "budget/workload.hpp"
#include "profile_table.hpp"

namespace {

using namespace budget::profiler;

constexpr int exit_check_failed = 1;
constexpr int exit_input = 2;
constexpr int exit_no_gpu = 3;
constexpr int exit_device = 4;

struct CommonOptions {
  bool dry_run = false;
  bool simulate = false;
  int warmup = 3;
  int repeats = 9;
};

const std::string tool_name = std::string("budget-profile ") + budget::version_string;

void add_common(CLI::App* app, CommonOptions& o) {
  app->add_flag("--dry-run", o.dry_run, "List the cases and the estimated GPU time at H200 rates; run nothing");
  app->add_flag("--simulate", o.simulate,
                "Time with a roofline fake timer instead of a GPU (for testing the pipeline; the output says so)");
  app->add_option("--warmup", o.warmup, "Warm-up launches before timing each case")->check(CLI::Range(1, 100));
  app->add_option("--repeats", o.repeats, "Timed launches per case (the median is kept; at least 9)")
      ->check(CLI::Range(9, 1000));
}

std::unique_ptr<Timer> make_timer(const CommonOptions& o) {
  if (o.simulate) return std::make_unique<FakeTimer>();
  return make_cuda_timer(LaunchPlan{o.warmup, o.repeats});
}

/// Runs the checks and prints them; returns the ops whose checks failed (not to be timed).
std::set<std::string> run_checks(Timer& timer) {
  const auto checks = timer.check_correctness();
  std::cout << "Correctness (GPU output vs CPU float64 reference, ‖out−ref‖/‖ref‖):\n"
            << tool::checks_table(checks);
  const std::set<std::string> failed = failed_ops(checks);
  if (failed.empty()) {
    std::cout << "all checks passed\n\n";
  } else {
    std::string list;
    for (const std::string& op : failed) list += (list.empty() ? "" : ", ") + op;
    std::cout << "CHECKS FAILED for: " << list << " -- their cases are not timed\n\n";
  }
  return failed;
}

void print_estimate(const std::vector<OpCase>& cases, const LaunchPlan& plan) {
  std::map<std::string, std::int64_t> per_op;
  for (const OpCase& c : cases) ++per_op[std::string(to_string(c.op))];
  for (const auto& [op, n] : per_op) std::cout << fmt::format("  {:<22} {:>5} cases\n", op, n);
  const double seconds = estimate_sweep_seconds(cases, estimate_rates, plan);
  std::cout << fmt::format(
      "{} cases; estimated {:.0f} s on an H200 ({} warm-ups + {} timed launches each at half the H200 roofline, "
      "{:.0f} TFLOP/s and {:.0f} GB/s, plus setup)\n",
      cases.size(), seconds, plan.warmup, plan.repeats, estimate_rates.tflops, estimate_rates.gbytes_per_s);
}

/// The GEMM shapes and passes of a profile or PyTorch .jsonl file, as cases (for cross-checks).
std::vector<OpCase> gemm_cases_from(const std::string& path) {
  std::vector<OpCase> cases;
  for (const budget::CalibrationRow& r : budget::load_calibration_profile(path).rows)
    if (r.op == budget::ProfileOp::gemm) cases.push_back(gemm_case(r.shape.at("M"), r.shape.at("K"), r.shape.at("N"), r.pass));
  return cases;
}

int run_sweep(const CommonOptions& o, const std::string& out, const std::vector<std::int64_t>& tokens,
              const std::string& gemms_from) {
  SweepOptions options;
  if (!tokens.empty()) options.tokens = tokens;
  auto cases = sweep_cases(options);
  if (!gemms_from.empty()) {
    std::set<std::string> seen;
    for (const OpCase& c : cases) seen.insert(c.label());
    for (const OpCase& c : gemm_cases_from(gemms_from))
      if (seen.insert(c.label()).second) cases.push_back(c);
  }
  const LaunchPlan plan{o.warmup, o.repeats};
  if (o.dry_run) {
    print_estimate(cases, plan);
    return 0;
  }
  auto timer = make_timer(o);
  const std::set<std::string> failed = run_checks(*timer);
  RunResult run;
  run.device = timer->device();
  run.method = timer->method();
  run.simulated = timer->simulated();
  run.peaks = timer->measure_peaks();
  std::cerr << fmt::format("peaks: bf16 GEMM 8192^3 {:.1f} TFLOP/s, device copy {:.0f} GB/s\n", run.peaks.bf16_gemm_tflops,
                           run.peaks.copy_gbytes_per_s);
  std::string notes = "budget-profile sweep (cuda_profiler/README.md)";
  if (!failed.empty()) notes += "; ops not timed because their correctness checks failed:";
  for (const std::string& op : failed) notes += " " + op;
  std::vector<std::string> failures;
  try {
    time_cases_into(
        without_ops(cases, failed), *timer, run.rows,
        [](std::size_t i, std::size_t n, const MeasuredRow& r) {
          if ((i + 1) % 50 == 0 || i + 1 == n) std::cerr << fmt::format("  {}/{} {}\n", i + 1, n, r.op.label());
        },
        &failures);
  } catch (const std::exception& e) {
    // Keep what was measured: write it, marked incomplete, then report the error.
    if (!run.rows.empty()) {
      budget::write_calibration_profile(
          to_profile(run, tool_name, utc_now(), notes + "; INCOMPLETE: stopped by an error: " + e.what()), out);
      std::cerr << fmt::format("budget-profile: {} rows measured before the error were written to {}\n", run.rows.size(), out);
    }
    throw;
  }
  for (const std::string& f : failures) std::cerr << "budget-profile: not timed: " << f << "\n";
  if (!failures.empty()) notes += fmt::format("; {} cases could not be timed (a library call failed): {}", failures.size(), failures.front());
  const auto profile = to_profile(run, tool_name, utc_now(), notes);
  budget::write_calibration_profile(profile, out);
  std::cout << tool::rows_table(run.rows, run.peaks) << "\nSummary by op:\n" << tool::summary_table(run.rows, run.peaks);
  std::cout << fmt::format("device: {} (sm_{}), {} SMs; driver {}, CUDA {}, cuBLAS {}, cuDNN {}\n", run.device.name,
                           run.device.compute_capability, run.device.sm_count, run.device.driver, run.device.cuda_runtime,
                           run.device.cublas, run.device.cudnn);
  std::cout << fmt::format("peaks: bf16 GEMM {:.1f} TFLOP/s, copy {:.0f} GB/s; {} rows written to {}\n",
                           run.peaks.bf16_gemm_tflops, run.peaks.copy_gbytes_per_s, profile.rows.size(), out);
  if (!failed.empty()) return exit_check_failed;
  return failures.empty() ? 0 : exit_device;
}

int run_configs(const CommonOptions& o, const std::vector<std::string>& paths, const std::string& workload_path,
                const std::string& calibration_path, std::int64_t tokens) {
  budget::Workload workload = workload_path.empty() ? budget::paper_workload() : budget::load_workload(workload_path);
  if (tokens == 0) tokens = workload.tokens_per_step;
  workload.tokens_per_step = tokens;  // the prediction uses the same step
  std::vector<budget::ArchConfig> configs;
  std::vector<StepPlan> plans;
  for (const std::string& p : paths) {
    configs.push_back(budget::load_arch_config(p));
    plans.push_back(step_plan(configs.back(), workload, tokens));
    if (plans.back().config.empty()) plans.back().config = p;
  }
  // libbudget's prediction (time_model.hpp) from the given profile, beside the measurement.
  std::optional<budget::TimeModel> model;
  if (!calibration_path.empty()) model.emplace(budget::load_calibration_profile(calibration_path));
  // Distinct cases (configs share many shapes): each is timed once.
  std::map<std::string, OpCase> distinct;
  for (const StepPlan& plan : plans)
    for (const StepOp& s : plan.ops) distinct.emplace(s.op.label(), s.op);
  std::vector<OpCase> cases;
  for (const auto& [label, c] : distinct) cases.push_back(c);
  if (o.dry_run) {
    print_estimate(cases, LaunchPlan{o.warmup, o.repeats});
    return 0;
  }
  auto timer = make_timer(o);
  const std::set<std::string> failed = run_checks(*timer);
  std::vector<MeasuredRow> rows;
  std::vector<std::string> failures;
  time_cases_into(without_ops(cases, failed), *timer, rows, {}, &failures);
  for (const std::string& f : failures) std::cerr << "budget-profile: not timed: " << f << "\n";
  // The row used per case: the measured one (the fallback row when the first was refused).
  std::map<std::string, const MeasuredRow*> measured;
  for (const MeasuredRow& r : rows)
    if (!r.timing.refused) measured[r.op.label()] = &r;
  std::vector<std::vector<std::string>> cells{
      {"config", "tokens/step", "ms/step", "ms/layer", "us/token", "predicted ms/step", "pred/meas"}};
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const StepPlan& plan = plans[i];
    bool complete = true;
    const StepTime t = step_time(plan, [&](const StepOp& s) {
      const auto it = measured.find(s.op.label());
      if (it == measured.end()) {
        complete = false;
        return 0.0;
      }
      return it->second->timing.ms;
    });
    std::string predicted = "no --calibration", ratio;
    if (model) {
      const budget::StepTime p = budget::predict_step_time(*model, configs[i], workload);
      predicted = fmt::format("{:.3f}{}", p.seconds_per_step * 1e3, p.out_of_range ? " (out of range)" : "");
      if (t.step_ms > 0) ratio = fmt::format("{:.3f}", p.seconds_per_step * 1e3 / t.step_ms);
    }
    cells.push_back({plan.config, std::to_string(plan.tokens_per_step),
                     fmt::format("{:.3f}{}", t.step_ms, complete ? "" : " (incomplete)"), fmt::format("{:.3f}", t.layer_ms),
                     fmt::format("{:.4f}", t.per_token_us), predicted, ratio});
  }
  std::cout << tool::render(cells);
  std::cout << fmt::format("workload: seq_len {}, {} masks, mean attended keys {:.1f}; {}\n", workload.seq_len,
                           budget::to_string(workload.attention_mask), workload.attended_keys,
                           timer->simulated() ? "SIMULATED times (no GPU)" : "measured on " + timer->device().name);
  if (!failed.empty()) return exit_check_failed;
  return failures.empty() ? 0 : exit_device;
}

struct CollectivesArgs {
  std::string out, cluster_out, base_cluster;
  std::vector<std::string> kinds;
  std::vector<std::int64_t> ranks;
  std::int64_t min_bytes = CollectiveSweepOptions{}.min_bytes;
  std::int64_t max_bytes = CollectiveSweepOptions{}.max_bytes;
  std::int64_t size_factor = CollectiveSweepOptions{}.size_factor;
  std::int64_t gpus = 0;  ///< --gpus: at most this many (0: all visible; --simulate/--dry-run: the base's gpus_per_node, else 8)
};

/// The link --simulate and --dry-run assume: the base cluster's intra-node link, else the shipped
/// H200 example's (examples/clusters/h200.json: 450 GB/s, 3 us).
budget::LinkSpec assumed_link(const std::optional<budget::ClusterSpec>& base) {
  if (base) return base->intra_node;
  return budget::LinkSpec{450e9, 3e-6, "examples/clusters/h200.json"};
}

std::string format_bytes(double bytes) {
  if (bytes >= (1 << 20)) return fmt::format("{:.0f} MiB", bytes / (1 << 20));
  if (bytes >= (1 << 10)) return fmt::format("{:.0f} KiB", bytes / (1 << 10));
  return fmt::format("{:.0f} B", bytes);
}

int run_collectives(const CommonOptions& o, const CollectivesArgs& a) {
  // Every input is checked before a GPU is asked for, so bad input is exit 2 on any machine.
  if (a.out.empty() && !o.dry_run) throw budget::Error("collectives needs --out M.json (or --dry-run)", "budget-profile collectives");
  if (!a.cluster_out.empty() && a.base_cluster.empty()) {
    throw budget::Error("--cluster-out needs --base-cluster B.json: one machine measures only the intra-node link; the GPU, "
                        "its memory, compute and the inter-node link come from the base file",
                        "budget-profile collectives");
  }
  // Two outputs in one file are refused now, not after the sweep has run (OutputFiles would).
  budget::check_distinct_outputs({{"--out", a.out}, {"--cluster-out", a.cluster_out}});
  std::optional<budget::ClusterSpec> base;
  if (!a.base_cluster.empty()) base = budget::load_cluster_spec(a.base_cluster);
  CollectiveSweepOptions options;
  if (!a.kinds.empty()) {
    options.kinds.clear();
    for (const std::string& k : a.kinds) options.kinds.push_back(budget::collective_kind_from_string(k, "--collectives"));
  }
  options.ranks = a.ranks;
  options.min_bytes = a.min_bytes;
  options.max_bytes = a.max_bytes;
  options.size_factor = a.size_factor;
  const LaunchPlan plan{o.warmup, o.repeats};
  const std::int64_t planned_gpus = a.gpus > 0 ? a.gpus : (base ? base->gpus_per_node : 8);
  if (o.dry_run) {
    const auto cases = collective_sweep_cases(options, planned_gpus);
    std::map<std::string, std::int64_t> per_kind;
    for (const CollectiveCase& c : cases) ++per_kind[std::string(budget::to_string(c.kind))];
    for (const auto& [kind, n] : per_kind) std::cout << fmt::format("  {:<16} {:>5} cases\n", kind, n);
    const budget::LinkSpec link = assumed_link(base);
    std::cout << fmt::format("{} cases on {} GPUs; estimated {:.0f} s at {:.0f} GB/s and {:.1f} us per step ({} warm-ups + {} "
                             "timed launches each, plus communicator setup)\n",
                             cases.size(), planned_gpus, estimate_collective_seconds(cases, link, plan),
                             link.bandwidth_bytes_per_s * 1e-9, link.latency_s * 1e6, plan.warmup, plan.repeats);
    return 0;
  }
  std::unique_ptr<CollectiveTimer> timer;
  if (o.simulate) {
    timer = std::make_unique<FakeCollectiveTimer>(assumed_link(base), planned_gpus, 0.02);
  } else {
    // Bad options are refused before NCCL is opened (all but "ranks ≤ the GPUs", checked below).
    options.validate(std::int64_t{1} << 20);
    timer = make_nccl_collective_timer(plan, a.gpus);
  }
  const auto cases = collective_sweep_cases(options, timer->gpus());
  budget::CollectiveMeasurements m;
  m.tool = tool_name;
  m.created = utc_now();
  m.device = timer->device();
  m.method = timer->method();
  m.simulated = timer->simulated();
  m.rows = measure_collectives(cases, *timer, [](std::size_t i, std::size_t n, const budget::CollectiveMeasurement&) {
    if ((i + 1) % 25 == 0 || i + 1 == n) std::cerr << fmt::format("  {}/{} collectives timed\n", i + 1, n);
  });
  const std::vector<budget::LinkFit> fits = budget::fit_links(m.rows, "budget-profile collectives");
  const budget::LinkFit& joint = fits.back();
  budget::OutputFiles files;
  files.add(a.out, budget::collective_measurements_json(m, fits));
  if (!a.cluster_out.empty()) {
    const budget::ClusterSpec measured = measured_cluster(*base, joint, m.device, m.simulated);
    std::string notes = fmt::format(
        "intra_node fitted by {} from {} collectives on {} GPUs ({}; rows in {}). inter_node, gpu and node figures are "
        "{}'s, not measured.",
        tool_name, m.rows.size(), timer->gpus(), m.simulated ? "SIMULATED, not a measurement" : "measured", a.out,
        a.base_cluster);
    if (timer->gpus() < base->gpus_per_node) {
      notes += fmt::format(" Measured on {} of the node's {} GPUs.", timer->gpus(), base->gpus_per_node);
    }
    files.add(a.cluster_out, budget::cluster_spec_json(measured, notes));
  }
  files.commit();
  std::vector<std::vector<std::string>> cells{{"collective", "ranks", "bytes", "time us", "fitted us", "busbw GB/s"}};
  for (const budget::CollectiveMeasurement& r : m.rows) {
    const double fitted = budget::collective_seconds(r.kind, r.size_bytes, r.ranks, joint.link);
    cells.push_back({std::string(budget::to_string(r.kind)), std::to_string(r.ranks), format_bytes(r.size_bytes),
                     fmt::format("{:.2f}", r.seconds * 1e6), fmt::format("{:.2f}", fitted * 1e6),
                     fmt::format("{:.1f}", r.size_bytes * budget::bus_factor(r.kind, r.ranks) / r.seconds * 1e-9)});
  }
  std::cout << tool::render(cells) << "\nFits (t = S·busfactor/B + steps·latency, communication.hpp):\n";
  for (const budget::LinkFit& f : fits) std::cout << "  " << f.brief() << "\n";
  std::cout << fmt::format("{}: {} rows written to {}{}\n",
                           m.simulated ? "SIMULATED times (no GPU)" : "measured on " + m.device, m.rows.size(), a.out,
                           a.cluster_out.empty() ? "" : "; cluster file (intra-node link = the joint fit) written to " + a.cluster_out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"budget-profile: measures the op list of budget configs on a GPU (cuBLASLt GEMMs, grouped expert "
               "GEMMs, cuDNN attention, memory-bound kernels) and writes calibration profiles.",
               "budget-profile"};
  app.set_version_flag("--version", tool_name);
  app.require_subcommand(1);

  CommonOptions sweep_o, configs_o, check_o;
  std::string out;
  std::vector<std::int64_t> sweep_tokens;
  auto* sweep = app.add_subcommand("sweep", "Time the documented shape sweep and write a calibration profile");
  sweep->add_option("--out", out, "Profile JSON to write");
  sweep->add_option("--tokens", sweep_tokens, "Tokens per step to sweep (default 8192 32768)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 22));
  std::string gemms_from;
  sweep->add_option("--gemms-from", gemms_from,
                    "Also time every GEMM shape of this profile or PyTorch .jsonl (cross-checks against other measurements)")
      ->check(CLI::ExistingFile);
  add_common(sweep, sweep_o);

  std::vector<std::string> config_paths;
  std::string workload_path, calibration_path;
  std::int64_t config_tokens = 0;
  auto* configs = app.add_subcommand("configs", "Time the exact ops of one training step of each config");
  configs->add_option("configs", config_paths, "Architecture config JSON files")->required()->check(CLI::ExistingFile);
  configs->add_option("--workload", workload_path, "Workload JSON (default: the SMELT paper's)")->check(CLI::ExistingFile);
  configs->add_option("--calibration", calibration_path, "Profile to predict step time from")->check(CLI::ExistingFile);
  configs->add_option("--tokens", config_tokens, "Tokens per step (default: the workload's tokens_per_step, 8 x 4096)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 22));
  add_common(configs, configs_o);

  auto* check = app.add_subcommand("check", "Run the correctness checks only (GPU against CPU references)");
  add_common(check, check_o);

  CommonOptions collectives_o;
  CollectivesArgs collectives_a;
  auto* collectives = app.add_subcommand(
      "collectives", "Time NCCL collectives over message sizes on this machine's GPUs and fit the intra-node link");
  collectives->add_option("--out", collectives_a.out, "Measurements JSON to write (schema budget.collectives)");
  collectives->add_option("--cluster-out", collectives_a.cluster_out,
                          "Cluster file to write: --base-cluster with its intra_node replaced by the fitted link");
  collectives->add_option("--base-cluster", collectives_a.base_cluster,
                          "Cluster file whose GPU, nodes and inter-node link the written one keeps")
      ->check(CLI::ExistingFile);
  collectives->add_option("--collectives", collectives_a.kinds,
                          "Collectives to time (default all): all_reduce all_gather reduce_scatter all_to_all send_recv");
  collectives->add_option("--ranks", collectives_a.ranks, "Rank counts (default 2, 4, 8, ... and all GPUs)");
  collectives->add_option("--gpus", collectives_a.gpus,
                          "Use at most this many GPUs (default all visible; --simulate/--dry-run: the base's gpus_per_node, else 8)")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 20));
  collectives->add_option("--min-bytes", collectives_a.min_bytes, "Smallest message (nccl-tests size; default 1 KiB)");
  collectives->add_option("--max-bytes", collectives_a.max_bytes, "Largest message (default 1 GiB)");
  collectives->add_option("--size-factor", collectives_a.size_factor, "Ratio of consecutive sizes (default 4)");
  add_common(collectives, collectives_o);

  try {
    app.parse(argc, argv);
    if (collectives->parsed()) return run_collectives(collectives_o, collectives_a);
    if (sweep->parsed()) {
      if (out.empty() && !sweep_o.dry_run) throw budget::Error("sweep needs --out P.json (or --dry-run)", "budget-profile sweep");
      return run_sweep(sweep_o, out, sweep_tokens, gemms_from);
    }
    if (configs->parsed()) return run_configs(configs_o, config_paths, workload_path, calibration_path, config_tokens);
    auto timer = make_timer(check_o);
    return run_checks(*timer).empty() ? 0 : exit_check_failed;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "budget-profile: error: " << e.what() << "\nRun with --help for usage.\n";
    return exit_input;
  } catch (const NoGpuError& e) {
    std::cerr << "budget-profile: " << e.what() << ".\n";
    return exit_no_gpu;
  } catch (const budget::Error& e) {
    std::cerr << "budget-profile: error: " << e.what() << "\n";
    return exit_input;
  } catch (const std::exception& e) {
    std::cerr << "budget-profile: device error: " << e.what() << "\n";
    return exit_device;
  }
}
