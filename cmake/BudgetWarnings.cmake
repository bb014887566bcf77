# budget_set_warnings(target): strict warnings for budget's own code only (never exported to users).
function(budget_set_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${BUDGET_WERROR}>:/WX>)
  else()
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
        $<$<BOOL:${BUDGET_WERROR}>:-Werror>>
      # GCC 12 reports -Wrestrict inside libstdc++'s std::string operator+ at -O2 (GCC bug 105329),
      # a false positive in code we do not own.
      $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>)
  endif()
endfunction()
