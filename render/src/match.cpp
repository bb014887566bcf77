#include "budget_render/match.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/kernel_shapes.hpp"
#include "budget/version.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/step_time.hpp"

namespace budget::render {

nlohmann::ordered_json range_edges_json(const std::vector<RangeEdge>& edges) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const RangeEdge& e : edges) {
    out.push_back({{"variable", e.variable}, {"value", e.value}, {"bound", e.lower ? "lower" : "upper"},
                   {"limit", e.bound}, {"widen", e.widen}});
  }
  return out;
}

nlohmann::ordered_json kernel_fit_json(const KernelFit& fit) {
  nlohmann::ordered_json out{{"fit", std::string(to_string(fit.kind))},
                             {"backend", std::string(to_string(fit.attention.backend))},
                             {"attention", std::string(to_string(fit.attention.kind))}};
  if (fit.attention.kind != KernelFitKind::refused) {
    out["executed_head_dims"] = {fit.attention.executed_qk, fit.attention.executed_v};
  }
  out["why"] = fit.kind == KernelFitKind::native ? std::string() : fit.describe();
  return out;
}

std::string kernel_fit_cell(const KernelFit& fit) {
  if (fit.kind == KernelFitKind::padded) return fmt::format("padded→{}", fit.attention.executed_qk);
  return std::string(to_string(fit.kind));
}

nlohmann::ordered_json kernel_stack_json(const MatchSummary& s) {
  if (!s.kernels) {
    if (s.shapes != ShapeSpace::portable) return nullptr;
    return {{"portable", true},
            {"rule", "shapes every target runs natively (no --gpu): head dims 64, 128, 256 (MLA its own), GEMM "
                     "widths on the multiple the search space names"}};
  }
  const KernelTarget& k = *s.kernels;
  nlohmann::ordered_json order = nlohmann::ordered_json::array();
  if (k.attention == AttentionBackend::te_default) {
    for (const AttentionBackend b : attention_backend_order(k.arch)) order.push_back(std::string(to_string(b)));
  } else {
    order.push_back(std::string(to_string(k.attention)));
  }
  return {{"portable", false},
          {"gpu", k.gpu},
          {"arch", std::string(to_string(k.arch))},
          {"attention_backend", std::string(to_string(k.attention))},
          {"attention_backends_tried", order},
          {"precision", std::string(to_string(k.precision))},
          {"gemm_width_multiple", width_multiple(k.precision)},
          {"expert_token_alignment", expert_token_alignment(k.precision)},
          {"rule", describe(k)}};
}

nlohmann::ordered_json candidate_json(const Candidate& c) {
  nlohmann::ordered_json out{
      {"config", config_json(c.config)},
      {"budgets", budgets_json(c.budgets)},
      {"deviation", {{"flops", c.deviation.flops}, {"params", c.deviation.params}, {"kv", c.deviation.kv},
                     {"max", c.deviation.max_abs()},
                     // F without and with the LM head's training FLOPs ("flops" is the one matched).
                     {"flops_without_lm_head", c.flops_deviation_without_lm_head},
                     {"flops_with_lm_head", c.flops_deviation_with_lm_head}}},
      {"objective", c.objective},
      {"second_objective", c.second_objective},
      {"proportion_distance", c.proportion_distance},
      // Shapes off the fused kernels' full-rate path (budget/kernel_shapes.hpp); empty: kernel-ready.
      {"off_kernel_path", off_kernel_path(c.config)},
      // Searched variables on a bound of their range (docs/matching.md, "Range edges").
      {"range_edges", range_edges_json(c.range_edges)},
      // How it runs on the kernel target (--gpu; budget/kernel_stack.hpp); null without one.
      {"kernel_fit", c.kernel_fit ? kernel_fit_json(*c.kernel_fit) : nlohmann::ordered_json(nullptr)}};
  // The fourth budget of hybrid stacks (MatchConstraints::weight_state), only where there is a state.
  if (c.budgets.state_elements_per_sequence > 0) out["deviation"]["state"] = c.deviation.state;
  return out;
}

