#include "budget/scaling_law.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "base/json_reader.hpp"

namespace budget {

double predict_loss(const ScalingCoefficients& k, double F, double S, double D) {
  return k.E + k.A * std::pow(1.0 - S, k.b) * std::pow(F, -k.a) + k.K * std::pow(D, -k.c);
}

namespace {

constexpr double max_coefficient = 1e300;
constexpr double max_exponent = 10.0;

struct CoefficientRule {
  const char* name;
  double ScalingCoefficients::*member;
  double max;
  bool strictly_positive;
};

constexpr CoefficientRule coefficient_rules[] = {
    {"E", &ScalingCoefficients::E, max_coefficient, false},
    {"A", &ScalingCoefficients::A, max_coefficient, true},
    {"K", &ScalingCoefficients::K, max_coefficient, true},
    {"a", &ScalingCoefficients::a, max_exponent, true},
    {"b", &ScalingCoefficients::b, max_exponent, false},
    {"c", &ScalingCoefficients::c, max_exponent, true},
};

std::string allowed_text(const CoefficientRule& rule) {
  return fmt::format("a number in {}0, {:g}]", rule.strictly_positive ? "(" : "[", rule.max);
}

/// The fit summary's "compute_range" into `file`: two finite numbers, 0 < min ≤ max (FLOPs), else
/// budget::Error naming the key.
void read_compute_range(const detail::ObjectReader& summary, CoefficientsFile& file) {
  const nlohmann::json& range = summary.raw("compute_range");
  const bool pair = range.is_array() && range.size() == 2 && range[0].is_number() && range[1].is_number();
  const double lo = pair ? range[0].get<double>() : 0.0, hi = pair ? range[1].get<double>() : 0.0;
  if (!pair || !std::isfinite(hi) || !(lo > 0.0 && hi >= lo)) {
    summary.fail("compute_range", fmt::format("compute_range = {} is not [min C, max C] with 0 < min <= max (FLOPs)",
                                              range.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  file.fitted_compute_min = lo;
  file.fitted_compute_max = hi;
}

}  // namespace

void validate_coefficients(const ScalingCoefficients& coefficients, const std::string& source) {
  for (const auto& rule : coefficient_rules) {
    const double value = coefficients.*rule.member;
    const bool ok = std::isfinite(value) && value <= rule.max &&
                    (rule.strictly_positive ? value > 0.0 : value >= 0.0);
    if (!ok) {
      throw Error(fmt::format("coefficient {} = {} is not allowed; allowed: {}", rule.name, value,
                              allowed_text(rule)),
                  source, std::string("/coefficients/") + rule.name);
    }
  }
}

CoefficientsFile parse_coefficients_json(const std::string& text, const std::string& source) {
  const nlohmann::json document = detail::parse_json_text(text, source);
  const detail::ObjectReader root(document, source, "");
  root.reject_unknown_keys({"schema_version", "arch", "source", "coefficients", "fit_summary"});
  const auto version = root.integer("schema_version", 0, 1'000'000);
  if (version != CoefficientsFile::schema_version) {
    root.fail("schema_version", fmt::format("schema_version {} is not supported; this version reads {}",
                                            version, CoefficientsFile::schema_version));
  }

  CoefficientsFile file;
  file.arch = root.string("arch");
  if (file.arch.empty()) root.fail("arch", "the architecture name is empty");
  file.source = root.string_or("source", "");

  const detail::ObjectReader coefficients = root.object("coefficients");
  coefficients.reject_unknown_keys({"E", "A", "K", "a", "b", "c"});
  for (const auto& rule : coefficient_rules) {
    const double value = coefficients.number(rule.name, -max_coefficient, max_coefficient);
    const bool ok = value <= rule.max && (rule.strictly_positive ? value > 0.0 : value >= 0.0);
    if (!ok) {
      coefficients.fail(rule.name, fmt::format("value {:g} is not allowed; allowed: {}", value, allowed_text(rule)));
    }
    file.coefficients.*rule.member = value;
  }

  if (root.has("fit_summary")) {
    const detail::ObjectReader summary = root.object("fit_summary");
    file.fit_summary_json = summary.json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (summary.has("compute_range")) read_compute_range(summary, file);
  }
  return file;
}

CoefficientsFile read_coefficients_file(const std::string& path) {
  return parse_coefficients_json(detail::read_text_file(path), path);
}

std::string coefficients_to_json(const CoefficientsFile& file) {
  nlohmann::ordered_json out;
  out["schema_version"] = CoefficientsFile::schema_version;
  out["arch"] = file.arch;
  if (!file.source.empty()) out["source"] = file.source;
  nlohmann::ordered_json coefficients;
  for (const auto& rule : coefficient_rules) coefficients[rule.name] = file.coefficients.*rule.member;
  out["coefficients"] = coefficients;
  if (!file.fit_summary_json.empty()) {
    out["fit_summary"] = nlohmann::ordered_json::parse(file.fit_summary_json);
  }
  // nlohmann writes doubles with 17 significant digits (round-trip exact).
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace budget
