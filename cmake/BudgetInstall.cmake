include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BUDGET_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/budget")

install(TARGETS budget EXPORT budgetTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY libbudget/include/budget DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES "${PROJECT_BINARY_DIR}/generated/budget/version.hpp"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/budget)
if(TARGET budget-match)
  install(TARGETS budget-match RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT budgetTargets NAMESPACE budget:: DESTINATION ${BUDGET_CMAKE_DIR})
# Build-tree export too, so a consumer can point budget_DIR at the build folder.
export(EXPORT budgetTargets NAMESPACE budget:: FILE "${PROJECT_BINARY_DIR}/budgetTargets.cmake")

get_target_property(budget_library_type budget TYPE)
if(budget_library_type STREQUAL "SHARED_LIBRARY")
  set(BUDGET_IS_SHARED ON)
else()
  set(BUDGET_IS_SHARED OFF)
endif()
configure_package_config_file(cmake/budgetConfig.cmake.in
  "${PROJECT_BINARY_DIR}/budgetConfig.cmake" INSTALL_DESTINATION ${BUDGET_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/budgetConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/budgetConfig.cmake" "${PROJECT_BINARY_DIR}/budgetConfigVersion.cmake"
  DESTINATION ${BUDGET_CMAKE_DIR})
