/* kernels_avx512_attend.c: attention's reductions on AVX-512 (kern_isa_ops' attend, softmax,
 * scores and values; compiled with the AVX-512 flags, run only on CPUs that have them). Each
 * computes the scalar reference's order (kernels.h, kern_attend_ref), so the bits are the
 * reference's (tests/test_kernels.c compares every ISA). A file of its own, as AVX2's
 * kernels_avx2_attend.c: it shares nothing with the matrix tiles of kernels_avx512.c but the
 * folds and loads of kernels_avx512.h. */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

#if KERN_X86
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/kernels/kernels_avx512.h"

/* kern_exp_ref in 16 lanes, operation for operation, for x <= 0 (softmax's scores minus their
 * maximum): the last step, p times 2^n, is one vscalef instead of forming 2^n's bits (a
 * conversion, an addition, a shift) and multiplying. For n in [-126, 127], which x in
 * [KERN_EXP_LO, 0] gives, 2^n is exact and both round p * 2^n once, so the bits are the same
 * (every float from -0 down to -inf was compared, all 2^31 of them). */
static inline __m512 exp16(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(KERN_EXP_LO));
    __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(KERN_EXP_L2E)),
                             _mm512_set1_ps(KERN_EXP_SHIFTER));
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(KERN_EXP_SHIFTER));
    __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(KERN_EXP_C1)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(KERN_EXP_C2)));
    __m512 p = _mm512_set1_ps(kern_exp_poly[0]);
    for (int i = 1; i < 6; i++)
        p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(kern_exp_poly[i]));
    __m512 r2 = _mm512_mul_ps(r, r);
    p = _mm512_add_ps(_mm512_mul_ps(p, r2), r);
    p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* kern_attend's softmax in 16 lanes: max (exact in any order), exp16, the canonical sum; NaN
 * throughout if a score is not finite (kern_softmax_nonfinite). The maximum runs in 4
 * registers (one was a chain of 4-cycle maxima), and whole blocks of 16 take no masks: 15-20%
 * less time per score in the cache, with exp16's vscalef. */
float kern_avx512_softmax(float *s, int n) {
    const __m512i expo = _mm512_set1_epi32(0x7f800000), unit = _mm512_set1_epi32(0x00800000);
    __m512 mx[4];
    __m512i bad[4]; /* kern_exponent_carry of every score, OR-ed */
    for (int j = 0; j < 4; j++) mx[j] = _mm512_set1_ps(-INFINITY), bad[j] = _mm512_setzero_si512();
    int i = 0;
    for (; i + 64 <= n; i += 64)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            const __m512 x = _mm512_loadu_ps(s + i + 16 * j);
            mx[j] = _mm512_max_ps(mx[j], x);
            bad[j] = _mm512_or_si512(
                bad[j], _mm512_add_epi32(_mm512_and_si512(_mm512_castps_si512(x), expo), unit));
        }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 x = _mm512_maskz_loadu_ps(m, s + i); /* lanes past n: +0, finite */
        mx[0] = _mm512_mask_max_ps(mx[0], m, mx[0], x);
        bad[0] = _mm512_or_si512(
            bad[0], _mm512_add_epi32(_mm512_and_si512(_mm512_castps_si512(x), expo), unit));
    }
    if (_mm512_movepi32_mask(
            _mm512_or_si512(_mm512_or_si512(bad[0], bad[1]), _mm512_or_si512(bad[2], bad[3]))))
        return kern_softmax_nonfinite(s, n);
    const __m512 vmx = _mm512_set1_ps(_mm512_reduce_max_ps(
        _mm512_max_ps(_mm512_max_ps(mx[0], mx[1]), _mm512_max_ps(mx[2], mx[3]))));
    /* the canonical sum as the weights are made: lane j takes weights j, j + 16, ... in order,
     * +0 past n, as avx512_sum would over them afterwards (one pass over the scores less) */
    __m512 acc = _mm512_setzero_ps();
    i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 w = exp16(_mm512_sub_ps(_mm512_loadu_ps(s + i), vmx));
        _mm512_storeu_ps(s + i, w);
        acc = _mm512_add_ps(acc, w);
    }
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 w = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, s + i), vmx));
        _mm512_mask_storeu_ps(s + i, m, w);
        acc = _mm512_add_ps(acc, _mm512_maskz_mov_ps(m, w));
    }
    return fold512(acc);
}

void kern_avx512_attend(const float *q, int hs, const float *k, const float *v, size_t stride,
                        const int *slots, int n, float *scratch, float *out) {
    const __m512 div = _mm512_set1_ps(sqrtf((float)hs));
    /* scores, 16 keys per transposed fold */
    for (int s0 = 0; s0 < n; s0 += 16) {
        int nb = n - s0 < 16 ? n - s0 : 16;
        __m512 acc[16];
        for (int j = 0; j < 16; j++) acc[j] = _mm512_setzero_ps();
        for (int j = 0; j < nb; j++) {
            size_t slot = slots ? (size_t)slots[s0 + j] : (size_t)(s0 + j);
            const float *kr = k + slot * stride;
            __m512 a = _mm512_setzero_ps();
            int c = 0;
            for (; c + KERN_LANES <= hs; c += KERN_LANES)
                a = _mm512_fmadd_ps(_mm512_loadu_ps(q + c), _mm512_loadu_ps(kr + c), a);
            if (c < hs) {
                __mmask16 m = (__mmask16)((1u << (hs - c)) - 1);
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + c),
                                    _mm512_maskz_loadu_ps(m, kr + c), a);
            }
            acc[ACC_FOR_LANE(j)] = a;
        }
        __m512 sc = _mm512_div_ps(fold16x16(acc), div);
        _mm512_mask_storeu_ps(scratch + s0, (__mmask16)((1u << nb) - 1), sc);
    }
    const __m512 vsum = _mm512_set1_ps(kern_avx512_softmax(scratch, n));
    /* values: four FMA chains per column (keys 0, 1, 2, 3 mod 4), as the reference */
    for (int c = 0; c < hs; c += KERN_LANES) {
        __mmask16 m = hs - c >= KERN_LANES ? 0xffff : (__mmask16)((1u << (hs - c)) - 1);
        __m512 o[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps()};
        int s = 0;
        if (slots) {
            for (; s + 4 <= n; s += 4)
                for (int j = 0; j < 4; j++)
                    o[j] = _mm512_fmadd_ps(
                        _mm512_set1_ps(scratch[s + j]),
                        _mm512_maskz_loadu_ps(m, v + (size_t)slots[s + j] * stride + c), o[j]);
            for (; s < n; s++)
                o[s % 4] = _mm512_fmadd_ps(
                    _mm512_set1_ps(scratch[s]),
                    _mm512_maskz_loadu_ps(m, v + (size_t)slots[s] * stride + c), o[s % 4]);
        } else {
            for (; s < n; s++)
                o[s % 4] =
                    _mm512_fmadd_ps(_mm512_set1_ps(scratch[s]),
                                    _mm512_maskz_loadu_ps(m, v + (size_t)s * stride + c), o[s % 4]);
        }
        __m512 r = _mm512_add_ps(_mm512_add_ps(o[0], o[1]), _mm512_add_ps(o[2], o[3]));
        _mm512_mask_storeu_ps(out + c, m, _mm512_div_ps(r, vsum));
    }
}

