/* kernels_avx512.c: the AVX-512 kernels (compiled with -mavx512f/dq/bw/vl, run only on CPUs
 * that have them: kernels.c checks). The 16 lanes of the canonical order (kernels.h) are one
 * register; tiles of up to 16 accumulators are folded 16 at a time. Each tile forms exactly the
 * weights of the type's to_float (wtype.h) and feeds them to the FMAs in the canonical order,
 * so results equal the scalar reference bit for bit (tests/test_kernels.c). */
#include "model/kernels.h"
#include "model/kernels_isa.h"

#if KERN_X86
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Software prefetch distance, in bytes ahead of each weight row pointer, for matrices that
 * stream from memory. The hardware prefetchers alone left one core at ~6 GB/s on q8_0 (its
 * 2 KB rows are short streams) and ~8 GB/s on f32; 16 KB ahead brings a 2-core pass close to
 * the machine's read bandwidth (bench/gguf_speed.sh; 8-64 KB all help, 16 KB was best on f16). */
#define STREAM_PREFETCH 16384

/* tile(RT, TT): RT weight rows against TT tokens, each of the RT*TT dot products in its own
 * 16-lane accumulator, exactly the canonical order. Written once as an always-inline function;
 * the constant RT/TT (and type) of each caller lets the compiler keep the accumulators in
 * registers. */

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

/* The accumulator whose fold lands in lane L of fold16x16 (the map is its own inverse). */
#define ACC_FOR_LANE(L) (4 * ((L) % 4) + (L) / 4)

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

/* Prefetches the cache line `ahead` bytes past p. The address is formed as an integer: it may
 * lie past the matrix (a prefetch never faults), where pointer arithmetic would be undefined.
 * always_inline matters: GCC 12 judges a function holding only a prefetch free of side effects
 * and deletes the calls it has not inlined (without the prefetches a q8_0 1.1B pass is ~30%
 * slower). */
static inline __attribute__((always_inline)) void prefetch_ahead(const unsigned char *p,
                                                                 size_t ahead) {
    _mm_prefetch((const char *)((uintptr_t)p + ahead), _MM_HINT_T0);
}

/* RT weight rows (ldw bytes apart, storage type WT) x TT tokens, RT * TT <= 16, each product
 * in its own 16-lane accumulator. Result (row i, token t) is lane t * RT + i, so each token's
 * RT results are contiguous. Rows past `rows` (a short last block) reuse the last row and are
 * not stored. pf > 0 prefetches each row pf bytes ahead of where it is read. */
static inline __attribute__((always_inline)) void tile(wtype WT, const unsigned char *w, size_t ldw,
                                                       int RT, int rows, const float *x, size_t ldx,
                                                       int TT, int K, float *y, size_t ldy,
                                                       int pf) {
    __m512 acc[16];
    const unsigned char *wr[16];
#pragma GCC unroll 16
    for (int n = 0; n < 16; n++) acc[n] = _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int i = 0; i < RT; i++) wr[i] = w + (i < rows ? i : rows - 1) * ldw;
    if (WT == WTYPE_Q8_0) {
        /* K is whole blocks: the scale is widened once per block and row, the two 16-lane
         * halves need no masks, and the row pointers step by block (1.3x faster at T = 1 than
         * the general loop through load_w16). The order of the FMAs is the general loop's. */
        for (int k = 0; k < K; k += 32) {
            __m512 d[16];
            if (pf) {
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) prefetch_ahead(wr[i], pf);
            }
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) {
                uint16_t h;
                memcpy(&h, wr[i], 2);
                d[i] = _mm512_cvtph_ps(_mm256_set1_epi16((short)h));
            }
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++) { /* the block's two 16-lane steps, in order */
                __m512 wv[16];
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) {
                    __m128i q8 = _mm_loadu_si128((const __m128i *)(wr[i] + 2 + 16 * half));
                    wv[i] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8)), d[i]);
                }
