#pragma once
// What the config and family tests share: the refusal text of a config, a family's budgets on the
// paper's workload, totals as model cards count them, and an op of a layer's list by kind.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "budget/accounting.hpp"
#include "budget/config_io.hpp"
#include "budget/error.hpp"
#include "budget/ops.hpp"

namespace budget::test {

/// what() of the budget::Error that reading config text `text` (named `source`) raises; "no error"
/// when it is read.
inline std::string config_text_error(const std::string& text, const std::string& source) {
  try {
    parse_arch_config(text, source);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

/// The same for the config file at `path`.
inline std::string config_file_error(const std::string& path) {
  try {
    load_arch_config(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

/// The budgets of `c` on the paper's workload.
inline Budgets paper_budgets(const ArchConfig& c) { return account(c, paper_workload()); }

/// Total parameters including embedding and LM head (what most model cards count).
inline std::int64_t total_with_embeddings(const Budgets& b) {
  return b.non_embedding_params_total + b.embedding_params;
}

/// |ours/published − 1|.
inline double relative_off(std::int64_t ours, double published) {
  return std::fabs(static_cast<double>(ours) / published - 1.0);
}

/// The first op of `kind` in `ops`; nullptr when there is none.
inline const Op* find_op(const std::vector<Op>& ops, OpKind kind) {
  for (const Op& op : ops) {
    if (op.kind == kind) return &op;
  }
  return nullptr;
}

}  // namespace budget::test
