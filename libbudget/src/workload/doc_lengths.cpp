// Length distributions: validation, the spec syntax and discretisation (sampling:
// doc_lengths_sampling.cpp).

#include "budget/doc_lengths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "budget/error.hpp"
#include "workload/overloaded.hpp"
#include "base/json_reader.hpp"

namespace budget {
namespace {

constexpr double max_continuous_mean = 4294967296.0;  // 2^32
constexpr double max_lognormal_sigma = 3.0;

// ---------------------------------------------------------------------------------------------
// Validation

void validate_component(const LengthComponent& component, const std::string& source) {
  std::visit(
      Overloaded{
          [&](const FixedLength& f) {
            if (f.length < 1 || f.length > max_document_length) {
              throw Error(fmt::format("fixed length {} is out of range; allowed: an integer in [1, 2^40]", f.length),
                          source);
            }
          },
          [&](const ExponentialLength& e) {
            if (!(e.mean >= 1.0 && e.mean <= max_continuous_mean)) {
              throw Error(fmt::format("exponential mean {} is out of range; allowed: a number in [1, 2^32]", e.mean),
                          source);
            }
          },
          [&](const LogNormalLength& l) {
            if (!(l.mean >= 1.0 && l.mean <= max_continuous_mean)) {
              throw Error(fmt::format("log-normal mean {} is out of range; allowed: a number in [1, 2^32]", l.mean),
                          source);
            }
            if (!(l.sigma > 0.0 && l.sigma <= max_lognormal_sigma)) {
              throw Error(fmt::format("log-normal sigma {} is out of range; allowed: a number in (0, 3] "
                                      "(the standard deviation of ln X; use fixed:N for sigma 0)",
                                      l.sigma),
                          source);
            }
          },
          [&](const EmpiricalLength& h) {
            if (h.weights.empty()) throw Error("the histogram has no lengths", source);
            double total = 0.0;
            std::int64_t previous = 0;
            for (const auto& [length, weight] : h.weights) {
              if (length < 1 || length > max_document_length) {
                throw Error(
                    fmt::format("histogram length {} is out of range; allowed: an integer in [1, 2^40]", length),
                    source);
              }
              if (length <= previous) {
                throw Error(
                    fmt::format("histogram lengths must be distinct and ascending; {} follows {}", length, previous),
                    source);
              }
              if (!(std::isfinite(weight) && weight >= 0.0)) {
                throw Error(fmt::format("histogram count {} for length {} is not allowed; allowed: a finite "
                                        "number ≥ 0",
                                        weight, length),
                            source);
              }
              previous = length;
              total += weight;
            }
            if (!(total > 0.0)) throw Error("the histogram's counts sum to 0; at least one must be positive", source);
          },
      },
      component);
}

std::string describe_component(const LengthComponent& component) {
  return std::visit(
      Overloaded{
          [](const FixedLength& f) { return fmt::format("fixed:{}", f.length); },
          [](const ExponentialLength& e) { return fmt::format("exp:mean={}", e.mean); },
          [](const LogNormalLength& l) { return fmt::format("lognormal:mean={},sigma={}", l.mean, l.sigma); },
          [](const EmpiricalLength& h) { return fmt::format("histogram({} lengths)", h.weights.size()); },
      },
      component);
}

bool is_continuous(const LengthComponent& component) {
  return std::holds_alternative<ExponentialLength>(component) || std::holds_alternative<LogNormalLength>(component);
}

// ---------------------------------------------------------------------------------------------
// Spec parsing

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

const char* spec_syntax() { return "fixed:N, exp:mean=M, lognormal:mean=M,sigma=S, or mix:W1*SPEC1+W2*SPEC2"; }

[[noreturn]] void spec_error(std::string_view spec, const std::string& message, const std::string& source) {
  throw Error(fmt::format("in \"{}\": {}", spec, message), source);
}

double parse_spec_number(std::string_view spec, std::string_view name, std::string_view text,
                         const std::string& source) {
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    spec_error(spec, fmt::format("{} \"{}\" is not a number", name, text), source);
  }
  return value;
}

// "key=value,key=value" (or one bare value, taken as `positional`) → ordered (key, value) pairs.
std::vector<std::pair<std::string, std::string_view>> split_parameters(std::string_view spec, std::string_view params,
                                                                       const char* positional,
                                                                       const std::string& source) {
  std::vector<std::pair<std::string, std::string_view>> out;
  std::size_t start = 0;
  while (start <= params.size()) {
    const std::size_t comma = params.find(',', start);
    const std::string_view item =
        trim(params.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (positional == nullptr || !out.empty() || comma != std::string_view::npos) {
        spec_error(spec, fmt::format("parameter \"{}\" needs a name (name=value)", item), source);
      }
      out.emplace_back(positional, item);
    } else {
      out.emplace_back(std::string(trim(item.substr(0, eq))), trim(item.substr(eq + 1)));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// Looks up the parameters of one distribution, rejecting unknown, duplicate and missing names.
class SpecParameters {
 public:
  SpecParameters(std::string_view spec, std::string_view params, std::vector<std::string> allowed,
                 const char* positional, const std::string& source)
      : spec_(spec), source_(source), allowed_(std::move(allowed)) {
    if (trim(params).empty()) {
      spec_error(spec_, fmt::format("missing parameters; expected {}", spec_syntax()), source_);
    }
    for (auto& [name, value] : split_parameters(spec, params, positional, source)) {
      if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end()) {
        std::string message = fmt::format("unknown parameter \"{}\"", name);
        const std::string suggestion = detail::closest_match(name, allowed_);
        if (!suggestion.empty()) message += fmt::format(" (did you mean \"{}\"?)", suggestion);
        std::string list;
        for (const auto& a : allowed_) list += (list.empty() ? "" : ", ") + a;
        spec_error(spec_, message + "; allowed here: " + list, source_);
      }
      for (const auto& [seen, unused] : values_) {
        if (seen == name) spec_error(spec_, fmt::format("parameter \"{}\" is given twice", name), source_);
      }
      values_.emplace_back(name, value);
    }
  }

  double number(const std::string& name) const {
    for (const auto& [key, value] : values_) {
      if (key == name) return parse_spec_number(spec_, name, value, source_);
    }
    spec_error(spec_, fmt::format("missing parameter \"{}\"", name), source_);
  }

 private:
  std::string_view spec_;
  const std::string& source_;
  std::vector<std::string> allowed_;
  std::vector<std::pair<std::string, std::string_view>> values_;
};

LengthComponent parse_component(std::string_view spec, const std::string& source) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    spec_error(spec, fmt::format("expected NAME:PARAMETERS, one of {}", spec_syntax()), source);
  }
  const std::string name(trim(spec.substr(0, colon)));
  const std::string_view params = spec.substr(colon + 1);
  if (name == "fixed") {
    const SpecParameters p(spec, params, {"length"}, "length", source);
    const double length = p.number("length");
    if (length != std::floor(length) || length < 1.0 || length > static_cast<double>(max_document_length)) {
      spec_error(spec, fmt::format("length {} is not allowed; allowed: an integer in [1, 2^40]", length), source);
    }
    return FixedLength{static_cast<std::int64_t>(length)};
  }
  if (name == "exp" || name == "exponential") {
    const SpecParameters p(spec, params, {"mean"}, "mean", source);
    return ExponentialLength{p.number("mean")};
  }
  if (name == "lognormal" || name == "lognorm") {
    const SpecParameters p(spec, params, {"mean", "sigma"}, nullptr, source);
    return LogNormalLength{p.number("mean"), p.number("sigma")};
  }
  std::string message = fmt::format("unknown distribution \"{}\"", name);
  const std::string suggestion =
      detail::closest_match(name, {"fixed", "exp", "exponential", "lognormal", "lognorm", "mix"});
  if (!suggestion.empty()) message += fmt::format(" (did you mean \"{}\"?)", suggestion);
  spec_error(spec, message + fmt::format("; allowed: {}", spec_syntax()), source);
}

// Splits a mixture body at '+' signs that separate components, not at the '+' of an exponent
// ("6e+2": a '+' right after 'e'/'E' that follows a digit).
std::vector<std::string_view> split_mixture(std::string_view body) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '+') continue;
    const bool exponent = i >= 2 && (body[i - 1] == 'e' || body[i - 1] == 'E') &&
                          std::isdigit(static_cast<unsigned char>(body[i - 2])) != 0;
    if (exponent) continue;
    parts.push_back(body.substr(start, i - start));
    start = i + 1;
  }
  parts.push_back(body.substr(start));
  return parts;
}

