#include "budget/workload.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "budget/error.hpp"
#include "workload/doc_lengths_json.hpp"
#include "base/json_reader.hpp"
#include "workload/workload_names.hpp"
#include "base/first_error.hpp"

namespace budget {

std::string_view to_string(AttentionMask mask) { return detail::name_of(detail::attention_mask_names, mask); }

Workload paper_workload() {
  Workload w;
  w.description = "SMELT paper: 4096-token packed windows, document masks, 400 mean attended keys";
  return w;
}

Workload causal_workload(std::int64_t seq_len) {
  Workload w;
  w.seq_len = seq_len;
  w.attention_mask = AttentionMask::causal;
  // Σ_{i=1..n} i / n = (n + 1)/2 keys per query for one causal window of n tokens.
  w.attended_keys = (static_cast<double>(seq_len) + 1.0) / 2.0;
  w.description = fmt::format("causal mask over {}-token windows", seq_len);
  return w;
}

namespace {

// Mean keys per query of one causal window of S tokens with sliding window w (0: none):
// K_w(S)/S with K_w(S) = Σ_{i=1..S} min(i, w) = w(w+1)/2 + (S − w)·w for w < S, else S(S+1)/2.
double causal_window_keys(std::int64_t seq_len, std::int64_t window) {
  const auto s = static_cast<double>(seq_len);
  if (window == 0 || window >= seq_len) return (s + 1.0) / 2.0;
  const auto w = static_cast<double>(window);
  return (w * (w + 1.0) / 2.0 + (s - w) * w) / s;
}

std::optional<Error> tile_field_error(AttentionTile tile, const std::string& source, const char* path) {
  if (tile.rows < 1 || tile.rows > max_tile_side || tile.cols < 1 || tile.cols > max_tile_side) {
    return Error(fmt::format("tile {} is out of range; allowed: ROWSxCOLS with sides in [1, 65536]", to_string(tile)),
                 source, path);
  }
  return std::nullopt;
}

/// The first problem of `w`, as the error validate() throws; nullopt when valid.
std::optional<Error> workload_error(const Workload& w, const std::string& source) {
  if (w.seq_len < 1 || w.seq_len > (std::int64_t{1} << 40)) {
    return Error(fmt::format("value {} is out of range; allowed: an integer in [1, 2^40]", w.seq_len), source,
                "/seq_len");
  }
  if (w.sliding_window < 0 || w.sliding_window > (std::int64_t{1} << 40)) {
    return Error(fmt::format("value {} is out of range; allowed: 0 (none) or an integer in [1, 2^40]", w.sliding_window),
                source, "/sliding_window");
  }
  const bool windowed = w.sliding_window > 0 && w.sliding_window < w.seq_len;
  const auto max_keys = static_cast<double>(windowed ? w.sliding_window : w.seq_len);
  if (!(w.attended_keys >= 1.0 && w.attended_keys <= max_keys)) {
    return Error(windowed ? fmt::format("value {} is out of range; allowed: a number in [1, sliding_window = {}] (a "
                                       "query attends at least to itself and at most to its window)",
                                       w.attended_keys, w.sliding_window)
                         : fmt::format("value {} is out of range; allowed: a number in [1, seq_len = {}] (a query "
                                       "attends at least to itself and at most to its whole window)",
                                       w.attended_keys, w.seq_len),
                source, "/attended_keys");
  }
  if (w.attention_kernel == AttentionLaunch::none) {
    if (w.kernel_attended_keys != 0.0 &&
        !(w.kernel_attended_keys >= w.attended_keys && w.kernel_attended_keys <= static_cast<double>(w.seq_len))) {
      return Error(fmt::format("value {} is out of range; allowed: 0 (unknown) or a number in [attended_keys = "
                              "{}, seq_len = {}]",
                              w.kernel_attended_keys, w.attended_keys, w.seq_len),
                  source, "/kernel_attended_keys");
    }
  } else if (!(std::isfinite(w.kernel_attended_keys) && w.kernel_attended_keys >= w.attended_keys * (1.0 - 1e-9))) {
    // Derived kernel counts may exceed seq_len (a partial tile costs a whole one: a 1-token
    // document with 128×128 tiles executes 16,384 keys for its one query), never the exact count.
    return Error(fmt::format("value {} is out of range; allowed: a finite number ≥ attended_keys = {} (whole tiles "
                            "cover every attended key)",
                            w.kernel_attended_keys, w.attended_keys),
                source, "/kernel_attended_keys");
  }
  if (!(std::isfinite(w.kernel_forward_attended_keys) && w.kernel_forward_attended_keys >= 0.0 &&
        std::isfinite(w.kernel_backward_attended_keys) && w.kernel_backward_attended_keys >= 0.0)) {
    return Error("kernel forward/backward attended keys must be finite numbers ≥ 0", source, "/kernel_attended_keys");
  }
  if (auto e = tile_field_error(w.forward_tile, source, "/forward_tile")) return e;
  if (auto e = tile_field_error(w.backward_tile, source, "/backward_tile")) return e;
  if (w.training_passes < 1 || w.training_passes > 16) {
    return Error(fmt::format("value {} is out of range; allowed: an integer in [1, 16] (3 = forward + "
                            "backward, 4 = with full activation recompute)",
                            w.training_passes),
                source, "/training_passes");
  }
  if (w.tokens_per_step < 1 || w.tokens_per_step > (std::int64_t{1} << 40)) {
    return Error(fmt::format("value {} is out of range; allowed: an integer in [1, 2^40] tokens per GPU and step",
                            w.tokens_per_step),
                source, "/tokens_per_step");
  }
  if (w.kv_bytes < 1 || w.kv_bytes > 16) {
    return Error(fmt::format("value {} is out of range; allowed: an integer in [1, 16] bytes per element", w.kv_bytes),
                source, "/kv_bytes");
  }
  return std::nullopt;
}

}  // namespace

std::string validation_error(const Workload& workload, const std::string& source) {
  return detail::message_of(workload_error(workload, source));
}

void validate(const Workload& workload, const std::string& source) {
  detail::throw_if_error(workload_error(workload, source));
}

namespace {

std::string resolve_path(const std::string& path, const std::string& base_directory) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_directory.empty()) return path;
  return (std::filesystem::path(base_directory) / p).lexically_normal().string();
}

