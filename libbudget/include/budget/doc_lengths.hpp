#pragma once
/// \file
/// Document lengths: where they come from and how they are read.
///
///  - LengthDistribution: i.i.d. lengths, parametric (fixed, exponential, log-normal), empirical
///    (a histogram) or a mixture of these; parse_length_distribution() reads the spec syntax
///    ("exp:mean=600", "mix:0.7*exp:mean=300+0.3*fixed:4096"); discretize() gives the integer
///    pmf that expectations use; LengthSampler draws from it with a portable seeded generator.
///  - Histograms from JSON or CSV files (read_histogram_file).
///  - LengthFileReader: a file of lengths (text, one per line, or binary little-endian uint32 /
///    uint64) read block by block in constant memory.
///
/// Integer lengths from continuous distributions: L = max(1, round(X)) (round half up), so
/// P(L = 1) = P(X < 1.5) and P(L = k) = P(k − 0.5 ≤ X < k + 0.5) for k ≥ 2. Sampling and
/// discretize() follow the same rule. Formats and the spec syntax: docs/attention.md.
///
/// Thread safety: The free functions are reentrant and safe to call concurrently; a LengthSampler
/// or LengthFileReader holds state and is used by one thread at a time (distinct objects are
/// independent).
///
/// The public headers compile as C++17. Functions taking a range of document lengths take
/// (pointer, count) (and a std::vector overload); C++20 callers also get inline std::span
/// overloads, declared only when BUDGET_HAS_STD_SPAN is 1. The overloads are inline, so the
/// library's ABI is the same whichever standard the caller uses.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif

#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#include <span>
#define BUDGET_HAS_STD_SPAN 1
#else
#define BUDGET_HAS_STD_SPAN 0
#endif

namespace budget {

/// Longest document accepted anywhere (tokens): 2^40.
inline constexpr std::int64_t max_document_length = std::int64_t{1} << 40;
/// Most documents one simulation of a distribution or histogram draws (--samples, a workload's
/// doc_lengths.samples): 2^32, a few minutes of work with progress shown on a terminal
/// (docs/reliability.md). The sampling error of the default 10^6 is already below 0.1%.
inline constexpr std::int64_t max_simulated_documents = std::int64_t{1} << 32;

/// Every document has exactly `length` tokens (an integer in [1, 2^40]).
struct FixedLength {
  std::int64_t length = 1;
};
/// Exponential with the given mean (of the continuous X, in [1, 2^32]), rounded as above.
struct ExponentialLength {
  double mean = 1.0;
};
/// Log-normal: ln X ~ Normal(ln(mean) − sigma²/2, sigma²), so E[X] = mean ∈ [1, 2^32] and
/// sigma ∈ (0, 3] is the standard deviation of ln X. Rounded as above.
struct LogNormalLength {
  double mean = 1.0;
  double sigma = 1.0;
};
/// An empirical distribution: (length, weight) pairs, lengths distinct and ascending in
/// [1, 2^40], weights ≥ 0 and finite with a positive sum (counts or frequencies).
struct EmpiricalLength {
  std::vector<std::pair<std::int64_t, double>> weights;
};

using LengthComponent = std::variant<FixedLength, ExponentialLength, LogNormalLength, EmpiricalLength>;

/// A mixture of length components with weights summing to 1 (one component: weight 1).
class LengthDistribution {
 public:
  struct Part {
    double weight = 1.0;
    LengthComponent component;
  };

  /// Validates every part and that the weights are positive and sum to 1 (within 1e-9);
  /// throws budget::Error naming `source`.
  explicit LengthDistribution(std::vector<Part> parts, const std::string& source = {});
  /// One component with weight 1.
  explicit LengthDistribution(LengthComponent component, const std::string& source = {});

  const std::vector<Part>& parts() const { return parts_; }
  /// True if some part is exponential or log-normal (its integer support is every k ≥ 1).
  bool has_continuous_part() const;
  /// The spec (parse_length_distribution syntax) for parametric mixtures; histograms are
  /// summarised as "histogram(<n> lengths)".
  std::string describe() const;

 private:
  std::vector<Part> parts_;
};

/// Parses a spec:
///   fixed:N | fixed:length=N
///   exp:mean=M | exp:M             (also "exponential")
///   lognormal:mean=M,sigma=S       (also "lognorm")
///   mix:W1*SPEC1+W2*SPEC2+...      (weights in (0, 1] summing to 1; components not mixtures)
/// Throws budget::Error naming `source` (e.g. "--dist") with the offending part and what is
/// allowed.
LengthDistribution parse_length_distribution(std::string_view spec, const std::string& source = {});

/// The integer pmf of n = L + shift (shift = tokens added per document), explicit for
/// n ≤ explicit_max and summarised beyond.
struct DiscreteLengths {
  std::vector<double> pmf;   ///< pmf[n] = P(n), n = 0..explicit_max (pmf[0] = 0)
  double tail_mass = 0.0;    ///< P(n > explicit_max)
  double tail_moment = 0.0;  ///< E[n; n > explicit_max] = Σ_{n > explicit_max} n·P(n)
  /// gcd of the support of n (1 when a continuous part makes every length possible).
  std::int64_t lattice_step = 1;

