/* kernels_avx512.h: what the AVX-512 files (kernels_avx512.c, kernels_avx512_attend.c,
 * kernels_avx512_vnni.c) share: the folds of 16-lane accumulators in the canonical order
 * (kernels.h), float rows widened 16 values at a time, the row groups of streaming matrices, f16
 * broadcasts, the k-quants' scales. Internal to model/; include only from
 * files compiled with the AVX-512 flags (CMakeLists.txt). */
#ifndef MODEL_KERNELS_AVX512_H
#define MODEL_KERNELS_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/weights/wtype.h"

/* 16 weights of row p from column k widened to float exactly (zeros past the mask), for f32,
 * f16 and bf16 (q8_0 has its own loop in tile); WT is a constant at every call, so the switch
 * folds away. */
static inline __attribute__((always_inline)) __m512 load_w16(wtype WT, const unsigned char *p,
                                                             int k, __mmask16 m) {
    switch (WT) {
    case WTYPE_F16:
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p + 2 * (size_t)k));
    case WTYPE_BF16:
        return _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p + 2 * (size_t)k)), 16));
    default:
        return _mm512_maskz_loadu_ps(m, (const float *)p + k);
    }
}

static inline float fold512(__m512 a) {
    __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

/* Folds 16 accumulators at once with the same pairwise additions as fold512 (lane j with
 * j+8, then j+4, j+2, j+1), interleaving them by shuffles: about 2 instructions per result
 * instead of 7. Lane 4k+m of the result holds the fold of a[4m+k]. */
static inline __attribute__((always_inline)) __m512 fold16x16(const __m512 a[16]) {
    __m512 l1[8], l2[4], l3[2];
#pragma GCC unroll 16
    for (int p = 0; p < 8; p++) /* lanes j + j+8: [a.lo8, b.lo8] + [a.hi8, b.hi8] */
        l1[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0x44),
                              _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0xEE));
#pragma GCC unroll 16
    for (int p = 0; p < 4; p++) /* j + j+4 within each accumulator's 8 */
        l2[p] = _mm512_add_ps(_mm512_shuffle_f32x4(l1[2 * p], l1[2 * p + 1], 0x88),
                              _mm512_shuffle_f32x4(l1[2 * p], l1[2 * p + 1], 0xDD));
#pragma GCC unroll 16
    for (int p = 0; p < 2; p++) /* j + j+2 */
        l3[p] = _mm512_add_ps(_mm512_shuffle_ps(l2[2 * p], l2[2 * p + 1], 0x44),
                              _mm512_shuffle_ps(l2[2 * p], l2[2 * p + 1], 0xEE));
    return _mm512_add_ps(_mm512_shuffle_ps(l3[0], l3[1], 0x88), /* j + j+1 */
                         _mm512_shuffle_ps(l3[0], l3[1], 0xDD));
}

/* Software prefetch for the one-row tiles of matrices that stream from memory (4 rows far
 * apart, kern_rowgroup): each row's bytes [b0, b1) of the coming step, STREAM_PREFETCH bytes
 * ahead, one prefetch per cache line. The hardware prefetchers alone left one core of a Xeon
 * (Emerald Rapids VM) at 78-84% of the read probe on the 1.1B preset's one-row int8 passes;
 * with this, 90-99.5% (interleaved shares, Q4_K_M and Q6_K, 1 and 2 threads, 2 alternations
 * each). kernel_speed's streaming T = 1, ns per 64 weights, best of 2 runs, none / 512 / 2048 /
 * 4096 / 8192 bytes ahead: q8_0 5.5 / 4.8 / 4.6 / 5.1 / 5.1, q4_k 3.0 / 2.7 / 2.5 / 2.7 / 2.8,
 * q6_k 4.3 / 4.0 / 3.7 / 4.0 / 4.1. The addresses are formed as integers: near a matrix's end
 * they point past it, which a prefetch may do (it never faults) and a C pointer may not. */
#define STREAM_PREFETCH 2048

static inline __attribute__((always_inline)) void prefetch_rows(const unsigned char *const *wr,
                                                                int RT, size_t b0, size_t b1) {
#pragma GCC unroll 4
    for (int i = 0; i < RT; i++)
        for (uintptr_t a = ((uintptr_t)wr[i] + b0 + STREAM_PREFETCH) & ~(uintptr_t)63,
                       end = (uintptr_t)wr[i] + b1 + STREAM_PREFETCH;
             a < end; a += 64)
            _mm_prefetch((const char *)a, _MM_HINT_T0);
}

/* The accumulator whose fold lands in lane L of fold16x16 (the map is its own inverse). */
#define ACC_FOR_LANE(L) (4 * ((L) % 4) + (L) / 4)

static inline __m512 bcast_half(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return _mm512_cvtph_ps(_mm256_set1_epi16((short)h));
}

/* The permute index that fills lanes 0-7 with element 0 and lanes 8-15 with element 1 (add 2j
 * for elements 2j and 2j + 1). */
