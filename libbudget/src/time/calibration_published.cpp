// A calibration profile from published, measured kernel tables (docs/calibration.md, "Profiles from
// published kernel tables"): the rows of a kernels.json file (the form of
// data/kernels/kernels.json, the part of the project's kernel collection copied here) for one GPU,
// made into profile rows with their provenance, the GPU's datasheet peaks, and the kernel stack
// they describe (Megatron-Core with Transformer Engine: cuBLAS GEMMs, cuDNN / FlashAttention fused
// attention, fused RMSNorm).
//
// What is read, per GPU key (A100_SXM4_80GB, H100_SXM, H200_SXM, B200, GB200, B300, GB300):
//   gemm: aiconfigurator's cuBLAS tables (torch F.linear, bf16; sgl-kernel per-token FP8
//     "fp8"; DeepGEMM 1×128/128×128 block-scaled FP8 "fp8_block"), forward y = x·Wᵀ with x of
//     m×k and W of n×k: M = m, K = k, N = n. The other passes are the model's (same FLOPs).
//     GB200 has no table: B200's rows carried by the ratio of the two GPUs' best-shape GEMM rates
//     measured the same way (the MAMF rows of stas00/ml-engineering, torch.matmul: bf16 1745 and 1822,
//     FP8 3432.5 and 3615.6 TFLOP/s; 1.044× and 1.053×), marked carried_from. Their datasheet peaks
//     differ by 1.111× (2500/2250), which the measured training runs do not show: Megatron-Bridge's
//     Llama-3 8B on 8 GB200 and 8 B200, the same layout, FP8-CS 4.16-4.18 s and 4.28-4.37 s, MXFP8
//     4.38-4.40 s and 4.44-4.46 s a step (data/runs/measured_runs.jsonl): 1.01-1.05×.
//     B300 and GB300 (Blackwell Ultra) have tables of their own (aiconfigurator's, the same collector
//     and shapes as B200's), read as B200's.
//   attention: cuDNN SDPA (cudnn-frontend's training benchmark) causal rows with a time, q and kv
//     of equal length, no sliding window, non-deterministic backward: forward and backward of
//     `batch` documents of q_seqlen tokens. Where a GPU has none (A100, H100), FlashAttention 2/3's
//     published TFLOP/s of causal runs, made a time with the benchmark's own FLOPs convention
//     (forward 4·b·s²·h·d/2, backward 2.5× forward; FA2's fwd+bwd 3.5×), backend "flash".
//     B300 and GB300 have no training-attention rows (only aiconfigurator's inference prefill
//     kernels, forward, with a KV-cache store): B200's cuDNN rows are carried, marked carried_from,
//     by the measured ratio of the two GPUs' forward times of one kernel at identical shapes
//     (attention_carry() below: SGLang's trtllm_mha prefill, bf16, 24 shapes; GB300 over B200 at
//     SGLang 0.5.14; B300 has only 0.5.10 rows, B300 over GB300 at 0.5.10 times GB300 over B200 at
//     0.5.14). The median ratio is taken (GB300 0.809, B300 0.869 in time at kernels.json's rows).
//   rms_norm: bf16 RMSNorm rows with a printed time (cuDNN, Megatron-Core) of at least 10 µs (the
//     cuDNN CSV rounds to 1 µs).
//   peaks: bf16_gemm_tflops = the table's 8192³ bf16 GEMM (GB200: B200's carried); copy bandwidth =
//     the datasheet HBM bandwidth × the fraction cuDNN's RMSNorm forward reaches on the GPU (its best
//     row of at least 2²⁶ elements; a GPU without one: the mean fraction of the GPUs that have one);
//     datasheet BF16 and FP8 peaks from the file's "gpus".

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "budget/calibration.hpp"
#include "budget/error.hpp"
#include "base/json_reader.hpp"

