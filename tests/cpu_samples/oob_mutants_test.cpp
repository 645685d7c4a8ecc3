// Out-of-bounds mutants of every sample (issue 16, item 4). Each index of
// each element access, in turn, becomes `(e) + 1` and `(e) - 1` in a copy
// of the sample, which runs on the cpu target (warp 32, checked build) with
// the inputs of the sample's numerical cases marked `mutate`. A mutant
// passes when, over those cases, either
//   - a launch stops with the checked build's report at the mutated access
//     (`FILE:LINE:COL: x[...] is out of bounds`, the access's own line and
//     column; an earlier case may have given a different result, the
//     access staying in bounds there), and no case stopped elsewhere; or
//   - the access is to a shared buffer, and a launch stops with a read of
//     an element of that buffer that the block never wrote: at the mutated
//     access where it reads, anywhere where it writes (the element it no
//     longer writes is read elsewhere; a padded tile's pad, say); or
//   - every case gives the unmutated kernel's bytes (the index was guarded,
//     or the changed access never runs with these inputs).
// A different result with no report, a report elsewhere, another error or a
// crash fails, except for the few mutants listed in kStaysInBounds: indices
// that by the kernel's design stay inside their tensor when moved by one
// (the two halves of one axis, a thread's local run), where the checks have
// nothing to report; each of those must still give a different result
// without any error, so the list cannot go stale.
//
// A second test seeds an out-of-bounds store into a copy of each sample (the
// last store to a tensor parameter, its last index moved by the axis's
// extent, so that it is out of bounds whenever it runs) and requires the
// report at that store on both warp widths.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "index_sites.h"
#include "sample_cases.h"

