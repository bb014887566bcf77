#pragma once
#include "budget/low.hpp"
