// A check of runtime/cpu/spindle_cpu.h by running goldens as the CPU target
// will: each golden is compiled as the runtime compiles it (ABI header, CPU
// header, generated file, entry point; the runtime's flags) into a shared
// library, loaded with dlopen, bound to a small stand-in runtime and
// launched; the outputs are compared with references computed here.
//
// The stand-in runtime: every GPU thread of a block is a ucontext fiber, all
// fibers of a block on one OS thread, blocks spread over two OS threads (so
// atomics are contended across threads). Fibers run round-robin until each
// waits; then a warp meeting completes once every live lane of the warp
// waits at it or at __syncthreads (lanes waiting at __syncthreads take no
// part, as inactive lanes on a GPU), else __syncthreads completes once every
// live thread of the block waits at it; anything else is a hang, which fails
// the launch. --v1 completes a warp meeting only when every live lane of the
// warp waits at it (the reading of spindle_cpu_abi.h version 1 where lanes
// meet by their own counts), to show which goldens that cannot run.
//
// Not wired into cmake. Build and run from the repository root:
//   g++ -std=c++17 -O2 -Wall tests/cpu/header_smoke.cpp -o /tmp/header_smoke -ldl -pthread && /tmp/header_smoke
#include <dlfcn.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../runtime/cpu/spindle_cpu_abi.h"

namespace {

bool v1Meetings = false;

// ---- The stand-in runtime.
enum class State { Runnable, AtBlock, AtWarp, Done, Failed };

struct Fiber {
  ucontext_t context;
  char* stack = nullptr;
  __spn_cpu_thread thread;
  State state = State::Runnable;
  unsigned warp = 0;
};

struct Launch {
  __spn_cpu_entry_fn entry;
  void** args;
  __spn_cpu_dim3 grid, block;
  unsigned warpSize;
  size_t dynamicShared;
  std::atomic<unsigned> nextBlock{0};
  std::atomic<bool> failed{false};
  std::string failure;  // the first failure's message
  std::atomic_flag failureTaken = ATOMIC_FLAG_INIT;
};

struct Block {
  Launch* launch;
  std::vector<Fiber> fibers;
  std::vector<std::vector<unsigned char>> exchange;  // per warp
  std::vector<unsigned long long> live;              // per warp
  std::vector<unsigned char> dynamicShared;
  ucontext_t scheduler;
  Fiber* current = nullptr;
};

thread_local Block* block = nullptr;
constexpr size_t kStackBytes = 256 * 1024;

void failLaunch(Launch& l, const std::string& message) {
  if (!l.failureTaken.test_and_set()) l.failure = message;
  l.failed = true;
}

__spn_cpu_thread* apiSelf() { return &block->current->thread; }
void yieldAs(State s) {
  Fiber* f = block->current;
  f->state = s;
  swapcontext(&f->context, &block->scheduler);
}
void apiSyncBlock() { yieldAs(State::AtBlock); }
void apiSyncWarp() { yieldAs(State::AtWarp); }
void apiFail(const char* message) {
  failLaunch(*block->launch, message);
  yieldAs(State::Failed);  // never resumed
  std::abort();
}
const __spn_cpu_api api = {__SPN_CPU_ABI_VERSION, apiSelf, apiSyncBlock, apiSyncWarp, apiFail};

void fiberMain() {
  Fiber* f = block->current;
  block->launch->entry(block->launch->args);
  f->state = State::Done;
  block->live[f->warp] &= ~(1ull << f->thread.lane);
}

// Releases what can go on once no fiber can run; false: a hang.
bool release(Block& b) {
  bool released = false;
  for (size_t w = 0; w < b.live.size(); ++w) {
    bool anyAtWarp = false, allWaiting = true;
    for (Fiber& f : b.fibers) {
      if (f.warp != w || f.state == State::Done) continue;
      anyAtWarp |= f.state == State::AtWarp;
      allWaiting &= f.state == State::AtWarp || (!v1Meetings && f.state == State::AtBlock);
    }
    if (!anyAtWarp || !allWaiting) continue;
    for (Fiber& f : b.fibers)
      if (f.warp == w && f.state == State::AtWarp) f.state = State::Runnable;
    released = true;
  }
  if (released) return true;
  bool allAtBlock = true;
  for (Fiber& f : b.fibers) allAtBlock &= f.state == State::AtBlock || f.state == State::Done;
  if (!allAtBlock) return false;
  for (Fiber& f : b.fibers)
    if (f.state == State::Done) return false;  // __syncthreads with threads that returned: fails (the ABI)
  for (Fiber& f : b.fibers) f.state = State::Runnable;
  return true;
}

void runBlock(Launch& l, __spn_cpu_dim3 blockIdx) {
  Block b;
  b.launch = &l;
  const unsigned threads = l.block.x * l.block.y * l.block.z, warps = (threads + l.warpSize - 1) / l.warpSize;
  b.fibers.resize(threads);
  b.exchange.assign(warps, std::vector<unsigned char>(2 * l.warpSize * __SPN_CPU_EXCHANGE_BYTES));
  b.live.assign(warps, 0);
  b.dynamicShared.assign(l.dynamicShared, 0xcd);
  block = &b;
  for (unsigned i = 0; i < threads; ++i) {
    Fiber& f = b.fibers[i];
    f.warp = i / l.warpSize;
    b.live[f.warp] |= 1ull << (i % l.warpSize);
    __spn_cpu_thread& t = f.thread;
    t.thread_idx = {i % l.block.x, i / l.block.x % l.block.y, i / (l.block.x * l.block.y)};
    t.block_idx = blockIdx;
    t.block_dim = l.block;
    t.grid_dim = l.grid;
    t.warp_size = l.warpSize;
    t.lane = i % l.warpSize;
    t.warp_exchange = b.exchange[f.warp].data();
    t.exchanges = 0;
    t.warp_live = &b.live[f.warp];
    t.dynamic_shared = l.dynamicShared ? b.dynamicShared.data() : nullptr;
    f.stack = static_cast<char*>(std::malloc(kStackBytes));
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &b.scheduler;
    makecontext(&f.context, fiberMain, 0);
  }
  for (;;) {
    bool ran = false, done = true;
    for (Fiber& f : b.fibers) {
      if (l.failed) break;
      if (f.state != State::Runnable) continue;
      b.current = &f;
      swapcontext(&b.scheduler, &f.context);
      ran = true;
    }
    if (l.failed) break;
    for (Fiber& f : b.fibers) done &= f.state == State::Done;
    if (done) break;
    if (!ran && !release(b)) {
      char message[160];
      std::snprintf(message, sizeof message, "block (%u, %u, %u) hangs: threads wait at barriers that cannot complete",
                    blockIdx.x, blockIdx.y, blockIdx.z);
      failLaunch(l, message);
      break;
    }
  }
  for (Fiber& f : b.fibers) std::free(f.stack);  // a failed block's fibers are abandoned
  block = nullptr;
}

// Runs a launch; returns "" or the failure's message.
std::string launch(__spn_cpu_entry_fn entry, unsigned warpSize, __spn_cpu_dim3 grid, __spn_cpu_dim3 blockDim,
                   size_t dynamicShared, std::vector<void*> args) {
  Launch l;
  l.entry = entry;
  l.args = args.data();
  l.grid = grid;
  l.block = blockDim;
  l.warpSize = warpSize;
  l.dynamicShared = dynamicShared;
  const unsigned blocks = grid.x * grid.y * grid.z;
  auto worker = [&] {
    for (unsigned i; !l.failed && (i = l.nextBlock++) < blocks;)
      runBlock(l, {i % grid.x, i / grid.x % grid.y, i / (grid.x * grid.y)});
  };
  std::thread other(worker);
  worker();
  other.join();
  return l.failed ? l.failure : "";
}

// ---- Building a golden as the runtime does.
std::string kernelName(const std::string& source) {
  const std::string marker = "extern \"C\" __global__ ";
  std::string name;
  for (size_t at = 0; (at = source.find(marker, at)) != std::string::npos; at += marker.size()) {
    const size_t start = source.find(" void ", at) + 6, paren = source.find('(', start);
    name = source.substr(start, paren - start);  // the last: the definition
  }
  return name;
}

std::string readFile(const std::string& path) {
  std::string text;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
  }
  return text;
}

