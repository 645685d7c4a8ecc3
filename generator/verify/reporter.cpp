#include <algorithm>
#include <ostream>
#include <tuple>

#include "check.h"

namespace spindle::verify {

void Reporter::report(const clang::SourceManager& sm, clang::SourceLocation loc, const char* checkId,
                      std::string message) {
  // Macro expansions (e.g. __shared__) report where they were written.
  loc = sm.getFileLoc(loc);
  Violation v;
  v.checkId = checkId;
  v.message = std::move(message);
  if (loc.isValid()) {
    // The physical position in the .hip file, not the #line-presumed one: the
    // thing being verified is the generated text.
    auto [fid, offset] = sm.getDecomposedLoc(loc);
    if (const auto* entry = sm.getFileEntryForID(fid)) v.file = entry->getName().str();
    v.line = sm.getLineNumber(fid, offset);
    v.col = sm.getColumnNumber(fid, offset);
    clang::PresumedLoc presumed = sm.getPresumedLoc(loc);
    if (presumed.isValid() && v.file != presumed.getFilename())
      v.presumed = std::string(presumed.getFilename()) + ":" + std::to_string(presumed.getLine()) + ":" +
                   std::to_string(presumed.getColumn());
  }
  violations_.push_back(std::move(v));
}

void Reporter::print(std::ostream& os) const {
  std::vector<const Violation*> sorted;
  for (const auto& v : violations_) sorted.push_back(&v);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Violation* a, const Violation* b) {
    return std::tie(a->file, a->line, a->col, a->checkId) < std::tie(b->file, b->line, b->col, b->checkId);
  });
  for (const Violation* v : sorted) {
    os << v->file << ':' << v->line << ':' << v->col << ": error: " << v->message << " [verify-" << v->checkId << "]\n";
    if (!v->presumed.empty()) os << v->presumed << ": note: generated from here\n";
  }
}

bool isKernel(const clang::FunctionDecl* fn) { return fn->hasAttr<clang::CUDAGlobalAttr>(); }

bool isDeviceOnly(const clang::FunctionDecl* fn) {
  return fn->hasAttr<clang::CUDADeviceAttr>() && !fn->hasAttr<clang::CUDAGlobalAttr>();
}

bool isPreludeHelper(const clang::FunctionDecl* fn) {
  const clang::IdentifierInfo* id = fn->getIdentifier();
  return id && id->getName().startswith("__spn_");
}

}  // namespace spindle::verify
