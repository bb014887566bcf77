// Reading document lengths: histogram files (JSON, CSV) and streamed files of lengths (text,
// binary little-endian uint32/uint64).

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <system_error>

#include "budget/doc_lengths.hpp"
#include "budget/error.hpp"
#include "workload/doc_lengths_json.hpp"
#include "base/json_reader.hpp"
#include "workload/workload_names.hpp"

static_assert(std::endian::native == std::endian::little,
              "binary length files are read as little-endian; add byte swapping for this platform");

namespace budget {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string extension_of(const std::string& path) { return lower(std::filesystem::path(path).extension().string()); }

std::string_view trim_blanks(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// Sorts (length, weight) pairs and rejects duplicates; locations[i] names entry i of the input.
LengthDistribution finish_histogram(std::vector<std::pair<std::int64_t, double>> entries,
                                    std::vector<std::string> locations, const std::string& source) {
  if (entries.empty()) throw Error("the histogram has no lengths", source);
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return entries[a].first < entries[b].first; });
  EmpiricalLength histogram;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && entries[order[k]].first == entries[order[k - 1]].first) {
      throw Error(fmt::format("length {} appears twice (also at {}); give each length once", entries[order[k]].first,
                              locations[order[k - 1]]),
                  source, locations[order[k]]);
    }
    histogram.weights.push_back(entries[order[k]]);
  }
  double total = 0.0;
  for (const auto& [length, w] : histogram.weights) total += w;
  if (!(total > 0.0)) throw Error("the histogram's counts sum to 0; at least one must be positive", source);
  if (!std::isfinite(total)) {
    throw Error("the histogram's counts sum to more than the largest double (1.8e308); only their ratios matter: "
                "scale them down",
                source);
  }
  return LengthDistribution(LengthComponent{std::move(histogram)}, source);
}

std::int64_t histogram_length(const nlohmann::json& value, const std::string& source, const std::string& where) {
  std::int64_t length = 0;
  bool ok = false;
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    ok = u <= static_cast<std::uint64_t>(max_document_length);
    length = ok ? static_cast<std::int64_t>(u) : 0;
  } else if (value.is_number_integer()) {
    length = value.get<std::int64_t>();
    ok = true;
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    ok = std::isfinite(d) && d == std::floor(d) && std::abs(d) <= static_cast<double>(max_document_length);
    length = ok ? static_cast<std::int64_t>(d) : 0;
  } else if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), length);
    ok = !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
  }
  if (!ok || length < 1 || length > max_document_length) {
    throw Error(fmt::format("document length {} is not allowed; allowed: an integer in [1, 2^40]",
                            detail::describe_value(value)),
                source, where);
  }
  return length;
}

double histogram_count(const nlohmann::json& value, const std::string& source, const std::string& where) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0.0) {
    throw Error(fmt::format("count {} is not allowed; allowed: a finite number ≥ 0", detail::describe_value(value)),
                source, where);
  }
  return value.get<double>();
}

}  // namespace

namespace detail {

LengthDistribution histogram_from_json(const nlohmann::json& value, const std::string& source,
                                       const std::string& pointer) {
  std::vector<std::pair<std::int64_t, double>> entries;
  std::vector<std::string> locations;
  if (value.is_object()) {
    for (const auto& item : value.items()) {
      const std::string where = pointer + "/" + escape_pointer_token(item.key());
      entries.emplace_back(histogram_length(nlohmann::json(item.key()), source, where),
                           histogram_count(item.value(), source, where));
      locations.push_back(where);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string where = fmt::format("{}/{}", pointer, i);
      const auto& pair = value[i];
      if (!pair.is_array() || pair.size() != 2) {
        throw Error(fmt::format("expected a [length, count] pair, found {}", describe_value(pair)), source, where);
      }
      entries.emplace_back(histogram_length(pair[0], source, where + "/0"),
                           histogram_count(pair[1], source, where + "/1"));
      locations.push_back(where);
    }
  } else {
    throw Error(fmt::format("expected a histogram: an object {{\"<length>\": count, ...}} or an array "
                            "[[length, count], ...], found {}",
                            describe_value(value)),
                source, pointer.empty() ? "/" : pointer);
  }
  if (entries.empty()) throw Error("the histogram has no lengths", source, pointer.empty() ? "/" : pointer);
  return finish_histogram(std::move(entries), std::move(locations), source);
}

}  // namespace detail

LengthDistribution parse_histogram_json(std::string_view json_text, const std::string& source) {
  return detail::histogram_from_json(detail::parse_json_text(json_text, source), source, "");
}

