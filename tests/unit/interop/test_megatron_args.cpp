// The Megatron-LM interop room (budget/megatron_args.hpp): the one argument table, the shell word
// splitter, the reader (argparse semantics, shape checks, DP and micro-batches), the writer and the
// round trip layout → export → --megatron-args → the same layout and memory.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/cluster.hpp"
#include "budget/export.hpp"
#include "budget/megatron_args.hpp"
#include "budget/training_memory.hpp"
#include "interop/megatron_test_models.hpp"

using namespace budget;

namespace {

ArchConfig interop_llama() { return test::megatron_small_llama(); }

ClusterSpec interop_cluster() { return test::megatron_test_cluster("test", 8, std::int64_t{1} << 40); }

std::vector<std::string> words(const std::string& text) { return megatron_words(text, "test"); }

}  // namespace

TEST_CASE("interop: the table lists Megatron's arguments with their source lines", "[interop]") {
  CHECK(megatron_arguments().size() == 838);  // scripts/megatron_arguments.py at d98e8a64
  const MegatronArgument* tp = find_megatron_argument("--tensor-model-parallel-size");
  REQUIRE(tp != nullptr);
  CHECK(tp->type == "int");
  CHECK(tp->arity == "1");
  CHECK(tp->source == "megatron/core/model_parallel_config.py:11");
  CHECK(tp->use == MegatronUse::modelled);
  const MegatronArgument* recipe = find_megatron_argument("--fp8-recipe");
  REQUIRE(recipe != nullptr);
  CHECK(recipe->choices == std::vector<std::string>{"tensorwise", "delayed", "mxfp8", "blockwise", "custom"});
  // A store_false flag is found by both of its names.
  CHECK(find_megatron_argument("--no-tp-comm-overlap-ag") == find_megatron_argument("--disable-tp-comm-overlap-ag"));
  CHECK(find_megatron_argument("--log-interval")->use == MegatronUse::not_modelled);
  CHECK(find_megatron_argument("--num-layers")->use == MegatronUse::shape);
  CHECK(find_megatron_argument("--tensor-parallel-size") == nullptr);
  CHECK_THROWS_WITH(require_megatron_argument("--tensor-parallel-size"), Catch::Contains("not an argument"));
}

TEST_CASE("interop: shell words by POSIX quoting rules, no shell run", "[interop]") {
  CHECK(split_shell_words("a 'b c' \"d \\\" e\" f\\ g # comment\nh\\\ni", "t") ==
        std::vector<std::string>{"a", "b c", "d \" e", "f g", "hi"});
  CHECK(split_shell_words("--x 'Et|(tt|)*30mL'", "t") == std::vector<std::string>{"--x", "Et|(tt|)*30mL"});
  CHECK(split_shell_words("a#b ''", "t") == std::vector<std::string>{"a#b", ""});
  CHECK_THROWS_WITH(split_shell_words("--x $HOME", "t"), Catch::Contains("'$'"));
  CHECK_THROWS_WITH(split_shell_words("--x \"$HOME\"", "t"), Catch::Contains("expanded"));
  CHECK_THROWS_WITH(split_shell_words("--x Et|L", "t"), Catch::Contains("'|'"));
  CHECK_THROWS_WITH(split_shell_words("--x 'open", "t"), Catch::Contains("line 1: a single quote is not closed"));
  // A bash-array file: the words inside the arrays; anything else outside is refused.
  CHECK(words("# c\nMODEL_ARGS=(\n  --num-layers 8\n)\nTRAINING_ARGS=(--bf16)\n") ==
        std::vector<std::string>{"--num-layers", "8", "--bf16"});
  CHECK_THROWS_WITH(words("A=(--bf16)\nsource x\n"), Catch::Contains("outside the file's bash arrays"));
  CHECK_THROWS_WITH(words("A=(--bf16\n"), Catch::Contains("not closed"));
}

TEST_CASE("interop: the reader resolves DP, micro-batches and Megatron's defaults", "[interop]") {
  const ArchConfig c = interop_llama();
  const MegatronRun run = read_megatron_args(
      words("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel "
            "--micro-batch-size 2 --global-batch-size 64 --seq-length 4096 --bf16 --use-distributed-optimizer "
            "--recompute-granularity full --recompute-method uniform --recompute-num-layers 2 --log-interval 1 "
            "--num-layers 8 --hidden-size 1024 --overlap-grad-reduce"),
      c, 16, "test");
  const ParallelLayout& l = run.layout;
  CHECK(l.dp == 4);                 // 16 / (2 · 1 · 2)
  CHECK(l.micro_batches == 8);      // 64 / (2 · 4)
  CHECK(l.recompute.method == RecomputeMethod::uniform);
  CHECK(l.recompute.full_layers == 2);
  CHECK(l.vocab_divisible_by == 128);  // Megatron's default padding
  CHECK(l.dropout);                    // Megatron's default dropout 0.1
  CHECK(l.dispatcher == MoeDispatcher::allgather);
  CHECK(run.overlap.dp);
  CHECK_FALSE(run.overlap.tp);
  CHECK(run.not_modelled == std::vector<std::string>{"--log-interval"});
  CHECK(run.checked.size() == 2);
  // Without --bf16 or --fp16 Megatron trains in fp32.
  CHECK(read_megatron_args(words("--seq-length 4096"), c, 1, "t").layout.precision == TrainingPrecision::fp32);
}

