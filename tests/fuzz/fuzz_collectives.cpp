// Collective measurements (`budget-profile collectives --out M.json`, docs/cluster.md "Links
// fitted from measured collectives"): parse_collective_measurements(), then fit_links() as the
// profiler does. Accepted rows must each validate and their JSON read back to the same rows (times
// to rounding: the file holds µs); a fit
// either refuses by name or gives a finite positive bandwidth, a finite non-negative latency and
// finite residuals, and its cluster file reads back.
#include <cmath>

#include "budget/cluster.hpp"
#include "budget/link_fit.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace budget;
  fuzz::expect_value_or_error("fuzz_collectives", [&] {
    const CollectiveMeasurements m = parse_collective_measurements(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("fuzz_collectives", "row validation and round trip", [&] {
      for (const CollectiveMeasurement& row : m.rows) {
        fuzz::require(validation_error(row).empty(), "fuzz_collectives", "an accepted row does not validate");
      }
      const CollectiveMeasurements back = parse_collective_measurements(collective_measurements_json(m, {}), "<rt>");
      fuzz::require(back.rows.size() == m.rows.size(), "fuzz_collectives", "the round trip changed the row count");
      // Times are written in µs (seconds · 1e6) and read back divided by 1e6: equal to rounding.
      for (std::size_t i = 0; i < m.rows.size(); ++i) {
        const double s = m.rows[i].seconds, t = back.rows[i].seconds;
        fuzz::require(back.rows[i].kind == m.rows[i].kind && back.rows[i].ranks == m.rows[i].ranks &&
                          back.rows[i].size_bytes == m.rows[i].size_bytes && std::abs(t - s) <= 1e-14 * s,
                      "fuzz_collectives", "the round trip changed a row");
      }
    });
    const std::vector<LinkFit> fits = fit_links(m.rows, "<fuzz>");
    for (const LinkFit& f : fits) {
      fuzz::require(std::isfinite(f.link.bandwidth_bytes_per_s) && f.link.bandwidth_bytes_per_s > 0 &&
                        std::isfinite(f.link.latency_s) && f.link.latency_s >= 0 &&
                        std::isfinite(f.rms_relative_residual) && std::isfinite(f.max_relative_residual),
                    "fuzz_collectives", "a fitted link is not finite and positive");
    }
  });
  return 0;
}
