// The recipe a layout search holds (budget/parallel_layout.hpp, LayoutRecipe; docs/cluster.md, "The
// recipe held") and the cluster ranking at a team's layout (LayoutSearchOptions::team_layout, issue
// 31): the search's layouts against a brute force over the held space, each priced with
// training_memory() of a layout built by hand (FP8 changes memory inside the search); one FP8 recipe
// for memory and time; the team's layout used where valid and fitting, else the search with the
// recipe held and the reason.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/calibration.hpp"
#include "budget/cluster.hpp"
#include "budget/cluster_time.hpp"
#include "budget/error.hpp"
#include "budget/layout_search.hpp"
#include "budget/time_model.hpp"
#include "budget/training_memory.hpp"
#include "support/accounting_fixtures.hpp"
#include "support/pipeline_split_brute.hpp"
#include "support/cluster_fixtures.hpp"

using namespace budget;

namespace {

/// The recipe of the tests: FP8 tensorwise with FP8 parameters, bf16 main gradients, the
/// precision-aware optimizer's bf16 moments, micro-batch size 2, selective recompute, the distributed
/// optimizer. `base` is a TrainingRecipe: it holds no parallel sizes for the search to ignore.
LayoutRecipe fp8_recipe() {
  LayoutRecipe r;
  r.base.fp8 = Fp8Recipe::tensorwise;
  r.base.fp8_param_gather = true;
  r.base.optimizer_dtypes.bf16_main_grads = true;
  r.base.optimizer_dtypes.precision_aware = true;
  r.base.optimizer_dtypes.exp_avg = StateDtype::bf16;
  r.base.optimizer_dtypes.exp_avg_sq = StateDtype::bf16;
  r.base.micro_batch_size = 2;
  r.base.recompute.kind = RecomputeKind::selective;
  r.base.distributed_optimizer = true;
  r.hold_micro_batch_size = true;
  r.hold_recompute = true;
  r.hold_distributed_optimizer = true;
  return r;
}

const CalibrationProfile& recipe_profile() {
  static const CalibrationProfile profile =
      load_calibration_profile(std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-published.json");
  return profile;
}

/// The time model of the tests' recipe (fp8_recipe().base: FP8 tensorwise, bf16 main gradients), or
/// of the default recipe (bf16 GEMMs, fp32 main gradients) for Fp8Recipe::none.
const TimeModel& recipe_model(Fp8Recipe fp8) {
  static const TimeModel bf16(recipe_profile());
  static const TimeModel tensorwise(recipe_profile(), [] {
    TimeModelOptions o;
    o.recipe = fp8_recipe().base;
    return o;
  }());
  return fp8 == Fp8Recipe::none ? bf16 : tensorwise;
}

}  // namespace

TEST_CASE("layout search: the recipe held, against brute force over the held space", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();  // 12 layers, 10 heads, 2 KV heads, 192 experts
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{16} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  o.seq_len = 4096;
  o.keep = 1000;
  o.recipe = fp8_recipe();
  const LayoutSearchResult found = search_layouts(recipe_model(Fp8Recipe::tensorwise), c, cluster, o);
  REQUIRE_FALSE(found.layouts.empty());

  // Brute force: the space with micro-batch size 2, selective recompute and the distributed
  // optimizer only, each layout built field by field with the recipe's FP8 and dtypes.
  std::int64_t valid = 0;
  std::int64_t fitting = 0;
  std::int64_t fp8_smaller = 0;
  // (PP, V, first, last): every pipeline of the space, the uneven splits by brute force.
  const std::vector<std::array<std::int64_t, 4>> splits = test::brute_pipeline_space(12, 8);
  for (std::int64_t tp : {1, 2, 4}) {
    for (std::int64_t cp : {1, 2, 4, 8}) {
      for (const auto& [pp, v, first, last] : splits) {
        for (std::int64_t ep : {1, 2, 4, 8, 16, 32, 64, 128}) {
          for (std::int64_t etp : {std::int64_t{1}, tp}) {
            if (tp * cp * pp > 8 || 8 % (tp * cp * pp) != 0 || (pp == 1 && v > 1)) continue;
            const std::int64_t dp = 8 / (tp * cp * pp);
            if (o.global_batch_tokens % (2 * o.seq_len * dp) != 0) continue;
            ParallelLayout l = test::space_layout(tp, cp, {pp, v, first, last}, ep, etp, 2,
                                                  o.global_batch_tokens / (2 * o.seq_len * dp), o.seq_len);
            l.recompute.kind = RecomputeKind::selective;
            l.distributed_optimizer = true;
            if (!l.validation_error(c).empty()) {
              if (etp == tp) break;
              continue;
            }
            ++valid;
            const TrainingMemory bf16 = training_memory(c, l, cluster);
            l.fp8 = Fp8Recipe::tensorwise;
            l.fp8_param_gather = true;
            l.optimizer_dtypes.bf16_main_grads = true;
            l.optimizer_dtypes.precision_aware = true;
            l.optimizer_dtypes.exp_avg = StateDtype::bf16;
            l.optimizer_dtypes.exp_avg_sq = StateDtype::bf16;
            const TrainingMemory fp8 = training_memory(c, l, cluster);
            if (fp8.peak_bytes < bf16.peak_bytes) ++fp8_smaller;
            if (fp8.fits) ++fitting;
            if (etp == tp) break;  // TP = 1: one ETP choice
          }
        }
      }
    }
  }
  CHECK(found.valid == valid);
  CHECK(found.fitting == fitting);
  CHECK(fp8_smaller == valid);  // FP8 parameters and 16-bit states: less memory on every layout
  REQUIRE(static_cast<std::int64_t>(found.layouts.size()) == fitting);
  for (const RankedLayout& r : found.layouts) {
    const ParallelLayout& l = r.memory.layout;
    CHECK(l.micro_batch_size == 2);
    CHECK(l.recompute.kind == RecomputeKind::selective);
    CHECK(l.distributed_optimizer);
    CHECK(l.fp8 == Fp8Recipe::tensorwise);
    CHECK(l.fp8_param_gather);
    CHECK(l.optimizer_dtypes == o.recipe.base.optimizer_dtypes);
    CHECK(l.gpu_count() == 8);
    CHECK(r.memory.peak_bytes == training_memory(c, l, cluster).peak_bytes);
  }
  // The same search without the recipe's FP8 and dtypes needs more memory at the same best layout.
  ParallelLayout plain = found.layouts[0].memory.layout;
  plain.fp8 = Fp8Recipe::none;
  plain.fp8_param_gather = false;
  plain.optimizer_dtypes = {};
  CHECK(training_memory(c, plain, cluster).peak_bytes > found.layouts[0].memory.peak_bytes);
}

TEST_CASE("layout search: one recipe (FP8, main-gradient bytes) prices memory and time", "[cluster][search]") {
  const ArchConfig c = test::paper_200m_baseline();
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{80} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  o.recipe = fp8_recipe();
  CHECK_THROWS_WITH(search_layouts(recipe_model(Fp8Recipe::none), c, cluster, o),
                    Catch::Contains("one recipe prices both"));
  o.recipe = {};
  CHECK_THROWS_WITH(search_layouts(recipe_model(Fp8Recipe::tensorwise), c, cluster, o),
                    Catch::Contains("one recipe prices both"));
  CHECK_NOTHROW(search_layouts(recipe_model(Fp8Recipe::none), c, cluster, o));
  // The same FP8 recipe with the default fp32 main gradients against the recipe's bf16 ones: the
  // time model's gradient accumulation would read 4 bytes where memory holds 2.
  o.recipe = fp8_recipe();
  TimeModelOptions fp8_only;
  fp8_only.recipe.fp8 = Fp8Recipe::tensorwise;
  CHECK_THROWS_WITH(search_layouts(TimeModel(recipe_profile(), fp8_only), c, cluster, o),
                    Catch::Contains("main_grad_bytes") && Catch::Contains("4-byte") && Catch::Contains("2-byte"));
  CHECK_NOTHROW(search_layouts(recipe_model(Fp8Recipe::tensorwise), c, cluster, o));
}

TEST_CASE("cluster ranking: one basis, every config searched with the team's recipe, the team's layout apart",
          "[cluster][search]") {
  const ArchConfig base = test::paper_200m_baseline();  // 12 layers
  const ArchConfig smelt = test::paper_200m_smelt();
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{80} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  o.recipe = fp8_recipe();
  ParallelLayout team = recipe_template(o.recipe);
  team.tp = 2;
  team.sequence_parallel = true;
  team.pp = 2;
  team.ep = 4;
  team.etp = 1;
  team.micro_batches = 4;  // 8 · 4096 · 4 tokens = MBS 2 · s 4096 · DP 2 · m 4
  team.seq_len = 4096;
  o.team_layout = team;
  const TimeModel& model = recipe_model(Fp8Recipe::tensorwise);
  const ClusterRanking r = rank_by_cluster_time(model, base, {smelt}, cluster, o);
  // One basis (issue 41): the baseline searched with the recipe held, as search_layouts gives it; the
  // team's layout prices it apart (team_baseline), its memory and time as priced directly, its ratio
  // over the searched baseline's time per token.
  LayoutSearchOptions held = o;
  held.team_layout.reset();
  held.keep = 1;
  const LayoutSearchResult best = search_layouts(model, base, cluster, held);
  REQUIRE(r.baseline.found);
  CHECK_FALSE(r.baseline.at_team_layout);
  CHECK(r.baseline.best.time.seconds_per_step == best.layouts.at(0).time.seconds_per_step);
  REQUIRE(r.team_baseline);
  REQUIRE(r.team_baseline->found);
  CHECK(r.team_baseline->at_team_layout);
  CHECK(r.team_baseline->layout_choice == "the team's layout");
  ParallelLayout resolved = team;
  resolved.gpus = 8;
  const TrainingMemory direct = training_memory(base, resolved, cluster);
  CHECK(r.team_baseline->best.memory.peak_bytes == direct.peak_bytes);
  CHECK(r.team_baseline->best.memory.layout.data_parallel() == 2);
  CHECK(r.team_baseline->best.time.seconds_per_step ==
        Approx(cluster_step_time(model, base, direct, cluster, o.time).seconds_per_step).epsilon(1e-12));
  CHECK(r.team_baseline->ratio_to_baseline == r.team_baseline->seconds_per_token / r.baseline.seconds_per_token);
  CHECK(r.team_baseline->ratio_to_baseline >= 1.0);  // the search includes the team's layout's shape
  REQUIRE(r.candidates.size() == 1);
  // The candidate is searched with the recipe held, never priced at the team's layout.
  const ClusterCandidateTime& c = r.candidates[0];
  REQUIRE(c.found);
  CHECK_FALSE(c.at_team_layout);
  CHECK(c.layout_choice.empty());
  CHECK(c.best.memory.layout.micro_batch_size == 2);
  CHECK(c.best.memory.layout.fp8 == Fp8Recipe::tensorwise);

  // PP 8 on 12 layers: not valid for the config; the search with the recipe held instead.
  team.pp = 8;
  team.tp = 1;
  team.sequence_parallel = false;
  team.micro_batches = 16;
  o.team_layout = team;
  const ClusterRanking s = rank_by_cluster_time(model, base, {smelt}, cluster, o);
  REQUIRE(s.baseline.found);
  CHECK_FALSE(s.baseline.at_team_layout);
  REQUIRE(s.team_baseline);
  CHECK_FALSE(s.team_baseline->found);
  CHECK(s.team_baseline->no_layout_reason.rfind("the team's layout is not valid for it: ", 0) == 0);
  CHECK(s.baseline.best.memory.layout.micro_batch_size == 2);
  CHECK(s.baseline.best.memory.layout.fp8 == Fp8Recipe::tensorwise);
  CHECK(s.baseline.best.memory.layout.recompute.kind == RecomputeKind::selective);
  // The search's best with the recipe held, as search_layouts gives it.
  LayoutSearchOptions one = o;
  one.team_layout.reset();
  one.keep = 1;
  const LayoutSearchResult searched = search_layouts(model, base, cluster, one);
  REQUIRE_FALSE(searched.layouts.empty());
  CHECK(s.baseline.best.time.seconds_per_step == searched.layouts[0].time.seconds_per_step);

  // A team layout that does not fit: the reason names the peak and the capacity.
  o.team_layout = recipe_template(o.recipe);
  o.team_layout->micro_batches = 16;
  const ClusterSpec small = test::eight_search_gpus(std::int64_t{6} << 30);
  try {
    const ClusterRanking t = rank_by_cluster_time(model, base, {}, small, o);
    CHECK_FALSE(t.baseline.at_team_layout);
    REQUIRE(t.team_baseline);
    CHECK(t.team_baseline->no_layout_reason.find("does not fit it: peak") != std::string::npos);
  } catch (const Error& e) {
    CHECK(std::string(e.source()) == no_baseline_layout_source);  // nothing fits 6 GiB at all
  }
}

TEST_CASE("cluster ranking: a team layout whose TP·CP·PP passes 64 bits is searched, never multiplied",
          "[cluster][search]") {
  // TP = CP = 2^32 + 1: TP·CP = 2^64 + 2^33 + 1 wrapped to 2^33 + 1 (signed overflow), which divided
  // nothing and let resolve_layout's refusal end the whole ranking; now formed within 2^40 only.
  const ArchConfig base = test::paper_200m_baseline();
  const ClusterSpec cluster = test::eight_search_gpus(std::int64_t{80} << 30);
  LayoutSearchOptions o = test::search_on_8_gpus();
  o.recipe = fp8_recipe();
  ParallelLayout team = recipe_template(o.recipe);
  team.tp = team.cp = (std::int64_t{1} << 32) + 1;
  team.seq_len = 4096;
  o.team_layout = team;
  const ClusterRanking r = rank_by_cluster_time(recipe_model(Fp8Recipe::tensorwise), base, {}, cluster, o);
  REQUIRE(r.baseline.found);
  CHECK_FALSE(r.baseline.at_team_layout);
  // One basis (issue 41): the baseline is searched; the team's layout is priced on its own line,
  // which says why it cannot run.
  REQUIRE(r.team_baseline);
  CHECK_FALSE(r.team_baseline->found);
  CHECK_THAT(r.team_baseline->no_layout_reason,
             Catch::Contains("8 GPUs do not divide by its TP·CP·PP = 4294967297·4294967297·1"));
}

TEST_CASE("layout recipe: a layout holds one TrainingRecipe, the template takes it and the held settings",
          "[cluster][layout][recipe]") {
  LayoutRecipe r;
  r.base.fp8 = Fp8Recipe::tensorwise;
  r.base.optimizer_dtypes.bf16_main_grads = true;
  r.base.micro_batch_size = 4;  // not held: the search's own
  r.base.recompute.kind = RecomputeKind::full;
  r.hold_recompute = true;
  const ParallelLayout t = recipe_template(r);
  const TrainingRecipe& held = t;  // the layout's recipe is its base, one value
  CHECK(held.fp8 == Fp8Recipe::tensorwise);
  CHECK(held.optimizer_dtypes.bf16_main_grads);
  CHECK(held.recompute.kind == RecomputeKind::full);
  CHECK(held.micro_batch_size == 1);
  CHECK(main_grad_bytes(t) == 2.0);
  CHECK(parameter_bytes(t).gradients == main_grad_bytes(t));
  const ParallelLayout sizes;
  CHECK(t.tp == sizes.tp);
  CHECK(t.pp == sizes.pp);
  CHECK(t.micro_batches == sizes.micro_batches);
  CHECK(t.seq_len == sizes.seq_len);
}