TEST_CASE("interop: the training recipe read without a model is the one read_megatron_args() reads", "[interop]") {
  // match and grid build their time model from this recipe before any one candidate's arguments are
  // read: its FP8 recipe and its main-gradient bytes must be those memory prices (issue 40 item 3).
  const std::string text =
      "--tensor-model-parallel-size 2 --micro-batch-size 2 --global-batch-size 64 --seq-length 4096 --bf16 "
      "--grad-reduce-in-bf16 --fp8-format hybrid --fp8-recipe tensorwise --use-distributed-optimizer "
      "--use-precision-aware-optimizer --exp-avg-dtype bf16 --recompute-granularity selective "
      "--hidden-dropout 0 --attention-dropout 0 --cross-entropy-loss-fusion";
  const TrainingRecipe recipe = megatron_training_recipe(words(text), "test");
  const ParallelLayout read = read_megatron_args(words(text), interop_llama(), 16, "test").layout;
  CHECK(recipe.fp8 == Fp8Recipe::tensorwise);
  CHECK(main_grad_bytes(recipe) == 2.0);  // --grad-reduce-in-bf16: bf16 main gradients
  CHECK(recipe.micro_batch_size == 2);
  CHECK(recipe.fp8 == read.fp8);
  CHECK(main_grad_bytes(recipe) == main_grad_bytes(read));
  CHECK(recipe.optimizer_dtypes == read.optimizer_dtypes);
  CHECK(recipe.optimizer_dtypes.exp_avg == StateDtype::bf16);
  CHECK(recipe.recompute.kind == read.recompute.kind);
  CHECK(recipe.distributed_optimizer == read.distributed_optimizer);
  CHECK(recipe.dropout == read.dropout);
  CHECK_FALSE(recipe.dropout);
  CHECK(recipe.cross_entropy_fusion == read.cross_entropy_fusion);
  // A plain --bf16 run accumulates in fp32; what Megatron refuses is refused here too.
  CHECK(main_grad_bytes(megatron_training_recipe(words("--bf16"), "t")) == 4.0);
  CHECK_THROWS_WITH(megatron_training_recipe(words("--bf16 --fp16"), "t"), Catch::Contains("exclude each other"));
}

TEST_CASE("interop: the reader refuses what Megatron refuses, naming both values", "[interop]") {
  const ArchConfig c = interop_llama();
  const auto read = [&](const std::string& text, std::int64_t gpus = 8) { return read_megatron_args(words(text), c, gpus, "args"); };
  CHECK_THROWS_WITH(read("--seq-length 4096 --tensor-model-paralel-size 2"),
                    Catch::Contains("did you mean --tensor-model-parallel-size"));
  CHECK_THROWS_WITH(read("--seq-length 4096 --hidden-size 2048"),
                    Catch::Contains("--hidden-size: 2048 disagrees with the config's hidden size (1024)"));
  CHECK_THROWS_WITH(read("--seq-length 4096 --tensor-model-parallel-size 3"), Catch::Contains("do not divide by TP·CP·PP"));
  CHECK_THROWS_WITH(read("--seq-length 4096 --micro-batch-size 2 --global-batch-size 12"),
                    Catch::Contains("is not whole"));
  CHECK_THROWS_WITH(read("--seq-length 4096 --fp8-recipe blockwise"), Catch::Contains("without --fp8-format"));
  CHECK_THROWS_WITH(read("--seq-length 4096 --fp8-format e5m2"), Catch::Contains("Megatron's choices: e4m3, hybrid"));
  CHECK_THROWS_WITH(read("--seq-length x"), Catch::Contains("\"x\" is not an integer"));
  CHECK_THROWS_WITH(read("--seq-length 4096 --recompute-granularity full"), Catch::Contains("--recompute-method"));
  CHECK_THROWS_WITH(read("torchrun --seq-length 4096"), Catch::Contains("give the arguments alone"));
  CHECK_THROWS_WITH(read("--seq-length 4096 --vocab-size 32000 --tokenizer-type NullTokenizer"),
                    Catch::Contains("(+1 for NullTokenizer) disagrees with the config's vocabulary (32000)"));
  // block recompute of 0 layers is no recompute (Megatron's block loop checkpoints none).
  CHECK(read("--seq-length 4096 --recompute-granularity full --recompute-method block --recompute-num-layers 0")
            .layout.recompute.kind == RecomputeKind::none);
}

