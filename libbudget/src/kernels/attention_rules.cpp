// The attention table (kernel_stack.hpp): what each backend trains on each architecture, with the
// source of every row, and how a (qk, v) head-dim pair runs on a target.

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "budget/error.hpp"
#include "budget/kernel_stack.hpp"

namespace budget {

namespace {

using A = AttentionBackend;
using G = GpuArch;

// FlashAttention-2's compiled tiles: HEADDIM_SWITCH (csrc/flash_attn/src/static_switch.h) and
// flash_api.cpp:458 (rounded to 32 up to 128, to 64 above); d % 8 and d <= 256 (flash_api.cpp:416-417).
// TE pads V to max(qk, v) for FA2 (utils.py:926-947), so an MLA pair runs at its larger dim.
constexpr const char* fa2_source =
    "flash-attention 0251105a csrc/flash_attn/flash_api.cpp:416-417,458; setup.py:74,123 (built for sm80, sm90, "
    "sm100, sm110, sm120); TE d0067d0 pytorch/attention/dot_product_attention/utils.py:926-947 (V padded to "
    "max(qk, v), <= 256)";
// FlashAttention-3: hopper/generate_kernels.py HEAD_DIMENSIONS 64/96/128/192/256, hopper/flash_api.cpp:492-509
// round_up_headdim, backward at round_up_headdim(max(d, dv)) (:1368); MLA only (128, 192] x (96, 128]
// (TE utils.py:951-960 _is_fa3_supported, "Only Hopper supports different V headdim").
constexpr const char* fa3_source =
    "flash-attention 0251105a hopper/flash_api.cpp:492-509 (round_up_headdim), :1368 (backward at max(d, dv)); "
    "TE d0067d0 utils.py:951-960 (_is_fa3_supported)";
// FlashAttention-4 (CuTe DSL): flash_attn/cute/interface.py:112-129 _validate_head_dims; TE enables it on
// sm90+ (utils.py:580-584) and defers to that function (utils.py:981-1000).
constexpr const char* fa4_source = "flash-attention 0251105a flash_attn/cute/interface.py:112-129 (_validate_head_dims)";
// cuDNN SDPA through TE (F16/BF16 arbitrary-seqlen backend): fused_attn.cpp:310-353 at d0067d0.
constexpr const char* cudnn_source =
    "TE d0067d0 common/fused_attn/fused_attn.cpp:310-353 (d % 8; both <= 128; <= 256 on sm90 for training with "
    "cuDNN >= 9.5; sm100 training (192, 128) with >= 9.11 and (256, 256) with >= 9.23; sm90 MLA pairs with both "
    ">= 128 other than (192, 128) disabled for >= 9.11)";
constexpr const char* unfused_source =
    "TE UnfusedDotProductAttention: batched GEMMs, any head dim (d % 8 for 16-byte tensor-core tiles)";

AttentionRule rule(G arch, A backend, bool available, std::int64_t max_any, const char* source) {
  AttentionRule r;
  r.arch = arch;
  r.backend = backend;
  r.available = available;
  r.max_any = max_any;
  r.source = source;
  return r;
}

/// FA2 on every architecture; FA3 on sm90 only (TE utils.py:573-576, "!= sm90"), padding to its tiles.
void add_flash_2_3(std::vector<AttentionRule>& out, G arch) {
  AttentionRule fa2 = rule(arch, A::fa2, true, 0, fa2_source);
  fa2.tiles = {32, 64, 96, 128, 192, 256};
  fa2.pads_to_tiles = true;
  out.push_back(fa2);
  AttentionRule fa3 = rule(arch, A::fa3, arch == G::sm90, 0, fa3_source);
  fa3.tiles = {64, 96, 128, 192, 256};
  fa3.pads_to_tiles = true;
  fa3.pairs = {{192, 128}};
  out.push_back(fa3);
}

/// FA4 on sm90 (8..256, any pair) and sm100 (<= 128, 192/128, 256/256); none below sm90 (TE utils.py:580-584).
void add_flash_4(std::vector<AttentionRule>& out, G arch) {
  AttentionRule fa4 = rule(arch, A::fa4, arch != G::sm80, arch == G::sm90 ? 256 : 128, fa4_source);
  fa4.any_pairs_within_max = true;
  if (arch == G::sm100) {
    fa4.extra_sizes = {256};
    fa4.pairs = {{192, 128}};
  }
  out.push_back(fa4);
}

void add_cudnn(std::vector<AttentionRule>& out, G arch) {
  AttentionRule cudnn = rule(arch, A::cudnn, true, arch == G::sm90 ? 256 : 128, cudnn_source);
  cudnn.any_pairs_within_max = true;
  if (arch != G::sm80) cudnn.pairs = {{192, 128}};
  if (arch == G::sm90) cudnn.pairs_refused_from = 128;
  if (arch == G::sm100) cudnn.extra_sizes = {256};
  out.push_back(cudnn);
}

std::vector<AttentionRule> make_rules() {
  std::vector<AttentionRule> r;
  for (const G arch : {G::sm80, G::sm90, G::sm100}) {
    add_flash_2_3(r, arch);
    add_flash_4(r, arch);
    add_cudnn(r, arch);
    AttentionRule unfused = rule(arch, A::unfused, true, max_dimension, unfused_source);
    unfused.any_pairs_within_max = true;
    r.push_back(unfused);
  }
  return r;
}

bool contains(const std::vector<std::int64_t>& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool runs_natively(const AttentionRule& r, std::int64_t qk, std::int64_t v) {
  if (qk == v) return qk <= r.max_any || contains(r.tiles, qk) || contains(r.extra_sizes, qk);
  if (std::find(r.pairs.begin(), r.pairs.end(), std::pair{qk, v}) != r.pairs.end()) return true;
  if (!r.any_pairs_within_max || std::max(qk, v) > r.max_any) return false;
  return r.pairs_refused_from == 0 || qk < r.pairs_refused_from || v < r.pairs_refused_from;
}

/// How one backend runs (qk, v): native, padded at its next tile, or refused (with why).
AttentionFit fit_on(const AttentionRule& r, std::int64_t qk, std::int64_t v, bool with_reason) {
  AttentionFit f;
  f.backend = r.backend;
  if (!r.available) {
    if (with_reason) f.reason = fmt::format("{} has no kernels for {}", to_string(r.backend), to_string(r.arch));
    return f;
  }
  if (qk % r.alignment != 0 || v % r.alignment != 0 || qk < 1 || v < 1) {
    if (with_reason) {
      f.reason = fmt::format("{} needs head dims that are multiples of {} (qk {}, v {})", to_string(r.backend),
                             r.alignment, qk, v);
    }
    return f;
  }
  if (runs_natively(r, qk, v)) {
    f.kind = KernelFitKind::native;
    f.executed_qk = qk;
    f.executed_v = v;
    return f;
  }
  const std::int64_t need = std::max(qk, v);
  if (r.pads_to_tiles && !r.tiles.empty() && need <= r.tiles.back()) {
    const std::int64_t tile = *std::lower_bound(r.tiles.begin(), r.tiles.end(), need);
    f.kind = KernelFitKind::padded;
    f.executed_qk = tile;
    f.executed_v = tile;
    if (with_reason) f.reason = fmt::format("{} runs ({}, {}) on its {} kernel", to_string(r.backend), qk, v, tile);
    return f;
  }
  if (with_reason) f.reason = fmt::format("{} on {} does not train ({}, {})", to_string(r.backend), to_string(r.arch), qk, v);
  return f;
}

}  // namespace

const std::vector<AttentionRule>& attention_rules() {
  static const std::vector<AttentionRule> rules = make_rules();
  return rules;
}

const AttentionRule& attention_rule(GpuArch arch, AttentionBackend backend) {
  // make_rules() lists the architectures in order, each with fa2, fa3, fa4, cudnn, unfused (the
  // enumerators after te_default): the row's index, checked.
  const std::size_t per_arch = 5;
  const auto b = static_cast<std::size_t>(backend);
  if (b >= 1 && b <= per_arch) {
    const std::size_t i = static_cast<std::size_t>(arch) * per_arch + (b - 1);
    const std::vector<AttentionRule>& rules = attention_rules();
    if (i < rules.size() && rules[i].arch == arch && rules[i].backend == backend) return rules[i];
  }
  throw Error(fmt::format("no attention rule for {} on {}; allowed: an explicit backend (fa2, fa3, fa4, cudnn, "
                          "unfused)",
                          to_string(backend), to_string(arch)),
              "attention_backend");
}

std::vector<AttentionBackend> attention_backend_order(GpuArch arch) {
  // TE get_attention_backend (utils.py:393): every available backend is filtered by the shape,
  // then on sm90+ FusedAttention wins over FlashAttention (utils.py:1647-1653); below sm90 flash wins.
  if (arch == G::sm80) return {A::fa2, A::cudnn};
  return {A::cudnn, A::fa2};
}

namespace {
AttentionFit fit_on_target(const KernelTarget& target, std::int64_t qk, std::int64_t v, bool with_reason) {
  if (target.attention != A::te_default) return fit_on(attention_rule(target.arch, target.attention), qk, v, with_reason);
  std::vector<std::string> reasons;
  for (const A backend : attention_backend_order(target.arch)) {
    AttentionFit f = fit_on(attention_rule(target.arch, backend), qk, v, with_reason);
    if (f.kind != KernelFitKind::refused) return f;
    if (with_reason) reasons.push_back(f.reason);
  }
  AttentionFit refused;
  if (with_reason) {
    refused.reason = fmt::format("no fused kernel trains ({}, {}) on {} (only TE's unfused attention would): {}", qk,
                                 v, to_string(target.arch), fmt::join(reasons, "; "));
  }
  return refused;
}
}  // namespace

AttentionFit attention_fit(const KernelTarget& target, std::int64_t qk, std::int64_t v) {
  return fit_on_target(target, qk, v, true);
}

AttentionFit attention_fit_brief(const KernelTarget& target, std::int64_t qk, std::int64_t v) {
  return fit_on_target(target, qk, v, false);
}

}  // namespace budget