namespace {
nlohmann::ordered_json equal_match_json(const MatchResult& r) {
  if (!r.summary.feasible) return nullptr;
  const EqualMatchBounds& e = r.summary.equal_match;
  return {{"objective_bound", e.objective},
          {"best", {{"flops", e.flops}, {"params", e.params}, {"kv", e.kv}}},
          {"excess", e.excess},
          {"tolerance", e.tolerance},
          {"cap", {{"flops", e.cap(e.flops)}, {"params", e.cap(e.params)}, {"kv", e.cap(e.kv)}}}};
}
}  // namespace

nlohmann::ordered_json match_json(const MatchResult& r, const LoopSpec& loop, const Workload& workload,
                                  bool timings) {
  using json = nlohmann::ordered_json;
  json candidates = json::array();
  for (const auto& c : r.candidates) candidates.push_back(candidate_json(c));
  json infeasible = json::array();
  for (const auto& i : r.summary.infeasible) {
    infeasible.push_back({{"budget", i.budget}, {"best_attainable", i.best_attainable}, {"binding", i.binding}});
  }
  const auto if_feasible = [&](double x) { return r.summary.feasible ? json(x) : json(nullptr); };
  json summary{{"feasible", r.summary.feasible},
               // The first row's largest |deviation|, and the minimised weighted objective g*
               // ("best_objective": the same g*, its schema-1 name).
               {"best_max_deviation", if_feasible(r.summary.best_max_deviation)},
               {"weighted_objective", if_feasible(r.summary.best_objective)},
               {"best_objective", if_feasible(r.summary.best_objective)},
               {"order", std::string(to_string(r.summary.order))},
               {"order_reason", describe(r.summary.order)},
               // Which defaults the search space came from, and its rules (describe_search_space()).
               {"shapes", std::string(to_string(r.summary.shapes))},
               {"search_space", r.summary.search_space},
               // The kernels searched for (--gpu, --attention-backend, --precision; docs/kernels.md).
               {"kernel_stack", kernel_stack_json(r.summary)},
               // The bounds of the equally matched (docs/matching.md, "Equally matched").
               {"equally_matched", equal_match_json(r)},
               {"lm_head_in_flops", r.summary.lm_head_in_flops},
               {"space_size", r.summary.space_size},
               {"structures", r.summary.structures},
               {"closed_form_solves", r.summary.evaluated},
               // null unless --timings: wall-clock time would make outputs differ between runs.
               {"seconds", timings ? json(r.summary.seconds) : json(nullptr)},
               {"message", r.summary.message},
               {"notes", r.summary.notes},
               {"infeasible", infeasible},
               {"brief", r.summary.brief()}};
  if (r.summary.uncapped_best) summary["uncapped_best"] = candidate_json(*r.summary.uncapped_best);
  // The tightest of the equally matched, whatever the row order.
  summary["tightest"] = r.summary.tightest ? candidate_json(*r.summary.tightest) : json(nullptr);
  json baseline{{"config", config_json(r.baseline)},
                {"budgets", budgets_json(r.baseline_budgets)},
                {"lm_head_training_flops_per_token", r.baseline_lm_head_training_flops_per_token},
                {"training_flops_per_token_with_lm_head",
                 r.baseline_budgets.training_flops_per_token + r.baseline_lm_head_training_flops_per_token}};
  if (!r.baseline.notes.empty()) baseline["notes"] = r.baseline.notes;  // what reading the file took
  return json{{"schema_version", output_schema_version},
              {"budget_version", version_string},
              {"loop", loop.describe()},
              {"workload", workload_json(workload)},
              {"baseline", baseline},
              {"summary", summary},
              {"candidates", candidates}};
}