AttentionTile tile_or(const detail::ObjectReader& r, std::string_view key, AttentionTile fallback) {
  if (!r.has(key)) return fallback;
  const std::string text = r.string(key);
  try {
    return parse_attention_tile(text);
  } catch (const Error& e) {
    r.fail(key, e.message());
  }
}

// The "doc_lengths" object: exactly one of distribution / histogram / lengths, and the packing
// options. Paths resolve against `base_directory`.
DocLengthsSpec read_doc_lengths(const detail::ObjectReader& r, const std::string& base_directory) {
  r.reject_unknown_keys(
      {"distribution", "histogram", "lengths", "format", "tokens_per_doc", "order", "seed", "method", "samples"});
  const int sources = int{r.has("distribution")} + int{r.has("histogram")} + int{r.has("lengths")};
  if (sources != 1) {
    r.fail_here(
        fmt::format("give exactly one of \"distribution\" (e.g. \"exp:mean=600\"), \"histogram\" (a file "
                    "or an inline object) or \"lengths\" (a file); found {}",
                    sources));
  }
  DocLengthsSpec spec;
  if (r.has("distribution")) {
    spec.kind = LengthSourceKind::distribution;
    try {
      spec.distribution = parse_length_distribution(r.string("distribution"));
    } catch (const Error& e) {
      if (!e.source().empty()) throw;
      r.fail("distribution", e.message());
    }
  } else if (r.has("histogram")) {
    spec.kind = LengthSourceKind::histogram;
    const nlohmann::json& value = r.raw("histogram");
    if (value.is_string()) {
      spec.path = resolve_path(value.get<std::string>(), base_directory);
      spec.distribution = read_histogram_file(spec.path);
    } else {
      spec.distribution = detail::histogram_from_json(value, r.source(), r.pointer_to("histogram"));
    }
  } else {
    spec.kind = LengthSourceKind::lengths_file;
    spec.path = resolve_path(r.string("lengths"), base_directory);
  }
  const bool is_file = spec.kind == LengthSourceKind::lengths_file;
  for (const char* key : {"format", "order"}) {
    if (!is_file && r.has(key)) r.fail(key, fmt::format("\"{}\" applies to \"lengths\" files only", key));
  }
  if (is_file && r.has("samples")) {
    r.fail("samples", "\"samples\" applies to distributions and histograms (a lengths file is simulated as given)");
  }
  spec.file_format = r.enum_or("format", LengthFileFormat::automatic, detail::length_file_format_names);
  spec.order = r.enum_or("order", PackingOrder::given, detail::packing_order_names);
  spec.tokens_per_doc = r.integer_or("tokens_per_doc", 0, 0, std::int64_t{1} << 20);
  spec.seed = static_cast<std::uint64_t>(r.integer_or("seed", 0, 0, INT64_MAX));
  spec.samples = r.integer_or("samples", spec.samples, 1, max_simulated_documents);
  const CostMethod method = is_file ? CostMethod::simulation : CostMethod::expectation;
  spec.method = r.enum_or("method", method, detail::cost_method_names);
  return spec;
}

