// The stages `spindle inspect FILE --stage S` can show. Each one turns the
// front end's result into text; cmd_inspect.cpp lists them in one table.
#pragma once

#include <string>

#include "commands.h"
#include "load_module.h"

namespace spindle::cli {

// --stage scopes: every scope with its symbols (needs sema).
std::string inspectScopes(const LoadedModule& result);

// --stage key: what goes into a kernel's cache key. `options` are the
// arguments after FILE and --stage (e.g. --kernel K --static N=64); throw
// std::invalid_argument for a bad one (reported as a one-line error).
std::string inspectKey(const LoadedModule& result, const Args& options);

// --stage runs: every run access of a kernel in one specialization (the
// same options as --stage key), and whether it became a vector access or
// why not (docs/language.md 9.4).
std::string inspectRuns(const LoadedModule& result, const Args& options);

// --stage tune: a kernel's @tune (--kernel K): the tuned consts, every
// config in order (the first is the default), the key dims and their
// bucket rule, and what `where` pruned.
std::string inspectTune(const LoadedModule& result, const Args& options);

}  // namespace spindle::cli