Table candidates_table(const MatchResult& r, const std::vector<double>& time_ratios, const TimeAccuracy* accuracy) {
  const bool timed = !time_ratios.empty();
  Table t;
  t.add_column("#", Align::right);
  t.add_column("max dev");
  t.add_column("FLOPs");
  // The F not matched beside the one matched (MatchConstraints::count_lm_head); without a
  // vocabulary (vocab_size 0, the paper's configs) there is no LM head and the two are one.
  const bool head_in = r.summary.lm_head_in_flops;
  const bool show_head = head_in || r.baseline_lm_head_training_flops_per_token > 0;
  if (show_head) t.add_column(head_in ? "FLOPs w/o head" : "FLOPs w/ head");
  t.add_column("params");
  t.add_column("KV");
  // The recurrent state per sequence of linear-attention and Mamba-2 layers, when the baseline has one.
  const bool stateful = r.baseline_budgets.state_elements_per_sequence > 0;
  if (stateful) t.add_column("state");
  if (timed) t.add_column("time ×");
  t.add_column("layers");
  t.add_column("loop");
  t.add_column("hidden");
  t.add_column("heads×dim (KV)", Align::left);
  t.add_column("experts×width", Align::left);
  t.add_column("active");
  t.add_column("total");
  t.add_column("sparsity");
  // How each row runs on the kernel target (--gpu): native, padded (the head dim executed) or refused.
  const bool with_kernels = r.summary.kernels.has_value();
  if (with_kernels) t.add_column("kernels", Align::left);
  const auto row = [&](const std::string& rank, const ArchConfig& c, const Budgets& b, const std::string& dmax,
                       const std::string& df, const std::string& df_other, const std::string& dn,
                       const std::string& dkv, const std::string& dstate, const std::string& time) {
    std::vector<std::string> cells{rank, dmax, df};
    if (show_head) cells.push_back(df_other);
    cells.push_back(dn);
    cells.push_back(dkv);
    if (stateful) cells.push_back(dstate);
    if (timed) cells.push_back(time);
    for (auto&& cell : {fmt::format("{}/{}", b.physical_layers, b.executed_layers), loop_text(c),
                        std::to_string(c.hidden_size), heads_text(c.attention), ffn_text(c.ffn),
                        si(static_cast<double>(b.non_embedding_params_active)),
                        si(static_cast<double>(b.non_embedding_params_total)), percent(b.sparsity, 1)}) {
      cells.push_back(cell);
    }
    if (with_kernels) cells.push_back(kernel_fit_cell(kernel_fit(c, *r.summary.kernels)));
    t.add_row(std::move(cells));
  };
  const double base_f = r.baseline_budgets.training_flops_per_token;
  const double base_f_head = base_f + r.baseline_lm_head_training_flops_per_token;
  row("base", r.baseline, r.baseline_budgets, "", si(head_in ? base_f_head : base_f, "F"),
      si(head_in ? base_f : base_f_head, "F"), si(static_cast<double>(r.baseline_budgets.non_embedding_params_total)),
      grouped(r.baseline_budgets.kv_elements_per_token), si(static_cast<double>(r.baseline_budgets.state_elements_per_sequence)),
      fmt::format("{:.{}f}×", 1.0, accuracy != nullptr && !time_ratios.empty()
                                       ? time_ratio_decimals(accuracy->ratio_half_width(time_ratios.front()))
                                       : 3));
  t.add_separator();
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& c = r.candidates[i];
    row(std::to_string(i + 1), c.config, c.budgets, percent(c.deviation.max_abs(), 2),
        signed_percent(c.deviation.flops, 2),
        signed_percent(head_in ? c.flops_deviation_without_lm_head : c.flops_deviation_with_lm_head, 2),
        signed_percent(c.deviation.params, 2), signed_percent(c.deviation.kv, 2), signed_percent(c.deviation.state, 2),
        i < time_ratios.size()
            ? time_ratio_text(time_ratios[i], accuracy != nullptr ? accuracy->ratio_half_width(time_ratios[i]) : 0.0)
            : "");
  }
  return t;
}

nlohmann::ordered_json sensitivity_json(const std::vector<ConstraintSensitivity>& sensitivity) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& s : sensitivity) {
    out.push_back({{"constraint", s.constraint},
                   {"relaxed_objective", std::isfinite(s.relaxed_objective) ? nlohmann::ordered_json(s.relaxed_objective)
                                                                            : nlohmann::ordered_json(nullptr)},
                   {"status", std::string(to_string(s.status))}});
  }
  return out;
}

