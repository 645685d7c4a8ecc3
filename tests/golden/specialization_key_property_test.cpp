// The key property of specialization (spindle/specialization.h): over random
// specializations of every golden kernel, two specializations have equal
// keys exactly when their generated sources are equal. A fact the printer
// reads but the key leaves out shows up as equal keys with different
// sources; a fact the key holds in two spellings shows up as different keys
// with equal sources. The same specialization spelled differently (flags
// in another order, a flag repeated) must be the same value.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>

#include "golden_cases.h"
#include "sema/sema.h"
#include "spindle/generator.h"

namespace spindle::golden {
namespace {

struct Kernel {
  std::string spnPath;
  std::string name;
  Specialization golden;  // the spec its `# gen:` line names: a valid start
};

std::vector<Kernel> goldenKernels() {
  std::vector<Kernel> kernels;
  std::set<std::pair<std::string, std::string>> seen;
  for (const GoldenCase& c : discoverCases()) {
    std::string kernel;
    Specialization spec = parseFlags(c.flags, kernel);
    if (kernel.empty())
      kernel = CompiledModule::load(std::string(SPINDLE_SOURCE_DIR) + "/" + c.spnPath)->kernels()[0].name;
    if (seen.insert({c.spnPath, kernel}).second) kernels.push_back({c.spnPath, kernel, spec});
  }
  return kernels;
}

// A random specialization near `k.golden`, over small value sets so that
// equal specializations (and so equal keys) come up often.
Specialization randomSpecialization(const KernelInfo& info, const Specialization& golden, std::mt19937& rng) {
  auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  Specialization s;
  for (const std::string& d : info.dimSymbols) {
    bool required = std::count(info.staticDims.begin(), info.staticDims.end(), d) > 0;
    auto g = golden.staticDims.find(d);
    if (!required && !coin()) continue;
    int64_t base = g != golden.staticDims.end() ? g->second : 1024;
    s.staticDims[d] = coin() ? base : base * 2;
  }
  static const ScalarType kTypes[] = {ScalarType::F32, ScalarType::F16, ScalarType::F64, ScalarType::I32};
  for (const std::string& t : info.typeParams) {
    auto g = golden.typeArgs.find(t);
    s.typeArgs[t] = coin() && g != golden.typeArgs.end() ? g->second : kTypes[rng() % 4];
  }
  auto granularity = [&] { return 2 << (rng() % 4); };  // 2, 4, 8 or 16
  for (const KernelParamInfo& p : info.params) {
    const int layout = p.strided ? int(rng() % 3) : -1;  // contiguous, unit inner stride, neither
    if (layout == 0) s.contiguousTensors.insert(p.name);
    if (layout == 1) s.unitStrideTensors.insert(p.name);
    if (p.accessedInRuns && coin()) s.alignedTensors.insert(p.name);
    if (!p.accessedInRuns) continue;
    for (int axis = 0; layout == 1 && axis + 1 < int(p.dims.size()); ++axis)
      if (coin()) s.divisible[strideDivisibleName(p.name, axis)] = granularity();
    for (int axis = 1; layout != 1 && layout != 2 && axis < int(p.dims.size()); ++axis)
      if (!p.dims[size_t(axis)].expression.empty() && coin())
        s.divisible[dimDivisibleName(p.name, axis)] = granularity();
  }
  for (const std::string& d : info.runRowDims)
    if (!s.staticDims.count(d) && coin()) s.divisible[d] = granularity();
  for (const auto& g : info.exactGridDims)
    if (!s.staticDims.count(g.dim) && coin()) s.exactGridDims.insert(g.dim);
  s.lineDirectives = rng() % 4 != 0;
  return s;
}

// Sometimes one of the module's integer consts at twice its value, or a
// float const at twice its value or spelled as an integer.
void maybeOverrideAConst(const CompiledModule& module, Specialization& s, std::mt19937& rng) {
  const auto& consts = module.sema().consts;
  if (consts.empty() || rng() % 3 != 0) return;
  const Symbol& c = *consts[rng() % consts.size()];
  if (c.value.isFloat) s.consts[c.name] = rng() % 2 ? ConstOverride::ofFloat(c.value.f * 2) : ConstOverride::ofInt(2);
  else if (c.value.i > INT64_MIN / 2 && c.value.i < INT64_MAX / 2)  // doubling must not overflow
    s.consts[c.name] = ConstOverride::ofInt(c.value.i * (rng() % 2 ? 2 : 1));
  else s.consts[c.name] = ConstOverride::ofInt(c.value.i);
}

// `spec` spelled another way: its flags shuffled pairwise, one repeated.
Specialization respelled(const Specialization& spec, std::mt19937& rng) {
  std::vector<std::string> flags = specializationFlags(spec);
  std::vector<std::vector<std::string>> groups;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "--no-line-directives") groups.push_back({flags[i]});
    else groups.push_back({flags[i], flags[i + 1]}), ++i;
  }
  if (!groups.empty()) groups.push_back(groups[rng() % groups.size()]);
  std::shuffle(groups.begin(), groups.end(), rng);
  std::vector<std::string> args;
  for (const auto& g : groups) args.insert(args.end(), g.begin(), g.end());
  Specialization out;
  for (size_t i = 0; i < args.size(); ++i) EXPECT_TRUE(parseSpecializationFlag(args, i, out)) << args[i];
  return out;
}

