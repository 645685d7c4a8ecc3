// libFuzzer target: the whole generator, source text to HIP text.
//
// CompiledModule::fromString, then for each kernel generate() with a
// specialization that binds every @static dim to a small value and every type
// parameter to f32, plus launchGeometry() with every dim bound. Expected
// outcomes: diagnostics (fromString returns null, with errors), or a
// GeneratorError for a request the library rejects. A crash, a sanitizer
// report, an InternalError, or null without an error diagnostic is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "frontend/diagnostics.h"
#include "spindle/generator.h"

namespace {

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "spindle bug: %s: %s\n", what, detail.c_str());
  std::abort();
}

void exerciseKernel(const spindle::CompiledModule& module, const spindle::KernelInfo& kernel, bool lineDirectives) {
  spindle::Specialization spec;
  spec.lineDirectives = lineDirectives;
  int64_t value = 3;
  for (const std::string& dim : kernel.staticDims) spec.staticDims[dim] = value++;
  for (const std::string& param : kernel.typeParams) spec.typeArgs[param] = spindle::ScalarType::F32;
  try {
    spindle::GeneratedKernel generated = module.generate(kernel.name, spec);
    if (generated.source.empty()) bug("generate", "empty source for kernel " + kernel.name);
    if (generated.kernelSymbol.empty()) bug("generate", "empty kernel symbol for " + kernel.name);
    if (generated.key != module.specializationKey(kernel.name, spec))
      bug("generate", "key differs from specializationKey() for " + kernel.name);
  } catch (const spindle::GeneratorError&) {
    // A rejected request: fine.
  }
  try {
    std::map<std::string, int64_t> dims;
    for (const std::string& dim : kernel.dimSymbols) dims[dim] = 7;
    for (const auto& [dim, v] : spec.staticDims) dims[dim] = v;
    (void)module.launchGeometry(kernel.name, spec, dims);
  } catch (const spindle::GeneratorError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  spindle::DiagnosticEngine diags;
  try {
    std::unique_ptr<spindle::CompiledModule> module = spindle::CompiledModule::fromString("fuzz.spn", text, diags);
    if (!module) {
      if (!diags.hasErrors()) bug("fromString", "returned null without an error diagnostic");
      (void)diags.renderAll();
      return 0;
    }
    for (const spindle::KernelInfo& kernel : module->kernels()) {
      exerciseKernel(*module, kernel, /*lineDirectives=*/true);
      exerciseKernel(*module, kernel, /*lineDirectives=*/false);
    }
  } catch (const spindle::GeneratorError&) {
  } catch (const spindle::InternalError& e) {
    bug("InternalError", e.what());
  } catch (const spindle::FatalDiagnostic&) {
    bug("FatalDiagnostic", "escaped CompiledModule");
  }
  return 0;
}
