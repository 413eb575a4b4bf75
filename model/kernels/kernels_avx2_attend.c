/* kernels_avx2_attend.c: attention's reductions on AVX2 (kern_isa_ops' sum, softmax, scores and
 * values; compiled with the AVX2 flags, run only on CPUs that have them). Each is the scalar
 * reference's arithmetic in 8 lanes, operation for operation, so the bits are the reference's
 * (tests/test_kernels.c compares every ISA): the canonical sum's and dot's 16 lanes as two
 * registers, the fixed exp polynomial of kern_exp_ref lane by lane, and the value sums' four
 * fused multiply-add chains per column (keys s = 0, 1, 2, 3 mod 4, in slot order) with a column
 * in each lane. An f16 cache's rows are widened exactly (F16C) where they are read.
 * Before these existed AVX2 ran the scalar reference: at long contexts the value sums, one
 * column at a time, cost as much as the scores. */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

#if KERN_X86
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/kernels/kernels_avx2.h"

float kern_avx2_sum(const float *a, int n) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    int k = 0;
    for (; k + KERN_LANES <= n; k += KERN_LANES) {
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(a + k));
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(a + k + 8));
    }
    if (k < n) { /* lanes past n add +0, as the reference does */
        int left = n - k, nl = left < 8 ? left : 8;
        lo = _mm256_add_ps(lo, maskload8(a + k, nl));
        hi = _mm256_add_ps(hi, maskload8(a + k + 8, left - nl));
    }
    return fold256x2(lo, hi);
}

static inline __m256 exp8(__m256 x) { /* kern_exp_ref in 8 lanes, operation for operation */
    x = _mm256_max_ps(x, _mm256_set1_ps(KERN_EXP_LO));
    __m256 t = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(KERN_EXP_L2E)),
                             _mm256_set1_ps(KERN_EXP_SHIFTER));
    __m256 n = _mm256_sub_ps(t, _mm256_set1_ps(KERN_EXP_SHIFTER));
    __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(KERN_EXP_C1)));
    r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(KERN_EXP_C2)));
    __m256 p = _mm256_set1_ps(kern_exp_poly[0]);
    for (int i = 1; i < 6; i++)
        p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kern_exp_poly[i]));
    __m256 r2 = _mm256_mul_ps(r, r);
    p = _mm256_add_ps(_mm256_mul_ps(p, r2), r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
    __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* kern_attend's softmax: max (exact in any order), exp8, the canonical sum; NaN throughout if a
 * score is not finite (kern_softmax_nonfinite). The maximum in 4 registers (one chain of maxima
 * waited on each other's latency), and the canonical sum taken as the weights are made, lane j
 * of lo and hi adding weights j, j + 16, ... in order, then the last 1-15 as kern_avx2_sum adds
 * them: the same bits as summing afterwards, with one pass over the scores less. */
float kern_avx2_softmax(float *s, int n) {
    const __m256i expo = _mm256_set1_epi32(0x7f800000), unit = _mm256_set1_epi32(0x00800000);
    __m256 mx[4];
    __m256i bad[4]; /* kern_exponent_carry of every score, OR-ed */
    for (int j = 0; j < 4; j++) mx[j] = _mm256_set1_ps(-INFINITY), bad[j] = _mm256_setzero_si256();
    int i = 0;
    for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
            const __m256 x = _mm256_loadu_ps(s + i + 8 * j);
            mx[j] = _mm256_max_ps(mx[j], x);
            bad[j] = _mm256_or_si256(
                bad[j], _mm256_add_epi32(_mm256_and_si256(_mm256_castps_si256(x), expo), unit));
        }
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(s + i);
        mx[0] = _mm256_max_ps(mx[0], x);
        bad[0] = _mm256_or_si256(
            bad[0], _mm256_add_epi32(_mm256_and_si256(_mm256_castps_si256(x), expo), unit));
    }
    float m8[8];
    _mm256_storeu_ps(m8, _mm256_max_ps(_mm256_max_ps(mx[0], mx[1]), _mm256_max_ps(mx[2], mx[3])));
    float mxs = m8[0];
    for (int j = 1; j < 8; j++) mxs = m8[j] > mxs ? m8[j] : mxs;
    const __m256i b = _mm256_or_si256(_mm256_or_si256(bad[0], bad[1]), _mm256_or_si256(bad[2], bad[3]));
    uint32_t any = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(b)) ? 0x80000000u : 0;
    for (; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, s + i, 4);
        any |= kern_exponent_carry(bits);
        mxs = s[i] > mxs ? s[i] : mxs;
    }
    if (any & 0x80000000u) return kern_softmax_nonfinite(s, n);
    const __m256 vmx = _mm256_set1_ps(mxs);
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    for (i = 0; i + 16 <= n; i += 16) {
        const __m256 w0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + i), vmx)),
                     w1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(s + i + 8), vmx));
        _mm256_storeu_ps(s + i, w0);
        _mm256_storeu_ps(s + i + 8, w1);
        lo = _mm256_add_ps(lo, w0);
        hi = _mm256_add_ps(hi, w1);
    }
    const int k = i; /* the last 1-15 weights: made, then summed as kern_avx2_sum's tail */
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(s + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(s + i), vmx)));
    if (i < n) {
        float t[8];
        _mm256_storeu_ps(t, exp8(_mm256_sub_ps(maskload8(s + i, n - i), vmx)));
        memcpy(s + i, t, sizeof(float) * (size_t)(n - i));
    }
    if (k < n) {
        const int left = n - k, nl = left < 8 ? left : 8;
        lo = _mm256_add_ps(lo, maskload8(s + k, nl));
        hi = _mm256_add_ps(hi, maskload8(s + k + 8, left - nl));
    }
    return fold256x2(lo, hi);
}

