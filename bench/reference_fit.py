#!/usr/bin/env python3
"""SciPy reference for budget's scaling-law fit; bench/bench_scaling.cpp runs it.

    reference_fit.py DATA.csv [--repeats N]

Fits L(F, S, D) = E + A*(1-S)^b*F^(-a) + K*D^(-c) to every row of DATA.csv (one architecture,
columns arch, cell, F, S, D, loss; '#' lines skipped) exactly as libbudget does (docs/scaling.md):
the SUM over points of Huber_delta(log L_obs - log L_pred), delta = 1e-3, log L_pred as a
log-sum-exp, the same centred parameterisation, bounds and default multistart grid, an analytic
gradient, and scipy.optimize.minimize(method="L-BFGS-B") with tight tolerances. Prints one JSON
object: the best fit and the wall and CPU time of the whole multistart fit (the fastest of --repeats
runs each).
"""

import csv
import json
import sys
import time

import numpy as np
import scipy
from scipy.optimize import minimize

DELTA = 1e-3
GRID_A = [0.2, 0.5, 1.0]
GRID_B = [0.3]
GRID_C = [0.2, 0.5, 1.0]
GRID_E_FRACTION = [0.5, 0.9]
EXPONENT_BOUNDS = (0.0, 3.0)
LOG_E_BOUNDS = (-20.0, 10.0)
LOG_TERM_BOUNDS = (-50.0, 50.0)


def load(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if line.strip() and not line.startswith("#")))
    columns = {name: np.array([float(row[name]) for row in rows]) for name in ("F", "S", "D", "loss")}
    return columns["F"], columns["S"], columns["D"], columns["loss"]


def objective(theta, x, u, y, z):
    """Sum of Huber(r) and its gradient; theta = (log E, alpha, kappa, a, b, c), centred data."""
    e, alpha, kappa, a, b, c = theta
    t_a = alpha + b * u - a * x
    t_k = kappa - c * y
    m = np.maximum(np.maximum(t_a, t_k), e)
    w_e, w_a, w_k = np.exp(e - m), np.exp(t_a - m), np.exp(t_k - m)
    s = w_e + w_a + w_k
    r = z - (m + np.log(s))
    abs_r = np.abs(r)
    f = np.where(abs_r <= DELTA, 0.5 * r * r, DELTA * (abs_r - 0.5 * DELTA)).sum()
    g = -np.clip(r, -DELTA, DELTA) / s
    g_a, g_k = g * w_a, g * w_k
    gradient = np.array([(g * w_e).sum(), g_a.sum(), g_k.sum(), -(g_a * x).sum(), (g_a * u).sum(), -(g_k * y).sum()])
    return f, gradient


def fit(F, S, D, loss):
    x, u, y, z = np.log(F), np.log1p(-S), np.log(D), np.log(loss)
    m_x, m_u, m_y = x.mean(), u.mean(), y.mean()
    x, u, y = x - m_x, u - m_u, y - m_y
    b_fixed = np.all(S == S[0])
    bounds = [LOG_E_BOUNDS, LOG_TERM_BOUNDS, LOG_TERM_BOUNDS, EXPONENT_BOUNDS,
              (0.0, 0.0) if b_fixed else EXPONENT_BOUNDS, EXPONENT_BOUNDS]
    min_loss, mean_loss = loss.min(), np.exp(z.mean())
    best = None
    for a in GRID_A:
        for c in GRID_C:
            for b in GRID_B:
                for fraction in GRID_E_FRACTION:
                    e0 = fraction * min_loss
                    term = 0.5 * (mean_loss - e0)
                    start = [np.log(e0), np.log(term), np.log(term), a, 0.0 if b_fixed else b, c]
                    result = minimize(objective, start, args=(x, u, y, z), jac=True, method="L-BFGS-B",
                                      bounds=bounds, options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 5000})
                    if best is None or result.fun < best.fun:
                        best = result
    e, alpha, kappa, a, b, c = best.x
    coefficients = {"E": np.exp(e), "A": np.exp(alpha - b * m_u + a * m_x), "K": np.exp(kappa + c * m_y),
                    "a": a, "b": b, "c": c}
    return {k: float(v) for k, v in coefficients.items()}, float(best.fun)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    F, S, D, loss = load(sys.argv[1])
    seconds = cpu_seconds = float("inf")
    for _ in range(repeats):
        begin, begin_cpu = time.perf_counter(), time.process_time()
        coefficients, value = fit(F, S, D, loss)
        seconds = min(seconds, time.perf_counter() - begin)
        cpu_seconds = min(cpu_seconds, time.process_time() - begin_cpu)
    starts = len(GRID_A) * len(GRID_B) * len(GRID_C) * len(GRID_E_FRACTION)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "objective": value, "coefficients": coefficients, "points": len(loss),
                      "starts": starts, "scipy_version": scipy.__version__}))


if __name__ == "__main__":
    main()