// The library for a generated file's text (`name` names the temporary files).
__spn_cpu_entry_fn buildText(const std::string& name, const std::string& goldenText, unsigned warpSize) {
  const std::string source = readFile("runtime/cpu/spindle_cpu_abi.h") + readFile("runtime/cpu/spindle_cpu.h") +
                             goldenText + "\nextern \"C\" __attribute__((visibility(\"default\"))) void " +
                             "__spn_cpu_entry(void** args) { __spn_cpu_invoke(&" + kernelName(goldenText) +
                             ", args); }\n";
  const std::string base =
      "/tmp/spindle_cpu_smoke." + std::to_string(getpid()) + "." + name + ".w" + std::to_string(warpSize);
  std::FILE* out = std::fopen((base + ".cpp").c_str(), "wb");
  std::fwrite(source.data(), 1, source.size(), out);
  std::fclose(out);
  const char* cxx = std::getenv("CXX");
  const std::string command = std::string(cxx ? cxx : "c++") +
                              " -std=c++17 -O2 -fPIC -shared -ffp-contract=off -fvisibility=hidden -D__SPN_CPU=1"
                              " -D__SPN_CPU_WARP_SIZE=" +
                              std::to_string(warpSize) + " " + base + ".cpp -o " + base + ".so";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    std::exit(1);
  }
  void* lib = dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  std::remove((base + ".cpp").c_str());
  std::remove((base + ".so").c_str());
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    std::exit(1);
  }
  auto version = reinterpret_cast<__spn_cpu_abi_version_fn>(dlsym(lib, "__spn_cpu_abi_version"));
  auto bind = reinterpret_cast<__spn_cpu_bind_fn>(dlsym(lib, "__spn_cpu_bind"));
  auto entry = reinterpret_cast<__spn_cpu_entry_fn>(dlsym(lib, "__spn_cpu_entry"));
  if (!version || !bind || !entry || version() != __SPN_CPU_ABI_VERSION) {
    std::fprintf(stderr, "%s: missing entry points or another ABI version\n", name.c_str());
    std::exit(1);
  }
  bind(&api);
  return entry;
}