/* acc[j] += w * v for the chain j = s mod 4 known only at run time (remainders and tails). */
static inline __attribute__((always_inline)) void chain_fma(__m256 acc[4], int j, __m256 w,
                                                            __m256 v) {
    switch (j) {
    case 0:
        acc[0] = _mm256_fmadd_ps(w, v, acc[0]);
        break;
    case 1:
        acc[1] = _mm256_fmadd_ps(w, v, acc[1]);
        break;
    case 2:
        acc[2] = _mm256_fmadd_ps(w, v, acc[2]);
        break;
    default:
        acc[3] = _mm256_fmadd_ps(w, v, acc[3]);
        break;
    }
}

/* The canonical fold of 4 dot products at once (key i's 16 lanes in lo[i], lanes 0-7, and
 * hi[i], lanes 8-15), with fold256x2's additions: j + j+8, then + 4, + 2, + 1; returns the 4
 * results in key order. */
static inline __attribute__((always_inline)) __m128 fold4x(const __m256 lo[4], const __m256 hi[4]) {
    __m256 b[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) b[i] = _mm256_add_ps(lo[i], hi[i]);      /* j + j+8 */
    __m256 c01 = _mm256_add_ps(_mm256_permute2f128_ps(b[0], b[1], 0x20), /* j + j+4 */
                               _mm256_permute2f128_ps(b[0], b[1], 0x31));
    __m256 c23 = _mm256_add_ps(_mm256_permute2f128_ps(b[2], b[3], 0x20),
                               _mm256_permute2f128_ps(b[2], b[3], 0x31));
    /* halves: [c0 | c1] and [c2 | c3]; j + j+2 gives [d0, d2 | d1, d3], two lanes each */
    __m256 d = _mm256_add_ps(_mm256_shuffle_ps(c01, c23, _MM_SHUFFLE(1, 0, 1, 0)),
                             _mm256_shuffle_ps(c01, c23, _MM_SHUFFLE(3, 2, 3, 2)));
    __m256 r = _mm256_add_ps(_mm256_shuffle_ps(d, d, _MM_SHUFFLE(2, 0, 2, 0)), /* j + j+1 */
                             _mm256_shuffle_ps(d, d, _MM_SHUFFLE(3, 1, 3, 1)));
    /* lanes 0, 1: keys 0, 2; lanes 4, 5: keys 1, 3 */
    return _mm_unpacklo_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
}

/* n rows of hs halves at src widened exactly into floats at dst (F16C's vcvtph2ps). */
static inline void widen_halves8(const unsigned char *src, int n, int hs, float *dst) {
    const size_t total = (size_t)n * hs;
    size_t i = 0;
    for (; i + 8 <= total; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 2 * i))));
    for (; i < total; i++) {
        uint16_t h;
        memcpy(&h, src + 2 * i, 2);
        dst[i] = _cvtsh_ss(h);
    }
}

/* How far ahead the scores and value sums prefetch the cache's rows (kernels_avx512.c, the same
 * scheme, says why). */
#define ATTEND_PREFETCH 4096

/* kern_attend_kv's scores of nq queries against nb <= 16 f32 key rows at kb (hs floats apart),
 * 4 keys at a time: each key's 16 lanes in two registers take the rows' chunks in column order,
 * as the canonical dot's lanes do, and fold4x folds 4 keys at once. Each query prefetches its
 * share of the lines [pf, pf + pf_len). HS: the head size when it is a compile-time constant
 * (64, 128; then a whole block of 16 keys: no masks, the rows at immediate offsets), else 0.
 * Constant, the scores took 0.75-0.85x the time (Zen 5 running the AVX2 kernels, one thread,
 * in the cache, 4 to 7 queries, f32 and f16; 2026-11-30-attention-values-zen5.md). */
