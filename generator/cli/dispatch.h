// The `spindle` command line as a function, so that the executable
// (main.cpp) and the Python package (`python -m spindle`, python/src/ext.cpp)
// run the same commands with the same options, diagnostics and exit codes.
#pragma once

#include <string>
#include <vector>

namespace spindle::cli {

// `args` are the arguments after the program name (args[0] is the command).
// Prints to stdout/stderr as the executable does and returns its exit
// status: 0 success, 1 errors in the input or usage, 2 internal error.
int runCli(const std::vector<std::string>& args);

}  // namespace spindle::cli
