// The hand-written kernels of bench/parity/handwritten as host functions
// (cuda_host_emulation.h). Each generated wrapper includes this before its
// .cu, so a definition that does not match its declaration here is a
// compile error ("conflicting declaration"), not a silent mismatch. The
// kernels whose size is a compile-time constant were compiled with the
// constants the tests name (tests/parity_kernels/CMakeLists.txt).
#pragma once

#include "cuda_host_emulation.h"

extern "C" {
void axpy_f32(const float*, float*, float, int);
void axpy_f16(const __half*, __half*, float, int);
void softmax(const float*, float*);                                // N = 3000
void layernorm(const float*, const float*, const float*, float*);  // N = 3000
void rmsnorm_f16(const __half*, const __half*, __half*);           // N = 3000
void scan(const float*, float*);                                   // N = 3000
void scan_n40000(const float*, float*);                            // scan.cu with N = 40000
void matmul(const float*, const float*, float*, int, int);         // K = 64
void transpose(const float*, float*, int, int);
void histogram(const float*, int*, float, float, int, int);
void bias_gelu(const float*, const float*, float*, float*, int);
void row_norms(const float*, float*, float*, int, int);
void scale_rows(const float*, float*, float, int, int);
void scale_gather(const float*, float*, float, int, int, int, int);
void fused_add_rmsnorm(__nv_bfloat16*, __nv_bfloat16*, const __nv_bfloat16*, float, int);
void act_and_mul_silu(const __nv_bfloat16*, __nv_bfloat16*, int);
void act_and_mul_gelu(const __nv_bfloat16*, __nv_bfloat16*, int);
void act_and_mul_gelu_tanh(const __nv_bfloat16*, __nv_bfloat16*, int);
void rotary_embedding_neox(const long long*, __nv_bfloat16*, __nv_bfloat16*, const __nv_bfloat16*, int, int, int, int,
                           int);
void rotary_embedding_gptj(const long long*, __nv_bfloat16*, __nv_bfloat16*, const __nv_bfloat16*, int, int, int, int,
                           int);
void adamw(__nv_bfloat16*, float*, const __nv_bfloat16*, float*, float*, int, float, float, float, float, float, float,
           float, float, unsigned);
void quant_per_token_fp8(const __nv_bfloat16*, unsigned char*, float*, int);
void quant_per_token_int8(const __nv_bfloat16*, unsigned char*, float*, int);
void encoder_forward(const int*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int);
void crossentropy_backward(const __nv_bfloat16*, const int*, float, __nv_bfloat16*, int, int);
void attention_softmax(const __nv_bfloat16*, float, __nv_bfloat16*, int, int);
void l2_flush(const float4*, int, float*);
}
