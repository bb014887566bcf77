// budget-match attention --lengths FILE | --histogram FILE | --dist SPEC | --workload FILE
//   [--seq-len 4096] [--tokens-per-doc 0] [--order given|shuffled] [--seed 0] [--samples 1000000]
//   [--method both|expectation|simulation] [--tile 128x128] [--bwd-tile 64x128] [--sliding-window W]
//   [--heads 10 --head-dim 128] [--format table|json|markdown]
// Attention cost of packed windows from document lengths: mean attended keys for document and
// causal masks, attention FLOPs per token and layer, kernel-executed / exact ratios for varlen and
// dense masked launches, and a histogram of piece lengths. Model and JSON keys: docs/attention.md.

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "budget/attention_cost.hpp"
#include "budget/error.hpp"
#include "budget/workload.hpp"
#include "budget_render/budgets.hpp"
#include "command_registry.hpp"
#include "option_checks.hpp"
#include "output_format.hpp"
#include "budget_render/table.hpp"

namespace budget::cli {
namespace {

struct AttentionOptions {
  std::string lengths_path;
  std::string histogram_path;
  std::string distribution_spec;
  std::string workload_path;
  std::string lengths_format = "auto";
  std::int64_t seq_len = 4096;
  std::int64_t tokens_per_doc = 0;
  std::string order = "given";
  std::uint64_t seed = 0;
  std::int64_t samples = 1'000'000;
  std::string method;  // empty: both for distributions and histograms, simulation for files
  std::string forward_tile = "128x128";
  std::string backward_tile = "64x128";
  std::int64_t sliding_window = 0;
  std::int64_t num_heads = 10;
  std::int64_t head_dim = 128;
  OutputFormat format = OutputFormat::table;
};

/// Everything one run computes.
struct AttentionReport {
  DocLengthsSpec spec;
  AttentionGeometry geometry;
  std::string source_kind;  // distribution, histogram, lengths, workload
  std::optional<AttentionCost> expectation;
  std::optional<SimulationResult> simulation;
  std::optional<Workload> workload;
  std::string workload_path;
  double query_width = 0.0;  // q = heads · head_dim
};

// 4·q·A: QKᵀ and PV cost 2·q FLOPs per key each (docs/accounting.md).
double forward_flops(double query_width, double keys) { return 4.0 * query_width * keys; }
// Training = forward + backward = 3 forward equivalents; kernels run the forward tile once and the
// backward tile for the two backward equivalents.
double training_flops(double query_width, double keys) { return 3.0 * forward_flops(query_width, keys); }
double kernel_training_flops(double query_width, const KernelKeys& k) {
  return forward_flops(query_width, k.forward + 2.0 * k.backward);
}

// ---------------------------------------------------------------------------------------------
// Building the spec from options

// The option that sets a geometry field named by an error path ("/seq_len" → "--seq-len").
std::string option_for_field(const std::string& path) {
  if (path == "/seq_len") return "--seq-len";
  if (path == "/sliding_window") return "--sliding-window";
  if (path == "/forward_tile") return "--tile";
  if (path == "/backward_tile") return "--bwd-tile";
  if (path == "/samples") return "--samples";
  return "budget-match attention";
}

DocLengthsSpec spec_from_options(const AttentionOptions& o, std::string& kind) {
  const int sources = int{!o.lengths_path.empty()} + int{!o.histogram_path.empty()} + int{!o.distribution_spec.empty()};
  if (sources != 1) {
    throw_option_dependency_error("budget-match attention",
                                  fmt::format("give exactly one of --lengths FILE, --histogram FILE, --dist SPEC or "
                                              "--workload FILE (found {})",
                                              sources + int{!o.workload_path.empty()}));
  }
  DocLengthsSpec spec;
  if (!o.lengths_path.empty()) {
    kind = "lengths";
    spec.kind = LengthSourceKind::lengths_file;
    spec.path = o.lengths_path;
    spec.file_format = parse_length_file_format(o.lengths_format, "--lengths-format");
  } else if (!o.histogram_path.empty()) {
    kind = "histogram";
    spec.kind = LengthSourceKind::histogram;
    spec.path = o.histogram_path;
    spec.distribution = read_histogram_file(o.histogram_path);
  } else {
    kind = "distribution";
    spec.kind = LengthSourceKind::distribution;
    spec.distribution = parse_length_distribution(o.distribution_spec, "--dist");
  }
  if (o.order == "shuffled" && spec.kind != LengthSourceKind::lengths_file) {
    throw_option_dependency_error(
        "--order", "--order shuffled applies to --lengths files only (distributions and histograms are drawn i.i.d.)");
  }
  spec.order = o.order == "shuffled" ? PackingOrder::shuffled : PackingOrder::given;
  if (o.tokens_per_doc < 0 || o.tokens_per_doc > (std::int64_t{1} << 20)) {
    throw Error(fmt::format("value {} is out of range; allowed: an integer in [0, 2^20]", o.tokens_per_doc),
                "--tokens-per-doc");
  }
  spec.tokens_per_doc = o.tokens_per_doc;
  spec.seed = o.seed;
  spec.samples = std::max<std::int64_t>(o.samples, 1);
  return spec;
}

// Which methods to run: (expectation, simulation).
std::pair<bool, bool> methods(const AttentionOptions& o, const DocLengthsSpec& spec) {
  const bool file = spec.kind == LengthSourceKind::lengths_file;
  std::string m = o.method;
  if (m.empty()) m = file ? "simulation" : (o.samples == 0 ? "expectation" : "both");
  if (m != "expectation" && o.samples == 0 && !file) {
    throw_option_dependency_error("--samples", fmt::format("--samples 0 leaves nothing to simulate with --method {}", m));
  }
  return {m != "simulation", m != "expectation"};
}

AttentionReport build_report(const AttentionOptions& o) {
  AttentionReport r;
  r.query_width = static_cast<double>(o.num_heads) * static_cast<double>(o.head_dim);
  bool run_expectation = false;
  bool run_simulation = false;
  if (!o.workload_path.empty()) {
    r.workload = load_workload(o.workload_path);
    r.workload_path = o.workload_path;
    if (!r.workload->doc_lengths) {
      throw Error("the workload has no \"doc_lengths\"; its attended_keys are given, not derived", o.workload_path,
                  "/doc_lengths");
    }
    r.spec = *r.workload->doc_lengths;
    r.geometry = r.workload->attention_geometry();
    r.source_kind = "workload";
    run_expectation = r.spec.method == CostMethod::expectation;
    run_simulation = !run_expectation;
  } else {
    r.spec = spec_from_options(o, r.source_kind);
    r.geometry = AttentionGeometry{o.seq_len, o.sliding_window, parse_attention_tile(o.forward_tile, "--tile"),
                                   parse_attention_tile(o.backward_tile, "--bwd-tile")};
    try {
      validate(r.geometry);
    } catch (const Error& e) {
      throw Error(e.message(), option_for_field(e.path()));
    }
    std::tie(run_expectation, run_simulation) = methods(o, r.spec);
  }
  validate(r.spec);
  if (run_expectation) {
    DocLengthsSpec expectation = r.spec;
    expectation.method = CostMethod::expectation;
    r.expectation = evaluate_doc_lengths(expectation, r.geometry).cost;
  }
  if (run_simulation) {
    DocLengthsSpec simulation = r.spec;
    simulation.method = CostMethod::simulation;
    try {
      r.simulation = evaluate_doc_lengths(simulation, r.geometry).simulation;
    } catch (const Error& e) {
      if (!e.source().empty() || e.path().empty()) throw;
      if (r.workload) throw Error(e.message(), o.workload_path, "/doc_lengths" + e.path());
      throw Error(e.message(), option_for_field(e.path()));
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// JSON

nlohmann::ordered_json kernel_json(const KernelKeys& k, double exact, double q) {
  return {{"forward_keys", k.forward},
          {"backward_keys", k.backward},
          {"forward_ratio", k.forward / exact},
          {"backward_ratio", k.backward / exact},
          {"training_flops_per_token_per_layer", kernel_training_flops(q, k)}};
}

nlohmann::ordered_json mask_json(const MaskCost& m, double q) {
  return {{"attended_keys", m.exact_keys},
          {"forward_flops_per_token_per_layer", forward_flops(q, m.exact_keys)},
          {"training_flops_per_token_per_layer", training_flops(q, m.exact_keys)},
          {"kernels",
           {{"varlen", kernel_json(m.varlen, m.exact_keys, q)},
            {"dense_masked", kernel_json(m.dense_masked, m.exact_keys, q)}}}};
}

nlohmann::ordered_json cost_json(const AttentionCost& c, double q) {
  return {{"mean_document_length", c.mean_document_length},
          {"mean_piece_length", c.mean_piece_length},
          {"documents_per_window", c.documents_per_window},
          {"document_mask", mask_json(c.document, q)},
          {"causal_mask", mask_json(c.causal, q)}};
}

nlohmann::ordered_json simulation_json(const SimulationResult& s, double q) {
  const SimulationTotals& t = s.totals;
  nlohmann::ordered_json out = cost_json(s.cost(), q);
  nlohmann::ordered_json histogram = nlohmann::ordered_json::array();
  for (const auto& bin : t.piece_histogram) {
    histogram.push_back({{"min_length", bin.min_length},
                         {"max_length", bin.max_length},
                         {"pieces", bin.pieces},
                         {"tokens", bin.tokens}});
  }
  out["totals"] = {
      {"documents", t.documents},
      {"tokens", t.tokens},
      {"windows", t.windows},
      {"full_windows", t.full_windows},
      {"pieces", t.pieces},
      {"document_keys", t.document_keys},
      {"causal_keys", t.causal_keys},
      {"tiles",
       {{"document",
         {{"varlen", {{"forward", t.document_forward.varlen}, {"backward", t.document_backward.varlen}}},
          {"dense_masked",
           {{"forward", t.document_forward.dense_masked}, {"backward", t.document_backward.dense_masked}}}}},
        {"causal", {{"forward", t.causal_forward_tiles}, {"backward", t.causal_backward_tiles}}}}}};
  out["piece_histogram"] = histogram;
  return out;
}

nlohmann::ordered_json report_json(const AttentionReport& r) {
  nlohmann::ordered_json out{{"schema_version", output_schema_version},
                             {"input", {{"kind", r.source_kind}, {"description", r.spec.describe()}}},
                             {"seq_len", r.geometry.seq_len},
                             {"tokens_per_doc", r.spec.tokens_per_doc},
                             {"sliding_window", r.geometry.sliding_window},
                             {"forward_tile", to_string(r.geometry.forward_tile)},
                             {"backward_tile", to_string(r.geometry.backward_tile)},
                             {"query_width", r.query_width}};
  if (r.expectation) out["expectation"] = cost_json(*r.expectation, r.query_width);
  if (r.simulation) out["simulation"] = simulation_json(*r.simulation, r.query_width);
  if (r.workload) {
    const Workload& w = *r.workload;
    out["workload"] = {{"path", r.workload_path},
                       {"attention_mask", to_string(w.attention_mask)},
                       {"attended_keys", w.attended_keys},
                       {"attention_kernel", to_string(w.attention_kernel)},
                       {"kernel_attended_keys", w.kernel_attended_keys},
                       {"training_passes", w.training_passes}};
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Tables

std::string ratio(double executed, double exact) { return fmt::format("{:.3f}×", executed / exact); }

Table packing_table(const AttentionReport& r) {
  Table t;
  t.add_column("packing", Align::left);
  if (r.expectation) t.add_column("expectation");
  if (r.simulation) t.add_column("simulation");
  const auto row = [&](const std::string& name, const std::string& expected, const std::string& simulated) {
    std::vector<std::string> cells{name};
    if (r.expectation) cells.push_back(expected);
    if (r.simulation) cells.push_back(simulated);
    t.add_row(cells);
  };
  const auto number = [](double x) { return fmt::format("{:.2f}", x); };
  if (r.simulation) {
    const SimulationTotals& s = r.simulation->totals;
    const auto count = [](std::uint64_t x) { return grouped(static_cast<long long>(x)); };
    row("documents", "", count(s.documents));
    row("tokens", "", count(s.tokens));
    row(fmt::format("windows of {}", r.geometry.seq_len), "",
        s.full_windows == s.windows ? count(s.windows) : fmt::format("{} (last partial)", count(s.windows)));
    row("pieces", "", count(s.pieces));
  }
  const auto both = [&](const std::string& name, double AttentionCost::*field) {
    row(name, r.expectation ? number((*r.expectation).*field) : "",
        r.simulation ? number(r.simulation->cost().*field) : "");
  };
  both("mean document length", &AttentionCost::mean_document_length);
  both("mean piece length", &AttentionCost::mean_piece_length);
  both("documents per window", &AttentionCost::documents_per_window);
  return t;
}

Table cost_table(const AttentionReport& r) {
  Table t;
  t.add_column("mask", Align::left);
  t.add_column("method", Align::left);
  t.add_column("keys/query");
  t.add_column("fwd FLOP/tok/layer");
  t.add_column("train FLOP/tok/layer");
  t.add_column("varlen fwd");
  t.add_column("varlen bwd");
  t.add_column("dense fwd");
  t.add_column("dense bwd");
  t.add_column("varlen train FLOP");
  t.add_column("dense train FLOP");
  const auto row = [&](const char* mask_name, const char* method, const MaskCost& m) {
    t.add_row({mask_name, method, fmt::format("{:.2f}", m.exact_keys), si(forward_flops(r.query_width, m.exact_keys)),
               si(training_flops(r.query_width, m.exact_keys)), ratio(m.varlen.forward, m.exact_keys),
               ratio(m.varlen.backward, m.exact_keys), ratio(m.dense_masked.forward, m.exact_keys),
               ratio(m.dense_masked.backward, m.exact_keys), si(kernel_training_flops(r.query_width, m.varlen)),
               si(kernel_training_flops(r.query_width, m.dense_masked))});
  };
  const auto masks = [&](const char* name, const MaskCost AttentionCost::*mask) {
    if (r.expectation) row(name, "expectation", (*r.expectation).*mask);
    if (r.simulation) row(name, "simulation", r.simulation->cost().*mask);
  };
  masks("document", &AttentionCost::document);
  t.add_separator();
  masks("causal", &AttentionCost::causal);
  return t;
}

// Bars of █ with eighth-block ends, `width` characters for the largest value.
std::string bar(double fraction, int width) {
  static const char* const eighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const auto units = static_cast<long>(std::lround(fraction * width * 8));
  std::string out;
  for (long i = 0; i < units / 8; ++i) out += "█";
  out += eighths[units % 8];
  return out;
}

Table histogram_table(const SimulationResult& s) {
  Table t;
  t.add_column("piece length", Align::right);
  t.add_column("pieces");
  t.add_column("tokens");
  t.add_column("", Align::left);
  std::uint64_t most = 1;
  for (const auto& bin : s.totals.piece_histogram) most = std::max(most, bin.pieces);
  for (const auto& bin : s.totals.piece_histogram) {
    const std::string range = bin.min_length == bin.max_length ? std::to_string(bin.min_length)
                                                               : fmt::format("{}–{}", bin.min_length, bin.max_length);
    t.add_row({range, grouped(static_cast<long long>(bin.pieces)),
               percent(static_cast<double>(bin.tokens) / static_cast<double>(s.totals.tokens), 1),
               bar(static_cast<double>(bin.pieces) / static_cast<double>(most), 40)});
  }
  return t;
}

std::string heading(const AttentionReport& r) {
  std::string out = fmt::format("Attention cost: {} in {}-token windows", r.spec.describe(), r.geometry.seq_len);
  if (r.geometry.sliding_window > 0) out += fmt::format(", sliding window {}", r.geometry.sliding_window);
  out += fmt::format("\ntiles: forward {}, backward {}; q = {} (4·q·keys FLOP forward, training = 3× forward)",
                     to_string(r.geometry.forward_tile), to_string(r.geometry.backward_tile),
                     static_cast<long long>(r.query_width));
  if (r.simulation && r.spec.kind != LengthSourceKind::lengths_file) {
    out += fmt::format("\nsimulation: {} documents drawn with seed {}", grouped(r.spec.samples),
                       static_cast<unsigned long long>(r.spec.seed));
  }
  return out;
}

/// The report as one result: JSON; heading, packing and cost tables, the workload line and the
/// piece-length histogram (aligned text or Markdown).
Document attention_document(const AttentionReport& r) {
  Document doc;
  doc.set_json(report_json(r));
  doc.text(heading(r) + "\n\n");
  doc.table(packing_table(r), Forms::text);
  doc.text("\n");
  doc.table(cost_table(r), Forms::text);
  doc.text("\nRatios are kernel-executed keys / exact keys: varlen = one causal launch per piece, dense = one "
           "launch per window skipping fully masked tiles.\n");
  if (r.workload) {
    const Workload& w = *r.workload;
    doc.text(fmt::format("\nworkload {}: attended_keys {:.4f} ({} mask), kernel_attended_keys {:.4f} ({})\n",
                         r.workload_path, w.attended_keys, to_string(w.attention_mask), w.kernel_attended_keys,
                         to_string(w.attention_kernel)));
  }
  if (r.simulation) {
    doc.text("\nPiece lengths (document masks, simulation): pieces per bin, share of tokens\n\n");
    doc.table(histogram_table(*r.simulation), Forms::text);
  }
  return doc;
}

void run_attention(const AttentionOptions& o) { print(attention_document(build_report(o)), o.format); }

void add_attention_command(CLI::App& app) {
  auto o = std::make_shared<AttentionOptions>();
  CLI::App* cmd = app.add_subcommand(
      "attention", "Attention cost of packed windows from document lengths (exact keys, kernel tiles, FLOPs)");
  cmd->footer("Model, formulas, input formats and JSON keys: docs/attention.md");
  auto* lengths = cmd->add_option("--lengths", o->lengths_path,
                                  "File of document lengths: text (one per line) or binary little-endian .u32/.u64, "
                                  "streamed in constant memory");
  auto* histogram = cmd->add_option("--histogram", o->histogram_path,
                                    "Histogram of lengths: .json ({\"length\": count} or [[length, count]]) or .csv "
                                    "(length,count header)");
  auto* dist = cmd->add_option("--dist", o->distribution_spec,
                               "Parametric lengths: fixed:N, exp:mean=M, lognormal:mean=M,sigma=S, "
                               "mix:W1*SPEC1+W2*SPEC2");
  auto* workload = cmd->add_option("--workload", o->workload_path,
                                   "Workload JSON with \"doc_lengths\": report it (with its geometry and method)");
  auto* format = cmd->add_option("--lengths-format", o->lengths_format,
                                 "Encoding of --lengths: auto (by extension), text, u32, u64")
                     ->check(CLI::IsMember({"auto", "text", "u32", "u64"}));
  auto* seq_len = cmd->add_option("--seq-len", o->seq_len, "Window length in tokens (default 4096)");
  auto* tokens = cmd->add_option("--tokens-per-doc", o->tokens_per_doc, "Tokens added to every document (BOS/EOS)");
  auto* order =
      cmd->add_option("--order", o->order, "Packing order of --lengths: given (streamed) or shuffled (held in memory)")
          ->check(CLI::IsMember({"given", "shuffled"}));
  auto* seed = cmd->add_option("--seed", o->seed, "Seed for shuffling and sampling (default 0)")
                   ->check(unsigned_decimal(UINT64_MAX));
  auto* samples =
      cmd->add_option("--samples", o->samples,
                      "Documents drawn to simulate a --dist or --histogram (default 1000000; 0: expectation only)")
          ->check(CLI::Range(std::int64_t{0}, max_simulated_documents));
  auto* method =
      cmd->add_option(
             "--method", o->method,
             "both | expectation | simulation (default: both for --dist/--histogram, simulation for --lengths)")
          ->check(CLI::IsMember({"both", "expectation", "simulation"}));
  auto* tile = cmd->add_option("--tile", o->forward_tile, "Forward kernel tile ROWSxCOLS (default 128x128)");
  auto* bwd_tile = cmd->add_option("--bwd-tile", o->backward_tile, "Backward kernel tile ROWSxCOLS (default 64x128)");
  auto* window = cmd->add_option("--sliding-window", o->sliding_window, "Sliding-window width (default 0: none)");
  cmd->add_option("--heads", o->num_heads, "Query heads for FLOPs (default 10)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--head-dim", o->head_dim, "Head dimension for FLOPs (default 128)")->check(CLI::Range(1, 1 << 20));
  // A workload brings its own source, geometry and method.
  for (CLI::Option* other :
       {lengths, histogram, dist, format, seq_len, tokens, order, seed, samples, method, tile, bwd_tile, window}) {
    workload->excludes(other);
  }
  add_format_option(*cmd, o->format, document_formats());
  cmd->callback([o] { run_attention(*o); });
}

const CommandRegistration attention_registration{"attention", 40, &add_attention_command};

}  // namespace
}  // namespace budget::cli
