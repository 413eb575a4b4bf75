/* kernels_avx2.c: the AVX2 kernels (compiled with -mavx2 -mfma and without AVX-512, run only
 * on CPUs that have them: kernels.c checks). The 16 lanes of the canonical order (kernels.h)
 * are two 8-lane registers, so tiles are at most 2 rows x 3 tokens. f32 weights are read in
 * place; every other type is widened exactly, 16 rows at a time, into a small buffer (its
 * to_float, wtype.h) and goes through the same tiles. Attention and sums use the scalar
 * reference (the AVX-512 copies exist because this machine has AVX-512). */
#include "model/kernels.h"
#include "model/kernels_isa.h"

#if KERN_X86
#include <immintrin.h>
#include <stdint.h>

static inline float fold256x2(__m256 lo, __m256 hi) {
    __m256 s8 = _mm256_add_ps(lo, hi);
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

static inline __m256 maskload8(const float *p, int n) { /* first n (0..8) floats, rest 0 */
    const int32_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_loadu_si256((const __m256i *)idx));
    return _mm256_maskload_ps(p, m);
}

/* AVX2 holds the 16 lanes in two registers, so tiles are at most 2 rows x 3 tokens. */
static inline __attribute__((always_inline)) void tile(const float *w, size_t ldw, int RT,
                                                       const float *x, size_t ldx, int TT, int K,
                                                       float *y, size_t ldy) {
    __m256 lo[4][4], hi[4][4];
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) lo[i][t] = hi[i][t] = _mm256_setzero_ps();
    int k = 0;
    for (; k + KERN_LANES <= K; k += KERN_LANES) {
        for (int t = 0; t < TT; t++) {
            __m256 xl = _mm256_loadu_ps(x + t * ldx + k), xh = _mm256_loadu_ps(x + t * ldx + k + 8);
            for (int i = 0; i < RT; i++) {
                lo[i][t] = _mm256_fmadd_ps(_mm256_loadu_ps(w + i * ldw + k), xl, lo[i][t]);
                hi[i][t] = _mm256_fmadd_ps(_mm256_loadu_ps(w + i * ldw + k + 8), xh, hi[i][t]);
            }
        }
    }
    if (k < K) {
        int n = K - k, nl = n < 8 ? n : 8, nh = n - nl;
        for (int t = 0; t < TT; t++) {
            __m256 xl = maskload8(x + t * ldx + k, nl), xh = maskload8(x + t * ldx + k + 8, nh);
            for (int i = 0; i < RT; i++) {
                lo[i][t] = _mm256_fmadd_ps(maskload8(w + i * ldw + k, nl), xl, lo[i][t]);
                hi[i][t] = _mm256_fmadd_ps(maskload8(w + i * ldw + k + 8, nh), xh, hi[i][t]);
            }
        }
    }
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) y[t * ldy + i] = fold256x2(lo[i][t], hi[i][t]);
}

static float avx2_dot(const float *a, const float *b, int n) {
    float y;
    tile(a, 0, 1, b, 0, 1, n, &y, 0);
    return y;
}

#define TILE_R 2
#define TILE_T 3

/* A block of rt <= TILE_R rows against all T tokens in tiles of TILE_T. */
#define TILE_CASE(R, TT_) tile(w, ldw, R, x + t * ldx, ldx, TT_, K, y + t * ldy, ldy)
static void rows_block(const float *w, size_t ldw, int rt, const float *x, size_t ldx, int T, int K,
                       float *y, size_t ldy) {
    int t = 0;
    for (; t + TILE_T <= T; t += TILE_T) {
        if (rt == 1)
            TILE_CASE(1, TILE_T);
        else
            TILE_CASE(2, TILE_T);
    }
    for (; t < T; t++) {
        if (rt == 1)
            TILE_CASE(1, 1);
        else
            TILE_CASE(2, 1);
    }
}

static void matmul_f32(const float *w, size_t ldw, int rows, int K, const float *x, size_t ldx,
                       int T, float *y, size_t ldy) {
    for (int r = 0; r < rows; r += TILE_R) {
        int rt = rows - r < TILE_R ? rows - r : TILE_R;
        rows_block(w + (size_t)r * ldw, ldw, rt, x, ldx, T, K, y + r, ldy);
    }
}

void kern_avx2_f32(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,
                   int T, float *y, size_t ldy, int streams) {
    (void)streams;
    matmul_f32((const float *)w, ldw / 4, rows, K, x, ldx, T, y, ldy);
}

/* Other types: widen a few rows at a time into a small buffer (exact), then the same tiles;
 * the widening is amortised over the T tokens. */
static void avx2_matmul_widen(kern_to_float_fn to_float, const unsigned char *w, size_t ldw,
                              int rows, int K, const float *x, size_t ldx, int T, float *y,
                              size_t ldy, int streams) {
    (void)streams;
    int n = kern_widen_rows(K);
    float buf[n * K];
    for (int r = 0; r < rows; r += n) {
        int rt = rows - r < n ? rows - r : n;
        for (int i = 0; i < rt; i++) to_float(w + (size_t)(r + i) * ldw, buf + (size_t)i * K, K);
        matmul_f32(buf, (size_t)K, rt, K, x, ldx, T, y + r, ldy);
    }
}

const kern_isa_ops kern_isa_avx2_ops = {
    .name = "avx2",
    .dot = avx2_dot,
    .sum = kern_sum_ref,
    .attend = kern_attend_ref,
    .matmul_widen = avx2_matmul_widen,
};
#endif