LengthDistribution parse_mixture(std::string_view spec, std::string_view body, const std::string& source) {
  std::vector<LengthDistribution::Part> parts;
  for (const std::string_view raw : split_mixture(body)) {
    const std::string_view item = trim(raw);
    const std::size_t star = item.find('*');
    if (star == std::string_view::npos) {
      spec_error(spec, fmt::format("mixture component \"{}\" needs a weight: W*SPEC, e.g. 0.7*exp:mean=300", item),
                 source);
    }
    const double weight = parse_spec_number(spec, "weight", trim(item.substr(0, star)), source);
    if (!(weight > 0.0 && weight <= 1.0)) {
      spec_error(spec, fmt::format("weight {} is out of range; allowed: a number in (0, 1]", weight), source);
    }
    const std::string_view component = trim(item.substr(star + 1));
    if (component.substr(0, 4) == "mix:") spec_error(spec, "mixtures cannot be nested", source);
    parts.push_back({weight, parse_component(component, source)});
  }
  double total = 0.0;
  for (const auto& p : parts) total += p.weight;
  if (std::abs(total - 1.0) > 1e-9) {
    spec_error(spec, fmt::format("the weights sum to {:.6g}; they must sum to 1", total), source);
  }
  for (auto& p : parts) p.weight /= total;  // exact 1 after rounding noise
  return LengthDistribution(std::move(parts), source);
}

