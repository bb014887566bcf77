// Where the layers sit: Megatron's pipeline layout string, first/last-stage layer counts or the
// even split, and the model chunks built from them (docs/cluster.md, "The layout"). Sources at
// Megatron-LM d98e8a64: megatron/core/transformer/pipeline_parallel_layer_layout.py (the grammar,
// lines 283-320; the checks, lines 87-150) and transformer_block.py get_num_layers_to_build
// (lines 76-200).
#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/parallel_layout.hpp"
#include "layout/chunk_plan_check.hpp"

namespace budget {

namespace {

constexpr std::size_t max_unrolled_layout = std::size_t{1} << 20;

/// Digits at `at` (Python's \d+), their value into `value` (capped so a product stays in range);
/// returns the position after them, or `at` when there are none.
std::size_t read_layout_repeat(std::string_view s, std::size_t at, std::size_t& value) {
  std::size_t end = at;
  value = 0;
  while (end < s.size() && s[end] >= '0' && s[end] <= '9') {
    value = std::min<std::size_t>(value * 10 + static_cast<std::size_t>(s[end] - '0'), max_unrolled_layout + 1);
    ++end;
  }
  return end;
}

void append_layout_repeated(std::string& out, std::string_view part, std::size_t times, const std::string& where) {
  if (part.size() * times + out.size() > max_unrolled_layout) {
    throw Error(fmt::format("the pipeline layout unrolls to more than {} characters", max_unrolled_layout), where);
  }
  for (std::size_t k = 0; k < times; ++k) out.append(part);
}

/// re.sub(r'\(([^)]+)\)\*(\d+)', group × N): a '(' followed by at least one character up to the
/// first ')', then '*' and digits; otherwise the '(' stays as it is.
std::string unroll_layout_groups(std::string_view s, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '(') {
      const std::size_t close = s.find(')', i + 1);
      std::size_t times = 0;
      if (close != std::string_view::npos && close > i + 1 && close + 1 < s.size() && s[close + 1] == '*') {
        const std::size_t end = read_layout_repeat(s, close + 2, times);
        if (end > close + 2) {
          append_layout_repeated(out, s.substr(i + 1, close - i - 1), times, where);
          i = end;
          continue;
        }
      }
    }
    out += s[i++];
  }
  return out;
}

