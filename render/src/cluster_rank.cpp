#include "budget_render/cluster_rank.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/training_memory.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/cluster_time.hpp"
#include "budget_render/layout_search.hpp"
#include "budget_render/memory.hpp"

namespace budget::render {

namespace {

std::string gib(double bytes) { return fmt::format("{:.2f}", bytes / (1024.0 * 1024.0 * 1024.0)); }

/// The cluster ratio at matched work: GPU-seconds per training FLOP over the baseline's (the
/// ratio the matched candidates are ranked by; cluster_match.hpp).
double ratio_at_matched_work(const ClusterCandidateTime& c, const ClusterCandidateTime& baseline) {
  return baseline.gpu_seconds_per_flop > 0.0 ? c.gpu_seconds_per_flop / baseline.gpu_seconds_per_flop : 0.0;
}

}  // namespace

std::string layout_brief(const ParallelLayout& l) {
  const std::string placement = l.loop_placement != LoopPlacement::in_chunk
                                    ? fmt::format(" loop {}", to_string(l.loop_placement))
                                    : std::string();
  const std::string split = l.split.summary(placement);
  return fmt::format("TP{} CP{} PP{}{}{} DP{} EP{} ETP{} b{} m{} {}{}", l.tp, l.cp, l.pp,
                     l.virtual_stages > 1 ? fmt::format(" V{}", l.virtual_stages) : "", split, l.data_parallel(),
                     l.ep, l.expert_tp(), l.micro_batch_size, l.micro_batches, to_string(l.recompute.kind),
                     l.distributed_optimizer ? " dist-opt" : "");
}

std::string microseconds_per_token_text(double seconds_per_token) {
  const double us = 1e6 * seconds_per_token;
  return us >= 1.0 || us == 0.0 ? fmt::format("{:.3f}", us) : fmt::format("{:.3g}", us);
}

nlohmann::ordered_json cluster_candidate_json(const ClusterCandidateTime& c) {
  using json = nlohmann::ordered_json;
  json out{{"found", c.found}};
  if (c.found) {
    const json body = training_memory_json(c.best.memory);
    out["layout"] = body.at("layout");
    out["memory"] = body.at("memory");
    out["time"] = cluster_step_time_json(c.best.time);
  } else {
    out["layout"] = nullptr;
    out["memory"] = nullptr;
    out["time"] = nullptr;
    out["reason"] = c.no_layout_reason;
  }
  out["seconds_per_token"] = c.found ? json(c.seconds_per_token) : json(nullptr);
  out["gpu_seconds_per_token"] = c.found ? json(c.gpu_seconds_per_token) : json(nullptr);
  out["training_flops_per_token"] = c.training_flops_per_token;
  out["gpu_seconds_per_flop"] = c.found ? json(c.gpu_seconds_per_flop) : json(nullptr);
  out["single_gpu_seconds_per_token"] = c.single_gpu_seconds_per_token;
  out["ratio_to_baseline"] = c.found ? json(c.ratio_to_baseline) : json(nullptr);
  out["single_gpu_ratio_to_baseline"] = c.single_gpu_ratio_to_baseline;
  out["moe_executions_per_token"] = c.moe_executions_per_token;
  json parts = json::array();
  for (const RatioComponent& r : c.ratio_components) {
    parts.push_back({{"component", r.name},
                     {"seconds_per_token", r.seconds_per_token},
                     {"baseline_seconds_per_token", r.baseline_seconds_per_token},
                     {"contribution", r.contribution},
                     {"calls_per_token", r.calls_per_token},
                     {"baseline_calls_per_token", r.baseline_calls_per_token},
                     {"bytes_per_call", r.bytes_per_call},
                     {"baseline_bytes_per_call", r.baseline_bytes_per_call}});
  }
  out["ratio_components"] = parts;
  out["differences"] = c.differences;
  if (!c.layout_choice.empty()) {
    out["at_team_layout"] = c.at_team_layout;
    out["layout_choice"] = c.layout_choice;
  }
  return out;
}

namespace {

/// The baseline at the team's layout (ClusterRanking::team_baseline): its layout, figures and ratio to
/// the searched baseline, or why it has none.
nlohmann::ordered_json team_baseline_json(const ClusterCandidateTime& t) {
  nlohmann::ordered_json out = cluster_candidate_json(t);
  if (!t.found) out["reason"] = t.no_layout_reason;
  return out;
}

nlohmann::ordered_json cluster_ranking_settings_json(const ClusterRanking& ranking, const ClusterSpec& cluster,
                                                     const LayoutSearchOptions& o, std::size_t without) {
  return {{"cluster", cluster.name.empty() ? cluster.gpu_name : cluster.name},
          {"gpu", cluster.gpu_name},
          {"gpus", o.gpus},
          {"global_batch_tokens", o.global_batch_tokens},
          {"seq_len", o.seq_len},
          {"attended_keys", o.time.attended_keys > 0.0 ? nlohmann::ordered_json(o.time.attended_keys)
                                                       : nlohmann::ordered_json("causal")},
          {"max_nodes_per_token", o.time.communication.max_nodes_per_token},
          {"min_headroom_bytes", o.min_headroom_bytes},
          {"ranked", ranking.candidates.size()},
          {"candidates_without_layout", without},
          {"team_layout", o.team_layout ? nlohmann::ordered_json(layout_brief(*o.team_layout)) : nlohmann::ordered_json()},
          {"recipe", layout_recipe_json(o.recipe)},
          {"baseline", cluster_candidate_json(ranking.baseline)},
          {"basis", o.team_layout ? "searched_with_team_recipe" : "searched"},
          {"team_baseline", ranking.team_baseline ? team_baseline_json(*ranking.team_baseline) : nlohmann::ordered_json()}};
}

}  // namespace

std::string partial_ranking_advice() {
  return "fewer candidates (a smaller \"tolerance\" or narrower ranges, e.g. a fixed \"hidden_size\", in a "
         "--constraints file: docs/matching.md), fewer GPUs, or more time (--max-seconds S; 0: no limit)";
}

nlohmann::ordered_json cluster_ranking_json(const ClusterRanking& ranking, const ClusterSpec& cluster,
                                            const LayoutSearchOptions& o) {
  std::size_t without = 0;
  for (const ClusterCandidateTime& c : ranking.candidates) without += c.found ? 0 : 1;
  nlohmann::ordered_json out = cluster_ranking_settings_json(ranking, cluster, o, without);
  if (ranking.partial) {
    // Only when the time limit stopped the ranking (docs/cli.md, exit 4): the rows are the best of
    // the candidates finished, not of all.
    out["partial"] = {{"finished", ranking.finished},
                      {"given", ranking.given},
                      {"stopped_by", ranking.stopped_by},
                      {"to_finish", partial_ranking_advice()}};
  }
  return out;
}

std::string min_headroom_footer(const LayoutSearchOptions& o) {
  const std::string why = fmt::format("the default {:g} GiB is the median slack of PyTorch's caching allocator, "
                                      "reserved - allocated, over 19 measured Megatron-Core runs (docs/cluster.md)",
                                      default_min_headroom_gib);
  if (o.min_headroom_bytes <= 0.0) {
    return fmt::format("\nheadroom: any layout within the usable memory fits (--min-headroom 0; {})\n", why);
  }
  return fmt::format("\nheadroom: a layout fits when it leaves at least {:.3g} GiB free on its fullest GPU "
                     "(--min-headroom; {}; 0: any layout within the usable memory)\n",
                     o.min_headroom_bytes / static_cast<double>(std::int64_t{1} << 30), why);
}

std::string partial_ranking_note(const ClusterRanking& ranking) {
  if (!ranking.partial) return {};
  return fmt::format("\nPARTIAL: {}. The rows are the best of the {} of {} equally matched candidates finished (taken "
                     "fastest on one GPU first), not of all. To finish: {}.\n",
                     ranking.stopped_by, ranking.finished, ranking.given, partial_ranking_advice());
}

Table cluster_ranking_table(const ClusterRanking& ranking, const std::vector<ArchConfig>& configs,
                            const ArchConfig& baseline) {
  Table t;
  for (const char* h : {"rank", "hidden", "heads×dim (KV)", "experts×width", "best layout"}) {
    t.add_column(h, std::string(h) == "hidden" ? Align::right : Align::left);
  }
  for (const char* h : {"µs/token", "tokens/s/GPU", "MFU", "cluster ×", "× equal F", "1-GPU ×", "headroom GiB"}) {
    t.add_column(h);
  }
  const auto row = [&](const std::string& rank, const ArchConfig& config, const ClusterCandidateTime& c) {
    if (!c.found) {
      t.add_row({rank, std::to_string(config.hidden_size), heads_text(config.attention), ffn_text(config.ffn),
                 "no layout fits memory", "-", "-", "-", "-", "-", fmt::format("{:.3f}×", c.single_gpu_ratio_to_baseline),
                 "-"});
      return;
    }
    const std::string where = c.at_team_layout ? " [team]" : "";
    t.add_row({rank, std::to_string(config.hidden_size), heads_text(config.attention), ffn_text(config.ffn),
               layout_brief(c.best.memory.layout) + where, microseconds_per_token_text(c.seconds_per_token),
               fmt::format("{:.0f}", c.best.time.tokens_per_second_per_gpu), fmt::format("{:.1f}%", 100.0 * c.best.time.mfu),
               fmt::format("{:.3f}×", c.ratio_to_baseline),
               fmt::format("{:.3f}×", ratio_at_matched_work(c, ranking.baseline)),
               fmt::format("{:.3f}×", c.single_gpu_ratio_to_baseline),
               gib(c.best.memory.headroom_bytes)});
  };
  row("baseline", baseline, ranking.baseline);
  if (ranking.team_baseline && ranking.team_baseline->found) row("team", baseline, *ranking.team_baseline);
  t.add_separator();
  for (std::size_t i = 0; i < ranking.candidates.size(); ++i) row(std::to_string(i + 1), configs.at(i), ranking.candidates[i]);
  return t;
}

std::string cluster_ranking_heading(const ClusterRanking& ranking, const ClusterSpec& cluster,
                                    const LayoutSearchOptions& o) {
  const std::string placement =
      o.team_layout ? fmt::format("one basis: each, the baseline too, at its own best layout searched with the team's "
                                  "recipe held; the team's layout {} prices the baseline on its own row ([team], its "
                                  "cluster × over the searched baseline)",
                                  layout_brief(*o.team_layout))
                    : std::string("each at its own best layout");
  return fmt::format(
      "\nOn {} of {} GPUs ({}; {} node{} of {}), {}, {} tokens a step of {}-token sequences "
      "({}): time per token of the whole cluster; cluster × and 1-GPU × are each one's time per token over the "
      "baseline's (1-GPU: one GPU, 8 sequences a step); × equal F: the cluster's at matched work (GPU-seconds per "
      "training FLOP over the baseline's), which ranks them; baseline at {}\n\n",
      o.gpus, cluster.total_gpus(), cluster.gpu_name, cluster.nodes, cluster.nodes == 1 ? "" : "s", cluster.gpus_per_node,
      placement, grouped(o.global_batch_tokens),
      o.seq_len, attended_keys_text(o.time.attended_keys, o.seq_len),
      ranking.baseline.found ? layout_brief(ranking.baseline.best.memory.layout) : "no layout");
}

std::string cluster_ranking_differences(const ClusterRanking& ranking) {
  std::string out = "\nWhat makes the cluster ratio differ from 1 (each component's exposed time per token against "
                    "the baseline's; contributions sum to cluster × − 1):\n";
  if (const auto& team = ranking.team_baseline) {
    out += team->found ? fmt::format("team's layout of the baseline: {} at {:.3f}× the searched baseline's time per "
                                     "token\n",
                                     layout_brief(team->best.memory.layout), team->ratio_to_baseline)
                       : "team's layout of the baseline: " + team->no_layout_reason + "\n";
  }
  for (std::size_t i = 0; i < ranking.candidates.size(); ++i) {
    const ClusterCandidateTime& c = ranking.candidates[i];
    if (!c.found) {
      out += fmt::format("#{}: {}\n", i + 1, c.no_layout_reason);
      continue;
    }
    out += fmt::format("#{}: cluster {:.3f}× vs 1-GPU {:.3f}×\n", i + 1, c.ratio_to_baseline, c.single_gpu_ratio_to_baseline);
    if (!c.layout_choice.empty()) out += "  layout: " + c.layout_choice + "\n";
    for (const std::string& d : c.differences) out += "  " + d + "\n";
  }
  return out;
}

nlohmann::ordered_json cluster_dropped_json(const std::vector<ClusterDropped>& dropped) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ClusterDropped& d : dropped) out.push_back({{"config", config_json(d.config)}, {"reason", d.reason}});
  return out;
}

std::string cluster_dropped_line(const ClusterDropped& d) {
  return fmt::format("hidden {}, heads {}, experts {}: {}", d.config.hidden_size, heads_text(d.config.attention),
                     ffn_text(d.config.ffn), d.reason);
}

}  // namespace budget::render
