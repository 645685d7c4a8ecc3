# `cmake --install`: the spindle CLI, the runtime library (with the generator
# libraries it links), the headers, and a CMake package so that apps can
#   find_package(Spindle)  ->  Spindle::runtime, Spindle::spindle, spindle_generate()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SPINDLE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Spindle)

# spindle_templates is linked privately into the generator, so a static
# export must carry it (its include directory is build-tree only).
set_target_properties(spindle_generator PROPERTIES EXPORT_NAME generator)
set_target_properties(spindle_templates PROPERTIES EXPORT_NAME templates)
install(TARGETS spindle_runtime spindle_generator spindle_templates
  EXPORT SpindleTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# The public headers, and only they: each includes public headers only.
install(FILES ${PROJECT_SOURCE_DIR}/runtime/include/spindle/runtime.hpp
  ${PROJECT_SOURCE_DIR}/generator/include/spindle/generator.h
  ${PROJECT_SOURCE_DIR}/generator/include/spindle/specialization.h
  ${PROJECT_SOURCE_DIR}/generator/include/spindle/types.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/spindle)

install(EXPORT SpindleTargets NAMESPACE Spindle:: DESTINATION ${SPINDLE_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/SpindleConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
  INSTALL_DESTINATION ${SPINDLE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/SpindleConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/SpindleGenerate.cmake
  DESTINATION ${SPINDLE_INSTALL_CMAKEDIR})

# The CLI target is created after runtime/ (generator/cli links both), so its
# install rule runs once the top-level directory is done.
function(spindle_install_cli)
  if(TARGET spindle)
    install(TARGETS spindle EXPORT SpindleTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL spindle_install_cli)
