#include "cpu/block_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <memory>
#include <utility>

namespace spindle::rt::cpu {
namespace {

// The runner of the block this OS thread is running (one at a time).
thread_local BlockRunner* tlsRunner = nullptr;

__spn_cpu_thread* apiSelf() { return BlockRunner::self(); }
void apiSyncBlock() { BlockRunner::syncBlock(); }
void apiSyncWarp() { BlockRunner::syncWarp(); }
void apiFail(const char* message) { BlockRunner::fail(message); }
void apiSharedDeclare(const void* base, size_t bytes) { BlockRunner::sharedDeclare(base, bytes); }
void apiWaitWord(const unsigned* word, unsigned atLeast) { BlockRunner::waitWord(word, atLeast); }
void apiPhaseCompleted() { BlockRunner::phaseCompleted(); }
void apiSetRegisters(int n, int claim, const char* file, int line, int col) {
  BlockRunner::setRegisters(n, claim != 0, file, line, col);
}
int apiSharedAccess(int access, const void* p, size_t bytes, unsigned* other) {
  return BlockRunner::sharedAccess(access, p, bytes, other);
}

// A warp period that never comes: the warp runs only when no other can.
constexpr unsigned kStarved = 0;

unsigned volume(__spn_cpu_dim3 d) { return d.x * d.y * d.z; }

// "0-127, 200" for a sorted list of thread indices.
std::string ranges(const std::vector<unsigned>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? fmt::format("{}", ids[i]) : fmt::format("{}-{}", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

const __spn_cpu_api& runtimeApi() {
  static const __spn_cpu_api api{
      __SPN_CPU_ABI_VERSION, apiSelf,         apiSyncBlock, apiSyncWarp,       apiFail,
      apiSharedDeclare,      apiSharedAccess, apiWaitWord,  apiPhaseCompleted, apiSetRegisters};
  return api;
}

BlockRunner::BlockRunner(const BlockShape& shape, __spn_cpu_entry_fn entry, void** args, size_t stackBytes,
                         const int* expired, uint64_t scheduleSeed)
    : shape_(shape),
      entry_(entry),
      args_(args),
      expired_(expired),
      stacks_(stackBytes),
      sharedShadow_(shape.warpSize),
      scheduleSeed_(scheduleSeed) {
  const unsigned n = volume(shape.block);
  const unsigned warps = (n + shape.warpSize - 1) / shape.warpSize;
  threads_.resize(n);
  warps_.resize(warps);
  for (auto& w : warps_) w.exchange.assign(2 * shape.warpSize * __SPN_CPU_EXCHANGE_BYTES, 0);
  dynamicShared_.resize(shape.dynamicSharedBytes + 16);
}

__spn_cpu_thread* BlockRunner::self() { return &tlsRunner->current_->view; }

void BlockRunner::startFibers(__spn_cpu_dim3 index) {
  const unsigned n = unsigned(threads_.size()), ws = shape_.warpSize;
  for (size_t w = 0; w < warps_.size(); ++w) {
    const unsigned lanes = std::min(ws, n - unsigned(w) * ws);
    Warp& warp = warps_[w];
    warp.live = lanes == 64 ? ~uint64_t(0) : (uint64_t(1) << lanes) - 1;
    warp.arrived = 0;
    warp.active = warp.live;
  }
  // 16-aligned inside the vector, as a GPU's dynamic shared memory is.
  auto base = reinterpret_cast<uintptr_t>(dynamicShared_.data());
  auto* shared = reinterpret_cast<unsigned char*>((base + 15) & ~uintptr_t(15));
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = threads_[i];
    t.warp = i / ws;
    Warp& warp = warps_[t.warp];
    t.view = __spn_cpu_thread{};
    t.view.thread_idx = {i % shape_.block.x, i / shape_.block.x % shape_.block.y,
                         i / (shape_.block.x * shape_.block.y)};
    t.view.block_idx = index;
    t.view.block_dim = shape_.block;
    t.view.grid_dim = shape_.grid;
    t.view.warp_size = ws;
    t.view.lane = i % ws;
    t.view.warp_exchange = warp.exchange.data();
    t.view.exchanges = warp.generation;
    t.view.warp_live = reinterpret_cast<const unsigned long long*>(&warp.active);
    t.view.dynamic_shared = shape_.dynamicSharedBytes ? shared : nullptr;
    t.view.launch_expired = expired_;
    t.state = State::Runnable;
    t.fiber =
        boost::context::fiber(std::allocator_arg, stacks_.allocator(), [this, &t](boost::context::fiber&& scheduler) {
          asanFinishSwitch(nullptr, &schedulerStack_);
          scheduler_ = std::move(scheduler);
          try {
            entry_(args_);
          } catch (const boost::context::detail::forced_unwind&) {
            asanStartSwitch(nullptr, schedulerStack_);
            throw;  // a failed block's fibers are being unwound
          } catch (const std::exception& e) {
            recordError(fmt::format("the kernel threw: {}", e.what()));
          } catch (...) {
            recordError("the kernel threw an exception");
          }
          finish(t);
          asanStartSwitch(nullptr, schedulerStack_);
          return std::move(scheduler_);
        });
    const boost::context::stack_context& sc = stacks_.lastTaken();
    t.stack = {static_cast<const char*>(sc.sp) - sc.size, sc.size};
  }
  liveThreads_ = n;
  atBarrier_ = 0;
  pass_ = 0;
  modelRegisters_ = ws == 32;
  registersPerThread_ = std::min(256u, 65536u / n / 8 * 8);
  registerGroups_.assign((n + kWarpGroupThreads - 1) / kWarpGroupThreads, RegisterGroup{registersPerThread_, 0});
  freeRegisters_ = 0;
  for (Thread& t : threads_) t.registerCalls = 0;
  if (scheduleSeed_) {
    // One stream per (seed, block), the same on every run and worker.
    const uint64_t block = (uint64_t(index.z) * shape_.grid.y + index.y) * shape_.grid.x + index.x;
    scheduleRng_.seed(scheduleSeed_ * 0x9E3779B97F4A7C15ull ^ block);
    // Periods of 1, 2, 4 or 8 passes, and one warp, or in half the blocks
    // one warp group (4 warps, which the roles of 8.14 keep in step),
    // starved: it runs only when no other can, so it lags the rest of the
    // block as far as the kernel lets it (a slow epilogue warp, say).
    warpPeriod_.resize(warps_.size());
    for (unsigned& p : warpPeriod_) p = 1u << (scheduleRng_() % 4);
    const size_t width = scheduleRng_() % 2 ? 1 : 4, first = scheduleRng_() % warps_.size() / width * width;
    for (size_t w = first; w < std::min(warps_.size(), first + width); ++w) warpPeriod_[w] = kStarved;
    warpOrder_.resize(warps_.size());
    for (unsigned w = 0; w < warpOrder_.size(); ++w) warpOrder_[w] = w;
  }
  sharedShadow_.beginBlock();
  if (shape_.dynamicSharedBytes) sharedShadow_.declare(shared, shape_.dynamicSharedBytes);
}

bool BlockRunner::run(__spn_cpu_dim3 index) {
  blockIndex_ = index;
  error_.clear();
  startFibers(index);
  BlockRunner* outer = std::exchange(tlsRunner, this);
  while (liveThreads_ > 0 && error_.empty()) {
    bool ran = runPass(Skip::OffPeriod);
    // Only warps this pass skipped could go on: the others first.
    if (!ran && scheduleSeed_ && error_.empty()) ran = runPass(Skip::Starved);
    if (!ran && scheduleSeed_ && error_.empty()) ran = runPass(Skip::None);
    if (!ran && error_.empty() && liveThreads_ > 0 && !resolveStall()) break;
    ++pass_;
  }
  current_ = nullptr;
  // A failed block leaves fibers suspended mid-kernel: destroying them
  // unwinds their stacks.
  for (Thread& t : threads_)
    if (t.fiber) switchTo(t, /*destroy=*/true);
  tlsRunner = outer;
  return error_.empty();
}

bool BlockRunner::runPass(Skip skip) {
  bool ran = false;
  auto runThread = [&](Thread& t) {
    if (!runnable(t)) return;
    t.state = State::Runnable;
    current_ = &t;
    switchTo(t);
    ran = true;
  };
  if (!scheduleSeed_) {
    for (Thread& t : threads_) {
      runThread(t);
      if (!error_.empty()) break;
    }
    return ran;
  }
  std::shuffle(warpOrder_.begin(), warpOrder_.end(), scheduleRng_);
  const unsigned ws = shape_.warpSize;
  for (unsigned w : warpOrder_) {
    const bool starved = warpPeriod_[w] == kStarved;
    if ((skip != Skip::None && starved) || (skip == Skip::OffPeriod && !starved && pass_ % warpPeriod_[w] != 0))
      continue;
    for (size_t i = size_t(w) * ws; i < std::min(threads_.size(), size_t(w + 1) * ws) && error_.empty(); ++i)
      runThread(threads_[i]);
    if (!error_.empty()) break;
  }
  return ran;
}

bool BlockRunner::runnable(const Thread& t) const {
  switch (t.state) {
    case State::Runnable: return true;
    case State::AtBarrier: return t.waitFor != barrierGeneration_;
    case State::AtWarpMeeting: return t.waitFor != warps_[t.warp].generation;
    case State::AtPhase: return *t.word >= t.waitFor;
    case State::AtRegisters:
      return registerGroups_[warpGroupOf(t)].applied >= t.waitFor || freeRegisters_ >= registersNeeded(t);
    case State::Done: return false;
  }
  return false;
}

void BlockRunner::switchTo(Thread& t, bool destroy) {
  void* fakeStack = nullptr;
  asanStartSwitch(&fakeStack, t.stack);
  if (destroy) t.fiber = boost::context::fiber();
  else t.fiber = std::move(t.fiber).resume();
  asanFinishSwitch(fakeStack, nullptr);
}

void BlockRunner::suspend() {
  void* fakeStack = nullptr;
  asanStartSwitch(&fakeStack, schedulerStack_);
  try {
    scheduler_ = std::move(scheduler_).resume();
  } catch (const boost::context::detail::forced_unwind&) {
    asanFinishSwitch(fakeStack, &schedulerStack_);  // back on this fiber, to unwind it
    throw;
  }
  asanFinishSwitch(fakeStack, &schedulerStack_);
}

void BlockRunner::finish(Thread& t) {
  t.state = State::Done;
  --liveThreads_;
  Warp& w = warps_[t.warp];
  w.live &= ~(uint64_t(1) << t.view.lane);
  if (w.arrived && w.arrived == w.live) releaseWarp(w, w.arrived);
  if (atBarrier_ && atBarrier_ == liveThreads_ && error_.empty())
    recordError(
        "a barrier (sync(), a block collective) that some threads of the block reach and others leave the "
        "kernel without reaching:\n" +
        describeWaits());
}

void BlockRunner::releaseWarp(Warp& w, uint64_t lanes) {
  w.active = lanes;
  w.arrived = 0;
  ++w.generation;
  // Every lane's count of meetings, which picks the exchange half.
  const size_t first = size_t(&w - warps_.data()) * shape_.warpSize;
  for (size_t i = first; i < std::min(threads_.size(), first + shape_.warpSize); ++i)
    threads_[i].view.exchanges = w.generation;
}

void BlockRunner::syncBlock() { tlsRunner->arriveAtBarrier(); }
void BlockRunner::syncWarp() { tlsRunner->arriveAtWarpMeeting(); }

void BlockRunner::arriveAtBarrier() {
  ++atBarrier_;
  if (atBarrier_ == threads_.size()) {  // the last of all: everyone goes on
    atBarrier_ = 0;
    ++barrierGeneration_;
    sharedShadow_.barrier();
    return;
  }
  if (atBarrier_ == liveThreads_) {  // the others have returned
    recordError(
        "a barrier (sync(), a block collective) that some threads of the block reach and others leave the "
        "kernel without reaching:\n" +
        describeWaits() + fmt::format("\n  thread {} arrived last", current_ - threads_.data()));
    current_->state = State::Done;
    suspend();
    std::abort();  // never resumed: the block is abandoned
  }
  current_->state = State::AtBarrier;
  current_->waitFor = barrierGeneration_;
  suspend();
}

void BlockRunner::arriveAtWarpMeeting() {
  Warp& w = warps_[current_->warp];
  w.arrived |= uint64_t(1) << current_->view.lane;
  if (w.arrived == w.live) {
    releaseWarp(w, w.arrived);
    return;
  }
  current_->state = State::AtWarpMeeting;
  current_->waitFor = w.generation;
  suspend();
}

void BlockRunner::waitWord(const unsigned* word, unsigned atLeast) {
  BlockRunner& r = *tlsRunner;
  if (*word >= atLeast) return;
  r.current_->state = State::AtPhase;
  r.current_->word = word;
  r.current_->waitFor = atLeast;
  r.suspend();
}

void BlockRunner::phaseCompleted() { tlsRunner->sharedShadow_.barrier(); }

unsigned BlockRunner::warpGroupThreads(size_t group) const {
  return unsigned(std::min<size_t>(kWarpGroupThreads, threads_.size() - group * kWarpGroupThreads));
}

int64_t BlockRunner::registersNeeded(const Thread& t) const {
  const size_t group = warpGroupOf(t);
  return (int64_t(t.claim.n) - int64_t(registerGroups_[group].budget)) * warpGroupThreads(group);
}

void BlockRunner::setRegisters(int n, bool claim, const char* file, int line, int col) {
  BlockRunner& r = *tlsRunner;
  if (!r.modelRegisters_) return;
  Thread& t = *r.current_;
  RegisterGroup& g = r.registerGroups_[r.warpGroupOf(t)];
  const uint32_t call = ++t.registerCalls;
  t.claim = {n, file, line, col};
  const char* name = claim ? "claim_registers" : "release_registers";
  // setmaxnreg.inc only raises a budget and .dec only lowers it.
  if (g.applied < call && (claim ? unsigned(n) < g.budget : unsigned(n) > g.budget)) {
    const std::string message = fmt::format(
        "{}:{}:{}: {}({}) where the warp group's budget is {} registers a thread: a claim only raises "
        "it and a release only lowers it, in block ({}, {}, {}), thread ({}, {}, {})",
        file, line, col, name, n, g.budget, t.view.block_idx.x, t.view.block_idx.y, t.view.block_idx.z,
        t.view.thread_idx.x, t.view.thread_idx.y, t.view.thread_idx.z);
    fail(message.c_str());
  }
  while (g.applied < call) {
    const int64_t need = r.registersNeeded(t);
    if (!claim || r.freeRegisters_ >= need) {
      r.freeRegisters_ -= need;
      g.budget = unsigned(n);
      g.applied = call;
      return;
    }
    t.state = State::AtRegisters;
    t.waitFor = call;
    r.suspend();
  }
}

void BlockRunner::fail(const char* message) {
  BlockRunner& r = *tlsRunner;
  r.recordError(message, /*namesTheThread=*/true);
  r.current_->state = State::Done;
  r.suspend();
  std::abort();  // never resumed: the block is abandoned
}

void BlockRunner::sharedDeclare(const void* base, size_t bytes) { tlsRunner->sharedShadow_.declare(base, bytes); }

int BlockRunner::sharedAccess(int access, const void* p, size_t bytes, unsigned* other) {
  BlockRunner& r = *tlsRunner;
  uint32_t who = 0;
  const Thread& t = *r.current_;
  const int verdict =
      r.sharedShadow_.access(access, p, bytes, uint32_t(&t - r.threads_.data()), r.warps_[t.warp].generation, &who);
  *other = who;
  return verdict;
}

bool BlockRunner::resolveStall() {
  // Lanes of a warp that diverged around a vote: the lanes that reached it
  // meet without the others, as a GPU runs a divergent branch with the
  // lanes that took it (docs/runtime.md).
  bool released = false;
  for (Warp& w : warps_)
    if (w.arrived) {
      releaseWarp(w, w.arrived);
      released = true;
    }
  if (released) return true;
  recordError(
      "the block cannot go on (a barrier some threads never reach, a phase no thread arrives at, or registers no "
      "warp group gives back):\n" +
      describeWaits());
  return false;
}

std::string BlockRunner::describeWaits() const {
  std::vector<unsigned> atBarrier, atMeeting, atPhase, returned;
  std::vector<std::pair<const Thread*, std::vector<unsigned>>> atClaim;  // per claim: its threads
  for (size_t i = 0; i < threads_.size(); ++i) {
    const Thread& t = threads_[i];
    if (t.state == State::AtBarrier) atBarrier.push_back(unsigned(i));
    else if (t.state == State::AtWarpMeeting) atMeeting.push_back(unsigned(i));
    else if (t.state == State::AtPhase) atPhase.push_back(unsigned(i));
    else if (t.state == State::Done) returned.push_back(unsigned(i));
    else if (t.state == State::AtRegisters) {
      auto same = [&](const auto& c) {
        return c.first->claim.line == t.claim.line && c.first->claim.col == t.claim.col &&
               c.first->claim.n == t.claim.n && warpGroupOf(t) == warpGroupOf(*c.first);
      };
      auto it = std::find_if(atClaim.begin(), atClaim.end(), same);
      if (it == atClaim.end()) atClaim.push_back({&t, {unsigned(i)}});
      else it->second.push_back(unsigned(i));
    }
  }
  std::string out;
  auto line = [&](const char* what, const std::vector<unsigned>& ids) {
    if (ids.empty()) return;
    if (!out.empty()) out += '\n';
    out += fmt::format("  threads {} {}", ranges(ids), what);
  };
  line("wait at the barrier", atBarrier);
  line("wait at a warp shuffle or vote", atMeeting);
  line("wait for a phase of a barrier (wait()) that no thread left can complete", atPhase);
  for (const auto& [t, ids] : atClaim)
    line(fmt::format("wait at {}:{}:{}: claim_registers({}) needs {} registers for its warp group, and {} of the "
                     "block's {} are free ({} threads x {}, what ptxas gives each thread of a kernel with register "
                     "budgets; the budgets must add up to no more)",
                     t->claim.file, t->claim.line, t->claim.col, t->claim.n, registersNeeded(*t), freeRegisters_,
                     int64_t(threads_.size()) * registersPerThread_, threads_.size(), registersPerThread_)
             .c_str(),
         ids);
  line("have returned", returned);
  return out;
}

void BlockRunner::recordError(std::string message, bool namesTheThread) {
  if (!error_.empty()) return;
  const __spn_cpu_dim3 b = blockIndex_;
  error_ = namesTheThread ? std::move(message) : fmt::format("block ({}, {}, {}): {}", b.x, b.y, b.z, message);
}

}  // namespace spindle::rt::cpu
