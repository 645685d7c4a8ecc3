// Helpers for the sema and pass tests: compile a snippet, find things in it.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "frontend/diagnostics.h"
#include "load_module.h"
#include "passes/capture_analysis.h"
#include "sema/sema.h"
#include "spindle/generator.h"

namespace spindle::test {

struct Analyzed {
  std::shared_ptr<SourceFile> file;
  DiagnosticEngine diags;
  LoadedModule result;
};

inline std::unique_ptr<Analyzed> analyze(const std::string& text) {
  auto a = std::make_unique<Analyzed>();
  a->file = std::make_shared<SourceFile>("test.spn", text);
  a->result = loadModule(a->file, a->diags);
  return a;
}

// The ids of every diagnostic reported, in order ("sema-unknown-name").
inline std::vector<std::string> diagIds(const Analyzed& a) {
  std::vector<std::string> ids;
  for (const auto& d : a.diags.diagnostics()) ids.push_back(diagName(d.id));
  return ids;
}

inline FunctionScope* findScope(SemaModule& sema, const std::string& name) {
  for (auto& s : sema.scopes)
    if (s->name == name) return s.get();
  return nullptr;
}

// "x:pointer", "N:dim(x)", "acc:reference", "x.stride1:stride" ...
inline std::vector<std::string> captureStrings(const FunctionScope& f) {
  std::vector<std::string> out;
  for (const auto& c : f.captures) {
    std::string s = c.symbol->name;
    if (c.mode == CaptureMode::Stride) s += ".stride" + std::to_string(c.axis);
    s += std::string(":") + captureModeName(c.mode);
    if (c.mode == CaptureMode::Dim && c.impliedBy) s += "(" + c.impliedBy->name + ")";
    out.push_back(s);
  }
  return out;
}

inline std::string generate(const std::string& text, const std::string& kernel, const Specialization& spec = {}) {
  DiagnosticEngine diags;
  auto m = CompiledModule::fromString("test.spn", text, diags);
  if (!m) {
    ADD_FAILURE() << diags.renderAll();
    return "";
  }
  return m->generate(kernel, spec).source;
}

}  // namespace spindle::test