/// Derived attended keys lie in [1, window] exactly; floating-point rounding can land them a hair
/// outside (sliding_window 1 gives 1 + 1e-16): clamp, so that validate() never blames
/// /attended_keys, a key the user did not write, for rounding.
double clamp_derived_keys(double keys, const Workload& w) {
  const bool windowed = w.sliding_window > 0 && w.sliding_window < w.seq_len;
  const auto max_keys = static_cast<double>(windowed ? w.sliding_window : w.seq_len);
  if (keys > max_keys && keys <= max_keys * (1.0 + 1e-9)) return max_keys;
  if (keys < 1.0 && keys >= 1.0 - 1e-9) return 1.0;
  return keys;
}

// attended_keys (and the kernel counts) from document lengths.
void derive_from_doc_lengths(Workload& w, const DocLengthsSpec& spec, const std::string& source) {
  const AttentionGeometry geometry = w.attention_geometry();
  DocLengthsCost result;
  try {
    validate(geometry, source);
    result = evaluate_doc_lengths(spec, geometry);
  } catch (const TimeLimitError&) {
    throw;  // already names its work; with_source() would make it a plain Error
  } catch (const Error& e) {
    if (e.source().empty() && e.path() == "/samples") throw Error(e.message(), source, "/doc_lengths/samples");
    throw e.with_source(source);
  }
  const MaskCost& mask = w.attention_mask == AttentionMask::causal ? result.cost.causal : result.cost.document;
  w.attended_keys = clamp_derived_keys(mask.exact_keys, w);
  std::string kernel_note;
  if (w.attention_kernel != AttentionLaunch::none) {
    const KernelKeys k = mask.executed(w.attention_kernel);
    w.kernel_forward_attended_keys = k.forward;
    w.kernel_backward_attended_keys = k.backward;
    w.kernel_attended_keys = pass_weighted_keys(k, w.training_passes);
    kernel_note = fmt::format("; {} kernel {:.4g} executed keys ({:.3f}×)", to_string(w.attention_kernel),
                              w.kernel_attended_keys, w.kernel_attended_keys / w.attended_keys);
  }
  w.doc_lengths = spec;
  w.description = fmt::format("{} masks{} over {} in {}-token windows: {:.4g} mean attended keys ({}){}",
                              to_string(w.attention_mask),
                              w.sliding_window > 0 ? fmt::format(" (sliding window {})", w.sliding_window) : "",
                              spec.describe(), w.seq_len, w.attended_keys, to_string(spec.method), kernel_note);
}

// Kernel counts of a causal window of seq_len tokens (one context: varlen = dense).
void derive_causal_kernel(Workload& w, const std::string& source) {
  const AttentionGeometry geometry = w.attention_geometry();
  validate(geometry, source);
  const auto keys = [&](AttentionTile tile) {
    const std::int64_t tiles = causal_context_tiles(w.seq_len, tile, w.sliding_window);
    return static_cast<double>(tiles) * static_cast<double>(tile.area()) / static_cast<double>(w.seq_len);
  };
  w.kernel_forward_attended_keys = keys(w.forward_tile);
  w.kernel_backward_attended_keys = keys(w.backward_tile);
  w.kernel_attended_keys =
      pass_weighted_keys({w.kernel_forward_attended_keys, w.kernel_backward_attended_keys}, w.training_passes);
}

}  // namespace

