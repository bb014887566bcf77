// The pipeline split as one value (PipelineSplit, budget/parallel_layout.hpp): how it is built, the
// splits the layout searches try (pipeline_split.hpp), and its printed forms (Megatron-LM's
// arguments, the layout's JSON fields, the one-line summary), each a switch over the kinds, so that a
// new kind is written here and the compiler names every form that misses it.
#include "layout/pipeline_split.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "budget/parallel_layout.hpp"

namespace budget {

PipelineSplit PipelineSplit::first_last(std::optional<std::int64_t> first, std::optional<std::int64_t> last) {
  PipelineSplit split;
  if (!first && !last) return split;
  split.kind = Kind::first_last;
  split.first_stage_layers = first;
  split.last_stage_layers = last;
  return split;
}

PipelineSplit PipelineSplit::per_stage(std::string layout, const std::string& where) {
  PipelineSplit split;
  if (layout.empty()) return split;
  split.kind = Kind::per_stage;
  split.stages = parse_pipeline_layout(layout, where);
  split.layout = std::move(layout);
  return split;
}

std::vector<PipelineSplit> pipeline_splits(std::int64_t total, std::int64_t pp, std::int64_t virtual_stages) {
  const std::int64_t v = virtual_stages;
  if (total < 1 || pp < 1 || v < 1) return {};
  if (total % (pp * v) == 0) return {PipelineSplit{}};  // even
  if (pp == 1 || total % v != 0 || total < 2 * v) return {};  // every count a multiple of V, first and last >= V
  // The first and last ranks share r layers as evenly as whole chunks allow, the lighter share first.
  const auto ends = [v](std::int64_t r) {
    const std::int64_t last = v * ((r + 2 * v - 1) / (2 * v));
    std::vector<PipelineSplit> splits{PipelineSplit::first_last(r - last, last)};
    if (r - last != last) splits.push_back(PipelineSplit::first_last(last, r - last));
    return splits;
  };
  if (pp == 2) return ends(total);
  // Every rank holds at least V layers (first and last ≥ V, each middle rank ≥ V): none below PP·V.
  if (total / pp < v) return {};
  // The smallest largest count M (a multiple of V, at least M0 = V·⌈total / (PP·V)⌉), then the
  // fullest middle ranks m ≤ M, the ends sharing r = total − (PP − 2)·m with 2V ≤ r ≤ 2M. Closed
  // form (what a search over M upwards and m downwards finds, in O(1) rather than O(total²/V²)):
  // r ≥ 2V caps m at c = V·⌊(total − 2V) / ((PP − 2)·V)⌋; at M = M0 ≤ c, m = M0 gives r ≤ 2·M0 as
  // PP·M0 ≥ total; at M0 > c, m = c for every M and M grows until r ≤ 2M, the ends' split.
  // Brute-force reference: tests/unit/cluster (pipeline_splits against every (first, middle, last)).
  const std::int64_t floor_largest = v * ((total / v + pp - 1) / pp);
  const std::int64_t cap = v * ((total - 2 * v) / ((pp - 2) * v));
  if (cap < v) return {};
  return ends(total - (pp - 2) * std::min(floor_largest, cap));
}

std::vector<std::pair<std::string, std::string>> PipelineSplit::megatron_arguments() const {
  switch (kind) {
    case Kind::even: return {};
    case Kind::first_last: {
      std::vector<std::pair<std::string, std::string>> out;
      if (first_stage_layers) {
        out.emplace_back("--decoder-first-pipeline-num-layers", fmt::format("{}", *first_stage_layers));
      }
      if (last_stage_layers) {
        out.emplace_back("--decoder-last-pipeline-num-layers", fmt::format("{}", *last_stage_layers));
      }
      return out;
    }
    case Kind::per_stage:
      // Quoted: '|', '(' and '*' are shell syntax; the file is read back by shell quoting rules.
      return {{"--pipeline-model-parallel-layout", fmt::format("'{}'", layout)}};
  }
  return {};
}

PipelineSplit::Fields PipelineSplit::json_fields() const {
  switch (kind) {
    case Kind::even: return {};
    case Kind::first_last: return {"", first_stage_layers.value_or(-1), last_stage_layers.value_or(-1)};
    case Kind::per_stage: return {layout, -1, -1};
  }
  return {};
}

std::string PipelineSplit::summary(std::string_view placement) const {
  switch (kind) {
    case Kind::even: return std::string(placement);
    case Kind::first_last: {
      std::string counts;
      if (first_stage_layers) counts += fmt::format(" first {}", *first_stage_layers);
      if (last_stage_layers) counts += fmt::format(" last {}", *last_stage_layers);
      return counts + std::string(placement);
    }
    case Kind::per_stage: return std::string(placement) + " (layout string)";
  }
  return std::string(placement);
}

}  // namespace budget
