// A measured run's kernel settings read with its layout from one parse of its Megatron-LM arguments
// (read_megatron_timed_run(), budget/megatron_args.hpp): CUDA graphs, the MoE dispatcher's settings
// and the main gradients' bytes, and the flag table saying these arguments are modelled.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/megatron_args.hpp"

using namespace budget;

namespace {

ArchConfig kernel_options_llama() {
  ArchConfig c;
  c.name = "llama-small";
  c.hidden_size = 1024;
  c.num_layers = 8;
  c.attention = {8, 128, 2};
  c.ffn.gated = true;
  c.ffn.dense_dim = 2816;
  c.vocab_size = 32000;
  c.settings.max_position_embeddings = 8192;
  return c;
}

MegatronTimedRun timed(const std::string& text) {
  return read_megatron_timed_run(megatron_words(text, "test"), kernel_options_llama(), 8, "test");
}

}  // namespace

TEST_CASE("interop: a run's kernel settings come from the same arguments as its layout", "[interop]") {
  const std::string base = "--seq-length 4096 --micro-batch-size 1 --bf16 ";
  const MegatronTimedRun plain = timed(base);
  CHECK_FALSE(plain.kernels.cuda_graphs);
  CHECK_FALSE(plain.kernels.moe.router_fusion);
  CHECK(plain.kernels.moe.comm_sms == 0);
  // --bf16: accumulate_allreduce_grads_in_fp32 set (arguments.py:1207-1216 at d98e8a64): fp32 main
  // gradients, 4 bytes; --grad-reduce-in-bf16 makes them bf16, 2 bytes.
  CHECK(main_grad_bytes(plain.run.layout) == 4);
  CHECK(main_grad_bytes(timed(base + "--grad-reduce-in-bf16").run.layout) == 2);
  // The run part is read_megatron_args() of the same words.
  const MegatronRun direct = read_megatron_args(megatron_words(base, "test"), kernel_options_llama(), 8, "test");
  CHECK(plain.run.layout.dp == direct.layout.dp);
  CHECK(plain.run.modelled == direct.modelled);
  CHECK(plain.run.read == direct.read);

  // Graphs over whole layers; of some modules only: those modules graphed, the rest launched by the
  // CPU, said in the notes.
  CHECK(timed(base + "--cuda-graph-impl transformer_engine").kernels.cuda_graphs);
  CHECK(timed(base + "--enable-cuda-graph").kernels.cuda_graphs);
  CHECK_FALSE(timed(base + "--cuda-graph-impl transformer_engine").kernels.cuda_graph_modules.any());
  const MegatronTimedRun partial =
      timed(base + "--cuda-graph-impl transformer_engine --cuda-graph-modules moe_router moe_preprocess");
  CHECK_FALSE(partial.kernels.cuda_graphs);
  CudaGraphModules router;
  router.moe_router = router.moe_preprocess = true;
  CHECK(partial.kernels.cuda_graph_modules == router);
  REQUIRE(partial.kernels.notes.size() == 1);
  CHECK(partial.kernels.notes[0] == "--cuda-graph-modules moe_router moe_preprocess: CUDA graphs of these modules "
                                    "only; the rest launched by the CPU, 30 µs a launch");
  const MegatronTimedRun attn = timed(base + "--cuda-graph-impl transformer_engine --cuda-graph-modules attn");
  CHECK(attn.kernels.cuda_graph_modules.attn);
  CHECK_FALSE(attn.kernels.cuda_graph_modules.moe_router);
  CHECK(timed(base + "--cuda-graph-impl local --cuda-graph-modules full_iteration").kernels.cuda_graphs);
  CHECK_FALSE(timed(base + "--cuda-graph-impl local --cuda-graph-modules full_iteration").kernels.cuda_graph_modules.any());
  // The same reading without a config (match and grid on a cluster build one time model for every
  // baseline): the graphs alone, and the same refusals.
  const std::string attn_args = base + "--cuda-graph-impl transformer_engine --cuda-graph-modules attn";
  const MegatronKernelOptions alone = megatron_cuda_graphs(megatron_words(attn_args, "test"), "test");
  CHECK_FALSE(alone.cuda_graphs);
  CHECK(alone.cuda_graph_modules == attn.kernels.cuda_graph_modules);
  CHECK(alone.notes == attn.kernels.notes);
  CHECK(megatron_cuda_graphs(megatron_words(base + "--cuda-graph-impl full_iteration", "test"), "test").cuda_graphs);
  CHECK_FALSE(megatron_cuda_graphs(megatron_words(base, "test"), "test").cuda_graphs);
  CHECK_THROWS_AS(megatron_cuda_graphs(megatron_words(base + "--cuda-graph-impl local --cuda-graph-modules bogus", "test"), "test"),
                  Error);

  const MegatronTimedRun moe = timed(base + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
                                            "--moe-router-fusion --moe-hybridep-num-sms 32");
  CHECK(moe.kernels.moe.router_fusion);
  CHECK(moe.kernels.moe.flex_backend == FlexBackend::hybridep);
  CHECK(moe.kernels.moe.comm_sms == 32);
  CHECK_THROWS_AS(timed(base + "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep"), Error);
  CHECK_THROWS_AS(timed(base + "--moe-deepep-num-sms 5000"), Error);

  // The table says what the reader does: these arguments are modelled, not "read, not modelled".
  for (const char* flag : {"--cuda-graph-impl", "--enable-cuda-graph", "--external-cuda-graph", "--cuda-graph-modules",
                           "--cuda-graph-scope", "--moe-router-fusion", "--moe-flex-dispatcher-backend",
                           "--moe-flex-dispatcher-num-sms", "--moe-deepep-num-sms", "--moe-hybridep-num-sms"}) {
    const MegatronArgument* a = find_megatron_argument(flag);
    REQUIRE(a != nullptr);
    CHECK(a->use == MegatronUse::modelled);
  }
  // Nor does the reader list them as read (only the default dispatcher's buffer note stays).
  const MegatronTimedRun graphs = timed(base + "--cuda-graph-impl transformer_engine --moe-router-fusion");
  CHECK(graphs.run.read == plain.run.read);
  CHECK(std::find(graphs.run.modelled.begin(), graphs.run.modelled.end(), "--moe-router-fusion") !=
        graphs.run.modelled.end());
}