TEST(SpecializationKeyProperty, EqualKeysExactlyWhenSourcesAreEqual) {
  const unsigned seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  int kernelsChecked = 0, equalPairs = 0;
  for (const Kernel& k : goldenKernels()) {
    SCOPED_TRACE(k.spnPath + ": " + k.name);
    auto module = CompiledModule::load(std::string(SPINDLE_SOURCE_DIR) + "/" + k.spnPath);
    const KernelInfo& info = *module->findKernel(k.name);
    std::map<std::string, std::string> sourceByKey;
    std::map<std::string, std::string> keyBySource;
    auto record = [&](const Specialization& spec) {
      GeneratedKernel g;
      try {
        g = module->generate(k.name, spec);
      } catch (const GeneratorError&) {
        return;  // not a valid specialization of this kernel (a dtype it refuses)
      }
      ASSERT_EQ(g.key, module->specializationKey(k.name, spec));
      auto [byKey, newKey] = sourceByKey.emplace(g.key, g.pathFreeSource);
      auto [bySource, newSource] = keyBySource.emplace(g.pathFreeSource, g.key);
      EXPECT_EQ(newKey, newSource) << "key " << g.key << (newKey ? " is new but its source is not" : " repeats");
      if (!newKey) {
        ++equalPairs;
        EXPECT_EQ(byKey->second, g.pathFreeSource) << "equal keys, different sources: " << g.key;
      }
      if (!newSource) {
        EXPECT_EQ(bySource->second, g.key) << "equal sources, different keys";
      }
    };
    record(k.golden);
    for (int i = 0; i < 12; ++i) {
      Specialization spec = randomSpecialization(info, k.golden, rng);
      maybeOverrideAConst(*module, spec, rng);
      Specialization again = respelled(spec, rng);
      EXPECT_EQ(spec, again) << "flags: " << ::testing::PrintToString(specializationFlags(spec));
      record(spec);
      record(again);
    }
    ++kernelsChecked;
  }
  EXPECT_GT(kernelsChecked, 30);
  EXPECT_GT(equalPairs, 100);  // the respelled ones at least: the property was exercised both ways
}

TEST(SpecializationKeyProperty, FlagsReadBackToTheSameSpecialization) {
  Specialization spec;
  spec.staticDims = {{"N", 4096}, {"K", 8}};
  spec.typeArgs = {{"T", ScalarType::BF16}};
  spec.contiguousTensors = {"x"};
  spec.unitStrideTensors = {"z"};
  spec.alignedTensors = {"y", "x"};
  spec.divisible = {{"M", 16}, {"N", 8}, {"z.stride0", 2}};
  spec.exactGridDims = {"N", "M"};
  spec.consts = {{"BS", ConstOverride::ofInt(256)}, {"EPS", ConstOverride::ofFloat(1.0)}};
  spec.lineDirectives = false;
  std::vector<std::string> flags = specializationFlags(spec);
  EXPECT_EQ(::testing::PrintToString(flags),
            ::testing::PrintToString(std::vector<std::string>{"--static",
                                                              "K=8",
                                                              "--static",
                                                              "N=4096",
                                                              "--dtype",
                                                              "T=bf16",
                                                              "--const",
                                                              "BS=256",
                                                              "--const",
                                                              "EPS=1.0",
                                                              "--contiguous",
                                                              "x",
                                                              "--unit-stride",
                                                              "z",
                                                              "--aligned",
                                                              "x",
                                                              "--aligned",
                                                              "y",
                                                              "--divisible",
                                                              "M",
                                                              "--divisible",
                                                              "N=8",
                                                              "--divisible",
                                                              "z.stride0=2",
                                                              "--exact-grid",
                                                              "M",
                                                              "--exact-grid",
                                                              "N",
                                                              "--no-line-directives"}));
  Specialization back;
  for (size_t i = 0; i < flags.size(); ++i) ASSERT_TRUE(parseSpecializationFlag(flags, i, back));
  EXPECT_EQ(back, spec);

  size_t i = 0;
  std::vector<std::string> bad = {"--static", "N=abc"};
  EXPECT_THROW(parseSpecializationFlag(bad, i, back), std::invalid_argument);
  i = 0;
  bad = {"--dtype", "T=f12"};
  EXPECT_THROW(parseSpecializationFlag(bad, i, back), std::invalid_argument);
  i = 0;
  bad = {"--aligned"};
  EXPECT_THROW(parseSpecializationFlag(bad, i, back), std::invalid_argument);
  i = 0;
  bad = {"--const", "BS=12x"};
  EXPECT_THROW(parseSpecializationFlag(bad, i, back), std::invalid_argument);
  for (const char* granularity : {"N=3", "N=0", "N=32", "N=x", "N=", "=8"}) {
    i = 0;
    bad = {"--divisible", granularity};
    EXPECT_THROW(parseSpecializationFlag(bad, i, back), std::invalid_argument) << granularity;
  }
  i = 0;
  bad = {"--kernel", "k"};
  EXPECT_FALSE(parseSpecializationFlag(bad, i, back));
}

}  // namespace
}  // namespace spindle::golden
