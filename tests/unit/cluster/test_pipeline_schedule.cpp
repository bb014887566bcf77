// peak_saved_layer_executions() (budget/pipeline_schedule.hpp) against hand counts of Megatron-Core's
// schedules, against a literal transcription of schedules.py's loops at d98e8a64 run over the whole
// step (get_schedule_table with groups of PP micro-batches, the warm-up count, the warm-up, steady
// and cool-down loops; no shortcut), against the closed form min(m·V, 2(PP − s − 1) + (V − 1)·PP + 1)
// × layers for equal chunks, and its refusals.

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "budget/error.hpp"
#include "budget/pipeline_schedule.hpp"

using namespace budget;

namespace {

/// schedules.py:989-1016 (get_schedule_table) with microbatch_group_size_per_vp_stage = PP: for each
/// group of PP micro-batches, chunk 0 for each of them, then chunk 1, ...; returns the chunk column.
std::vector<std::int64_t> schedule_chunk_table(std::int64_t m, std::int64_t vp, std::int64_t group) {
  std::vector<std::int64_t> chunks;
  for (std::int64_t first = 0; first < m; first += group) {
    const std::int64_t end = first + group >= m ? m : first + group;
    for (std::int64_t v = 0; v < vp; ++v) {
      for (std::int64_t mb = first; mb < end; ++mb) chunks.push_back(v);
    }
  }
  return chunks;
}

/// The whole step on one rank, as forward_backward_pipelining_with_interleaving (vp > 1) and
/// forward_backward_pipelining_without_interleaving (vp = 1) order it; the peak of saved layers.
std::int64_t transcribed_peak(const std::vector<std::int64_t>& chunk_layers, std::int64_t pp, std::int64_t rank,
                              std::int64_t m) {
  const std::int64_t vp = static_cast<std::int64_t>(chunk_layers.size()) / pp;
  const std::int64_t total = m * vp;
  std::vector<std::int64_t> table = schedule_chunk_table(m, vp, pp);
  std::int64_t warmup = vp == 1 ? pp - rank - 1 : (pp - rank - 1) * 2 + (vp - 1) * pp;
  warmup = std::min(warmup, total);
  const auto layers = [&](std::int64_t k, bool forward) {
    std::int64_t v = table[static_cast<std::size_t>(k % total)];
    if (!forward) v = vp - v - 1;
    return chunk_layers[static_cast<std::size_t>(v * pp + rank)];
  };
  std::int64_t saved = 0, peak = 0;
  for (std::int64_t k = 0; k < warmup; ++k) peak = std::max(peak, saved += layers(k, true));
  for (std::int64_t k = 0; k < total - warmup; ++k) {
    peak = std::max(peak, saved += layers(k + warmup, true));
    saved -= layers(k, false);
  }
  for (std::int64_t k = total - warmup; k < total; ++k) saved -= layers(k, false);
  CHECK(saved == 0);
  return peak;
}

}  // namespace

TEST_CASE("pipeline_schedule.hand_counts") {
  // PP 2, V 2, m 4, one layer a chunk. Rank 0: W = 2·1 + 1·2 = 4 forwards (chunks 0 0 1 1), then
  // each steady step adds one before freeing one: 5. Rank 1: W = 0 + 2 = 2, peak 3.
  CHECK(peak_saved_layer_executions({1, 1, 1, 1}, 2, 4) == std::vector<std::int64_t>{5, 3});
  // Uneven chunks c0..c3 = 1, 2, 3, 4 layers (rank 0 holds c0, c2; rank 1 c1, c3), m 4.
  // Rank 0: warm-up forwards of chunks 0 0 1 1 save 1+1+3+3 = 8; steady forwards run chunks 0 0 1 1
  // (+1 +1 +3 +3) against backwards of chunks 1 1 0 0 (−3 −3 −1 −1): 9, 7, 7, 9, so 9.
  // Rank 1: warm-up chunks 0 0 save 2+2 = 4; steady forwards 1 1 0 0 1 1 (+4 +4 +2 +2 +4 +4) against
  // backwards 1 1 0 0 1 1 (−4 −4 −2 −2 −4 −4): 8 after each forward with a +4, so 8 (the closed
  // form with the larger chunk would say 3 × 4 = 12).
  CHECK(peak_saved_layer_executions({1, 2, 3, 4}, 2, 4) == std::vector<std::int64_t>{9, 8});
  // m 2: all of rank 0's four chunk forwards are warm-up (W = min(4, m·V = 4)): 1+1+3+3 = 8.
  CHECK(peak_saved_layer_executions({1, 2, 3, 4}, 2, 2) == std::vector<std::int64_t>{8, 8});
  // 1F1B, PP 4, m 3, layers 1..4 a stage: min(m, PP − s) × layers = 3·1, 3·2, 2·3, 1·4.
  CHECK(peak_saved_layer_executions({1, 2, 3, 4}, 4, 3) == std::vector<std::int64_t>{3, 6, 6, 4});
  // PP 1: one micro-batch at a time.
  CHECK(peak_saved_layer_executions({5}, 1, 7) == std::vector<std::int64_t>{5});
  // The 8-layer config whose layers 3-6 run twice, wrapped on PP 2 × V 3 (two layers a chunk):
  // rank 0 min(m·V, 2 + 2·2 + 1 = 7), rank 1 min(m·V, 0 + 4 + 1 = 5) chunk forwards, × 2 layers.
  CHECK(peak_saved_layer_executions({2, 2, 2, 2, 2, 2}, 2, 2) == std::vector<std::int64_t>{12, 10});
  CHECK(peak_saved_layer_executions({2, 2, 2, 2, 2, 2}, 2, 4) == std::vector<std::int64_t>{14, 10});
}