static inline __attribute__((always_inline)) void scores16(int HS, const float *q, size_t ldq,
                                                           int nq, int hs, const float *kb, int nb,
                                                           float *s, size_t lds, __m128 div,
                                                           uintptr_t pf, size_t pf_len) {
    if (HS) hs = HS, nb = 16;
    const size_t lines = pf_len / 64;
    for (int t = 0; t < nq; t++) {
        const float *qt = q + (size_t)t * ldq;
        for (size_t l = lines * t / nq; l < lines * (t + 1) / nq; l++)
            _mm_prefetch((const char *)(pf + 64 * l), _MM_HINT_T0);
        for (int k0 = 0; k0 < nb; k0 += 4) {
            const float *k4 = kb + (size_t)k0 * hs;
            const int kn = nb - k0 < 4 ? nb - k0 : 4;
            __m256 lo[4], hi[4];
#pragma GCC unroll 4
            for (int i = 0; i < 4; i++) lo[i] = hi[i] = _mm256_setzero_ps();
            for (int c = 0; c < hs; c += 16) {
                const int left = hs - c, nl = left < 8 ? left : 8,
                          nh = left - 8 < 0   ? 0
                               : left - 8 < 8 ? left - 8
                                              : 8;
                __m256 ql, qh;
                if (left >= 16)
                    ql = _mm256_loadu_ps(qt + c), qh = _mm256_loadu_ps(qt + c + 8);
                else
                    ql = maskload8(qt + c, nl), qh = maskload8(qt + c + 8, nh);
#pragma GCC unroll 4
                for (int i = 0; i < 4; i++) {
                    if (i >= kn) break;
                    const float *kr = k4 + (size_t)i * hs + c;
                    __m256 kl = left >= 16 ? _mm256_loadu_ps(kr) : maskload8(kr, nl);
                    __m256 kh = left >= 16 ? _mm256_loadu_ps(kr + 8) : maskload8(kr + 8, nh);
                    lo[i] = _mm256_fmadd_ps(ql, kl, lo[i]);
                    hi[i] = _mm256_fmadd_ps(qh, kh, hi[i]);
                }
            }
            __m128 r = _mm_div_ps(fold4x(lo, hi), div);
            float *st = s + (size_t)t * lds + k0;
            if (kn == 4) {
                _mm_storeu_ps(st, r);
            } else {
                float o[4];
                _mm_storeu_ps(o, r);
                memcpy(st, o, sizeof(float) * (size_t)kn);
            }
        }
    }
}

void kern_avx2_scores(wtype kt, const float *q, size_t ldq, int nq, int hs, const void *k, int n,
                      float *s, size_t lds) {
    const size_t ldk = (size_t)hs * (kt == WTYPE_F16 ? 2 : 4);
    const __m128 div = _mm_set1_ps(sqrtf((float)hs));
    KERN_SCRATCH(kbuf, (size_t)16 * hs);
    for (int s0 = 0; s0 < n; s0 += 16) {
        const int nb = n - s0 < 16 ? n - s0 : 16;
        const unsigned char *kb = (const unsigned char *)k + (size_t)s0 * ldk;
        const float *kf = (const float *)kb;
        if (kt == WTYPE_F16) widen_halves8(kb, nb, hs, kbuf), kf = kbuf;
        const uintptr_t pf = (uintptr_t)kb + ATTEND_PREFETCH;
        if (nb == 16 && hs == 64)
            scores16(64, q, ldq, nq, hs, kf, nb, s + s0, lds, div, pf, 16 * ldk);
        else if (nb == 16 && hs == 128)
            scores16(128, q, ldq, nq, hs, kf, nb, s + s0, lds, div, pf, 16 * ldk);
        else
            scores16(0, q, ldq, nq, hs, kf, nb, s + s0, lds, div, pf, (size_t)nb * ldk);
    }
    KERN_SCRATCH_END(kbuf);
}

/* kern_values_swept's sweep in 8 lanes (kernels_isa.h) over rows of type VT (f32, f16): Q
 * queries, rows s, s + 4, ... below s1, columns col0 .. col0 + 15 (two chunks of 8); query t's
 * weights at e + t * KERN_SWEEP_EB (indexed by row), its running sums of the chain at acc + t *
 * ldacc + c * 32 for chunk c. A row's two chunks are loaded (an f16 row widened) once for all
 * Q queries (12 accumulators at most, of the 16 registers). */
