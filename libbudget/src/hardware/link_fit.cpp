// Fitting a link to measured collectives (link_fit.hpp; docs/cluster.md, "Measuring your links").
// The model's factors are collectives.cpp's bus_factor() and latency_steps(): written once there.
#include "budget/link_fit.hpp"

#include <algorithm>
#include <optional>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/file_kinds.hpp"
#include "base/json_reader.hpp"
#include "budget/error.hpp"
#include "hardware/collective_names.hpp"

namespace budget {
namespace {

constexpr std::string_view measurements_schema = "budget.collectives";
constexpr std::int64_t measurements_schema_version = 1;

std::string describe(const CollectiveMeasurement& m) {
  return fmt::format("{}, {} ranks, {} bytes", to_string(m.kind), m.ranks, m.size_bytes);
}

/// Relative residuals (t̂ − t)/t of `link` on `ms`.
void fill_residuals(LinkFit& fit, const std::vector<CollectiveMeasurement>& ms) {
  double sum_squares = 0.0, worst = 0.0;
  for (const CollectiveMeasurement& m : ms) {
    const double r = (collective_seconds(m.kind, m.size_bytes, m.ranks, fit.link) - m.seconds) / m.seconds;
    sum_squares += r * r;
    worst = std::max(worst, std::abs(r));
  }
  fit.rms_relative_residual = std::sqrt(sum_squares / static_cast<double>(ms.size()));
  fit.max_relative_residual = worst;
}

}  // namespace

std::string validation_error(const CollectiveMeasurement& m) {
  if (m.ranks < 2 || m.ranks > (std::int64_t{1} << 20)) {
    return fmt::format("ranks = {} is not in [2, 2^20] (a collective needs at least two ranks)", m.ranks);
  }
  if (!std::isfinite(m.size_bytes) || !(m.size_bytes > 0.0)) {
    return fmt::format("size = {} bytes is not positive and finite", m.size_bytes);
  }
  if (!std::isfinite(m.seconds) || !(m.seconds > 0.0)) {
    return fmt::format("time = {} s is not positive and finite", m.seconds);
  }
  return {};
}

std::string LinkFit::brief() const {
  std::string names;
  for (CollectiveKind k : kinds) names += (names.empty() ? "" : "+") + std::string(to_string(k));
  return fmt::format("{}: {:.1f} GB/s, {:.2f} us{} ({} measurements, rms {:.1f}%, max {:.1f}%)", names,
                     link.bandwidth_bytes_per_s * 1e-9, link.latency_s * 1e6,
                     latency_at_zero ? " (latency fitted below 0, set to 0)" : "", measurements,
                     rms_relative_residual * 100.0, max_relative_residual * 100.0);
}

LinkFit fit_link(const std::vector<CollectiveMeasurement>& measurements, const std::string& source) {
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const std::string error = validation_error(measurements[i]);
    if (!error.empty()) {
      throw Error(fmt::format("measurement {} ({}): {}", i, describe(measurements[i]), error), source);
    }
  }
  if (measurements.size() < 2) {
    throw Error(fmt::format("{} measurement(s): fitting bandwidth and latency needs at least two message sizes",
                            measurements.size()),
                source);
  }
  // Weighted normal equations of t ≈ x·u + s·α with weights w = 1/t² (link_fit.hpp).
  double xx = 0.0, xs = 0.0, ss = 0.0, xt = 0.0, st = 0.0;
  for (const CollectiveMeasurement& m : measurements) {
    const double w = 1.0 / (m.seconds * m.seconds);
    const double x = m.size_bytes * bus_factor(m.kind, m.ranks);
    const double s = static_cast<double>(latency_steps(m.kind, m.ranks));
    xx += w * x * x;
    xs += w * x * s;
    ss += w * s * s;
    xt += w * x * m.seconds;
    st += w * s * m.seconds;
  }
  const double det = xx * ss - xs * xs;
  // Cauchy–Schwarz: det ≥ 0, = 0 exactly when every x/s ratio is the same (one size per group).
  if (!(det > 1e-9 * xx * ss)) {
    throw Error(fmt::format("the {} measurements cannot separate bandwidth from latency: every one has the same "
                            "size per latency step; measure at least two message sizes",
                            measurements.size()),
                source);
  }
  double u = (ss * xt - xs * st) / det;
  double alpha = (xx * st - xs * xt) / det;
  LinkFit fit;
  if (alpha < 0.0) {
    alpha = 0.0;
    u = xt / xx;
    fit.latency_at_zero = true;
  }
  if (!(u > 0.0) || !std::isfinite(u)) {
    throw Error(fmt::format("the fitted bandwidth is not positive (1/B = {} s/byte): the {} times do not grow with "
                            "the message size",
                            u, measurements.size()),
                source);
  }
  fit.link.bandwidth_bytes_per_s = 1.0 / u;
  fit.link.latency_s = alpha;
  for (const auto& row : detail::collective_kind_names) {
    const CollectiveKind k = row.value;
    if (std::any_of(measurements.begin(), measurements.end(), [&](const CollectiveMeasurement& m) { return m.kind == k; }))
      fit.kinds.push_back(k);
  }
  fit.measurements = measurements.size();
  fill_residuals(fit, measurements);
  std::string names;
  for (CollectiveKind k : fit.kinds) names += (names.empty() ? "" : ", ") + std::string(to_string(k));
  fit.link.source = fmt::format(
      "fitted to {} timed collectives ({}) with t = S·busfactor/B + steps·latency (docs/cluster.md, measuring your "
      "links): rms relative residual {:.1f}%, max {:.1f}%{}",
      fit.measurements, names, fit.rms_relative_residual * 100.0, fit.max_relative_residual * 100.0,
      fit.latency_at_zero ? "; the fitted latency was negative and is set to 0" : "");
  return fit;
}

