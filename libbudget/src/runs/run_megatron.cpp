// A measured run described by its Megatron-LM arguments (docs/calibration.md, "Run files"): the
// layout, overlap, batch and kernel settings as interop's one reader gives them
// (read_megatron_timed_run(), budget/megatron_args.hpp, the flag table at d98e8a64).
#include "budget/megatron_args.hpp"
#include "runs/run_detail.hpp"

namespace budget::runs_detail {

void read_run_megatron_words(const std::vector<std::string>& words, const std::string& where, MeasuredRun& run) {
  const MegatronTimedRun t = read_megatron_timed_run(words, run.config, run.cluster.total_gpus(), where);
  run.layout = t.run.layout;
  run.overlap = t.run.overlap;
  run.cuda_graphs = t.kernels.cuda_graphs;
  run.cuda_graph_modules = t.kernels.cuda_graph_modules;
  run.moe = t.kernels.moe;
  run.notes.insert(run.notes.end(), t.kernels.notes.begin(), t.kernels.notes.end());
  run.notes.insert(run.notes.end(), t.run.read.begin(), t.run.read.end());
}

}  // namespace budget::runs_detail
