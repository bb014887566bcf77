#include "a.hpp"

void bind_other(int& m) { m = 1; }
