#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace budget::profiler::reference {
namespace {
std::size_t z(std::int64_t v) { return static_cast<std::size_t>(v); }
}  // namespace

Vec gemm(const std::string& pass, std::int64_t M, std::int64_t K, std::int64_t N, const FVec& x, const FVec& w,
         const FVec& dy) {
  Vec out;
  if (pass == "forward") {
    out.assign(z(M * N), 0.0);
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (std::int64_t k = 0; k < K; ++k) s += double{x[z(m * K + k)]} * w[z(n * K + k)];
        out[z(m * N + n)] = s;
      }
  } else if (pass == "input_grad") {
    out.assign(z(M * K), 0.0);
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t k = 0; k < K; ++k) {
        double s = 0;
        for (std::int64_t n = 0; n < N; ++n) s += double{dy[z(m * N + n)]} * w[z(n * K + k)];
        out[z(m * K + k)] = s;
      }
  } else if (pass == "weight_grad") {
    out.assign(z(N * K), 0.0);
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t k = 0; k < K; ++k) {
        double s = 0;
        for (std::int64_t m = 0; m < M; ++m) s += double{dy[z(m * N + n)]} * x[z(m * K + k)];
        out[z(n * K + k)] = s;
      }
  } else {
    throw std::invalid_argument("reference::gemm: unknown pass " + pass);
  }
  return out;
}

void rms_norm_forward(const FVec& x, const FVec& w, std::int64_t tokens, std::int64_t hidden, double eps, Vec& y,
                      Vec& rstd) {
  y.assign(z(tokens * hidden), 0.0);
  rstd.assign(z(tokens), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    double ss = 0;
    for (std::int64_t i = 0; i < hidden; ++i) ss += double{x[z(t * hidden + i)]} * x[z(t * hidden + i)];
    const double r = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + eps);
    rstd[z(t)] = r;
    for (std::int64_t i = 0; i < hidden; ++i) y[z(t * hidden + i)] = x[z(t * hidden + i)] * r * w[z(i)];
  }
}

void rms_norm_backward(const FVec& x, const FVec& dy, const FVec& w, std::int64_t tokens, std::int64_t hidden,
                       double eps, Vec& dx, Vec& dw) {
  Vec y, rstd;
  rms_norm_forward(x, w, tokens, hidden, eps, y, rstd);
  dx.assign(z(tokens * hidden), 0.0);
  dw.assign(z(hidden), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double r = rstd[z(t)];
    double dot = 0;
    for (std::int64_t i = 0; i < hidden; ++i) dot += double{dy[z(t * hidden + i)]} * w[z(i)] * x[z(t * hidden + i)];
    for (std::int64_t i = 0; i < hidden; ++i) {
      const double g = double{dy[z(t * hidden + i)]} * w[z(i)];
      dx[z(t * hidden + i)] = r * g - x[z(t * hidden + i)] * r * r * r * dot / static_cast<double>(hidden);
      dw[z(i)] += double{dy[z(t * hidden + i)]} * x[z(t * hidden + i)] * r;
    }
  }
}

namespace {
double sigmoid(double g) { return 1.0 / (1.0 + std::exp(-g)); }
}  // namespace

Vec swiglu_forward(const FVec& gu, std::int64_t rows, std::int64_t dim) {
  Vec y(z(rows * dim));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dim; ++c) {
      const double g = gu[z(r * 2 * dim + c)], u = gu[z(r * 2 * dim + dim + c)];
      y[z(r * dim + c)] = g * sigmoid(g) * u;
    }
  return y;
}

Vec swiglu_backward(const FVec& gu, const FVec& dy, std::int64_t rows, std::int64_t dim) {
  Vec d(z(rows * 2 * dim));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < dim; ++c) {
      const double g = gu[z(r * 2 * dim + c)], u = gu[z(r * 2 * dim + dim + c)], s = sigmoid(g);
      const double e = dy[z(r * dim + c)];
      d[z(r * 2 * dim + c)] = e * u * s * (1.0 + g * (1.0 - s));
      d[z(r * 2 * dim + dim + c)] = e * g * s;
    }
  return d;
}