/* acc[j] += w * v for the chain j = s mod 4 known only at run time (the remainder and tails). */
static inline __attribute__((always_inline)) void chain_fma(__m512 acc[4], int j, __m512 w,
                                                            __m512 v) {
    switch (j) {
    case 0:
        acc[0] = _mm512_fmadd_ps(w, v, acc[0]);
        break;
    case 1:
        acc[1] = _mm512_fmadd_ps(w, v, acc[1]);
        break;
    case 2:
        acc[2] = _mm512_fmadd_ps(w, v, acc[2]);
        break;
    default:
        acc[3] = _mm512_fmadd_ps(w, v, acc[3]);
        break;
    }
}

/* Attention over the KV cache (kern_attend_kv). At long contexts a one-row pass streams every
 * key and value of the cache once, so these loops are built to keep memory busy: each block of
 * rows is read from memory once for all the queries of a kv head and then from the L1 cache, in
 * address order, and the rows ATTEND_PREFETCH bytes ahead are prefetched a few lines at a time
 * while a block is computed. Measured (one thread, 80 kv heads of 16384 slots of 64 floats:
 * 640 MB, more than the L3 cache; 4 queries a head; Xeon, Emerald Rapids VM, a plain read of the
 * same bytes 12.5-14.6 GB/s): the scores at 10.4 GB/s prefetching each block's 64 lines at once
 * (the prefetches waited for line fill buffers), 14.3-14.6 spread over the block's queries. An
 * f16 cache is widened exactly once per block into an f32 buffer, which every query then reads:
 * converting per query and load, the f16 scores ran at 6.3 GB/s of halves. */
#define ATTEND_PREFETCH 4096

/* How much further on than their L1 prefetches (ATTEND_PREFETCH ahead for the keys, the next
 * block for the values) the scores and value sums also prefetch the cache's rows into L2, where
 * the far prefetches are on (kern_far_prefetch_active: Zen 4, as the int8b tiles'), else 0.
 * Without it, the attention of a one-row pass at 16384 positions ran 15-40% slower from memory
 * than in the cache (bench/attend_speed.c, Qwen2.5-0.5B's shape: 4.4-4.7 ns a key and query on
 * one thread against 3.6-4.0); with it, 4.0 on one thread. One-row passes, Zen 4 (EPYC family
 * 25), 2 threads, medians of 8 alternated pairs, the time with it against without: at 16384
 * positions Qwen2.5-0.5B 0.94-0.98x with an f16 cache and 0.81-0.84x with f32, Llama-3.2-1B
 * 0.85-0.95x and 0.78-0.84x (two series); at 2048 (f16) 0.954x; at 512 (f32) 1.007x, 8 rows there
 * 1.025x (within this host's noise); 64 rows at 2048 (f32) 0.964x. 16 KB and 64 KB against 32:
 * 0.98-1.02x (6 rounds each, both cache types). Not measured on Zen 5 or a Xeon, so issued on
 * Zen 4 alone. */
#define ATTEND_FAR_PREFETCH 32768
static inline size_t attend_far(void) {
    return kern_far_prefetch_active() ? ATTEND_FAR_PREFETCH : 0;
}

/* The 64-byte lines lo .. hi - 1 from pf on into L1 and, where far is not 0, the lines far bytes
 * further on into L2 (the addresses are integers: past the cache's end a prefetch may point,
 * a C pointer may not). */
static inline __attribute__((always_inline)) void prefetch_lines(uintptr_t pf, size_t lo, size_t hi,
                                                                 size_t far) {
    for (size_t l = lo; l < hi; l++) {
        _mm_prefetch((const char *)(pf + 64 * l), _MM_HINT_T0);
        if (far) _mm_prefetch((const char *)(pf + far + 64 * l), _MM_HINT_T1);
    }
}

/* kern_attend_kv's scores of nq queries against the 16 f32 key rows at kb (ldk bytes apart):
 * 16 accumulators (one per key) take the rows' chunks of 16 values in column order, as the
 * canonical dot's lanes do, and one transposed fold turns them into the 16 scores. Each query
 * also prefetches its share of the 64-byte lines [pf, pf + pf_len). HS is the head size when it
 * is a compile-time constant (64, 128: the rows' offsets become immediates), else 0 and hs
 * gives it. */
static inline __attribute__((always_inline)) void
scores16(int HS, const float *q, size_t ldq, int nq, int hs, const float *kb, float *s, size_t lds,
         __m512 div, uintptr_t pf, size_t pf_len, size_t far) {
    if (HS) hs = HS;
    const size_t lines = pf_len / 64;
    for (int t = 0; t < nq; t++) {
        const float *qt = q + (size_t)t * ldq;
        prefetch_lines(pf, lines * t / nq, lines * (t + 1) / nq, far);
        /* kb as if new each query: else GCC keeps all 16 x hs / 16 load addresses of the block
         * in registers across queries, spilling them, instead of kb plus an offset */
        __asm__("" : "+r"(kb));
        __m512 acc[16];
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) acc[j] = _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int c = 0; c < hs; c += KERN_LANES) {
            __mmask16 m = hs - c >= KERN_LANES ? 0xffff : (__mmask16)((1u << (hs - c)) - 1);
            __m512 qc = _mm512_maskz_loadu_ps(m, qt + c);
#pragma GCC unroll 16
            for (int j = 0; j < 16; j++)
                acc[ACC_FOR_LANE(j)] = _mm512_fmadd_ps(
                    qc, _mm512_maskz_loadu_ps(m, kb + (size_t)j * hs + c), acc[ACC_FOR_LANE(j)]);
        }
        _mm512_storeu_ps(s + (size_t)t * lds, _mm512_div_ps(fold16x16(acc), div));
    }
}

