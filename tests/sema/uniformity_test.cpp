// The divergent-barrier analysis (docs/language.md 8.9): which barriers and
// collectives it accepts, which it rejects, and where it says why.
#include "sema_test_util.h"

#include <chrono>
#include <regex>

namespace spindle::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// "LINE:COL diag-id" of every diagnostic, and "  LINE:COL note" of its notes.
std::vector<std::string> located(const Analyzed& a) {
  std::vector<std::string> out;
  for (const auto& d : a.diags.diagnostics()) {
    out.push_back(fmt::format("{}:{} {}", d.range.begin.line, d.range.begin.col, diagName(d.id)));
    for (const auto& n : d.notes)
      out.push_back(fmt::format("  {}:{} {}", n.range.begin.line, n.range.begin.col, n.message));
  }
  return out;
}

std::vector<std::string> check(const std::string& body, const std::string& block = "256") {
  // The body's first line (after the raw string's newline) is line 4.
  auto a = analyze("@grid(1)\n@block(" + block + ")\nkernel k(x: f32[N], y: i32[N], n: i32):" + body);
  return located(*a);
}

TEST(Uniformity, AcceptsUniformConditionsAroundBarriers) {
  EXPECT_THAT(check(R"(
    t = thread_id()
    for i in range(t, N, block_dim()):   # a divergent loop, the barrier after it
        x[i] = 0.0
    sync()
    if t == 0:                           # no barrier inside
        x[0] = 1.0
    if n > 0 and x[0] > 0.0:             # a scalar, a load at a uniform address
        sync()
    if block_id() < 3 and N > 4:
        s = block_sum(x[t])
    r = block_max(x[t])
    if r > 0.0:                          # a block collective's result
        sync()
    while n > 0:
        sync()
        n -= 1
)"),
              IsEmpty());
}

TEST(Uniformity, RejectsBarrierUnderThreadCondition) {
  EXPECT_THAT(check(R"(
    t = thread_id()
    if t < 128:
        sync()
    if x[t] > 0.0:
        s = block_sum(x[t])
    u = 0
    if t == 3:
        u = 1
    if u == 1:                           # assigned under a divergent condition
        sync()
)"),
              ElementsAre("6:9 sema-divergent-barrier", "  5:8 this condition depends on 'thread_id()'",
                          "8:13 sema-divergent-barrier",
                          "  7:8 this condition depends on a load at an address that depends on 'thread_id()'",
                          "13:9 sema-divergent-barrier", "  12:8 this condition depends on 'thread_id()'"));
}

TEST(Uniformity, LoopsWithThreadDependentTripCounts) {
  EXPECT_THAT(
      check(R"(
    for i in range(thread_id()):
        sync()
    j = lane_id()
    while j < N:
        x[j] = warp_sum(x[j])
        j += 32
    for i in range(8):
        if x[thread_id()] > 0.0:
            break
        sync()                           # after some threads left the loop
    sync()                               # they all meet again here
)"),
      ElementsAre("5:9 sema-divergent-barrier", "  4:20 this loop's trip count depends on 'thread_id()'",
                  "8:16 sema-divergent-warp-op", "  7:11 this loop's condition depends on 'lane_id()'",
                  "13:9 sema-divergent-barrier", "  12:13 some threads leave the loop here, and the others go on",
                  "  11:12 this condition depends on a load at an address that depends on 'thread_id()'"));
}

TEST(Uniformity, ReturnAfterThreadCondition) {
  EXPECT_THAT(check(R"(
    i = block_id() * 256 + thread_id()
    if i >= N:
        return
    sync()
)"),
              ElementsAre("7:5 sema-divergent-barrier", "  6:9 some threads return from 'k' here, and the others go on",
                          "  5:8 this condition depends on 'thread_id()'"));
  // A def's early return ends with the def: its callers meet again.
  auto a = analyze(R"(
def load(x: f32[N], i: i32) -> f32:
    if i >= N:
        return 0.0
    return x[i]

@grid(1)
@block(256)
kernel k(x: f32[N]):
    v = load(x, thread_id())
    sync()
    if v > 0.0:
        sync()
)");
  EXPECT_THAT(located(*a),
              ElementsAre("13:9 sema-divergent-barrier", "  12:8 this condition depends on 'thread_id()'"));
}

