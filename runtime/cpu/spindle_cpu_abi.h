/* The contract between the Spindle runtime's CPU target and a kernel
 * compiled for it (docs/runtime.md, "The cpu target").
 *
 * The runtime compiles a generated kernel for the host as a shared library,
 * with this file and spindle_cpu.h (the HIP device API on the host) in
 * front of the generated source, and loads it with dlopen. Each GPU thread
 * of a block is a fiber; all fibers of one block run on one OS thread, and
 * blocks run in parallel on the host's cores. The library calls back into
 * the runtime through a table of functions (__spn_cpu_api), which the
 * runtime hands it once after loading (__spn_cpu_bind).
 *
 * Plain C, so that both sides read it the same way; change
 * __SPN_CPU_ABI_VERSION with any change here (it is part of the source,
 * hence of every cache key). */
#ifndef SPINDLE_CPU_ABI_H
#define SPINDLE_CPU_ABI_H

#define __SPN_CPU_ABI_VERSION 5

/* Bytes one lane may put into a warp exchange (shuffles, votes). */
#define __SPN_CPU_EXCHANGE_BYTES 16

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct __spn_cpu_dim3 {
  unsigned x, y, z;
} __spn_cpu_dim3;

/* Guarantees the library may rely on: a fiber never moves to another OS
 * thread (thread-local addresses, hence __shared__, stay valid across
 * calls); self() returns the same pointer for a fiber's whole life; a block
 * has at most 1024 threads; fail() copies its message before switching.
 *
 * One GPU thread. The runtime owns it; the library reads it through
 * __spn_cpu_api::self and writes only its lane's slots of
 * `warp_exchange`. */
typedef struct __spn_cpu_thread {
  __spn_cpu_dim3 thread_idx;
  __spn_cpu_dim3 block_idx;
  __spn_cpu_dim3 block_dim;
  __spn_cpu_dim3 grid_dim;
  unsigned warp_size; /* 32 or 64: the target's ("cpu", "cpu:warp64") */
  unsigned lane;      /* linear thread index % warp_size */
  /* The warp's exchange buffer: 2 x warp_size slots of
   * __SPN_CPU_EXCHANGE_BYTES. An exchange: h = exchanges & 1; write this
   * lane's slot of half h; sync_warp(); read any lane's slot of half h.
   * `exchanges` counts the warp's meetings so far; the runtime updates it
   * for every lane of the warp when a meeting completes (the library does
   * not write it). The next exchange uses the other half, and the one
   * after it cannot start before every lane has read this one, so one
   * meeting per exchange suffices. */
  unsigned char* warp_exchange;
  unsigned exchanges;
  /* Bit k: lane k took part in the meeting sync_warp just returned from
   * (read it right after sync_warp): every lane of the warp that exists and
   * has not returned, except where the warp's lanes diverged and only some
   * of them reached a vote (the others wait at a barrier or elsewhere);
   * then just those, as a GPU runs a divergent branch with the lanes that
   * took it. Votes and ballots count these lanes only. */
  const unsigned long long* warp_live;
  /* The block's dynamic shared memory (16-aligned), null without any. */
  unsigned char* dynamic_shared;
  /* Non-zero once the launch has run past its time limit
   * (SPINDLE_CPU_TIMEOUT_S): a checked build's `while` loops look at it
   * now and then and fail the launch (read it with a relaxed atomic load). */
  const int* launch_expired;
} __spn_cpu_thread;

typedef struct __spn_cpu_api {
  int abi_version; /* __SPN_CPU_ABI_VERSION of the runtime */
  /* The calling GPU thread. */
  __spn_cpu_thread* (*self)(void);
  /* __syncthreads: returns once every thread of the block has arrived. A
   * block where some threads wait here and the others have returned (or
   * wait at a warp meeting forever) fails the launch; never hangs. */
  void (*sync_block)(void);
  /* The live lanes of the calling thread's warp meet: returns once each of
   * them has called it (as many times as this lane); or, where some of them
   * wait at sync_block instead (a divergent stage, as in the prelude's
   * block reduction) and nothing else can run, with the lanes that came,
   * as a GPU runs a divergent branch with its lanes. */
  void (*sync_warp)(void);
  /* Ends the launch with `message` (an assert, an out-of-bounds access),
   * which names the block and thread itself: the launch throws
   * spindle::Error with it. Does not return. */
  void (*fail)(const char* message);
  /* A checked build's shared memory: the block's static shared buffer at
   * [base, base + bytes), declared by each thread that reaches its
   * declaration (the block's dynamic shared memory is declared already). */
  void (*shared_declare)(const void* base, size_t bytes);
  /* A checked build's access to the `bytes` at p, which may be shared
   * memory: `access` 0 reads, 1 writes, 2 does both (+=), 3 is an atomic.
   * Returns 0 when fine, always for memory not declared shared; else the
   * access is not recorded and the code says what is wrong: 1, a read of
   * shared bytes that no thread of the block has written since the block
   * began; a race with another thread since the last barrier, `*other`
   * (its linear index in the block, or 0xffffffff for several threads)
   * having 2 written them, 3 updated them atomically, 4 read them (and
   * this access writes). */
  int (*shared_access)(int access, const void* p, size_t bytes, unsigned* other);
  /* Returns once *word >= at_least (word in the block's shared memory),
   * letting the block's other threads run meanwhile: a phase barrier's
   * wait(). A block where every thread that has not returned waits here or
   * at a barrier, and none can go on, fails the launch; never hangs. */
  void (*wait_word)(const unsigned* word, unsigned at_least);
  /* A phase barrier completed a phase: for a checked build's record of
   * shared memory, every access before it is ordered before every access
   * after it, as at sync() (coarser than the GPU's ordering, which binds
   * only the threads that arrived and those that wait: a race between
   * others across a phase goes unreported, none is reported falsely). */
  void (*phase_completed)(void);
  /* claim_registers(n) (claim 1) or release_registers(n) (claim 0) at
   * file:line:col, called by every thread of the warp group; the first
   * call of each applies it. The runtime models sm_90a's register pool at
   * warp width 32 (docs/runtime.md): a claim returns once the block's free
   * registers cover it, letting the block's other threads run meanwhile;
   * a block that can never go on fails the launch, naming the claim. At
   * width 64 it returns at once. */
  void (*set_registers)(int n, int claim, const char* file, int line, int col);
} __spn_cpu_api;

/* What the library exports (default visibility, C names):
 *   void __spn_cpu_bind(const __spn_cpu_api* api);   once, after dlopen
 *   int  __spn_cpu_abi_version(void);                __SPN_CPU_ABI_VERSION
 *   void __spn_cpu_entry(void** args);               runs the kernel for the
 *       calling GPU thread; args[i] points at parameter i's value, as
 *       hipModuleLaunchKernel and cuLaunchKernel take them. */
typedef void (*__spn_cpu_bind_fn)(const __spn_cpu_api* api);
typedef int (*__spn_cpu_abi_version_fn)(void);
typedef void (*__spn_cpu_entry_fn)(void** args);

#ifdef __cplusplus
}
#endif

#endif /* SPINDLE_CPU_ABI_H */