#if SPINDLE_HAVE_CPU_TARGET
namespace spindle::cpu_samples {
namespace {

// Mutants that stay inside their tensor or buffer by the kernel's design,
// so no bounds check can see them: "<sample>.spn:<line>: <the mutated
// access>". Each must give a different result without an error (checked
// below); an edit of a sample that moves these lines shows up here.
const std::set<std::string> kStaysInBounds = {
    // x is [M, 2 * D]: one past the gate half's last column is the up
    // half's first, and one before the up half's first is the gate's last.
    "act_and_mul.spn:96: x[row, (j + k) + 1]",
    "act_and_mul.spn:98: x[row, (D + j + k) - 1]",
    "act_and_mul.spn:106: x[row, (j + k) + 1]",
    "act_and_mul.spn:106: x[row, (D + j + k) - 1]",
    // A partial run fills fewer than VEC slots of the thread's local run:
    // the slot after its last column is still in the run.
    "rmsnorm_f16.spn:67: v[(r * VEC + k) + 1]",
    "rmsnorm_f16.spn:85: v[(r * VEC + k) + 1]",
    "scan.spn:63: v[(r * VEC + k) + 1]",
    "scan.spn:99: v[(r * VEC + k) + 1]",
    // The serial scan of a run (k in [1, VEC)) reads and writes inside it.
    "scan.spn:68: v[(r * VEC + k - 1) + 1]",
    "scan.spn:68: v[(r * VEC + k) - 1]",
    "scan.spn:69: v[(r * VEC + VEC - 1) - 1]",
    // The partial run at the end of a row (softmax, layernorm, row_norms):
    // the column before its first is the previous run's, and the slots next
    // to its columns are in the thread's local runs.
    "softmax.spn:70: v[(r * VEC + k) + 1]",
    "softmax.spn:70: v[(r * VEC + k) - 1]",
    "softmax.spn:70: x[row, (j + k) - 1]",
    "softmax.spn:93: v[(r * VEC + k) + 1]",
    "softmax.spn:93: v[(r * VEC + k) - 1]",
    "softmax.spn:93: y[row, (j + k) - 1]",
    "layernorm.spn:73: v[(r * VEC + k) + 1]",
    "layernorm.spn:73: v[(r * VEC + k) - 1]",
    "layernorm.spn:73: x[row, (j + k) - 1]",
    "layernorm.spn:103: v[(r * VEC + k) + 1]",
    "layernorm.spn:103: v[(r * VEC + k) - 1]",
    "layernorm.spn:103: w[(j + k) - 1]",
    "layernorm.spn:103: b[(j + k) - 1]",
    "layernorm.spn:103: y[row, (j + k) - 1]",
    "row_norms.spn:69: x[r, (j + k) - 1]",
    // matmul's runs that cross the K edge (A) or the N edge (B, C) take
    // the element-by-element path: the column before the run's first is
    // the previous run's, and the slot after an element that is read or
    // stored is still in the thread's local run.
    "matmul.spn:120: A[row0 + ar, (k0 + ac + k) - 1]",
    "matmul.spn:120: run[(k) + 1]",
    "matmul.spn:137: B[k0 + br, (col0 + bc + k) - 1]",
    "matmul.spn:137: run[(k) + 1]",
    "matmul.spn:175: C[cr, (cc + k) - 1]",
    "matmul.spn:175: run[(k) + 1]",
    // gemm_ws's epilogue warps (STAGED) store 4-column runs of a row of C:
    // the column after a whole run's last is the next run's, and the
    // partial run at the N edge as matmul's above.
    "gemm_ws.spn:181: C[row, (col + k) + 1]",
    "gemm_ws.spn:185: C[row, (col + k) - 1]",
    "gemm_ws.spn:185: out[(k) + 1]",
    // row_norms' last whole runs use the first VEC of UNROLL * VEC slots,
    // and with an odd N (777) the column after a whole run is in the row.
    "row_norms.spn:62: x[r, (j + k) + 1]",
    "row_norms.spn:62: xs[(k) + 1]",
    "row_norms.spn:64: xs[(k) + 1]",
    "row_norms.spn:65: xs[(k) + 1]",
    // A cache row is ROT / 2 cosines, then ROT / 2 sines; a head's pair
    // (xi, yi) = (r, ROT / 2 + r) are both inside the head (NEOX).
    "rotary_embedding.spn:97: cos_sin_cache[pos, (r) + 1]",
    "rotary_embedding.spn:98: cos_sin_cache[pos, (half + r) - 1]",
    "rotary_embedding.spn:99: x[token, head, (xi) + 1]",
    "rotary_embedding.spn:100: x[token, head, (yi) - 1]",
    "rotary_embedding.spn:102: x[token, head, (xi) + 1]",
    "rotary_embedding.spn:103: x[token, head, (yi) - 1]",
};

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The access with its index mutated, as the mutant's text has it.
std::string mutatedAccess(const std::string& text, const IndexSite& s, const std::string& suffix) {
  const std::string mutated = mutate(text, s, suffix);
  // The access starts where it did; it grew by the parentheses and the suffix.
  const size_t lineStart = text.rfind('\n', s.begin) == std::string::npos ? 0 : text.rfind('\n', s.begin) + 1;
  const size_t accessStart = lineStart + s.col - 1;
  return mutated.substr(accessStart, s.access.size() + 2 + suffix.size());
}

enum class Outcome { Same, Reported, ReportedUnwritten, DifferentSilently, Wrong };

struct Verdict {
  Outcome outcome = Outcome::Same;
  std::string detail;  // the case that reported or differed, or what went wrong
};

std::vector<Case> mutateCases(const std::string& sample, Rng& rng) {
  std::vector<Case> cases;
  for (const Sample& s : samples())
    if (s.name == sample)
      for (Case& c : s.cases(rng))
        if (c.mutate) cases.push_back(std::move(c));
  return cases;
}

std::vector<std::vector<Bytes>> baseline(const std::string& sample, const std::vector<Case>& cases) {
  Device& d = originalDevice(sample, "cpu");
  std::vector<std::vector<Bytes>> out;
  for (const Case& c : cases) out.push_back(c.run(d));
  return out;
}

// Runs `text` (a mutant of the sample, loaded as `fileName`) on `cases`,
// comparing with `want` (the unmutated kernel's outputs) when given.
Verdict runMutant(Runtime& rt, const std::string& fileName, const std::string& text, const IndexSite& site,
                  const std::vector<Case>& cases, const std::vector<std::vector<Bytes>>& want) {
  const std::string access = fmt::format("{}:{}:{}: ", fileName, site.line, site.col);
  Verdict v;
  std::string stage = "loading";
  try {
    Device d(rt, rt.loadModuleFromString(fileName, text));
    for (size_t i = 0; i < cases.size(); ++i) {
      stage = cases[i].label;
      std::vector<Bytes> got = cases[i].run(d);
      if (!want.empty() && got != want[i] && v.outcome == Outcome::Same)
        v = {Outcome::DifferentSilently, cases[i].label};
    }
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.find(access + site.base + "[") != std::string::npos && msg.find("is out of bounds") != std::string::npos)
      return {Outcome::Reported, stage};
    // A read of shared memory the block never wrote: a shifted read reads
    // such an element itself; a shifted write leaves one for a read elsewhere.
    const bool namesBuffer = msg.find(": " + site.base + "[") != std::string::npos;
    const bool atTheAccess = msg.find(access + site.base + "[") != std::string::npos;
    if (site.sharedBuffer && namesBuffer && (site.store || atTheAccess) &&
        msg.find("is read before any thread of its block wrote it") != std::string::npos)
      return {Outcome::ReportedUnwritten, stage};
    return {Outcome::Wrong, stage + ": " + msg};
  } catch (const std::exception& e) {
    return {Outcome::Wrong, stage + ": " + e.what()};
  }
  return v;
}

struct Totals {
  int sites = 0, mutants = 0, same = 0, reported = 0, unwritten = 0, inBounds = 0, failed = 0;
  uint64_t compiles = 0;
  double seconds = 0;
};

// Printed once at the end of a run that mutated anything.
class TotalsPrinter : public ::testing::Environment {
 public:
  static Totals& totals() {
    static Totals t;
    return t;
  }
  void TearDown() override {
    const Totals& t = totals();
    if (!t.mutants) return;
    std::printf(
        "out-of-bounds mutants, all samples: %d index sites, %d mutants: %d same result, %d reported at the mutated "
        "access, %d reported as reads of unwritten shared memory, %d in bounds by design, %d failed; %llu compiles, "
        "%.1f s\n",
        t.sites, t.mutants, t.same, t.reported, t.unwritten, t.inBounds, t.failed, (unsigned long long)t.compiles,
        t.seconds);
  }
};
const auto* const kTotalsPrinter = ::testing::AddGlobalTestEnvironment(new TotalsPrinter);

std::vector<std::string> sampleNames() {
  std::vector<std::string> names;
  for (const Sample& s : samples()) names.push_back(s.name);
  return names;
}

class OobMutants : public ::testing::TestWithParam<std::string> {};

TEST_P(OobMutants, AreReportedAtTheMutatedAccessOrChangeNothing) {
#if defined(__SANITIZE_ADDRESS__)
  // Its cost is the host compiler (hundreds of mutants); under ASan it adds
  // nothing the numerical and seeded-store tests do not already run.
  GTEST_SKIP() << "the mutator runs in the normal build (scripts/test.sh, step 4)";
#endif
  const std::string& name = GetParam();
  SCOPED_TRACE(fmt::format("random inputs from seed {} (SPINDLE_TEST_SEED={} repeats them)", testSeed(), testSeed()));
  const auto start = std::chrono::steady_clock::now();
  Runtime& rt = sharedRuntime("cpu");
  ASSERT_TRUE(rt.hasDevice()) << rt.deviceStatus();
  const std::string text = readText(samplePath(name));
  const std::vector<IndexSite> sites = indexSites(name + ".spn", text);
  // A sample whose every access is a builtin's (copy_async, the tile
  // loads, mma_store: samples/gemm.spn) has no index to move; those
  // builtins bound their own elements (zeros past the edges, stores inside
  // C only), and tests/runtime checks them there.
  if (sites.empty() && text.find("mma_store(") != std::string::npos)
    GTEST_SKIP() << name << " indexes no tensor itself: its accesses are copy_async, tile loads and mma_store";
  ASSERT_FALSE(sites.empty());
  Rng rng = rngFor(name);
  const std::vector<Case> cases = mutateCases(name, rng);
  ASSERT_FALSE(cases.empty()) << name << " has no case marked `mutate`";
  const std::vector<std::vector<Bytes>> want = baseline(name, cases);
  const uint64_t compilesBefore = rt.stats().compiles;

  const std::string fileName = name + ".mutant.spn";
  struct Mutant {
    const IndexSite* site;
    const char* suffix;
    std::string what;  // "<sample>.spn:<line>: <the mutated access>"
    Verdict verdict;
  };
  std::vector<Mutant> mutants;
  for (const IndexSite& site : sites)
    for (const char* suffix : {" + 1", " - 1"})
      mutants.push_back(
          {&site, suffix, fmt::format("{}.spn:{}: {}", name, site.line, mutatedAccess(text, site, suffix)), {}});
  parallelFor(mutants.size(), [&](size_t i) {
    Mutant& m = mutants[i];
    m.verdict = runMutant(rt, fileName, mutate(text, *m.site, m.suffix), *m.site, cases, want);
  });

  Totals t;
  t.sites = int(sites.size());
  t.mutants = int(mutants.size());
  std::set<std::string> inBoundsSeen;
  for (const Mutant& m : mutants) {
    const std::string where = fmt::format("{}:{}:{}", fileName, m.site->line, m.site->col);
    const bool listed = kStaysInBounds.count(m.what) > 0;
    if (listed) inBoundsSeen.insert(m.what);
    switch (m.verdict.outcome) {
      case Outcome::Same: ++t.same; break;
      case Outcome::Reported: ++t.reported; break;
      case Outcome::ReportedUnwritten: ++t.unwritten; break;
      case Outcome::DifferentSilently:
        if (listed) {
          ++t.inBounds;
          continue;
        }
        ++t.failed;
        ADD_FAILURE() << m.what << " (" << where << "): case '" << m.verdict.detail
                      << "' gave a different result and no case reported the access";
        continue;
      case Outcome::Wrong:
        ++t.failed;
        ADD_FAILURE() << m.what << " (" << where << "): not the mutated access's report: " << m.verdict.detail;
        continue;
    }
    if (listed) {
      ++t.failed;
      ADD_FAILURE() << m.what << " is listed as staying in bounds, but it "
                    << (m.verdict.outcome == Outcome::Same ? "changed nothing" : "was reported");
    }
  }
  for (const std::string& what : kStaysInBounds)
    if (what.rfind(name + ".spn:", 0) == 0 && !inBoundsSeen.count(what))
      ADD_FAILURE() << "kStaysInBounds lists '" << what << "', which is no mutant of " << name << " any more";
  t.compiles = rt.stats().compiles - compilesBefore;
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "  %s: %d index sites, %d mutants over %zu case(s): %d same result, %d reported at the mutated access, %d "
      "as reads of unwritten shared memory, %d in bounds by design, %d failed; %llu compiles, %.1f s\n",
      name.c_str(), t.sites, t.mutants, cases.size(), t.same, t.reported, t.unwritten, t.inBounds, t.failed,
      (unsigned long long)t.compiles, t.seconds);
  Totals& all = TotalsPrinter::totals();
  all.sites += t.sites, all.mutants += t.mutants, all.same += t.same, all.reported += t.reported;
  all.unwritten += t.unwritten, all.inBounds += t.inBounds, all.failed += t.failed, all.seconds += t.seconds;
  all.compiles += t.compiles;
}

