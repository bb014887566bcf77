#pragma once
#include "low/missing.hpp"
