// The one JSON form of what Megatron-LM arguments gave a command (budget_render/megatron.hpp): the
// same keys, in the same order, for `layout` (checked against the config, no file: its notes name it)
// and the cluster ranking (checked against the baseline, the file named).
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/megatron_args.hpp"
#include "budget_render/megatron.hpp"

using namespace budget;

namespace {
std::vector<std::string> keys(const nlohmann::ordered_json& j) {
  std::vector<std::string> out;
  for (const auto& [key, value] : j.items()) out.push_back(key);
  return out;
}
}  // namespace

TEST_CASE("render: what Megatron-LM arguments gave is one JSON form for every command", "[render]") {
  MegatronRun run;
  run.global_batch_size = 512;
  run.modelled = {"--tensor-model-parallel-size"};
  run.checked = {"--num-layers"};
  run.read = {"--cp-comm-type: CP's p2p / a2a / allgather (communication)"};
  run.not_modelled = {"--seed"};
  run.document_mask = true;
  const nlohmann::ordered_json ranking = render::megatron_read_json(run, "team.args", "baseline");
  CHECK(keys(ranking) == std::vector<std::string>{"file", "commit", "global_batch_size", "modelled",
                                                  "checked_against_baseline", "read_not_modelled", "not_modelled",
                                                  "attention_mask"});
  CHECK(ranking["file"] == "team.args");
  CHECK(ranking["commit"] == std::string(megatron_arguments_commit()));
  CHECK(ranking["global_batch_size"] == 512);
  CHECK(ranking["checked_against_baseline"] == nlohmann::json::array({"--num-layers"}));
  CHECK(ranking["read_not_modelled"].size() == 1);
  CHECK(ranking["not_modelled"] == nlohmann::json::array({"--seed"}));
  CHECK(ranking["attention_mask"] == "document");
  run.document_mask = false;
  const nlohmann::ordered_json layout = render::megatron_read_json(run, "", "config");
  CHECK(keys(layout) == std::vector<std::string>{"commit", "global_batch_size", "modelled", "checked_against_config",
                                                 "read_not_modelled", "not_modelled", "attention_mask"});
  CHECK(layout["attention_mask"] == "causal");
}