INSTANTIATE_TEST_SUITE_P(Samples, OobMutants, ::testing::ValuesIn(sampleNames()),
                         [](const auto& info) { return info.param; });

// The issue's goal: "an out-of-bounds store seeded into a copy of each
// sample is reported with the right .spn line every time". The store is the
// sample's last store to a tensor parameter; its last index moves by the
// axis's extent, so the store is out of bounds whenever it runs. At both
// warp widths the cases run until one reports it, which must be at that
// access (line and column); a case where the store does not run goes on to
// the next, and none reporting fails.
class SeededStore : public ::testing::TestWithParam<std::string> {};

TEST_P(SeededStore, IsReportedAtItsLineAtBothWarpWidths) {
  const std::string& name = GetParam();
  SCOPED_TRACE(fmt::format("random inputs from seed {} (SPINDLE_TEST_SEED={} repeats them)", testSeed(), testSeed()));
  const std::string text = readText(samplePath(name));
  const std::vector<IndexSite> sites = indexSites(name + ".spn", text);
  const IndexSite* store = nullptr;
  for (const IndexSite& s : sites)
    if (s.store && s.tensorParam && !s.extent.empty()) store = &s;
  // mma_store skips the elements outside C by definition, so no store of
  // a sample that stores only through it (gemm, gemm_ex) can be seeded out
  // of bounds (tests/runtime/cpu_mma_store_test.cpp checks that it skips
  // them).
  if (!store && text.find("mma_store(") != std::string::npos)
    GTEST_SKIP() << name << " stores only through mma_store, which stores nothing outside C";
  ASSERT_NE(store, nullptr) << name << " stores to no tensor parameter";
  const std::string suffix = " + (" + store->extent + ")";
  const std::string fileName = name + ".seeded.spn";
  const std::string seeded =
      fmt::format("{}:{}:{}: {}", fileName, store->line, store->col, mutatedAccess(text, *store, suffix));
  Rng rng = rngFor(name);
  const std::vector<Case> cases = mutateCases(name, rng);
  const std::string targets[] = {"cpu", "cpu:warp64"};
  Verdict verdicts[2];
  parallelFor(2, [&](size_t w) {
    Runtime& rt = sharedRuntime(targets[w]);
    verdicts[w] = runMutant(rt, fileName, mutate(text, *store, suffix), *store, cases, {});
  });
  for (size_t w = 0; w < 2; ++w) {
    EXPECT_EQ(verdicts[w].outcome, Outcome::Reported) << seeded << " at " << targets[w] << ": " << verdicts[w].detail;
    if (verdicts[w].outcome == Outcome::Reported)
      std::printf("  %s: reported at %s (case %s)\n", seeded.c_str(), targets[w].c_str(), verdicts[w].detail.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, SeededStore, ::testing::ValuesIn(sampleNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace spindle::cpu_samples
#endif  // SPINDLE_HAVE_CPU_TARGET
