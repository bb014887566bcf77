// Export (budget-match export, --out-format): a config read from outside input (native or Hugging
// Face, parse_sourced_config) exported to every target, the Hugging Face one with the input itself
// as template when it is a Hugging Face file; and the input as raw template text (which the library
// API accepts unread) for the paper's baseline. An export may refuse by name (budget::Error); what it
// writes must be usable: the native export always succeeds for an accepted config, and a native or
// Hugging Face export reads back to the same three matched budgets and the same layer counts.
#include <cstring>
#include <string>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/export.hpp"
#include "fuzz_harness.hpp"

namespace {

void require_same_budgets(const budget::ArchConfig& a, const budget::ArchConfig& b, const char* what) {
  using namespace budget;
  const Budgets x = account(a, paper_workload());
  const Budgets y = account(b, paper_workload());
  fuzz::require(x.training_flops_per_token == y.training_flops_per_token &&
                    x.non_embedding_params_total == y.non_embedding_params_total &&
                    x.kv_elements_per_token == y.kv_elements_per_token && x.embedding_params == y.embedding_params &&
                    x.physical_layers == y.physical_layers && x.executed_layers == y.executed_layers,
                "fuzz_export", what);
}

void export_accepted(const budget::SourcedConfig& in) {
  using namespace budget;
  fuzz::must_succeed("fuzz_export", "native export of an accepted config", [&] {
    const ExportedConfig native = export_config(in.config, ExportTarget::native);
    require_same_budgets(in.config, parse_arch_config(native.text, "<native export>"),
                         "the native export reads back to other budgets");
  });
  ExportOptions options;
  options.hf_template = in.hf_text;
  options.hf_template_source = "<fuzz>";
  for (const ExportTarget target : {ExportTarget::hf, ExportTarget::megatron, ExportTarget::torchtitan}) {
    fuzz::expect_value_or_error("fuzz_export", [&] {
      const ExportedConfig out = export_config(in.config, target, options);
      fuzz::require(!out.text.empty() && out.text.back() == '\n', "fuzz_export", "an export does not end in a newline");
      if (target == ExportTarget::hf) {
        fuzz::must_succeed("fuzz_export", "reading a Hugging Face export back", [&] {
          require_same_budgets(in.config, parse_arch_config(out.text, "<hf export>"),
                               "the Hugging Face export reads back to other budgets");
        });
      }
    });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  SourcedConfig in;
  bool accepted = false;
  fuzz::expect_value_or_error("fuzz_export", [&] {
    in = parse_sourced_config(fuzz::as_text(data, size), "<fuzz>");
    accepted = true;
  });
  if (accepted) export_accepted(in);

  // The input as a template (the library takes any text there) for a fixed MoE config.
  fuzz::expect_value_or_error("fuzz_export", [&] {
    ExportOptions as_template;
    as_template.hf_template = std::string(fuzz::as_text(data, size));
    as_template.hf_template_source = "<fuzz template>";
    const ExportedConfig out = export_config(fuzz::paper_baseline(), ExportTarget::hf, as_template);
    fuzz::must_succeed("fuzz_export", "reading an export through a fuzzed template back", [&] {
      require_same_budgets(fuzz::paper_baseline(), parse_arch_config(out.text, "<hf export>"),
                           "an export through a fuzzed template reads back to other budgets");
    });
  });
  return 0;
}