TEST_CASE("interop: layout → Megatron arguments → the same layout and memory", "[interop]") {
  const ArchConfig c = interop_llama();
  ParallelLayout l;
  l.tp = 2;
  l.sequence_parallel = true;
  l.pp = 2;
  l.virtual_stages = 2;
  l.gpus = 16;
  l.micro_batch_size = 1;
  l.micro_batches = 8;
  l.seq_len = 4096;
  l.recompute.kind = RecomputeKind::selective;
  l.recompute.modules = {RecomputeModule::core_attn, RecomputeModule::mlp};
  l.distributed_optimizer = true;
  l.cross_entropy_fusion = true;
  l.vocab_divisible_by = 128;
  l.fp8 = Fp8Recipe::mxfp8;
  const TrainingMemory before = training_memory(c, l, interop_cluster());
  CommOverlap overlap;
  overlap.tp = true;
  ExportOptions eo;
  eo.seq_length = l.seq_len;
  eo.megatron_training_args = megatron_layout_args(before.layout, overlap);
  const std::string file = export_config(c, ExportTarget::megatron, eo).text;
  CHECK(file.find("TRAINING_ARGS=(") != std::string::npos);
  const MegatronRun run = read_megatron_args(megatron_words(file, "export"), c, 16, "export");
  const TrainingMemory after = training_memory(c, run.layout, interop_cluster());
  CHECK(run.layout.tp == 2);
  CHECK(run.layout.virtual_stages == 2);
  CHECK(run.layout.micro_batches == 8);
  CHECK(run.layout.recompute.modules == l.recompute.modules);
  CHECK(run.layout.fp8 == Fp8Recipe::mxfp8);
  CHECK(run.overlap.tp);
  CHECK(run.overlap.dp == overlap.dp);
  CHECK(run.overlap.pp == overlap.pp);
  REQUIRE(after.stages.size() == before.stages.size());
  for (std::size_t s = 0; s < before.stages.size(); ++s) CHECK(after.stages[s].peak_bytes == before.stages[s].peak_bytes);
  CHECK(run.checked.size() >= 5);  // the model's shape arguments agree with the config
}

TEST_CASE("interop: gradient and optimizer dtypes as arguments.py resolves them", "[interop]") {
  const ArchConfig c = interop_llama();
  const auto read = [&](const std::string& text) {
    return read_megatron_args(words("--seq-length 4096 --use-distributed-optimizer " + text), c, 8, "args");
  };
  // --bf16 alone: fp32 gradients (arguments.py:1215-1216 sets --accumulate-allreduce-grads-in-fp32).
  CHECK_FALSE(read("--bf16").layout.optimizer_dtypes.bf16_main_grads);
  CHECK(read("--bf16 --grad-reduce-in-bf16").layout.optimizer_dtypes.bf16_main_grads);
  CHECK(read("--bf16 --main-grads-dtype bf16").layout.optimizer_dtypes.bf16_main_grads);
  // --grad-reduce-in-bf16 wins over --accumulate-allreduce-grads-in-fp32 (arguments.py:1213-1214).
  CHECK(read("--bf16 --accumulate-allreduce-grads-in-fp32 --grad-reduce-in-bf16").layout.optimizer_dtypes.bf16_main_grads);
  CHECK_THROWS_WITH(read("--bf16 --accumulate-allreduce-grads-in-fp32 --main-grads-dtype bf16"),
                    Catch::Contains("Megatron asserts fp32"));
  // Without --bf16 the flag changes nothing and is listed so.
  const MegatronRun fp16 = read("--fp16 --grad-reduce-in-bf16");
  CHECK_FALSE(fp16.layout.optimizer_dtypes.bf16_main_grads);
  const auto lists = [](const std::vector<std::string>& v, const std::string& part) {
    return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(part) != std::string::npos; });
  };
  CHECK(lists(fp16.read, "--grad-reduce-in-bf16: no effect without --bf16"));
  // The state dtypes apply with the precision-aware optimizer only.
  const MegatronRun aware = read("--bf16 --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype fp8");
  CHECK(aware.layout.optimizer_dtypes.precision_aware);
  CHECK(aware.layout.optimizer_dtypes.exp_avg == StateDtype::bf16);
  CHECK(aware.layout.optimizer_dtypes.exp_avg_sq == StateDtype::fp8);
  CHECK(parameter_bytes(aware.layout).optimizer == 2.0 + 2.0 + 1.0);
  const MegatronRun ignored = read("--bf16 --exp-avg-dtype bf16");
  CHECK(ignored.layout.optimizer_dtypes.exp_avg == StateDtype::fp32);
  CHECK(lists(ignored.read, "--exp-avg-dtype bf16: no effect without --use-precision-aware-optimizer"));
  CHECK(read("--bf16 --moe-permute-fusion").layout.moe_permute_fusion);
  CHECK_THROWS_WITH(read("--bf16 --optimizer muon"), Catch::Contains("only Adam's optimizer states are modelled"));
  CHECK(read("--bf16 --optimizer adam").layout.precision == TrainingPrecision::bf16);
}