TEST_CASE("pipeline_schedule.equals_whole_step_transcription") {
  std::mt19937_64 random(41);
  for (std::int64_t pp = 1; pp <= 6; ++pp) {
    for (std::int64_t vp = 1; vp <= (pp == 1 ? 1 : 4); ++vp) {
      for (std::int64_t m = (vp > 1 ? pp : 1); m <= 4 * pp + 3; m += (vp > 1 ? pp : 1)) {
        std::vector<std::int64_t> layers(static_cast<std::size_t>(pp * vp));
        for (auto& l : layers) l = static_cast<std::int64_t>(random() % 7);
        const std::vector<std::int64_t> peaks = peak_saved_layer_executions(layers, static_cast<int>(pp), m);
        for (std::int64_t s = 0; s < pp; ++s) {
          INFO("pp " << pp << " vp " << vp << " m " << m << " rank " << s);
          CHECK(peaks[static_cast<std::size_t>(s)] == transcribed_peak(layers, pp, s, m));
        }
      }
    }
  }
}

TEST_CASE("pipeline_schedule.equal_chunks_closed_form") {
  for (std::int64_t pp = 2; pp <= 8; pp *= 2) {
    for (std::int64_t vp = 1; vp <= 4; ++vp) {
      for (std::int64_t m = pp; m <= 6 * pp; m += pp) {
        const std::int64_t per_chunk = 3;
        const std::vector<std::int64_t> peaks =
            peak_saved_layer_executions(std::vector<std::int64_t>(static_cast<std::size_t>(pp * vp), per_chunk),
                                        static_cast<int>(pp), m);
        for (std::int64_t s = 0; s < pp; ++s) {
          const std::int64_t in_flight =
              vp == 1 ? std::min(m, pp - s) : std::min(m * vp, 2 * (pp - s - 1) + (vp - 1) * pp + 1);
          CHECK(peaks[static_cast<std::size_t>(s)] == in_flight * per_chunk);
        }
      }
    }
  }
}

TEST_CASE("pipeline_schedule.refusals") {
  CHECK_THROWS_WITH(peak_saved_layer_executions({1, 1}, 0, 4), Catch::Contains("pp = 0"));
  CHECK_THROWS_WITH(peak_saved_layer_executions({1, 1}, 2, 0), Catch::Contains("micro_batches = 0"));
  CHECK_THROWS_WITH(peak_saved_layer_executions({1, 1, 1}, 2, 4), Catch::Contains("3 entries"));
  CHECK_THROWS_WITH(peak_saved_layer_executions({}, 2, 4), Catch::Contains("0 entries"));
  CHECK_THROWS_WITH(peak_saved_layer_executions({1, -1}, 2, 4), Catch::Contains("chunk_layers[1] = -1"));
  CHECK_THROWS_WITH(peak_saved_layer_executions({1, 1}, 1, 4), Catch::Contains("pp = 1"));
  CHECK_THROWS_WITH(peak_saved_layer_executions({1, 1, 1, 1}, 2, 3), Catch::Contains("a multiple of pp"));
  CHECK_THROWS_AS(peak_saved_layer_executions({std::int64_t{1} << 62, 1}, 2, 4), Error);
}