__spn_cpu_entry_fn build(const std::string& golden, unsigned warpSize) {
  const std::string text = readFile("tests/golden/expected/" + golden + ".hip");
  if (text.empty()) {
    std::fprintf(stderr, "cannot read tests/golden/expected/%s.hip (run from the repository root)\n", golden.c_str());
    std::exit(2);
  }
  return buildText(golden, text, warpSize);
}

// ---- Checks.
int failures = 0;
std::string context;

template <typename A, typename B>
void expectEq(const A& actual, const B& expected, const char* what, size_t i) {
  if (actual == expected) return;
  if (++failures <= 20)
    std::printf("  FAIL %s: %s[%zu] = %.17g, expected %.17g\n", context.c_str(), what, i, double(actual),
                double(expected));
}
void expectNear(double actual, double expected, double tolerance, const char* what, size_t i) {
  if (std::fabs(actual - expected) <= tolerance * std::fabs(expected) + 1e-30) return;
  if (++failures <= 20)
    std::printf("  FAIL %s: %s[%zu] = %.9g, expected %.9g\n", context.c_str(), what, i, actual, expected);
}
void expectLaunch(const std::string& failure) {
  if (failure.empty()) return;
  ++failures;
  std::printf("  FAIL %s: the launch failed: %s\n", context.c_str(), failure.c_str());
}
template <typename T>
void* arg(T& value) {
  return &value;
}

std::mt19937 rng(12345);
// Small multiples of 1/4: every sum here is exact in f32, whatever the order.
float quarter(int range) { return float(int(rng() % unsigned(2 * range + 1)) - range) * 0.25f; }

// warp_ops: shuffles down/up/indexed, a warp meeting, ballot, any, all.
void testWarpPrimitives(unsigned W) {
  auto entry = build("warp_primitives", W);
  int64_t N = 1000;
  std::vector<float> x(N), y(N), scan(N);
  std::vector<int32_t> counts(N);
  std::vector<uint64_t> votes(N);
  for (auto& v : x) v = float(rng() % 5) / 8;       // 0 to 0.5
  for (int64_t i = 0; i < N; i += 7) x[i] = 0.75f;  // the ballot's bits
  float *px = x.data(), *py = y.data(), *ps = scan.data();
  int32_t* pc = counts.data();
  uint64_t* pv = votes.data();
  expectLaunch(launch(entry, W, {unsigned((N + 255) / 256), 1, 1}, {256, 1, 1}, 0,
                      {arg(px), arg(py), arg(ps), arg(pc), arg(pv), arg(N)}));
  const int64_t padded = (N + 255) / 256 * 256;
  auto value = [&](int64_t i) { return i < N ? x[i] : 0.0f; };
  for (int64_t w0 = 0; w0 < padded; w0 += W) {
    float total = 0;
    uint64_t mask = 0;
    bool all = true;
    std::vector<float> prefix(W);
    for (unsigned l = 0; l < W; ++l) {
      total += value(w0 + l);
      prefix[l] = (l ? prefix[l - 1] : 0.0f) + value(w0 + l);
      if (value(w0 + l) > 0.5f) mask |= 1ull << l;
      all &= value(w0 + l) >= 0.0f;
    }
    for (unsigned l = 0; l < W && w0 + l < N; ++l) {
      const int64_t i = w0 + l;
      expectEq(y[i], total + prefix[l ^ 1], "y", i);
      expectEq(scan[i], prefix[l], "scan", i);
      expectEq(counts[i], __builtin_popcountll(mask) + (mask != 0) * 100 + all * 1000, "counts", i);
      expectEq(votes[i], mask, "votes", i);
    }
  }
}

// row_stats, N = 100 threads a block: partial warps; block_sum, block_cumsum, warp_*_any.
void testRowStats(unsigned W) {
  auto entry = build("launch_shapes.row_stats.N-100", W);
  int64_t R = 5;
  const int N = 100;
  std::vector<float> x(R * N), total(R), prefix(R * N), perWarp(R * N * 4);
  for (auto& v : x) v = quarter(40);
  float *px = x.data(), *pt = total.data(), *pp = prefix.data(), *pw = perWarp.data();
  expectLaunch(launch(entry, W, {unsigned(R), 1, 1}, {100, 1, 1}, 0, {arg(px), arg(pt), arg(pp), arg(pw), arg(R)}));
  for (int64_t r = 0; r < R; ++r) {
    float sum = 0;
    for (int j = 0; j < N; ++j) sum += x[r * N + j];
    expectEq(total[r], sum, "total", r);
    float running = 0;
    for (int j = 0; j < N; ++j) {
      running += x[r * N + j];
      expectEq(prefix[r * N + j], running, "prefix", r * N + j);
      const int w0 = j / int(W) * int(W), w1 = std::min(w0 + int(W), N);
      float s = 0, mx = -INFINITY, mn = INFINITY, p = 0;
      for (int k = w0; k < w1; ++k) {
        s += x[r * N + k];
        mx = std::max(mx, x[r * N + k]);
        mn = std::min(mn, x[r * N + k]);
        if (k <= j) p += x[r * N + k];
      }
      const size_t at = size_t(r * N + j) * 4;
      expectEq(perWarp[at + 0], s, "warp_sum", at);
      expectEq(perWarp[at + 1], mx, "warp_max", at + 1);
      expectEq(perWarp[at + 2], mn, "warp_min", at + 2);
      expectEq(perWarp[at + 3], p, "warp_cumsum", at + 3);
    }
  }
}