static inline __m512i halves_index(void) {
    return _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
}

/* Two f16 values packed in `pair` (the first in the low 16 bits) widened: the first in lanes
 * 0-7, the second in lanes 8-15. Converted together in one narrow register and spread by one
 * permute, fewer shuffles than two broadcasts and an insert. */
static inline __m512 bcast_half_pair(uint32_t pair) {
    __m128 two = _mm_cvtph_ps(_mm_cvtsi32_si128((int)pair));
    return _mm512_permutexvar_ps(halves_index(), _mm512_castps128_ps512(two));
}

static inline __m512i bytes16(const unsigned char *p) { /* 16 bytes, zero-extended */
    return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p));
}

/* The scales of one row staged in memory: each use is then a broadcast load, which costs no
 * shuffle-port work (the port the permutes of the chunks need). For 32-value blocks, the scales
 * (and mins) of a group of up to 16 blocks, gathered and widened at once; for the k-quants,
 * those of the sub-blocks of one block. */
typedef struct {
    float s[16], m[16];
} stage;

/* k-quants: the scales of the sub-blocks of the block at b, computed as to_float computes them
 * (each a product of an f16 and a small integer: exact). */
static inline __attribute__((always_inline)) void stage_block(wtype WT, const unsigned char *b,
                                                              stage *st) {
    if (WT == WTYPE_Q2_K) { /* dl = d * (sc & 15), ml = dmin * (sc >> 4), sub-block c in lane c */
        __m512i sc = bytes16(b);
        _mm512_storeu_ps(
            st->s, _mm512_mul_ps(bcast_half(b + 80),
                                 _mm512_cvtepi32_ps(_mm512_and_si512(sc, _mm512_set1_epi32(15)))));
        _mm512_storeu_ps(
            st->m, _mm512_mul_ps(bcast_half(b + 82), _mm512_cvtepi32_ps(_mm512_srli_epi32(sc, 4))));
    } else if (WT == WTYPE_Q3_K) { /* dl = d * (scale - 32) in lane c (wtype_q3_k_scales) */
        unsigned char s12[16] = {0};
        memcpy(s12, b + 96, 12); /* the block ends 2 bytes later: no 16-byte load */
        __m512i v = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)s12));
        const __m512i lane_lo = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
        const __m512i shift_lo = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4);
        const __m512i lane_hi =
            _mm512_setr_epi32(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11);
        const __m512i shift_hi = _mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6);
        __m512i lo =
            _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi32(lane_lo, v), shift_lo),
                             _mm512_set1_epi32(15));
        __m512i hi =
            _mm512_and_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi32(lane_hi, v), shift_hi),
                             _mm512_set1_epi32(3));
        __m512i sc =
            _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), _mm512_set1_epi32(32));
        _mm512_storeu_ps(st->s, _mm512_mul_ps(bcast_half(b + 108), _mm512_cvtepi32_ps(sc)));
    } else if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) {
        /* d1 = d * sc in lane s, m1 = dmin * m in lane 8 + s. The 12 scale bytes as words
         * u0, u1, u2 (wtype_k4_scale_min): sc 0-3 = u0 & 63 (per byte), sc 4-7 = (u2 & 15) |
         * (u0 >> 2 & 0x30), m 0-3 = u1 & 63, m 4-7 = (u2 >> 4 & 15) | (u1 >> 2 & 0x30), all in
         * one 16-byte register (the load stays inside the block: qs follows) */
        __m128i v = _mm_loadu_si128((const __m128i *)(b + 4));
        __m128i a = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)),
                                                 _mm_setr_epi32(0, 0, 0, 4)),
                                  _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
        __m128i h = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0)),
                                                 _mm_setr_epi32(0, 2, 0, 2)),
                                  _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
        __m512i sm = _mm512_cvtepu8_epi32(_mm_or_si128(a, h)); /* sc 0-7, m 0-7 */
        uint32_t dm;
        memcpy(&dm, b, 4);
        _mm512_storeu_ps(st->s, _mm512_mul_ps(bcast_half_pair(dm), _mm512_cvtepi32_ps(sm)));
    } else if (WT == WTYPE_Q6_K) { /* d * sc in lane c */
        __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(b + 192)));
        _mm512_storeu_ps(st->s, _mm512_mul_ps(bcast_half(b + 208), _mm512_cvtepi32_ps(sc)));
    }
}

/* kernels_avx512_attend.c: kern_isa_ops' attend, softmax, scores and value sums. */
void kern_avx512_attend(const float *q, int hs, const float *k, const float *v, size_t stride,
                        const int *slots, int n, float *scratch, float *out);
float kern_avx512_softmax(float *s, int n);
void kern_avx512_scores(wtype kt, const float *q, size_t ldq, int nq, int hs, const void *k, int n,
                        float *s, size_t lds);
void kern_avx512_values(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                        const void *v, int n_shared, const int *const *tail, const int *n_tail,
                        float *out, size_t ldo);

#endif