#pragma GCC unroll 16
                for (int t = 0; t < TT; t++) {
                    __m512 xv = _mm512_loadu_ps(x + t * ldx + k + 16 * half);
#pragma GCC unroll 16
                    for (int i = 0; i < RT; i++) {
                        int n = ACC_FOR_LANE(t * RT + i);
                        acc[n] = _mm512_fmadd_ps(wv[i], xv, acc[n]);
                    }
                }
            }
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) wr[i] += 34;
        }
    } else {
        for (int k = 0; k < K; k += KERN_LANES) {
            __mmask16 m =
                K - k >= KERN_LANES ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1);
            __m512 wv[16]; /* a zero-filled tail gives 0*0 terms, as the reference */
            if (pf) {
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++)
                    prefetch_ahead(wr[i], pf + (WT == WTYPE_F32 ? 4 : 2) * (size_t)k);
            }
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) wv[i] = load_w16(WT, wr[i], k, m);
#pragma GCC unroll 16
            for (int t = 0; t < TT; t++) {
                __m512 xv = _mm512_maskz_loadu_ps(m, x + t * ldx + k);
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) {
                    int n = ACC_FOR_LANE(t * RT + i);
                    acc[n] = _mm512_fmadd_ps(wv[i], xv, acc[n]);
                }
            }
        }
    }
    if (RT * TT <= 4) { /* few accumulators: fold each (the same additions, fewer wasted) */
#pragma GCC unroll 16
        for (int t = 0; t < TT; t++)
            for (int i = 0; i < rows && i < RT; i++)
                y[t * ldy + i] = fold512(acc[ACC_FOR_LANE(t * RT + i)]);
        return;
    }
    float out[16];
    _mm512_storeu_ps(out, fold16x16(acc));
#pragma GCC unroll 16
    for (int t = 0; t < TT; t++)
        for (int i = 0; i < rows && i < RT; i++) y[t * ldy + i] = out[t * RT + i];
}

static float avx512_dot(const float *a, const float *b, int n) {
    __m512 acc = _mm512_setzero_ps();
    int k = 0;
    for (; k + KERN_LANES <= n; k += KERN_LANES)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), acc);
    if (k < n) {
        __mmask16 m = (__mmask16)((1u << (n - k)) - 1);
        acc =
            _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + k), _mm512_maskz_loadu_ps(m, b + k), acc);
    }
    return fold512(acc);
}

static float avx512_sum(const float *a, int n) {
    __m512 acc = _mm512_setzero_ps();
    int k = 0;
    for (; k + KERN_LANES <= n; k += KERN_LANES) acc = _mm512_add_ps(acc, _mm512_loadu_ps(a + k));
    if (k < n)
        acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps((__mmask16)((1u << (n - k)) - 1), a + k));
    return fold512(acc);
}

static inline __m512 exp16(__m512 x) { /* kern_exp_ref in 16 lanes, operation for operation */
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
    __m512i e =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

static void avx512_attend(const float *q, int hs, const float *k, const float *v, size_t stride,
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
    __m512 vmx = _mm512_set1_ps(-INFINITY); /* max is exact in any order */
    for (int s = 0; s < n; s += 16) {
        __mmask16 m = n - s >= 16 ? 0xffff : (__mmask16)((1u << (n - s)) - 1);
        vmx = _mm512_mask_max_ps(vmx, m, vmx, _mm512_maskz_loadu_ps(m, scratch + s));
    }
    vmx = _mm512_set1_ps(_mm512_reduce_max_ps(vmx));
    for (int s = 0; s < n; s += 16) {
        __mmask16 m = n - s >= 16 ? 0xffff : (__mmask16)((1u << (n - s)) - 1);
        __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, scratch + s), vmx));
        _mm512_mask_storeu_ps(scratch + s, m, e);
    }
    const __m512 vsum = _mm512_set1_ps(avx512_sum(scratch, n));
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

/* Token blocks of 4 with 4-row tiles; the 1-3 tokens left over use 16x1, 8x2 or 5x3 tiles so
 * each fold still serves 15-16 results (T = 1, plain decoding, is the 16-row case). A matrix
 * too big for the cache (`streams`, decided by kern_matmul) is prefetched on its first read. */
