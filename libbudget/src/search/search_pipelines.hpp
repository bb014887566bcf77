// The pipelines the layout searches try: PP, the loop placement, V and the split (docs/cluster.md,
// "Layout search" and "Loops across pipeline stages").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "budget/config.hpp"
#include "budget/parallel_layout.hpp"
#include "layout/pipeline_split.hpp"

namespace budget {

/// One wrap layout: V model chunks a rank and the pipeline layout string (t counting layer
/// executions, the loop unrolled) that places them.
struct WrapSplit {
  std::int64_t virtual_stages = 1;
  std::string pipeline_layout;
};

/// The wrap layouts the searches try on PP ≥ 2 ranks for a config whose loop runs r > 1 times (none
/// otherwise). Global chunk c runs on rank c mod PP (Megatron's interleaved placement), so a pass of
/// the loop spanning a·PP chunks (the same split every pass) puts chunk j of pass k + 1 on the rank
/// of chunk j of pass k. The P layers before the loop fill p chunks and the Q after it q chunks,
/// p + q = k·PP, so V = r·a + k. Tried: a = 1, 2 and k = 0, 1, 2 with V ≤ 8, a·PP ≤ the loop's
/// layers, p ≥ 1 exactly when P ≥ 1 (q likewise), p ≤ P, q ≤ Q, p the nearest to k·PP·P / (P + Q)
/// that allows it. Each part split as evenly as whole layers allow: before the loop the smaller
/// chunks first (rank 0 also holds the embedding), in the loop and after it the larger first (the
/// last chunk also holds the loss). The embedding E opens chunk 0; MTP layers m and the loss L close
/// the last chunk (Megatron's default places MTP on the last stage).
std::vector<WrapSplit> wrap_splits(const ArchConfig& config, std::int64_t pp);

/// One pipeline of the search space.
struct SearchPipeline {
  std::int64_t pp = 1;
  std::int64_t v = 1;
  LoopPlacement placement = LoopPlacement::in_chunk;
  PipelineSplit split;  ///< in_chunk, replicated: even or first/last counts; wrap: per stage (wrap_splits())
};

/// The pipelines of the layout search on `gpus` GPUs, PP a divisor of the GPUs up to the layers
/// split, in the space's order: PP, then the placement (in_chunk, wrap, replicated: the recipe's
/// alone where it holds one; in_chunk alone for a config without a repeated loop, held or not), then V
/// (1, 2, 4; wrap: wrap_splits()' V), then the split (pipeline_splits() over the physical layers
/// in_chunk, the executed ones replicated). Unheld, wrap and replicated are tried at PP ≥ 2 only (at
/// PP 1 every placement is one chunk on one rank, in_chunk's layout), and replicated only at V 1 and
/// where wrap has no layout (a pass of the loop shorter than PP chunks): where wrap has one it runs
/// the same executions without the copies and their all-reduce, and replicated's splits at PP 32 and
/// 64 with V 2 and 4 were most of the cost of DeepSeek-V3's ranking on 1,024 GPUs.
/// report_progress: progress shown; the time limit is checked either way (search_progress.hpp).
std::vector<SearchPipeline> search_pipelines(const ArchConfig& config, std::int64_t gpus, const LayoutRecipe& recipe,
                                             bool report_progress = false);

}  // namespace budget
