#include "gnuplot.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "budget/text_escape.hpp"
#include "output_file.hpp"

namespace budget::cli {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest = path;
  while (true) {
    const auto colon = rest.find(':');
    const std::filesystem::path candidate = std::filesystem::path(std::string(rest.substr(0, colon))) / program;
    std::error_code ec;
    const auto status = std::filesystem::status(candidate, ec);
    if (!ec && std::filesystem::is_regular_file(status) &&
        (status.permissions() & (std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec |
                                  std::filesystem::perms::others_exec)) != std::filesystem::perms::none) {
      return true;
    }
    if (colon == std::string_view::npos) return false;
    rest.remove_prefix(colon + 1);
  }
}

std::string gnuplot_quoted(const std::string& text) { return gnuplot_string_literal(text); }

std::string gnuplot_terminal(const std::string& path, const std::string& option) {
  for (char ch : path) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      throw Error(fmt::format("value \"{}\" holds a control character; give a plain file name", printable_text(path)),
                  option);
    }
  }
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  std::string terminal;
  if (extension == ".svg") {
    terminal = "svg size 900,560 dynamic font 'sans,12'";
  } else if (extension == ".png") {
    terminal = "png size 900,560";
  } else {
    throw Error(fmt::format("value \"{}\" has no plot extension; allowed: a file ending in .svg or .png", path), option);
  }
  return "set terminal " + terminal + "\n";
}

namespace {
void require_gnuplot(const std::string& option) {
  if (!on_path("gnuplot")) {
    throw Error("gnuplot is not on PATH; install the Debian package gnuplot-nox (apt-get install gnuplot-nox; "
                "elsewhere the gnuplot package, e.g. brew install gnuplot) or leave out " + option,
                option);
  }
}

}  // namespace

void check_plot_request(const std::string& path, const std::string& option) {
  (void)gnuplot_terminal(path, option);
  require_gnuplot(option);
}

namespace {
/// Whether the plot gnuplot wrote at `file` is complete: an SVG ends with "</svg>" (then only
/// white space), a PNG with its IEND chunk. A full disk or a killed gnuplot leaves neither.
bool plot_complete(const std::string& file, const std::string& terminal) {
  FILE* in = std::fopen(file.c_str(), "rb");
  if (in == nullptr) return false;
  std::string tail(64, '\0');
  std::size_t got = 0;
  if (std::fseek(in, -64, SEEK_END) != 0) std::rewind(in);
  got = std::fread(tail.data(), 1, tail.size(), in);
  std::fclose(in);
  tail.resize(got);
  if (terminal.find("set terminal png") == 0) {
    static const char iend[] = "\0\0\0\0IEND\xae\x42\x60\x82";
    return tail.size() >= 12 && tail.compare(tail.size() - 12, 12, std::string(iend, 12)) == 0;
  }
  while (!tail.empty() && std::isspace(static_cast<unsigned char>(tail.back()))) tail.pop_back();
  return tail.size() >= 6 && tail.compare(tail.size() - 6, 6, "</svg>") == 0;
}
}  // namespace

