// The matrix API by value on an NVIDIA GPU (built and run by
// bench/mma_gpu_check.sh): which lane and register hold which accumulator
// element (tests/golden/kernels/mma_layout.spn against the PTX ISA's
// mma.m16n8k16 C/D fragments, stated here), and samples/gemm.spn (f16 and
// bf16 in, f32 out) against an fp64 reference at odd and large shapes,
// with the 4096^3 time for orientation (not a benchmark: bench/run.sh is).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <random>
#include <vector>
#include <chrono>
cudaError_t run_gemm_f16(const void*, const void*, float*, int64_t, int64_t, int64_t);
cudaError_t run_gemm_bf16(const void*, const void*, float*, int64_t, int64_t, int64_t);
cudaError_t run_layout_f16(const void*, const void*, int32_t*, int32_t*, float*);
cudaError_t run_layout_bf16(const void*, const void*, int32_t*, int32_t*, float*);

static uint16_t toF16(float f) {  // round to nearest even, normal range only (|f| <= 1 or small ints here)
  uint32_t u; memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) == 0) return uint16_t(u >> 16);
  int e = int((u >> 23) & 0xff) - 127 + 15;
  uint32_t m = u & 0x7fffff;
  if (e <= 0) {  // subnormal
    m |= 0x800000; int shift = 14 - e;
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return uint16_t((u >> 16 & 0x8000) | q);
  }
  uint32_t q = (uint32_t(e) << 10) | (m >> 13), rem = m & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ++q;
  return uint16_t((u >> 16 & 0x8000) | q);
}
static double fromF16(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023; double s = (h & 0x8000) ? -1 : 1;
  if (e == 0) return s * std::ldexp(double(m), -24);
  return s * std::ldexp(double(m + 1024), e - 25);
}
static uint16_t toBf16(float f) { uint32_t u; memcpy(&u, &f, 4); return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16); }
static double fromBf16(uint16_t h) { uint32_t u = uint32_t(h) << 16; float f; memcpy(&f, &u, 4); return f; }

int failures = 0;
#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %d\n", cudaGetErrorString(e_), __LINE__); return 1; } } while (0)

