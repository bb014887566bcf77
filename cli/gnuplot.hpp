#pragma once
// Plots through gnuplot (an external program, Debian package gnuplot-nox): the terminal is chosen
// from the output file's extension (.svg or .png); a missing gnuplot is a budget::Error that says
// how to install it. Used by `fit --plot`, `frontier --plot` and `grid --plot`.

#include <string>
#include <vector>

#include "budget/file_write.hpp"

namespace budget::cli {

/// True when `program` is an executable file in a directory of $PATH.
bool on_path(const std::string& program);

/// "set terminal ...\n" for `path`: svg or png from its extension (case-insensitive);
/// budget::Error naming `option` otherwise, or when the path holds a control character (it could
/// not be passed to gnuplot unchanged). Call it early to refuse a bad --plot before any work.
std::string gnuplot_terminal(const std::string& path, const std::string& option = "--plot");

/// Refuses a plot that could not be drawn (a bad extension, gnuplot not installed) before a
/// command does its work: the same budget::Error run_gnuplot() would give afterwards.
void check_plot_request(const std::string& path, const std::string& option = "--plot");

/// Text from data (an architecture, a baseline's name, a title) as a gnuplot string literal: the
/// one escaping function every name in a script goes through (budget::gnuplot_string_literal:
/// single-quoted, one line, no command substitution). Data blocks hold numbers only.
std::string gnuplot_quoted(const std::string& text);

/// Runs gnuplot on `body` (the plot commands, without terminal or output: run_gnuplot sets both).
/// gnuplot draws into a temporary file next to `path`, renamed over `path` only once the plot is
/// complete (cli/output_file.hpp), so a failed or interrupted plot never leaves a partial file or
/// passes an old one for new. budget::Error if gnuplot is not installed (with how to get it),
/// fails, writes nothing, or writes an incomplete plot (an SVG not closed by </svg>, a PNG without
/// its IEND chunk: a full disk). With `outputs`, the plot is staged there instead (renamed with
/// the command's other files by OutputFiles::commit(): all or none).
void run_gnuplot(const std::string& script, const std::string& path, const std::string& option = "--plot",
                 budget::OutputFiles* outputs = nullptr);

/// One series of a clustered bar chart: a value per label (NaN: no bar). A series on the right
/// axis is drawn as points joined by lines against its own scale (y2label), not as bars: a
/// quantity of another unit (a time ratio beside deviations in %) keeps its own axis.
struct BarSeries {
  std::string title;
  std::vector<double> values;
  bool right_axis = false;
};

/// Tick labels without what every label shares: the longest common prefix ending at a separator
/// ('-', '_', ' ', '/') and the longest common suffix starting at one ("paper-200M-E64-baseline",
/// "paper-1.6B-E8-baseline" → "200M-E64", "1.6B-E8"; prefix "paper-", suffix "-baseline"). Labels
/// kept whole when fewer than two or when one would be left empty.
struct ShortLabels {
  std::vector<std::string> labels;
  std::string prefix;
  std::string suffix;
};
ShortLabels short_labels(const std::vector<std::string>& labels);

/// The gnuplot commands of plot_grouped_bars() (without terminal and output): the labels shortened
/// (short_labels(), the shared part said in the x label), across when 8 or fewer, else rotated to
/// read upwards and ending at their ticks, so that 16 labels do not overlap on the 900 px canvas.
std::string grouped_bars_script(const std::string& title, const std::string& ylabel,
                                const std::vector<std::string>& labels, const std::vector<BarSeries>& series,
                                const std::string& y2label = "");

/// A clustered bar chart: one group of bars per label, one bar per series on the left axis
/// (`ylabel`); the series with right_axis on the right axis (`y2label`).
void plot_grouped_bars(const std::string& path, const std::string& title, const std::string& ylabel,
                       const std::vector<std::string>& labels, const std::vector<BarSeries>& series,
                       const std::string& option = "--plot", const std::string& y2label = "");

/// A scatter of named point sets with the y = x line (observed vs predicted).
struct ScatterSeries {
  std::string title;
  std::vector<double> x;
  std::vector<double> y;
};
void plot_parity(const std::string& path, const std::string& title, const std::string& xlabel, const std::string& ylabel,
                 const std::vector<ScatterSeries>& series, const std::string& option = "--plot",
                 budget::OutputFiles* outputs = nullptr);

}  // namespace budget::cli
