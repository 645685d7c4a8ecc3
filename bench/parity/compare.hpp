// Comparing an output with what it should be: the tolerance and the
// element-by-element comparison the parity cases use (Ctx::check prints and
// records the result). Pure host code, tested in tests/parity_kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

namespace parity {

// |got - want| <= atol + rtol * |want| + ulps * (the spacing of a storage
// format at |want|); NaN never passes.
struct Tolerance {
  double atol = 0, rtol = 0, ulps = 0;
  int mantissaBits = 0, minExponent = 0;
  static Tolerance exact() { return {}; }
  static Tolerance abs(double atol, double rtol) { return {atol, rtol, 0, 0, 0}; }
  // `ulps` units of bf16 (8 significant bits) or f16 (11), plus atol and rtol.
  static Tolerance bf16(double ulps, double rtol = 0, double atol = 0) { return {atol, rtol, ulps, 7, -126}; }
  static Tolerance f16(double ulps, double rtol = 0, double atol = 0) { return {atol, rtol, ulps, 10, -14}; }
  double allowed(double want) const {
    double a = atol + rtol * std::fabs(want);
    if (ulps > 0) {
      // The spacing at |want| (at zero: the smallest subnormal's).
      int e = minExponent + 1;
      if (std::fabs(want) > 0 && std::isfinite(want)) std::frexp(std::fabs(want), &e);
      a += ulps * std::ldexp(1.0, std::max(e - 1, minExponent) - mantissaBits);
    }
    return a;
  }
  std::string text() const;  // "1 bf16 ulp + atol 0 + rtol 1e-05", "exact"
};

inline std::string Tolerance::text() const {
  char b[128];
  if (ulps > 0)
    std::snprintf(b, sizeof b, "%g %s ulp + atol %.3g + rtol %.3g", ulps, mantissaBits == 7 ? "bf16" : "f16", atol,
                  rtol);
  else if (atol == 0 && rtol == 0) std::snprintf(b, sizeof b, "exact");
  else std::snprintf(b, sizeof b, "atol %.3g + rtol %.3g", atol, rtol);
  return b;
}

// What a comparison found. `worst` is the element furthest out of its
// tolerance (err / allowed); when any element fails, a failing one.
struct Comparison {
  size_t count = 0, bad = 0, worst = 0;
  double gotWorst = 0, wantWorst = 0, maxErr = 0;
  bool ok() const { return bad == 0; }
};

// Compares n values got(i) with want(i) (callables returning doubles).
template <class Got, class Want>
Comparison compare(size_t n, Got got, Want want, const Tolerance& tol) {
  Comparison r;
  r.count = n;
  double worstScore = -1;
  for (size_t i = 0; i < n; ++i) {
    const double g = got(i), w = want(i), err = std::fabs(g - w), allowed = tol.allowed(w);
    if (!(err <= allowed)) ++r.bad;  // NaN never passes
    const double score = std::isnan(err) ? INFINITY : err / std::max(allowed, 1e-300);
    if (score > worstScore) worstScore = score, r.worst = i;
    r.maxErr = std::isfinite(err) ? std::max(r.maxErr, err) : INFINITY;
  }
  if (n) r.gotWorst = got(r.worst), r.wantWorst = want(r.worst);
  return r;
}

}  // namespace parity
