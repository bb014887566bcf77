#pragma once
// Plots through gnuplot (an external program, Debian package gnuplot-nox): the terminal is chosen
// from the output file's extension (.svg or .png); a missing gnuplot is a budget::Error that says
// how to install it. Used by `fit --plot`, `frontier --plot` and `grid --plot`.

#include <string>
#include <vector>

namespace budget::cli {

/// True when `program` is an executable file in a directory of $PATH.
bool on_path(const std::string& program);

/// "set terminal ...\nset output '...'\n" for `path` (.svg or .png, case-insensitive);
/// budget::Error naming `option` otherwise.
std::string gnuplot_output(const std::string& path, const std::string& option = "--plot");

/// A gnuplot double-quoted string (enhanced text off is the caller's choice) and a single-quoted one.
std::string gnuplot_quoted(const std::string& text);
std::string gnuplot_single_quoted(const std::string& text);

/// Runs gnuplot on `script` (which must start with gnuplot_output(path)); budget::Error if gnuplot
/// is not installed (with how to get it), fails, or leaves `path` missing or empty.
void run_gnuplot(const std::string& script, const std::string& path, const std::string& option = "--plot");

/// One series of a clustered bar chart: a value per label (NaN: no bar).
struct BarSeries {
  std::string title;
  std::vector<double> values;
};

/// A clustered bar chart: one group of bars per label, one bar per series. The grid's deviations
/// are one such chart; further series (e.g. predicted time ratios) are more BarSeries.
void plot_grouped_bars(const std::string& path, const std::string& title, const std::string& ylabel,
                       const std::vector<std::string>& labels, const std::vector<BarSeries>& series,
                       const std::string& option = "--plot");

/// A scatter of named point sets with the y = x line (observed vs predicted).
struct ScatterSeries {
  std::string title;
  std::vector<double> x;
  std::vector<double> y;
};
void plot_parity(const std::string& path, const std::string& title, const std::string& xlabel, const std::string& ylabel,
                 const std::vector<ScatterSeries>& series, const std::string& option = "--plot");

}  // namespace budget::cli