LengthDistribution parse_histogram_csv(std::string_view csv_text, const std::string& source) {
  std::vector<std::pair<std::int64_t, double>> entries;
  std::vector<std::string> locations;
  std::size_t line_number = 0;
  bool header_seen = false;
  std::size_t start = 0;
  while (start < csv_text.size()) {
    std::size_t end = csv_text.find('\n', start);
    if (end == std::string_view::npos) end = csv_text.size();
    const std::string_view line = trim_blanks(csv_text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    const std::string where = fmt::format("line {}", line_number);
    if (line.empty()) continue;
    const std::size_t comma = line.find(',');
    if (comma == std::string_view::npos || line.find(',', comma + 1) != std::string_view::npos) {
      throw Error(fmt::format("expected two comma-separated fields \"length,count\", found \"{}\"", line), source,
                  where);
    }
    const std::string_view first = trim_blanks(line.substr(0, comma));
    const std::string_view second = trim_blanks(line.substr(comma + 1));
    if (!header_seen) {
      if (lower(first) != "length" || lower(second) != "count") {
        throw Error(fmt::format("expected the header \"length,count\", found \"{}\"", line), source, where);
      }
      header_seen = true;
      continue;
    }
    std::int64_t length = 0;
    const auto [lp, lec] = std::from_chars(first.data(), first.data() + first.size(), length);
    if (first.empty() || lec != std::errc() || lp != first.data() + first.size() || length < 1 ||
        length > max_document_length) {
      throw Error(fmt::format("document length \"{}\" is not allowed; allowed: an integer in [1, 2^40]", first), source,
                  where);
    }
    double count = 0.0;
    const auto [cp, cec] = std::from_chars(second.data(), second.data() + second.size(), count);
    if (second.empty() || cec != std::errc() || cp != second.data() + second.size() || !std::isfinite(count) ||
        count < 0.0) {
      throw Error(fmt::format("count \"{}\" is not allowed; allowed: a finite number ≥ 0", second), source, where);
    }
    entries.emplace_back(length, count);
    locations.push_back(where);
  }
  if (!header_seen) throw Error("the file is empty; expected a \"length,count\" header and rows", source);
  if (entries.empty()) throw Error("the histogram has no rows after the \"length,count\" header", source);
  return finish_histogram(std::move(entries), std::move(locations), source);
}

LengthDistribution read_histogram_file(const std::string& path) {
  (void)detail::check_input_file(path);  // a missing file or a directory named before its extension
  const std::string ext = extension_of(path);
  if (ext == ".json") return parse_histogram_json(detail::read_text_file(path), path);
  if (ext == ".csv") return parse_histogram_csv(detail::read_text_file(path), path);
  throw Error(fmt::format("cannot tell the histogram format from the extension \"{}\"; allowed: .json or .csv", ext),
              path);
}

// ---------------------------------------------------------------------------------------------
// Files of lengths

std::string_view to_string(LengthFileFormat format) {
  return detail::name_of(detail::length_file_format_names, format);
}

LengthFileFormat parse_length_file_format(std::string_view name, const std::string& source) {
  if (const std::optional<LengthFileFormat> format = detail::enum_named(detail::length_file_format_names, name)) {
    return *format;
  }
  throw Error(fmt::format("length file format \"{}\" is not allowed; allowed: {}", name,
                          detail::names_list(detail::length_file_format_names)),
              source);
}

LengthFileFormat resolve_length_file_format(const std::string& path, LengthFileFormat requested) {
  if (requested != LengthFileFormat::automatic) return requested;
  const std::string ext = extension_of(path);
  if (ext == ".u32") return LengthFileFormat::u32;
  if (ext == ".u64") return LengthFileFormat::u64;
  return LengthFileFormat::text;
}

struct LengthFileReader::Impl {
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };

  std::string path;
  LengthFileFormat format;
  std::unique_ptr<std::FILE, FileCloser> file;
  std::vector<char> buffer;
  std::size_t begin = 0;  // unread bytes are buffer[begin, end)
  std::size_t end = 0;
  bool at_eof = false;
  std::uint64_t count = 0;
  std::uint64_t line = 0;         // text: lines consumed
  std::uint64_t byte_offset = 0;  // binary: offset of the next element

  std::size_t element_size() const { return format == LengthFileFormat::u32 ? 4 : 8; }

  [[noreturn]] void fail(const std::string& message, const std::string& where) const {
    throw Error(message, path, where);
  }

  // Moves unread bytes to the front and fills the rest of the buffer; false at end of file.
  bool refill() {
    if (at_eof) return false;
    if (begin > 0) {
      std::memmove(buffer.data(), buffer.data() + begin, end - begin);
      end -= begin;
      begin = 0;
    }
    const std::size_t got = std::fread(buffer.data() + end, 1, buffer.size() - end, file.get());
    if (got < buffer.size() - end) {
      if (std::ferror(file.get())) fail(fmt::format("read error: {}", std::strerror(errno)), "");
      at_eof = true;
    }
    end += got;
    return got > 0;
  }

  void check_value(std::uint64_t value, const std::string& where) const {
    if (value == 0) fail("document length 0 is not allowed; allowed: an integer in [1, 2^40]", where);
    if (value > static_cast<std::uint64_t>(max_document_length)) {
      fail(fmt::format("document length {} is out of range; allowed: an integer in [1, 2^40]", value), where);
    }
  }

  template <class Element>
  std::size_t read_binary(std::span<std::uint64_t> out) {
    std::size_t produced = 0;
    while (produced < out.size()) {
      if (end - begin < sizeof(Element) && !refill()) break;
      const std::size_t available = (end - begin) / sizeof(Element);
      const std::size_t n = std::min(available, out.size() - produced);
      const char* bytes = buffer.data() + begin;
      std::uint64_t bad = 0;  // OR of "value is 0 or too big" over the block: one branch per block
      for (std::size_t i = 0; i < n; ++i) {
        Element v;
        std::memcpy(&v, bytes + i * sizeof(Element), sizeof(Element));
        const auto value = static_cast<std::uint64_t>(v);
        out[produced + i] = value;
        bad |= static_cast<std::uint64_t>(value - 1 >= static_cast<std::uint64_t>(max_document_length));
      }
      if (bad != 0) {
        for (std::size_t i = 0; i < n; ++i) {
          check_value(out[produced + i], fmt::format("byte offset {}", byte_offset + i * sizeof(Element)));
        }
      }
      begin += n * sizeof(Element);
      byte_offset += n * sizeof(Element);
      produced += n;
    }
    return produced;
  }

  std::uint64_t parse_line(std::string_view raw) const {
    const std::string where = fmt::format("line {}", line);
    const std::string_view text = trim_blanks(raw);
    if (text.empty()) fail("empty line; expected one document length (a positive integer) per line", where);
    if (text.front() == '-') {
      fail(fmt::format("negative document length \"{}\"; allowed: an integer in [1, 2^40]", text), where);
    }
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      fail(fmt::format("document length {} is out of range; allowed: an integer in [1, 2^40]", text), where);
    }
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      fail(fmt::format("\"{}\" is not a document length; allowed: an integer in [1, 2^40]",
                       text.substr(0, std::min<std::size_t>(text.size(), 40))),
           where);
    }
    check_value(value, where);
    return value;
  }

  std::size_t read_text(std::span<std::uint64_t> out) {
    std::size_t produced = 0;
    while (produced < out.size()) {
      const char* data = buffer.data();
      const void* newline = std::memchr(data + begin, '\n', end - begin);
      if (newline == nullptr) {
        if (end - begin == buffer.size()) {
          fail(fmt::format("a line longer than {} bytes; expected one document length per line", buffer.size()),
               fmt::format("line {}", line + 1));
        }
        if (refill()) continue;
        if (begin == end) break;  // end of file right after a newline
        ++line;                   // last line without a newline
        out[produced++] = parse_line(std::string_view(data + begin, end - begin));
        begin = end;
        break;
      }
      const std::size_t stop = static_cast<std::size_t>(static_cast<const char*>(newline) - data);
      ++line;
      out[produced++] = parse_line(std::string_view(data + begin, stop - begin));
      begin = stop + 1;
    }
    return produced;
  }
};

