// The one Catch2 main of budget_profiler_tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
