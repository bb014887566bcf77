// The law L(F, S, D) and its coefficients file.

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "budget/error.hpp"
#include "budget/scaling_law.hpp"

using budget::CoefficientsFile;
using budget::parse_coefficients_json;
using Catch::Matchers::Contains;

namespace {
std::string json_error(const std::string& text) {
  try {
    parse_coefficients_json(text, "law.json");
  } catch (const budget::Error& e) {
    return e.what();
  }
  return {};
}

const std::string coefficients_block = R"("coefficients": {"E": 1.4439, "A": 1366, "K": 1.975e6, "a": 0.3703, "b": 0.153, "c": 0.6594})";
}  // namespace

TEST_CASE("scaling law: L = E + A(1-S)^b F^-a + K D^-c", "[scaling][law]") {
  const budget::ScalingCoefficients k{1.5, 100.0, 1000.0, 0.5, 0.25, 0.5};
  // F = 1e4, S = 0.75 (1-S = 1/4), D = 1e6: 1.5 + 100·(1/4)^0.25/100 + 1000/1000.
  CHECK(budget::predict_loss(k, 1e4, 0.75, 1e6) == Approx(1.5 + std::pow(0.25, 0.25) + 1.0).epsilon(1e-15));
  // S = 0 and F = 6N: Chinchilla's form with A_N = A·6^-a.
  const double N = 1e9, D = 2e10;
  const double chinchilla = k.E + k.A * std::pow(6.0, -k.a) * std::pow(N, -k.a) + k.K * std::pow(D, -k.c);
  CHECK(budget::predict_loss(k, 6.0 * N, 0.0, D) == Approx(chinchilla).epsilon(1e-14));
}

TEST_CASE("scaling law: a hand-written coefficients file is accepted", "[scaling][law]") {
  const CoefficientsFile file = parse_coefficients_json(
      R"({"schema_version": 1, "arch": "baseline", "source": "paper", )" + coefficients_block + "}", "law.json");
  CHECK(file.arch == "baseline");
  CHECK(file.source == "paper");
  CHECK(file.coefficients.E == 1.4439);
  CHECK(file.coefficients.A == 1366.0);
  CHECK(file.coefficients.K == 1.975e6);
  CHECK(file.coefficients.a == 0.3703);
  CHECK(file.coefficients.b == 0.153);
  CHECK(file.coefficients.c == 0.6594);
  CHECK(file.fit_summary_json.empty());
}

TEST_CASE("scaling law: coefficients files round-trip exactly, fit summary kept", "[scaling][law]") {
  CoefficientsFile file;
  file.arch = "looped";
  file.coefficients = {1.0 / 3.0, 1963.0000000001, 5.264e6 * (1 + 1e-15), 0.1 + 0.2, 1e-300, 0.7011};
  file.fit_summary_json = R"({"termination":"ftol_rel reached","points":72})";
  const std::string text = budget::coefficients_to_json(file);
  const CoefficientsFile back = parse_coefficients_json(text, "out.json");
  CHECK(back.arch == file.arch);
  CHECK(back.coefficients.E == file.coefficients.E);
  CHECK(back.coefficients.A == file.coefficients.A);
  CHECK(back.coefficients.K == file.coefficients.K);
  CHECK(back.coefficients.a == file.coefficients.a);
  CHECK(back.coefficients.b == file.coefficients.b);
  CHECK(back.coefficients.c == file.coefficients.c);
  CHECK(nlohmann::json::parse(back.fit_summary_json) == nlohmann::json::parse(file.fit_summary_json));
  CHECK_THAT(text, Contains("\"schema_version\": 1"));
  CHECK(back.fitted_compute_min == 0.0);  // no compute_range
  CHECK(back.fitted_compute_max == 0.0);
}

