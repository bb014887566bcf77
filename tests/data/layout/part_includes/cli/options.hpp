#pragma once
#include "budget_render/table.hpp"
