#include "a.hpp"

void bind_other(int& m);  // defined by other.cpp: the circle of two files

void bind_module(int& m) { bind_other(m); }
