// encoder_forward, hand-written (bench/parity/kernels/encoder_forward.spn;
// llm.c's encoder_forward_kernel3): out[b, t, :] = wte[tokens[b, t], :] +
// wpe[t, :] in bf16; one run of 8 channels (16 bytes) per thread, blocks of
// 256, runs counted per row; wte and wpe read with __ldcs (llm.c's
// load128cs), out stored plainly (llm.c's store128). The host checks
// C % 8 == 0 (llm.c asserts it) and 32-bit indices.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
    encoder_forward(const int* __restrict__ tokens, const __nv_bfloat16* __restrict__ wte,
                    const __nv_bfloat16* __restrict__ wpe, __nv_bfloat16* __restrict__ out, int BT, int T, int C) {
  const int runs = C / 8;  // runs per row
  const int run = blockIdx.x * 256 + threadIdx.x;
  if (run >= BT * runs) return;
  const int bt = run / runs;
  const int c = (run - bt * runs) * 8;
  const int t = bt % T;
  const int ix = tokens[bt];
  float e[8], p[8];
  unpackBf16x8(__ldcs(reinterpret_cast<const uint4*>(wte + ix * C + c)), e);
  unpackBf16x8(__ldcs(reinterpret_cast<const uint4*>(wpe + t * C + c)), p);
#pragma unroll
  for (int k = 0; k < 8; ++k) e[k] += p[k];
  *reinterpret_cast<uint4*>(out + bt * C + c) = packBf16x8(e);
}
