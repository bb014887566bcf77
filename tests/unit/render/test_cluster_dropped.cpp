// The candidates a cluster ranking drops as not trainable at scale (issue 30, item 5), printed the
// same way by `budget-match --cluster` and per cell by `grid --cluster` (budget_render/cluster_rank.hpp).

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/config_io.hpp"
#include "budget_render/budgets.hpp"
#include "budget_render/cluster_rank.hpp"

using namespace budget;

TEST_CASE("render: candidates dropped as not trainable at scale, one line and JSON each", "[render][cluster]") {
  ArchConfig c = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/examples/configs/paper-200M-S95-smelt.json");
  const std::vector<ClusterDropped> dropped{{c, "needs more than 2 GPUs to fit memory, twice the 1 the baseline fits on"}};
  const nlohmann::ordered_json j = render::cluster_dropped_json(dropped);
  REQUIRE(j.size() == 1);
  CHECK(j[0]["reason"] == dropped[0].reason);
  CHECK(j[0]["config"]["hidden_size"] == c.hidden_size);
  CHECK(render::cluster_dropped_line(dropped[0]) ==
        "hidden " + std::to_string(c.hidden_size) + ", heads " + render::heads_text(c.attention) + ", experts " +
            render::ffn_text(c.ffn) + ": " + dropped[0].reason);
  CHECK(render::cluster_dropped_json({}).is_array());
  CHECK(render::cluster_dropped_json({}).empty());
}
