# budget_set_warnings(target): strict warnings for budget's own code only (never exported to users).
function(budget_set_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4 $<$<BOOL:${BUDGET_WERROR}>:/WX>)
  else()
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
        $<$<BOOL:${BUDGET_WERROR}>:-Werror>>
      # GCC 12 at -O2 reports -Wrestrict inside libstdc++'s std::string operator+ (GCC bug 105329)
      # and -Wmaybe-uninitialized inside std::variant / nlohmann::json moves (GCC bugs 80635,
      # 107138): false positives in code we do not own, so they are not errors for us.
      $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict -Wno-maybe-uninitialized>)
  endif()
endfunction()