namespace {
Vec softmax_row(const FVec& logits, std::int64_t t, std::int64_t experts) {
  Vec p(z(experts));
  double m = -std::numeric_limits<double>::infinity();
  for (std::int64_t e = 0; e < experts; ++e) m = std::max(m, double{logits[z(t * experts + e)]});
  double s = 0;
  for (std::int64_t e = 0; e < experts; ++e) s += p[z(e)] = std::exp(logits[z(t * experts + e)] - m);
  for (double& v : p) v /= s;
  return p;
}
}  // namespace

void router_forward(const FVec& logits, std::int64_t tokens, std::int64_t experts, std::int64_t top_k, Vec& weights,
                    std::vector<std::int32_t>& indices) {
  weights.assign(z(tokens * top_k), 0.0);
  indices.assign(z(tokens * top_k), 0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const Vec p = softmax_row(logits, t, experts);
    std::vector<std::int32_t> order(z(experts));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return p[z(a)] > p[z(b)]; });
    for (std::int64_t k = 0; k < top_k; ++k) {
      indices[z(t * top_k + k)] = order[z(k)];
      weights[z(t * top_k + k)] = p[z(order[z(k)])];
    }
  }
}

Vec router_backward(const FVec& logits, const std::vector<std::int32_t>& indices, const FVec& dweights,
                    std::int64_t tokens, std::int64_t experts, std::int64_t top_k) {
  Vec d(z(tokens * experts));
  for (std::int64_t t = 0; t < tokens; ++t) {
    const Vec p = softmax_row(logits, t, experts);
    Vec g(z(experts), 0.0);
    for (std::int64_t k = 0; k < top_k; ++k) g[z(indices[z(t * top_k + k)])] += dweights[z(t * top_k + k)];
    double pg = 0;
    for (std::int64_t e = 0; e < experts; ++e) pg += p[z(e)] * g[z(e)];
    for (std::int64_t e = 0; e < experts; ++e) d[z(t * experts + e)] = p[z(e)] * (g[z(e)] - pg);
  }
  return d;
}

Vec gather(const FVec& x, const std::vector<std::int32_t>& src, std::int64_t hidden) {
  Vec rows(src.size() * z(hidden));
  for (std::size_t r = 0; r < src.size(); ++r)
    for (std::int64_t c = 0; c < hidden; ++c) rows[r * z(hidden) + z(c)] = x[z(src[r] * hidden + c)];
  return rows;
}

Vec combine(const FVec& rows, const std::vector<std::int32_t>& perm, const FVec& weights, std::int64_t tokens,
            std::int64_t top_k, std::int64_t hidden) {
  Vec out(z(tokens * hidden), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t j = 0; j < top_k; ++j) {
      const double wj = weights.empty() ? 1.0 : weights[z(t * top_k + j)];
      const std::int64_t r = perm[z(t * top_k + j)];
      for (std::int64_t c = 0; c < hidden; ++c) out[z(t * hidden + c)] += wj * rows[z(r * hidden + c)];
    }
  return out;
}

Vec combine_backward(const FVec& dout, const std::vector<std::int32_t>& perm, const FVec& weights, std::int64_t tokens,
                     std::int64_t top_k, std::int64_t hidden, std::int64_t rows) {
  Vec d(z(rows * hidden), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t j = 0; j < top_k; ++j) {
      const std::int64_t r = perm[z(t * top_k + j)];
      for (std::int64_t c = 0; c < hidden; ++c) d[z(r * hidden + c)] = weights[z(t * top_k + j)] * dout[z(t * hidden + c)];
    }
  return d;
}