/* n rows of hs halves at src widened exactly into floats at dst (vcvtph2ps, as to_float). */
static inline void widen_halves(const unsigned char *src, int n, int hs, float *dst) {
    const size_t total = (size_t)n * hs;
    size_t i = 0;
    for (; i + 16 <= total; i += 16)
        _mm512_storeu_ps(dst + i,
                         _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + 2 * i))));
    if (i < total) {
        __mmask16 m = (__mmask16)((1u << (total - i)) - 1);
        _mm512_mask_storeu_ps(dst + i, m,
                              _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, src + 2 * i)));
    }
}

/* The divisor of the scores, sqrt(hs), as a vector: or its inverse, with *mul set, when it is a
 * power of two (hs = 16, 64, 256, ...). x / d and x * (1 / d) are then the same real number,
 * rounded once, so the same bits, and a multiplication costs a fraction of a division (in
 * scores16 the division did not show: no change measured, so it keeps it). */
static inline __m512 score_divisor(int hs, int *mul) {
    const float d = sqrtf((float)hs);
    int e;
    *mul = frexpf(d, &e) == 0.5f;
    return _mm512_set1_ps(*mul ? 1.0f / d : d);
}

/* The laid layout, in which the f16 scores keep the canonical dot's 16 lanes of a key: for a
 * block of 16 keys, key j = 4r + g (r, g < 4) in group g at position r, the line (g, c, m) holds
 * in lane 4r + i value 16c + 4m + i of key 4r + g. Accumulator (t, g, m) takes in lane 4r + i the
 * products of query t's value 16c + 4m + i and key 4r + g's over c in order, which is lane
 * 4m + i of the canonical dot of that key; its fold (lane j + lane j + 8, then + 4, + 2, + 1) is
 * then (acc m0 + acc m2) + (acc m1 + acc m3), and two pairs of in-lane shuffles for all 16 keys
 * at once (laid_fold: 21 vector instructions where fold16x16 takes 45). Two ways there:
 *  - key-stationary, for 3 to 8 queries (scores_stationary): each line built in registers from
 *    the four keys' chunk c (key_lines) and multiplied by every query, whose lines (t, c, m),
 *    its values 16c + 4m .. 16c + 4m + 3 four times, were made once a call
 *    (broadcast_queries), so each multiply-add takes one as a memory operand;
 *  - through memory, for more (scores_laid): each block widened and laid out once into a
 *    buffer (lay_unit), then each query's 16 dots over it (dots_laid). */

/* Query t's lines at qb + ((t * NC + c) * 4 + m) * 16 (see above), for nq queries. */
static void broadcast_queries(int NC, const float *q, size_t ldq, int nq, float *qb) {
    for (int t = 0; t < nq; t++)
        for (int c = 0; c < NC; c++)
            for (int m = 0; m < 4; m++)
                _mm512_store_ps(qb + (size_t)((t * NC + c) * 4 + m) * 16,
                                _mm512_broadcast_f32x4(
                                    _mm_loadu_ps(q + (size_t)t * ldq + 16 * (size_t)c + 4 * m)));
}

/* Lines (g, c, mh) and (g, c, mh + 2) of a block of f16 keys (above), from k0, the chunk c of
 * key g (keys g + 4, g + 8, g + 12 are 4, 8 and 12 rows of ldk bytes further on): two keys'
 * chunks a register, one permutation of 8-byte pieces, then each half widened exactly. */
static inline __attribute__((always_inline)) void key_lines(int mh, const unsigned char *k0,
                                                            size_t ldk, __m512 *x0, __m512 *x2) {
    const __m512i a =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)k0)),
                           _mm256_loadu_si256((const __m256i *)(k0 + 4 * ldk)), 1);
    const __m512i b = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(k0 + 8 * ldk))),
        _mm256_loadu_si256((const __m256i *)(k0 + 12 * ldk)), 1);
    const __m512i at = mh ? _mm512_setr_epi64(1, 5, 9, 13, 3, 7, 11, 15)
                          : _mm512_setr_epi64(0, 4, 8, 12, 2, 6, 10, 14);
    const __m512i l = _mm512_permutex2var_epi64(a, at, b);
    *x0 = _mm512_cvtph_ps(_mm512_castsi512_si256(l));
    *x2 = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(l, 1));
}

/* The 16 scores from the four groups' sums p[g] (the fold's last two steps, above). */
static inline __attribute__((always_inline)) __m512 laid_fold(const __m512 p[4]) {
    const __m512 h0 = _mm512_add_ps(_mm512_shuffle_ps(p[0], p[1], 0x44), /* j + j+2 */
                                    _mm512_shuffle_ps(p[0], p[1], 0xEE));
    const __m512 h1 =
        _mm512_add_ps(_mm512_shuffle_ps(p[2], p[3], 0x44), _mm512_shuffle_ps(p[2], p[3], 0xEE));
    return _mm512_add_ps(_mm512_shuffle_ps(h0, h1, 0x88), /* j + j+1 */
                         _mm512_shuffle_ps(h0, h1, 0xDD));
}

/* A block's lines (above) widened exactly into kl for scores_laid, line (g, c, m) at
 * kl + ((g * NC + c) * 4 + m) * 16 (zeros for keys past nb). lay_unit writes chunk c of group g:
 * its 4 keys' 16 values widened, two keys' quarters interleaved by one permutation, 32 bytes a
 * store (16-byte stores, twice as many, and a second level of shuffles to store whole lines
 * were both slower). NC: the chunks of a row (hs / 16). */
