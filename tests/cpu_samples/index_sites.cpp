#include "index_sites.h"

#include <map>
#include <memory>
#include <stdexcept>

#include "frontend/ast.h"
#include "frontend/ast_walk.h"
#include "frontend/diagnostics.h"
#include "frontend/parser.h"

namespace spindle::cpu_samples {
namespace {

// A tensor or scratch buffer in scope: its extents as written.
struct Buffer {
  std::vector<std::string> extents;
  bool tensorParam = false;
  bool shared = false;
  bool fragment = false;  // a fragment array of the matrix API: registers
};
using Scope = std::map<std::string, Buffer>;

class Finder {
 public:
  explicit Finder(const std::string& text) : text_(text) {}
  std::vector<IndexSite> sites;

  void function(const std::vector<Param>& params, const Block& body, Scope scope) {
    for (const Param& p : params) {
      scope.erase(p.name);
      if (!p.type.isTensor) continue;
      Buffer b{{}, true, false};
      for (const auto& d : p.type.dims) b.extents.push_back(slice(d->range));
      scope[p.name] = b;
    }
    block(body, scope);
  }

 private:
  const std::string& text_;

  std::string slice(const SourceRange& r) const { return text_.substr(r.begin.offset, r.end.offset - r.begin.offset); }

  void block(const Block& b, Scope& scope) {
    for (const auto& s : b) stmt(*s, scope);
  }

  void stmt(const Stmt& s, Scope& scope) {
    if (const auto* a = s.as<AssignStmt>()) {
      expr(*a->value, scope, false);
      // A scratch buffer: `name = shared(T, [dims])` or `local(T, [dims], init)`.
      const auto* call = a->value->as<CallExpr>();
      const auto* name = a->target->as<NameExpr>();
      if (name && call && (call->callee == "shared" || call->callee == "local") && call->args.size() >= 2) {
        if (const auto* list = call->args[1]->as<ListExpr>()) {
          Buffer b;
          b.shared = call->callee == "shared";
          for (const auto& e : list->elements) b.extents.push_back(slice(e->range));
          scope[name->name] = b;
        }
      }
      // A fragment array (mma_zero/mma_a/mma_b) is registers, not memory:
      // its indices are compile-time and no bounds check sees them.
      if (name && call && call->callee.rfind("mma_", 0) == 0 && call->callee.find("load") == std::string::npos) {
        Buffer b;
        b.fragment = true;
        scope[name->name] = b;
      }
      target(*a->target, scope);
      return;
    }
    if (const auto* a = s.as<AugAssignStmt>()) {
      expr(*a->value, scope, false);
      target(*a->target, scope);
      return;
    }
    if (const auto* f = s.as<FuncDefStmt>()) {  // a closure sees its parents' names
      function(f->func->params, f->func->body, scope);
      return;
    }
    forEachChild(
        s, [&](const Expr& e) { expr(e, scope, false); }, [&](const Block& b) { block(b, scope); });
  }

  void target(const Expr& e, Scope& scope) {
    if (const auto* t = e.as<TupleExpr>()) {
      for (const auto& x : t->elements) target(*x, scope);
      return;
    }
    expr(e, scope, /*store=*/true);
  }

  void expr(const Expr& e, Scope& scope, bool store) {
    if (const auto* ix = e.as<IndexExpr>()) return access(*ix, scope, store);
    if (const auto* call = e.as<CallExpr>(); call && call->callee.rfind("atomic_", 0) == 0 && !call->args.empty()) {
      expr(*call->args[0], scope, /*store=*/true);
      for (size_t i = 1; i < call->args.size(); ++i) expr(*call->args[i], scope, false);
      return;
    }
    forEachChild(e, [&](const Expr& child) { expr(child, scope, false); });
  }

  void access(const IndexExpr& ix, Scope& scope, bool store) {
    const auto* base = ix.base->as<NameExpr>();
    const Buffer* buffer = nullptr;
    if (base) {
      auto it = scope.find(base->name);
      if (it != scope.end()) buffer = &it->second;
    }
    for (size_t axis = 0; axis < ix.indices.size() && !(buffer && buffer->fragment); ++axis) {
      const Expr& index = *ix.indices[axis];
      IndexSite site;
      site.begin = index.range.begin.offset;
      site.end = index.range.end.offset;
      site.line = ix.range.begin.line;
      site.col = ix.range.begin.col;
      site.access = slice(ix.range);
      site.index = slice(index.range);
      site.base = base ? base->name : slice(ix.base->range);
      site.axis = axis;
      if (buffer && axis < buffer->extents.size()) site.extent = buffer->extents[axis];
      site.store = store;
      site.tensorParam = buffer && buffer->tensorParam;
      site.sharedBuffer = buffer && buffer->shared;
      sites.push_back(std::move(site));
    }
    for (const auto& index : ix.indices) expr(*index, scope, false);
  }
};

}  // namespace

std::vector<IndexSite> indexSites(const std::string& path, const std::string& text) {
  auto file = std::make_shared<SourceFile>(path, text);
  DiagnosticEngine diags;
  std::unique_ptr<SourceModule> module = parseModule(file, diags);
  if (diags.hasErrors() || !module) throw std::runtime_error(path + " does not parse:\n" + diags.renderAll());
  Finder finder(text);
  for (const TopLevelDecl& d : module->decls) {
    if (d.function) finder.function(d.function->params, d.function->body, {});
    if (d.kernel) finder.function(d.kernel->params, d.kernel->body, {});
  }
  return std::move(finder.sites);
}

std::string mutate(const std::string& text, const IndexSite& s, const std::string& suffix) {
  return text.substr(0, s.begin) + "(" + text.substr(s.begin, s.end - s.begin) + ")" + suffix + text.substr(s.end);
}

}  // namespace spindle::cpu_samples