TEST_CASE("scaling law: the fit summary's compute range is read, and a bad one refused", "[scaling][law]") {
  const auto with_range = [](const std::string& range) {
    return std::string(R"({"schema_version": 1, "arch": "x", )") + coefficients_block +
           R"(, "fit_summary": {"points": 3, "compute_range": )" + range + "}}";
  };
  const CoefficientsFile file = parse_coefficients_json(with_range("[1e18, 2.5e20]"), "law.json");
  CHECK(file.fitted_compute_min == 1e18);
  CHECK(file.fitted_compute_max == 2.5e20);
  for (const char* bad : {"[2e20, 1e18]", "[0, 1e18]", "[1e18]", "\"1e18\"", "[1e18, \"x\"]", "[-1, 2]"}) {
    CAPTURE(bad);
    CHECK_THAT(json_error(with_range(bad)), Contains("law.json: /fit_summary/compute_range") &&
                                                Contains("is not [min C, max C] with 0 < min <= max"));
  }
}

TEST_CASE("scaling law: bad coefficients files name the key and what is allowed", "[scaling][law]") {
  const std::string head = R"({"schema_version": 1, "arch": "x", )";
  CHECK_THAT(json_error(""), Contains("law.json: the file is empty"));
  CHECK_THAT(json_error("{"), Contains("law.json: not valid JSON"));
  CHECK_THAT(json_error(head + coefficients_block + R"(, "fit_sumary": {}})"),
             Contains("law.json: /fit_sumary: unknown key \"fit_sumary\" (did you mean \"fit_summary\"?)"));
  CHECK_THAT(json_error(head + R"("coefficients": {"E": 1, "A": 1, "K": 1, "a": 0.3, "b": 0.1, "c": 0.6, "B": 2}})"),
             Contains("/coefficients/B: unknown key \"B\""));
  CHECK_THAT(json_error(head + R"("coefficients": {"E": 1, "A": 1, "K": 1, "a": 0.3, "b": 0.1}})"),
             Contains("/coefficients/c: required key is missing"));
  CHECK_THAT(json_error(head + R"("coefficients": {"E": 1, "A": -1, "K": 1, "a": 0.3, "b": 0.1, "c": 0.6}})"),
             Contains("/coefficients/A: value -1 is not allowed; allowed: a number in (0, 1e+300]"));
  CHECK_THAT(json_error(head + R"("coefficients": {"E": 1, "A": 1, "K": 1, "a": 0, "b": 0.1, "c": 0.6}})"),
             Contains("/coefficients/a: value 0 is not allowed; allowed: a number in (0, 10]"));
  CHECK_THAT(json_error(head + R"("coefficients": {"E": "1", "A": 1, "K": 1, "a": 0.3, "b": 0.1, "c": 0.6}})"),
             Contains("/coefficients/E: expected a number"));
  CHECK_THAT(json_error(R"({"schema_version": 2, "arch": "x", )" + coefficients_block + "}"),
             Contains("/schema_version: schema_version 2 is not supported; this version reads 1"));
  CHECK_THAT(json_error(R"({"schema_version": 1, )" + coefficients_block + "}"), Contains("/arch: required key is missing"));
  CHECK_THAT(json_error(head + coefficients_block + R"(, "fit_summary": 3})"), Contains("/fit_summary: expected a JSON object"));
}

TEST_CASE("scaling law: validate_coefficients guards the frontier's domain", "[scaling][law]") {
  budget::ScalingCoefficients k{1.4, 1e3, 1e6, 0.37, 0.15, 0.66};
  CHECK_NOTHROW(budget::validate_coefficients(k, "k"));
  k.c = std::nan("");
  CHECK_THROWS_WITH(budget::validate_coefficients(k, "k"), Contains("k: /coefficients/c: coefficient c = nan is not allowed"));
  k.c = 0.66;
  k.K = 0.0;
  CHECK_THROWS_WITH(budget::validate_coefficients(k, "k"), Contains("coefficient K = 0 is not allowed"));
}

TEST_CASE("scaling law: the example coefficient files are the paper's", "[scaling][law]") {
  const auto baseline = budget::read_coefficients_file(std::string(BUDGET_SOURCE_DIR) + "/examples/scaling/baseline.json");
  const auto looped = budget::read_coefficients_file(std::string(BUDGET_SOURCE_DIR) + "/examples/scaling/looped.json");
  CHECK(baseline.arch == "baseline");
  CHECK(looped.arch == "looped");
  CHECK(baseline.coefficients.a == 0.3703);
  CHECK(looped.coefficients.K == 5.264e6);
}
