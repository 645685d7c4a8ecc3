#include "sema/sema.h"

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
  // A generic kernel is checked with its type parameters bound to f32; the
  // caller's binding is checked again when the kernel is specialized.
  for (auto* k : sema->kernels) {
    if (k->typingDeferred) continue;  // calls an unbound fn parameter; typed when specialized
    std::map<std::string, ScalarType> placeholder;
    for (auto& [name, sym] : k->typeParams) placeholder[name] = ScalarType::F32;
    typeCheckKernel(*sema, *k, placeholder, diags);
  }
  return sema;
}

}  // namespace spindle
