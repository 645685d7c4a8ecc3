#include "sema/type_test_bindings.h"
#include <functional>

#include <algorithm>
#include <set>

#include "frontend/ast_walk.h"

namespace spindle {

namespace {

void collectTypeTests(const Expr& e, std::vector<const TypeTestExpr*>& out) {
  if (const auto* t = e.as<TypeTestExpr>()) out.push_back(t);
  forEachChild(e, [&](const Expr& c) { collectTypeTests(c, out); });
}

void collectTypeTests(const Block& body, std::vector<const TypeTestExpr*>& out) {
  for (const StmtPtr& s : body) {
    forEachChild(
        *s, [&](const Expr& e) { collectTypeTests(e, out); }, [&](const Block& b) { collectTypeTests(b, out); });
    if (const auto* def = s->as<FuncDefStmt>()) collectTypeTests(def->func->body, out);
  }
}

// The shared buffers that dot(acc, As, r, k, Bs, ...) multiplies.
void collectDotBuffers(const Block& body, std::set<std::string>& out) {
  std::function<void(const Expr&)> onExpr = [&](const Expr& e) {
    if (const auto* c = e.as<CallExpr>(); c && (c->callee == "dot" || c->callee == "dot_bt")) {
      if (c->args.size() == 8)
        for (size_t i : {size_t(1), size_t(4)})
          if (const auto* n = c->args[i]->as<NameExpr>()) out.insert(n->name);
      if (c->args.size() == 6)
        if (const auto* n = c->args[2]->as<NameExpr>()) out.insert(n->name);
    }
    forEachChild(e, onExpr);
  };
  for (const StmtPtr& s : body) {
    forEachChild(*s, onExpr, [&](const Block& b) { collectDotBuffers(b, out); });
    if (const auto* def = s->as<FuncDefStmt>()) collectDotBuffers(def->func->body, out);
  }
}

// Type parameters that type matrix operand tiles (mma_a(T, ..), mma_b(T,
// ..)) or dot's shared buffers (As = shared(T, ..)), which only f16 and
// bf16 can: checked as f16 rather than f32.
void collectOperandTypeParams(const Block& body, const std::set<std::string>& dotBuffers, std::set<std::string>& out) {
  for (const StmtPtr& s : body) {
    if (const auto* a = s->as<AssignStmt>())
      if (const auto* c = a->value->as<CallExpr>(); c && !c->args.empty()) {
        const auto* target = a->target->as<NameExpr>();
        const bool operand = c->callee == "mma_a" || c->callee == "mma_b" ||
                             (c->callee == "shared" && target && dotBuffers.count(target->name));
        if (const auto* t = c->args[0]->as<NameExpr>(); operand && t) out.insert(t->name);
      }
    forEachChild(
        *s, [](const Expr&) {}, [&](const Block& b) { collectOperandTypeParams(b, dotBuffers, out); });
    if (const auto* def = s->as<FuncDefStmt>()) collectOperandTypeParams(def->func->body, dotBuffers, out);
  }
}

bool listedIn(ScalarType t, const std::vector<ScalarType>& list) {
  return std::find(list.begin(), list.end(), t) != list.end();
}

// Floats first: a kernel with a type test on T is most likely a float
// kernel, and an unlisted type should not fail for reasons of its own.
constexpr ScalarType kUnlistedOrder[] = {ScalarType::F32, ScalarType::F16, ScalarType::BF16, ScalarType::F64,
                                         ScalarType::I32, ScalarType::I64, ScalarType::U32,  ScalarType::U64,
                                         ScalarType::I16, ScalarType::U16, ScalarType::I8,   ScalarType::U8};

}  // namespace

std::vector<TypeBinding> bindingsReachingTypeTests(const FunctionScope& kernel) {
  std::vector<const TypeTestExpr*> tests;
  if (kernel.kernel) collectTypeTests(kernel.kernel->body, tests);

  // Per parameter, the types to try, f32 first.
  std::map<std::string, std::vector<ScalarType>> candidates;
  std::set<std::string> operandTypes;
  if (kernel.kernel) {
    std::set<std::string> dotBuffers;
    collectDotBuffers(kernel.kernel->body, dotBuffers);
    collectOperandTypeParams(kernel.kernel->body, dotBuffers, operandTypes);
  }
  for (const auto& [name, sym] : kernel.typeParams)
    candidates[name] = {operandTypes.count(name) ? ScalarType::F16 : ScalarType::F32};
  for (const TypeTestExpr* t : tests) {
    auto it = candidates.find(t->param);
    if (it == candidates.end() || t->resolved.size() != t->types.size() || t->resolved.empty()) continue;
    std::vector<ScalarType>& tried = it->second;
    bool someListed = std::any_of(tried.begin(), tried.end(), [&](ScalarType c) { return listedIn(c, t->resolved); });
    bool someUnlisted =
        std::any_of(tried.begin(), tried.end(), [&](ScalarType c) { return !listedIn(c, t->resolved); });
    if (!someListed) tried.push_back(t->resolved.front());
    if (!someUnlisted)
      for (ScalarType c : kUnlistedOrder)
        if (!listedIn(c, t->resolved)) {
          tried.push_back(c);
          break;
        }
  }

  std::vector<TypeBinding> bindings{{}};
  for (const auto& [name, tried] : candidates) {
    std::vector<TypeBinding> next;
    for (const TypeBinding& b : bindings)
      for (ScalarType c : tried) {
        if (next.size() == kMaxTypeBindings) break;
        TypeBinding extended = b;
        extended[name] = c;
        next.push_back(std::move(extended));
      }
    bindings = std::move(next);
  }
  return bindings;
}

std::string describeBinding(const TypeBinding& binding) {
  std::string out;
  for (const auto& [name, type] : binding) {
    if (!out.empty()) out += ", ";
    out += name + " = " + std::string(scalarName(type));
  }
  return out;
}

}  // namespace spindle
