// ArchConfig → a small Python file that builds the reference PyTorch module of the config
// (budget.torch.build_model, python/budget/torch/model.py; docs/torch.md). The module is the
// planner's own definition of the model, so the export is exact: every field of the native config
// is carried by the embedded native JSON (arch_config_to_json), the loop included, and nothing is
// left in not_expressed. budget.torch refuses a native key it does not build, so a field added to
// ArchConfig must be added there too (its key lists in model.py). One exception is stated in
// not_expressed: rope scaling, which budget.torch does not model.
//
// The written file: CONFIG (the native dict), build(device=None, dtype=None) → nn.Module, and a
// __main__ that builds it (default on the meta device: no memory) and prints one JSON line of its
// counts (non-embedding, embedding and MTP parameters, executed layers).

#include <fmt/format.h>

#include "budget/config_io.hpp"
#include "config/rope_scaling_json.hpp"
#include "budget/text_escape.hpp"
#include "export/export_targets.hpp"

namespace budget::detail {

std::string export_torch(const ArchConfig& c, std::vector<std::string>& not_expressed) {
  // budget.torch's rotary embedding is plain RoPE of base rope_theta (model.py, _rotary): it models
  // no rope scaling. The scaling stays in CONFIG's settings, counts do not depend on it, and the
  // module's attention is the unscaled one; said once here.
  std::string header_notes;
  if (c.settings.rope_scaling) {
    not_expressed.push_back(fmt::format("rope scaling ({}): budget.torch applies unscaled RoPE (base rope_theta); "
                                        "every count is unaffected",
                                        describe_rope_scaling(*c.settings.rope_scaling)));
    header_notes = "# NOT EXPRESSED: " + not_expressed.back() + "\n";
  }
  // The JSON goes in a raw triple-quoted string: JSON escapes every quote inside strings (\"), so
  // the text never holds three quotes in a row, and the raw string keeps its backslashes.
  return fmt::format(R"py(# budget-match export --to torch: the reference PyTorch module of {name} (docs/torch.md).
# budget.torch.build_model builds exactly what the planner counts (parameters per component, forward
# FLOPs per op) and runs the loop as planned: {loop}.
{notes}# Needs the Python package budget (with budget.torch) and PyTorch.
#   python3 THIS_FILE.py [--device meta|cpu|cuda]   builds it (default: meta, no memory) and prints its counts
#   from THIS_FILE import build; model = build(device="cuda", dtype=torch.bfloat16)
import argparse
import json

from budget.torch import build_model, parameter_counts

CONFIG = json.loads(r"""
{json}
""")


def build(device=None, dtype=None):
    """The nn.Module of CONFIG (budget.torch.LoopedTransformer)."""
    return build_model(CONFIG, device=device, dtype=dtype)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Build the model of CONFIG and print its parameter counts.")
    parser.add_argument("--device", default="meta")
    model = build(device=parser.parse_args().device)
    counts = parameter_counts(model)
    print(json.dumps({{"name": CONFIG.get("name", ""), "non_embedding_params": counts["non_embedding_total"],
                      "embedding_params": counts["embedding"], "mtp_params": counts["mtp"],
                      "executed_layers": len(model.schedule)}}))
)py",
                     // The name quoted and made one printable line: a comment, whatever it holds.
                     fmt::arg("name", "\"" + comment_text(c.name) + "\""), fmt::arg("json", arch_config_to_json(c)),
                     fmt::arg("loop", c.loop ? describe_loop(c) : std::string("no loop")),
                     fmt::arg("notes", header_notes));
}

}  // namespace budget::detail
