// DocLengthsSpec: a document-length source with its packing options, evaluated by expectation or
// by simulation.

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "budget/attention_cost.hpp"
#include "budget/error.hpp"
#include "workload/workload_names.hpp"

namespace budget {

std::string_view to_string(LengthSourceKind kind) { return detail::name_of(detail::length_source_kind_names, kind); }

std::string_view to_string(CostMethod method) { return detail::name_of(detail::cost_method_names, method); }

LengthDistribution length_file_histogram(const std::string& path, LengthFileFormat format) {
  LengthFileReader reader(path, format);
  std::unordered_map<std::uint64_t, std::uint64_t> counts;
  std::vector<std::uint64_t> block(std::size_t{1} << 16);
  while (const std::size_t n = reader.read(block)) {
    for (std::size_t i = 0; i < n; ++i) ++counts[block[i]];
  }
  EmpiricalLength histogram;
  histogram.weights.reserve(counts.size());
  for (const auto& [length, count] : counts) {
    histogram.weights.emplace_back(static_cast<std::int64_t>(length), static_cast<double>(count));
  }
  std::sort(histogram.weights.begin(), histogram.weights.end());
  return LengthDistribution(LengthComponent{std::move(histogram)}, path);
}

std::string DocLengthsSpec::describe() const {
  std::string out;
  switch (kind) {
    case LengthSourceKind::distribution: out = distribution ? distribution->describe() : "distribution (unset)"; break;
    case LengthSourceKind::histogram: {
      std::size_t lengths = 0;
      if (distribution) {
        if (const auto* h = std::get_if<EmpiricalLength>(&distribution->parts().front().component)) {
          lengths = h->weights.size();
        }
      }
      out = path.empty() ? fmt::format("inline histogram ({} lengths)", lengths)
                         : fmt::format("histogram {} ({} lengths)", path, lengths);
      break;
    }
    case LengthSourceKind::lengths_file:
      out = order == PackingOrder::shuffled ? fmt::format("lengths {} (shuffled, seed {})", path, seed)
                                            : fmt::format("lengths {} (file order)", path);
      break;
  }
  if (tokens_per_doc > 0) out += fmt::format(", +{} tokens/doc", tokens_per_doc);
  return out;
}

void validate(const DocLengthsSpec& spec, const std::string& source) {
  if (spec.kind != LengthSourceKind::lengths_file && !spec.distribution) {
    throw Error(fmt::format("a {} source needs its lengths", to_string(spec.kind)), source, "/doc_lengths");
  }
  if (spec.kind == LengthSourceKind::lengths_file && spec.path.empty()) {
    throw Error("a lengths source needs a file path", source, "/doc_lengths/lengths");
  }
  if (spec.order == PackingOrder::shuffled && spec.kind != LengthSourceKind::lengths_file) {
    throw Error(
        "\"order\": \"shuffled\" applies to lengths files only; distributions and histograms are drawn "
        "i.i.d. already",
        source, "/doc_lengths/order");
  }
  if (spec.tokens_per_doc < 0 || spec.tokens_per_doc > (std::int64_t{1} << 20)) {
    throw Error(fmt::format("value {} is out of range; allowed: an integer in [0, 2^20]", spec.tokens_per_doc), source,
                "/doc_lengths/tokens_per_doc");
  }
  if (spec.samples < 1 || spec.samples > max_simulated_documents) {
    throw Error(fmt::format("value {} is out of range; allowed: an integer in [1, 2^32 = {}] (docs/reliability.md)",
                            spec.samples, max_simulated_documents),
                source,
                "/doc_lengths/samples");
  }
}

DocLengthsCost evaluate_doc_lengths(const DocLengthsSpec& spec, const AttentionGeometry& geometry) {
  validate(spec);
  DocLengthsCost out;
  out.method = spec.method;
  if (spec.method == CostMethod::expectation) {
    const LengthDistribution lengths = spec.kind == LengthSourceKind::lengths_file
                                           ? length_file_histogram(spec.path, spec.file_format)
                                           : *spec.distribution;
    out.cost = expected_attention_cost(lengths, geometry, spec.tokens_per_doc);
    return out;
  }
  out.simulation =
      spec.kind == LengthSourceKind::lengths_file
          ? simulate_length_file(spec.path, spec.file_format, spec.order, spec.seed, geometry, spec.tokens_per_doc)
          : simulate_distribution(*spec.distribution, spec.samples, spec.seed, geometry, spec.tokens_per_doc);
  out.cost = out.simulation->cost();
  return out;
}

}  // namespace budget