static inline __attribute__((always_inline)) void
lay_unit(int NC, int g, int c, const unsigned char *kb, size_t ldk, int nb, float *kl) {
    __m512 x[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        const int j = 4 * r + g;
        x[r] = j < nb ? _mm512_cvtph_ps(_mm256_loadu_si256(
                            (const __m256i *)(kb + (size_t)j * ldk + 32 * (size_t)c)))
                      : _mm512_setzero_ps();
    }
    float *line = kl + (size_t)(g * NC + c) * 64;
    const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i hi =
        _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
#pragma GCC unroll 2
    for (int r = 0; r < 4; r += 2) {
        const __m512 y = _mm512_permutex2var_ps(x[r], lo, x[r + 1]); /* quarters 0, 1 */
        const __m512 z = _mm512_permutex2var_ps(x[r], hi, x[r + 1]); /* quarters 2, 3 */
        _mm256_store_ps(line + 4 * r, _mm512_castps512_ps256(y));
        _mm256_store_ps(line + 16 + 4 * r, _mm512_extractf32x8_ps(y, 1));
        _mm256_store_ps(line + 32 + 4 * r, _mm512_castps512_ps256(z));
        _mm256_store_ps(line + 48 + 4 * r, _mm512_extractf32x8_ps(z, 1));
    }
}

/* The 16 canonical dots of query q (NC * 16 floats) with a block of keys laid out by lay_unit:
 * accumulator (g, m) as (t, g, m) above, its sums folded by laid_fold; lane 4r + g of the
 * result is key 4r + g. */
static inline __attribute__((always_inline)) __m512 dots_laid(int NC, const float *q,
                                                              const float *kl) {
    __m512 acc[4][4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++)
#pragma GCC unroll 4
        for (int m = 0; m < 4; m++) acc[g][m] = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int c = 0; c < NC; c++)
#pragma GCC unroll 4
        for (int m = 0; m < 4; m++) {
            const __m512 qb = _mm512_broadcast_f32x4(_mm_loadu_ps(q + 16 * c + 4 * m));
#pragma GCC unroll 4
            for (int g = 0; g < 4; g++)
                acc[g][m] = _mm512_fmadd_ps(
                    qb, _mm512_load_ps(kl + (size_t)(g * NC + c) * 64 + 16 * m), acc[g][m]);
        }
    __m512 p[4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) /* lanes j + j+8 (m, m + 2), then j + j+4 (m = 0, 1) */
        p[g] =
            _mm512_add_ps(_mm512_add_ps(acc[g][0], acc[g][2]), _mm512_add_ps(acc[g][1], acc[g][3]));
    return laid_fold(p);
}

/* Group g's sums for Q queries over lines m = mh and mh + 2, made from the keys of group g at
 * kg: sum[t] = acc m + acc m + 2. */
static inline __attribute__((always_inline)) void stationary_half(int NC, int Q, const float *qb,
                                                                  const unsigned char *kg,
                                                                  size_t ldk, int mh,
                                                                  __m512 sum[8]) {
    /* as if new each half: else GCC keeps the block's addresses in registers, spilling */
    __asm__("" : "+r"(qb), "+r"(kg));
    __m512 acc[8][2];
#pragma GCC unroll 8
    for (int t = 0; t < Q; t++) acc[t][0] = acc[t][1] = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int c = 0; c < NC; c++) {
        __m512 x0, x2;
        key_lines(mh, kg + 32 * (size_t)c, ldk, &x0, &x2);
#pragma GCC unroll 8
        for (int t = 0; t < Q; t++) {
            const float *l = qb + (size_t)((t * NC + c) * 4 + mh) * 16;
            acc[t][0] = _mm512_fmadd_ps(_mm512_load_ps(l), x0, acc[t][0]);
            acc[t][1] = _mm512_fmadd_ps(_mm512_load_ps(l + 32), x2, acc[t][1]);
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < Q; t++) sum[t] = _mm512_add_ps(acc[t][0], acc[t][1]);
}

/* The scores of Q (1-8) queries, lines at qb, against the 16 f16 keys at kb (rows ldk bytes
 * apart, NC chunks of 16 values): s[t * lds + j] for key j, times or over div (mul). The
 * block's lines are prefetched (pf_lines lines from pf on) over its 8 halves. */
static inline __attribute__((always_inline)) void
scores_stationary(int NC, int Q, const float *qb, const unsigned char *kb, size_t ldk, float *s,
                  size_t lds, __m512 div, int mul, uintptr_t pf, size_t pf_lines, size_t far) {
    __m512 p[8][4];
#pragma GCC unroll 1
    for (int g = 0; g < 4; g++) {
        __m512 kept[8], sum[8];
        const unsigned char *kg = kb + (size_t)g * ldk;
        prefetch_lines(pf, pf_lines * (2 * g) / 8, pf_lines * (2 * g + 1) / 8, far);
        stationary_half(NC, Q, qb, kg, ldk, 0, kept);
        prefetch_lines(pf, pf_lines * (2 * g + 1) / 8, pf_lines * (2 * g + 2) / 8, far);
        stationary_half(NC, Q, qb, kg, ldk, 1, sum);
#pragma GCC unroll 8
        for (int t = 0; t < Q; t++) p[t][g] = _mm512_add_ps(kept[t], sum[t]);
    }
#pragma GCC unroll 8
    for (int t = 0; t < Q; t++) {
        const __m512 r = laid_fold(p[t]);
        _mm512_storeu_ps(s + (size_t)t * lds, mul ? _mm512_mul_ps(r, div) : _mm512_div_ps(r, div));
    }
}

/* The i-th of `blocks` blocks of keys that the scores read, in two streams: the first half's and
 * the second half's blocks in turn (a key's score is its own, so the order changes no bit), the
 * odd one last. Against one stream, one-row passes of Qwen2.5-0.5B at 16384 positions took
 * 0.98x the time with an f16 cache and with f32, Llama-3.2-1B 0.99x with f16 and 1.00x with f32
 * (medians of 9-15 alternated pairs, Xeon Emerald Rapids, 2 threads); four streams: 0.99x of
 * two. */
static inline int stream_block(int i, int blocks) {
    const int half = blocks / 2;
    return i < 2 * half ? (i % 2 ? half + i / 2 : i / 2) : i;
}

