#pragma once
// The `layout` command's results and their Documents (docs/cluster.md): one layout's memory per
// stage and step time (LayoutResult, layout_document()), and the layout search's ranked layouts
// (search_document()); every --format is printed from them.

#include <optional>
#include <string>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/layout_search.hpp"
#include "budget/megatron_args.hpp"
#include "budget/training_memory.hpp"
#include "output_format.hpp"

namespace budget::cli {

/// The one result of the command: what was asked and the memory per stage.
struct LayoutResult {
  std::string config_name;
  ClusterSpec cluster;
  TrainingMemory memory;
  std::optional<ClusterStepTime> time;  ///< when a calibration profile is known
  std::string time_missing;             ///< why there is no time, else empty
  std::optional<RunCost> run;
  std::optional<MegatronRun> megatron;  ///< what --megatron-args read
  double attended_keys = 0.0;           ///< of the step time (0: causal)
  std::string attention;                ///< attended_keys_text() and where it comes from
  double min_headroom_bytes = 0.0;      ///< --min-headroom
  bool fits() const { return memory.fits && memory.headroom_bytes >= min_headroom_bytes; }
};

/// The Megatron-LM arguments read (--megatron-args) as the output's notes list them.
std::vector<std::string> megatron_notes(const std::string& path, const MegatronRun& run);

/// The layout's result in every form: its JSON (the memory, and the step time or why there is
/// none) and the text and Markdown blocks (stages, verdict, notes, the step time by component).
Document layout_document(const LayoutResult& r);

/// The layout search's result in every form: its JSON (the layouts kept, each with memory and
/// time) and the ranked table with its heading.
Document search_document(const std::string& name, const ClusterSpec& cluster, const LayoutSearchOptions& so,
                         const LayoutSearchResult& found, const std::string& attention,
                         const std::optional<MegatronRun>& megatron);

}  // namespace budget::cli
