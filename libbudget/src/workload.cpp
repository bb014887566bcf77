#include "budget/workload.hpp"

#include <fmt/format.h>

#include "budget/error.hpp"
#include "json_reader.hpp"

namespace budget {

std::string_view to_string(AttentionMask mask) {
  switch (mask) {
    case AttentionMask::causal: return "causal";
    case AttentionMask::document: return "document";
  }
  return "?";
}

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

void validate(const Workload& w, const std::string& source) {
  if (w.seq_len < 1 || w.seq_len > (std::int64_t{1} << 40)) {
    throw Error(fmt::format("value {} is out of range; allowed: an integer in [1, 2^40]", w.seq_len), source,
                "/seq_len");
  }
  if (!(w.attended_keys >= 1.0 && w.attended_keys <= static_cast<double>(w.seq_len))) {
    throw Error(fmt::format("value {} is out of range; allowed: a number in [1, seq_len = {}] (a query "
                            "attends at least to itself and at most to its whole window)",
                            w.attended_keys, w.seq_len),
                source, "/attended_keys");
  }
  if (w.kernel_attended_keys != 0.0 &&
      !(w.kernel_attended_keys >= w.attended_keys && w.kernel_attended_keys <= static_cast<double>(w.seq_len))) {
    throw Error(fmt::format("value {} is out of range; allowed: 0 (unknown) or a number in [attended_keys = "
                            "{}, seq_len = {}]",
                            w.kernel_attended_keys, w.attended_keys, w.seq_len),
                source, "/kernel_attended_keys");
  }
  if (w.training_passes < 1 || w.training_passes > 16) {
    throw Error(fmt::format("value {} is out of range; allowed: an integer in [1, 16] (3 = forward + "
                            "backward, 4 = with full activation recompute)",
                            w.training_passes),
                source, "/training_passes");
  }
  if (w.kv_bytes < 1 || w.kv_bytes > 16) {
    throw Error(fmt::format("value {} is out of range; allowed: an integer in [1, 16] bytes per element",
                            w.kv_bytes),
                source, "/kv_bytes");
  }
}

Workload parse_workload(std::string_view json_text, const std::string& source) {
  const nlohmann::json document = detail::parse_json_text(json_text, source);
  const detail::ObjectReader root(document, source, "");
  root.reject_unknown_keys({"seq_len", "attention_mask", "attended_keys", "kernel_attended_keys",
                            "training_passes", "kv_bytes", "description"});
  Workload w = paper_workload();
  w.seq_len = root.integer_or("seq_len", w.seq_len, 1, std::int64_t{1} << 40);
  const std::string mask = root.choice_or("attention_mask", "document", {"document", "causal"});
  if (mask == "causal") {
    if (root.has("attended_keys")) {
      root.fail("attended_keys",
                "attended_keys cannot be given with \"attention_mask\": \"causal\"; a causal window of "
                "seq_len tokens attends (seq_len + 1)/2 keys per query");
    }
    const Workload causal = causal_workload(w.seq_len);
    w.attention_mask = causal.attention_mask;
    w.attended_keys = causal.attended_keys;
    w.description = causal.description;
  } else if (root.has("attended_keys")) {
    w.attended_keys = root.number("attended_keys", 1.0, static_cast<double>(w.seq_len));
    w.description = fmt::format("document masks, {} mean attended keys (given)", w.attended_keys);
  }
  w.kernel_attended_keys = root.number_or("kernel_attended_keys", 0.0, 0.0, static_cast<double>(w.seq_len));
  w.training_passes = root.integer_or("training_passes", w.training_passes, 1, 16);
  w.kv_bytes = root.integer_or("kv_bytes", w.kv_bytes, 1, 16);
  if (root.has("description")) w.description = root.string("description");
  validate(w, source);
  return w;
}

Workload load_workload(const std::string& path) { return parse_workload(detail::read_text_file(path), path); }

}  // namespace budget
