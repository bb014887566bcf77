// Whole-layer rows of calibration profiles (docs/calibration.md, "Layer rows"): one reader for the
// measurement lines (the form of tests/data/time/h200_torch_layers.jsonl) and a profile's "layers"
// array, and the writer of that form.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/accounting.hpp"
#include "budget/calibration.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "config/config_json.hpp"
#include "time/calibration_rows.hpp"
#include "time/step_terms.hpp"
#include "base/json_reader.hpp"

namespace budget {

bool CalibrationLayerRow::operator==(const CalibrationLayerRow& o) const {
  return std::tie(cell, tag, run, tokens, doc_len, layer_ms, attn_block_ms, moe_block_ms, layer_spread_ms, pad_fraction,
                  attention_backend_ms) == std::tie(o.cell, o.tag, o.run, o.tokens, o.doc_len, o.layer_ms,
                                                    o.attn_block_ms, o.moe_block_ms, o.layer_spread_ms, o.pad_fraction,
                                                    o.attention_backend_ms) &&
         arch_config_to_json(config, -1) == arch_config_to_json(o.config, -1);
}

namespace detail {

namespace {

constexpr std::int64_t max_layer_tokens = std::int64_t{1} << 40;

/// A name field: non-empty letters, digits and "-_.+" (it is printed in tables and used as a key).
std::string read_name(const ObjectReader& r, std::string_view key) {
  const std::string value = r.string(key);
  const bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '+';
  });
  if (!ok) r.fail(key, fmt::format("value \"{}\" is not allowed; allowed: letters, digits, '-', '_', '.', '+'", value));
  return value;
}

/// A whole layer's forward + backward does its training FLOPs (the accounting's, per executed
/// layer: every layer of a row's config is alike) times `tokens` in layer_ms: at most
/// max_row_flops_per_s, as an op row (a faster row has its time in the wrong unit).
void check_layer_row_rate(const ObjectReader& r, const CalibrationLayerRow& row) {
  const Budgets b = account(row.config, detail::layer_workload(row.tokens, row.doc_len));
  const double flops = b.training_flops_per_token / static_cast<double>(row.config.executed_layers()) *
                       static_cast<double>(row.tokens);
  const double rate = flops / (row.layer_ms * 1e-3);
  if (rate > detail::max_row_flops_per_s) {
    r.fail("layer_ms", fmt::format("one layer's {:.3g} training FLOPs in {:g} ms is {:.3g} FLOP/s, more than any device "
                                   "does (at most {:g}); check the time's unit (milliseconds)",
                                   flops, row.layer_ms, rate, detail::max_row_flops_per_s));
  }
}

}  // namespace