// thread_prefix: warp and block prefix sums of i32, i64, f64.
void testThreadPrefix(unsigned W) {
  auto entry = build("collectives.thread_prefix", W);
  int64_t M = 3;
  std::vector<int32_t> x(M * 256), inWarp(M * 256);
  std::vector<int64_t> inBlock(M * 256);
  std::vector<double> f(M * 256);
  for (auto& v : x) v = int32_t(rng() % 2001) - 1000;
  int32_t *px = x.data(), *pw = inWarp.data();
  int64_t* pb = inBlock.data();
  double* pf = f.data();
  expectLaunch(launch(entry, W, {unsigned(M), 1, 1}, {256, 1, 1}, 0, {arg(px), arg(pw), arg(pb), arg(pf), arg(M)}));
  for (int64_t r = 0; r < M; ++r) {
    int64_t block = 0, warp = 0;
    for (int t = 0; t < 256; ++t) {
      const size_t i = size_t(r * 256 + t);
      if (t % W == 0) warp = 0;
      warp += x[i];
      block += x[i];
      expectEq(inWarp[i], warp, "within_warp", i);
      expectEq(inBlock[i], block, "within_block", i);
      expectEq(f[i], double(block) * 0.5, "f", i);
    }
  }
}

// ragged_min, 100 threads a block: warp argmin/argmax over partial warps, block argmin.
void testRaggedMin(unsigned W) {
  auto entry = build("argmax.ragged_min", W);
  int64_t M = 4;
  std::vector<double> x(M * 100), lowest(M), original;
  std::vector<int64_t> where(M * 100);
  std::vector<uint32_t> first(M);
  std::vector<int32_t> top(M * 100);
  for (auto& v : x) v = double(int(rng() % 100000) - 50000) / 64;
  original = x;
  double *px = x.data(), *pl = lowest.data();
  int64_t* pw = where.data();
  uint32_t* pf = first.data();
  int32_t* pt = top.data();
  expectLaunch(
      launch(entry, W, {unsigned(M), 1, 1}, {100, 1, 1}, 0, {arg(px), arg(pw), arg(pf), arg(pl), arg(pt), arg(M)}));
  for (int64_t r = 0; r < M; ++r) {
    int best = 0;
    for (int t = 0; t < 100; ++t) {
      const size_t i = size_t(r * 100 + t);
      if (original[i] < original[r * 100 + best]) best = t;
      const int w0 = t / int(W) * int(W), w1 = std::min(w0 + int(W), 100);
      int lo = w0, hi = w0;
      for (int k = w0; k < w1; ++k) {
        if (original[r * 100 + k] < original[r * 100 + lo]) lo = k;
        if (float(original[r * 100 + k]) > float(original[r * 100 + hi])) hi = k;
      }
      expectEq(where[i], r * 100 + lo, "where", i);
      expectEq(x[i], original[r * 100 + lo], "x", i);
      expectEq(top[i], hi + (float(original[r * 100 + hi]) > 0.0f), "top", i);
    }
    expectEq(first[r], uint32_t(best), "first", r);
    expectEq(lowest[r], original[r * 100 + best], "lowest", r);
  }
}

// softmax, N = 1024 (block 512): block_max, block_sum.
void testSoftmax(unsigned W) {
  auto entry = build("softmax.N-1024", W);
  int64_t M = 3;
  const int N = 1024;
  std::vector<float> x(M * N), y(M * N);
  for (auto& v : x) v = quarter(40) / 4;
  float *px = x.data(), *py = y.data();
  expectLaunch(launch(entry, W, {unsigned(M), 1, 1}, {512, 1, 1}, 0, {arg(px), arg(py), arg(M)}));
  for (int64_t r = 0; r < M; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < N; ++j) mx = std::max(mx, double(x[r * N + j]));
    for (int j = 0; j < N; ++j) sum += std::exp(double(x[r * N + j]) - mx);
    for (int j = 0; j < N; ++j)
      expectNear(y[r * N + j], std::exp(double(x[r * N + j]) - mx) / sum, 1e-5, "y", size_t(r * N + j));
  }
}

