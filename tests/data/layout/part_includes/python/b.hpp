#pragma once
#include "a.hpp"  // a circle
