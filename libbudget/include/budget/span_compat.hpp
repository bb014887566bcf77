#pragma once
/// \file
/// The public headers compile as C++17. Functions taking a range of document lengths take
/// (pointer, count) (and a std::vector overload); C++20 callers also get inline std::span
/// overloads, declared only when BUDGET_HAS_STD_SPAN is 1. The overloads are inline, so the
/// library's ABI is the same whichever standard the caller uses.

#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif

#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#include <span>
#define BUDGET_HAS_STD_SPAN 1
#else
#define BUDGET_HAS_STD_SPAN 0
#endif
