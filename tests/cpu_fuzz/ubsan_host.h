// SPINDLE_FUZZ_UBSAN=1: the cpu target compiles the fuzzer's kernels with
// -fsanitize=undefined, so undefined behaviour in the generated C++ (a
// signed overflow the language defines away, a shift past the width) is
// reported even where both runs agree on its result. The runtime takes the
// host compiler from SPINDLE_HOST_CXX: here a wrapper script that adds the
// flag. The sanitizer writes its reports to stderr (it reads its options
// from the environment the process started with, so they cannot be set
// here): between begin() and takeReports() stderr goes to a file.
#pragma once

#include <string>

namespace spindle::cpu_fuzz {

class UbsanHost {
 public:
  // Sets SPINDLE_HOST_CXX for this process (before any Runtime compiles).
  // Throws std::runtime_error when it cannot.
  UbsanHost();
  ~UbsanHost();
  // Catches what is written to stderr from here on (one thread at a time).
  void begin();
  // The sanitizer's reports since begin() ("" if none); stderr is restored
  // and gets everything that was written meanwhile.
  std::string takeReports();

 private:
  std::string dir_;
  int savedStderr_ = -1;
};

}  // namespace spindle::cpu_fuzz
