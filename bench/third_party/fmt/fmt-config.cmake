# Fallback for machines without libfmt-dev (the GPU machines have no package
# registry): fmt 9.1 headers, used header-only. bench/run.sh points fmt_DIR
# here only when find_package(fmt) finds no system copy.
if(NOT TARGET fmt::fmt)
  add_library(fmt::fmt INTERFACE IMPORTED)
  set_target_properties(fmt::fmt PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/include"
    INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1")
endif()
set(fmt_FOUND TRUE)
set(fmt_VERSION 9.1.0)
