#include "budget_render/table.hpp"
#include "budget/pub.hpp"
#include "options.hpp"  // the CLI's: not render's to include
