// Each note fragment said once per output (issue 17, item 6): passes of one op, ops of one step
// and the candidates of one match repeat the same out-of-range fact.

#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "budget/config_io.hpp"
#include "budget/match_outcome.hpp"
#include "budget_render/match_outcome.hpp"
#include "budget_render/step_time.hpp"

using namespace budget;
using namespace budget::render;

namespace {
/// The "; "-separated fragments of every by_op note of every `time` object under `j`, counted.
void count_fragments(const nlohmann::ordered_json& j, std::multiset<std::string>& out) {
  if (j.is_object()) {
    if (j.contains("by_op") && j["by_op"].is_array()) {
      for (const auto& op : j["by_op"]) {
        const std::string note = op["note"].get<std::string>();
        for (std::size_t b = 0; b < note.size();) {
          std::size_t e = note.find("; ", b);
          if (e == std::string::npos) e = note.size();
          const std::string f = note.substr(b, e - b);
          if (f.find("× the largest measured (") != std::string::npos ||
              f.find("× below the smallest measured (") != std::string::npos) {
            out.insert(f);
          }
          b = e + 2;
        }
      }
    }
    for (const auto& [key, value] : j.items()) count_fragments(value, out);
  } else if (j.is_array()) {
    for (const auto& value : j) count_fragments(value, out);
  }
}
}  // namespace

TEST_CASE("SaidNotes: a fragment said before in the output is not said again", "[render][time]") {
  SaidNotes said;
  // Two passes of one op repeat the tokens fragment (the time domain joins them with "; ").
  CHECK(said.say("M (tokens) 65536 is 2× the largest measured (32768); K 14336 is 14× the largest measured (1024); "
                 "M (tokens) 65536 is 2× the largest measured (32768); N 14336 is 14× the largest measured (1024)") ==
        "M (tokens) 65536 is 2× the largest measured (32768); K 14336 is 14× the largest measured (1024); "
        "N 14336 is 14× the largest measured (1024)");
  // The next op (or candidate) of the same output: only what is new; nothing new: "as above".
  CHECK(said.say("K 14336 is 14× the largest measured (1024); head_dim 84 is 1.2× below the smallest measured (100)") ==
        "head_dim 84 is 1.2× below the smallest measured (100)");
  CHECK(said.say("N 14336 is 14× the largest measured (1024)") == "as above");
  CHECK(said.say("") == "");
  // An op's own notes are not out-of-range facts: kept every time.
  CHECK(said.say("no rows: bytes at the measured copy bandwidth") == "no rows: bytes at the measured copy bandwidth");
  CHECK(said.say("no rows: bytes at the measured copy bandwidth; N 14336 is 14× the largest measured (1024)") ==
        "no rows: bytes at the measured copy bandwidth");
  // Another output starts afresh.
  SaidNotes other;
  CHECK(other.say("N 14336 is 14× the largest measured (1024)") == "N 14336 is 14× the largest measured (1024)");
}

TEST_CASE("a match with time says each out-of-range fragment once: Mixtral-8x7B on the shipped profile",
          "[render][time]") {
  const ArchConfig mixtral = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/examples/hf/mixtral-8x7b.json");
  const TimeModel model(load_calibration_profile(std::string(BUDGET_SOURCE_DIR) +
                                                 "/cuda_profiler/profiles/h200-torch-eager.json"));
  MatchRequest request;
  request.model = &model;
  const MatchOutcome m = match_outcome(mixtral, LoopSpec::smelt(), paper_workload(), default_constraints(mixtral), request);
  REQUIRE(m.result.candidates.size() >= 2);
  const nlohmann::ordered_json j = match_outcome_json(m, LoopSpec::smelt(), paper_workload(), request);
  std::multiset<std::string> fragments;
  count_fragments(j, fragments);
  // Mixtral's expert width (14336) is far beyond the profile's widest measured expert GEMM.
  REQUIRE_FALSE(fragments.empty());
  for (const auto& f : fragments) {
    INFO(f);
    CHECK(fragments.count(f) == 1);
  }
  // Every candidate and the baseline still says whether it is in range.
  CHECK(j["time"]["baseline"]["out_of_range"].get<bool>());
}