static inline __attribute__((always_inline)) void matmul_typed(wtype WT, const unsigned char *w,
                                                               size_t ldw, int rows, int K,
                                                               const float *x, size_t ldx, int T,
                                                               float *y, size_t ldy, int streams) {
    int t0 = T / 4 * 4;
    for (int r = 0; r < rows; r += 4) {
        int rt = rows - r < 4 ? rows - r : 4;
        for (int t = 0; t < t0; t += 4)
            tile(WT, w + r * ldw, ldw, 4, rt, x + t * ldx, ldx, 4, K, y + t * ldy + r, ldy,
                 streams && t == 0 ? STREAM_PREFETCH : 0);
    }
    int rem = T - t0;
    if (rem == 0) return;
    int pf = streams && t0 == 0 ? STREAM_PREFETCH : 0; /* else the 4x4 tiles read it first */
    /* One token left (plain decoding): a matrix that streams from memory is read 2 rows at a
     * time (few concurrent streams keep the prefetchers at full bandwidth: 16-row tiles were
     * 1.4x slower on the 110M shape); one that sits in cache uses 16-row tiles, whose single
     * fold serves 16 results (8 rows for q8_0, whose 16 rows' scales and widened weights do
     * not fit in the registers beside the accumulators: 15-20% faster). */
    int RT = rem == 1 ? (streams ? 2 : WT == WTYPE_Q8_0 ? 8 : 16) : rem == 2 ? 8 : 5;
    for (int r = 0; r < rows; r += RT) {
        int rt = rows - r < RT ? rows - r : RT;
        const unsigned char *wr = w + r * ldw;
        const float *xr = x + t0 * ldx;
        float *yr = y + t0 * ldy + r;
        if (rem == 1 && streams)
            tile(WT, wr, ldw, 2, rt, xr, ldx, 1, K, yr, ldy, pf);
        else if (rem == 1 && WT == WTYPE_Q8_0)
            tile(WT, wr, ldw, 8, rt, xr, ldx, 1, K, yr, ldy, 0);
        else if (rem == 1)
            tile(WT, wr, ldw, 16, rt, xr, ldx, 1, K, yr, ldy, 0);
        else if (rem == 2)
            tile(WT, wr, ldw, 8, rt, xr, ldx, 2, K, yr, ldy, pf);
        else
            tile(WT, wr, ldw, 5, rt, xr, ldx, 3, K, yr, ldy, pf);
    }
}

/* The tiles of the weight-type table (wtype.c). */
#define TYPED(fn, WT)                                                                              \
    void fn(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,       \
            int T, float *y, size_t ldy, int streams) {                                            \
        matmul_typed(WT, w, ldw, rows, K, x, ldx, T, y, ldy, streams);                             \
    }
TYPED(kern_avx512_f32, WTYPE_F32)
TYPED(kern_avx512_f16, WTYPE_F16)
TYPED(kern_avx512_bf16, WTYPE_BF16)
TYPED(kern_avx512_q8_0, WTYPE_Q8_0)

/* Types without a tile of their own: rows widened exactly into a buffer, then the f32 tiles. */
static void avx512_matmul_widen(kern_to_float_fn to_float, const unsigned char *w, size_t ldw,
                                int rows, int K, const float *x, size_t ldx, int T, float *y,
                                size_t ldy, int streams) {
    (void)streams; /* the buffer is in the cache */
    int n = kern_widen_rows(K);
    float buf[n * K];
    for (int r = 0; r < rows; r += n) {
        int rt = rows - r < n ? rows - r : n;
        for (int i = 0; i < rt; i++) to_float(w + (size_t)(r + i) * ldw, buf + (size_t)i * K, K);
        matmul_typed(WTYPE_F32, (const unsigned char *)buf, 4 * (size_t)K, rt, K, x, ldx, T, y + r,
                     ldy, 0);
    }
}

const kern_isa_ops kern_isa_avx512_ops = {
    .name = "avx512",
    .dot = avx512_dot,
    .sum = avx512_sum,
    .attend = avx512_attend,
    .matmul_widen = avx512_matmul_widen,
};
#endif