int layout(bool bf16) {
  std::vector<uint16_t> coded(256), id(256, 0);
  for (int r = 0; r < 16; ++r) for (int c = 0; c < 16; ++c) coded[r * 16 + c] = bf16 ? toBf16(16 * r + c) : toF16(16 * r + c);
  for (int d = 0; d < 16; ++d) id[d * 17] = bf16 ? toBf16(1) : toF16(1);
  for (int codedIsA = 1; codedIsA >= 0; --codedIsA) {
    void *dA, *dB; int32_t *dr, *dc; float* dv;
    CHECK(cudaMalloc(&dA, 512)); CHECK(cudaMalloc(&dB, 512));
    CHECK(cudaMalloc(&dr, 64 * 8 * 4)); CHECK(cudaMalloc(&dc, 64 * 8 * 4)); CHECK(cudaMalloc(&dv, 64 * 8 * 4));
    CHECK(cudaMemcpy(dA, (codedIsA ? coded : id).data(), 512, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, (codedIsA ? id : coded).data(), 512, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dr, 0xff, 64 * 8 * 4)); CHECK(cudaMemset(dc, 0xff, 64 * 8 * 4));
    CHECK(bf16 ? run_layout_bf16(dA, dB, dr, dc, dv) : run_layout_f16(dA, dB, dr, dc, dv));
    CHECK(cudaDeviceSynchronize());
    std::vector<int32_t> rows(512), cols(512); std::vector<float> vals(512);
    CHECK(cudaMemcpy(rows.data(), dr, 2048, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(cols.data(), dc, 2048, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(vals.data(), dv, 2048, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 8; ++i) {
        // PTX ISA: C/D of m16n8k16: row groupID (+8 for c2, c3), col tig*2 + (i&1); registers 4..7 the second n8 half.
        int half = i / 4, c = i % 4, group = lane >> 2, tig = lane % 4;
        int wr = group + (c >= 2 ? 8 : 0), wc = tig * 2 + (c & 1) + 8 * half;
        int at = lane * 8 + i;
        if (rows[at] != wr || cols[at] != wc || vals[at] != float(16 * wr + wc)) {
          if (bad++ < 5) printf("  layout %s lane %d reg %d: got (%d, %d) = %g, want (%d, %d) = %d\n", bf16 ? "bf16" : "f16", lane, i, rows[at], cols[at], vals[at], wr, wc, 16 * wr + wc);
        }
      }
    printf("layout %s (%s coded): %s\n", bf16 ? "bf16" : "f16", codedIsA ? "A" : "B", bad ? "FAILED" : "ok (32 lanes x 8 registers as the PTX ISA says)");
    failures += bad != 0;
    cudaFree(dA); cudaFree(dB); cudaFree(dr); cudaFree(dc); cudaFree(dv);
  }
  return 0;
}

int gemm(bool bf16, int64_t M, int64_t N, int64_t K, bool time) {
  std::mt19937_64 rng(M * 1000003 + N * 1009 + K + bf16);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<uint16_t> A(M * K), B(K * N);
  std::vector<double> Av(M * K), Bv(K * N);
  for (size_t i = 0; i < A.size(); ++i) { A[i] = bf16 ? toBf16(d(rng)) : toF16(d(rng)); Av[i] = bf16 ? fromBf16(A[i]) : fromF16(A[i]); }
  for (size_t i = 0; i < B.size(); ++i) { B[i] = bf16 ? toBf16(d(rng)) : toF16(d(rng)); Bv[i] = bf16 ? fromBf16(B[i]) : fromF16(B[i]); }
  void *dA, *dB; float* dC;
  CHECK(cudaMalloc(&dA, A.size() * 2)); CHECK(cudaMalloc(&dB, B.size() * 2)); CHECK(cudaMalloc(&dC, M * N * 4));
  CHECK(cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dC, 0xff, M * N * 4));  // poisoned: NaN
  CHECK(bf16 ? run_gemm_bf16(dA, dB, dC, M, K, N) : run_gemm_f16(dA, dB, dC, M, K, N));
  CHECK(cudaDeviceSynchronize());
  std::vector<float> C(M * N);
  CHECK(cudaMemcpy(C.data(), dC, M * N * 4, cudaMemcpyDeviceToHost));
  // Check every element for small shapes, a sample of rows for large ones.
  double worst = 0; int bad = 0;
  int64_t step = M * N * K > 50000000 ? 97 : 1;
  for (int64_t i = 0; i < M; i += step)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k) s += Av[i * K + k] * Bv[k * N + j];
      double err = std::fabs(C[i * N + j] - s), tol = 1e-6 * K + 1e-5 * std::fabs(s);
      if (!(err <= tol)) { if (bad++ < 5) printf("  C[%lld, %lld] = %g, want %g\n", (long long)i, (long long)j, C[i * N + j], s); }
      worst = std::max(worst, err / tol);
    }
  printf("gemm %s %lldx%lldx%lld: %s (worst error %.3g of the bound 1e-6 K + 1e-5 |C|)", bf16 ? "bf16" : "f16", (long long)M, (long long)N, (long long)K, bad ? "FAILED" : "ok", worst);
  failures += bad != 0;
  if (time) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int w = 0; w < 3; ++w) (bf16 ? run_gemm_bf16 : run_gemm_f16)(dA, dB, dC, M, K, N);
    cudaEventRecord(a);
    const int reps = 20;
    for (int r = 0; r < reps; ++r) (bf16 ? run_gemm_bf16 : run_gemm_f16)(dA, dB, dC, M, K, N);
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ms /= reps;
    printf("; %.3f ms, %.1f TFLOP/s", ms, 2.0 * M * N * K / (ms * 1e-3) / 1e12);
  }
  printf("\n");
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

int main() {
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf("device: %s\n", p.name);
  if (layout(false) || layout(true)) return 1;
  for (int bf = 0; bf < 2; ++bf) {
    if (gemm(bf, 37, 53, 29, false)) return 1;
    if (gemm(bf, 150, 260, 100, false)) return 1;
    if (gemm(bf, 1000, 777, 333, false)) return 1;
    if (gemm(bf, 4096, 4096, 4096, true)) return 1;
  }
  printf(failures ? "FAILURES: %d\n" : "all ok\n", failures);
  return failures != 0;
}
