/* tile_ceiling.c: how fast the exact mode can widen a 4-bit weight on this CPU (model/GGUF.md,
 * "One-row passes of the 4-bit types"). Not a test and not built by default:
 *
 *   cmake --build build --target tile_ceiling && taskset -c 1 build/tile_ceiling
 *
 * On one core, with the matrix in the cache (64 rows x 2048, q4_k), it times
 *   1. the q4_k tile decbench runs at T = 1 (kern_avx512_q4_k), and
 *   2. the least any exact 4-bit path can do per 16 weights: a shift of the packed values, one
 *      permute of a table of exact weights (vpermps) and the FMA, tables built in advance
 *      (it computes nothing useful: it only counts the instructions a real tile cannot avoid),
 * and prints nanoseconds per 16 weights and what that means for a 1.1B pass on N cores. The
 * weights must reach the FMA as the floats ggml's dequantizer makes (the exact mode's
 * contract), so loop 2 bounds every exact tile from below; integer dot products (the int8 mode)
 * are not bound by it. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/kernels/kernels_isa.h"

#define K 2048
#define ROWS 64
#define BLOCK_BYTES 144 /* q4_k: 256 values */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Loop 2: per row and 16 weights, shift + permute + FMA over the same bytes the tile reads. */
__attribute__((target("avx512f"), noinline)) static void bare_loop(const unsigned char *w,
                                                                    const float *x, float *y) {
    const __m512 table = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const size_t ldw = K / 256 * BLOCK_BYTES;
    for (int r = 0; r < ROWS; r += 4) {
        __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                         _mm512_setzero_ps()};
        for (int k = 0; k < K; k += 256) {
            const unsigned char *b = w + (size_t)r * ldw + (size_t)(k / 256) * BLOCK_BYTES + 16;
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
#pragma GCC unroll 8
                for (int s = 0; s < 8; s++) {
                    __m512 xv = _mm512_loadu_ps(x + k + 128 * h + 16 * s);
#pragma GCC unroll 4
                    for (int i = 0; i < 4; i++) {
                        __m512i q = _mm512_loadu_si512(b + (size_t)i * ldw + 64 * h);
                        __m512i idx = s ? _mm512_srli_epi32(q, 4 * s) : q;
                        acc[i] = _mm512_fmadd_ps(_mm512_permutexvar_ps(idx, table), xv, acc[i]);
                    }
                }
            }
        }
        for (int i = 0; i < 4; i++) y[r + i] = _mm512_reduce_add_ps(acc[i]);
    }
}

int main(void) {
    if (!__builtin_cpu_supports("avx512f")) {
        fprintf(stderr, "tile_ceiling: this CPU has no AVX-512\n");
        return 2;
    }
    const size_t ldw = K / 256 * BLOCK_BYTES;
    unsigned char *w = malloc(ldw * ROWS);
    float *x = malloc(sizeof(float) * K), y[ROWS];
    srand(1);
    for (size_t i = 0; i < ldw * ROWS; i++) w[i] = (unsigned char)rand();
    for (int r = 0; r < ROWS; r++)
        for (int b = 0; b < K / 256; b++) {
            uint16_t one = 0x3c00; /* d = dmin = 1.0 in f16: finite weights */
            memcpy(w + (size_t)r * ldw + (size_t)b * BLOCK_BYTES, &one, 2);
            memcpy(w + (size_t)r * ldw + (size_t)b * BLOCK_BYTES + 2, &one, 2);
        }
    for (int i = 0; i < K; i++) x[i] = (float)rand() / (float)RAND_MAX;
    const double chunks = (double)ROWS * K / 16;
    double ns[2];
    for (int v = 0; v < 2; v++) {
        int reps = 0;
        double t0 = now();
        while (now() - t0 < 1.0) {
            for (int i = 0; i < 100; i++) {
                if (v == 0)
                    kern_avx512_q4_k(w, ldw, ROWS, K, x, K, 1, y, 1, 0);
                else
                    bare_loop(w, x, y);
            }
            reps += 100;
        }
        ns[v] = (now() - t0) / reps / chunks * 1e9;
    }
    /* a 1.1B pass (TinyLlama's shape: 22 layers of 2048x2048 q, o; 2x 256x2048 k, v; 3x
     * 5632x2048 ffn; and the 32000x2048 classifier) in q4_k: 619 MB */
    const double pass_chunks = (22.0 * (2 * 2048 * 2048 + 2 * 256 * 2048 + 3 * 5632 * 2048) +
                                32000.0 * 2048) / 16;
    printf("ns per 16 q4_k weights, one core, in cache: tile %.3f, bare exact loop %.3f\n", ns[0],
           ns[1]);
    for (int cores = 1; cores <= 4; cores *= 2)
        printf("1.1B q4_k pass on %d core(s): tile >= %.1f ms, any exact tile >= %.1f ms "
               "(619 MB: %.1f / %.1f GB/s)\n",
               cores, pass_chunks * ns[0] / cores * 1e-6, pass_chunks * ns[1] / cores * 1e-6,
               0.619 / (pass_chunks * ns[0] / cores * 1e-9),
               0.619 / (pass_chunks * ns[1] / cores * 1e-9));
    free(w), free(x);
    return 0;
}
