#include "sema/sema.h"

#include "passes/uniformity_analysis.h"
#include "sema/type_test_bindings.h"

namespace spindle {

void runResolver(SemaModule& sema, DiagnosticEngine& diags, const ConstValues& overrides);  // sema_resolve.cpp

std::unique_ptr<SemaModule> analyzeModule(SourceModule& module, DiagnosticEngine& diags,
                                          const ConstValues& constOverrides) {
  auto sema = std::make_unique<SemaModule>();
  sema->module = &module;
  sema->file = module.file;
  runResolver(*sema, diags, constOverrides);
  if (diags.hasErrors()) return sema;
  for (auto* f : sema->functions) typeCheckFunction(*sema, *f, diags);
  // A generic kernel is checked with its type parameters bound to f32, and
  // again under each binding that takes a branch of a type test f32 does not
  // (`if T == bf16:`); the caller's binding is checked again when the kernel
  // is specialized.
  for (auto* k : sema->kernels) {
    if (k->typingDeferred) continue;  // calls an unbound fn parameter; typed when specialized
    std::vector<TypeBinding> bindings = bindingsReachingTypeTests(*k);
    typeCheckKernel(*sema, *k, bindings.front(), diags);
    if (bindings.size() == 1) continue;
    for (size_t i = 1; i < bindings.size(); ++i) {
      DiagnosticEngine more;
      if (typeCheckKernel(*sema, *k, bindings[i], more)) continue;
      for (const Diagnostic& d : more.diagnostics()) {
        if (diags.hasSame(d)) continue;  // found under an earlier binding too
        Diagnostic copy = d;
        copy.notes.push_back(Diagnostic{DiagId::Count,
                                        Severity::Note,
                                        k->kernel->nameRange,
                                        "found while typing kernel '" + k->name + "' with " +
                                            describeBinding(bindings[i]) +
                                            ", a binding that takes a branch of one of its type tests",
                                        sema->file,
                                        {}});
        diags.add(std::move(copy));
      }
    }
    DiagnosticEngine discarded;  // leave the module typed as before: every type parameter f32
    typeCheckKernel(*sema, *k, bindings.front(), discarded);
  }
  // Barriers and collectives under thread-dependent control flow (8.9): on
  // a module whose names and types are sound.
  if (!diags.hasErrors()) checkUniformControlFlow(*sema, diags);
  return sema;
}

}  // namespace spindle