// ---------------------------------------------------------------------------------------------
// Continuous laws: survival P(X ≥ x), distribution P(X < x) and partial moment E[X; X ≥ a].

struct ContinuousLaw {
  virtual ~ContinuousLaw() = default;
  virtual double survival(double x) const = 0;
  virtual double cdf(double x) const = 0;
  virtual double partial_moment(double a) const = 0;
  virtual double median() const = 0;
  /// The density decreases beyond the mode.
  virtual double mode() const = 0;
  /// P(a ≤ X < b), from whichever side of the median loses no precision.
  double mass_between(double a, double b) const {
    if (b <= median()) return cdf(b) - cdf(a);
    return survival(a) - survival(b);
  }
};

struct ExponentialLaw final : ContinuousLaw {
  explicit ExponentialLaw(double m) : mean(m) {}
  double survival(double x) const override { return x <= 0.0 ? 1.0 : std::exp(-x / mean); }
  double cdf(double x) const override { return x <= 0.0 ? 0.0 : -std::expm1(-x / mean); }
  // ∫_a^∞ x e^{−x/μ}/μ dx = (a + μ) e^{−a/μ}.
  double partial_moment(double a) const override { return (a + mean) * std::exp(-a / mean); }
  double median() const override { return mean * std::log(2.0); }
  double mode() const override { return 0.0; }
  double mean;
};

struct LogNormalLaw final : ContinuousLaw {
  LogNormalLaw(double m, double s) : mu(std::log(m) - 0.5 * s * s), sigma(s), mean(m) {}
  double z(double x) const { return (std::log(x) - mu) / sigma; }
  double survival(double x) const override { return x <= 0.0 ? 1.0 : 0.5 * std::erfc(z(x) / std::sqrt(2.0)); }
  double cdf(double x) const override { return x <= 0.0 ? 0.0 : 0.5 * std::erfc(-z(x) / std::sqrt(2.0)); }
  // E[X; X ≥ a] = E[X]·Φ((μ + σ² − ln a)/σ) for ln X ~ N(μ, σ²).
  double partial_moment(double a) const override {
    if (a <= 0.0) return mean;
    return mean * 0.5 * std::erfc((std::log(a) - mu - sigma * sigma) / (sigma * std::sqrt(2.0)));
  }
  double median() const override { return std::exp(mu); }
  double mode() const override { return std::exp(mu - sigma * sigma); }
  double mu;
  double sigma;
  double mean;
};

std::unique_ptr<ContinuousLaw> continuous_law(const LengthComponent& component) {
  if (const auto* e = std::get_if<ExponentialLength>(&component)) return std::make_unique<ExponentialLaw>(e->mean);
  if (const auto* l = std::get_if<LogNormalLength>(&component)) {
    return std::make_unique<LogNormalLaw>(l->mean, l->sigma);
  }
  return nullptr;
}

// Accumulates weighted probability mass of n into DiscreteLengths.
class PmfBuilder {
 public:
  PmfBuilder(std::int64_t explicit_max) { out_.pmf.assign(static_cast<std::size_t>(explicit_max) + 1, 0.0); }

  std::int64_t explicit_max() const { return static_cast<std::int64_t>(out_.pmf.size()) - 1; }

  void add_point(std::int64_t n, double p) {
    if (p == 0.0) return;
    step_ = std::gcd(step_, n);
    add_mass(n, p);
  }
  void add_mass(std::int64_t n, double p) {
    if (n <= explicit_max()) {
      out_.pmf[static_cast<std::size_t>(n)] += p;
    } else {
      out_.tail_mass += p;
      out_.tail_moment += p * static_cast<double>(n);
    }
  }
  void add_tail(double mass, double moment) {
    out_.tail_mass += mass;
    out_.tail_moment += moment;
  }
  void mark_continuous() { continuous_ = true; }

  DiscreteLengths finish() {
    out_.lattice_step = continuous_ ? 1 : step_;
    return std::move(out_);
  }

 private:
  DiscreteLengths out_;
  std::int64_t step_ = 0;
  bool continuous_ = false;
};

