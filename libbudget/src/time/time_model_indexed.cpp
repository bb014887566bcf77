// The typed path of the time model: TimeModel::predict_ms() through an index built once after the
// fit (the same decisions as predict(), by integers; time_model.cpp).

#include "budget/time_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "budget/error.hpp"
#include "time/op_shape.hpp"
#include "time/profile_ops.hpp"
#include "time/time_model_impl.hpp"
#include "base/enum_names.hpp"

namespace budget {

using namespace detail;

namespace {
constexpr auto time_pass_names = detail::enum_names<TimeQuery::Pass::forward_backward>({
    {TimeQuery::Pass::forward, "forward"}, {TimeQuery::Pass::input_grad, "input_grad"},
    {TimeQuery::Pass::weight_grad, "weight_grad"}, {TimeQuery::Pass::backward, "backward"},
    {TimeQuery::Pass::forward_backward, "forward+backward"}});
}  // namespace

std::string_view to_string(TimeQuery::Pass pass) { return detail::name_of(time_pass_names, pass); }

CalibrationRow to_row(const TimeQuery& query) {
  CalibrationRow row;
  row.op = query.op;
  row.pass = std::string(to_string(query.pass));
  const auto fields = calibration_shape_fields(row.op);
  for (std::size_t i = 0; i < fields.required.size() && i < query.dims.size(); ++i) row.shape[fields.required[i]] = query.dims[i];
  if (query.op == TimeQuery::Op::attention && query.v_head_dim > 0) row.shape["v_head_dim"] = query.v_head_dim;
  row.dtype = dtype_name(query.dtype);
  switch (query.matrix) {
    case TimeQuery::Matrix::none: break;
    case TimeQuery::Matrix::up: row.matrix = "up"; break;
    case TimeQuery::Matrix::up_gate: row.matrix = "up_gate"; break;
    case TimeQuery::Matrix::down: row.matrix = "down"; break;
  }
  return row;
}

void TimeModel::Impl::build_index() {
  backends = {"default"};
  const auto add_backend = [this](const std::string& name) {
    if (std::find(backends.begin(), backends.end(), name) == backends.end()) backends.push_back(name);
  };
  for (const auto& [name, counts] : acceptance) add_backend(name);
  for (const auto& [cls, name] : correction.backend_by_head_dim_class) add_backend(name);
  if (options.attention_backend != "auto") add_backend(options.attention_backend);
  const auto id_of = [this](const std::string& name) {
    return static_cast<std::size_t>(std::find(backends.begin(), backends.end(), name) - backends.begin());
  };

  family_table.assign(TimeQuery::op_count * TimeQuery::pass_count * 2 * backends.size() * TimeQuery::dtype_count, nullptr);
  for (std::size_t o = 0; o < TimeQuery::op_count; ++o) {
    for (std::size_t pa = 0; pa < TimeQuery::pass_count; ++pa) {
      for (int down = 0; down < 2; ++down) {
        for (std::size_t b = 0; b < backends.size(); ++b) {
          for (std::size_t dt = 0; dt < TimeQuery::dtype_count; ++dt) {
            const auto op = static_cast<TimeQuery::Op>(o);
            const auto pass = static_cast<TimeQuery::Pass>(pa);
            const auto dtype = static_cast<TimeQuery::Dtype>(dt);
            CalibrationRow row;
            row.matrix = down != 0 ? "down" : "up";
            row.dtype = dtype_name(dtype);
            const std::string family = family_of(op, std::string(to_string(pass)), row, backends[b]);
            const auto it = families.find(family);
            family_table[family_slot(op, pass, down != 0, b, dtype)] = it == families.end() ? nullptr : &it->second;
          }
        }
      }
    }
  }
  for (auto& [name, family] : families) {
    family.by_code.fill(nullptr);
    for (int code = 0; code < 6; ++code) {
      const std::string key = name.rfind("attention|", 0) == 0 ? fmt::format("{}{}", code / 3, code % 3)
                              : name.rfind("gemm|", 0) == 0 || name.rfind("expert_gemms|", 0) == 0
                                  ? fmt::format("{}{}", code / 2, code % 2)
                                  : std::string(code == 0 ? "" : "-");
      const auto it = family.classes.find(key);
      if (it != family.classes.end()) family.by_code[static_cast<std::size_t>(code)] = &it->second;
    }
  }

  // predict()'s backend choice for the options' backend, per head_dim class (a head_dim of it).
  for (int code = 0; code < 6; ++code) {
    const std::int64_t hd = std::array<std::int64_t, 6>{60, 100, 200, 64, 128, 256}[static_cast<std::size_t>(code)];
    AttentionPlan& plan = attention_plan[static_cast<std::size_t>(code)];
    plan = AttentionPlan{};
    const std::string& wanted = options.attention_backend;
    std::string chosen = wanted;
    if (wanted == "auto") {
      const auto by_layers = correction.backend_by_head_dim_class.find(attention_head_dim_class(hd).second);
      if (by_layers != correction.backend_by_head_dim_class.end() && accepts(by_layers->second, hd) == 1) {
        plan.mode = AttentionPlan::Mode::single;
        plan.backend_ids = {id_of(by_layers->second)};
        continue;
      }
      chosen = accepts("default", hd) == 1 ? "default" : "";
    }
    if (!chosen.empty() && accepts(chosen, hd) != 0) {
      plan.mode = AttentionPlan::Mode::single;
      plan.backend_ids = {id_of(chosen)};
      continue;
    }
    for (const auto& [name, counts] : acceptance) {
      if (name != chosen && accepts(name, hd) == 1) plan.backend_ids.push_back(id_of(name));
    }
    if (!plan.backend_ids.empty()) {
      plan.mode = AttentionPlan::Mode::fastest;
    } else {
      plan.mode = AttentionPlan::Mode::fallback;
      plan.backend_ids = {id_of(chosen.empty() ? "default" : chosen)};
    }
  }
}

double TimeModel::Impl::fitted_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const {
  const FamilyFit* family = family_table[family_slot(q.op, pass, q.matrix == TimeQuery::Matrix::down, backend, q.dtype)];
  if (family == nullptr) return -1;
  const ShapeNumbers n = shape_numbers(q.op, q.matrix, pass, q.dims);
  const ClassFit* own = family->by_code[static_cast<std::size_t>(n.cls_code)];
  const ClassFit* fit = own != nullptr ? own : &family->pooled;
  const double base = evaluate_fit(fit->beta, n);
  if (!(base > 0)) return -1;
  double ms = base * std::exp(fit->index.log_residual(n.coords.data(), n.coord_count, options.neighbours));
  const double at_peak_ms = n.peak_flops / (peak_tflops(q.dtype) * 1e12) * 1e3;
  if (ms < at_peak_ms) ms = at_peak_ms;
  return ms;
}

bool TimeModel::Impl::has_dtype_rows(TimeQuery::Op op, TimeQuery::Dtype dtype) const {
  return dtype_rows[static_cast<std::size_t>(op)][static_cast<std::size_t>(dtype)];
}

std::pair<TimeQuery::Dtype, double> TimeModel::Impl::dtype_fallback(TimeQuery::Dtype dtype) const {
  const TimeQuery::Dtype next = dtype_of(fallback_dtype(dtype_name(dtype)));
  if (next != TimeQuery::Dtype::bf16) return {next, 1.0};
  // FP8 GEMMs timed as the bf16 rows at the datasheet FP8/BF16 peak ratio: a roofline carry.
  if (!(profile.peaks.datasheet_fp8_tflops > 0 && profile.peaks.datasheet_peak_tflops > 0)) {
    throw Error(fmt::format("the profile of {} has no {} rows and no datasheet FP8 peak: FP8 is not timed on it "
                            "(a GPU without FP8 tensor cores, or a profile that does not say)",
                            profile.device.name, dtype_name(dtype)),
                "<time model>", "fp8");
  }
  return {TimeQuery::Dtype::bf16, profile.peaks.datasheet_peak_tflops / profile.peaks.datasheet_fp8_tflops};
}

double TimeModel::Impl::pass_ms(const TimeQuery& q, TimeQuery::Pass pass, std::size_t backend) const {
  if (q.dtype != TimeQuery::Dtype::bf16 && !has_dtype_rows(q.op, q.dtype)) {
    const auto [dtype, factor] = dtype_fallback(q.dtype);
    TimeQuery other = q;
    other.dtype = dtype;
    return factor * pass_ms(other, pass, backend);
  }
  const double ms = fitted_ms(q, pass, backend);
  if (ms >= 0) return ms;
  using P = TimeQuery::Pass;
  const bool gemm_like = q.op == TimeQuery::Op::gemm || q.op == TimeQuery::Op::expert_gemms;
  const std::array<P, 3> passes = gemm_like ? std::array<P, 3>{P::forward, P::input_grad, P::weight_grad}
                                            : std::array<P, 3>{P::forward_backward, P::forward, P::backward};
  if (pass == P::forward_backward) {
    const double f = fitted_ms(q, P::forward, backend);
    const double b = fitted_ms(q, P::backward, backend);
    if (f >= 0 && b >= 0) return f + b;
  }
  for (const P other : passes) {
    if (other == pass) continue;
    const double o = fitted_ms(q, other, backend);
    if (o < 0) continue;
    return o * (pass_weight(q.op, pass) / pass_weight(q.op, other));
  }
  const ShapeNumbers n = shape_numbers(q.op, q.matrix, pass, q.dims);
  if (n.peak_flops > 0) return n.peak_flops / (profile.peaks.bf16_gemm_tflops * 1e12) * 1e3;
  return n.peak_bytes / (profile.peaks.copy_gbytes_per_s * 1e9) * 1e3;
}

bool TimeModel::measured(TimeQuery::Op op) const { return impl_->measured_ops[static_cast<std::size_t>(op)]; }
bool TimeModel::has_rows(TimeQuery::Op op, TimeQuery::Dtype dtype) const { return impl_->has_dtype_rows(op, dtype); }

double TimeModel::predict_ms(const TimeQuery& query) const {
  const Impl& m = *impl_;
  if (query.op != TimeQuery::Op::attention) return m.pass_ms(query, query.pass, 0);
  const Impl::AttentionPlan& plan = m.attention_plan[static_cast<std::size_t>(attention_class_code(query.dims[5]))];
  if (plan.mode != Impl::AttentionPlan::Mode::fastest) return m.pass_ms(query, query.pass, plan.backend_ids.front());
  double best = 0;
  bool found = false;
  for (const std::size_t b : plan.backend_ids) {
    const double ms = m.pass_ms(query, query.pass, b);
    if (!found || ms < best) best = ms;
    found = true;
  }
  return best;
}

}  // namespace budget