#define AVX2_SWEEP_Q 6
static inline __attribute__((always_inline)) uintptr_t
values_sweep(wtype VT, int Q, const float *e, const unsigned char *v, size_t ldv, int s, int s1,
             int col0, float *acc, size_t ldacc, uintptr_t pf, int pf_lines) {
    __m256 a[AVX2_SWEEP_Q][2];
#pragma GCC unroll 6
    for (int t = 0; t < Q; t++)
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++) a[t][c] = _mm256_loadu_ps(acc + (size_t)t * ldacc + 32 * c);
    for (; s < s1; s += 4) {
        for (int l = 0; l < pf_lines; l++, pf += 64) _mm_prefetch((const char *)pf, _MM_HINT_T0);
        const unsigned char *row = v + (size_t)s * ldv + kern_kv_bytes(VT) * (size_t)col0;
        const __m256 x0 = VT == WTYPE_F16
                              ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)row))
                              : _mm256_loadu_ps((const float *)row),
                     x1 = VT == WTYPE_F16
                              ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 16)))
                              : _mm256_loadu_ps((const float *)row + 8);
#pragma GCC unroll 6
        for (int t = 0; t < Q; t++) {
            const __m256 w = _mm256_broadcast_ss(e + t * KERN_SWEEP_EB + s);
            a[t][0] = _mm256_fmadd_ps(w, x0, a[t][0]);
            a[t][1] = _mm256_fmadd_ps(w, x1, a[t][1]);
        }
    }
#pragma GCC unroll 6
    for (int t = 0; t < Q; t++)
#pragma GCC unroll 2
        for (int c = 0; c < 2; c++) _mm256_storeu_ps(acc + (size_t)t * ldacc + 32 * c, a[t][c]);
    return pf;
}

/* The sweep for kern_values_swept: values_sweep with the type and Q (1..AVX2_SWEEP_Q) constants. */
static uintptr_t avx2_sweep(wtype vt, int Q, const float *e, const unsigned char *v, size_t ldv,
                            int s, int s1, int col0, float *acc, size_t ldacc, uintptr_t pf,
                            int pf_lines) {
#define SWEEP(VT, Q) values_sweep(VT, Q, e, v, ldv, s, s1, col0, acc, ldacc, pf, pf_lines)
#define SWEEP_Q(VT)                                                                                \
    switch (Q) {                                                                                   \
    case 1: return SWEEP(VT, 1);                                                                   \
    case 2: return SWEEP(VT, 2);                                                                   \
    case 3: return SWEEP(VT, 3);                                                                   \
    case 4: return SWEEP(VT, 4);                                                                   \
    case 5: return SWEEP(VT, 5);                                                                   \
    default: return SWEEP(VT, 6);                                                                  \
    }
    if (vt == WTYPE_F16) SWEEP_Q(WTYPE_F16)
    SWEEP_Q(WTYPE_F32)
#undef SWEEP_Q
#undef SWEEP
}

/* kern_attend_kv's value sums: by sweeps (kern_values_swept) where the head size allows; else
 * the shared value rows a block at a time (kern_values_block: 16 KB of f32 rows, which stay in
 * the L1 cache for every query and column; an f16 block widened once into vbuf), in a block two
 * queries at a time, each 8 columns of a row loaded once and fed to
 * both queries' chain s mod 4, the next block prefetched a few lines with each step of 4 rows.
 * The chains' running sums wait in acc between blocks: [query][8 columns][chain]. */
