#pragma once
// Private: the state of a TimeModel (its per-class fits, the attention backends' acceptance, the
// layer correction and the typed path's index), shared by time_model.cpp (the fit and the row path)
// and time_model_indexed.cpp (the typed path).

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "budget/calibration.hpp"
#include "budget/time_model.hpp"
#include "time/neighbour_index.hpp"
#include "time/op_shape.hpp"
#include "time/time_fit.hpp"

namespace budget {
namespace detail {

struct ClassFit {
  std::vector<TimeSample> samples;
  std::vector<double> beta;
  std::vector<double> lo, hi;
  NeighbourIndex index;
};

struct FamilyFit {
  std::map<std::string, ClassFit> classes;
  ClassFit pooled;
  /// classes by ShapeNumbers::cls_code (nullptr: no rows in that class; the pooled fit is used).
  std::array<const ClassFit*, 6> by_code{};
};

/// x·β as detail::evaluate_fit() sums it.
inline double evaluate_fit(const std::vector<double>& beta, const ShapeNumbers& n) {
  double sum = 0;
  for (std::size_t i = 0; i < beta.size() && i < n.feature_count; ++i) sum += beta[i] * n.features[i];
  return sum;
}

/// Fits a class's line (or borrows `fallback_beta`), its samples' log residuals, its coordinate
/// range and its neighbour index.
void finish_class(ClassFit& c, const std::vector<double>& fallback_beta);

}  // namespace detail

struct TimeModel::Impl {
  CalibrationProfile profile;
  TimeModelOptions options;
  std::map<std::string, detail::FamilyFit> families;
  /// Attention acceptance per backend: [aligned accepted, aligned refused, unaligned accepted,
  /// unaligned refused] row counts ("aligned": head_dim a multiple of 8).
  std::map<std::string, std::array<int, 4>> acceptance;
  LayerCorrection correction;
  /// Per TimeQuery::Op: the profile has a row of it that is not refused (measured()).
  std::array<bool, TimeQuery::op_count> measured_ops{};

  // The index of the typed path (predict_ms()), built once after the fit.
  std::vector<std::string> backends;  ///< every backend a family or the options name; "default" first
  std::vector<const detail::FamilyFit*> family_table;  ///< by family_slot()
  /// Per attention_class_code(): how the options' backend is resolved (predict()'s rules, which
  /// depend on the head_dim only through its class and its alignment).
  struct AttentionPlan {
    enum class Mode { single, fastest, fallback } mode = Mode::fallback;
    std::vector<std::size_t> backend_ids;  ///< single/fallback: one; fastest: in predict()'s order
  };
  std::array<AttentionPlan, 6> attention_plan;

  std::size_t family_slot(TimeQuery::Op op, TimeQuery::Pass pass, bool down, std::size_t backend,
                          TimeQuery::Dtype dtype = TimeQuery::Dtype::bf16) const {
    return (((static_cast<std::size_t>(op) * TimeQuery::pass_count + static_cast<std::size_t>(pass)) * 2 + (down ? 1 : 0)) *
                backends.size() +
            backend) *
               TimeQuery::dtype_count +
           static_cast<std::size_t>(dtype);
  }
  /// Of a query whose precision has no rows at all: the precision standing in for it
  /// (fallback_dtype()) and the time factor (the bf16 rows of an FP8 query: the datasheet BF16/FP8
  /// peak ratio); budget::Error when the profile's GPU has no FP8 (no rows, no datasheet FP8 peak).
  std::pair<TimeQuery::Dtype, double> dtype_fallback(TimeQuery::Dtype dtype) const;
  bool has_dtype_rows(TimeQuery::Op op, TimeQuery::Dtype dtype) const;
  /// The rate no GEMM or attention kernel of `dtype` beats: the measured bf16 GEMM peak, for FP8
  /// scaled by the datasheet FP8/BF16 ratio (infinite, no hold, when the datasheet peaks are not given).
  double peak_tflops(TimeQuery::Dtype dtype) const {
    if (dtype == TimeQuery::Dtype::bf16) return profile.peaks.bf16_gemm_tflops;
    if (profile.peaks.datasheet_fp8_tflops > 0 && profile.peaks.datasheet_peak_tflops > 0) {
      return profile.peaks.bf16_gemm_tflops * profile.peaks.datasheet_fp8_tflops / profile.peaks.datasheet_peak_tflops;
    }
    return 1e300;
  }
  /// Per op and precision: the profile has (non-refused) rows of it.
  std::array<std::array<bool, TimeQuery::dtype_count>, TimeQuery::op_count> dtype_rows{};
  void build_index();
  /// predict_fitted()'s ms; a negative value for no rows.
  double fitted_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const;
  double pass_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const;

  TimePrediction predict_pass(const CalibrationRow& q, const std::string& pass, const std::string& backend) const;
  TimePrediction predict_fitted(const CalibrationRow& q, const std::string& pass, const std::string& backend) const;
  /// A prediction inside the class's box: from a row at this very shape (measured or published, as
  /// the profile's source.kind says), interpolated between rows, or carried (rows carried from
  /// another GPU).
  TimeProvenance row_provenance(const detail::ClassFit& fit, const std::vector<double>& coords) const;
  /// 1 accepts, 0 refuses, -1 unknown (no rows of that alignment).
  int accepts(const std::string& backend, std::int64_t head_dim) const;
};

}  // namespace budget
