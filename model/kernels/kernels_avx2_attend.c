/* kernels_avx2_attend.c: attention's reductions on AVX2 (kern_isa_ops' sum, softmax and values;
 * compiled with the AVX2 flags, run only on CPUs that have them). Each is the scalar reference's
 * arithmetic in 8 lanes, operation for operation, so the bits are the reference's
 * (tests/test_kernels.c compares every ISA): the canonical sum's 16 lanes as two registers, the
 * fixed exp polynomial of kern_exp_ref lane by lane, and the value sums' four fused multiply-add
 * chains per column (keys s = 0, 1, 2, 3 mod 4, in slot order) with a column in each lane.
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
 * score is not finite (kern_softmax_nonfinite). */
float kern_avx2_softmax(float *s, int n) {
    float mx = s[0];
    __m256 vmx = _mm256_set1_ps(mx);
    __m256i bad = _mm256_setzero_si256(); /* kern_exponent_carry of every score, OR-ed */
    const __m256i expo = _mm256_set1_epi32(0x7f800000), unit = _mm256_set1_epi32(0x00800000);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(s + i);
        vmx = _mm256_max_ps(vmx, x);
        bad = _mm256_or_si256(
            bad, _mm256_add_epi32(_mm256_and_si256(_mm256_castps_si256(x), expo), unit));
    }
    float m8[8];
    _mm256_storeu_ps(m8, vmx);
    for (int j = 0; j < 8; j++) mx = m8[j] > mx ? m8[j] : mx;
    uint32_t any = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(bad)) ? 0x80000000u : 0;
    for (; i < n; i++) {
        uint32_t b;
        memcpy(&b, s + i, 4);
        any |= kern_exponent_carry(b);
        mx = s[i] > mx ? s[i] : mx;
    }
    if (any & 0x80000000u) return kern_softmax_nonfinite(s, n);
    vmx = _mm256_set1_ps(mx);
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(s + i, exp8(_mm256_sub_ps(_mm256_loadu_ps(s + i), vmx)));
    if (i < n) {
        float t[8];
        _mm256_storeu_ps(t, exp8(_mm256_sub_ps(maskload8(s + i, n - i), vmx)));
        memcpy(s + i, t, sizeof(float) * (size_t)(n - i));
    }
    return kern_avx2_sum(s, n);
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

/* 8 values of a cache row of type VT from column col widened exactly (the first n, 0 past them:
 * n < 8 only in a head's last columns). */
static inline __attribute__((always_inline)) __m256 load_v8(wtype VT, const unsigned char *row,
                                                            int col, int n) {
    if (VT == WTYPE_F16) {
        if (n == 8) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 2 * col)));
        uint16_t h[8] = {0};
        memcpy(h, row + 2 * col, 2 * (size_t)n);
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)h));
    }
    const float *p = (const float *)row + col;
    return n == 8 ? _mm256_loadu_ps(p) : maskload8(p, n);
}

/* kern_attend_kv's value sums: the shared value rows a block at a time (kern_values_block: they
 * stay in the L1 cache for every query and column), in a block two queries at a time, each 8
 * columns of a row loaded once and fed to both queries' chain s mod 4. The chains' running sums
 * wait in acc between blocks: [query][8 columns][chain]. VT is a constant at every call. */
static inline __attribute__((always_inline)) void
values_typed(wtype VT, const float *e, size_t lde, const float *sum, int nq, int hs,
             const unsigned char *v, int n_shared, const int *const *tail, const int *n_tail,
             float *out, size_t ldo) {
    const size_t ldv = (size_t)hs * (VT == WTYPE_F16 ? 2 : 4);
    const int ncol = (hs + 7) / 8, SB = kern_values_block(hs, VT);
    KERN_SCRATCH(acc, (size_t)nq * ncol * 4 * 8);
    memset(acc, 0, sizeof(float) * (size_t)nq * ncol * 4 * 8);
#define ACC(t, c, j) (acc + (((size_t)(t)*ncol + (c)) * 4 + (j)) * 8)
    for (int s0 = 0; s0 < n_shared; s0 += SB) {
        const int s1 = n_shared - s0 < SB ? n_shared : s0 + SB;
        for (int q0 = 0; q0 < nq; q0 += 2) {
            const int QB = nq - q0 < 2 ? nq - q0 : 2;
            const float *eq[2] = {e + (size_t)q0 * lde, e + (size_t)(q0 + QB - 1) * lde};
            for (int c = 0; c < ncol; c++) {
                const int col = 8 * c, nc = hs - col < 8 ? hs - col : 8;
                __m256 a[2][4];
                for (int i = 0; i < 2; i++)
                    for (int j = 0; j < 4; j++)
                        a[i][j] = _mm256_loadu_ps(ACC(q0 + i * (QB - 1), c, j));
                int s = s0;
                if (nc == 8)
                    for (; s + 4 <= s1; s += 4) {
#pragma GCC unroll 4
                        for (int j = 0; j < 4; j++) {
                            __m256 vs = load_v8(VT, v + (size_t)(s + j) * ldv, col, 8);
#pragma GCC unroll 2
                            for (int i = 0; i < 2; i++)
                                a[i][j] = _mm256_fmadd_ps(_mm256_broadcast_ss(eq[i] + s + j), vs,
                                                          a[i][j]);
                        }
                    }
                for (; s < s1; s++) {
                    __m256 vs = load_v8(VT, v + (size_t)s * ldv, col, nc);
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
                chain_fma(a, st % 4, _mm256_broadcast_ss(et + st),
                          load_v8(VT, v + (size_t)tail[t][j] * ldv, col, nc));
            }
            __m256 r = _mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3]));
            float o[8];
            _mm256_storeu_ps(o, _mm256_div_ps(r, _mm256_set1_ps(sum[t])));
            memcpy(out + (size_t)t * ldo + col, o, sizeof(float) * (size_t)nc);
        }
    }
#undef ACC
    KERN_SCRATCH_END(acc);
}

void kern_avx2_values(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                      const void *v, int n_shared, const int *const *tail, const int *n_tail,
                      float *out, size_t ldo) {
    if (vt == WTYPE_F16)
        values_typed(WTYPE_F16, e, lde, sum, nq, hs, v, n_shared, tail, n_tail, out, ldo);
    else
        values_typed(WTYPE_F32, e, lde, sum, nq, hs, v, n_shared, tail, n_tail, out, ldo);
}
#endif
