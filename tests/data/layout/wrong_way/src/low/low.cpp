#include "budget/low.hpp"
#include "high/detail.hpp"
