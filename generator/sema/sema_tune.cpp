#include "sema/sema_tune.h"

#include <fmt/format.h>

#include <algorithm>

#include "sema/const_eval.h"

namespace spindle {
namespace {

std::string describe(const Expr& e) {
  if (const auto* n = e.as<NameExpr>()) return "'" + n->name + "'";
  if (e.as<IntLitExpr>()) return "an integer";
  if (e.as<ListExpr>()) return "a list";
  return "an expression";
}

bool isIntegerConst(const Symbol* s) {
  return s && s->kind == SymbolKind::Const && !s->value.isFloat && s->value.function.empty() &&
         s->declRange.begin.valid();  // not `pi` or `e`
}

}  // namespace

std::optional<TuneInfo> resolveTune(const Decorator& d, const FunctionScope& kernel, const GlobalLookup& globals,
                                    const std::shared_ptr<const SourceFile>& file, DiagnosticEngine& diags) {
  TuneInfo tune;
  std::vector<std::vector<int64_t>> values;  // per tuned const
  const Expr* where = nullptr;
  bool ok = true;
  // A module const's value where it is not tuned (the condition may name others).
  ConstLookup moduleConsts = [&](const NameExpr& n) -> std::optional<ConstValue> {
    Symbol* s = globals(n.name);
    if (isIntegerConst(s)) return s->value;
    return std::nullopt;
  };
  for (const KeywordArg& kw : d.kwargs) {
    const Expr& v = *kw.value;
    if (kw.name == "where") {
      where = &v;
      continue;
    }
    if (kw.name == "bucket") {
      const auto* lit = v.as<IntLitExpr>();
      const auto* n = v.as<NameExpr>();
      if (n && n->name == "exact") tune.bucketBase = 0;
      else if (lit && lit->value >= 2 && lit->value <= 1024) tune.bucketBase = int64_t(lit->value);
      else {
        diags.report(DiagId::sema_tune_bucket, file, v.range, lit ? std::to_string(lit->value) : describe(v));
        ok = false;
      }
      continue;
    }
    if (kw.name == "key") {
      const auto* list = v.as<ListExpr>();
      if (!list) {
        diags.report(DiagId::sema_tune_key, file, v.range, kernel.name, "got " + describe(v));
        ok = false;
        continue;
      }
      for (const auto& e : list->elements) {
        const auto* n = e->as<NameExpr>();
        auto it = n ? kernel.names.find(n->name) : kernel.names.end();
        if (it == kernel.names.end() || it->second->kind != SymbolKind::DimSymbol) {
          diags.report(DiagId::sema_tune_key, file, e->range, kernel.name, describe(*e) + " is not one");
          ok = false;
        } else if (std::find(tune.keyDims.begin(), tune.keyDims.end(), n->name) != tune.keyDims.end()) {
          diags.report(DiagId::sema_tune_key, file, e->range, kernel.name, "'" + n->name + "' is named twice");
          ok = false;
        } else {
          tune.keyDims.push_back(n->name);
        }
      }
      continue;
    }
    // CONST=[values]
    Symbol* c = globals(kw.name);
    if (!isIntegerConst(c)) {
      diags.report(DiagId::sema_tune_not_const, file, kw.nameRange, kw.name,
                   !c                             ? std::string("not a module const")
                   : c->kind != SymbolKind::Const ? std::string("not a const")
                                                  : std::string("not an integer const"));
      ok = false;
      continue;
    }
    const auto* list = v.as<ListExpr>();
    if (!list || list->elements.empty()) {
      diags.report(DiagId::sema_tune_values, file, v.range, kw.name,
                   list ? std::string("got an empty list") : "got " + describe(v));
      ok = false;
      continue;
    }
    std::vector<int64_t> vals;
    for (const auto& e : list->elements) {
      ConstEvalFailure why;
      auto value = evaluateConst(*e, moduleConsts, &why);
      if (!value || value->isFloat) {
        diags.report(DiagId::sema_tune_values, file, e->range, kw.name,
                     value ? std::string("got a float") : "and this is not one (" + why.reason + ")");
        ok = false;
      } else if (std::find(vals.begin(), vals.end(), value->i) != vals.end()) {
        diags.report(DiagId::sema_tune_values, file, e->range, kw.name, fmt::format("got {} twice", value->i));
        ok = false;
      } else {
        vals.push_back(value->i);
      }
    }
    tune.consts.push_back(kw.name);
    values.push_back(std::move(vals));
  }
  if (!ok) return std::nullopt;
  if (tune.consts.empty()) {
    diags.report(DiagId::sema_tune_values, file, d.range, "CONST", "and none was given");
    return std::nullopt;
  }
  size_t total = 1;
  for (const auto& v : values) total = std::min(total * v.size(), kMaxTuneConfigs + 1);
  if (total > kMaxTuneConfigs && !where) {
    diags.report(DiagId::sema_tune_too_many, file, d.range, total, kMaxTuneConfigs);
    return std::nullopt;
  }
  // The product, first const slowest; each kept when `where` holds.
  std::vector<size_t> index(values.size(), 0);
  size_t combinations = 0;
  while (true) {
    std::vector<int64_t> config;
    for (size_t i = 0; i < values.size(); ++i) config.push_back(values[i][index[i]]);
    ++combinations;
    bool keep = true;
    if (where) {
      ConstLookup lookup = [&](const NameExpr& n) -> std::optional<ConstValue> {
        for (size_t i = 0; i < tune.consts.size(); ++i)
          if (tune.consts[i] == n.name) return ConstValue::ofInt(config[i]);
        return moduleConsts(n);
      };
      ConstEvalFailure why;
      auto value = evaluateConst(*where, lookup, &why);
      if (!value) {
        const Expr* at = why.where ? why.where : where;
        diags.report(DiagId::sema_tune_where, file, at->range, why.reason.empty() ? "it has no value" : why.reason);
        return std::nullopt;
      }
      keep = value->asDouble() != 0;
    }
    if (keep) {
      if (tune.configs.size() == kMaxTuneConfigs) {
        diags.report(DiagId::sema_tune_too_many, file, d.range, "more than " + std::to_string(kMaxTuneConfigs),
                     kMaxTuneConfigs);
        return std::nullopt;
      }
      tune.configs.push_back(std::move(config));
    }
    size_t i = values.size();
    while (i > 0 && ++index[i - 1] == values[i - 1].size()) index[--i] = 0;
    if (i == 0) break;
  }
  if (tune.configs.empty()) {
    diags.report(DiagId::sema_tune_empty, file, where->range, combinations);
    return std::nullopt;
  }
  tune.pruned = combinations - tune.configs.size();
  if (where) {
    const std::string& text = file->text();
    tune.where = text.substr(where->range.begin.offset, where->range.end.offset - where->range.begin.offset);
  }
  return tune;
}

}  // namespace spindle
