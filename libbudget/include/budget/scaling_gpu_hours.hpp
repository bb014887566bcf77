#pragma once
/// \file
/// The compute-efficiency gain of a scaling-law fit turned into GPU-hours at equal loss (issue 20,
/// item 5; docs/scaling.md, "GPU-hours at equal loss"). The target reaches the loss L* with C FLOPs,
/// the reference needs C_ref = C / (1 − G) (G = 1 − C/C_ref, scaling_plan.hpp's ce_gain). Each
/// architecture's run costs
///
///   GPU-hours = FLOPs · τ / 3600,   τ = GPU-seconds per training FLOP
///             = (seconds per step · N / tokens per step) / F   at its best layout on N GPUs,
///
/// F the non-embedding training FLOPs per token (the matched budget, the FLOPs the laws' C counts),
/// so the GPU-hour gain at equal loss is
///
///   G_h = 1 − GPUh_tgt / GPUh_ref = 1 − (1 − G) · ρ,   ρ = τ_tgt / τ_ref,
///
/// positive while ρ < 1 / (1 − G) (the break-even time-per-FLOP ratio); at or above it the FLOPs
/// saving is eaten by the time per FLOP. G_h is increasing in G for ρ > 0, so G's bootstrap
/// percentiles map to G_h's: [1 − (1 − G_lo)·ρ, 1 − (1 − G_hi)·ρ]. ρ is the time model's point
/// prediction and carries no interval of its own.
///
/// τ is taken from one config per architecture (e.g. the matched pair); the compute-optimal model
/// at each C is larger or smaller, and its time per FLOP may differ: that is an assumption of the
/// conversion, stated in the outputs.

#include "budget/scaling_bootstrap.hpp"

namespace budget {

struct GpuHoursAtEqualLoss {
  double C = 0.0;  ///< the target's budget (FLOPs)
  double S = 0.0;
  Estimate flops_gain;           ///< G
  double time_per_flop_ratio = 0.0;  ///< ρ = τ_tgt / τ_ref
  double break_even_ratio = 0.0;     ///< 1 / (1 − G): the ρ at which G_h = 0
  Estimate gpu_hours_gain;       ///< G_h, interval mapped from G's
  double target_gpu_hours = 0.0;     ///< C · τ_tgt / 3600
  Estimate reference_gpu_hours;  ///< C_ref · τ_ref / 3600 (interval from C_ref's)
  bool saving_eaten = false;     ///< G_h ≤ 0 while G > 0: the time per FLOP eats the FLOPs saving
};

/// The conversion above for one entry of a gain report. budget::Error when a τ is not a positive
/// finite number.
GpuHoursAtEqualLoss gpu_hours_at_equal_loss(const GainReport::Entry& entry, double target_gpu_seconds_per_flop,
                                            double reference_gpu_seconds_per_flop);

}  // namespace budget
