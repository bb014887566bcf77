// The profile keys of issue 32 (docs/calibration.md, "Profile format v1"): the source's kernel
// stack, kind and references, a row's dtype and roofline carry, and the factors fitted to measured
// runs. All optional: a profile without them reads and writes as before.

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/fp8_recipe.hpp"
#include "budget/text_escape.hpp"
#include "time/calibration_rows.hpp"
#include "time/op_shape.hpp"
#include "time/profile_ops.hpp"

namespace budget::detail {

namespace {

/// The array of strings at `key` (absent: empty), each non-empty printable text.
std::vector<std::string> read_string_array(const ObjectReader& r, std::string_view key) {
  std::vector<std::string> out;
  if (!r.has(key)) return out;
  const auto& array = r.raw(key);
  if (!array.is_array()) r.fail(key, fmt::format("expected an array of strings, found {}", describe_value(array)));
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string at = fmt::format("{}/{}", key, i);
    if (!array[i].is_string()) r.fail(at, fmt::format("expected a string, found {}", describe_value(array[i])));
    std::string text = array[i].get<std::string>();
    if (text.empty() || printable_text(text) != text) {
      r.fail(at, "expected non-empty printable text (no control characters, valid UTF-8)");
    }
    out.push_back(std::move(text));
  }
  return out;
}

/// The run fit's precisions: the kernel targets' names (budget/kernel_stack.hpp, Precision) of bf16
/// and of the FP8 recipes the time model times (not nvfp4), in Precision's order.
std::vector<std::string_view> run_fit_precisions() {
  std::vector<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(Precision::nvfp4); ++i) {
    const auto precision = static_cast<Precision>(i);
    const bool timed = precision == Precision::bf16 || fp8_recipe_of(precision) != Fp8Recipe::none;
    if (timed) names.push_back(to_string(precision));
  }
  return names;
}

CalibrationRunFit read_run_fit(const ObjectReader& r) {
  r.reject_unknown_keys({"precision", "gemm", "attention", "expert_gemms", "memory_bound", "intra_node", "inter_node",
                         "all_to_all", "launch_us", "overhead_s", "runs", "fitted_on", "validated_on", "loo_median_error", "loo_max_error"});
  CalibrationRunFit f;
  const std::string precision = r.choice_or("precision", "", run_fit_precisions());
  if (precision.empty()) r.fail("precision", "required key is missing");
  f.precision = parse_precision(precision, r.pointer_to("precision"));
  // A factor of 0 would drop a class; 100 is far above any physical correction.
  f.gemm = r.number_or("gemm", 1, 0, 100);
  f.attention = r.number_or("attention", 1, 0, 100);
  f.expert_gemms = r.number_or("expert_gemms", 1, 0, 100);
  f.memory_bound = r.number_or("memory_bound", 1, 0, 100);
  f.intra_node = r.number_or("intra_node", 1, 0, 100);
  f.inter_node = r.number_or("inter_node", 1, 0, 100);
  f.all_to_all = r.number_or("all_to_all", 1, 0, 100);
  f.launch_us = r.number_or("launch_us", 0, 0, 1e6);
  f.overhead_s = r.number_or("overhead_s", 0, 0, 1e6);
  f.runs = r.string_or("runs", "");
  f.fitted_on = read_string_array(r, "fitted_on");
  f.validated_on = read_string_array(r, "validated_on");
  // No figure of accuracy without runs behind it (issue 42): a fit on no runs has none.
  for (const char* key : {"loo_median_error", "loo_max_error"}) {
    if (f.fitted_on.empty() && r.has(key)) r.fail(key, "a leave-one-run-out figure of a fit on no runs (fitted_on is empty)");
  }
  f.loo_median_error = r.number_or("loo_median_error", 0, 0, 1e6);
  f.loo_max_error = r.number_or("loo_max_error", 0, 0, 1e6);
  return f;
}

}  // namespace

void read_source_extras(const ObjectReader& r, CalibrationSource& source) {
  source.stack = r.choice_or("stack", "", {"pytorch-eager", "megatron-core-te"});
  source.kind = r.choice_or("kind", "", {"measured", "published"});
  source.references = read_string_array(r, "references");
}

void read_row_provenance(const ObjectReader& r, CalibrationRow& row) {
  std::vector<std::string_view> dtypes;
  for (const auto& name : detail::profile_dtype_names) dtypes.push_back(name.name);
  row.dtype = r.choice_or("dtype", "", dtypes);
  if (detail::dtype_of(row.dtype) == TimeQuery::Dtype::bf16) row.dtype.clear();  // the default, written as absent
  if (r.has("carried_from")) {
    row.carried_from = r.string("carried_from");
    if (row.carried_from.empty() || printable_text(row.carried_from) != row.carried_from) {
      r.fail("carried_from", "expected the name of a GPU: non-empty printable text");
    }
  }
}

std::vector<CalibrationRunFit> read_run_fits(const ObjectReader& root) {
  std::vector<CalibrationRunFit> fits;
  if (!root.has("run_fits")) return fits;
  const auto& array = root.raw("run_fits");
  if (!array.is_array()) {
    root.fail("run_fits", fmt::format("expected an array of run fits, found {}", describe_value(array)));
  }
  for (std::size_t i = 0; i < array.size(); ++i) {
    if (!array[i].is_object()) {
      root.fail(fmt::format("run_fits/{}", i), fmt::format("expected an object, found {}", describe_value(array[i])));
    }
    fits.push_back(read_run_fit(ObjectReader(array[i], root.source(), fmt::format("/run_fits/{}", i))));
    for (std::size_t j = 0; j < i; ++j) {
      if (fits[j].precision == fits[i].precision) {
        root.fail(fmt::format("run_fits/{}/precision", i),
                  fmt::format("a second fit for precision \"{}\"; allowed: one fit per precision",
                              to_string(fits[i].precision)));
      }
    }
  }
  return fits;
}

nlohmann::ordered_json run_fits_to_json(const std::vector<CalibrationRunFit>& fits) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const CalibrationRunFit& f : fits) {
    out.push_back({{"precision", std::string(to_string(f.precision))},
                   {"gemm", f.gemm},
                   {"attention", f.attention},
                   {"expert_gemms", f.expert_gemms},
                   {"memory_bound", f.memory_bound},
                   {"intra_node", f.intra_node},
                   {"inter_node", f.inter_node},
                   {"all_to_all", f.all_to_all},
                   {"launch_us", f.launch_us},
                   {"overhead_s", f.overhead_s},
                   {"runs", f.runs},
                   {"fitted_on", f.fitted_on},
                   {"validated_on", f.validated_on}});
    if (!f.fitted_on.empty()) {
      out.back()["loo_median_error"] = f.loo_median_error;
      out.back()["loo_max_error"] = f.loo_max_error;
    }
  }
  return out;
}

}  // namespace budget::detail