namespace {
// Index of element (doc, position, head, dim) in a [docs·len, heads, d] tensor.
std::size_t at(const AttentionShape& s, std::int64_t b, std::int64_t i, std::int64_t h, std::int64_t heads,
               std::int64_t c) {
  return z(((b * s.len + i) * heads + h) * s.head_dim + c);
}

// P (len × len, causal, row-softmaxed) of document b, query head h.
Vec probabilities(const AttentionShape& s, const FVec& q, const FVec& k, std::int64_t b, std::int64_t h) {
  const std::int64_t g = h / (s.heads / s.kv_heads);
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  Vec p(z(s.len * s.len), 0.0);
  for (std::int64_t i = 0; i < s.len; ++i) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j <= i; ++j) {
      double dot = 0;
      for (std::int64_t c = 0; c < s.head_dim; ++c)
        dot += double{q[at(s, b, i, h, s.heads, c)]} * k[at(s, b, j, g, s.kv_heads, c)];
      p[z(i * s.len + j)] = dot * scale;
      m = std::max(m, dot * scale);
    }
    double sum = 0;
    for (std::int64_t j = 0; j <= i; ++j) sum += p[z(i * s.len + j)] = std::exp(p[z(i * s.len + j)] - m);
    for (std::int64_t j = 0; j <= i; ++j) p[z(i * s.len + j)] /= sum;
  }
  return p;
}
}  // namespace

Vec attention_forward(const AttentionShape& s, const FVec& q, const FVec& k, const FVec& v) {
  Vec o(z(s.docs * s.len * s.heads * s.head_dim), 0.0);
  for (std::int64_t b = 0; b < s.docs; ++b)
    for (std::int64_t h = 0; h < s.heads; ++h) {
      const std::int64_t g = h / (s.heads / s.kv_heads);
      const Vec p = probabilities(s, q, k, b, h);
      for (std::int64_t i = 0; i < s.len; ++i)
        for (std::int64_t j = 0; j <= i; ++j)
          for (std::int64_t c = 0; c < s.head_dim; ++c)
            o[at(s, b, i, h, s.heads, c)] += p[z(i * s.len + j)] * v[at(s, b, j, g, s.kv_heads, c)];
    }
  return o;
}

void attention_backward(const AttentionShape& s, const FVec& q, const FVec& k, const FVec& v, const FVec& dout,
                        Vec& dq, Vec& dk, Vec& dv) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  const Vec o = attention_forward(s, q, k, v);
  dq.assign(q.size(), 0.0);
  dk.assign(k.size(), 0.0);
  dv.assign(v.size(), 0.0);
  for (std::int64_t b = 0; b < s.docs; ++b)
    for (std::int64_t h = 0; h < s.heads; ++h) {
      const std::int64_t g = h / (s.heads / s.kv_heads);
      const Vec p = probabilities(s, q, k, b, h);
      for (std::int64_t i = 0; i < s.len; ++i) {
        double row = 0;  // Σ_c dO·O
        for (std::int64_t c = 0; c < s.head_dim; ++c)
          row += double{dout[at(s, b, i, h, s.heads, c)]} * o[at(s, b, i, h, s.heads, c)];
        for (std::int64_t j = 0; j <= i; ++j) {
          const double pij = p[z(i * s.len + j)];
          double dp = 0;
          for (std::int64_t c = 0; c < s.head_dim; ++c)
            dp += double{dout[at(s, b, i, h, s.heads, c)]} * v[at(s, b, j, g, s.kv_heads, c)];
          const double ds = pij * (dp - row);
          for (std::int64_t c = 0; c < s.head_dim; ++c) {
            dq[at(s, b, i, h, s.heads, c)] += scale * ds * k[at(s, b, j, g, s.kv_heads, c)];
            dk[at(s, b, j, g, s.kv_heads, c)] += scale * ds * q[at(s, b, i, h, s.heads, c)];
            dv[at(s, b, j, g, s.kv_heads, c)] += pij * dout[at(s, b, i, h, s.heads, c)];
          }
        }
      }
    }
}

double relative_error(const FVec& out, const Vec& ref) {
  if (out.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) return std::numeric_limits<double>::infinity();
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace budget::profiler::reference