std::vector<LinkFit> fit_links(const std::vector<CollectiveMeasurement>& measurements, const std::string& source) {
  std::vector<LinkFit> fits;
  for (const auto& [k, name] : detail::collective_kind_names) {
    std::vector<CollectiveMeasurement> of_kind;
    for (const CollectiveMeasurement& m : measurements)
      if (m.kind == k) of_kind.push_back(m);
    if (!of_kind.empty()) fits.push_back(fit_link(of_kind, fmt::format("{} ({})", source, name)));
  }
  fits.push_back(fit_link(measurements, source));
  return fits;
}

CollectiveKind collective_kind_from_string(std::string_view name, const std::string& where) {
  if (const std::optional<CollectiveKind> kind = detail::enum_named(detail::collective_kind_names, name)) return *kind;
  throw Error(fmt::format("collective \"{}\" is not known; allowed: {}", name,
                          detail::names_list(detail::collective_kind_names)),
              where);
}

std::string collective_measurements_json(const CollectiveMeasurements& m, const std::vector<LinkFit>& fits) {
  nlohmann::ordered_json j;
  j["schema"] = measurements_schema;
  j["schema_version"] = measurements_schema_version;
  j["source"] = nlohmann::ordered_json{{"tool", m.tool},     {"created", m.created}, {"device", m.device},
                                       {"method", m.method}, {"simulated", m.simulated}};
  const LinkFit* joint = fits.empty() ? nullptr : &fits.back();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CollectiveMeasurement& r : m.rows) {
    nlohmann::ordered_json row{{"collective", to_string(r.kind)},
                               {"ranks", r.ranks},
                               {"bytes", r.size_bytes},
                               {"time_us", r.seconds * 1e6}};
    if (joint) row["fitted_time_us"] = collective_seconds(r.kind, r.size_bytes, r.ranks, joint->link) * 1e6;
    rows.push_back(std::move(row));
  }
  j["measurements"] = std::move(rows);
  nlohmann::ordered_json out_fits = nlohmann::ordered_json::array();
  for (const LinkFit& f : fits) {
    nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
    for (CollectiveKind k : f.kinds) kinds.push_back(to_string(k));
    out_fits.push_back(nlohmann::ordered_json{{"collectives", std::move(kinds)},
                                              {"bandwidth_GBps", f.link.bandwidth_bytes_per_s * 1e-9},
                                              {"latency_us", f.link.latency_s * 1e6},
                                              {"measurements", f.measurements},
                                              {"rms_relative_residual", f.rms_relative_residual},
                                              {"max_relative_residual", f.max_relative_residual},
                                              {"latency_at_zero", f.latency_at_zero}});
  }
  j["fits"] = std::move(out_fits);
  return j.dump(2) + "\n";
}

CollectiveMeasurements parse_collective_measurements(std::string_view json_text, const std::string& source) {
  const nlohmann::json root = detail::parse_json_text(json_text, source);
  detail::refuse_other_file_kind(root, measurements_schema, "a file of measured collectives", source);
  const detail::ObjectReader r(root, source, "");
  r.reject_unknown_keys({"schema", "schema_version", "source", "measurements", "fits"});
  const std::string schema = r.string("schema");
  if (schema != measurements_schema) {
    r.fail("schema", fmt::format("value \"{}\" is not a collectives measurement; allowed: \"{}\"", schema,
                                 measurements_schema));
  }
  const std::int64_t version = r.integer("schema_version", 0, 1000000);
  if (version != measurements_schema_version) {
    r.fail("schema_version", fmt::format("version {} is not supported; this build reads version {}", version,
                                         measurements_schema_version));
  }
  CollectiveMeasurements m;
  const detail::ObjectReader s = r.object("source");
  s.reject_unknown_keys({"tool", "created", "device", "method", "simulated"});
  m.tool = s.string_or("tool", "");
  m.created = s.string_or("created", "");
  m.device = s.string_or("device", "");
  m.method = s.string_or("method", "");
  m.simulated = s.boolean_or("simulated", false);
  if (r.has("fits") && !r.raw("fits").is_array()) r.fail("fits", "expected an array");
  const nlohmann::json& rows = r.raw("measurements");
  if (!rows.is_array()) r.fail("measurements", "expected an array of {collective, ranks, bytes, time_us}");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string pointer = fmt::format("/measurements/{}", i);
    if (!rows[i].is_object()) throw Error(pointer + ": expected an object", source);
    const detail::ObjectReader row(rows[i], source, pointer);
    row.reject_unknown_keys({"collective", "ranks", "bytes", "time_us", "fitted_time_us"});
    CollectiveMeasurement c;
    c.kind = collective_kind_from_string(row.string("collective"), source + " at " + row.pointer_to("collective"));
    c.ranks = row.integer("ranks", 2, std::int64_t{1} << 20);
    c.size_bytes = row.number("bytes", 1.0, 1e15);
    c.seconds = row.number("time_us", 1e-6, 1e12) * 1e-6;
    m.rows.push_back(c);
  }
  return m;
}

CollectiveMeasurements load_collective_measurements(const std::string& path) {
  return parse_collective_measurements(detail::read_text_file(path), path);
}

}  // namespace budget
