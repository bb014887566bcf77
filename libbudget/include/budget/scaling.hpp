#pragma once
/// \file
/// Scaling laws: everything of the "Scaling law" section of the SMELT paper (docs/scaling.md).
///
/// - scaling_law.hpp: the law L(F, S, D), its coefficients and their JSON file
/// - scaling_data.hpp: loss measurements from CSV
/// - scaling_fit.hpp: the robust multistart fit, per-domain intercept fits
/// - scaling_plan.hpp: compute-optimal frontier, tokens per parameter, compute-efficiency gain
/// - scaling_bootstrap.hpp: cell-level bootstrap intervals and the paper's gain tables
/// - scaling_gpu_hours.hpp: the gain turned into GPU-hours at equal loss
///
/// Thread safety: See the included headers; every scaling function is reentrant.

#include "budget/scaling_bootstrap.hpp"
#include "budget/scaling_data.hpp"
#include "budget/scaling_fit.hpp"
#include "budget/scaling_gpu_hours.hpp"
#include "budget/scaling_law.hpp"
#include "budget/scaling_plan.hpp"