void kern_avx2_values(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                      const void *v, int n_shared, const int *const *tail, const int *n_tail,
                      float *out, size_t ldo) {
    const size_t ldv = (size_t)hs * (vt == WTYPE_F16 ? 2 : 4);
    const int ncol = (hs + 7) / 8, SB = kern_values_block(hs, WTYPE_F32);
    KERN_SCRATCH(acc, (size_t)nq * ncol * 4 * 8);
    KERN_SCRATCH(vbuf, vt == WTYPE_F16 ? (size_t)SB * hs : 1);
    memset(acc, 0, sizeof(float) * (size_t)nq * ncol * 4 * 8);
#define ACC(t, c, j) (acc + (((size_t)(t)*ncol + (c)) * 4 + (j)) * 8)
    const int runs = (nq + 1) / 2 * ncol; /* runs of the loop below per block */
    /* By sweeps (kern_values_swept, 16 columns, up to 6 queries) where the head size allows;
     * this loop for the rest. Measured against this loop (Zen 5 running the AVX2 kernels,
     * DECBENCH_ISA=avx2, bench/attend_speed.c, one thread, in the cache, the value sums' time;
     * 2026-11-30-attention-values-zen5.md): f16 0.32-0.55x, f32 0.44-0.97x, 1 to 8 queries, head
     * sizes 64 and 128. This loop also divides twice per run of a block to share the
     * prefetches, and with an odd query count runs the last query's chains twice. */
    const int swept = kern_sweep_fits(hs, vt, 16);
    if (swept)
        kern_values_swept(avx2_sweep, AVX2_SWEEP_Q, 16, 8, vt, e, lde, nq, hs, v, n_shared, acc);
    for (int s0 = 0; !swept && s0 < n_shared; s0 += SB) {
        const int s1 = n_shared - s0 < SB ? n_shared : s0 + SB;
        const unsigned char *vb = (const unsigned char *)v + (size_t)s0 * ldv;
        const float *vf = (const float *)v; /* rows indexed from 0, as s0 and s1 are */
        if (vt == WTYPE_F16) widen_halves8(vb, s1 - s0, hs, vbuf), vf = vbuf - (size_t)s0 * hs;
        const uintptr_t next = (uintptr_t)vb + (size_t)SB * ldv;
        const size_t lines = (size_t)SB * ldv / 64;
        int run = 0;
        for (int q0 = 0; q0 < nq; q0 += 2) {
            const int QB = nq - q0 < 2 ? nq - q0 : 2;
            const float *eq[2] = {e + (size_t)q0 * lde, e + (size_t)(q0 + QB - 1) * lde};
            for (int c = 0; c < ncol; c++, run++) {
                const size_t first = lines * run / runs, last = lines * (run + 1) / runs;
                uintptr_t pf = next + 64 * first;
                const int pf_lines = (int)((last - first + (size_t)SB / 4 - 1) / ((size_t)SB / 4));
                const int col = 8 * c, nc = hs - col < 8 ? hs - col : 8;
                __m256 a[2][4];
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 4; j++)
                        a[i][j] = _mm256_loadu_ps(ACC(q0 + i * (QB - 1), c, j));
                int s = s0;
                if (nc == 8)
                    for (; s + 4 <= s1; s += 4) {
                        for (int l = 0; l < pf_lines; l++, pf += 64)
                            _mm_prefetch((const char *)pf, _MM_HINT_T0);
#pragma GCC unroll 4
                        for (int j = 0; j < 4; j++) {
                            __m256 vs = _mm256_loadu_ps(vf + (size_t)(s + j) * hs + col);
#pragma GCC unroll 2
                            for (int i = 0; i < 2; i++)
                                a[i][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(eq[i] + s + j), vs,
                                                          a[i][j]);
                        }
                    }
                for (; s < s1; s++) {
                    __m256 vs = maskload8(vf + (size_t)s * hs + col, nc);
                    for (int i = 0; i < 2; i++)
                        chain_fma(a[i], s % 4, _mm256_broadcast_ss(eq[i] + s), vs);
                }
                /* with one query left, both rows of a are its chains: the second is stored last */
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 4; j++)
                        _mm256_storeu_ps(ACC(q0 + i * (QB - 1), c, j), a[i][j]);
            }
        }
    }
    for (int t = 0; t < nq; t++) { /* the tails, then (c0 + c1) + (c2 + c3) over the sum */
        const float *et = e + (size_t)t * lde;
        for (int c = 0; c < ncol; c++) {
            const int col = 8 * c, nc = hs - col < 8 ? hs - col : 8;
            __m256 a[4];
            for (int j = 0; j < 4; j++) a[j] = _mm256_loadu_ps(ACC(t, c, j));
            for (int j = 0; j < n_tail[t]; j++) {
                int st = n_shared + j;
                const unsigned char *r = (const unsigned char *)v + (size_t)tail[t][j] * ldv;
                float row[8] = {0};
                if (vt == WTYPE_F16)
                    widen_halves8(r + 2 * (size_t)col, 1, nc, row);
                else
                    memcpy(row, (const float *)r + col, sizeof(float) * (size_t)nc);
                chain_fma(a, st % 4, _mm256_broadcast_ss(et + st), _mm256_loadu_ps(row));
            }
            __m256 r = _mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3]));
            float o[8];
            _mm256_storeu_ps(o, _mm256_div_ps(r, _mm256_set1_ps(sum[t])));
            memcpy(out + (size_t)t * ldo + col, o, sizeof(float) * (size_t)nc);
        }
    }
#undef ACC
    KERN_SCRATCH_END(vbuf);
    KERN_SCRATCH_END(acc);
}
#endif