void run_gnuplot(const std::string& body, const std::string& path, const std::string& option,
                 budget::OutputFiles* outputs) {
  const std::string terminal = gnuplot_terminal(path, option);
  require_gnuplot(option);
  std::unique_ptr<budget::AtomicFile> own;
  budget::AtomicFile* out = nullptr;
  if (outputs != nullptr) {
    out = &outputs->add_external(path);
  } else {
    own = std::make_unique<budget::AtomicFile>(path);
    out = own.get();
  }
  const std::string script = terminal + "set output " + gnuplot_string_literal(out->path()) + "\n" + body;
  FILE* pipe = popen("gnuplot", "w");
  if (pipe == nullptr) throw Error("could not start gnuplot", option);
  const bool written = std::fwrite(script.data(), 1, script.size(), pipe) == script.size();
  const int status = pclose(pipe);
  if (!written || status != 0) {
    throw Error(fmt::format("gnuplot failed (status {}) while drawing the plot; nothing was written", status), path);
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(out->path(), ec);
  if (ec || size == 0) throw Error("gnuplot ran but wrote no plot; nothing was written", path);
  if (!plot_complete(out->path(), terminal)) {
    throw Error(fmt::format("gnuplot wrote an incomplete plot ({} bytes; a full disk?); nothing was written", size), path);
  }
  if (outputs == nullptr) out->commit();
}

ShortLabels short_labels(const std::vector<std::string>& labels) {
  ShortLabels out{labels, "", ""};
  if (labels.size() < 2) return out;
  // The longest prefix (suffix) common to every label that ends (starts) at a separator.
  const auto separator = [](char ch) { return ch == '-' || ch == '_' || ch == ' ' || ch == '/'; };
  std::size_t prefix = labels.front().size(), suffix = labels.front().size();
  for (const std::string& l : labels) {
    std::size_t p = 0;
    while (p < prefix && p < l.size() && l[p] == labels.front()[p]) ++p;
    prefix = p;
    std::size_t q = 0;
    while (q < suffix && q < l.size() && l[l.size() - 1 - q] == labels.front()[labels.front().size() - 1 - q]) ++q;
    suffix = q;
  }
  while (prefix > 0 && !separator(labels.front()[prefix - 1])) --prefix;
  while (suffix > 0 && !separator(labels.front()[labels.front().size() - suffix])) --suffix;
  for (const std::string& l : labels) {
    if (prefix + suffix >= l.size()) return out;  // a label would be left empty: keep them whole
  }
  for (std::string& l : out.labels) l = l.substr(prefix, l.size() - prefix - suffix);
  out.prefix = labels.front().substr(0, prefix);
  out.suffix = labels.front().substr(labels.front().size() - suffix);
  return out;
}

std::string grouped_bars_script(const std::string& title, const std::string& ylabel,
                                const std::vector<std::string>& full_labels, const std::vector<BarSeries>& series,
                                const std::string& y2label) {
  const ShortLabels shortened = short_labels(full_labels);
  const std::vector<std::string>& labels = shortened.labels;
  std::ostringstream s;
  s << "set title " << gnuplot_quoted(title) << " noenhanced\n"
    << "set ylabel " << gnuplot_quoted(ylabel) << " noenhanced\n";
  if (!shortened.prefix.empty() || !shortened.suffix.empty()) {
    s << "set xlabel " << gnuplot_quoted("each label L stands for " + shortened.prefix + "L" + shortened.suffix) << " noenhanced\n";
  }
  if (std::any_of(series.begin(), series.end(), [](const BarSeries& b) { return b.right_axis; })) {
    s << "set y2label " << gnuplot_quoted(y2label) << " noenhanced\nset ytics nomirror\nset y2tics\n";
  }
  s << ""
    << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
    << "set boxwidth 0.9\nset grid ytics\nset key outside right top noenhanced\nset xzeroaxis lt -1\n";
  // Tick labels: up to 8 across (a group is at least 80 px of the 900 px canvas), more read upwards,
  // each ending at its tick (at 16 labels a group is about 36 px: a 12-point label needs 16).
  s << (labels.size() <= 8 ? "set xtics noenhanced\n" : "set xtics rotate by 90 right noenhanced\n");
  // The labels are set as tics (string literals), so the data block holds numbers only.
  s << "set xtics (";
  for (std::size_t i = 0; i < labels.size(); ++i) s << (i ? ", " : "") << gnuplot_quoted(labels[i]) << ' ' << i;
  s << ")\n$bars << EOD\n";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    s << i;
    for (const auto& one : series) {
      const double v = i < one.values.size() ? one.values[i] : std::numeric_limits<double>::quiet_NaN();
      s << ' ' << (std::isfinite(v) ? fmt::format("{:.8g}", v) : std::string("NaN"));
    }
    s << "\n";
  }
  s << "EOD\nplot ";
  for (std::size_t k = 0; k < series.size(); ++k) {
    s << (k ? ", " : "") << "$bars using ";
    if (series[k].right_axis) {
      s << "1:" << k + 2 << " axes x1y2 with linespoints lw 2 pt 7";  // x = the cluster's centre
    } else {
      s << k + 2;
    }
    s << " title " << gnuplot_quoted(series[k].title);
  }
  s << "\n";
  return s.str();
}

void plot_grouped_bars(const std::string& path, const std::string& title, const std::string& ylabel,
                       const std::vector<std::string>& labels, const std::vector<BarSeries>& series,
                       const std::string& option, const std::string& y2label) {
  run_gnuplot(grouped_bars_script(title, ylabel, labels, series, y2label), path, option);
}

void plot_parity(const std::string& path, const std::string& title, const std::string& xlabel, const std::string& ylabel,
                 const std::vector<ScatterSeries>& series, const std::string& option, budget::OutputFiles* outputs) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const auto& one : series) {
    for (double v : one.x) lo = std::min(lo, v), hi = std::max(hi, v);
    for (double v : one.y) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (!(lo < hi)) lo -= 0.5, hi += 0.5;
  const double pad = 0.03 * (hi - lo);
  std::ostringstream s;
  s << "set title " << gnuplot_quoted(title) << " noenhanced\n"
    << "set xlabel " << gnuplot_quoted(xlabel) << " noenhanced\nset ylabel " << gnuplot_quoted(ylabel)
    << " noenhanced\nset grid\nset key top left noenhanced\n"
    << fmt::format("set xrange [{:.8g}:{:.8g}]\nset yrange [{:.8g}:{:.8g}]\n", lo - pad, hi + pad, lo - pad, hi + pad);
  for (std::size_t k = 0; k < series.size(); ++k) {
    s << "$set" << k << " << EOD\n";
    for (std::size_t i = 0; i < series[k].x.size() && i < series[k].y.size(); ++i) {
      s << fmt::format("{:.8g} {:.8g}\n", series[k].x[i], series[k].y[i]);
    }
    s << "EOD\n";
  }
  s << "plot x with lines dt 2 lc rgb 'gray40' title 'y = x'";
  for (std::size_t k = 0; k < series.size(); ++k) {
    s << ", $set" << k << " using 1:2 with points pt 7 ps 0.8 title " << gnuplot_quoted(series[k].title);
  }
  s << "\n";
  run_gnuplot(s.str(), path, option, outputs);
}

}  // namespace budget::cli