/* kern_attend_kv's scores over f16 keys of NC whole chunks for many queries: each block of 16
 * keys widened and laid out once (lay_unit), then each query's 16 scores (dots_laid). Fewer
 * vector instructions per score than scores16's over widened rows; the layout costs its
 * permutations and stores per key, so it pays for many queries a kv head and a head size of 64
 * (kern_avx512_scores says when; bench/attend_speed.c, 2026-11-29-context-attention-2.md). */
static inline __attribute__((always_inline)) void scores_laid(int NC, const float *q, size_t ldq,
                                                              int nq, const void *k, int n,
                                                              float *s, size_t lds) {
    const size_t ldk = (size_t)NC * 32;
    int mul;
    const __m512 div = score_divisor(NC * 16, &mul);
    const size_t far = attend_far();
    KERN_SCRATCH(kl, (size_t)NC * 256);
    const int blocks = (n + 15) / 16;
    for (int i = 0; i < blocks; i++) {
        const int s0 = 16 * stream_block(i, blocks), nb = n - s0 < 16 ? n - s0 : 16;
        const unsigned char *kb = (const unsigned char *)k + (size_t)s0 * ldk;
        const uintptr_t pf = (uintptr_t)kb + ATTEND_PREFETCH;
        const size_t lines = 16 * ldk / 64;
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++)
#pragma GCC unroll 8
            for (int c = 0; c < NC; c++) lay_unit(NC, g, c, kb, ldk, nb, kl);
        for (int t = 0; t < nq; t++) {
            prefetch_lines(pf, lines * t / nq, lines * (t + 1) / nq, far);
            __asm__("" : "+r"(kl)); /* as kb in scores16 */
            __m512 r = dots_laid(NC, q + (size_t)t * ldq, kl);
            r = mul ? _mm512_mul_ps(r, div) : _mm512_div_ps(r, div);
            if (nb == 16)
                _mm512_storeu_ps(s + (size_t)t * lds + s0, r);
            else
                _mm512_mask_storeu_ps(s + (size_t)t * lds + s0, (__mmask16)((1u << nb) - 1), r);
        }
    }
    KERN_SCRATCH_END(kl);
}

/* kern_attend_kv's scores over f16 keys of NC whole chunks (head size 16 NC) for Q queries, 3 to
 * 8 (16 accumulators and 8 kept sums), block by block of 16 keys (scores_stationary); the last
 * partial block copied first into 16 rows of zeros (the rows past the cache are never read). */
static inline __attribute__((always_inline)) void scores_lines(int NC, int Q, const float *q,
                                                               size_t ldq, const void *k, int n,
                                                               float *s, size_t lds) {
    const size_t ldk = (size_t)NC * 32, far = attend_far(), lines = 16 * ldk / 64;
    int mul;
    const __m512 div = score_divisor(NC * 16, &mul);
    KERN_SCRATCH(qb, (size_t)Q * NC * 64);
    KERN_SCRATCH(last, 16 * ldk / sizeof(float));
    broadcast_queries(NC, q, ldq, Q, qb);
    const int blocks = (n + 15) / 16;
    for (int i = 0; i < blocks; i++) {
        const int s0 = 16 * stream_block(i, blocks), nb = n - s0 < 16 ? n - s0 : 16;
        const unsigned char *kb = (const unsigned char *)k + (size_t)s0 * ldk;
        const uintptr_t pf = (uintptr_t)kb + ATTEND_PREFETCH;
        if (nb == 16) {
            scores_stationary(NC, Q, qb, kb, ldk, s + s0, lds, div, mul, pf, lines, far);
            continue;
        }
        float sc[8 * 16] __attribute__((aligned(64))); /* the rows past n as zeros */
        memcpy(last, kb, (size_t)nb * ldk);
        memset((unsigned char *)last + (size_t)nb * ldk, 0, (16 - (size_t)nb) * ldk);
        scores_stationary(NC, Q, qb, (const unsigned char *)last, ldk, sc, 16, div, mul, pf, lines,
                          far);
        for (int t = 0; t < Q; t++)
            memcpy(s + (size_t)t * lds + s0, sc + 16 * t, sizeof(float) * nb);
    }
    KERN_SCRATCH_END(last);
    KERN_SCRATCH_END(qb);
}

/* scores_lines with NC and Q constants. */
static void stationary_scores(int hs, const float *q, size_t ldq, int nq, const void *k, int n,
                              float *s, size_t lds) {
#define LINES(QN)                                                                                  \
    if (hs == 64)                                                                                  \
        scores_lines(4, QN, q, ldq, k, n, s, lds);                                                 \
    else                                                                                           \
        scores_lines(8, QN, q, ldq, k, n, s, lds);                                                 \
    return
    switch (nq) {
    case 3:
        LINES(3);
    case 4:
        LINES(4);
    case 5:
        LINES(5);
    case 6:
        LINES(6);
    case 7:
        LINES(7);
    default:
        LINES(8);
    }
#undef LINES
}

/* kern_attend_kv's scores, 16 keys at a time: f16 keys of head size 64 or 128 and 3 to 8 queries
 * key-stationary (stationary_scores), of head size 64 and more queries through the laid-out
 * buffer (scores_laid), the rest over rows (scores16; an f16 block first widened into kbuf).
 * From bench/attend_speed.c on Zen 4 (one thread, the scores' ns a key and query, 3 runs each,
 * docs/measurements/2026-12-03-zen4-stationary-scores.md), key-stationary against what ran
 * before (scores_laid from 5 queries at head size 64, else scores16): 0.80-0.84x the time at 7
 * queries and head size 64, 0.81-0.87x at 8, 0.61-0.92x at 4, 0.87-1.00x at 3, 0.72-0.84x at 6
 * and head size 128; at 1 and 2 queries within the noise (0.78-1.16x); at 28 and 64 queries,
 * 1.12-1.22x (each group of 8 widens the block again; made once into a buffer for all the
 * groups, 1.01-1.25x), and 0.99-1.35x at 12 queries of head size 128. f32 rows need no
 * widening, and scores16 over them was as fast or faster: key-stationary took 0.89-1.37x the
 * time in the cache (4 and 7 queries; 1.20-1.37x in 5 runs of 6), the whole attention from
 * memory at 2 threads 0.94-1.09x. */