CalibrationLayerRow read_calibration_layer_row(const ObjectReader& r) {
  r.reject_unknown_keys({"run", "cell", "tag", "config", "tokens", "doc_len", "executed_layers", "attn_block_ms",
                         "moe_block_ms", "layer_ms", "layer_spread_ms", "attention_backend_ms", "pad_fraction"});
  CalibrationLayerRow row;
  row.cell = read_name(r, "cell");
  row.tag = read_name(r, "tag");
  row.run = r.integer_or("run", 0, 0, 1000000);
  {
    const auto& config = r.raw("config");
    if (!config.is_object()) {
      r.fail("config", fmt::format("expected a config object, found {}", describe_value(config)));
    }
    try {
      row.config = parse_arch_config(config.dump(), r.source());
    } catch (const Error& e) {
      throw Error(e.message(), r.source(), r.pointer_to("config") + e.path());
    }
  }
  const ArchConfig& c = row.config;
  const std::int64_t dense = c.dense_ffn_layers();
  const std::int64_t sliding = c.sliding_attention_layers();
  if ((dense != 0 && dense != c.num_layers) || (sliding != 0 && sliding != c.num_layers)) {
    r.fail("config", "a layer row's config must have all layers alike (no first dense layers, no sliding-window "
                     "layers among full ones): the row times one of them");
  }
  row.tokens = r.integer("tokens", 1, max_layer_tokens);
  row.doc_len = r.integer("doc_len", 1, max_layer_tokens);
  if (row.doc_len > row.tokens) {
    r.fail("doc_len", fmt::format("doc_len {} is larger than tokens {}; allowed: 1 to tokens", row.doc_len, row.tokens));
  }
  if (r.has("executed_layers")) {
    const std::int64_t executed = r.integer("executed_layers", 1, 1000000);
    if (executed != c.executed_layers()) {
      r.fail("executed_layers", fmt::format("value {} disagrees with the config, which executes {} layers", executed,
                                            c.executed_layers()));
    }
  }
  // The op rows' plausibility bounds (calibration_rows.hpp; docs/calibration.md, "Plausible values"):
  // a time in [1e-6, 1e9] ms, and the layer's training FLOPs at most 1e18 FLOP/s.
  const auto row_ms = [&](std::string_view key, bool required) {
    if (!required && !r.has(key)) return 0.0;
    return r.number(key, detail::min_row_ms, detail::max_row_ms);
  };
  row.layer_ms = row_ms("layer_ms", true);
  row.attn_block_ms = row_ms("attn_block_ms", false);
  row.moe_block_ms = row_ms("moe_block_ms", false);
  row.layer_spread_ms = r.number_or("layer_spread_ms", 0, 0, detail::max_row_ms);
  check_layer_row_rate(r, row);
  row.pad_fraction = r.number_or("pad_fraction", 0, 0, 1);
  if (r.has("attention_backend_ms")) {
    const ObjectReader backends = r.object("attention_backend_ms");
    for (const auto& [name, value] : backends.json().items()) {
      const bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
      });
      if (!name_ok) backends.fail(name, fmt::format("backend name \"{}\" is not allowed; allowed: letters, digits, '-', '_', '.'", name));
      // A refusal is a string starting with "refused" (the measurer's message may follow).
      if (value.is_string() && value.get<std::string>().rfind("refused", 0) == 0) {
        row.attention_backend_ms[name] = 0;
        continue;
      }
      if (!value.is_number() || !(value.get<double>() >= detail::min_row_ms) ||
          !(value.get<double>() <= detail::max_row_ms)) {
        backends.fail(name, fmt::format("value {} is not allowed; allowed: milliseconds in [{:g}, {:g}] or \"refused…\"",
                                        describe_value(value), detail::min_row_ms, detail::max_row_ms));
      }
      row.attention_backend_ms[name] = value.get<double>();
    }
  }
  return row;
}

nlohmann::ordered_json calibration_layer_row_to_json(const CalibrationLayerRow& row) {
  nlohmann::ordered_json j;
  if (row.run != 0) j["run"] = row.run;
  j["cell"] = row.cell;
  j["tag"] = row.tag;
  j["config"] = arch_config_json(row.config);
  j["tokens"] = row.tokens;
  j["doc_len"] = row.doc_len;
  j["executed_layers"] = row.config.executed_layers();
  if (row.attn_block_ms > 0) j["attn_block_ms"] = row.attn_block_ms;
  if (row.moe_block_ms > 0) j["moe_block_ms"] = row.moe_block_ms;
  j["layer_ms"] = row.layer_ms;
  if (row.layer_spread_ms > 0) j["layer_spread_ms"] = row.layer_spread_ms;
  if (!row.attention_backend_ms.empty()) {
    nlohmann::ordered_json b = nlohmann::ordered_json::object();
    for (const auto& [name, ms] : row.attention_backend_ms) {
      if (ms > 0) {
        b[name] = ms;
      } else {
        b[name] = "refused";
      }
    }
    j["attention_backend_ms"] = b;
  }
  if (row.pad_fraction > 0) j["pad_fraction"] = row.pad_fraction;
  return j;
}

}  // namespace detail

std::vector<CalibrationLayerRow> parse_layer_measurements(std::string_view jsonl, const std::string& source) {
  std::vector<CalibrationLayerRow> rows;
  detail::for_each_jsonl_line(jsonl, source, [&](const detail::ObjectReader& r) {
    if (!r.json().is_object()) r.fail_here(fmt::format("expected an object, found {}", detail::describe_value(r.json())));
    if (r.has("op")) {
      if (r.string("op") != "device") {
        r.fail("op", fmt::format("value \"{}\" is not allowed in a layer file; allowed: \"device\"", r.string("op")));
      }
      r.reject_unknown_keys({"op", "device", "torch", "gemm_8192_tflops", "tokens", "doc_len"});
      return;
    }
    rows.push_back(detail::read_calibration_layer_row(r));
  });
  if (rows.empty()) throw Error("no layer lines; allowed: at least one measured layer", source);
  return rows;
}

std::vector<CalibrationLayerRow> load_layer_measurements(const std::string& path) {
  return parse_layer_measurements(detail::read_text_file(path), path);
}

}  // namespace budget