  double mean() const;
  /// P(n ≤ x) for 0 ≤ x ≤ explicit_max.
  std::vector<double> cumulative() const;
};

/// Discretises `distribution` (rounding rule above) for n = L + shift. Continuous parts are
/// summed term by term up to n = explicit_max and on to their mode (at most 2^20 more terms); the
/// rest of their tail, X ≥ a, enters through the continuous partial moment E[X; X ≥ a], which
/// differs from the rounded one by at most f(a)/8 tokens per document (f the density, decreasing
/// beyond a). shift ∈ [0, 2^20], explicit_max ∈ [1, 2^24].
DiscreteLengths discretize(const LengthDistribution& distribution, std::int64_t shift, std::int64_t explicit_max);

/// Draws i.i.d. integer lengths from a distribution with a portable generator (xoshiro256**
/// seeded through splitmix64, own exponential/normal transforms): the same seed gives the same
/// lengths on every platform with an IEEE-754 libm.
class LengthSampler {
 public:
  LengthSampler(const LengthDistribution& distribution, std::uint64_t seed);
  ~LengthSampler();
  LengthSampler(LengthSampler&&) noexcept;
  LengthSampler& operator=(LengthSampler&&) noexcept;

  /// The next length, in [1, 2^40].
  std::uint64_t next();
  /// Fills out[0, count).
  void fill(std::uint64_t* out, std::size_t count);
#if BUDGET_HAS_STD_SPAN
  /// Fills `out` (C++20 callers).
  void fill(std::span<std::uint64_t> out) { fill(out.data(), out.size()); }
#endif

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A histogram file: JSON ({"512": 10, ...} or [[512, 10], ...]) or CSV ("length,count" header,
/// one "length,count" row per line), chosen by the extension (.json, .csv). Lengths are integers
/// in [1, 2^40] and distinct; counts are finite numbers ≥ 0 with a positive sum.
LengthDistribution read_histogram_file(const std::string& path);
/// The JSON histogram forms above, from text; errors name `source` and the JSON pointer.
LengthDistribution parse_histogram_json(std::string_view json_text, const std::string& source);
/// The CSV form above, from text; errors name `source` and "line N".
LengthDistribution parse_histogram_csv(std::string_view csv_text, const std::string& source);

/// Encoding of a file of lengths.
enum class LengthFileFormat {
  automatic,  ///< by extension: .u32 → u32, .u64 → u64, anything else → text
  text,       ///< one decimal integer per line ('\n' or "\r\n"; spaces and tabs around it allowed)
  u32,        ///< little-endian uint32, packed
  u64,        ///< little-endian uint64, packed
};

std::string_view to_string(LengthFileFormat format);
/// "auto", "text", "u32" or "u64"; budget::Error naming `source` otherwise.
LengthFileFormat parse_length_file_format(std::string_view name, const std::string& source = {});
/// `requested`, or the format the extension of `path` implies when it is automatic.
LengthFileFormat resolve_length_file_format(const std::string& path, LengthFileFormat requested);

/// Streams a file of document lengths in blocks, in constant memory (one read buffer).
///
/// Every length is checked: text lines must be a decimal integer (no sign, no fraction, no
/// blank lines), values must lie in [1, 2^40]; a binary file whose size is not a multiple of
/// the element size is rejected up front; a file with no lengths is an error. Errors name the
/// file and "line N" (text) or "byte offset B" (binary).
class LengthFileReader {
 public:
  explicit LengthFileReader(const std::string& path, LengthFileFormat format = LengthFileFormat::automatic,
                            std::size_t buffer_bytes = std::size_t{1} << 20);
  ~LengthFileReader();
  LengthFileReader(LengthFileReader&&) noexcept;
  LengthFileReader& operator=(LengthFileReader&&) noexcept;

  /// Reads up to out.size() lengths into `out`; returns how many. 0 means the end of the file.
  std::size_t read(std::uint64_t* out, std::size_t capacity);
#if BUDGET_HAS_STD_SPAN
  std::size_t read(std::span<std::uint64_t> out) { return read(out.data(), out.size()); }
#endif

  LengthFileFormat format() const;
  const std::string& path() const;
  std::uint64_t lengths_read() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// All lengths of a file, in order (8 bytes of memory per document).
std::vector<std::uint64_t> read_all_lengths(const std::string& path,
                                            LengthFileFormat format = LengthFileFormat::automatic);

/// Shuffles `lengths` in place (Fisher–Yates with the portable generator of LengthSampler):
/// the same seed gives the same order everywhere.
void shuffle_lengths(std::uint64_t* lengths, std::size_t count, std::uint64_t seed);
/// The same for a vector.
inline void shuffle_lengths(std::vector<std::uint64_t>& lengths, std::uint64_t seed) {
  shuffle_lengths(lengths.data(), lengths.size(), seed);
}
#if BUDGET_HAS_STD_SPAN
inline void shuffle_lengths(std::span<std::uint64_t> lengths, std::uint64_t seed) {
  shuffle_lengths(lengths.data(), lengths.size(), seed);
}
#endif

}  // namespace budget
