#include "options.hpp"
#include "base/private.hpp"  // a private header of the library
#include <budget/pub.hpp>
