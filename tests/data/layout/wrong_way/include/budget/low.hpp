#pragma once
// A lower domain reaching up: the checker must refuse the next line.
#include "budget/high.hpp"
