#include "budget/config.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "config/config_checks.hpp"
#include "config/config_names.hpp"

namespace budget {

std::int64_t ArchConfig::executions_of_layer(std::int64_t layer) const {
  if (loop && layer >= loop->first && layer <= loop->last) return loop->repeats;
  return 1;
}

std::int64_t ArchConfig::executed_layers() const {
  return num_layers + (loop ? loop->extra_executed_layers() : 0);
}

std::int64_t ArchConfig::dense_ffn_layers() const {
  if (!layer_ffns.empty()) return layer_counts().dense.physical;
  return ffn.is_moe() ? std::min(ffn.first_dense_layers, num_layers) : num_layers;
}

std::int64_t ArchConfig::executed_dense_ffn_layers() const {
  if (!layer_ffns.empty()) return layer_counts().dense.executed;
  const std::int64_t dense = dense_ffn_layers();
  if (!loop || dense == 0) return dense;
  // Dense layers are 1..dense; the loop re-executes the overlap [first, min(last, dense)].
  const std::int64_t overlap = std::max<std::int64_t>(0, std::min(loop->last, dense) - loop->first + 1);
  return dense + (loop->repeats - 1) * overlap;
}

std::string_view to_string(QkNorm norm) { return detail::name_of(detail::qk_norm_names, norm); }
std::string_view to_string(LayerAttention kind) { return detail::name_of(detail::layer_attention_names, kind); }
std::string_view to_string(LayerMixer kind) { return detail::name_of(detail::layer_mixer_names, kind); }
std::string_view to_string(LayerFfn kind) { return detail::name_of(detail::layer_ffn_names, kind); }
std::string_view to_string(NormKind kind) { return detail::name_of(detail::norm_kind_names, kind); }
std::string_view to_string(RouterScore score) { return detail::name_of(detail::router_score_names, score); }

bool RouterGroups::fits(const FfnConfig& f) const {
  if (!f.is_moe() || groups < 2 || f.num_experts % groups != 0) return false;
  const std::int64_t per_group = f.num_experts / groups;
  return top_groups >= 1 && top_groups <= groups && score_top >= 1 && score_top <= per_group &&
         f.top_k <= top_groups * per_group;
}

LoopConfig centred_loop(std::int64_t num_layers, double span_fraction, std::int64_t repeats) {
  if (!(span_fraction > 0.0 && span_fraction <= 1.0)) {
    throw Error(fmt::format("span_fraction {} is out of range; allowed: a number in (0, 1]", span_fraction),
                "", "/loop/span_fraction");
  }
  if (num_layers < 1) throw Error("num_layers must be at least 1 to place a loop", "", "/num_layers");
  if (repeats < 1) {
    throw Error(fmt::format("repeats {} is out of range; allowed: an integer >= 1", repeats), "", "/loop/repeats");
  }
  // round half away from zero, as std::llround does: round(0.5·L) for the paper's even depths.
  const std::int64_t span = std::llround(span_fraction * static_cast<double>(num_layers));
  if (span < 1) {
    throw Error(fmt::format("span_fraction {} of {} layers rounds to an empty loop; allowed: a fraction "
                            "giving at least one layer (>= {:.4g})",
                            span_fraction, num_layers, 0.5 / static_cast<double>(num_layers)),
                "", "/loop/span_fraction");
  }
  LoopConfig loop;
  loop.first = (num_layers - span) / 2 + 1;
  loop.last = loop.first + span - 1;
  loop.repeats = repeats;
  return loop;
}

namespace {
using Check = detail::ConfigCheck;
using detail::first_out_of_range;
using detail::range;
using detail::unless;

Check check_sizes(const ArchConfig& c) {
  const auto& a = c.attention;
  if (auto p = range(c.hidden_size, 1, max_dimension, "/hidden_size")) return p;
  if (auto p = range(c.num_layers, 1, 1'000'000, "/num_layers")) return p;
  if (auto p = range(c.vocab_size, 0, max_dimension, "/vocab_size")) return p;
  if (auto p = range(a.num_heads, 1, max_dimension, "/attention/num_heads")) return p;
  if (auto p = range(a.head_dim, 1, max_dimension, "/attention/head_dim")) return p;
  if (auto p = range(a.num_kv_heads, 1, max_dimension, "/attention/num_kv_heads")) return p;
  return unless(a.num_heads % a.num_kv_heads == 0, "/attention/num_kv_heads", [&] {
    return fmt::format("num_kv_heads {} does not divide num_heads {}; allowed: a divisor of num_heads "
                       "(grouped-query attention shares each KV head among num_heads/num_kv_heads query heads)",
                       a.num_kv_heads, a.num_heads);
  });
}

Check check_mla(const ArchConfig& c) {
  const auto& a = c.attention;
  if (!a.mla) return std::nullopt;
  const MlaConfig& m = *a.mla;
  if (auto p = first_out_of_range({{m.q_lora_rank, 0, max_dimension, "/attention/mla/q_lora_rank"},
                                   {m.kv_lora_rank, 1, max_dimension, "/attention/mla/kv_lora_rank"},
                                   {m.qk_nope_head_dim, 0, max_dimension, "/attention/mla/qk_nope_head_dim"},
                                   {m.qk_rope_head_dim, 0, max_dimension, "/attention/mla/qk_rope_head_dim"}})) {
    return p;
  }
  // RoPE rotates pairs of dims (transformers' rotate_half splits the rotary width in halves, its
  // inverse frequencies number width/2): an odd rotary width does not run.
  if (auto p = unless(m.qk_rope_head_dim % 2 == 0, "/attention/mla/qk_rope_head_dim", [&] {
        return fmt::format("qk_rope_head_dim {} is odd; allowed: an even width (rotary embeddings rotate pairs of "
                           "dims)",
                           m.qk_rope_head_dim);
      }))
    return p;
  if (auto p = range(m.v_head_dim, 1, max_dimension, "/attention/mla/v_head_dim")) return p;
  if (auto p = unless(a.head_dim == m.qk_head_dim(), "/attention/head_dim", [&] {
        return fmt::format("head_dim {} differs from qk_nope_head_dim + qk_rope_head_dim = {}; with multi-head "
                           "latent attention head_dim is the query/key head width (leave it out)",
                           a.head_dim, m.qk_head_dim());
      }))
    return p;
  if (auto p = unless(a.num_kv_heads == 1, "/attention/num_kv_heads", [&] {
        return fmt::format("num_kv_heads {} given with multi-head latent attention; allowed: 1 (in the absorbed "
                           "form every query head reads one shared latent; leave it out)",
                           a.num_kv_heads);
      }))
    return p;
  if (auto p = unless(!a.qkv_bias && !a.output_bias, "/attention/qkv_bias", [] {
        return std::string("attention biases with multi-head latent attention are not modelled; allowed: false");
      }))
    return p;
  return unless(a.qk_norm == QkNorm::none, "/attention/qk_norm", [] {
    return std::string("query/key norms with multi-head latent attention are not modelled (its latent norms "
                       "are counted); allowed: \"none\"");
  });
}

Check check_layer_attention(const ArchConfig& c) {
  const auto& a = c.attention;
  if (auto p = range(a.sliding_window, 0, max_dimension, "/attention/sliding_window")) return p;
  if (auto p = unless(a.layer_types.empty() || static_cast<std::int64_t>(a.layer_types.size()) == c.num_layers,
                      "/attention/layer_types", [&] {
                        return fmt::format("layer_types lists {} layers but num_layers is {}; allowed: one entry "
                                           "per layer, or absent (every layer full)",
                                           a.layer_types.size(), c.num_layers);
                      }))
    return p;
  if (auto p = unless((c.sliding_attention_layers() > 0) == (a.sliding_window > 0), "/attention/sliding_window", [&] {
        return a.sliding_window > 0
                   ? fmt::format("sliding_window {} given but no layer of layer_types is \"sliding\"; allowed: 0 or "
                                 "absent, or mark the sliding layers",
                                 a.sliding_window)
                   : std::string("layer_types has \"sliding\" layers but sliding_window is 0; allowed: the window "
                                 "in keys, >= 1");
      }))
    return p;
  return range(c.mtp_layers, 0, 1024, "/mtp_layers");
}

Check check_ffn_sizes(const ArchConfig& c) {
  const auto& f = c.ffn;
  if (auto p = range(f.num_experts, 0, max_dimension, "/ffn/num_experts")) return p;
  if (auto p = range(f.num_shared_experts, 0, max_dimension, "/ffn/num_shared_experts")) return p;
  if (auto p = range(f.first_dense_layers, 0, c.num_layers, "/ffn/first_dense_layers")) return p;
  if (auto p = range(f.dense_dim, 0, max_dimension, "/ffn/dense_dim")) return p;
  if (auto p = range(f.expert_dim, 0, max_dimension, "/ffn/expert_dim")) return p;
  return range(f.shared_expert_dim, 0, max_dimension, "/ffn/shared_expert_dim");
}

Check check_moe_ffn(const FfnConfig& f) {
  if (auto p = unless(f.top_k >= 1 && f.top_k <= f.num_experts, "/ffn/top_k", [&] {
        return fmt::format("top_k {} is out of range; allowed: an integer in [1, num_experts = {}]", f.top_k,
                           f.num_experts);
      }))
    return p;
  if (auto p = unless(f.expert_dim >= 1, "/ffn/expert_dim", [&] {
        return fmt::format("expert_dim {} must be at least 1 for an MoE layer (num_experts = {})", f.expert_dim,
                           f.num_experts);
      }))
    return p;
  if (auto p = unless(f.num_shared_experts == 0 || f.shared_expert_dim >= 1, "/ffn/shared_expert_dim", [&] {
        return fmt::format("shared_expert_dim {} must be at least 1 when num_shared_experts = {}", f.shared_expert_dim,
                           f.num_shared_experts);
      }))
    return p;
  return unless(f.first_dense_layers == 0 || f.dense_dim >= 1, "/ffn/dense_dim", [&] {
    return fmt::format("dense_dim {} must be at least 1 when first_dense_layers = {}", f.dense_dim,
                       f.first_dense_layers);
  });
}

Check check_dense_ffn(const FfnConfig& f) {
  if (auto p = unless(f.dense_dim >= 1, "/ffn/dense_dim", [&] {
        return fmt::format("dense_dim {} must be at least 1 for a dense model (num_experts = 0)", f.dense_dim);
      }))
    return p;
  if (auto p = unless(f.top_k == 0, "/ffn/top_k", [&] {
        return fmt::format("top_k {} given for a dense model (num_experts = 0); allowed: 0 or absent", f.top_k);
      }))
    return p;
  if (auto p = unless(f.num_shared_experts == 0, "/ffn/num_shared_experts", [&] {
        return fmt::format("num_shared_experts {} given for a dense model (num_experts = 0); allowed: 0 or absent",
                           f.num_shared_experts);
      }))
    return p;
  return unless(!f.router_bias && !f.shared_expert_gate, f.router_bias ? "/ffn/router_bias" : "/ffn/shared_expert_gate",
                [] { return std::string("a router bias or shared-expert gate needs an MoE model; allowed: false"); });
}

Check check_loop(const ArchConfig& c) {
  if (!c.loop) return std::nullopt;
  const auto& l = *c.loop;
  if (auto p = range(l.first, 1, c.num_layers, "/loop/first")) return p;
  if (auto p = unless(l.last >= l.first && l.last <= c.num_layers, "/loop/last", [&] {
        return fmt::format("loop last layer {} is outside [first = {}, num_layers = {}]", l.last, l.first,
                           c.num_layers);
      }))
    return p;
  return range(l.repeats, 1, 1024, "/loop/repeats");
}

/// The router settings name routed experts: an MoE model's, in equal groups that hold the top_k.
Check check_router_settings(const ArchConfig& c) {
  const ModelSettings& s = c.settings;
  const FfnConfig& f = c.ffn;
  if (auto p = unless(!s.router_scaling_factor || f.is_moe(), "/settings/router_scaling_factor", [] {
        return std::string("a router scaling factor needs an MoE model; allowed: absent");
      }))
    return p;
  if (!s.router_groups) return std::nullopt;
  const RouterGroups& g = *s.router_groups;
  if (auto p = unless(f.is_moe() && f.num_experts % g.groups == 0, "/settings/router_groups/groups", [&] {
        return fmt::format("{} expert groups do not split the {} routed experts into equal groups", g.groups,
                           f.num_experts);
      }))
    return p;
  if (auto p = range(g.top_groups, 1, g.groups, "/settings/router_groups/top_groups")) return p;
  const std::int64_t per_group = f.num_experts / g.groups;
  if (auto p = range(g.score_top, 1, per_group, "/settings/router_groups/score_top")) return p;
  return unless(f.top_k <= g.top_groups * per_group, "/settings/router_groups/top_groups", [&] {
    return fmt::format("{} groups of {} experts hold fewer than top_k = {}", g.top_groups, per_group, f.top_k);
  });
}

/// An upper bound of the parameters (and so of the per-token FLOPs' scale), in long double so
/// that no integer product can overflow before the check.
long double size_bound(const ArchConfig& c) {
  const auto& a = c.attention;
  const auto& f = c.ffn;
  const long double H = static_cast<long double>(c.hidden_size);
  const long double m = static_cast<long double>(f.matrices_per_mlp());
  // q and kv are each below 2^62 (two factors <= 2^31 - 1), but q + 2·kv can pass 2^63: sum them
  // in long double too.
  const long double q = static_cast<long double>(a.query_width());
  const long double kv = static_cast<long double>(a.kv_width());
  long double attention = H * (q + 2 * kv) + q * H;
  if (a.mla) {
    const long double heads = static_cast<long double>(a.num_heads);
    const long double q_lora = static_cast<long double>(a.mla->q_lora_rank);
    const long double kv_lora = static_cast<long double>(a.mla->kv_lora_rank);
    const long double rope = static_cast<long double>(a.mla->qk_rope_head_dim);
    const long double v = static_cast<long double>(a.mla->v_head_dim);
    attention = H * q_lora + (q_lora > 0 ? q_lora : H) * q + H * (kv_lora + rope) +
                kv_lora * heads * (static_cast<long double>(a.mla->qk_nope_head_dim) + v) + heads * v * H;
  }
  const long double ffn_params =
      m * H *
          (static_cast<long double>(f.num_experts) * static_cast<long double>(f.expert_dim) +
           static_cast<long double>(f.num_shared_experts) * static_cast<long double>(f.shared_expert_dim) +
           static_cast<long double>(f.dense_dim)) +
      H * static_cast<long double>(f.num_experts);
  const long double executed = static_cast<long double>(c.num_layers) *
                               static_cast<long double>(c.loop ? c.loop->repeats : 1);
  // LayerNorm biases, q/k norms, MLP biases and the LM-head bias are below these terms' scale;
  // MTP modules add at most one layer each plus a 2H × H projection.
  const long double mtp = static_cast<long double>(c.mtp_layers);
  return (attention + ffn_params + detail::mixer_size_bound(c) + 4 * H) * executed +
         2 * H * static_cast<long double>(c.vocab_size) + (attention + ffn_params + 2 * H * H + 8 * H) * mtp;
}

// Totals must fit comfortably in 64 bits.
Check check_totals(const ArchConfig& c) {
  const long double bound = size_bound(c);
  return unless(bound < 4.0e18L, "/", [&] {
    return fmt::format("the config is too large: about {:.3g} parameters or FLOPs per token, beyond the "
                       "supported 4e18 (64-bit counts); check the sizes for a typo",
                       static_cast<double>(bound));
  });
}

Check first_problem(const ArchConfig& c) {
  if (auto p = check_sizes(c)) return p;
  if (auto p = check_mla(c)) return p;
  if (auto p = detail::check_layer_kinds(c)) return p;  // before the sliding-window rule: names the layer
  if (auto p = check_layer_attention(c)) return p;
  if (auto p = check_ffn_sizes(c)) return p;
  if (auto p = c.ffn.is_moe() ? check_moe_ffn(c.ffn) : check_dense_ffn(c.ffn)) return p;
  if (auto p = check_loop(c)) return p;
  if (auto p = check_router_settings(c)) return p;
  return check_totals(c);  // last: the bound assumes the sizes above are in range
}
}  // namespace

std::string validation_error(const ArchConfig& config) {
  const Check problem = first_problem(config);
  return problem ? fmt::format("{}: {}", problem->path, problem->message) : std::string{};
}

void validate(const ArchConfig& config, const std::string& source) {
  if (Check problem = first_problem(config)) throw Error(std::move(problem->message), source, problem->path);
}

}  // namespace budget
