// `spindle`: the command-line front of the generator and runtime
// (the commands: dispatch.cpp, cmd_*.cpp).
#include <string>
#include <vector>

#include "dispatch.h"

int main(int argc, char** argv) { return spindle::cli::runCli(std::vector<std::string>(argv + 1, argv + argc)); }
