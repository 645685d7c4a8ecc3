// The bindings of a generic kernel's type parameters under which `spindle
// check` types it: every branch of a type test (`if T == bf16:`) is typed
// under some binding that takes it (docs/language.md 3.5).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sema/sema.h"

namespace spindle {

using TypeBinding = std::map<std::string, ScalarType>;

// The first binding binds every type parameter to f32 (the placeholder the
// module check has always used). For each type parameter the others add,
// per test of it, a listed type when no binding so far makes the test true,
// and an unlisted one (f32, f16, bf16, f64, then the integers) when none
// makes it false; bindings are the product over parameters, at most
// kMaxTypeBindings of them.
std::vector<TypeBinding> bindingsReachingTypeTests(const FunctionScope& kernel);

constexpr size_t kMaxTypeBindings = 16;

// "T = bf16, U = f32": for the note that says under which binding an error
// was found.
std::string describeBinding(const TypeBinding& binding);

}  // namespace spindle
