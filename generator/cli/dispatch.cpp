// The `spindle` commands and their dispatch (dispatch.h).
#include <cstdio>
#include <cstring>
#include <exception>

#include "commands.h"
#include "dispatch.h"
#include "frontend/diagnostics.h"

namespace spindle::cli {

int usageError(const std::string& message) {
  std::fprintf(stderr, "spindle: error: %s (see 'spindle --help')\n", message.c_str());
  return 1;
}

namespace {
struct Command {
  const char* name;
  int (*run)(const Args&);
  const char* summary;
};

const Command kCommands[] = {
    {"check", cmdCheck, "check FILE...            parse and analyze; print diagnostics only"},
    {"inspect", cmdInspect, "inspect FILE --stage S   show a stage: ast, scopes, key, runs, tune"},
    {"gen", cmdGen, "gen FILE [options]       print readable HIP for a kernel"},
    {"compile", cmdCompile, "compile FILE --kernel K --target T   compile through the runtime's backend"},
    {"run", cmdRun, "run FILE --kernel K --dims M=..,N=..   launch on a GPU (or the host: --target cpu) and time it"},
    {"tune", cmdTune,
     "tune FILE --kernel K --dims M=..,N=..  tune a kernel with @tune ahead of time (--retune to time again);\n"
     "  tune --export FILE.json | --import FILE.json   ship tuned choices with an application"},
};

void printHelp() {
  std::printf(
      "spindle: turn .spn kernels into readable HIP, and compile them at run time.\n\n"
      "usage: spindle <command> [arguments]\n\ncommands:\n");
  for (const auto& c : kCommands) std::printf("  %s\n", c.summary);
  std::printf(
      "\ngen options:\n"
      "  -o OUT                 write to OUT instead of standard output\n"
      "  --kernel NAME          the kernel to generate (needed when the module has several)\n"
      "  --static N=VAL         specialize dim symbol N to VAL (repeatable)\n"
      "  --dtype T=TYPE         bind type parameter T to TYPE (repeatable)\n"
      "  --const C=VAL          give module const C the value VAL; consts computed from it follow (repeatable)\n"
      "  --contiguous X         strided parameter X is contiguous: address it by its dims (repeatable)\n"
      "  --unit-stride X        strided parameter X has innermost stride 1: no stride on its last axis (repeatable)\n"
      "  --aligned X            tensor parameter X is 16-byte aligned: allow vector access (repeatable)\n"
      "  --divisible N[=G]      N is a multiple of G (2, 4, 8; 16 by default): rows of aligned tensors stay\n"
      "                         aligned. N: a dynamic dim, a row stride x.stride0, a dim expression's value\n"
      "                         x.dim1 (repeatable)\n"
      "  --exact-grid D         dim D is a whole number of the tiles of its @grid axis cdiv(D, T): bounds tests\n"
      "                         the tiles prove are left out (repeatable)\n"
      "  --absent X             optional tensor X (declared T[...] | None) is not passed (repeatable)\n"
      "  --no-line-directives   omit #line directives pointing at the .spn\n"
      "  --checked              compile `assert` statements in and bounds-check every element access (a failure\n"
      "                         names the .spn line, block, thread); the default on the cpu target\n"
      "  --unchecked            (run) a cpu-target run without the checks\n"
      "  --verify               check the output with spindle-verify (when built)\n"
      "\nExit status: 0 success, 1 errors in the input or usage, 2 internal error.\n");
}
}  // namespace

int runCli(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    printHelp();
    return argv.empty() ? 1 : 0;
  }
  Args args(argv.begin() + 1, argv.end());
  for (const auto& c : kCommands) {
    if (argv[0] != c.name) continue;
    try {
      return c.run(args);
    } catch (const spindle::InternalError& e) {
      std::fprintf(stderr, "spindle: internal error: %s\nThis is a bug in Spindle; please report it.\n", e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "spindle: error: %s\n", e.what());
      return 1;
    }
  }
  return usageError("unknown command '" + argv[0] + "'");
}

}  // namespace spindle::cli
