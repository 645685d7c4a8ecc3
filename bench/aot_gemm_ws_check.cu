// The ahead-of-time path: samples/gemm_ws.spn through its generated host launcher
// (nvcc, no Spindle runtime): the launcher makes the TMA tensor maps.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include GEMM_WS_GENERATED  // spindle gen samples/gemm_ws.spn ... (bench/aot_gpu.sh)
__global__ void ref(const __half* A, const __half* B, const __half* bias, float* R, int M, int K, int N) {
  int i = blockIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= N) return;
  float s = 0;
  for (int k = 0; k < K; ++k) s += __half2float(A[size_t(i) * K + k]) * __half2float(B[size_t(k) * N + j]);
  double x = double(s) + __half2float(bias[j]);
  R[size_t(i) * N + j] = float(0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))));
}
__global__ void fill(__half* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed * 97531u;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2half((int(h % 2001) - 1000) / 1000.0f);
  }
}
int main(int argc, char** argv) {
  int M = argc > 1 ? atoi(argv[1]) : 4096, N = argc > 2 ? atoi(argv[2]) : 4096, K = argc > 3 ? atoi(argv[3]) : 4096;
  __half *A, *B, *bias, *C; float* R;
  cudaMalloc(&A, size_t(M) * K * 2); cudaMalloc(&B, size_t(K) * N * 2); cudaMalloc(&bias, N * 2);
  cudaMalloc(&C, size_t(M) * N * 2); cudaMalloc(&R, size_t(M) * N * 4);
  fill<<<1024, 256>>>(A, size_t(M) * K, 1); fill<<<1024, 256>>>(B, size_t(K) * N, 2); fill<<<64, 256>>>(bias, N, 3);
  const __spn_launch_tensor_map a = __spn_make_tensor_map(A, M, K, K, 1, 2, 128, 64, 128);
  printf("A's map made: %d\n", a.ready);
  cudaMemset(C, 0xff, size_t(M) * N * 2);
  hipError_t e = launch_gemm_ws(0, A, B, bias, C, M, K, N);
  if (e != cudaSuccess) { printf("launch: %s\n", cudaGetErrorString(e)); return 1; }
  ref<<<dim3((N + 127) / 128, M), 128>>>(A, B, bias, R, M, K, N);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("sync failed\n"); return 1; }
  std::vector<__half> out(size_t(M) * N); std::vector<float> r(size_t(M) * N);
  cudaMemcpy(out.data(), C, out.size() * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(r.data(), R, r.size() * 4, cudaMemcpyDeviceToHost);
  long bad = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double d = fabs(double(__half2float(out[i])) - r[i]), tol = 2e-3 * fabs(r[i]) + 1e-2;
    if (!(d <= tol)) ++bad;
  }
  printf("%dx%dx%d: %s (%ld of %zu outside the bound)\n", M, N, K, bad ? "WRONG" : "ok", bad, out.size());
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int i = 0; i < 30; ++i) {
    cudaEventRecord(e0); launch_gemm_ws(0, A, B, bias, C, M, K, N); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  printf("AOT launch: %.4f ms, %.1f TFLOP/s (median of 30)\n", ts[15], 2.0 * M * N * K / ts[15] / 1e9);
  return bad != 0;
}