// P(L = k) = P(k − 0.5 ≤ X < k + 0.5) (k ≥ 2), P(L = 1) = P(X < 1.5). Terms are enumerated up to
// n = explicit_max and on until the density decreases (k + 0.5 ≥ mode; at most 2^20 more terms);
// the remainder X ≥ a = K + 0.5 enters through the continuous partial moment E[X; X ≥ a]. Its
// rounding error E[round(X) − X; X ≥ a] = Σ_k ∫_0^½ t·(f(k − t) − f(k + t)) dt lies in
// [0, f(a)/8] for a density f that decreases beyond a (the sum telescopes), a negligible
// fraction of a token per document.
void add_continuous(PmfBuilder& builder, const ContinuousLaw& law, double weight, std::int64_t shift) {
  builder.mark_continuous();
  const std::int64_t last_explicit_k = std::max<std::int64_t>(builder.explicit_max() - shift, 0);
  const std::int64_t last_k = last_explicit_k + (std::int64_t{1} << 20);
  const double mode = law.mode();
  std::int64_t k = 1;
  for (;; ++k) {
    const double upper = static_cast<double>(k) + 0.5;
    const double p = k == 1 ? law.cdf(upper) : law.mass_between(upper - 1.0, upper);
    builder.add_mass(k + shift, weight * p);
    if (law.survival(upper) == 0.0) return;
    if (k >= last_explicit_k && (upper >= mode || k >= last_k)) break;
  }
  const double a = static_cast<double>(k) + 0.5;
  const double rest_mass = weight * law.survival(a);
  builder.add_tail(rest_mass, weight * law.partial_moment(a) + rest_mass * static_cast<double>(shift));
}

}  // namespace

// ---------------------------------------------------------------------------------------------

LengthDistribution::LengthDistribution(std::vector<Part> parts, const std::string& source) : parts_(std::move(parts)) {
  if (parts_.empty()) throw Error("a length distribution needs at least one component", source);
  double total = 0.0;
  for (const auto& p : parts_) {
    if (!(p.weight > 0.0 && p.weight <= 1.0)) {
      throw Error(fmt::format("mixture weight {} is out of range; allowed: a number in (0, 1]", p.weight), source);
    }
    validate_component(p.component, source);
    total += p.weight;
  }
  if (std::abs(total - 1.0) > 1e-9) {
    throw Error(fmt::format("mixture weights sum to {:.6g}; they must sum to 1", total), source);
  }
}

LengthDistribution::LengthDistribution(LengthComponent component, const std::string& source)
    : LengthDistribution(std::vector<Part>{Part{1.0, std::move(component)}}, source) {}

bool LengthDistribution::has_continuous_part() const {
  return std::any_of(parts_.begin(), parts_.end(), [](const Part& p) { return is_continuous(p.component); });
}

std::string LengthDistribution::describe() const {
  if (parts_.size() == 1) return describe_component(parts_.front().component);
  std::string out = "mix:";
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    if (i) out += "+";
    out += fmt::format("{}*{}", parts_[i].weight, describe_component(parts_[i].component));
  }
  return out;
}

LengthDistribution parse_length_distribution(std::string_view spec, const std::string& source) {
  const std::string_view text = trim(spec);
  if (text.empty()) throw Error(fmt::format("empty distribution spec; expected {}", spec_syntax()), source);
  if (text.substr(0, 4) == "mix:") return parse_mixture(text, text.substr(4), source);
  return LengthDistribution(parse_component(text, source), source);
}

double DiscreteLengths::mean() const {
  double sum = tail_moment;
  for (std::size_t n = 0; n < pmf.size(); ++n) sum += static_cast<double>(n) * pmf[n];
  return sum;
}

std::vector<double> DiscreteLengths::cumulative() const {
  std::vector<double> out(pmf.size());
  double running = 0.0;
  for (std::size_t n = 0; n < pmf.size(); ++n) out[n] = running += pmf[n];
  return out;
}

DiscreteLengths discretize(const LengthDistribution& distribution, std::int64_t shift, std::int64_t explicit_max) {
  if (shift < 0 || shift > (std::int64_t{1} << 20)) {
    throw Error(fmt::format("tokens added per document {} is out of range; allowed: an integer in [0, 2^20]", shift));
  }
  if (explicit_max < 1 || explicit_max > (std::int64_t{1} << 24)) {
    throw Error(fmt::format("explicit_max {} is out of range; allowed: [1, 2^24]", explicit_max));
  }
  PmfBuilder builder(explicit_max);
  for (const auto& part : distribution.parts()) {
    std::visit(Overloaded{
                   [&](const FixedLength& f) { builder.add_point(f.length + shift, part.weight); },
                   [&](const EmpiricalLength& h) {
                     double total = 0.0;
                     for (const auto& [length, w] : h.weights) total += w;
                     for (const auto& [length, w] : h.weights)
                       builder.add_point(length + shift, part.weight * w / total);
                   },
                   [&](const auto&) { add_continuous(builder, *continuous_law(part.component), part.weight, shift); },
               },
               part.component);
  }
  return builder.finish();
}

}  // namespace budget