TEST(Uniformity, WarpUniformityAtBothWidths) {
  // The linear thread id divided by a multiple of 64 is one value per warp
  // at both widths; by 32 only on 32-wide warps; lane_id() < 32 is always
  // true on 32-wide warps, and splits a 64-wide one.
  EXPECT_THAT(check(R"(
    t = thread_id()
    if t // warp_size() == 1:
        x[t] = warp_sum(x[t])
    if (t >> 6) == 2 or t // 128 == 1:
        x[t] = shfl_xor(x[t], 1)
    if t // 32 == 0:
        x[t] = warp_max(x[t])
    if lane_id() < 32:
        sync_warp()
    if lane_id() < 64 and lane_id() % 64 >= 0:
        x[t] = warp_min(x[t])            # true on every lane at both widths
    if t // 64 == 0:
        sync()                           # warp-uniform is not block-uniform
)"),
              ElementsAre("10:16 sema-divergent-warp-op", "  9:8 this condition depends on 'thread_id()'",
                          "12:9 sema-divergent-warp-op", "  11:8 this condition depends on 'lane_id()'",
                          "16:9 sema-divergent-barrier", "  15:8 this condition depends on 'thread_id()'"));
  auto a = analyze(R"(
@grid(1)
@block(256)
kernel k(x: f32[N]):
    if lane_id() < 32:
        x[0] = warp_sum(x[1])
)");
  ASSERT_EQ(a->diags.diagnostics().size(), 1u);
  EXPECT_THAT(a->diags.diagnostics()[0].message, HasSubstr("on 64-wide warps (AMD)"));
}

TEST(Uniformity, TwoDimensionalBlocks) {
  // In @block(16, 16) a warp spans 2 (32-wide) or 4 (64-wide) rows:
  // thread_id(0) // warp_size() is 0 everywhere, not the warp's index;
  // thread_id(1) // 4 is one value per warp at both widths, // 2 only at 32.
  EXPECT_THAT(check(R"(
    if thread_id(0) // warp_size() == 0:
        x[0] = warp_sum(x[1])
    if thread_id(1) // 4 == 1:
        x[0] = warp_sum(x[1])
    if thread_id(1) // 2 == 1:
        x[0] = warp_sum(x[1])
    if thread_id(0) < 8:
        x[0] = warp_sum(x[1])
)",
                    "16, 16"),
              ElementsAre("9:16 sema-divergent-warp-op", "  8:8 this condition depends on 'thread_id(1)'",
                          "11:16 sema-divergent-warp-op", "  10:8 this condition depends on 'thread_id()'"));
  // An unknown x extent: thread_id(1) is divergent, to be safe.
  auto a = analyze(R"(
@grid(1)
@block(min(N, 64), 4)
kernel k(x: f32[N]):
    if thread_id(1) // 64 == 0:
        x[0] = warp_sum(x[1])
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-divergent-warp-op"));
}

TEST(Uniformity, CallsIntoDefsAndClosures) {
  auto a = analyze(R"(
def barrier_if(c: i32):
    if c > 0:
        sync()

def wrapped(x: f32[N]):
    sync()

@grid(1)
@block(256)
kernel k(x: f32[N]):
    t = thread_id()
    barrier_if(1)
    barrier_if(t)
    if t == 0:
        wrapped(x)
    def inner():
        s = block_sum(x[t])
    def outer():
        inner()
    if x[t] > 0.0:
        outer()
)");
  EXPECT_THAT(located(*a),
              ElementsAre("4:9 sema-divergent-barrier", "  3:8 this condition depends on 'thread_id()'",
                          "  14:5 reached through this call to 'barrier_if'", "16:9 sema-divergent-barrier",
                          "  7:5 'sync()' is here, in 'wrapped'", "  15:8 this condition depends on 'thread_id()'",
                          "22:9 sema-divergent-barrier", "  20:9 which calls 'inner' here",
                          "  18:13 'block_sum()' is here, in 'inner'",
                          "  21:8 this condition depends on a load at an address that depends on 'thread_id()'"));
  EXPECT_THAT(a->diags.diagnostics()[2].message,
              HasSubstr("this call to 'outer' reaches 'block_sum()' under a condition that depends on"));
}

