# Writes the named //@section parts of templates/prelude.in, in the order
# given, to one header, so that host tests compile the very text the
# generator puts into device code:
#   cmake -DPRELUDE=prelude.in -DOUT=out.h -DSECTIONS=a,b -P extract_sections.cmake
file(READ "${PRELUDE}" text)
set(out "// Generated from templates/prelude.in by extract_sections.cmake: do not edit.\n")
string(REPLACE "," ";" section_names "${SECTIONS}")
foreach(name IN LISTS section_names)
  set(marker "//@section ${name}\n")
  string(FIND "${text}" "${marker}" begin)
  if(begin EQUAL -1)
    message(FATAL_ERROR "prelude.in has no section ${name}")
  endif()
  string(LENGTH "${marker}" marker_length)
  math(EXPR begin "${begin} + ${marker_length}")
  string(SUBSTRING "${text}" ${begin} -1 rest)
  string(FIND "${rest}" "\n//@" end)
  if(NOT end EQUAL -1)
    math(EXPR end "${end} + 1")
    string(SUBSTRING "${rest}" 0 ${end} rest)
  endif()
  string(APPEND out "// ---- section ${name}\n${rest}")
endforeach()
file(WRITE "${OUT}" "${out}")
