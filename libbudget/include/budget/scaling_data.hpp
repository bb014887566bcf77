#pragma once
/// \file
/// Loss measurements for scaling-law fits, read from CSV.
///
/// CSV format (docs/scaling.md): the first non-comment line is a header naming the columns, in any
/// order. Required: `arch`, `cell`, `D`, `loss`, and exactly one of `F` (per-token training
/// FLOPs) or `N` (parameters; then F = 6·N). Optional: `S` (compute-equivalent sparsity in [0, 1),
/// 0 when the column is absent) and `domain` (empty = the overall loss). Any other column is an
/// error: a misspelt optional column (say `sparsity`) would otherwise be dropped silently.
/// Lines starting with '#' and blank lines are skipped; CRLF line endings and a UTF-8 byte-order
/// mark are accepted; fields may be quoted with "..." ("" inside quotes is a quote), but a quoted
/// field cannot span lines.
///
/// Thread safety: Every function here is reentrant: concurrent calls are safe.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace budget {

/// One measured loss.
struct LossPoint {
  std::string arch;    ///< architecture name; each architecture is fitted on its own
  std::string cell;    ///< the run this point belongs to: the unit the bootstrap resamples
  double F = 0.0;      ///< per-token training FLOPs (6·N when the file gives N)
  double S = 0.0;      ///< compute-equivalent sparsity, 0 ≤ S < 1
  double D = 0.0;      ///< training tokens
  double loss = 0.0;   ///< observed loss, > 0
  std::string domain;  ///< evaluation subset; empty for the overall loss
  std::size_t line = 0;  ///< 1-based line in the source file (0 when built in code)
};

/// The points of one CSV file, in file order.
struct LossData {
  std::string source;          ///< the file name (for messages)
  std::vector<LossPoint> points;
  bool parameters_column = false;  ///< the file gave N (F was computed as 6·N)
  bool sparsity_column = false;    ///< the file has an S column
  bool domain_column = false;      ///< the file has a domain column
};

/// Parses CSV text. Every bad input throws budget::Error naming `source`, the line and the
/// column: missing or duplicate or unknown columns, a wrong field count, an empty arch or cell,
/// a value that is not a finite number, F ≤ 0, D ≤ 0, loss ≤ 0, S outside [0, 1), an empty file
/// or one with no data rows.
LossData parse_loss_csv(std::string_view text, const std::string& source);

/// Reads and parses the CSV file at `path` (errors name the path).
LossData read_loss_csv(const std::string& path);

/// Architecture names in order of first appearance.
std::vector<std::string> architectures(const std::vector<LossPoint>& points);

/// Domain names (non-empty) in order of first appearance.
std::vector<std::string> domains(const std::vector<LossPoint>& points);

/// The points of architecture `arch` (all domains, overall rows included), in order. Throws
/// budget::Error naming `source` when there are none, listing the architectures present.
std::vector<LossPoint> points_of_arch(const std::vector<LossPoint>& points, const std::string& arch,
                                      const std::string& source = {});

/// The points whose domain equals `domain` ("" selects the overall rows).
std::vector<LossPoint> points_of_domain(const std::vector<LossPoint>& points, const std::string& domain);

/// Cell names in order of first appearance.
std::vector<std::string> cells(const std::vector<LossPoint>& points);

}  // namespace budget