TEST(Uniformity, NonlocalWritesUnderDivergentControl) {
  EXPECT_THAT(check(R"(
    t = thread_id()
    flag = 0
    count = 0
    def mark():
        nonlocal flag, count
        if t == 3:
            flag = 1
        count += 1                       # every thread: stays uniform
    mark()
    if count > 0:
        sync()
    if flag == 1:
        sync()
)"),
              ElementsAre("16:9 sema-divergent-barrier", "  15:8 this condition depends on 'thread_id()'"));
}

TEST(Uniformity, AssumeUniformIsTheEscapeHatch) {
  EXPECT_THAT(check(R"(
    t = thread_id()
    if assume_uniform(x[t * 0 + y[t] * 0] > 0.0):
        sync()
    v = assume_uniform(y[t])
    if v > 2:
        x[t] = warp_sum(x[t])
)"),
              IsEmpty());
  std::string s = generate(R"(
@grid(1)
@block(256)
kernel k(x: f32[N]):
    x[0] = assume_uniform(x[1] + 1.0) * 2.0
)",
                           "k");
  EXPECT_THAT(s, HasSubstr("x[0] = (x[1] + 1.0f) * 2.0f;"));
}

TEST(Uniformity, CollectiveResults) {
  // A reduction's result is the warp's (or the block's); a prefix sum or a
  // shuffle is the lane's own, except shfl from one lane.
  EXPECT_THAT(
      check(R"(
    t = thread_id()
    s = warp_sum(x[t])
    if s > 0.0:
        x[t] = warp_max(x[t])
    p = warp_cumsum(x[t])
    if p > 0.0:
        x[t] = warp_max(x[t])
    if shfl(x[t], 0) > 0.0:
        x[t] = warp_min(x[t])
    if shfl_down(x[t], 1) > 0.0:
        x[t] = warp_min(x[t])
    if warp_any(x[t] > 0.0):
        x[t] = warp_sum(x[t])
    if atomic_add(y[0], 1) == 0:
        x[t] = warp_sum(x[t])
)"),
      ElementsAre("10:16 sema-divergent-warp-op", "  9:8 this condition depends on 'warp_cumsum()'",
                  "14:16 sema-divergent-warp-op",
                  "  13:8 this condition depends on a load at an address that depends on 'thread_id()'",
                  "18:16 sema-divergent-warp-op", "  17:8 this condition depends on the result of 'atomic_add()'"));
}

TEST(Uniformity, WarpIdIsTheWarpsIndex) {
  // warp_id() is thread_id() // warp_size() of a 1-D block: its // 4 is a
  // warp group's. Lanes of one warp read lane 0's, so all must call it.
  EXPECT_THAT(check(R"(
    w = warp_id()
    if w // 4 == 2:
        release_registers(56)
    if w == 1:
        x[0] = warp_sum(x[thread_id()])
    if thread_id() < 16:
        x[1] = f32(warp_id())
)",
                    "384"),
              ElementsAre("10:20 sema-divergent-warp-op", "  9:8 this condition depends on 'thread_id()'"));
}

TEST(Uniformity, AShuffleOfAWarpUniformValueIsThatValue) {
  // shfl(v, 0) of the warp's index is the warp's index, form and all, so
  // its // 4 is a warp group's; lane 0's thread id is one value a warp,
  // not a group.
  EXPECT_THAT(check(R"(
    w = shfl(thread_id() // warp_size(), 0)
    if w // 4 == 1:
        release_registers(56)
    if shfl(thread_id(), 0) < 128:
        release_registers(56)
)",
                    "384"),
              ElementsAre("8:9 sema-divergent-warp-group-op", "  7:8 this condition depends on 'thread_id()'"));
}

