#pragma once
// The contract every fuzz target checks: an entry point that reads outside input either returns a
// value or throws budget::Error. Anything else is a finding and aborts, so libFuzzer saves the
// input as a crash: another exception type (nlohmann::json's, std::out_of_range, std::bad_alloc
// from an absurd size, ...), and, through the sanitizers, memory errors, leaks and undefined
// behaviour. Hangs and memory blow-ups are caught by libFuzzer's -timeout and -rss_limit_mb.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

#include "budget/error.hpp"

namespace budget::fuzz {

/// The fuzzer's bytes as text (may hold NUL and any byte).
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Runs `entry`; budget::Error is an accepted outcome (its message must be non-empty), any other
/// exception aborts with its type and message.
template <class Entry>
void expect_value_or_error(const char* target, Entry&& entry) {
  try {
    entry();
  } catch (const budget::Error& e) {
    if (std::string_view(e.what()).empty()) {
      std::fprintf(stderr, "fuzz finding in %s: budget::Error with an empty message\n", target);
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz finding in %s: %s escaped instead of budget::Error: %s\n", target,
                 typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz finding in %s: a non-std exception escaped\n", target);
    std::abort();
  }
}

/// Aborts with `what` when `ok` is false (a property of a successful parse that must hold).
inline void require(bool ok, const char* target, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz finding in %s: %s\n", target, what);
    std::abort();
  }
}

}  // namespace budget::fuzz

#include "budget/config.hpp"
#include "budget/config_io.hpp"

namespace budget::fuzz {

/// Runs `step` on something the library itself accepted or produced: any exception, budget::Error
/// included, is a finding (e.g. a config that parses but whose own JSON is refused).
template <class Step>
void must_succeed(const char* target, const char* what, Step&& step) {
  try {
    step();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz finding in %s: %s threw %s: %s\n", target, what, typeid(e).name(), e.what());
    std::abort();
  }
}

/// The SMELT paper's 200M S95 baseline (examples/configs/paper-200M-S95-baseline.json): the
/// fixed config that targets for workloads and constraints pair the fuzzed input with.
inline const ArchConfig& paper_baseline() {
  static const ArchConfig config = parse_arch_config(
      R"({"name": "paper-200M-S95-baseline", "hidden_size": 1280, "num_layers": 12, "vocab_size": 0,
          "tie_embeddings": false, "attention": {"num_heads": 10, "head_dim": 128, "num_kv_heads": 2},
          "ffn": {"num_experts": 192, "top_k": 8, "expert_dim": 432, "gated": true,
                  "num_shared_experts": 0, "shared_expert_dim": 0, "first_dense_layers": 0, "dense_dim": 0}})",
      "<paper baseline>");
  return config;
}

}  // namespace budget::fuzz

#include <array>
#include <cmath>

#include "budget/doc_lengths.hpp"

namespace budget::fuzz {

/// What an accepted length distribution must satisfy: a finite pmf (shift 1, explicit up to 4096)
/// summing to 1 with a finite tail moment, and sampled lengths in [1, 2^40].
inline void check_distribution(const char* target, const LengthDistribution& distribution) {
  must_succeed(target, "discretize and sample", [&] {
    const DiscreteLengths lengths = discretize(distribution, 1, 4096);
    double total = lengths.tail_mass;
    for (const double p : lengths.pmf) {
      require(std::isfinite(p) && p >= 0, target, "pmf entry not finite and >= 0");
      total += p;
    }
    require(std::abs(total - 1.0) < 1e-6, target, "pmf does not sum to 1");
    require(std::isfinite(lengths.tail_moment) && std::isfinite(lengths.mean()), target, "mean not finite");
    LengthSampler sampler(distribution, 42);
    std::array<std::uint64_t, 16> drawn{};
    sampler.fill(drawn);
    for (const std::uint64_t n : drawn) {
      require(n >= 1 && n <= static_cast<std::uint64_t>(max_document_length), target,
              "sampled length outside [1, 2^40]");
    }
    (void)distribution.describe();
  });
}

}  // namespace budget::fuzz

#include <fstream>
#include <unistd.h>

namespace budget::fuzz {

/// A scratch file of this process (in $TMPDIR or /tmp, removed at exit) holding the fuzzer's
/// bytes, for entry points that read files by path. Returns its path.
inline const std::string& write_scratch_file(const std::uint8_t* data, std::size_t size, const char* extension) {
  static const std::string directory = [] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  }();
  static std::string path;
  path = directory + "/budget-fuzz-" + std::to_string(::getpid()) + extension;
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] { std::remove(path.c_str()); });
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  require(static_cast<bool>(out), "scratch file", "could not write the scratch file");
  return path;
}

}  // namespace budget::fuzz
