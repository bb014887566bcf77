// Benchmarks of the attention model (issue 4, docs/attention.md):
//  - streaming simulation of binary length files from the page cache (acceptance: ≥ 50 million
//    lengths per second in constant memory, 10^7 and 10^8 documents), and the reader alone;
//  - the same from memory and from a text file;
//  - the expectation for parametric lengths.
// Length files (exponential, mean 600) are written once into a temporary directory, so they sit in
// the page cache when timed; they are removed at exit. `peak_rss_growth_MiB` is the growth of the
// process' peak resident set during the benchmark: ~0 for the streaming paths (one 1 MiB read
// buffer and a 512 KiB block), 8 bytes per document for the in-memory one.
//
//   bench_attention --benchmark_filter=Stream   # the streaming acceptance numbers

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "budget/attention_cost.hpp"
#include "budget/doc_lengths.hpp"

namespace {

using budget::LengthFileFormat;

const budget::AttentionGeometry geometry{4096, 0, {128, 128}, {64, 128}};

struct TempFiles {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("budget_bench_attention_" + std::to_string(::getpid()));
  std::map<std::pair<std::int64_t, int>, std::string> files;
  TempFiles() { std::filesystem::create_directories(dir); }
  ~TempFiles() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

TempFiles& temp_files() {
  static TempFiles files;
  return files;
}

// A file of `n` exponential(600) lengths in `format`, written once and reused.
const std::string& length_file(std::int64_t n, LengthFileFormat format) {
  TempFiles& t = temp_files();
  const auto key = std::make_pair(n, static_cast<int>(format));
  if (const auto it = t.files.find(key); it != t.files.end()) return it->second;
  const char* ext = format == LengthFileFormat::u32 ? ".u32" : format == LengthFileFormat::u64 ? ".u64" : ".txt";
  const std::string path = (t.dir / ("lengths_" + std::to_string(n) + ext)).string();
  std::ofstream out(path, std::ios::binary);
  budget::LengthSampler sampler(budget::parse_length_distribution("exp:mean=600"), 1);
  std::vector<std::uint64_t> block(1 << 16);
  for (std::int64_t done = 0; done < n;) {
    const auto m = static_cast<std::size_t>(std::min<std::int64_t>(n - done, static_cast<std::int64_t>(block.size())));
    sampler.fill(std::span<std::uint64_t>(block.data(), m));
    for (std::size_t i = 0; i < m; ++i) {
      if (format == LengthFileFormat::u32) {
        const auto v = static_cast<std::uint32_t>(block[i]);
        out.write(reinterpret_cast<const char*>(&v), sizeof v);
      } else if (format == LengthFileFormat::u64) {
        out.write(reinterpret_cast<const char*>(&block[i]), sizeof block[i]);
      } else {
        out << block[i] << '\n';
      }
    }
    done += static_cast<std::int64_t>(m);
  }
  return t.files[key] = path;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void report(benchmark::State& state, std::int64_t documents, double peak_before) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * documents);
  state.counters["lengths_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(documents), benchmark::Counter::kIsRate);
  state.counters["peak_rss_growth_MiB"] = peak_rss_mib() - peak_before;
}

// Reading, validating and simulating a binary file in file order (the acceptance path).
void BM_StreamSimulate(benchmark::State& state, LengthFileFormat format) {
  const std::int64_t n = state.range(0);
  const std::string& path = length_file(n, format);
  {  // warm the page cache, in constant memory
    budget::LengthFileReader reader(path, format);
    std::vector<std::uint64_t> block(1 << 16);
    while (reader.read(block) != 0) {
    }
  }
  const double peak_before = peak_rss_mib();
  for (auto _ : state) {
    const auto result = budget::simulate_length_file(path, format, budget::PackingOrder::given, 0, geometry);
    benchmark::DoNotOptimize(result.totals.document_keys);
  }
  report(state, n, peak_before);
}

// The reader alone: parsing and validating lengths, no packing.
void BM_StreamReadOnly(benchmark::State& state, LengthFileFormat format) {
  const std::int64_t n = state.range(0);
  const std::string& path = length_file(n, format);
  const double peak_before = peak_rss_mib();
  std::vector<std::uint64_t> block(1 << 16);
  for (auto _ : state) {
    budget::LengthFileReader reader(path, format);
    std::uint64_t sum = 0;
    while (const std::size_t m = reader.read(block)) {
      for (std::size_t i = 0; i < m; ++i) sum += block[i];
    }
    benchmark::DoNotOptimize(sum);
  }
  report(state, n, peak_before);
}

// Packing alone, lengths already in memory.
void BM_SimulateInMemory(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<std::uint64_t> lengths(static_cast<std::size_t>(n));
  budget::LengthSampler(budget::parse_length_distribution("exp:mean=600"), 1).fill(lengths);
  for (auto _ : state) {
    const auto result = budget::simulate_lengths(lengths, geometry);
    benchmark::DoNotOptimize(result.totals.document_keys);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

// Packing with a sliding window (one more division per piece).
void BM_SimulateInMemorySlidingWindow(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<std::uint64_t> lengths(static_cast<std::size_t>(n));
  budget::LengthSampler(budget::parse_length_distribution("exp:mean=600"), 1).fill(lengths);
  const budget::AttentionGeometry windowed{4096, 1024, {128, 128}, {64, 128}};
  for (auto _ : state) {
    const auto result = budget::simulate_lengths(lengths, windowed);
    benchmark::DoNotOptimize(result.totals.document_keys);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * n);
}

void BM_Expectation(benchmark::State& state, const char* spec) {
  const budget::LengthDistribution d = budget::parse_length_distribution(spec);
  const budget::AttentionGeometry g{state.range(0), 0, {128, 128}, {64, 128}};
  for (auto _ : state) benchmark::DoNotOptimize(budget::expected_attention_cost(d, g).document.exact_keys);
}

}  // namespace

BENCHMARK_CAPTURE(BM_StreamSimulate, u32, LengthFileFormat::u32)
    ->Arg(10'000'000)
    ->Arg(100'000'000)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);
BENCHMARK_CAPTURE(BM_StreamSimulate, u64, LengthFileFormat::u64)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StreamReadOnly, u32, LengthFileFormat::u32)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StreamSimulate, text, LengthFileFormat::text)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateInMemory)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateInMemorySlidingWindow)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Expectation, exp600, "exp:mean=600")->Arg(4096)->Arg(65536)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Expectation, lognormal, "lognormal:mean=600,sigma=1.2")->Arg(4096)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