TEST(Uniformity, KeyValueReductions) {
  // warp_argmax is a warp collective whose (value, index) is the warp's;
  // block_argmin is a block collective whose result is the block's.
  EXPECT_THAT(check(R"(
    t = thread_id()
    m, j = warp_argmax(x[t], t)
    if j == 0:
        x[t] = warp_sum(x[t])
    if m > 0.0:
        sync()
    b, l = block_argmin(x[t], t)
    if l > 3:
        sync()
    if t < 7:
        m, j = warp_argmin(x[t], t)
        b, l = block_argmax(x[t], t)
)"),
              ElementsAre("9:9 sema-divergent-barrier", "  8:8 this condition depends on 'warp_argmax()'",
                          "14:16 sema-divergent-warp-op", "  13:8 this condition depends on 'thread_id()'",
                          "15:16 sema-divergent-barrier", "  13:8 this condition depends on 'thread_id()'"));
}

TEST(Uniformity, ShortCircuitAndConditionalExpressions) {
  EXPECT_THAT(check(R"(
    t = thread_id()
    c = t < 5 and block_sum(x[t]) > 0.0
    v = x[t] if t < 5 else warp_sum(x[t])
)"),
              ElementsAre("5:19 sema-divergent-barrier", "  5:9 this condition depends on 'thread_id()'",
                          "6:28 sema-divergent-warp-op", "  6:17 this condition depends on 'thread_id()'"));
}

// A returned value that calls other defs: the walker pushes their frames
// while the caller's `return` is being evaluated (a use-after-free once,
// seen under ASan), and the thread dependence still reaches the caller.
TEST(Uniformity, ReturnedCallsThroughNestedDefs) {
  auto a = analyze(R"(
def lane_bit(i: i32) -> i32:
    return i % 2

def twice(i: i32) -> i32:
    return lane_bit(i) + lane_bit(i + 1)

def outer(i: i32) -> i32:
    return twice(i) + twice(0)

@grid(1)
@block(256)
kernel k(x: f32[N]):
    v = outer(thread_id())
    u = outer(block_id())
    if u > 0:
        sync()
    if v > 0:
        sync()
)");
  EXPECT_THAT(located(*a),
              ElementsAre("19:9 sema-divergent-barrier", "  18:8 this condition depends on 'thread_id()'"));
}

// Found by the cpu target's fuzzer (tests/cpu_fuzz, seed 62, 14 s to
// check): a loop took the exits that a loop or a call inside it starts
// afresh at every walk (a divergent break, a def's return) for a change of
// its own facts, so it walked its body its 64 times, and loops nested five
// deep 64^5 times (110 s for this module, hours for seven). The facts are
// still right: a barrier after the exits is refused, one after the loops
// is not.
TEST(Uniformity, NestedLoopsWithDivergentExitsAreWalkedAFewTimes) {
  const std::string module = R"(
def clamp(i: i32) -> i32:
    for k in range(4):
        if i > k:
            return k
    return i

@grid(1)
@block(256)
kernel k(y: i32[N]):
    v = 0
    for a in range(4):
        for b in range(4):
            for c in range(4):
                for d in range(4):
                    for e in range(4):
                        if thread_id() > 5:
                            break
                        v += clamp(v)
                        SYNC_INSIDE
    sync()
    y[0] = v
)";
  auto withInner = [&](const std::string& inner) {
    return std::regex_replace(module, std::regex("SYNC_INSIDE"), inner);
  };
  const auto start = std::chrono::steady_clock::now();
  auto accepted = analyze(withInner("pass"));
  auto refused = analyze(withInner("sync()"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_THAT(diagIds(*accepted), IsEmpty());
  EXPECT_THAT(diagIds(*refused), ElementsAre("sema-divergent-barrier"));
  EXPECT_LT(seconds, 5.0) << "the analysis walks nested loops exponentially often again";
}

TEST(Uniformity, UnreachedDefsAreCheckedOnTheirOwn) {
  auto a = analyze(R"(
def lonely(x: f32[N]):
    if lane_id() == 0:
        sync()
)");
  EXPECT_THAT(diagIds(*a), ElementsAre("sema-divergent-barrier"));
}

}  // namespace
}  // namespace spindle::test
