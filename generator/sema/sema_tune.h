// @tune (docs/language.md 9.6): the decorator's keywords checked and its
// configs expanded once, at sema, so every consumer (the runtime's tuner,
// `spindle tune`, `inspect`) reads the same list from KernelInfo::tune.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "frontend/ast.h"
#include "frontend/diagnostics.h"
#include "sema/sema.h"

namespace spindle {

// The most configs one @tune may expand to: each is a compile and a few
// timed launches per key bucket.
inline constexpr size_t kMaxTuneConfigs = 256;

// Module-level names (consts) as the resolver sees them; null when unknown.
using GlobalLookup = std::function<Symbol*(const std::string&)>;

// The configs of `d` (a @tune of `kernel`), or nullopt after reporting what
// is wrong. Configs are the cartesian product of the listed values in
// source order (the first const varies slowest), less those `where` rejects;
// the first is the default.
std::optional<TuneInfo> resolveTune(const Decorator& d, const FunctionScope& kernel, const GlobalLookup& globals,
                                    const std::shared_ptr<const SourceFile>& file, DiagnosticEngine& diags);

}  // namespace spindle