Table sensitivity_table(const MatchResult& r, const std::vector<ConstraintSensitivity>& sensitivity) {
  Table t;
  t.add_column("constraint relaxed", Align::left);
  t.add_column("best max dev");
  t.add_column("change");
  for (const auto& s : sensitivity) {
    if (s.status == SearchStatus::over_search_limit) {
      const bool work = s.limit_message.find("--max-work") != std::string::npos;
      t.add_row({s.constraint, "not searched",
                 work ? "over the search limit (raise --max-work)" : "over the search limit (raise --max-structures)"});
      continue;
    }
    if (s.status == SearchStatus::infeasible || !std::isfinite(s.relaxed_objective)) {
      t.add_row({s.constraint, "infeasible", ""});
      continue;
    }
    const std::string change = r.summary.feasible
                                   ? fmt::format("{:+.3f} pts", 100.0 * (s.relaxed_objective - r.summary.best_objective))
                                   : "feasible";
    t.add_row({s.constraint, percent(s.relaxed_objective, 3), change});
  }
  return t;
}

namespace {
bool same_point(const ArchConfig& a, const ArchConfig& b) {
  const auto latent = [](const ArchConfig& c) { return c.attention.mla ? c.attention.mla->kv_lora_rank : 0; };
  return a.hidden_size == b.hidden_size && a.num_layers == b.num_layers && a.attention.num_heads == b.attention.num_heads &&
         a.attention.head_dim == b.attention.head_dim && a.attention.num_kv_heads == b.attention.num_kv_heads &&
         latent(a) == latent(b) && a.ffn.num_experts == b.ffn.num_experts && a.ffn.expert_dim == b.ffn.expert_dim &&
         a.ffn.shared_expert_dim == b.ffn.shared_expert_dim && a.ffn.dense_dim == b.ffn.dense_dim;
}

std::string budget_caps(const EqualMatchBounds& e) {
  return fmt::format("FLOPs {}, params {}, KV {}", percent(e.cap(e.flops), 2), percent(e.cap(e.params), 2),
                     percent(e.cap(e.kv), 2));
}

/// What "equally matched" meant: each budget's cap (weighted |deviation|) and where it comes from.
std::string equal_match_line(const MatchResult& r) {
  const EqualMatchBounds& e = r.summary.equal_match;
  return fmt::format("equally matched: each budget within {} of the best any of them attains (+ excess {}), at most "
                     "{} ({}objective <= {})\n",
                     percent(e.tolerance, 2), percent(e.excess, 2), budget_caps(e),
                     r.summary.unit_weights ? "" : "weighted; ", percent(e.objective, 2));
}

/// The tightest of the equally matched, when it is not row #1.
std::string tightest_line(const MatchResult& r) {
  if (!r.summary.tightest || r.candidates.empty()) return "";
  const Candidate& t = *r.summary.tightest;
  if (same_point(t.config, r.candidates.front().config)) return "tightest match: #1\n";
  const auto& d = t.deviation;
  return fmt::format("tightest match (--order tightest shows it first): max dev {}, FLOPs {}, params {}, KV {}, hidden "
                     "{}, heads {}, experts {}\n",
                     percent(d.max_abs(), 2), signed_percent(d.flops, 2), signed_percent(d.params, 2),
                     signed_percent(d.kv, 2), t.config.hidden_size, heads_text(t.config.attention), ffn_text(t.config.ffn));
}

/// Row #1's searched variables on a bound of their range, each with how to widen it.
std::string range_edge_lines(const MatchResult& r) {
  if (r.candidates.empty()) return "";
  std::string out;
  for (const RangeEdge& e : r.candidates.front().range_edges) {
    out += fmt::format("#1's {} {} is on the {} bound of its {}: the optimum may lie beyond; widen it with {}\n",
                       e.variable, e.value, e.lower ? "lower" : "upper", e.bound, e.widen);
  }
  return out;
}

/// The legend under the candidates table: how the rows are ordered, and which F is matched.
std::string table_legend(const MatchResult& r) {
  if (!r.summary.feasible) return "";
  const double f = r.baseline_budgets.training_flops_per_token;
  const double head = r.baseline_lm_head_training_flops_per_token;
  std::string out = describe(r.summary.order) + "\n" + equal_match_line(r) + r.summary.search_space + "\n" +
                    tightest_line(r) + range_edge_lines(r);
  if (head == 0 && !r.summary.lm_head_in_flops) return out;  // no vocabulary: no LM head to count
  if (r.summary.lm_head_in_flops) {
    out += fmt::format("FLOPs: training FLOPs per token with the LM head (--count-lm-head): baseline {} ({} without "
                       "it; the LM head {} of F)\n",
                       si(f + head, "F"), si(f, "F"), percent(head / (f + head), 1));
  } else {
    out += fmt::format("FLOPs: training FLOPs per token without the LM head: baseline {} ({} with it, the LM head {} "
                       "of that; --count-lm-head matches that F)\n",
                       si(f, "F"), si(f + head, "F"), percent(head / (f + head), 1));
  }
  return out;
}

std::string infeasible_text(const MatchResult& r) {
  std::string out = "No candidate meets the constraints: " + r.summary.message + "\n";
  if (r.summary.uncapped_best) {
    const auto& c = *r.summary.uncapped_best;
    out += fmt::format("Best without the caps: max deviation {} (FLOPs {}, params {}, KV {}): H {}, heads {}, experts {}\n",
                       percent(c.deviation.max_abs(), 3), signed_percent(c.deviation.flops),
                       signed_percent(c.deviation.params), signed_percent(c.deviation.kv), c.config.hidden_size,
                       heads_text(c.config.attention), ffn_text(c.config.ffn));
  }
  return out;
}
}  // namespace