void kern_avx512_scores(wtype kt, const float *q, size_t ldq, int nq, int hs, const void *k, int n,
                        float *s, size_t lds) {
    if (kt == WTYPE_F16 && (hs == 64 || hs == 128) && nq >= 3 && nq <= 8) {
        stationary_scores(hs, q, ldq, nq, k, n, s, lds);
        return;
    }
    if (kt == WTYPE_F16 && hs == 64 && nq > 8) {
        scores_laid(4, q, ldq, nq, k, n, s, lds);
        return;
    }
    const size_t ldk = (size_t)hs * (kt == WTYPE_F16 ? 2 : 4);
    const __m512 div = _mm512_set1_ps(sqrtf((float)hs));
    const size_t far = attend_far();
    KERN_SCRATCH(kbuf, (size_t)16 * hs);
    const int blocks = n / 16; /* the whole ones, in two streams */
    for (int i = 0; i < blocks; i++) {
        const int s0 = 16 * stream_block(i, blocks);
        const unsigned char *kb = (const unsigned char *)k + (size_t)s0 * ldk;
        const float *kf = (const float *)kb;
        if (kt == WTYPE_F16) widen_halves(kb, 16, hs, kbuf), kf = kbuf;
        const uintptr_t pf = (uintptr_t)kb + ATTEND_PREFETCH;
        if (hs == 64)
            scores16(64, q, ldq, nq, hs, kf, s + s0, lds, div, pf, 16 * ldk, far);
        else if (hs == 128)
            scores16(128, q, ldq, nq, hs, kf, s + s0, lds, div, pf, 16 * ldk, far);
        else
            scores16(0, q, ldq, nq, hs, kf, s + s0, lds, div, pf, 16 * ldk, far);
    }
    const int s0 = 16 * blocks;
    if (s0 < n) { /* the last 1-15 keys: accumulators past them stay zero, their lanes unused */
        const int nb = n - s0;
        const unsigned char *kb = (const unsigned char *)k + (size_t)s0 * ldk;
        const float *kf = (const float *)kb;
        if (kt == WTYPE_F16) widen_halves(kb, nb, hs, kbuf), kf = kbuf;
        for (int t = 0; t < nq; t++) {
            const float *qt = q + (size_t)t * ldq;
            __m512 acc[16];
            for (int j = 0; j < 16; j++) acc[j] = _mm512_setzero_ps();
            for (int j = 0; j < nb; j++) {
                __m512 a = _mm512_setzero_ps();
                for (int c = 0; c < hs; c += KERN_LANES) {
                    __mmask16 m = hs - c >= KERN_LANES ? 0xffff : (__mmask16)((1u << (hs - c)) - 1);
                    a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, qt + c),
                                        _mm512_maskz_loadu_ps(m, kf + (size_t)j * hs + c), a);
                }
                acc[ACC_FOR_LANE(j)] = a;
            }
            _mm512_mask_storeu_ps(s + (size_t)t * lds + s0, (__mmask16)((1u << nb) - 1),
                                  _mm512_div_ps(fold16x16(acc), div));
        }
    }
    KERN_SCRATCH_END(kbuf);
}

/* The value sums of one query (weights e, running sums at acc: [chunk][chain][16]) over f32
 * value rows [s0, s1) of a block (rows hs floats apart), NC chunks of 16 columns from col0
 * (masks mk): each row's chunks in address order, chain s mod 4 of each chunk taking its
 * multiply-add (the reference's order). Each step of 4 rows also prefetches pf_lines lines
 * from pf on. NC is a constant at every call (1-4: at most 16 accumulators); so is HS, the head
 * size when it is one of 64 and 128 (whole chunks, rows at immediate offsets), else 0. */
static inline __attribute__((always_inline)) void
values_run(int NC, int HS, const float *e, const float *v, int hs, int s0, int s1, int col0,
           const __mmask16 *mk, float *acc, uintptr_t pf, int pf_lines, size_t far) {
    if (HS) hs = HS;
    __m512 a[4][4];
#pragma GCC unroll 4
    for (int c = 0; c < NC; c++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) a[c][j] = _mm512_loadu_ps(acc + (c * 4 + j) * KERN_LANES);
    const float *row = v + (size_t)s0 * hs + col0;
    int s = s0;
    for (; s + 4 <= s1; s += 4, row += 4 * (size_t)hs) {
        prefetch_lines(pf, 0, (size_t)pf_lines, far);
        pf += 64 * (size_t)pf_lines;
        /* row as if new each step (as kb in scores16): its offsets stay immediates */
        __asm__("" : "+r"(row));
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            const __m512 w = _mm512_set1_ps(e[s + j]);
#pragma GCC unroll 4
            for (int c = 0; c < NC; c++) {
                const float *p = row + (size_t)j * hs + c * KERN_LANES;
                a[c][j] = _mm512_fmadd_ps(
                    w, HS ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mk[c], p), a[c][j]);
            }
        }
    }
    for (; s < s1; s++, row += hs) {
        const __m512 w = _mm512_set1_ps(e[s]);
#pragma GCC unroll 4
        for (int c = 0; c < NC; c++)
            chain_fma(a[c], s % 4, w, _mm512_maskz_loadu_ps(mk[c], row + c * KERN_LANES));
    }
#pragma GCC unroll 4
    for (int c = 0; c < NC; c++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) _mm512_storeu_ps(acc + (c * 4 + j) * KERN_LANES, a[c][j]);
}

/* values_run for two queries at once (weights e0, e1, running sums at acc0, acc1) over two
 * chunks of 16 columns from col0 of rows HS floats apart (HS 64 or 128: whole chunks): each
 * chunk of a row is loaded once for both queries. 16 accumulators (query x chunk x chain), each
 * chain in slot order as in values_run. values_run's 4 chunks of one query load each chunk for
 * one multiply-add and its weight for 4, 5 loads per 4 multiply-adds, and that loop ran at the
 * load ports' rate; here 4 per 4. With the prefetch shares of avx512_values, the value sums took
 * 10-16% less time in the cache (f16 and f32, head sizes 64 and 128). */
