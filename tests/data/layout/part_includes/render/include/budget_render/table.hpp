#pragma once
#include "budget/pub.hpp"
