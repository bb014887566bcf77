// The pipeline split's printed forms (PipelineSplit, budget/parallel_layout.hpp; one function each in
// layout/pipeline_split.cpp): Megatron-LM's arguments, the layout's JSON fields and the one-line
// summary, each kind against text written here by hand; and the Megatron arguments read back by the
// Megatron reader (megatron_words(), read_megatron_args()) to the same split.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/megatron_args.hpp"
#include "budget/parallel_layout.hpp"
#include "interop/megatron_test_models.hpp"

using namespace budget;

namespace {

using Arguments = std::vector<std::pair<std::string, std::string>>;

/// `split` written as Megatron-LM arguments after PP = `pp`, as shell text, read back for the 8-layer
/// test Llama on 8 GPUs.
PipelineSplit read_back(const PipelineSplit& split, std::int64_t pp) {
  std::string text = "--seq-length 4096 --pipeline-model-parallel-size " + std::to_string(pp);
  for (const auto& [flag, value] : split.megatron_arguments()) text += " " + flag + " " + value;
  const std::vector<std::string> words = megatron_words(text, "split args");
  return read_megatron_args(words, test::megatron_small_llama(), 8, "split args").layout.split;
}

void check_fields(const PipelineSplit& split, const std::string& layout, std::int64_t first, std::int64_t last) {
  const PipelineSplit::Fields f = split.json_fields();
  CHECK(f.pipeline_layout == layout);
  CHECK(f.first_stage_layers == first);
  CHECK(f.last_stage_layers == last);
}

}  // namespace

TEST_CASE("interop: the even pipeline split printed: no Megatron arguments, -1 counts, no summary words", "[interop]") {
  const PipelineSplit even;
  CHECK(even.megatron_arguments().empty());
  CHECK_FALSE(even.sets_chunks());
  check_fields(even, "", -1, -1);
  CHECK(even.summary("") == "");
  CHECK(even.summary(" loop replicated") == " loop replicated");
  CHECK(read_back(even, 2) == even);
}

TEST_CASE("interop: first/last pipeline split printed as Megatron's stage-layer counts, read back the same",
          "[interop]") {
  // 8 layers over PP 2: the first rank 5 and the last 3; either count alone leaves the rest to the other.
  const PipelineSplit both = PipelineSplit::first_last(5, 3);
  CHECK(both.megatron_arguments() ==
        Arguments{{"--decoder-first-pipeline-num-layers", "5"}, {"--decoder-last-pipeline-num-layers", "3"}});
  CHECK_FALSE(both.sets_chunks());
  check_fields(both, "", 5, 3);
  CHECK(both.summary("") == " first 5 last 3");
  CHECK(both.summary(" loop replicated") == " first 5 last 3 loop replicated");
  CHECK(read_back(both, 2) == both);

  const PipelineSplit first = PipelineSplit::first_last(5, std::nullopt);
  CHECK(first.megatron_arguments() == Arguments{{"--decoder-first-pipeline-num-layers", "5"}});
  check_fields(first, "", 5, -1);
  CHECK(first.summary("") == " first 5");
  CHECK(read_back(first, 2) == first);

  const PipelineSplit last = PipelineSplit::first_last(std::nullopt, 3);
  CHECK(last.megatron_arguments() == Arguments{{"--decoder-last-pipeline-num-layers", "3"}});
  check_fields(last, "", -1, 3);
  CHECK(last.summary(" loop replicated") == " last 3 loop replicated");
  CHECK(read_back(last, 2) == last);
}

TEST_CASE("interop: a per-stage pipeline split printed as its layout string, quoted, read back the same",
          "[interop]") {
  // Kept as given (the repeats not unrolled), single-quoted for the shell: '*' and '|' are shell syntax.
  const PipelineSplit two = PipelineSplit::per_stage("Et*4|t*4L", "test");
  CHECK(two.megatron_arguments() == Arguments{{"--pipeline-model-parallel-layout", "'Et*4|t*4L'"}});
  CHECK(two.sets_chunks());
  check_fields(two, "Et*4|t*4L", -1, -1);
  CHECK(two.summary("") == " (layout string)");
  CHECK(two.summary(" loop wrap") == " loop wrap (layout string)");
  const PipelineSplit read = read_back(two, 2);
  CHECK(read == two);
  CHECK(read.stages == std::vector<std::string>{"Etttt", "ttttL"});

  // Four stages over PP 2 (V = 2 from the string), with the grouped repeat form.
  const PipelineSplit four = PipelineSplit::per_stage("E(tt|)*3ttL", "test");
  CHECK(four.megatron_arguments() == Arguments{{"--pipeline-model-parallel-layout", "'E(tt|)*3ttL'"}});
  CHECK(read_back(four, 2) == four);
}

TEST_CASE("interop: the layout writer puts the split's Megatron arguments after PP, V only without a layout string",
          "[interop]") {
  ParallelLayout l;
  l.pp = 2;
  l.gpus = 8;
  l.virtual_stages = 2;
  l.micro_batches = 2;
  const auto pipeline_lines = [](const ParallelLayout& layout) {
    std::vector<std::string> out;
    for (const std::string& line : megatron_layout_args(layout, CommOverlap{})) {
      if (line.rfind("--pipeline", 0) == 0 || line.rfind("--decoder", 0) == 0 || line.rfind("--num-virtual", 0) == 0) {
        out.push_back(line);
      }
    }
    return out;
  };
  l.split = PipelineSplit::first_last(4, 2);
  CHECK(pipeline_lines(l) == std::vector<std::string>{"--pipeline-model-parallel-size 2",
                                                      "--decoder-first-pipeline-num-layers 4",
                                                      "--decoder-last-pipeline-num-layers 2",
                                                      "--num-virtual-stages-per-pipeline-rank 2"});
  l.split = PipelineSplit::per_stage("E(tt|)*3ttL", "test");
  CHECK(pipeline_lines(l) == std::vector<std::string>{"--pipeline-model-parallel-size 2",
                                                      "--pipeline-model-parallel-layout 'E(tt|)*3ttL'"});
}
