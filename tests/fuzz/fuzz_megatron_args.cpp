// Megatron-LM arguments (`--megatron-args FILE`, docs/megatron.md): megatron_words() (shell quoting
// or the bash-array file export --to megatron writes), read_megatron_args() against a small MoE on
// 64 GPUs, megatron_fp8_recipe(), megatron_search_options() and, for a layout the planner prices,
// the memory and the round trip through megatron_layout_args(). Properties of an accepted input:
// DP·TP·CP·PP = 64 and GBS = MBS·DP·m; the FP8 recipe read without a config is the layout's; the
// memory finite; the written arguments read back to the same parallel sizes, batch, recompute kind,
// FP8 recipe and peak memory.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "budget/cluster.hpp"
#include "budget/layout_search.hpp"
#include "budget/megatron_args.hpp"
#include "budget/training_memory.hpp"
#include "budget/workload.hpp"
#include "fuzz_harness.hpp"
#include "interop/megatron_test_models.hpp"

namespace {

budget::ArchConfig fuzz_megatron_moe() {
  return budget::test::megatron_moe_model("fuzz-moe", 512, 8, {8, 64, 4}, 16, 256);
}

budget::ClusterSpec fuzz_megatron_cluster() {
  return budget::test::megatron_test_cluster("fuzz", 8, std::int64_t{80} << 30);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  constexpr const char* target = "fuzz_megatron_args";
  static const ArchConfig config = fuzz_megatron_moe();
  static const ClusterSpec cluster = fuzz_megatron_cluster();
  fuzz::expect_value_or_error(target, [&] {
    const std::vector<std::string> words = megatron_words(std::string(fuzz::as_text(data, size)), "<fuzz>");
    const MegatronRun run = read_megatron_args(words, config, 64, "<fuzz>");
    const ParallelLayout& l = run.layout;
    fuzz::require(l.tp >= 1 && l.cp >= 1 && l.pp >= 1 && l.micro_batch_size >= 1 && l.micro_batches >= 1, target,
                  "a parallel size or the batch below 1");
    fuzz::require(l.data_parallel() * l.tp * l.cp * l.pp == 64, target, "DP·TP·CP·PP is not the GPUs");
    fuzz::require(run.global_batch_size == l.micro_batch_size * l.data_parallel() * l.micro_batches, target,
                  "GBS is not MBS·DP·m");
    fuzz::require(megatron_fp8_recipe(words, "<fuzz>") == l.fp8, target, "the FP8 recipe read two ways differs");
    (void)megatron_search_options(run, causal_workload(4096), LayoutSearchOptions{}, true);
    if (!l.validation_error(config).empty()) return;
    const TrainingMemory memory = training_memory(config, l, cluster, "<fuzz>");
    fuzz::require(std::isfinite(memory.peak_bytes) && memory.peak_bytes > 0, target, "peak memory not finite");
    std::string written;
    for (const std::string& line : megatron_layout_args(l, run.overlap)) written += line + "\n";
    const MegatronRun again = read_megatron_args(megatron_words(written, "<written>"), config, 64, "<written>");
    const ParallelLayout& b = again.layout;
    fuzz::require(b.tp == l.tp && b.cp == l.cp && b.pp == l.pp && b.virtual_stages == l.virtual_stages &&
                      b.ep == l.ep && b.expert_tp() == l.expert_tp(),
                  target, "the written arguments read back to other parallel sizes");
    fuzz::require(b.micro_batch_size == l.micro_batch_size && b.micro_batches == l.micro_batches &&
                      b.seq_len == l.seq_len,
                  target, "the written arguments read back to another batch");
    fuzz::require(b.recompute.kind == l.recompute.kind && b.fp8 == l.fp8 && b.precision == l.precision &&
                      b.optimizer_dtypes == l.optimizer_dtypes && b.distributed_optimizer == l.distributed_optimizer,
                  target, "the written arguments read back to another recipe");
    fuzz::require(training_memory(config, b, cluster, "<written>").peak_bytes == memory.peak_bytes, target,
                  "the written arguments price to another peak");
  });
  return 0;
}
