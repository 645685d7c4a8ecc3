// Runs the blocks of a CPU-target launch on the calling OS thread: every GPU
// thread of a block is a fiber, switched at barriers (__syncthreads), warp
// meetings (the exchanges behind shuffles and votes) and phase barriers'
// waits (wait(), docs/language.md 8.14), so a block
// behaves as on a GPU: shared memory is one per block, a barrier waits for
// every thread, and warp collectives see their lanes in lockstep. A block
// that cannot go on (some threads wait at a barrier that the others left
// by returning, or for a phase no thread left completes) fails with a
// message that says which threads wait where.
//
// Register budgets (claim_registers, release_registers): at warp width 32
// the runner keeps sm_90a's pool. ptxas gives every thread of a kernel
// that sets budgets what __launch_bounds__ allows, 65,536 / threads rounded
// down to a multiple of 8 (at most 256), and a claim waits until the
// block's unclaimed registers cover its warp group's rise, so budgets that
// add up to more fail here, naming the claim, where a GPU hangs. At width
// 64 (AMD, where the builtins do nothing) there is no pool.
//
// The schedule: with seed 0 each pass runs every runnable thread in thread
// order, each until it waits. A nonzero seed (SPINDLE_CPU_SCHEDULE) models
// warps of different speeds, as a GPU's are: per block, each warp gets a
// period of 1, 2, 4 or 8 passes and runs only in passes that are multiples
// of it (unless nothing else can run), one warp or warp group is starved
// (it runs only when no other warp can), and every pass visits the warps
// in a shuffled order. Each such order is one a GPU may take, so a kernel
// whose results or phase waits hold only in thread order (a wait that a
// GPU's parity test would confuse, docs/language.md 8.14) fails under some
// seed where the in-order run passes.
#pragma once

#include <boost/context/fiber.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cpu/asan_fibers.h"
#include "cpu/fiber_stacks.h"
#include "cpu/grid_runner.h"
#include "cpu/shared_shadow.h"

namespace spindle::rt::cpu {

class BlockRunner {
 public:
  // `expired`: the launch's time-limit flag (__spn_cpu_thread::launch_expired).
  // `scheduleSeed`: 0 for thread order, else the seed of the shuffled
  // schedule (above).
  BlockRunner(const BlockShape& shape, __spn_cpu_entry_fn entry, void** args, size_t stackBytes, const int* expired,
              uint64_t scheduleSeed = 0);

  // Runs block `index` to its end. False when the kernel failed (an
  // assert, an out-of-bounds access, a barrier some threads never reach):
  // error() says why.
  bool run(__spn_cpu_dim3 index);
  const std::string& error() const { return error_; }

  // The API's implementations (runtimeApi()), for the thread running now.
  static __spn_cpu_thread* self();
  static void syncBlock();
  static void syncWarp();
  [[noreturn]] static void fail(const char* message);
  static void sharedDeclare(const void* base, size_t bytes);
  static int sharedAccess(int access, const void* p, size_t bytes, unsigned* other);
  static void waitWord(const unsigned* word, unsigned atLeast);
  static void phaseCompleted();
  static void setRegisters(int n, bool claim, const char* file, int line, int col);

 private:
  enum class State : uint8_t { Runnable, AtBarrier, AtWarpMeeting, AtPhase, AtRegisters, Done };
  // A claim_registers() a thread waits at (State::AtRegisters).
  struct RegisterClaim {
    int n = 0;
    const char* file = "";
    int line = 0, col = 0;
  };
  struct Thread {
    __spn_cpu_thread view;  // what the kernel reads
    boost::context::fiber fiber;
    State state = State::Runnable;
    uint32_t waitFor = 0;  // the generation of the barrier or meeting it waits at
    // AtPhase: until *word >= waitFor (a phase barrier's arrivals).
    const unsigned* word = nullptr;
    // The register calls it made; AtRegisters: until its warp group has
    // applied call waitFor, or the pool can give `claim`.
    uint32_t registerCalls = 0;
    RegisterClaim claim;
    unsigned warp = 0;
    StackBounds stack;  // its fiber's stack
  };
  struct Warp {
    uint64_t live = 0;     // lanes that exist and have not returned
    uint64_t arrived = 0;  // lanes waiting at the current meeting
    uint64_t active = 0;   // lanes of the last meeting (view.warp_live)
    uint32_t generation = 0;
    std::vector<unsigned char> exchange;
  };

  void startFibers(__spn_cpu_dim3 index);
  // Which warps a pass of the shuffled schedule leaves out: those whose
  // period does not divide the pass and the starved one(s); the starved;
  // none. (Thread order leaves out none.)
  enum class Skip : uint8_t { OffPeriod, Starved, None };
  // Runs each runnable thread of the warps `skip` keeps once; true if any ran.
  bool runPass(Skip skip);
  bool runnable(const Thread& t) const;
  void suspend();
  // Runs t's fiber until it suspends or ends; or, with `destroy`, unwinds
  // the suspended fiber and drops it.
  void switchTo(Thread& t, bool destroy = false);
  void finish(Thread& t);
  void releaseWarp(Warp& w, uint64_t lanes);
  void arriveAtBarrier();
  void arriveAtWarpMeeting();
  // Nothing can run: release warps whose lanes diverged around a vote, else
  // fail with where the threads wait.
  bool resolveStall();
  std::string describeWaits() const;
  // Registers the claim of thread t would take from the pool (its warp
  // group's threads times the rise of its budget).
  int64_t registersNeeded(const Thread& t) const;
  // The register pool's warp group of t (kWarpGroupThreads threads a group) and its threads.
  size_t warpGroupOf(const Thread& t) const { return size_t(&t - threads_.data()) / kWarpGroupThreads; }
  unsigned warpGroupThreads(size_t group) const;
  static constexpr unsigned kWarpGroupThreads = 128;  // four 32-wide warps
  // The first failure of the block; `message` gets the block in front
  // unless it names the block and thread itself (a kernel's own failure).
  void recordError(std::string message, bool namesTheThread = false);

  BlockShape shape_;
  __spn_cpu_entry_fn entry_;
  void** args_;
  const int* expired_;
  FiberStacks stacks_;
  std::vector<Thread> threads_;
  std::vector<Warp> warps_;
  std::vector<unsigned char> dynamicShared_;
  SharedShadow sharedShadow_;  // a checked build's record of who wrote and read shared memory
  __spn_cpu_dim3 blockIndex_{};
  unsigned liveThreads_ = 0;
  unsigned atBarrier_ = 0;
  uint32_t barrierGeneration_ = 0;
  boost::context::fiber scheduler_;  // where a suspending fiber returns to
  StackBounds schedulerStack_;       // the OS thread's stack, where run() is
  Thread* current_ = nullptr;
  std::string error_;
  // sm_90a's register pool (setmaxnreg), modeled at warp width 32: the
  // block starts with threads x registersPerThread_, each warp group of 4
  // warps at that budget; `applied` counts the group's register calls done.
  struct RegisterGroup {
    unsigned budget = 0;
    uint32_t applied = 0;
  };
  bool modelRegisters_ = false;
  unsigned registersPerThread_ = 0;
  int64_t freeRegisters_ = 0;
  std::vector<RegisterGroup> registerGroups_;
  // The shuffled schedule (seed != 0): each warp's period, the order of the
  // current pass, and the pass count of the block.
  uint64_t scheduleSeed_ = 0;
  std::mt19937_64 scheduleRng_;
  std::vector<unsigned> warpPeriod_, warpOrder_;
  uint64_t pass_ = 0;
};

}  // namespace spindle::rt::cpu
