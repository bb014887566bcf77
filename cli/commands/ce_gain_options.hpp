#pragma once
// The `ce-gain` command's options and its GPU-hours at equal loss (--cluster), which ce_gain.cpp
// prints beside the gain (ce_gain_hours.cpp; budget/scaling_gpu_hours.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "budget/cluster_time.hpp"
#include "budget/layout_search.hpp"
#include "budget/scaling_bootstrap.hpp"
#include "budget/scaling_gpu_hours.hpp"
#include "cluster_options.hpp"
#include "options.hpp"
#include "output_format.hpp"
#include "scaling_args.hpp"

namespace budget::cli {

struct CeGainOptions : BudgetSparsityLists {  // --C, --S
  std::string target_path;
  std::string reference_path;
  std::string data_path;
  std::string target_arch;
  std::string reference_arch;
  std::size_t resamples = 2000;
  std::uint64_t seed = 1;
  unsigned threads = 0;
  OutputFormat format = OutputFormat::table;
  ClusterRankOptions cluster;
  CalibrationOptions calibration;
  WorkloadOption workload;
  std::string target_config_path;
  std::string reference_config_path;
};

/// --cluster: both architectures at their best layouts and the gain in GPU-hours per entry.
struct GpuHoursReport {
  bool ran = false;
  ClusterSpec cluster;
  LayoutSearchOptions search;
  ClusterRanking timing;  ///< baseline: the reference config, candidates[0]: the target config
  std::vector<GpuHoursAtEqualLoss> entries;  ///< parallel to GainReport::entries
};

/// An estimate's JSON: its value, and its interval when it has one.
nlohmann::ordered_json estimate_json(const Estimate& e);

/// Both architectures at their best layouts on the cluster and the gain in GPU-hours of each entry
/// of `report` (budget::Error naming the option when a config has no layout).
GpuHoursReport gpu_hours_report(const CeGainOptions& o, const GainReport& report);

/// The text and Markdown forms of the GPU-hours: the cluster, both architectures, ρ, the table and
/// a line per entry whose FLOPs saving the time per FLOP eats.
void add_gpu_hours_text(Document& doc, const GpuHoursReport& h, const CeGainOptions& o);

/// The "gpu_hours" object of the JSON.
nlohmann::ordered_json gpu_hours_json(const GpuHoursReport& h, const CeGainOptions& o);

}  // namespace budget::cli