LengthFileReader::LengthFileReader(const std::string& path, LengthFileFormat format, std::size_t buffer_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.path = path;
  s.format = resolve_length_file_format(path, format);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("is a directory; expected a file of document lengths", path);
  (void)detail::check_input_file(path);  // only regular files: not /dev/zero, a FIFO or a socket
  s.file.reset(std::fopen(path.c_str(), "rb"));
  if (!s.file) throw Error(fmt::format("cannot open file for reading: {}", std::strerror(errno)), path);
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(fmt::format("cannot read the file size: {}", ec.message()), path);
  if (size == 0) throw Error("the file is empty; expected document lengths", path);
  if (s.format != LengthFileFormat::text && size % s.element_size() != 0) {
    throw Error(fmt::format("the file has {} bytes, not a multiple of {} ({} lengths): it is truncated or not {}", size,
                            s.element_size(), to_string(s.format), to_string(s.format)),
                path);
  }
  s.buffer.resize(std::max<std::size_t>(buffer_bytes, 64));
}

LengthFileReader::~LengthFileReader() = default;
LengthFileReader::LengthFileReader(LengthFileReader&&) noexcept = default;
LengthFileReader& LengthFileReader::operator=(LengthFileReader&&) noexcept = default;

std::size_t LengthFileReader::read(std::uint64_t* data, std::size_t capacity) {
  const std::span<std::uint64_t> out(data, capacity);
  Impl& s = *impl_;
  std::size_t n = 0;
  switch (s.format) {
    case LengthFileFormat::u32: n = s.read_binary<std::uint32_t>(out); break;
    case LengthFileFormat::u64: n = s.read_binary<std::uint64_t>(out); break;
    default: n = s.read_text(out); break;
  }
  s.count += n;
  if (n == 0 && !out.empty() && s.count == 0) throw Error("the file holds no document lengths", s.path);
  return n;
}

LengthFileFormat LengthFileReader::format() const { return impl_->format; }
const std::string& LengthFileReader::path() const { return impl_->path; }
std::uint64_t LengthFileReader::lengths_read() const { return impl_->count; }

std::vector<std::uint64_t> read_all_lengths(const std::string& path, LengthFileFormat format) {
  LengthFileReader reader(path, format);
  std::vector<std::uint64_t> lengths;
  std::vector<std::uint64_t> block(std::size_t{1} << 16);
  while (const std::size_t n = reader.read(block))
    lengths.insert(lengths.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(n));
  return lengths;
}

}  // namespace budget