/// re.sub(r'(.)\*(\d+)', x × N).
std::string unroll_layout_singles(std::string_view s, const std::string& where) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t times = 0;
    if (i + 1 < s.size() && s[i + 1] == '*' && s[i] != '\n') {
      const std::size_t end = read_layout_repeat(s, i + 2, times);
      if (end > i + 2) {
        append_layout_repeated(out, s.substr(i, 1), times, where);
        i = end;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

/// Megatron's validate_layer_layout (pipeline_parallel_layer_layout.py:87-150) on the chunk
/// strings: E first and once, L last and once, the transformer and MTP layer counts, MTP after
/// every transformer layer and only in a rank's last virtual stage.
std::string layout_string_error(const std::vector<std::string>& stages, std::int64_t pp, std::int64_t decoders,
                                std::int64_t mtp) {
  std::string flat;
  for (const std::string& s : stages) flat += s;
  if (flat.empty() || flat.front() != 'E') return "the pipeline layout's first layer must be the embedding E";
  if (flat.back() != 'L') return "the pipeline layout's last layer must be the loss L";
  if (std::count(flat.begin(), flat.end(), 'E') != 1) return "the pipeline layout must name the embedding E once";
  if (std::count(flat.begin(), flat.end(), 'L') != 1) return "the pipeline layout must name the loss L once";
  const auto t = std::count(flat.begin(), flat.end(), 't');
  if (t != decoders) {
    return fmt::format("the pipeline layout has {} transformer layers t; the config has {}", t, decoders);
  }
  const auto m = std::count(flat.begin(), flat.end(), 'm');
  if (m != mtp) return fmt::format("the pipeline layout has {} MTP layers m; the config has {}", m, mtp);
  const std::size_t first_m = flat.find('m');
  if (first_m != std::string::npos && flat.find('t', first_m) != std::string::npos) {
    return "the pipeline layout places transformer layers after an MTP layer";
  }
  const std::size_t v = stages.size() / static_cast<std::size_t>(pp);
  for (std::size_t c = 0; c + static_cast<std::size_t>(pp) < stages.size(); ++c) {
    if (stages[c].find('m') != std::string::npos) {
      return fmt::format("the pipeline layout puts MTP layers in virtual stage {} of rank {}; Megatron keeps them in "
                         "a rank's last virtual stage ({} of {})",
                         c / static_cast<std::size_t>(pp), c % static_cast<std::size_t>(pp), v - 1, v);
    }
  }
  return {};
}

ChunkPlan plan_from_layout_string(const ParallelLayout& l, std::int64_t decoders, std::int64_t mtp,
                                  std::string* error) {
  ChunkPlan plan;
  const std::vector<std::string>& stages = l.split.stages;
  if (stages.size() % static_cast<std::size_t>(l.pp) != 0) {
    *error = fmt::format("the pipeline layout has {} virtual stages, not a multiple of PP = {}", stages.size(), l.pp);
    return {};
  }
  plan.virtual_stages = static_cast<std::int64_t>(stages.size()) / l.pp;
  if (l.virtual_stages != 1 && l.virtual_stages != plan.virtual_stages) {
    *error = fmt::format("the pipeline layout gives {} virtual stages per rank; the layout says V = {}",
                         plan.virtual_stages, l.virtual_stages);
    return {};
  }
  if (std::string e = layout_string_error(stages, l.pp, decoders, mtp); !e.empty()) {
    *error = e;
    return {};
  }
  for (const std::string& s : stages) {
    plan.layers.push_back(std::count(s.begin(), s.end(), 't'));
    plan.embedding.push_back(s.find('E') != std::string::npos);
    plan.loss.push_back(s.find('L') != std::string::npos);
    plan.mtp_layers.push_back(std::count(s.begin(), s.end(), 'm'));
  }
  return plan;
}

/// Layers of each pipeline rank from the first/last counts (get_num_layers_to_build), empty with
/// `error` set where Megatron's TransformerConfig refuses them (transformer_config.py:2293-2368 at
/// d98e8a64): a given count of 0, middle ranks without layers or layers without middle ranks, a
/// middle count that does not divide over the middle ranks, a rank's count not divisible by V.
std::vector<std::int64_t> rank_layers_uneven(const ParallelLayout& l, std::int64_t total, std::string* error) {
  const std::optional<std::int64_t> first = l.split.first_stage_layers, last = l.split.last_stage_layers;
  if (first == 0 || last == 0) {
    *error = fmt::format("the {} pipeline stage of 0 layers (--decoder-{}-pipeline-num-layers 0): Megatron asks for at "
                         "least 1 (leave the count out, or give a pipeline layout string for a stage without "
                         "transformer layers)",
                         first == 0 ? "first" : "last", first == 0 ? "first" : "last");
    return {};
  }
  std::int64_t rest = total;
  std::int64_t ranks_left = l.pp;
  if (first) rest -= *first, --ranks_left;
  if (last) rest -= *last, --ranks_left;
  if (rest < 0 || (rest > 0) != (ranks_left > 0) || (ranks_left > 0 && rest % ranks_left != 0)) {
    *error = fmt::format("{} layers less the first ({}) and last ({}) stages' do not divide over the other {} "
                         "pipeline ranks",
                         total, first.value_or(-1), last.value_or(-1), ranks_left);
    return {};
  }
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(l.pp), ranks_left > 0 ? rest / ranks_left : 0);
  if (first) per_rank.front() = *first;
  if (last) per_rank.back() = *last;
  for (std::size_t s = 0; s < per_rank.size(); ++s) {
    if (per_rank[s] % l.virtual_stages != 0) {
      *error = fmt::format("pipeline rank {}'s {} layers do not divide by V = {}", s, per_rank[s], l.virtual_stages);
      return {};
    }
  }
  return per_rank;
}

}  // namespace

std::vector<ModelChunk> build_model_chunks(const ArchConfig& config, const ParallelLayout& layout);

std::vector<std::string> parse_pipeline_layout(std::string_view text, const std::string& where) {
  std::string s;
  for (const char ch : text) {
    if (ch != ',') s += ch;  // purely cosmetic commas
  }
  s = unroll_layout_singles(unroll_layout_groups(s, where), where);
  std::vector<std::string> stages(1);
  for (const char ch : s) {
    if (ch == '|') {
      stages.emplace_back();
    } else if (ch == 'E' || ch == 'L' || ch == 't' || ch == 'm') {
      stages.back() += ch;
    } else {
      throw Error(fmt::format("invalid layer character '{}' in the pipeline layout \"{}\"; known: E (embedding), t "
                              "(transformer layer), m (MTP layer), L (loss), | between stages, (...)*N and x*N",
                              std::string(1, ch), text),
                  where);
    }
  }
  return stages;
}