namespace budget {

namespace {

using json = nlohmann::json;

struct PublishedGpu {
  const char* key;
  const char* device;
  const char* compute_capability;
};
constexpr PublishedGpu published_gpus[] = {
    {"A100_SXM4_80GB", "NVIDIA A100 SXM4 80GB", "8.0"}, {"H100_SXM", "NVIDIA H100 SXM5 80GB", "9.0"},
    {"H200_SXM", "NVIDIA H200", "9.0"},                 {"B200", "NVIDIA B200", "10.0"},
    {"GB200", "NVIDIA GB200", "10.0"},                 {"B300", "NVIDIA B300", "10.3"},
    {"GB300", "NVIDIA GB300", "10.3"}};

const PublishedGpu& published_gpu(const std::string& key) {
  for (const auto& g : published_gpus) {
    if (key == g.key) return g;
  }
  throw Error(fmt::format("GPU \"{}\" has no published profile; allowed: A100_SXM4_80GB, H100_SXM, H200_SXM, B200, "
                          "GB200, B300, GB300",
                          key),
              "gpu");
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

/// "owner/repo@commit:path" of a source "owner/repo@commit:path[:lines] (comment)", or the URL.
std::string file_of(const std::string& source) {
  std::string s = source.substr(0, source.find(' '));
  const std::size_t at = s.find('@');
  const std::size_t colon = at == std::string::npos ? std::string::npos : s.find(':', at);
  const std::size_t lines = colon == std::string::npos ? std::string::npos : s.find(':', colon + 1);
  return lines == std::string::npos ? s : s.substr(0, lines);
}
bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }
std::string text_of(const json& row, const char* key) {
  const auto it = row.find(key);
  return it != row.end() && it->is_string() ? it->get<std::string>() : std::string();
}
double number_of(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}
std::int64_t integer_of(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

/// A row's "source", or (the repository's copy, scripts/kernels_subset.py) the text its
/// "source_ref" indexes in the top-level "sources"; empty when it has neither.
std::string source_of(const json& root, const json& row) {
  std::string source = text_of(row, "source");
  const std::int64_t ref = integer_of(row, "source_ref");
  if (source.empty() && root.contains("sources") && ref >= 0 && static_cast<std::size_t>(ref) < root.at("sources").size()) {
    source = root.at("sources").at(static_cast<std::size_t>(ref)).get<std::string>();
  }
  return source;
}

/// The GEMM precision of a published GEMM row ("" bf16), or nullopt-like "-" for rows not used.
std::string gemm_dtype(const json& row) {
  const std::string library = text_of(row, "library"), dtype = text_of(row, "dtype");
  if (starts_with(library, "torch F.linear") && dtype == "bf16") return "";
  if (contains(dtype, "per-token")) return "fp8";
  if (contains(dtype, "block-scaled") && contains(library, "DeepGEMM")) return "fp8_block";
  return "-";
}

std::string gemm_backend(const std::string& dtype) {
  if (dtype == "fp8") return "sgl-kernel-fp8-scaled-mm";
  if (dtype == "fp8_block") return "deepgemm";
  return "cublas";
}

CalibrationRow gemm_row(const json& row, const std::string& dtype) {
  const json& shape = row.at("shape");
  CalibrationRow r;
  r.op = ProfileOp::gemm;
  r.pass = "forward";
  r.shape = {{"M", integer_of(shape, "m")}, {"K", integer_of(shape, "k")}, {"N", integer_of(shape, "n")}};
  r.ms = number_of(row.at("measured"), "time_us") * 1e-3;
  r.flops = 2.0 * static_cast<double>(r.shape["M"]) * static_cast<double>(r.shape["K"]) * static_cast<double>(r.shape["N"]);
  r.backend = gemm_backend(dtype);
  r.dtype = dtype;
  return r;
}

/// One attention row, or nothing when the row is not used (see the file comment).
std::optional<CalibrationRow> attention_row(const json& row, const std::string& gpu) {
  CalibrationRow r;
  const std::string op = text_of(row, "op"), library = text_of(row, "library"), dtype = text_of(row, "dtype");
  const json& shape = row.at("shape");
  const auto causal = row.find("causal");
  if (causal == row.end() || !causal->is_boolean() || !causal->get<bool>() || shape.contains("sliding_window")) {
    return std::nullopt;
  }
  if (row.value("deterministic_bwd", false)) return std::nullopt;
  const bool cudnn = starts_with(library, "cudnn (") && dtype == "bf16" && row.at("measured").contains("time_us");
  const bool flash = (gpu == "A100_SXM4_80GB" && library == "flash_attention_2" && op == "attn_fwd_bwd") ||
                     (gpu == "H100_SXM" && library == "flash_attention_3" && dtype == "bf16");
  if (!cudnn && !flash) return std::nullopt;
  const std::int64_t batch = integer_of(shape, "batch");
  const std::int64_t s = cudnn ? integer_of(shape, "q_seqlen") : integer_of(shape, "seqlen");
  if (cudnn && integer_of(shape, "kv_seqlen") != s) return std::nullopt;
  const std::int64_t heads = shape.contains("heads_q") ? integer_of(shape, "heads_q") : integer_of(shape, "heads");
  const std::int64_t kv = shape.contains("heads_kv") ? integer_of(shape, "heads_kv") : heads;
  const std::int64_t d = shape.contains("head_dim_qk") ? integer_of(shape, "head_dim_qk") : integer_of(shape, "head_dim");
  if (batch <= 0 || s <= 0 || heads <= 0 || kv <= 0 || d <= 0 || heads % kv != 0) return std::nullopt;
  r.op = ProfileOp::attention;
  r.pass = op == "attn_fwd" ? "forward" : op == "attn_bwd" ? "backward" : "forward+backward";
  r.shape = {{"docs", batch}, {"doc_len", s}, {"tokens", batch * s}, {"num_heads", heads}, {"num_kv_heads", kv},
             {"head_dim", d}};
  r.backend = cudnn ? "cudnn" : "flash";
  // The benchmarks' FLOPs: forward 4·b·s²·h·d, halved for causal; backward 2.5×; fwd+bwd 3.5×.
  const double forward = 4.0 * static_cast<double>(batch) * static_cast<double>(s) * static_cast<double>(s) *
                         static_cast<double>(heads) * static_cast<double>(d) / 2.0;
  r.flops = forward * (r.pass == "forward" ? 1.0 : r.pass == "backward" ? 2.5 : 3.5);
  r.ms = cudnn ? number_of(row.at("measured"), "time_us") * 1e-3 : r.flops / (number_of(row.at("measured"), "tflops") * 1e12) * 1e3;
  return r;
}

/// One RMSNorm row, or nothing when the row is not used.
std::optional<CalibrationRow> norm_row(const json& row) {
  CalibrationRow r;
  const std::string library = text_of(row, "library");
  if (text_of(row, "norm_type") != "rms_norm" || text_of(row, "dtype") != "bf16") return std::nullopt;
  if (library != "cudnn" && library != "megatron_core") return std::nullopt;
  const double us = number_of(row.at("measured"), "time_us");
  const json& shape = row.at("shape");
  if (us < 10 || !shape.contains("tokens") || !shape.contains("hidden")) return std::nullopt;
  const std::string direction = text_of(row, "direction");
  if (direction != "fwd" && direction != "bwd") return std::nullopt;
  r.op = ProfileOp::rms_norm;
  r.pass = direction == "fwd" ? "forward" : "backward";
  r.shape = {{"tokens", integer_of(shape, "tokens")}, {"H", integer_of(shape, "hidden")}};
  r.backend = library == "cudnn" ? "cudnn" : "megatron-core";
  r.ms = us * 1e-3;
  return r;
}

/// The best cuDNN RMSNorm forward bandwidth of a GPU over its datasheet HBM bandwidth (rows of at
/// least 2²⁶ elements), 0 when it has none.
double norm_bandwidth_fraction(const json& root, const std::string& gpu) {
  const double hbm = number_of(root.at("gpus").at(gpu), "hbm_tb_per_s") * 1e3;
  double best = 0;
  for (const json& row : root.at("rows")) {
    if (text_of(row, "gpu") != gpu || text_of(row, "op") != "norm" || text_of(row, "library") != "cudnn") continue;
    if (text_of(row, "norm_type") != "rms_norm" || text_of(row, "direction") != "fwd") continue;
    const json& shape = row.at("shape");
    if (static_cast<double>(integer_of(shape, "tokens")) * static_cast<double>(integer_of(shape, "hidden")) < 67108864.0) continue;
    best = std::max(best, number_of(row.at("measured"), "gb_per_s"));
  }
  return hbm > 0 ? best / hbm : 0.0;
}

/// Rows of `gpu` of the ops above, with the sources they come from.
void add_rows(const json& root, const std::string& gpu, const std::string& carried_from, double carry_bf16,
              double carry_fp8, CalibrationProfile& p, std::set<std::string>& references) {
  for (const json& row : root.at("rows")) {
    if (text_of(row, "gpu") != gpu) continue;
    std::optional<CalibrationRow> r;
    const std::string op = text_of(row, "op");
    if (op == "gemm" && row.at("shape").contains("m") && row.at("measured").contains("time_us")) {
      const std::string dtype = gemm_dtype(row);
      if (dtype != "-") r = gemm_row(row, dtype);
      if (!carried_from.empty() && r) {
        r->ms *= dtype.empty() ? carry_bf16 : carry_fp8;
        r->carried_from = carried_from;
      }
    } else if (carried_from.empty() && starts_with(op, "attn")) {
      r = attention_row(row, gpu);
    } else if (carried_from.empty() && op == "norm") {
      r = norm_row(row);
    }
    if (!r || !(r->ms > 0)) continue;
    p.rows.push_back(std::move(*r));
    references.insert(file_of(source_of(root, row)));
  }
}

/// The best-shape GEMM rate of `gpu` at `dtype` ("bf16" or "fp8"): its gemm rows with a measured
/// TFLOP/s and no time (ml-engineering's MAMF table); 0 when it has none.
double best_shape_gemm_tflops(const json& root, const std::string& gpu, const std::string& dtype) {
  double best = 0;
  for (const json& row : root.at("rows")) {
    if (text_of(row, "gpu") != gpu || text_of(row, "op") != "gemm" || !row.contains("measured")) continue;
    const json& m = row.at("measured");
    if (m.contains("time_us") || !m.contains("tflops") || !m.at("tflops").is_number()) continue;
    if (!starts_with(text_of(row, "dtype"), dtype)) continue;
    best = std::max(best, m.at("tflops").get<double>());
  }
  return best;
}

/// GB200's time of a B200 row: B200's best-shape rate over GB200's (above), else the datasheet
/// peaks' ratio.
double gb200_carry(const json& root, const std::string& dtype, double datasheet_ratio) {
  const double b200 = best_shape_gemm_tflops(root, "B200", dtype), gb200 = best_shape_gemm_tflops(root, "GB200", dtype);
  return b200 > 0 && gb200 > 0 ? b200 / gb200 : datasheet_ratio;
}

/// Forward times of SGLang's trtllm_mha prefill kernel (bf16) of `gpu` at `release` ("0.5.14"), by
/// shape (batch, seqlen, heads_q, heads_kv, head_dim); the sources read go into `references`.
std::map<std::vector<std::int64_t>, double> trtllm_prefill_times(const json& root, const std::string& gpu,
                                                                 const std::string& release,
                                                                 std::set<std::string>& references) {
  std::map<std::vector<std::int64_t>, double> out;
  const std::string library = fmt::format("SGLang {} attention backend 'trtllm_mha'", release);
  for (const json& row : root.at("rows")) {
    if (text_of(row, "gpu") != gpu || text_of(row, "op") != "attn_fwd" || text_of(row, "dtype") != "bf16") continue;
    if (!starts_with(text_of(row, "library"), library) || !row.contains("measured")) continue;
    const double us = number_of(row.at("measured"), "time_us");
    const json& shape = row.at("shape");
    if (!(us > 0)) continue;
    out[{integer_of(shape, "batch"), integer_of(shape, "seqlen"), integer_of(shape, "heads_q"),
         integer_of(shape, "heads_kv"), integer_of(shape, "head_dim")}] = us;
    const std::string source = source_of(root, row);
    if (!source.empty()) references.insert(file_of(source));
  }
  return out;
}

/// The median over shapes both GPUs have of time(a) / time(b), trtllm_mha prefill at `release`;
/// 0 when they share no shape.
double trtllm_time_ratio(const json& root, const std::string& a, const std::string& b, const std::string& release,
                         std::set<std::string>& references) {
  const auto ta = trtllm_prefill_times(root, a, release, references);
  const auto tb = trtllm_prefill_times(root, b, release, references);
  std::vector<double> ratios;
  for (const auto& [shape, us] : ta) {
    const auto it = tb.find(shape);
    if (it != tb.end()) ratios.push_back(us / it->second);
  }
  if (ratios.empty()) return 0.0;
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  return n % 2 == 1 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
}

/// The time factor that carries B200's cuDNN attention rows to a Blackwell Ultra GPU (the file
/// comment): GB300 = GB300/B200 at 0.5.14; B300 = B300/GB300 at 0.5.10 × GB300/B200 at 0.5.14.
/// budget::Error naming `source` when the rows are missing.
double attention_carry(const json& root, const std::string& gpu, const std::string& source,
                       std::set<std::string>& references) {
  const double gb300 = trtllm_time_ratio(root, "GB300", "B200", "0.5.14", references);
  const double b300 = gpu == "B300" ? trtllm_time_ratio(root, "B300", "GB300", "0.5.10", references) : 1.0;
  if (!(gb300 > 0) || !(b300 > 0)) {
    throw Error(fmt::format("{} has no training attention rows and the trtllm_mha prefill rows that carry B200's "
                            "(GB300 and B200 at SGLang 0.5.14{}) are missing",
                            gpu, gpu == "B300" ? ", B300 and GB300 at 0.5.10" : ""),
                source);
  }
  return gb300 * b300;
}

/// B200's cuDNN attention rows, their times × `factor`, marked carried from B200.
void add_carried_attention_rows(const json& root, double factor, CalibrationProfile& p,
                                std::set<std::string>& references) {
  for (const json& row : root.at("rows")) {
    if (text_of(row, "gpu") != "B200" || !starts_with(text_of(row, "op"), "attn")) continue;
    std::optional<CalibrationRow> r = attention_row(row, "B200");
    if (!r || !(r->ms > 0)) continue;
    r->ms *= factor;
    r->carried_from = "NVIDIA B200";
    p.rows.push_back(std::move(*r));
    references.insert(file_of(source_of(root, row)));
  }
}

}  // namespace

CalibrationProfile profile_from_published_kernels(std::string_view text, const std::string& source,
                                                  const std::string& gpu_key) {
  const PublishedGpu& g = published_gpu(gpu_key);
  const json root = detail::parse_json_text(text, source);
  if (!root.is_object() || !root.contains("gpus") || !root.contains("rows") || !root.at("rows").is_array()) {
    throw Error("not a published kernel table (expected \"gpus\" and \"rows\", the form of kernels.json)", source);
  }
  if (!root.at("gpus").contains(gpu_key)) throw Error(fmt::format("no datasheet of {} in \"gpus\"", gpu_key), source);
  const json& sheet = root.at("gpus").at(gpu_key);
  CalibrationProfile p;
  p.device.name = g.device;
  p.device.compute_capability = g.compute_capability;
  p.device.sm_count = integer_of(sheet, "sms");
  p.device.sm_clock_mhz = number_of(sheet, "boost_clock_mhz");
  p.peaks.datasheet_peak_tflops = number_of(sheet, "bf16_dense_tflops");
  p.peaks.datasheet_fp8_tflops = number_of(sheet, "fp8_dense_tflops");
  std::set<std::string> references;
  std::string first_source;
  for (const json& s : sheet.value("sources", json::array())) {
    if (!s.is_string()) continue;
    if (first_source.empty()) first_source = s.get<std::string>();
    references.insert(file_of(s.get<std::string>()));
  }
  p.peaks.datasheet_peak_source = fmt::format("datasheet dense BF16 tensor-core peak, {} (kernels.json \"gpus\")",
                                              first_source.empty() ? std::string("source not given") : first_source);
  // GB200 has no GEMM table of its own: B200's rows carried by the best-shape GEMM rates' ratio (the
  // same chip: its SM count too).
  const bool carry = gpu_key == "GB200";
  const json& b200 = root.at("gpus").at("B200");
  const double carry_bf16 =
      carry ? gb200_carry(root, "bf16", number_of(b200, "bf16_dense_tflops") / p.peaks.datasheet_peak_tflops) : 1.0;
  const double carry_fp8 =
      carry ? gb200_carry(root, "fp8", number_of(b200, "fp8_dense_tflops") / p.peaks.datasheet_fp8_tflops) : 1.0;
  if (carry && p.device.sm_count == 0) p.device.sm_count = integer_of(b200, "sms");
  add_rows(root, carry ? "B200" : gpu_key, carry ? "NVIDIA B200" : "", carry_bf16, carry_fp8, p, references);
  if (carry) add_rows(root, gpu_key, "", 1.0, 1.0, p, references);
  // Blackwell Ultra: its own GEMMs (above), B200's cuDNN attention carried (the file comment).
  const bool ultra = gpu_key == "B300" || gpu_key == "GB300";
  const double attention_factor = ultra ? attention_carry(root, gpu_key, source, references) : 1.0;
  if (ultra) add_carried_attention_rows(root, attention_factor, p, references);
  for (const CalibrationRow& r : p.rows) {
    if (r.op == ProfileOp::gemm && r.dtype.empty() && r.shape.at("M") == 8192 && r.shape.at("K") == 8192 && r.shape.at("N") == 8192) {
      p.peaks.bf16_gemm_tflops = r.flops / (r.ms * 1e-3) / 1e12;
    }
  }
  if (!(p.peaks.bf16_gemm_tflops > 0)) throw Error(fmt::format("{} has no 8192³ bf16 GEMM row", gpu_key), source);
  double fraction = norm_bandwidth_fraction(root, gpu_key);
  std::string bandwidth_from = "its own best cuDNN RMSNorm forward";
  if (!(fraction > 0)) {
    double sum = 0;
    int count = 0;
    for (const auto& other : published_gpus) {
      const double f = norm_bandwidth_fraction(root, other.key);
      if (f > 0) sum += f, ++count;
    }
    fraction = count > 0 ? sum / count : 0.8;
    bandwidth_from = fmt::format("the mean of {} other GPUs' best cuDNN RMSNorm forward", count);
  }
  p.peaks.copy_gbytes_per_s = number_of(sheet, "hbm_tb_per_s") * 1e3 * fraction;
  p.source.tool = "budget-match calibrate --from-kernels";
  p.source.method = fmt::format(
      "published kernel tables: cuBLAS GEMMs (bf16, FP8 per-token, FP8 block-scaled), cuDNN / FlashAttention causal "
      "attention, bf16 RMSNorm; copy bandwidth = datasheet HBM {:.3g} TB/s x {:.3f} ({}){}{}",
      number_of(sheet, "hbm_tb_per_s"), fraction, bandwidth_from,
      carry ? fmt::format("; GEMMs carried from B200 by the best-shape GEMM rates' ratio (x {:.3f} bf16, x {:.3f} FP8 "
                          "in time)", carry_bf16, carry_fp8)
            : std::string(),
      ultra ? fmt::format("; cuDNN attention carried from B200 by trtllm_mha prefill times at identical shapes (x {:.3f} "
                          "in time)", attention_factor)
            : std::string());
  p.source.kind = "published";
  p.source.stack = "megatron-core-te";
  p.source.references.assign(references.begin(), references.end());
  validate(p, source);
  return p;
}

CalibrationProfile load_published_kernels_profile(const std::string& path, const std::string& gpu_key) {
  return profile_from_published_kernels(detail::read_text_file(path), path, gpu_key);
}

}  // namespace budget