// rowwise_softmax_cached: two buffers in the dynamic shared memory.
void testDynamicShared(unsigned W) {
  auto entry = build("scratch_dynamic.rowwise_softmax_cached", W);
  int64_t M = 3, N = 700;
  std::vector<float> x(M * N), y(M * N);
  for (auto& v : x) v = quarter(40) / 4;
  float *px = x.data(), *py = y.data();
  const size_t shared = (N * 4 + 15) / 16 * 16 + (N * 8 + 15) / 16 * 16;
  expectLaunch(launch(entry, W, {unsigned(M), 1, 1}, {256, 1, 1}, shared, {arg(px), arg(py), arg(M), arg(N)}));
  for (int64_t r = 0; r < M; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j) mx = std::max(mx, double(x[r * N + j]));
    for (int64_t j = 0; j < N; ++j) sum += std::exp(double(x[r * N + j]) - mx);
    for (int64_t j = 0; j < N; ++j)
      expectNear(y[r * N + j], std::exp(double(x[r * N + j]) - mx) / sum, 1e-5, "y", size_t(r * N + j));
  }
}

// atomic_stats: integer and float atomics from blocks on two OS threads, and on shared memory.
void testAtomics(unsigned W) {
  auto entry = build("atomics.atomic_stats", W);
  int64_t N = 5000;
  std::vector<float> x(N), sumF32(2, 0.0f);
  std::vector<int32_t> ticket(N), c32 = {0, INT32_MIN, INT32_MAX, -1};
  std::vector<double> sumF64(1, 0.0);
  std::vector<uint32_t> cu32 = {0, 0, UINT32_MAX, 0}, hist(16, 0);
  std::vector<int64_t> c64 = {0, INT64_MIN, INT64_MAX, -1};
  std::vector<uint64_t> cu64 = {0, 0, UINT64_MAX, 0};
  for (auto& v : x) v = quarter(200) / 8;
  float *px = x.data(), *ps = sumF32.data();
  int32_t *pt = ticket.data(), *pc = c32.data();
  double* pd = sumF64.data();
  uint32_t *pu = cu32.data(), *ph = hist.data();
  int64_t* pl = c64.data();
  uint64_t* pul = cu64.data();
  expectLaunch(launch(entry, W, {unsigned((N + 255) / 256), 1, 1}, {256, 1, 1}, 0,
                      {arg(px), arg(pt), arg(ps), arg(pd), arg(pc), arg(pu), arg(pl), arg(pul), arg(ph), arg(N)}));
  float sum = 0;
  int32_t qmax = INT32_MIN, qmin = INT32_MAX;
  uint32_t umax = 0, umin = UINT32_MAX;
  int64_t qsum = 0;
  uint64_t usum = 0;
  std::vector<uint32_t> bins(16, 0);
  std::vector<bool> seen(N, false);
  for (int64_t i = 0; i < N; ++i) {
    sum += x[i];
    const int32_t q = int32_t(std::floor(x[i] * 100.0f));
    const uint32_t u = uint32_t(std::abs(q));
    qmax = std::max(qmax, q), qmin = std::min(qmin, q), umax = std::max(umax, u), umin = std::min(umin, u);
    qsum += q, usum += u, ++bins[u % 16];
    const bool fresh = ticket[i] >= 0 && ticket[i] < N && !seen[ticket[i]];
    expectEq(fresh, true, "ticket is new", i);
    if (fresh) seen[ticket[i]] = true;
  }
  expectEq(sumF32[0], sum, "sum_f32", 0);
  expectEq(sumF64[0], double(sum), "sum_f64", 0);
  expectEq(c32[0], N, "c32", 0);
  expectEq(c32[1], qmax, "c32", 1);
  expectEq(c32[2], qmin, "c32", 2);
  expectEq(c32[3] >= 0 && c32[3] < N, true, "c32 (an index)", 3);
  expectEq(cu32[0], uint32_t(N), "cu32", 0);
  expectEq(cu32[1], umax, "cu32", 1);
  expectEq(cu32[2], umin, "cu32", 2);
  expectEq(c64[0], qsum, "c64", 0);
  expectEq(c64[1], int64_t(qmax), "c64", 1);
  expectEq(cu64[0], usum, "cu64", 0);
  expectEq(cu64[1], uint64_t(umax), "cu64", 1);
  expectEq(cu64[2], uint64_t(umin), "cu64", 2);
  for (int b = 0; b < 16; ++b) expectEq(hist[b], bins[b], "hist", b);
}