ChunkPlan plan_chunks(const ArchConfig& config, const ParallelLayout& l, std::string* error) {
  const std::int64_t total = l.chunks_split_executions() ? config.executed_layers() : config.num_layers;
  if (l.split.kind == PipelineSplit::Kind::per_stage) {
    if (l.embedding_in_split || l.loss_in_split) {
      *error = "a pipeline layout string excludes first/last-stage layer counts and the embedding/loss in the split";
      return {};
    }
    return plan_from_layout_string(l, total, config.mtp_layers, error);
  }
  ChunkPlan plan;
  plan.virtual_stages = l.virtual_stages;
  const std::int64_t chunk_count = l.pp * l.virtual_stages;
  if (l.split.kind == PipelineSplit::Kind::first_last) {
    if (l.embedding_in_split || l.loss_in_split) {
      *error = "first/last-stage layer counts exclude the embedding/loss in the pipeline split (Megatron asserts it)";
      return {};
    }
    const std::vector<std::int64_t> per_rank = rank_layers_uneven(l, total, error);
    if (per_rank.empty()) return {};
    for (std::int64_t c = 0; c < chunk_count; ++c) {
      plan.layers.push_back(per_rank[static_cast<std::size_t>(c % l.pp)] / l.virtual_stages);
    }
  } else {
    const std::int64_t extra = (l.embedding_in_split ? 1 : 0) + (l.loss_in_split ? 1 : 0);
    if ((total + extra) % chunk_count != 0) {
      *error = fmt::format("{} {}layers{} do not divide by PP·V = {}·{} = {}", total,
                           l.chunks_split_executions() ? "executed " : "",
                           extra > 0 ? fmt::format(" and {} counted for the embedding/loss", extra) : "", l.pp,
                           l.virtual_stages, chunk_count);
      return {};
    }
    plan.layers.assign(static_cast<std::size_t>(chunk_count), (total + extra) / chunk_count);
    if (l.embedding_in_split) --plan.layers.front();
    if (l.loss_in_split) --plan.layers.back();
    if (plan.layers.front() < 0 || plan.layers.back() < 0) {
      *error = "not enough layers in the first or last chunk for the embedding/loss in the pipeline split";
      return {};
    }
  }
  plan.embedding.assign(static_cast<std::size_t>(chunk_count), false);
  plan.loss.assign(static_cast<std::size_t>(chunk_count), false);
  plan.mtp_layers.assign(static_cast<std::size_t>(chunk_count), 0);
  plan.embedding.front() = true;
  plan.loss.back() = true;
  plan.mtp_layers.back() = config.mtp_layers;  // Megatron's default: MTP on the last stage
  return plan;
}

std::vector<ModelChunk> model_chunks(const ArchConfig& config, const ParallelLayout& layout) {
  // The memory, the communication and the stage executions of one layout each ask for its chunks:
  // the last answer of this thread first (chunk_plan_key(): everything they depend on).
  thread_local std::optional<ChunkPlanKey> last_key;
  thread_local std::vector<ModelChunk> last_chunks;
  if (last_key && same_chunk_plan_key(*last_key, layout, config)) return last_chunks;
  last_chunks = build_model_chunks(config, layout);
  last_key = chunk_plan_key(layout, config);
  return last_chunks;
}

std::vector<ModelChunk> build_model_chunks(const ArchConfig& config, const ParallelLayout& layout) {
  std::string error;
  const ChunkPlan plan = plan_chunks(config, layout, &error);
  if (plan.layers.empty()) throw Error(error, "layout");
  const std::vector<std::int64_t> sequence = executed_layer_sequence(config);
  std::vector<ModelChunk> chunks(plan.layers.size());
  // The chunk of every physical layer (or executed position), in virtual-stage order.
  std::vector<std::size_t> owner;
  for (std::size_t c = 0; c < plan.layers.size(); ++c) {
    ModelChunk& chunk = chunks[c];
    chunk.index = static_cast<std::int64_t>(c);
    chunk.pipeline_rank = static_cast<std::int64_t>(c) % layout.pp;  // rank s holds s, s + PP, ...
    chunk.embedding = plan.embedding[c];
    chunk.loss = plan.loss[c];
    chunk.mtp_layers = plan.mtp_layers[c];
    owner.insert(owner.end(), static_cast<std::size_t>(plan.layers[c]), c);
  }
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    const std::size_t c = layout.chunks_split_executions() ? owner[i] : owner[static_cast<std::size_t>(sequence[i] - 1)];
    chunks[c].executed_layers.push_back(sequence[i]);
  }
  for (ModelChunk& chunk : chunks) {
    chunk.stored_layers = chunk.executed_layers;
    std::sort(chunk.stored_layers.begin(), chunk.stored_layers.end());
    chunk.stored_layers.erase(std::unique(chunk.stored_layers.begin(), chunk.stored_layers.end()),
                              chunk.stored_layers.end());
  }
  return chunks;
}

}  // namespace budget
