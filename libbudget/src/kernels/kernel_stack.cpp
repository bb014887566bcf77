// Names, precision rules, a config's fit and the dispatchers' expert layouts (kernel_stack.hpp).

#include "budget/kernel_stack.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/checked_math.hpp"
#include "base/enum_names.hpp"
#include "budget/error.hpp"
#include "kernels/deepep_config.hpp"

namespace budget {

using detail::checked_add;
using detail::checked_mul;

namespace {
constexpr auto gpu_arch_names = detail::enum_names<GpuArch::sm100>({{GpuArch::sm80, "sm80"},
                                                                    {GpuArch::sm90, "sm90"},
                                                                    {GpuArch::sm100, "sm100"}});
constexpr auto attention_backend_names = detail::enum_names<AttentionBackend::unfused>(
    {{AttentionBackend::te_default, "te-default"},
     {AttentionBackend::fa2, "fa2"},
     {AttentionBackend::fa3, "fa3"},
     {AttentionBackend::fa4, "fa4"},
     {AttentionBackend::cudnn, "cudnn"},
     {AttentionBackend::unfused, "unfused"}});
constexpr auto precision_names = detail::enum_names<Precision::nvfp4>({{Precision::bf16, "bf16"},
                                                                       {Precision::fp8_tensorwise, "fp8-tensorwise"},
                                                                       {Precision::fp8_delayed, "fp8-delayed"},
                                                                       {Precision::fp8_blockwise, "fp8-blockwise"},
                                                                       {Precision::mxfp8, "mxfp8"},
                                                                       {Precision::nvfp4, "nvfp4"}});
constexpr auto fit_names = detail::enum_names<KernelFitKind::refused>(
    {{KernelFitKind::native, "native"}, {KernelFitKind::padded, "padded"}, {KernelFitKind::refused, "refused"}});
}  // namespace

std::string_view to_string(GpuArch arch) { return detail::name_of(gpu_arch_names, arch); }
std::string_view to_string(AttentionBackend backend) { return detail::name_of(attention_backend_names, backend); }
std::string_view to_string(Precision precision) { return detail::name_of(precision_names, precision); }
std::string_view to_string(KernelFitKind kind) { return detail::name_of(fit_names, kind); }

AttentionBackend parse_attention_backend(std::string_view text, const std::string& where) {
  if (const auto b = detail::enum_named(attention_backend_names, text)) return *b;
  throw Error(fmt::format("attention backend \"{}\" is not known; allowed: {}", text,
                          detail::names_list(attention_backend_names)),
              where);
}

Precision parse_precision(std::string_view text, const std::string& where) {
  if (const auto p = detail::enum_named(precision_names, text)) return *p;
  throw Error(fmt::format("precision \"{}\" is not known; allowed: {}", text, detail::names_list(precision_names)),
              where);
}

GpuArch parse_gpu_arch(std::string_view gpu_name, const std::string& where) {
  std::string lower(gpu_name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  struct Family {
    const char* token;
    GpuArch arch;
  };
  // Longer tokens first where one contains another (gb200 before b200 is not needed: both sm100).
  static constexpr std::array<Family, 9> families{{{"a100", GpuArch::sm80},
                                                   {"gh200", GpuArch::sm90},
                                                   {"h100", GpuArch::sm90},
                                                   {"h200", GpuArch::sm90},
                                                   {"h800", GpuArch::sm90},
                                                   {"gb200", GpuArch::sm100},
                                                   {"gb300", GpuArch::sm100},
                                                   {"b200", GpuArch::sm100},
                                                   {"b300", GpuArch::sm100}}};
  for (const Family& f : families) {
    if (lower.find(f.token) != std::string::npos) return f.arch;
  }
  throw Error(fmt::format("GPU \"{}\" is not known; allowed: a name holding a100, h100, h200, h800, gh200, b200, "
                          "b300, gb200 or gb300 (e.g. h100-sxm, h200, b200, gb200-nvl72, a100-80gb)",
                          gpu_name),
              where);
}

std::string describe(const KernelTarget& t) {
  return fmt::format("{} ({}), attention {}, precision {}", t.gpu, to_string(t.arch), to_string(t.attention),
                     to_string(t.precision));
}

std::int64_t width_multiple(Precision precision) {
  switch (precision) {
    case Precision::bf16: return 8;
    case Precision::fp8_tensorwise:
    case Precision::fp8_delayed: return 16;
    case Precision::fp8_blockwise: return 128;
    case Precision::mxfp8: return 32;
    case Precision::nvfp4: return 16;
  }
  return 8;
}

std::int64_t expert_token_alignment(Precision precision) {
  switch (precision) {
    case Precision::bf16: return 1;
    case Precision::fp8_tensorwise:
    case Precision::fp8_delayed:
    case Precision::fp8_blockwise: return 16;
    case Precision::mxfp8: return 32;
    case Precision::nvfp4: return 128;
  }
  return 1;
}

std::string precision_refusal(GpuArch arch, Precision precision) {
  // TE recipe docs: FP8 on sm89+, MXFP8 and NVFP4 on Blackwell (sm100+).
  if (precision == Precision::bf16) return {};
  if (arch == GpuArch::sm80) return fmt::format("{} needs FP8 tensor cores (sm89 or newer); sm80 has none", to_string(precision));
  if ((precision == Precision::mxfp8 || precision == Precision::nvfp4) && arch != GpuArch::sm100) {
    return fmt::format("{} needs Blackwell (sm100) block-scaled tensor cores; {} has none", to_string(precision),
                       to_string(arch));
  }
  return {};
}

namespace {
void check_width(std::vector<std::string>& out, const char* name, std::int64_t value, std::int64_t multiple) {
  if (value > 0 && value % multiple != 0) out.push_back(fmt::format("{} {} is not a multiple of {}", name, value, multiple));
}

/// The multiple MLA's kv_a projection (linear_kv_down_proj) needs for its output width
/// kv_lora_rank + qk_rope_head_dim (Megatron-LM multi_latent_attention.py:584-587 at d98e8a64dd;
/// DeepSeek-V3: 512 + 64 = 576, not a multiple of 128), a TE Linear in FP8 like the other
/// projections (op_traits: kv_down_projection). Under FP8 blockwise TE runs a width off 128 in FP8,
/// neither refused, padded nor in BF16 (TransformerEngine d0067d0da6): the quantizer takes partial
/// blocks (scales ceil(n/128): pytorch/tensor/float8_blockwise_tensor.py:195-207; the kernels'
/// non-full-tile paths: common/transpose/quantize_transpose_square_blockwise.cu:565-566,
/// quantize_transpose_vector_blockwise.cu's kAligned = false) and the block-scaled cuBLASLt GEMM
/// needs leading dims multiples of 16 and the outer dim of 8 ("Caller must pad",
/// common/gemm/cublaslt_gemm.cu:209-214, 295-300); is_quantizable's 128 (float8_blockwise_tensor.py
/// :235-244) only sends an all-gather to high precision (pytorch/distributed.py:1134), which the
/// replicated latent does not go through. So 16 under FP8 blockwise; the precision's multiple
/// (width_multiple()) otherwise.
std::int64_t kv_a_width_multiple(Precision precision) {
  return precision == Precision::fp8_blockwise ? 16 : width_multiple(precision);
}

/// The weight widths of `c` off `multiple` (the GEMM dims a quantizer blocks or cuBLASLt aligns)
/// under `precision`.
std::vector<std::string> width_problems(const ArchConfig& c, Precision precision) {
  const std::int64_t m = width_multiple(precision);
  std::vector<std::string> out;
  check_width(out, "hidden_size", c.hidden_size, m);
  const AttentionConfig& a = c.attention;
  if (a.mla) {
    check_width(out, "kv_lora_rank", a.mla->kv_lora_rank, m);
    check_width(out, "kv_a width (kv_lora_rank + qk_rope_head_dim)",
                checked_add(a.mla->kv_lora_rank, a.mla->qk_rope_head_dim, "MLA kv_a width"),
                kv_a_width_multiple(precision));
    check_width(out, "q_lora_rank", a.mla->q_lora_rank, m);
    check_width(out, "query width (heads·qk head dim)", checked_mul(a.num_heads, a.mla->qk_head_dim(), "MLA query width"), m);
    check_width(out, "value width (heads·v_head_dim)", checked_mul(a.num_heads, a.mla->v_head_dim, "MLA value width"), m);
  } else {
    check_width(out, "query width (num_heads·head_dim)", a.query_width(), m);
    check_width(out, "key/value width (num_kv_heads·head_dim)", a.kv_width(), m);
  }
  const FfnConfig& f = c.ffn;
  check_width(out, f.is_moe() ? "expert_dim" : "dense_dim", f.is_moe() ? f.expert_dim : f.dense_dim, m);
  if (f.is_moe() && f.num_shared_experts > 0) check_width(out, "shared_expert_dim", f.shared_expert_dim, m);
  if (f.is_moe() && f.first_dense_layers > 0) check_width(out, "dense_dim", f.dense_dim, m);
  return out;
}
}  // namespace

KernelFit kernel_fit(const ArchConfig& c, const KernelTarget& target) {
  KernelFit fit;
  const AttentionConfig& a = c.attention;
  const std::int64_t qk = a.mla ? a.mla->qk_head_dim() : a.head_dim;
  const std::int64_t v = a.mla ? a.mla->v_head_dim : a.head_dim;
  fit.attention = attention_fit(target, qk, v);
  fit.width_problems = width_problems(c, target.precision);
  const std::string precision = precision_refusal(target.arch, target.precision);
  if (!precision.empty()) fit.width_problems.insert(fit.width_problems.begin(), precision);
  if (fit.attention.kind == KernelFitKind::refused || !fit.width_problems.empty()) {
    fit.kind = KernelFitKind::refused;
  } else {
    fit.kind = fit.attention.kind;
  }
  return fit;
}

std::string KernelFit::describe() const {
  if (kind == KernelFitKind::native) return fmt::format("native ({})", to_string(attention.backend));
  if (kind == KernelFitKind::padded) {
    return fmt::format("padded: head dims run as ({}, {}) on {}", attention.executed_qk, attention.executed_v,
                       to_string(attention.backend));
  }
  std::vector<std::string> why = width_problems;
  if (attention.kind == KernelFitKind::refused) why.insert(why.begin(), attention.reason);
  return fmt::format("refused: {}", fmt::join(why, "; "));
}

std::string expert_layout_refusal(bool deepep, std::int64_t num_experts, std::int64_t ep,
                                  std::int64_t tp, std::int64_t top_k) {
  if (ep < 1 || tp < 1) return fmt::format("EP {} and TP {} must be at least 1", ep, tp);
  if (num_experts % ep != 0) return fmt::format("{} experts do not divide by EP {}", num_experts, ep);
  if (!deepep) return {};
  const std::int64_t ranks = checked_mul(ep, tp, "TP·EP ranks");
  if (ranks <= 1) return "DeepEP needs TP·EP > 1 (Megatron-LM token_dispatcher.py:1836-1840)";
  if (ranks >= 8 && ranks % 8 != 0) {
    return fmt::format("DeepEP needs TP·EP ranks < 8 or a multiple of 8 (csrc/legacy/buffer.hpp:114); TP·EP = {}", ranks);
  }
  if (ranks > 160) return fmt::format("DeepEP's normal kernels take at most 8·20 = 160 ranks (buffer.hpp:113); TP·EP = {}", ranks);
  if (checked_mul(tp, top_k, "TP·top_k") > 32) {
    return fmt::format("DeepEP takes top-k <= 32 and Megatron hands it TP·top_k = {}·{} = {} (intranode.cu:251)", tp,
                       top_k, tp * top_k);
  }
  if (!detail::deepep_configs(ranks)) {
    return fmt::format("DeepEP has dispatch and combine configs for {} ranks only (deep_ep/buffer.py:228-279 at "
                       "hybrid-ep 94a9f8f; Megatron sizes its Buffer from them, fused_a2a.py:47-57); TP·EP = {}",
                       detail::deepep_config_rank_counts(), ranks);
  }
  return {};
}

std::string hybridep_layout_refusal(std::int64_t num_experts, std::int64_t ep, std::int64_t tp,
                                    std::int64_t hidden_size, std::int64_t nvlink_domain,
                                    std::int64_t tokens_per_rank) {
  if (std::string common = expert_layout_refusal(false, num_experts, ep, tp, 1); !common.empty()) return common;
  if (hidden_size % 16 != 0) {
    return fmt::format("HybridEP needs the hidden size a multiple of 16 (config.cuh:87-89); hidden {}", hidden_size);
  }
  if (nvlink_domain < 1) return {};
  const std::int64_t group = checked_mul(ep, tp, "TP·EP ranks");
  const std::int64_t per_domain = std::min(group, nvlink_domain);
  if (group % per_domain != 0) {
    return fmt::format("HybridEP needs TP·EP a multiple of its ranks in one NVLink domain (hybrid_ep_buffer.py:74-76); "
                       "TP·EP = {}, {} in a domain",
                       group, per_domain);
  }
  if (per_domain > 72) {
    return fmt::format("HybridEP takes at most 72 ranks in an NVLink domain (config.cuh:16); {}", per_domain);
  }
  const std::int64_t local_experts = num_experts / ep;
  if (checked_mul(local_experts, per_domain, "HybridEP experts in a domain") % 4 != 0) {
    return fmt::format("HybridEP needs local experts x ranks in a domain a multiple of 4 (config.cuh:91); {} x {}",
                       local_experts, per_domain);
  }
  constexpr std::int64_t max_tokens_across_domains = (65536 - 1 - 1) / 3;  // config.cuh:17-47
  if (group > per_domain && tokens_per_rank > max_tokens_across_domains) {
    return fmt::format("HybridEP across NVLink domains takes at most {} tokens a rank (3·T + 1 < 65,536 IB queue "
                       "depth, config.cuh:17-47); {} a rank",
                       max_tokens_across_domains, tokens_per_rank);
  }
  return {};
}

std::int64_t padded_expert_tokens(std::int64_t tokens, Precision precision) {
  const std::int64_t a = expert_token_alignment(precision);
  if (tokens <= 0) return 0;
  return checked_mul(checked_add(tokens, a - 1, "padded expert tokens") / a, a, "padded expert tokens");
}

double expected_expert_padding_factor(double routed_tokens, std::int64_t experts, Precision precision) {
  const std::int64_t a = expert_token_alignment(precision);
  if (a <= 1 || routed_tokens <= 0 || experts < 1) return 1.0;
  return (routed_tokens + static_cast<double>(experts) * static_cast<double>(a - 1) / 2.0) / routed_tokens;
}

}  // namespace budget
