// Does a config fit one GPU of the profile's kind (budget/gpu_fit.hpp; docs/calibration.md, "Does
// it fit one GPU"): where the capacity comes from, the hand count of weights, gradients and
// optimizer states, and the verdict on released configs.

#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/gpu_fit.hpp"
#include "support/accounting_fixtures.hpp"

using namespace budget;

namespace {
const std::string shipped_profile = std::string(BUDGET_SOURCE_DIR) + "/cuda_profiler/profiles/h200-torch-eager.json";
constexpr double gib = 1024.0 * 1024.0 * 1024.0;
}  // namespace

TEST_CASE("the example clusters are compiled in", "[gpu_fit]") {
  const auto& examples = cluster_examples();
  REQUIRE(examples.size() >= 4);
  bool h200 = false;
  for (const auto& e : examples) {
    CHECK(e.path.rfind("examples/clusters/", 0) == 0);
    if (e.path == "examples/clusters/h200.json") {
      h200 = true;
      // examples/clusters/h200.json: memory_GiB 140.4, reserved_GiB 1.0.
      CHECK(static_cast<double>(e.cluster.memory_bytes) == Approx(140.4 * gib).epsilon(1e-9));
      CHECK(static_cast<double>(e.cluster.reserved_bytes) == Approx(1.0 * gib).epsilon(1e-9));
    }
  }
  CHECK(h200);
}

TEST_CASE("the capacity comes from the profile, else the example of that GPU name, else it is unknown", "[gpu_fit]") {
  CalibrationProfile p = load_calibration_profile(shipped_profile);
  REQUIRE(p.device.name == "NVIDIA H200");
  REQUIRE(p.device.memory_gib == 0.0);
  // The shipped profile has no capacity: "NVIDIA H200" begins "NVIDIA H200 SXM 141GB" word by word.
  const ProfileGpu example = profile_gpu(p);
  CHECK(example.source == GpuCapacitySource::cluster_example);
  CHECK(example.capacity_from == "examples/clusters/h200.json (NVIDIA H200 SXM 141GB)");
  REQUIRE(example.cluster);
  CHECK(static_cast<double>(example.cluster->usable_memory_bytes()) == Approx(139.4 * gib).epsilon(1e-9));
  // A capacity in the profile wins (all of it usable: it is what the device reported).
  p.device.memory_gib = 80;
  const ProfileGpu own = profile_gpu(p);
  CHECK(own.source == GpuCapacitySource::profile);
  REQUIRE(own.cluster);
  CHECK(own.cluster->usable_memory_bytes() == std::int64_t{80} << 30);
  // Neither: unknown, and the verdict says so.
  p.device.memory_gib = 0;
  p.device.name = "NVIDIA H2";  // a word prefix ("H2" is not "H200"), not a match
  const OneGpuFit unknown = one_gpu_fit(test::paper_200m_baseline(), p, paper_workload());
  CHECK(unknown.gpu.source == GpuCapacitySource::unknown);
  CHECK_FALSE(unknown.fits.has_value());
  CHECK_THAT(unknown.note(), Catch::StartsWith("fits one NVIDIA H2: unknown (the profile has no memory_gib"));
  p.device.name = "NVIDIA";  // begins every example's name: ambiguous
  CHECK(profile_gpu(p).source == GpuCapacitySource::unknown);
  CHECK_THAT(profile_gpu(p).capacity_from,
             Catch::Contains("names " + std::to_string(cluster_examples().size()) + " example clusters"));
}

TEST_CASE("weights, gradients and optimizer states on one GPU: 2 + 4 + 12 bytes per parameter", "[gpu_fit]") {
  const CalibrationProfile p = load_calibration_profile(shipped_profile);
  const ArchConfig c = test::paper_200m_baseline();
  const OneGpuFit fit = one_gpu_fit(c, p, paper_workload());
  REQUIRE(fit.fits.has_value());
  CHECK(*fit.fits);
  CHECK_FALSE(fit.smallest.has_value());
  // Megatron's bf16 mixed precision (docs/cluster.md): bf16 weights, fp32 main gradients, fp32
  // master weights and Adam m, v; one GPU, so nothing is sharded. Every parameter, embeddings too.
  const Budgets b = account(c, paper_workload());
  const double params = static_cast<double>(b.non_embedding_params_total + b.embedding_params);
  CHECK(fit.needed.weights == Approx(2 * params).epsilon(0.01));
  CHECK(fit.needed.gradients == Approx(4 * params).epsilon(0.01));
  CHECK(fit.needed.optimizer_states == Approx(12 * params).epsilon(0.01));
  CHECK(fit.needed_bytes >= fit.needed.weights + fit.needed.gradients + fit.needed.optimizer_states);
  CHECK(fit.capacity_bytes == Approx(139.4 * gib).epsilon(1e-9));
  CHECK_THAT(fit.note(), Catch::StartsWith("fits one NVIDIA H200 (needs "));
}

TEST_CASE("DeepSeek-V3 does not fit one H200: the note says so and names the smallest layout", "[gpu_fit]") {
  const CalibrationProfile p = load_calibration_profile(shipped_profile);
  const ArchConfig v3 = load_arch_config(std::string(BUDGET_SOURCE_DIR) + "/tests/data/hf/deepseek-v3.json");
  const OneGpuFit fit = one_gpu_fit(v3, p, paper_workload());
  REQUIRE(fit.fits.has_value());
  CHECK_FALSE(*fit.fits);
  // 671 G parameters at 18 bytes each are about 11 TiB before any activation.
  CHECK(fit.needed_bytes > 18 * 600e9);
  REQUIRE(fit.smallest.has_value());
  REQUIRE(fit.smallest->found);
  CHECK(fit.smallest->memory.fits);
  CHECK(fit.smallest->memory.layout.gpus > 64);
  CHECK_THAT(fit.note(), Catch::StartsWith("does not fit one NVIDIA H200 (needs "));
  CHECK_THAT(fit.note(), Catch::Contains("TiB of 139.4 GiB usable"));
  CHECK_THAT(fit.note(), Catch::Contains("smallest layout that fits: "));
}