static inline __attribute__((always_inline)) void
values_run2(int HS, const float *e0, const float *e1, const float *v, int s0, int s1, int col0,
            float *acc0, float *acc1, uintptr_t pf, int pf_lines, size_t far) {
    __m512 a[2][2][4];
#pragma GCC unroll 2
    for (int c = 0; c < 2; c++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            a[0][c][j] = _mm512_loadu_ps(acc0 + (c * 4 + j) * KERN_LANES);
            a[1][c][j] = _mm512_loadu_ps(acc1 + (c * 4 + j) * KERN_LANES);
        }
    const float *row = v + (size_t)s0 * HS + col0;
    int s = s0;
    for (; s + 4 <= s1; s += 4, row += 4 * (size_t)HS) {
        prefetch_lines(pf, 0, (size_t)pf_lines, far);
        pf += 64 * (size_t)pf_lines;
        __asm__("" : "+r"(row));
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            const __m512 w0 = _mm512_set1_ps(e0[s + j]), w1 = _mm512_set1_ps(e1[s + j]);
#pragma GCC unroll 2
            for (int c = 0; c < 2; c++) {
                __m512 x = _mm512_loadu_ps(row + (size_t)j * HS + c * KERN_LANES);
                __asm__("" : "+v"(x)); /* one load for both queries, not one folded into each */
                a[0][c][j] = _mm512_fmadd_ps(w0, x, a[0][c][j]);
                a[1][c][j] = _mm512_fmadd_ps(w1, x, a[1][c][j]);
            }
        }
    }
    for (; s < s1; s++, row += HS) {
        const __m512 w0 = _mm512_set1_ps(e0[s]), w1 = _mm512_set1_ps(e1[s]);
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++) {
            const __m512 x = _mm512_loadu_ps(row + c * KERN_LANES);
            chain_fma(a[0][c], s % 4, w0, x);
            chain_fma(a[1][c], s % 4, w1, x);
        }
    }
#pragma GCC unroll 2
    for (int c = 0; c < 2; c++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            _mm512_storeu_ps(acc0 + (c * 4 + j) * KERN_LANES, a[0][c][j]);
            _mm512_storeu_ps(acc1 + (c * 4 + j) * KERN_LANES, a[1][c][j]);
        }
}

/* kern_values_swept's sweep over f16 rows (kernels_isa.h): Q queries, rows s, s + 4, ... below
 * s1, columns col0 .. col0 + 31 (two chunks); query t's weights at e + t * KERN_SWEEP_EB
 * (indexed by row), its running sums of the chain at acc + t * ldacc + c * 4 * KERN_LANES for
 * chunk c. A row's two chunks are loaded and widened once for all Q queries (16 accumulators
 * at most): one load per Q multiply-adds, where values_run2 over a block widened into memory
 * takes one per 2, and the widening's stores besides. */
static inline __attribute__((always_inline)) uintptr_t
values_sweep_f16(int Q, const float *e, const unsigned char *v, size_t ldv, int s, int s1, int col0,
                 float *acc, size_t ldacc, uintptr_t pf, int pf_lines, size_t far) {
    __m512 a[KERN_SWEEP_QMAX][2];
#pragma GCC unroll 8
    for (int t = 0; t < Q; t++)
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++)
            a[t][c] = _mm512_loadu_ps(acc + (size_t)t * ldacc + (size_t)c * 4 * KERN_LANES);
    for (; s < s1; s += 4) {
        prefetch_lines(pf, 0, (size_t)pf_lines, far);
        pf += 64 * (size_t)pf_lines;
        const unsigned char *row = v + (size_t)s * ldv + 2 * (size_t)col0;
        const __m512 x0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)row)),
                     x1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 32)));
        /* each multiply-add takes its weight as a broadcast operand ({1to16}), one load each,
         * where one vbroadcastss served both and took a vector unit's slot: the value sums in
         * the cache (attend_speed 2048 f16, one thread, Zen 4) took 0.82-0.89x the time at 4,
         * 7 and 8 queries, head sizes 64 and 128; not measured on Zen 5 or a Xeon. The asm
         * keeps gcc from merging the two loads back into one broadcast. values_run2's f32 rows
         * keep theirs: 1.08x there. */
#pragma GCC unroll 8
        for (int t = 0; t < Q; t++) {
            const float *w = e + t * KERN_SWEEP_EB + s;
            a[t][0] = _mm512_fmadd_ps(_mm512_set1_ps(*w), x0, a[t][0]);
            __asm__("" : "+r"(w));
            a[t][1] = _mm512_fmadd_ps(_mm512_set1_ps(*w), x1, a[t][1]);
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < Q; t++)
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++)
            _mm512_storeu_ps(acc + (size_t)t * ldacc + (size_t)c * 4 * KERN_LANES, a[t][c]);
    return pf;
}

/* The sweep for kern_values_swept: values_sweep_f16 with Q (1..KERN_SWEEP_QMAX) a constant. */
static uintptr_t avx512_sweep(wtype vt, int Q, const float *e, const unsigned char *v, size_t ldv,
                              int s, int s1, int col0, float *acc, size_t ldacc, uintptr_t pf,
                              int pf_lines) {
    (void)vt; /* f16 only */
    const size_t far = attend_far();
#define SWEEP(Q) values_sweep_f16(Q, e, v, ldv, s, s1, col0, acc, ldacc, pf, pf_lines, far)
    switch (Q) {
    case 1:
        return SWEEP(1);
    case 2:
        return SWEEP(2);
    case 3:
        return SWEEP(3);
    case 4:
        return SWEEP(4);
    case 5:
        return SWEEP(5);
    case 6:
        return SWEEP(6);
    case 7:
        return SWEEP(7);
    default:
        return SWEEP(8);
    }
#undef SWEEP
}

/* kern_attend_kv's value sums: the shared value rows a block at a time (kern_values_block: 16 KB
 * of f32 rows, which stay in the L1 cache; an f16 block is widened into vbuf first), and in a
 * block, query by query, each 64 columns of the rows in address order (values_run). The
 * chains' running sums wait in acc between blocks: [query][16 columns][chain]. While a block is
 * summed, its successor is prefetched a few lines with each step. Read column by column over
 * the whole cache, a head's values came from memory once per 16 columns and block of 4
 * queries, and the one-row pass at 16384 positions took 2-4x its bound. */
