/* kernels_avx2.h: what the AVX2 files (kernels_avx2.c, kernels_avx2_int8.c,
 * kernels_avx2_attend.c) share: the folds of
 * the canonical order's lanes (kernels.h) held in 8-lane registers, masked loads, f16 scales.
 * Internal to model/; include only from files compiled with the AVX2 flags (CMakeLists.txt). */
#ifndef MODEL_KERNELS_AVX2_H
#define MODEL_KERNELS_AVX2_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/weights/wtype.h"

/* The canonical 16-lane fold of lanes 0-7 (lo) and 8-15 (hi): j + j+8, then + 4, + 2, + 1. */
static inline float fold256x2(__m256 lo, __m256 hi) {
    __m256 s8 = _mm256_add_ps(lo, hi);
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

/* The 8-lane fold of the int8 mode's min accumulator: j + j+4, + j+2, + j+1. */
static inline float fold256(__m256 a) {
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

static inline __m256 maskload8(const float *p, int n) { /* first n (0..8) floats, rest 0 */
    const int32_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_loadu_si256((const __m256i *)idx));
    return _mm256_maskload_ps(p, m);
}

static inline float half_f32(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

/* kernels_avx2_attend.c: kern_isa_ops' sum, softmax, scores and value sums. */
float kern_avx2_sum(const float *a, int n);
float kern_avx2_softmax(float *s, int n);
void kern_avx2_scores(wtype kt, const float *q, size_t ldq, int nq, int hs, const void *k, int n,
                      float *s, size_t lds);
void kern_avx2_values(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                      const void *v, int n_shared, const int *const *tail, const int *n_tail,
                      float *out, size_t ldo);

#endif