Workload parse_workload(std::string_view json_text, const std::string& source, const std::string& base_directory) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  root.reject_unknown_keys({"seq_len", "attention_mask", "attended_keys", "kernel_attended_keys", "training_passes",
                            "kv_bytes", "description", "doc_lengths", "sliding_window", "attention_kernel",
                            "forward_tile", "backward_tile", "tokens_per_step"});
  Workload w = paper_workload();
  w.seq_len = root.integer_or("seq_len", w.seq_len, 1, std::int64_t{1} << 40);
  w.training_passes = root.integer_or("training_passes", w.training_passes, 1, 16);
  w.kv_bytes = root.integer_or("kv_bytes", w.kv_bytes, 1, 16);
  w.tokens_per_step = root.integer_or("tokens_per_step", w.tokens_per_step, 1, std::int64_t{1} << 40);
  w.sliding_window = root.integer_or("sliding_window", 0, 0, std::int64_t{1} << 40);
  w.forward_tile = tile_or(root, "forward_tile", w.forward_tile);
  w.backward_tile = tile_or(root, "backward_tile", w.backward_tile);
  const bool has_doc_lengths = root.has("doc_lengths");
  const AttentionLaunch kernel = has_doc_lengths ? AttentionLaunch::varlen : AttentionLaunch::none;
  w.attention_kernel = root.enum_or("attention_kernel", kernel, detail::attention_launch_names);
  if (w.attention_kernel != AttentionLaunch::none && root.has("kernel_attended_keys")) {
    root.fail("kernel_attended_keys",
              fmt::format("kernel_attended_keys cannot be given with \"attention_kernel\": \"{}\"; it is derived from "
                          "the tile model (use \"attention_kernel\": \"none\" to give it)",
                          to_string(w.attention_kernel)));
  }
  w.attention_mask = root.enum_or("attention_mask", AttentionMask::document, detail::attention_mask_names);

  if (has_doc_lengths) {
    if (root.has("attended_keys")) {
      root.fail("attended_keys",
                "attended_keys cannot be given with \"doc_lengths\"; it is derived from the document lengths "
                "(docs/attention.md)");
    }
    derive_from_doc_lengths(w, read_doc_lengths(root.object("doc_lengths"), base_directory), source);
  } else if (w.attention_mask == AttentionMask::causal) {
    if (root.has("attended_keys")) {
      root.fail("attended_keys",
                "attended_keys cannot be given with \"attention_mask\": \"causal\"; a causal window of "
                "seq_len tokens attends (seq_len + 1)/2 keys per query");
    }
    const Workload causal = causal_workload(w.seq_len);
    w.attended_keys = clamp_derived_keys(causal_window_keys(w.seq_len, w.sliding_window), w);
    w.description = causal.description;
    if (w.sliding_window > 0) w.description += fmt::format(", sliding window {}", w.sliding_window);
    if (w.attention_kernel != AttentionLaunch::none) derive_causal_kernel(w, source);
  } else {
    if (w.attention_kernel != AttentionLaunch::none) {
      root.fail("attention_kernel",
                fmt::format("\"attention_kernel\": \"{}\" with document masks needs \"doc_lengths\" (the tiles "
                            "depend on the document lengths); give doc_lengths, or kernel_attended_keys with "
                            "\"attention_kernel\": \"none\"",
                            to_string(w.attention_kernel)));
    }
    if (root.has("attended_keys")) {
      w.attended_keys = root.number("attended_keys", 1.0, static_cast<double>(w.seq_len));
      w.description = fmt::format("document masks, {} mean attended keys (given)", w.attended_keys);
    }
  }
  if (root.has("kernel_attended_keys")) {
    w.kernel_attended_keys = root.number("kernel_attended_keys", 0.0, static_cast<double>(w.seq_len));
  }
  if (root.has("description")) w.description = root.string("description");
  validate(w, source);
  return w;
}

Workload load_workload(const std::string& path) {
  return parse_workload(detail::read_text_file(path), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace budget
