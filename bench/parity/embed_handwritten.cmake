# Writes OUT: a C++ file whose parity::embeddedFiles() returns every file of
# DIR (the hand-written kernels, *.cu, and their headers, *.cuh) by name, as
# text. Run at build time (bench/CMakeLists.txt), so the parity binary needs
# no source tree at run time.
file(GLOB files RELATIVE ${DIR} ${DIR}/*.cu ${DIR}/*.cuh)
list(SORT files)
set(body "")
foreach(f IN LISTS files)
  file(READ ${DIR}/${f} text)
  string(FIND "${text}" ")PARITY_SRC\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${f} contains the raw-string delimiter )PARITY_SRC\"")
  endif()
  string(APPEND body "      {\"${f}\", R\"PARITY_SRC(${text})PARITY_SRC\"},\n")
endforeach()
file(WRITE ${OUT} "// Generated from bench/parity/handwritten/ by embed_handwritten.cmake. Do not edit.
#include \"handwritten.hpp\"
namespace parity {
const std::vector<EmbeddedFile>& embeddedFiles() {
  static const std::vector<EmbeddedFile> files = {
${body}  };
  return files;
}
}  // namespace parity
")
