#include "vector_runs.h"

#include <fmt/format.h>

#include <functional>

#include "frontend/ast_walk.h"

namespace spindle {

namespace {

bool isVar(const Expr& e, const Symbol* var) {
  const auto* n = e.as<NameExpr>();
  return n && n->symbol == var;
}

bool mentions(const Expr& e, const Symbol* var) {
  if (isVar(e, var)) return true;
  bool found = false;
  forEachChild(e, [&](const Expr& c) { found = found || mentions(c, var); });
  return found;
}

// `e + k` or `k + e` with k the loop variable and e free of it: e.
const Expr* runStartOf(const Expr& last, const Symbol* var) {
  const auto* b = last.as<BinaryExpr>();
  if (!b || b->op != BinaryOp::Add) return nullptr;
  if (isVar(*b->rhs, var) && !mentions(*b->lhs, var)) return b->lhs.get();
  if (isVar(*b->lhs, var) && !mentions(*b->rhs, var)) return b->rhs.get();
  return nullptr;
}

// An element of a kernel tensor parameter indexed in a run of `var`.
bool isRunElement(const IndexExpr& idx, const Symbol* var) {
  const auto* base = idx.base->as<NameExpr>();
  if (!base || !base->symbol || base->symbol->kind != SymbolKind::TensorParam || idx.indices.empty()) return false;
  for (size_t a = 0; a + 1 < idx.indices.size(); ++a)
    if (mentions(*idx.indices[a], var)) return false;
  return runStartOf(*idx.indices.back(), var) != nullptr;
}

std::string textOf(const std::string& source, const Expr& e) {
  if (e.range.end.offset <= e.range.begin.offset || e.range.end.offset > source.size()) return "?";
  return source.substr(e.range.begin.offset, e.range.end.offset - e.range.begin.offset);
}

// Why the offset of the run's first element, sum(index * stride), is not
// known to be a multiple of `need` elements: the first term that is not.
std::string offsetReason(const IndexExpr& idx, const Expr& start, const Symbol& x, const Divisibility& div,
                         int64_t need, const std::string& source) {
  const size_t rank = idx.indices.size();
  for (size_t a = 0; a < rank; ++a) {
    const Expr& i = a + 1 == rank ? start : *idx.indices[a];
    const int64_t di = div.of(i), ds = div.strideOf(x, a);
    if (di * ds >= need || di >= Divisibility::kZero) continue;
    std::string term = textOf(source, i);
    if (ds < need && a + 1 < rank) {
      // The stride is what falls short: name the dim or stride to declare.
      if (x.strided)
        return fmt::format("the row stride of '{}' has no granularity {}: --divisible {}.stride{}={}", x.name, need,
                           x.name, a, need);
      // The innermost dim first: its granularity serves every row.
      for (size_t k = rank - 1; k > a; --k)
        if (div.dimOf(x, k) < need) {
          const auto* n = x.shape[k]->as<NameExpr>();
          std::string flag = n ? n->name : dimDivisibleName(x.name, int(k));
          if (need < 16) flag += fmt::format("={}", need);
          return fmt::format(
              "the offset of row `{}` of '{}' is a multiple of {} element(s), not {}: {} has no "
              "granularity {} (--divisible {})",
              term, x.name, std::max<int64_t>(di * ds, 1), need, textOf(source, *x.shape[k]), need, flag);
        }
    }
    return fmt::format("`{}` is not a known multiple of {} (known: {}); state it with multiple_of({}, {})", term,
                       need / std::max<int64_t>(ds, 1), di, term, need / std::max<int64_t>(ds, 1));
  }
  return "";
}

}  // namespace

std::optional<RunAccess> analyzeRunCopy(const ForStmt& loop, const FunctionScope& kernel, const Divisibility& div,
                                        const Specialization& spec, const std::string& source) {
  if (!loop.isStatic || loop.body.size() != 1 || !loop.symbol) return std::nullopt;
  const Symbol* var = loop.symbol;
  // static_range(V) or static_range(0, V)
  const Expr* stop = nullptr;
  int64_t start = 0;
  if (loop.rangeArgs.size() == 1) stop = loop.rangeArgs[0].get();
  else if (loop.rangeArgs.size() == 2 && div.constantValue(*loop.rangeArgs[0], start) && start == 0)
    stop = loop.rangeArgs[1].get();
  if (!stop) return std::nullopt;

  RunAccess r;
  r.loop = &loop;
  r.copy = true;
  const Stmt& s = *loop.body[0];
  const IndexExpr* localElem = nullptr;
  const Expr* tensorSide = nullptr;
  if (const auto* a = s.as<AssignStmt>()) {
    const auto* t = a->target->as<IndexExpr>();
    if (!t) return std::nullopt;
    const auto* tb = t->base->as<NameExpr>();
    if (tb && tb->symbol && tb->symbol->kind == SymbolKind::LocalBuffer) {
      localElem = t, tensorSide = a->value.get();  // xs[k] = x[..., e + k]
    } else {
      r.store = true, tensorSide = t;  // x[..., e + k] = xs[k]
      localElem = a->value->as<IndexExpr>();
    }
    if (!r.store)
      if (const auto* call = tensorSide->as<CallExpr>(); call && !call->symbol && call->args.size() == 1) {
        const BuiltinInfo* b = findBuiltin(call->callee);
        if (b && b->category == BuiltinCategory::CachedLoad) r.hint = call, tensorSide = call->args[0].get();
      }
  } else if (const auto* e = s.as<ExprStmt>()) {
    const auto* call = e->expr->as<CallExpr>();
    const BuiltinInfo* b = call && !call->symbol ? findBuiltin(call->callee) : nullptr;
    if (!b || b->category != BuiltinCategory::CachedStore) return std::nullopt;
    r.store = true, r.hint = call, tensorSide = call->args[0].get();
    localElem = call->args[1]->as<IndexExpr>();
  } else {
    return std::nullopt;
  }
  const auto* elem = tensorSide ? tensorSide->as<IndexExpr>() : nullptr;
  if (!elem || !isRunElement(*elem, var)) return std::nullopt;
  r.element = elem;
  r.tensor = elem->base->as<NameExpr>()->symbol;
  r.runStart = runStartOf(*elem->indices.back(), var);
  const size_t elementBytes = scalarBytes(r.tensor->type);
  if (div.constantValue(*stop, r.length)) r.bytes = r.length * int64_t(elementBytes);

  auto no = [&](std::string why) {
    r.wordBytes = 0;
    r.whyNot = std::move(why);
    return r;
  };
  // The other side must be L[k] or L[b + k] (b free of k: a run of the
  // local array too), L a local array of the tensor's type.
  const auto* lb = localElem ? localElem->base->as<NameExpr>() : nullptr;
  if (!lb || !lb->symbol || lb->symbol->kind != SymbolKind::LocalBuffer || localElem->indices.size() != 1 ||
      !(isVar(*localElem->indices[0], var) || runStartOf(*localElem->indices[0], var)))
    return no("the loop body is not a plain copy between the run and a local array `L[k]` or `L[b + k]`");
  r.local = lb->symbol;
  r.localStart = runStartOf(*localElem->indices[0], var);
  if (r.local->type != r.tensor->type)
    return no(fmt::format("the local array '{}' is {}, the tensor {}: a copy converts", r.local->name,
                          scalarName(r.local->type), scalarName(r.tensor->type)));
  int64_t localSize = 0, localStart = 0;
  if (r.localStart && !div.constantValue(*r.localStart, localStart)) localStart = -1;  // a static_range index, say
  if (!div.constantValue(*r.local->shape[0], localSize) || localSize < r.length ||
      (localStart >= 0 && localStart + r.length > localSize))
    return no(fmt::format("the local array '{}' is not known to hold the run", r.local->name));
  if (r.tensor->owner != &kernel) return no("the tensor is not a parameter of the kernel");
  if (r.tensor->strided && !r.tensor->unitInnerStride)
    return no(
        fmt::format("'{}' has no unit inner stride in this specialization (suggest --unit-stride {} or "
                    "--contiguous {})",
                    r.tensor->name, r.tensor->name, r.tensor->name));
  if (r.hint && r.hint->callee == "load_keep") return no("load_keep has no vector form yet");
  if (r.length <= 0) return no("the run length is not a compile-time constant");
  // The largest word that divides the run and that its start provably
  // sits on: 16 bytes, else 8, else 4 (a 16-byte run at an 8-byte offset
  // is two 8-byte words). The reason names what the largest one lacks.
  std::vector<int> words;
  for (int w : {16, 8, 4})
    if (r.bytes % w == 0 && size_t(w) % elementBytes == 0) words.push_back(w);
  if (words.empty()) return no(fmt::format("a run of {} bytes is not a multiple of 4, 8 or 16 bytes", r.bytes));
  if (!spec.alignedTensors.count(r.tensor->name))
    return no(fmt::format("the base of '{}' is not known 16-byte aligned in this specialization (suggest --aligned {})",
                          r.tensor->name, r.tensor->name));
  // The first element's offset, sum(index * stride), times the element
  // size must be a multiple of the word.
  const size_t rank = elem->indices.size();
  auto aligned = [&](int64_t needElements) {
    for (size_t a = 0; a < rank; ++a) {
      const Expr& i = a + 1 == rank ? *r.runStart : *elem->indices[a];
      const int64_t d = div.of(i), ds = div.strideOf(*r.tensor, a);
      if (d < Divisibility::kZero && (d >= Divisibility::kZero / ds ? Divisibility::kZero : d * ds) < needElements)
        return false;
    }
    return true;
  };
  int word = 0;
  for (int w : words)
    if (aligned(w / int64_t(elementBytes))) {
      word = w;
      break;
    }
  if (!word) {
    const int64_t need = words.front() / int64_t(elementBytes);
    return no(offsetReason(*elem, *r.runStart, *r.tensor, div, need, source));
  }
  r.wordBytes = word;
  return r;
}

std::vector<RunAccess> findRunAccesses(const FunctionScope& kernel, const Specialization& spec,
                                       const std::string& source) {
  std::vector<RunAccess> out;
  if (!kernel.kernel) return out;
  Divisibility div(kernel, spec);
  std::function<void(const Block&)> walk;
  // Elements indexed in a run of `var` inside `e` (that are not a copy).
  std::function<void(const Expr&, const ForStmt&, bool)> elements = [&](const Expr& e, const ForStmt& f, bool store) {
    if (const auto* idx = e.as<IndexExpr>(); idx && isRunElement(*idx, f.symbol)) {
      RunAccess r;
      r.loop = &f, r.element = idx, r.store = store, r.tensor = idx->base->as<NameExpr>()->symbol;
      int64_t v = 0;
      if (f.rangeArgs.size() == 1 && div.constantValue(*f.rangeArgs[0], v))
        r.length = v, r.bytes = v * int64_t(scalarBytes(r.tensor->type));
      r.whyNot = "the loop body is not a plain copy between the run and a local array `L[k]` or `L[b + k]`";
      out.push_back(r);
    }
    forEachChild(e, [&](const Expr& c) { elements(c, f, false); });
  };
  std::function<void(const Block&, const ForStmt&)> inLoop = [&](const Block& b, const ForStmt& f) {
    for (const auto& s : b) {
      const auto* a = s->as<AssignStmt>();
      const auto* aug = s->as<AugAssignStmt>();
      forEachChild(
          *s,
          [&](const Expr& e) {
            bool store = (a && &e == a->target.get()) || (aug && &e == aug->target.get());
            elements(e, f, store);
          },
          [&](const Block& inner) { inLoop(inner, f); });
    }
  };
  walk = [&](const Block& b) {
    for (const auto& s : b) {
      if (const auto* f = s->as<ForStmt>(); f && f->isStatic && f->symbol) {
        if (auto r = analyzeRunCopy(*f, kernel, div, spec, source)) {
          out.push_back(*r);
          continue;
        }
        inLoop(f->body, *f);
      }
      forEachChild(
          *s, [](const Expr&) {}, [&](const Block& inner) { walk(inner); });
    }
  };
  walk(kernel.kernel->body);
  return out;
}

std::string describeRunAccess(const RunAccess& r, const std::string& source) {
  std::string what = r.store ? "store" : "load";
  if (r.hint) what = r.hint->callee;
  std::string run = r.length > 0
                        ? fmt::format("a run of {} {} ({} bytes)", r.length, scalarName(r.tensor->type), r.bytes)
                        : fmt::format("a run of {} of unknown length", scalarName(r.tensor->type));
  const std::string at = fmt::format("{}:{}", r.element->range.begin.line, r.element->range.begin.col);
  if (r.wordBytes) {
    const int64_t words = r.bytes / r.wordBytes;
    return fmt::format("{}: vector: {}: {} of {} as {} word{} of {} bytes", at, textOf(source, *r.element), what, run,
                       words, words == 1 ? "" : "s", r.wordBytes);
  }
  return fmt::format("{}: scalar: {}: {} of {}: {}", at, textOf(source, *r.element), what, run, r.whyNot);
}

}  // namespace spindle
