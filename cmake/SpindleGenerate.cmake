# spindle_generate(<out-var>
#                  FILES a.spn [b.spn ...]
#                  [KERNEL name]                only this kernel (default: every kernel)
#                  [STATIC N=VAL ...]           specialize dim symbols
#                  [DTYPE T=TYPE ...]           bind type parameters
#                  [OUTPUT_DIR dir]             default: ${CMAKE_CURRENT_BINARY_DIR}/spindle
#                  [NO_LINE_DIRECTIVES])
#
# Turns .spn files into .hip at build time with `spindle gen` (like
# protobuf_generate_cpp) and sets <out-var> to the generated files, which a
# target lists as sources or depends on. Uses the Spindle::spindle executable
# of an installed package, or the `spindle` target of a source tree.
function(spindle_generate out_var)
  cmake_parse_arguments(SG "NO_LINE_DIRECTIVES" "KERNEL;OUTPUT_DIR" "FILES;STATIC;DTYPE" ${ARGN})
  if(NOT SG_FILES)
    message(FATAL_ERROR "spindle_generate: no FILES given")
  endif()
  if(SG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "spindle_generate: unknown arguments: ${SG_UNPARSED_ARGUMENTS}")
  endif()
  if(TARGET Spindle::spindle)
    set(tool Spindle::spindle)
  elseif(TARGET spindle)
    set(tool spindle)
  else()
    message(FATAL_ERROR "spindle_generate: no spindle executable (find_package(Spindle) first)")
  endif()
  if(NOT SG_OUTPUT_DIR)
    set(SG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/spindle)
  endif()

  set(options)
  if(SG_KERNEL)
    list(APPEND options --kernel ${SG_KERNEL})
  endif()
  foreach(s IN LISTS SG_STATIC)
    list(APPEND options --static ${s})
  endforeach()
  foreach(d IN LISTS SG_DTYPE)
    list(APPEND options --dtype ${d})
  endforeach()
  if(SG_NO_LINE_DIRECTIVES)
    list(APPEND options --no-line-directives)
  endif()

  set(outputs)
  foreach(f IN LISTS SG_FILES)
    get_filename_component(abs ${f} ABSOLUTE)
    get_filename_component(stem ${f} NAME_WE)
    if(SG_KERNEL)
      set(out ${SG_OUTPUT_DIR}/${stem}.${SG_KERNEL}.hip)
    else()
      set(out ${SG_OUTPUT_DIR}/${stem}.hip)
    endif()
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${SG_OUTPUT_DIR}
      COMMAND ${tool} gen ${abs} -o ${out} ${options}
      DEPENDS ${abs} ${tool}
      COMMENT "spindle gen ${f}"
      VERBATIM)
    list(APPEND outputs ${out})
  endforeach()
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()
