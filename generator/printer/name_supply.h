// One name supply per generated function (TVM's codegen_c habit): C++ and
// HIP/CUDA names are reserved up front; an author's name is kept unless it
// clashes, and then gets a stable suffix (_1, _2, ...). Every Symbol maps to
// exactly one emitted name; asking for an unknown symbol is a compiler bug.
#pragma once

#include <map>
#include <set>
#include <string>

#include "sema/sema.h"

namespace spindle {

class NameSupply {
 public:
  explicit NameSupply(const NameSupply* parent = nullptr);

  // Declares `sym` under its own name, or a suffixed one if taken.
  const std::string& declare(const Symbol* sym, const std::string& wanted);
  const std::string& declare(const Symbol* sym) { return declare(sym, sym->name); }
  // Maps `sym` to `name` without reserving it: loop variables of sibling
  // loops may share a name, as they do in the source.
  void bind(const Symbol* sym, const std::string& name) { names_[sym] = name; }
  // A name for a generated entity that is not a Symbol (strides, scratch).
  std::string fresh(const std::string& wanted);
  // The emitted name of `sym` in this function or an enclosing supply.
  const std::string& nameOf(const Symbol* sym) const;
  bool has(const Symbol* sym) const;
  bool taken(const std::string& name) const;

 private:
  const NameSupply* parent_;
  std::set<std::string> used_;
  std::map<const Symbol*, std::string> names_;
};

// A symbol's secondary entity, e.g. the stride of axis 1 of x: "x_stride1".
struct StrideKey {
  const Symbol* tensor;
  int axis;
  bool operator<(const StrideKey& o) const { return tensor != o.tensor ? tensor < o.tensor : axis < o.axis; }
};

}  // namespace spindle