void kern_avx512_values(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                        const void *v, int n_shared, const int *const *tail, const int *n_tail,
                        float *out, size_t ldo) {
    const size_t ldv = (size_t)hs * (vt == WTYPE_F16 ? 2 : 4), far = attend_far();
    const int nc = (hs + KERN_LANES - 1) / KERN_LANES, SB = kern_values_block(hs, WTYPE_F32);
    const size_t acc_q = (size_t)nc * 4 * KERN_LANES; /* floats of one query's sums */
    __mmask16 mk[nc];
    for (int c = 0; c < nc; c++)
        mk[c] = hs - c * KERN_LANES >= KERN_LANES ? 0xffff
                                                  : (__mmask16)((1u << (hs - c * KERN_LANES)) - 1);
    KERN_SCRATCH(acc, (size_t)nq * acc_q);
    KERN_SCRATCH(vbuf, vt == WTYPE_F16 ? (size_t)SB * hs : 1);
    memset(acc, 0, sizeof(float) * (size_t)nq * acc_q);
    /* values_run2 over pairs of queries for head sizes 64 and 128, values_run for the rest */
    const int pairs = hs == 64 || hs == 128 ? nq / 2 : 0, groups = (nc + 3) / 4;
    const int runs = pairs * (nc / 2) + (nq - 2 * pairs) * groups; /* calls per block */
    /* each run prefetches its share of the next block's lines, run_lines from where the last
     * left off, pf_lines with each step of 4 rows (a burst of them at once waited for the line
     * fill buffers; a division or two per run to share the lines exactly cost 5-7% of the value
     * sums in the cache) */
    const int lines = (int)((size_t)SB * ldv / 64);
    const int run_lines = runs > 0 ? (lines + runs - 1) / runs : 0;
    const int pf_lines = (run_lines + SB / 4 - 1) / (SB / 4);
    /* An f16 cache by sweeps (kern_values_swept, 32 columns, up to 8 queries: 16 accumulators),
     * for 4 or more queries. Measured against the widened block (bench/attend_speed.c, Zen 5,
     * one thread, in the cache, the value sums' time; 2026-11-30-attention-values-zen5.md):
     * 4 to 8 queries 0.61-0.69x (head sizes 64 and 128), 3 the same, 2 queries 1.1x; f32 rows
     * (no widening to save) mixed, 0.9x at 7 queries and 1.4x at 4, so f32 keeps this loop.
     * Groups of at most 7 ran 8 queries as 4 + 4, at 1.1x. */
    const int swept = vt == WTYPE_F16 && nq >= 4 && kern_sweep_fits(hs, vt, 32);
    if (swept)
        kern_values_swept(avx512_sweep, KERN_SWEEP_QMAX, 32, KERN_LANES, vt, e, lde, nq, hs, v,
                          n_shared, acc);
    for (int s0 = 0; !swept && s0 < n_shared; s0 += SB) {
        const int s1 = n_shared - s0 < SB ? n_shared : s0 + SB;
        const unsigned char *vb = (const unsigned char *)v + (size_t)s0 * ldv;
        const float *vf = (const float *)v; /* rows indexed from 0, as s0 and s1 are */
        if (vt == WTYPE_F16) widen_halves(vb, s1 - s0, hs, vbuf), vf = vbuf - (size_t)s0 * hs;
        uintptr_t pf = (uintptr_t)vb + (size_t)SB * ldv; /* the next block */
        for (int t = 0; t < 2 * pairs; t += 2)
            for (int c = 0; c < nc; c += 2, pf += 64 * (size_t)run_lines) {
                float *a = acc + (size_t)t * acc_q + (size_t)c * 4 * KERN_LANES;
                const float *e0 = e + (size_t)t * lde, *e1 = e0 + lde;
                if (hs == 64)
                    values_run2(64, e0, e1, vf, s0, s1, 16 * c, a, a + acc_q, pf, pf_lines, far);
                else
                    values_run2(128, e0, e1, vf, s0, s1, 16 * c, a, a + acc_q, pf, pf_lines, far);
            }
        for (int t = 2 * pairs; t < nq; t++)
            for (int g = 0; g < groups; g++, pf += 64 * (size_t)run_lines) {
                const float *et = e + (size_t)t * lde;
                float *a = acc + (size_t)t * acc_q + (size_t)g * 16 * KERN_LANES;
                const int left = nc - 4 * g, col0 = 64 * g;
                const __mmask16 *m = mk + 4 * g;
                if (hs == 64)
                    values_run(4, 64, et, vf, hs, s0, s1, col0, m, a, pf, pf_lines, far);
                else if (hs == 128)
                    values_run(4, 128, et, vf, hs, s0, s1, col0, m, a, pf, pf_lines, far);
                else if (left >= 4)
                    values_run(4, 0, et, vf, hs, s0, s1, col0, m, a, pf, pf_lines, far);
                else if (left == 3)
                    values_run(3, 0, et, vf, hs, s0, s1, col0, m, a, pf, pf_lines, far);
                else if (left == 2)
                    values_run(2, 0, et, vf, hs, s0, s1, col0, m, a, pf, pf_lines, far);
                else
                    values_run(1, 0, et, vf, hs, s0, s1, col0, m, a, pf, pf_lines, far);
            }
    }
    for (int t = 0; t < nq; t++) { /* the tails, then (c0 + c1) + (c2 + c3) over the sum */
        const float *et = e + (size_t)t * lde;
        for (int c = 0; c < nc; c++) {
            const int col = c * KERN_LANES;
            const float *at = acc + (size_t)t * acc_q + (size_t)c * 4 * KERN_LANES;
            __m512 a[4];
            for (int j = 0; j < 4; j++) a[j] = _mm512_loadu_ps(at + j * KERN_LANES);
            for (int j = 0; j < n_tail[t]; j++) {
                int st = n_shared + j;
                const unsigned char *r = (const unsigned char *)v + (size_t)tail[t][j] * ldv;
                __m512 vs = vt == WTYPE_F16 ? load_w16(WTYPE_F16, r, col, mk[c])
                                            : load_w16(WTYPE_F32, r, col, mk[c]);
                chain_fma(a, st % 4, _mm512_set1_ps(et[st]), vs);
            }
            __m512 r = _mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3]));
            _mm512_mask_storeu_ps(out + (size_t)t * ldo + col, mk[c],
                                  _mm512_div_ps(r, _mm512_set1_ps(sum[t])));
        }
    }
    KERN_SCRATCH_END(vbuf);
    KERN_SCRATCH_END(acc);
}

#endif
