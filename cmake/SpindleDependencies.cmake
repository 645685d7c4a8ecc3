# Finds Spindle's dependencies and says clearly what it found and what it left
# out. Nothing here downloads anything.

find_package(fmt REQUIRED)  # libfmt-dev: all text formatting
# The generator and the runtime use fmt header-only in the Python wheel
# (SKBUILD): Debian's libfmt-dev has no static library, and the extension
# must not need libfmt.so at import.
option(SPINDLE_FMT_HEADER_ONLY "Use fmt header-only in the generator and the runtime" OFF)
if(SKBUILD OR SPINDLE_FMT_HEADER_ONLY)
  set(SPINDLE_FMT_TARGET fmt::fmt-header-only)
else()
  set(SPINDLE_FMT_TARGET fmt::fmt)
endif()

# --- AMD: hipcc and hiprtc from ROCm (Debian's hipcc, libamdhip64-dev) ------
find_program(SPINDLE_HIPCC hipcc)
find_library(SPINDLE_HIPRTC_LIBRARY NAMES hiprtc amdhip64 PATHS /usr/lib/x86_64-linux-gnu /opt/rocm/lib)
find_path(SPINDLE_HIP_INCLUDE_DIR hip/hiprtc.h PATHS /usr/include /opt/rocm/include)

# --- NVIDIA: the CUDA toolkit (nvcc, nvrtc); nvrtc and the driver are loaded
# with dlopen at run time, so only the headers matter at build time.
find_program(SPINDLE_NVCC nvcc PATHS /usr/local/cuda/bin)
find_path(SPINDLE_CUDA_INCLUDE_DIR cuda.h PATHS /usr/local/cuda/include)

# --- Clang LibTooling (libclang-cpp15-dev, llvm-15-dev) for spindle-verify --
# ClangConfig.cmake ships without a ClangConfigVersion.cmake, so asking for
# "Clang 15" never matches: ask LLVM (which has a version file) for 15, then
# take Clang from the same tree.
find_package(LLVM 15 QUIET CONFIG PATHS /usr/lib/llvm-15/lib/cmake/llvm NO_DEFAULT_PATH)
if(LLVM_FOUND)
  find_package(Clang QUIET CONFIG PATHS ${LLVM_LIBRARY_DIR}/cmake/clang NO_DEFAULT_PATH)
endif()

set(SPINDLE_HAVE_HIPCC OFF)
set(SPINDLE_HAVE_HIPRTC OFF)
set(SPINDLE_HAVE_NVCC OFF)
set(SPINDLE_HAVE_LIBTOOLING OFF)
if(SPINDLE_HIPCC)
  set(SPINDLE_HAVE_HIPCC ON)
endif()
if(SPINDLE_HIPRTC_LIBRARY AND SPINDLE_HIP_INCLUDE_DIR)
  set(SPINDLE_HAVE_HIPRTC ON)
endif()
if(SPINDLE_NVCC)
  set(SPINDLE_HAVE_NVCC ON)
endif()
if(Clang_FOUND)
  set(SPINDLE_HAVE_LIBTOOLING ON)
endif()

function(spindle_report what found detail)
  if(found)
    message(STATUS "Spindle: ${what}: found (${detail})")
  else()
    message(STATUS "Spindle: ${what}: NOT found, ${detail}")
  endif()
endfunction()
spindle_report("hipcc (AMD ahead-of-time compile checks)" ${SPINDLE_HAVE_HIPCC}
  "${SPINDLE_HIPCC}")
spindle_report("hiprtc (AMD run-time backend)" ${SPINDLE_HAVE_HIPRTC}
  "${SPINDLE_HIPRTC_LIBRARY}")
spindle_report("nvcc / CUDA headers (NVIDIA checks and backend)" ${SPINDLE_HAVE_NVCC}
  "${SPINDLE_NVCC}")
spindle_report("Clang LibTooling 15 (spindle-verify)" ${SPINDLE_HAVE_LIBTOOLING}
  "${Clang_DIR}")
