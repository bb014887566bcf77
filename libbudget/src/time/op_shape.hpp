#pragma once
// Private: what the time model takes of an op's shape (time_model.cpp's file comment has the
// formulas): its family and alignment class, the fit's regressors, the log-shape coordinates of
// the neighbour search and the FLOPs / bytes of the no-rows fallback. Shared by the row path
// (TimeModel::predict()) and the typed path (TimeModel::predict_ms()).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/time_model.hpp"
#include "time/profile_ops.hpp"

namespace budget::detail {

inline double dbl(std::int64_t v) { return static_cast<double>(v); }

/// The shape field `name` of a row; a budget::Error naming the op and the field when it is missing.
std::int64_t shape_field(const CalibrationRow& row, const char* name);

inline bool is_gemm_like(ProfileOp op) { return op == ProfileOp::gemm || op == ProfileOp::expert_gemms; }

/// Relative cost of the passes of an op, for deriving a pass that has no rows from one that has:
/// GEMM passes cost the same FLOPs; attention backward = 2.5 × forward (FlashAttention's count);
/// a memory-bound op's backward moves about 1.5 × its forward's bytes (RMSNorm: 3 of 5 elements).
double pass_weight(TimeQuery::Op op, TimeQuery::Pass pass);

/// A pass name as pass_weight() reads it: anything but forward and backward weighs as forward+backward
/// (GEMM passes all weigh 1).
TimeQuery::Pass weight_pass_of(const std::string& pass);

double pass_weight(TimeQuery::Op op, const std::string& pass);

/// Keys per query a causal kernel with square `tile`×`tile` blocks computes over a document of L
/// tokens: n = ⌈L/tile⌉ block rows, n(n+1)/2 blocks of tile² scores, over L queries.
double tiled_causal_keys(double doc_len, double tile);

/// Forward bytes per element of a memory-bound op (fallback when a profile has no rows of it).
double fallback_bytes_per_element(TimeQuery::Op op);

/// The attention class of a head_dim as an integer: 3·(d mod 8 = 0) + (0: d ≤ 64 | 1: 65–128 | 2: > 128).
inline int attention_class_code(std::int64_t hd) { return (hd % 8 == 0 ? 3 : 0) + (hd <= 64 ? 0 : hd <= 128 ? 1 : 2); }

/// The attention class of a head_dim: (d mod 8 = 0, d ≤ 64 | 65–128 | > 128) as a key and in words.
std::pair<std::string, std::string> attention_head_dim_class(std::int64_t hd);

/// The numbers the model takes of a shape (the formulas of the file comment), shared by the row
/// path (describe()) and the typed path (TimeModel::predict_ms()).
struct ShapeNumbers {
  std::array<double, 4> features{};
  std::size_t feature_count = 0;
  std::array<double, 6> coords{};
  std::size_t coord_count = 0;
  int cls_code = 0;        ///< gemm-like: 2·(K mod 8 = 0) + (N mod 8 = 0); attention: attention_class_code(); else 0
  double peak_flops = 0;   ///< FLOPs of the pass for the no-rows fallback (GEMMs, attention)
  double peak_bytes = 0;   ///< bytes of the pass for the no-rows fallback (memory-bound ops)
};

/// `d`: the TimeQuery dims of the op (the fields it reads; see TimeQuery).
ShapeNumbers shape_numbers(TimeQuery::Op op, TimeQuery::Matrix matrix, TimeQuery::Pass pass,
                           const std::array<std::int64_t, TimeQuery::max_dims>& d);

/// What the model needs of a row or query.
struct Shaped {
  std::string family;
  std::string cls;
  std::string cls_description;
  std::vector<double> features;
  std::vector<double> coords;
  double peak_flops = 0;   ///< FLOPs of the pass for the no-rows fallback (GEMMs, attention)
  double peak_bytes = 0;   ///< bytes of the pass for the no-rows fallback (memory-bound ops)
};

/// The family of a row's fit: (op, pass), plus the matrix kind and routing for expert GEMMs and the
/// backend for attention.
std::string family_of(ProfileOp op, const std::string& pass, const CalibrationRow& row,
                      const std::string& backend);

/// The TimeQuery dims of a row, read in the order the model's formulas need them (so a missing
/// field is named as before the typed path existed).
std::array<std::int64_t, TimeQuery::max_dims> row_dims(const CalibrationRow& row);

TimeQuery::Matrix matrix_of(const std::string& matrix);

/// The precision whose rows stand in for `dtype` when a profile has none of it: mxfp8 and fp8_block
/// → fp8 (the same FP8 tensor-core peak), fp8 → "" (bf16 rows scaled by the datasheet FP8/BF16
/// peak ratio); "" for bf16.
std::string fallback_dtype(const std::string& dtype);
TimeQuery::Dtype dtype_of(const std::string& dtype);
std::string dtype_name(TimeQuery::Dtype dtype);  ///< "" for bf16

/// The Shaped of a row queried for `pass` and `backend`.
Shaped describe(const CalibrationRow& row, const std::string& pass, const std::string& backend);

/// The names of a query's log-shape coordinates (ShapeNumbers::coords), for out-of-range notes.
std::vector<std::string> coord_names(const CalibrationRow& q);

}  // namespace budget::detail
