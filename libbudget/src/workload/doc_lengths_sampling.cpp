// Sampling document lengths from a distribution (LengthSampler) and shuffling a length file.

#include <algorithm>
#include <cmath>
#include <span>

#include "budget/doc_lengths.hpp"
#include "workload/doc_lengths_random.hpp"
#include "workload/overloaded.hpp"

namespace budget {
namespace {

/// A continuous draw rounded to the nearest length in [1, max_document_length].
std::uint64_t round_length(double x) {
  if (!(x >= 1.5)) return 1;  // also NaN-safe
  const double r = std::floor(x + 0.5);
  if (r >= static_cast<double>(max_document_length)) return static_cast<std::uint64_t>(max_document_length);
  return static_cast<std::uint64_t>(r);
}

}  // namespace

struct LengthSampler::Impl {
  struct Component {
    LengthComponent law;
    std::vector<double> cumulative;  // empirical: running weights
    double log_median = 0.0;         // log-normal: μ of ln X
  };
  detail::Xoshiro256 rng;
  std::vector<double> part_cumulative;
  std::vector<Component> components;

  explicit Impl(std::uint64_t seed) : rng(seed) {}

  std::uint64_t draw(const Component& c) {
    return std::visit(
        Overloaded{
            [&](const FixedLength& f) { return static_cast<std::uint64_t>(f.length); },
            [&](const ExponentialLength& e) { return round_length(-e.mean * std::log(rng.uniform_positive())); },
            [&](const LogNormalLength& l) {
              // Box–Muller: one standard normal from two uniforms.
              const double radius = std::sqrt(-2.0 * std::log(rng.uniform_positive()));
              const double z = radius * std::cos(2.0 * 3.14159265358979323846 * rng.uniform());
              return round_length(std::exp(c.log_median + l.sigma * z));
            },
            [&](const EmpiricalLength& h) {
              const double u = rng.uniform() * c.cumulative.back();
              auto it = std::upper_bound(c.cumulative.begin(), c.cumulative.end(), u);
              if (it == c.cumulative.end()) --it;
              // Zero-weight lengths have equal running sums and are never chosen.
              return static_cast<std::uint64_t>(h.weights[static_cast<std::size_t>(it - c.cumulative.begin())].first);
            },
        },
        c.law);
  }
};

LengthSampler::LengthSampler(const LengthDistribution& distribution, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(seed)) {
  double running = 0.0;
  for (const auto& part : distribution.parts()) {
    Impl::Component c{part.component, {}, 0.0};
    if (const auto* h = std::get_if<EmpiricalLength>(&part.component)) {
      double sum = 0.0;
      for (const auto& [length, w] : h->weights) c.cumulative.push_back(sum += w);
    }
    if (const auto* l = std::get_if<LogNormalLength>(&part.component)) {
      c.log_median = std::log(l->mean) - 0.5 * l->sigma * l->sigma;
    }
    impl_->components.push_back(std::move(c));
    impl_->part_cumulative.push_back(running += part.weight);
  }
}

LengthSampler::~LengthSampler() = default;
LengthSampler::LengthSampler(LengthSampler&&) noexcept = default;
LengthSampler& LengthSampler::operator=(LengthSampler&&) noexcept = default;

std::uint64_t LengthSampler::next() {
  Impl& s = *impl_;
  std::size_t index = 0;
  if (s.components.size() > 1) {
    const double u = s.rng.uniform() * s.part_cumulative.back();
    while (index + 1 < s.components.size() && u >= s.part_cumulative[index]) ++index;
  }
  return s.draw(s.components[index]);
}

void LengthSampler::fill(std::uint64_t* out, std::size_t count) {
  for (auto& length : std::span<std::uint64_t>(out, count)) length = next();
}

void shuffle_lengths(std::uint64_t* data, std::size_t count, std::uint64_t seed) {
  const std::span<std::uint64_t> lengths(data, count);
  detail::Xoshiro256 rng(seed);
  for (std::size_t i = lengths.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.below(i));
    std::swap(lengths[i - 1], lengths[j]);
  }
}

}  // namespace budget
