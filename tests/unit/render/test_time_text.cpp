// Time ratios printed to the precision of their interval (issue 17, item 6).

#include <catch2/catch.hpp>

#include "budget_render/step_time.hpp"

using namespace budget;
using namespace budget::render;

TEST_CASE("time ratio text: rounded to its interval", "[render][time]") {
  CHECK(time_ratio_text(1.2904, 0.047) == "1.29× ±0.05");
  CHECK(time_ratio_text(1.2904, 0.0047) == "1.290× ±0.005");
  CHECK(time_ratio_text(1.26, 0.096) == "1.3× ±0.1");  // 0.096 is 0.1 at one significant digit
  CHECK(time_ratio_text(1.2904, 0.3333) == "1.3× ±0.3");
  CHECK(time_ratio_text(1.2904, 0) == "1.290×");  // no interval: as before
  CHECK(time_ratio_decimals(0.047) == 2);
  CHECK(time_ratio_decimals(0.0) == 3);
  CHECK(time_ratio_decimals(2.5) == 0);
}