// gather_scale --checked: a failed assert fails the launch with its message; threads that return early are fine.
void testAssert(unsigned W) {
  auto entry = build("asserts.checked", W);
  int64_t N = 300;
  std::vector<float> x(N, 1.0f), y(N);
  std::vector<int32_t> idx(N, 0);
  float scale = 2.0f;
  float *px = x.data(), *py = y.data();
  int32_t* pi = idx.data();
  expectLaunch(launch(entry, W, {2, 1, 1}, {256, 1, 1}, 0, {arg(px), arg(py), arg(pi), arg(scale), arg(N)}));
  for (int64_t i = 0; i < N; ++i) expectEq(y[i], 0.5f, "y", i);
  scale = -1.0f;
  const std::string failure =
      launch(entry, W, {2, 1, 1}, {256, 1, 1}, 0, {arg(px), arg(py), arg(pi), arg(scale), arg(N)});
  const std::string expected = "tests/golden/kernels/asserts.spn:23:5: assertion failed in block (";
  if (failure.compare(0, expected.size(), expected) != 0 || failure.find("): scale > 0.0") == std::string::npos ||
      failure.back() == '\n') {
    ++failures;
    std::printf("  FAIL %s: the launch's failure is \"%s\"\n", context.c_str(), failure.c_str());
  }
}

// HIP's shuffles and votes themselves, with a width and out-of-range lanes, in a warp and a partial warp (W + 8
// threads), where lane 3 has returned. The references follow HIP's own formulas (amd_warp_functions.h).
const char* kShuffles = R"(
extern "C" __global__ void shuffles(int* out, unsigned long long* ballots, int width, int delta) {
  const int t = int(threadIdx.x), lane = int(__lane_id());
  if (t == 3) return;  // inactive from here on: no vote
  const int v = t * 10 + 1;
  int* o = out + t * 10;
  o[0] = __shfl(v, delta, width);
  o[1] = __shfl_up(v, unsigned(delta), width);
  o[2] = __shfl_down(v, unsigned(delta), width);
  o[3] = __shfl_xor(v, delta, width);
  o[4] = int(2 * __shfl_xor(double(v) + 0.5, 1));  // 8 bytes
  struct Wide {
    long long a, b;
  };
  const Wide w = __shfl(Wide{v, -2ll * v}, lane ^ 2);  // 16 bytes
  o[5] = int(w.a);
  o[6] = int(w.b);
  o[7] = __any(lane == 6) + 2 * __any(lane == 3) + 4 * __all(lane != 3) + 8 * __all(lane < 7);
  ballots[t] = __ballot(lane % 3 == 0);
  __syncwarp();
  o[8] = lane;
  o[9] = warpSize;
}
)";

void testShuffles(unsigned W) {
  auto entry = buildText("shuffles", kShuffles, W);
  const int threads = int(W) + 8;
  for (int width : {2, 8, int(W)}) {
    for (int delta : {0, 1, 3, 5, 17, -1}) {
      context = "shuffles, warp " + std::to_string(W) + ", width " + std::to_string(width) + ", delta " +
                std::to_string(delta);
      std::vector<int> out(size_t(threads) * 10, -7);
      std::vector<unsigned long long> ballots(size_t(threads), 7);
      int* po = out.data();
      unsigned long long* pb = ballots.data();
      expectLaunch(
          launch(entry, W, {1, 1, 1}, {unsigned(threads), 1, 1}, 0, {arg(po), arg(pb), arg(width), arg(delta)}));
      for (int t = 0; t < threads; ++t) {
        const int self = t % int(W), base = t - self, lanes = std::min(int(W), threads - base);
        const int* o = &out[size_t(t) * 10];
        // A source that has left or does not exist gives anything: not checked.
        auto check = [&](int index, int got, const char* what) {
          if (index < 0 || index >= lanes || base + index == 3) return;
          expectEq(got, (base + index) * 10 + 1, what, size_t(t));
        };
        if (t == 3) {
          expectEq(o[0], -7, "untouched", 3);
          expectEq(ballots[3], 7ull, "untouched", 3);
          continue;
        }
        check((delta & (width - 1)) + (self & ~(width - 1)), o[0], "__shfl");
        if (delta >= 0) {
          int up = self - delta;
          up = up < (self & ~(width - 1)) ? self : up;
          check(up, o[1], "__shfl_up");
          int down = self + delta;
          down = int((self & (width - 1)) + delta) >= width ? self : down;
          check(down, o[2], "__shfl_down");
        }
        int other = self ^ delta;
        other = other >= ((self + width) & ~(width - 1)) ? self : other;
        check(other, o[3], "__shfl_xor");
        if ((self ^ 1) < lanes && base + (self ^ 1) != 3)
          expectEq(o[4], 2 * ((base + (self ^ 1)) * 10 + 1) + 1, "__shfl_xor f64", size_t(t));
        if ((self ^ 2) < lanes && base + (self ^ 2) != 3) {
          expectEq(o[5], (base + (self ^ 2)) * 10 + 1, "__shfl 16 bytes .a", size_t(t));
          expectEq(o[6], -2 * ((base + (self ^ 2)) * 10 + 1), "__shfl 16 bytes .b", size_t(t));
        }
        unsigned long long ballot = 0;
        bool any6 = false, any3 = false, allNot3 = true, all7 = true;
        for (int l = 0; l < lanes; ++l) {
          if (base + l == 3) continue;
          if (l % 3 == 0) ballot |= 1ull << l;
          any6 |= l == 6, any3 |= l == 3, allNot3 &= l != 3, all7 &= l < 7;
        }
        expectEq(o[7], int(any6) + 2 * int(any3) + 4 * int(allNot3) + 8 * int(all7), "__any/__all", size_t(t));
        expectEq(ballots[t], ballot, "__ballot", size_t(t));
        expectEq(o[8], self, "__lane_id", size_t(t));
        expectEq(o[9], int(W), "warpSize", size_t(t));
      }
    }
  }
}