std::string match_text(const MatchResult& r, const LoopSpec& loop, const Workload& workload,
                       const std::vector<double>& time_ratios, const TimeAccuracy* accuracy) {
  std::string out = fmt::format("baseline: {} ({} layers, H {})\nloop: {}\nworkload: {}\n\n",
                                r.baseline.name.empty() ? "(unnamed)" : r.baseline.name, r.baseline.num_layers,
                                r.baseline.hidden_size, loop.describe(), workload.description);
  out += candidates_table(r, time_ratios, accuracy).render_text();
  out += "\n" + r.summary.brief() + "\n" + table_legend(r);
  for (const auto& note : r.summary.notes) out += "note: " + note + "\n";
  for (const auto& note : r.baseline.notes) out += "note: baseline config: " + note + "\n";
  if (!r.summary.feasible) out += infeasible_text(r);
  return out;
}

std::string match_markdown(const MatchResult& r, const LoopSpec& loop, const std::vector<double>& time_ratios,
                           const TimeAccuracy* accuracy) {
  std::string out = fmt::format("**{}**, loop: {}\n\n", r.baseline.name.empty() ? "baseline" : r.baseline.name,
                                loop.describe());
  out += candidates_table(r, time_ratios, accuracy).render_markdown();
  out += "\n" + r.summary.brief() + "\n\n" + table_legend(r);
  if (!r.summary.feasible) out += "\n" + infeasible_text(r);
  return out;
}

nlohmann::ordered_json grid_json(const Grid& grid, const std::vector<GridRow>& rows, const LoopSpec& loop,
                                 const Workload& workload) {
  using json = nlohmann::ordered_json;
  json cells = json::array();
  for (const GridRow& row : rows) {
    json cell{{"size", row.cell->size},
              {"baseline", {{"config", config_json(row.result.baseline)}, {"budgets", budgets_json(row.result.baseline_budgets)}}},
              {"matched", row.result.candidates.empty() ? json(nullptr) : candidate_json(row.result.candidates.front())},
              {"summary", row.result.summary.brief()},
              {"shapes", to_string(row.result.summary.shapes)},
              {"kernel_stack", kernel_stack_json(row.result.summary)},
              {"order", to_string(row.result.summary.order)}};
    const auto paper = row.cell->published_max_deviation();
    cell["paper_max_deviation"] = paper ? json(*paper) : json(nullptr);
    cells.push_back(cell);
  }
  return json{{"schema_version", output_schema_version}, {"budget_version", version_string},
              {"description", grid.description}, {"loop", loop.describe()},
              {"workload", workload_json(workload)}, {"cells", cells}};
}

}  // namespace budget::render
