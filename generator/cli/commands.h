// Each `spindle` subcommand is one function in its own cmd_*.cpp file.
// It receives the arguments after the subcommand name and returns the exit
// status: 0 success, 1 user error (diagnostics printed), 2 internal error.
#pragma once

#include <string>
#include <vector>

namespace spindle::cli {

using Args = std::vector<std::string>;

int cmdCheck(const Args& args);
int cmdInspect(const Args& args);
int cmdGen(const Args& args);
int cmdCompile(const Args& args);
int cmdRun(const Args& args);
int cmdTune(const Args& args);

// A one-line usage error ("spindle: error: ...") and exit status 1.
int usageError(const std::string& message);

}  // namespace spindle::cli