// The rest of the emulated HIP API, by value, from one thread (a block of one fiber, one live lane).
const char* kApi = R"(
extern "C" __global__ void api(unsigned long long* out, long long* a, float* f, double* d, __half* h) {
  int k = 0;
  __builtin_assume(threadIdx.x == 0);
  out[k++] = __popc(0xf0f0u) + 100 * __popcll(~0ull);
  out[k++] = __clz(1) + 100 * __clz(0) + 10000 * __clzll(1) + 1000000 * __clzll(0);
  out[k++] = __ffs(8) + 100 * __ffs(0) + 10000 * __ffsll(1ll << 40) + 1000000 * __ffsll(0ull);
  out[k++] = __brev(1u) + __brevll(6ull);
  out[k++] = unsigned(__mulhi(0x40000000, 8)) + 100ull * __umulhi(0xffffffffu, 2u);
  out[k++] = (unsigned long long)__mul64hi(-1ll, 1ll);
  out[k++] = __umul64hi(~0ull, 2ull);
  out[k++] = unsigned(__mul24(0x1000003, 2)) + (unsigned long long)__umul24(0xff000002u, 3u) * 1000;
  out[k++] = __byte_perm(0x33221100u, 0x77665544u, 0x7531u);
  out[k++] = __funnelshift_l(0x80000000u, 1u, 1u) + 100ull * __funnelshift_r(1u, 1u, 1u);
  out[k++] = __float_as_uint(1.0f) + 0ull * __float_as_int(__int_as_float(7)) + __float_as_int(__uint_as_float(5u));
  out[k++] = (unsigned long long)__double_as_longlong(__hiloint2double(0x3ff00000, 0)) + __double2hiint(2.0) +
             __double2loint(__longlong_as_double(9));
  out[k++] = __float_as_uint(rsqrtf(4.0f) + __saturatef(-1.0f) + 2 * __saturatef(2.0f) + 4 * __saturatef(__int_as_float(0x7fc00000)) +
                             8 * __saturatef(0.25f) + 16 * __fdividef(1.0f, 4.0f) + 32 * __expf(0.0f) + 64 * __logf(1.0f));
  out[k++] = (unsigned long long)(min(3, -2) + 10 * max(2u, 5u) + 100 * min(-7ll, 4ll) +
                                  (long long)(1000 * max(1.5f, 2.5f)) +
                                  (long long)(10000 * min(1.5f, __int_as_float(0x7fc00000))) +
                                  (long long)(100000 * max(2.0, -1.0)));
  out[k++] = __ldg(&a[0]);
  // Atomics on a[1..]: each returns the old value.
  out[k++] = atomicAdd(&a[1], 5ll) + 100 * atomicAdd((unsigned*)&a[2], 7u) + 10000 * atomicSub((int*)&a[3], 3);
  out[k++] = atomicExch(&a[4], 11ll) + 100 * atomicCAS(&a[5], 1ll, 12ll) + 10000 * atomicCAS(&a[6], 2ll, 13ll);
  out[k++] = atomicMax(&a[7], 20ll) + 100 * atomicMin(&a[8], -20ll) + 10000 * atomicMax((unsigned*)&a[9], 3u);
  out[k++] = atomicAnd(&a[10], 6ll) + 100 * atomicOr(&a[11], 6ll) + 10000 * atomicXor(&a[12], 6ll);
  out[k++] = atomicInc((unsigned*)&a[13], 4u) + 100 * atomicInc((unsigned*)&a[14], 4u) + 10000 * atomicDec((unsigned*)&a[15], 9u);
  out[k++] = __float_as_uint(atomicAdd(&f[0], 0.5f) + 10 * atomicExch(&f[1], 3.0f) + 100 * atomicMax(&f[2], 4.0f) +
                             1000 * atomicMin(&f[3], -4.0f) + 10000 * atomicSub(&f[4], 1.0f));
  out[k++] = (unsigned long long)__double_as_longlong(atomicAdd(&d[0], 0.25) + 10 * atomicMax(&d[1], 8.0) + 100 * atomicMin(&d[2], 8.0));
  // f16.
  out[k++] = __half_as_ushort(__float2half(1.5f)) + (unsigned long long)__half_as_ushort(__half(65520.0f)) * 100000;
  out[k++] = __half_as_ushort(__hadd(__half(1.0f), __half(2))) + 100000ull * __half_as_ushort(__hneg(__habs(__half(-3.0))));
  out[k++] = __float_as_uint(__half2float(__hmul(__ushort_as_half((unsigned short)0x3c00), __double2half(0.1))));
  h[0] = __hdiv(h[0], __half(4.0f));
  const dim3 g(gridDim), b = dim3(2, 3);
  out[k++] = g.x + 10 * g.y + 100 * b.y + 1000 * b.z + 10000 * warpSize + 1000000 * __lane_id();
  __threadfence();
  __syncthreads();
  __syncwarp();
}
)";

