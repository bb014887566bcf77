// The pipelines the layout searches try (search/search_pipelines.hpp).
#include "search/search_pipelines.hpp"

#include <algorithm>
#include <cmath>

#include "search/search_progress.hpp"

namespace budget {
namespace {

/// `layers` in `chunks` parts as even as whole layers allow: the larger parts first, or last.
std::vector<std::int64_t> even_parts(std::int64_t layers, std::int64_t chunks, bool larger_first) {
  std::vector<std::int64_t> parts;
  for (std::int64_t i = 0; i < chunks; ++i) {
    const std::int64_t at = larger_first ? i : chunks - 1 - i;
    parts.push_back(layers / chunks + (at < layers % chunks ? 1 : 0));
  }
  return parts;
}

/// The chunks before the loop for p + q = `around` chunks around it, or −1 when none fits.
std::int64_t chunks_before(std::int64_t before, std::int64_t after, std::int64_t around) {
  const std::int64_t low = std::max<std::int64_t>(before > 0 ? 1 : 0, around - after);
  const std::int64_t high = std::min(before, around - (after > 0 ? 1 : 0));
  if (low > high) return -1;
  if (before + after == 0) return 0;
  const double share = static_cast<double>(around) * static_cast<double>(before) / static_cast<double>(before + after);
  return std::clamp(static_cast<std::int64_t>(std::llround(share)), low, high);
}

std::string layout_string(const std::vector<std::int64_t>& chunk_layers, std::int64_t mtp_layers) {
  std::string out = "E";
  for (std::size_t c = 0; c < chunk_layers.size(); ++c) {
    if (c > 0) out += '|';
    if (chunk_layers[c] > 0) out += chunk_layers[c] == 1 ? "t" : "t*" + std::to_string(chunk_layers[c]);
  }
  if (mtp_layers > 0) out += mtp_layers == 1 ? "m" : "m*" + std::to_string(mtp_layers);
  return out + "L";
}

}  // namespace

std::vector<WrapSplit> wrap_splits(const ArchConfig& config, std::int64_t pp) {
  std::vector<WrapSplit> out;
  if (!config.loop || config.loop->repeats <= 1 || pp < 2) return out;
  const std::int64_t r = config.loop->repeats;
  const std::int64_t loop = config.loop->last - config.loop->first + 1;
  const std::int64_t before = config.loop->first - 1;
  const std::int64_t after = config.num_layers - config.loop->last;
  for (std::int64_t a = 1; a <= 2 && a * pp <= loop; ++a) {
    for (std::int64_t k = 0; k <= 2 && r * a + k <= 8; ++k) {
      const std::int64_t p = chunks_before(before, after, k * pp);
      if (p < 0) continue;
      std::vector<std::int64_t> chunks = even_parts(before, p, false);
      const std::vector<std::int64_t> pass = even_parts(loop, a * pp, true);
      for (std::int64_t i = 0; i < r; ++i) chunks.insert(chunks.end(), pass.begin(), pass.end());
      const std::vector<std::int64_t> rest = even_parts(after, k * pp - p, true);
      chunks.insert(chunks.end(), rest.begin(), rest.end());
      out.push_back({r * a + k, layout_string(chunks, config.mtp_layers)});
    }
  }
  return out;
}

std::vector<SearchPipeline> search_pipelines(const ArchConfig& config, std::int64_t gpus, const LayoutRecipe& recipe,
                                             bool report_progress) {
  const bool looped = config.loop && config.loop->repeats > 1;
  // Without a repeated loop every placement is in_chunk's layout: a held one does not apply.
  std::vector<LoopPlacement> placements{LoopPlacement::in_chunk};
  if (looped && recipe.hold_loop_placement) {
    placements = {recipe.base.loop_placement};
  } else if (looped) {
    placements = {LoopPlacement::in_chunk, LoopPlacement::wrap, LoopPlacement::replicated};
  }
  std::vector<SearchPipeline> out;
  const std::int64_t max_pp = std::min(config.executed_layers(), gpus);
  for (std::int64_t pp = 1; pp <= max_pp; ++pp) {
    // Bounded in time too (issue 44: 10^6 layers on 2^20 GPUs): the limit is checked every 4096 PPs.
    if (pp % 4096 == 0) detail::search_progress(report_progress, "layout search (pipeline sizes and splits)", pp, max_pp);
    if (gpus % pp != 0) continue;
    // The wrap layouts at this PP, made once: wrap's pipelines and the unheld replicated's test.
    const std::vector<WrapSplit> wraps = placements.size() > 1 || placements[0] == LoopPlacement::wrap
                                             ? wrap_splits(config, pp)
                                             : std::vector<WrapSplit>{};
    for (const LoopPlacement placement : placements) {
      if (pp == 1 && placement != LoopPlacement::in_chunk && placements.size() > 1) continue;
      const std::int64_t layers = placement == LoopPlacement::in_chunk ? config.num_layers : config.executed_layers();
      if (pp > layers) continue;
      if (placement == LoopPlacement::wrap && pp > 1) {
        for (const WrapSplit& w : wraps) {
          out.push_back({pp, w.virtual_stages, placement, PipelineSplit::per_stage(w.pipeline_layout, "wrap layout")});
        }
        continue;
      }
      // Unheld, replicated is tried where no wrap layout exists (a pass of the loop shorter than PP):
      // elsewhere wrap places the same executions without the copies and their all-reduce. One chunk
      // a rank (its splits of the executed layers over PP·V ranks cost the search PP·V stages each).
      const bool replicated_unheld = placement == LoopPlacement::replicated && placements.size() > 1;
      if (replicated_unheld && !wraps.empty()) continue;
      for (std::int64_t v = 1; v <= (pp > 1 && !replicated_unheld ? 4 : 1); v *= 2) {
        for (const PipelineSplit& split : pipeline_splits(layers, pp, v)) out.push_back({pp, v, placement, split});
      }
    }
  }
  return out;
}

}  // namespace budget
