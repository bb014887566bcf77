// What the time model takes of an op's shape (op_shape.hpp; the formulas are in time_model.cpp's
// file comment).

#include "time/op_shape.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <tuple>

#include <fmt/format.h>

#include "budget/error.hpp"

namespace budget::detail {

std::int64_t shape_field(const CalibrationRow& row, const char* name) {
  const auto it = row.shape.find(name);
  if (it == row.shape.end()) {
    throw Error(fmt::format("a {} query needs the shape field \"{}\"", to_string(row.op), name), "<time model>");
  }
  return it->second;
}

double pass_weight(TimeQuery::Op op, TimeQuery::Pass pass) {
  if (op == TimeQuery::Op::gemm || op == TimeQuery::Op::expert_gemms) return 1.0;
  const double backward = op == TimeQuery::Op::attention ? 2.5 : 1.5;
  if (pass == TimeQuery::Pass::forward) return 1.0;
  if (pass == TimeQuery::Pass::backward) return backward;
  return 1.0 + backward;
}

TimeQuery::Pass weight_pass_of(const std::string& pass) {
  if (pass == "forward") return TimeQuery::Pass::forward;
  if (pass == "backward") return TimeQuery::Pass::backward;
  return TimeQuery::Pass::forward_backward;
}

double pass_weight(TimeQuery::Op op, const std::string& pass) { return pass_weight(op, weight_pass_of(pass)); }

double tiled_causal_keys(double doc_len, double tile) {
  const double n = std::ceil(doc_len / tile);
  return n * (n + 1.0) / 2.0 * tile * tile / doc_len;
}

double fallback_bytes_per_element(TimeQuery::Op op) {
  if (op == ProfileOp::swiglu) return 6.0;               // read gate and up, write the product (bf16)
  if (op == ProfileOp::router_softmax_topk) return 2.0;  // read the logits
  return 4.0;                                   // read and write one bf16 element
}

std::pair<std::string, std::string> attention_head_dim_class(std::int64_t hd) {
  const int bucket = hd <= 64 ? 0 : hd <= 128 ? 1 : 2;
  return {fmt::format("{}{}", hd % 8 == 0 ? 1 : 0, bucket),
          fmt::format("head_dim {}, {}", hd % 8 == 0 ? "a multiple of 8" : "not a multiple of 8",
                      bucket == 0 ? "≤ 64" : bucket == 1 ? "65–128" : "> 128")};
}

ShapeNumbers shape_numbers(TimeQuery::Op op, TimeQuery::Matrix matrix, TimeQuery::Pass pass,
                           const std::array<std::int64_t, TimeQuery::max_dims>& d) {
  ShapeNumbers s;
  const auto set_features = [&s](std::initializer_list<double> values) {
    for (const double v : values) s.features[s.feature_count++] = v;
  };
  const auto add_coord = [&s](double v) { s.coords[s.coord_count++] = std::log(v); };
  switch (op) {
    case TimeQuery::Op::gemm: {
      const double M = dbl(d[0]), K = dbl(d[1]), N = dbl(d[2]);
      s.cls_code = (d[1] % 8 == 0 ? 2 : 0) + (d[2] % 8 == 0 ? 1 : 0);
      set_features({1.0, 2 * M * K * N / 1e9, 2 * (M * K + K * N + M * N) / 1e6});
      add_coord(M);
      add_coord(K);
      add_coord(N);
      s.peak_flops = 2 * M * K * N;
      break;
    }
    case TimeQuery::Op::expert_gemms: {
      const std::int64_t H = d[2], width = d[3];
      const double E = dbl(d[0]), T = dbl(d[1]);
      std::int64_t in = H, out = width;
      if (matrix == TimeQuery::Matrix::up_gate) out = 2 * width;
      if (matrix == TimeQuery::Matrix::down) std::swap(in, out);
      const double i = dbl(in), o = dbl(out);
      s.cls_code = (in % 8 == 0 ? 2 : 0) + (out % 8 == 0 ? 1 : 0);
      set_features({1.0, 2 * E * T * i * o / 1e9, 2 * E * (T * i + i * o + T * o) / 1e6, E / 100});
      add_coord(E);
      add_coord(T);
      add_coord(i);
      add_coord(o);
      s.peak_flops = 2 * E * T * i * o;
      break;
    }
    case TimeQuery::Op::attention: {
      const std::int64_t hd = d[5];
      const double L = dbl(d[1]), T = dbl(d[2]);
      const double h = dbl(d[3]), kv = dbl(d[4]), dh = dbl(hd);
      const double d64 = std::ceil(dh / 64.0) * 64.0;
      s.cls_code = attention_class_code(hd);
      set_features({1.0, 4 * h * d64 * tiled_causal_keys(L, 128) * T / 1e12, T * (2 * h + 2 * kv) * dh / 1e9, T * h / 1e6});
      add_coord(L);
      add_coord(h);
      add_coord(kv);
      add_coord(dh);
      add_coord(T);
      // Exact causal keys (L + 1)/2 per query; forward 4·h·d·Ā·T, passes weighted 1 : 2.5.
      s.peak_flops = 4 * h * dh * (L + 1) / 2 * T * pass_weight(op, pass);
      break;
    }
    default: {
      const std::size_t fields = op == TimeQuery::Op::router_softmax_topk ? 3 : 2;
      double elements = 1;
      for (std::size_t f = 0; f < fields; ++f) {
        if (op == TimeQuery::Op::router_softmax_topk && f == 2) continue;  // top_k does not scale the bytes
        elements *= dbl(d[f]);
      }
      for (std::size_t f = 0; f < fields; ++f) add_coord(dbl(d[f]));
      set_features({1.0, elements / 1e9});
      s.peak_bytes = fallback_bytes_per_element(op) * elements * pass_weight(op, pass);
      break;
    }
  }
  return s;
}

std::string family_of(ProfileOp op, const std::string& pass, const CalibrationRow& row,
                      const std::string& backend) {
  // A precision other than bf16 is a family of its own (other kernels, another peak).
  const bool bf16 = row.dtype.empty() || row.dtype == name_of(profile_dtype_names, TimeQuery::Dtype::bf16);
  const std::string dtype = bf16 ? "" : "|" + row.dtype;
  if (op == ProfileOp::expert_gemms) {
    return fmt::format("expert_gemms|{}|{}{}{}", pass, row.matrix == "down" ? "down" : "up",
                       row.routing == "skewed" ? "|skewed" : "", dtype);
  }
  if (op == ProfileOp::attention) return fmt::format("attention|{}|{}{}", pass, backend, dtype);
  return std::string(to_string(op)) + "|" + pass + dtype;
}

std::string fallback_dtype(const std::string& dtype) {
  const TimeQuery::Dtype d = dtype_of(dtype);
  if (d == TimeQuery::Dtype::mxfp8 || d == TimeQuery::Dtype::fp8_block) return dtype_name(TimeQuery::Dtype::fp8);
  return "";
}

TimeQuery::Dtype dtype_of(const std::string& dtype) {
  return enum_named(profile_dtype_names, dtype).value_or(TimeQuery::Dtype::bf16);
}

std::string dtype_name(TimeQuery::Dtype dtype) {
  return dtype == TimeQuery::Dtype::bf16 ? "" : std::string(name_of(profile_dtype_names, dtype, ""));
}

std::array<std::int64_t, TimeQuery::max_dims> row_dims(const CalibrationRow& row) {
  std::array<std::int64_t, TimeQuery::max_dims> d{};
  if (row.op == ProfileOp::expert_gemms) {
    d[2] = shape_field(row, "H");
    d[3] = shape_field(row, "expert_dim");
    d[0] = shape_field(row, "E");
    d[1] = shape_field(row, "tokens_per_expert");
  } else if (row.op == ProfileOp::attention) {
    d[5] = shape_field(row, "head_dim");
    d[1] = shape_field(row, "doc_len");
    d[2] = shape_field(row, "tokens");
    d[3] = shape_field(row, "num_heads");
    d[4] = shape_field(row, "num_kv_heads");
  } else {
    const auto fields = calibration_shape_fields(row.op);
    for (std::size_t i = 0; i < fields.required.size() && i < d.size(); ++i) d[i] = shape_field(row, fields.required[i].c_str());
  }
  return d;
}

TimeQuery::Matrix matrix_of(const std::string& matrix) {
  if (matrix == "up_gate") return TimeQuery::Matrix::up_gate;
  if (matrix == "up") return TimeQuery::Matrix::up;
  if (matrix == "down") return TimeQuery::Matrix::down;
  return TimeQuery::Matrix::none;
}

Shaped describe(const CalibrationRow& row, const std::string& pass, const std::string& backend) {
  Shaped s;
  s.family = family_of(row.op, pass, row, backend);
  const TimeQuery::Op op = row.op;
  const auto d = row_dims(row);
  const ShapeNumbers n = shape_numbers(op, matrix_of(row.matrix), weight_pass_of(pass), d);
  s.features.assign(n.features.begin(), n.features.begin() + static_cast<std::ptrdiff_t>(n.feature_count));
  s.coords.assign(n.coords.begin(), n.coords.begin() + static_cast<std::ptrdiff_t>(n.coord_count));
  s.peak_flops = n.peak_flops;
  s.peak_bytes = n.peak_bytes;
  const auto yes = [](bool b) { return b ? "yes" : "no"; };
  const bool k8 = (n.cls_code & 2) != 0, n8 = (n.cls_code & 1) != 0;
  if (op == TimeQuery::Op::gemm || op == TimeQuery::Op::expert_gemms) {
    s.cls = fmt::format("{}{}", k8 ? 1 : 0, n8 ? 1 : 0);
    s.cls_description = fmt::format("{}K multiple of 8: {}, N multiple of 8: {}",
                                    op == TimeQuery::Op::gemm ? "" : "GEMM ", yes(k8), yes(n8));
  } else if (op == TimeQuery::Op::attention) {
    std::tie(s.cls, s.cls_description) = attention_head_dim_class(d[5]);
  }
  return s;
}

std::vector<std::string> coord_names(const CalibrationRow& q) {
  if (q.op == ProfileOp::gemm) return {"M (tokens)", "K", "N"};
  if (q.op == ProfileOp::expert_gemms) {
    if (q.matrix == "down") return {"experts", "tokens per expert", "expert width", "hidden size"};
    return {"experts", "tokens per expert", "hidden size", q.matrix == "up_gate" ? "2 × expert width" : "expert width"};
  }
  if (q.op == ProfileOp::attention) return {"doc_len", "num_heads", "num_kv_heads", "head_dim", "tokens"};
  return calibration_shape_fields(q.op).required;
}

}  // namespace budget::detail