void testApi(unsigned W) {
  auto entry = buildText("api", kApi, W);
  std::vector<unsigned long long> out(32, 0);
  std::vector<long long> a = {42, 1, 2, 10, 4, 1, 5, 7, 8, 9, 12, 12, 12, 4, 1, 0};
  std::vector<float> f = {1.0f, 2.0f, 5.0f, 3.0f, 1.0f};
  std::vector<double> d = {1.0, 2.0, 9.0};
  std::vector<uint16_t> h = {0x4400};  // 4.0
  unsigned long long* po = out.data();
  long long* pa = a.data();
  float* pf = f.data();
  double* pd = d.data();
  uint16_t* ph = h.data();
  context = "api, warp " + std::to_string(W);
  expectLaunch(launch(entry, W, {1, 1, 1}, {1, 1, 1}, 0, {arg(po), arg(pa), arg(pf), arg(pd), arg(ph)}));
  auto bits = [](float v) { return (unsigned long long)__builtin_bit_cast(uint32_t, v); };
  auto dbits = [](double v) { return __builtin_bit_cast(unsigned long long, v); };
  const unsigned long long expected[] = {
      8 + 100 * 64,
      31 + 100 * 32 + 10000 * 63 + 1000000ull * 64,
      4 + 0 + 10000 * 41 + 0,
      0x80000000ull + 0x6000000000000000ull,
      2 + 100 * 1,
      ~0ull,
      1,
      6 + 6ull * 1000,
      0x77553311,
      3 + 100ull * 0x80000000u,
      0x3f800000ull + 5,
      0x3ff0000000000000ull + 0x40000000 + 9,
      bits(0.5f + 0 + 2 + 0 + 8 * 0.25f + 16 * 0.25f + 32 + 0),
      -2 + 50 - 700 + 2500 + 15000 + 200000,
      42,
      1 + 100 * 2 + 10000 * 10,
      4 + 100 * 1 + 10000 * 5,
      7 + 100 * 8 + 10000 * 9,
      12 + 100 * 12 + 10000 * 12,
      4 + 100 * 1 + 10000 * 0,
      bits(1.0f + 10 * 2.0f + 100 * 5.0f + 1000 * 3.0f + 10000 * 1.0f),
      dbits(1.0 + 10 * 2.0 + 100 * 9.0),
      0x3e00 + 0x7c00ull * 100000,
      0x4200 + 100000ull * 0xc200,
      bits(0.0999755859375f),  // 0.1 in f16, times 1
      1 + 10 * 1 + 100 * 3 + 1000 * 1 + 10000 * W + 0,
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; ++i) expectEq(out[i], expected[i], "out", i);
  const std::vector<long long> after = {42, 6, 9, 7, 11, 12, 5, 20, -20, 9, 4, 14, 10, 0, 2, 9};
  for (size_t i = 0; i < a.size(); ++i) expectEq(a[i], after[i], "a", i);
  const std::vector<float> fAfter = {1.5f, 3.0f, 5.0f, -4.0f, 0.0f};
  for (size_t i = 0; i < f.size(); ++i) expectEq(f[i], fAfter[i], "f", i);
  const std::vector<double> dAfter = {1.25, 8.0, 8.0};
  for (size_t i = 0; i < d.size(); ++i) expectEq(d[i], dAfter[i], "d", i);
  expectEq(h[0], 0x3c00, "h", 0);  // 4 / 4
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) v1Meetings |= std::string(argv[i]) == "--v1";
  struct Test {
    const char* name;
    void (*run)(unsigned);
  } tests[] = {{"warp_primitives", testWarpPrimitives}, {"row_stats N=100", testRowStats},
               {"thread_prefix", testThreadPrefix},     {"ragged_min", testRaggedMin},
               {"softmax N=1024", testSoftmax},         {"rowwise_softmax_cached", testDynamicShared},
               {"atomic_stats", testAtomics},           {"gather_scale --checked", testAssert}};
  for (unsigned w : {32u, 64u}) {
    int before = failures;
    testApi(w);
    std::printf("%s api, warp %u\n", failures == before ? "ok  " : "FAIL", w);
    before = failures;
    testShuffles(w);
    std::printf("%s shuffles, warp %u\n", failures == before ? "ok  " : "FAIL", w);
  }
  for (const Test& t : tests) {
    for (unsigned w : {32u, 64u}) {
      context = std::string(t.name) + ", warp " + std::to_string(w);
      const int before = failures;
      t.run(w);
      std::printf("%s %s\n", failures == before ? "ok  " : "FAIL", context.c_str());
    }
  }
  std::printf("%s\n", failures ? "header_smoke: FAILED" : "header_smoke: all passed");
  return failures ? 1 : 0;
}
