/* kernels.c: batch-invariant matrix kernels (see kernels.h for the canonical order).
 * Scalar reference first, then the SIMD tiles, then the type dispatch. */
#include "model/kernels.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define KERN_AVX512 1
#include <immintrin.h>
#elif defined(__AVX2__) && defined(__FMA__)
#define KERN_AVX2 1
#include <immintrin.h>
#endif

#define LANES 16

/* Software prefetch distance, in bytes ahead of each weight row pointer, for matrices that
 * stream from memory. The hardware prefetchers alone left one core at ~6 GB/s on q8_0 (its
 * 2 KB rows are short streams) and ~8 GB/s on f32; 16 KB ahead brings a 2-core pass close to
 * the machine's read bandwidth (bench/gguf_speed.sh; 8-64 KB all help, 16 KB was best on f16). */
#define STREAM_PREFETCH 16384

const char *kern_simd_name(void) {
#if KERN_AVX512
    return "avx512";
#elif KERN_AVX2
    return "avx2";
#else
    return "scalar";
#endif
}

/* ---- half precision ---------------------------------------------------------------- */

float kern_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do { man <<= 1, e++; } while (!(man & 1024));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 1023) << 13;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | man << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t kern_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
    if (ax < 0x38800000u) {                                  /* subnormal or zero in f16 */
        if (ax < 0x33000000u) return (uint16_t)sign;
        uint32_t e = ax >> 23, man = (ax & 0x7fffff) | 0x800000;
        uint32_t shift = 126 - e; /* 14 + (112 - e) */
        uint32_t v = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (v & 1))) v++;
        return (uint16_t)(sign | v);
    }
    uint32_t v = ((ax >> 13) - (112u << 10)), rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (v & 1))) v++;
    return (uint16_t)(sign | v);
}

float kern_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t kern_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- scalar reference ---------------------------------------------------------------- */

static float fold16(const float a[LANES]) {
    float s8[8], s4[4], s2[2];
    for (int j = 0; j < 8; j++) s8[j] = a[j] + a[j + 8];
    for (int j = 0; j < 4; j++) s4[j] = s8[j] + s8[j + 4];
    for (int j = 0; j < 2; j++) s2[j] = s4[j] + s4[j + 2];
    return s2[0] + s2[1];
}

float kern_dot_ref(const float *a, const float *b, int n) {
    float acc[LANES] = {0};
    int k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++) acc[j] = fmaf(a[k + j], b[k + j], acc[j]);
    if (k < n)
        for (int j = 0; j < LANES; j++)
            acc[j] = k + j < n ? fmaf(a[k + j], b[k + j], acc[j]) : fmaf(0.0f, 0.0f, acc[j]);
    return fold16(acc);
}

float kern_sum_ref(const float *a, int n) {
    float acc[LANES] = {0};
    int k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++) acc[j] += a[k + j];
    for (int j = 0; k + j < n; j++) acc[j] += a[k + j];
    for (int j = n - k; k < n && j < LANES; j++) acc[j] += 0.0f;
    return fold16(acc);
}

/* Cephes-style expf: x = n ln2 + r, |r| <= ln2/2, e^r by a degree-6 polynomial, times 2^n.
 * Only multiplications and additions in a fixed order, so SIMD lanes match this exactly. */
#define EXP_LO -87.0f
#define EXP_L2E 1.44269504088896341f
#define EXP_C1 0.693359375f
#define EXP_C2 -2.12194440e-4f
#define EXP_SHIFTER 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer */
static const float exp_poly[6] = {1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f,
                                  4.1665795894E-2f, 1.6666665459E-1f, 5.0000001201E-1f};

float kern_exp_ref(float x) {
    x = x < EXP_LO ? EXP_LO : x;
    float t = x * EXP_L2E + EXP_SHIFTER; /* round(x / ln2), held in the mantissa */
    float n = t - EXP_SHIFTER;
    float r = x - n * EXP_C1;
    r = r - n * EXP_C2;
    float p = exp_poly[0];
    for (int i = 1; i < 6; i++) p = p * r + exp_poly[i];
    float r2 = r * r;
    p = p * r2 + r;
    p = p + 1.0f;
    int32_t e = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &e, 4);
    return p * scale;
}

void kern_attend_ref(const float *q, int hs, const float *k, const float *v, size_t stride,
                     const int *slots, int n, float *scratch, float *out) {
    float div = sqrtf((float)hs);
    for (int s = 0; s < n; s++) {
        size_t slot = slots ? (size_t)slots[s] : (size_t)s;
        scratch[s] = kern_dot_ref(q, k + slot * stride, hs) / div;
    }
    float mx = scratch[0];
    for (int s = 1; s < n; s++) mx = scratch[s] > mx ? scratch[s] : mx;
    for (int s = 0; s < n; s++) scratch[s] = kern_exp_ref(scratch[s] - mx);
    float sum = kern_sum_ref(scratch, n);
    /* values: four fused multiply-add chains (keys s = 0, 1, 2, 3 mod 4, in slot order) per
     * column, combined as (c0 + c1) + (c2 + c3): independent chains keep the FMA units busy */
    for (int i = 0; i < hs; i++) {
        float c4[4] = {0, 0, 0, 0};
        for (int s = 0; s < n; s++) {
            size_t slot = slots ? (size_t)slots[s] : (size_t)s;
            c4[s % 4] = fmaf(scratch[s], v[slot * stride + i], c4[s % 4]);
        }
        out[i] = ((c4[0] + c4[1]) + (c4[2] + c4[3])) / sum;
    }
}

void kern_row_to_f32(const wmat *w, int row, float *out) {
    const int K = w->cols;
    const unsigned char *base = (const unsigned char *)w->data + wtype_row_bytes(w->type, K) * (size_t)row;
    switch (w->type) {
    case WTYPE_F32: memcpy(out, base, sizeof(float) * (size_t)K); break;
    case WTYPE_F16:
        for (int k = 0; k < K; k++) {
            uint16_t h;
            memcpy(&h, base + 2 * (size_t)k, 2);
            out[k] = kern_f16_to_f32(h);
        }
        break;
    case WTYPE_BF16:
        for (int k = 0; k < K; k++) {
            uint16_t h;
            memcpy(&h, base + 2 * (size_t)k, 2);
            out[k] = kern_bf16_to_f32(h);
        }
        break;
    case WTYPE_Q8_0:
        for (int b = 0; b < K / 32; b++) {
            const unsigned char *blk = base + 34 * (size_t)b;
            uint16_t h;
            memcpy(&h, blk, 2);
            float d = kern_f16_to_f32(h);
            for (int j = 0; j < 32; j++) out[b * 32 + j] = d * (float)(int8_t)blk[2 + j];
        }
        break;
    }
}

void kern_matmul_ref(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y,
                     int ldy) {
    float row[w->cols];
    for (int r = r0; r < r1; r++) {
        kern_row_to_f32(w, r, row);
        for (int t = 0; t < T; t++) y[(size_t)t * ldy + (r - r0)] = kern_dot_ref(row, x + (size_t)t * ldx, w->cols);
    }
}

/* ---- SIMD tiles ----------------------------------------------------------------------- */
/* tile(RT, TT): RT weight rows (stride ldw floats) against TT tokens (stride ldx), each of the
 * RT*TT dot products in its own 16-lane accumulator, exactly the canonical order. Written once
 * as an always-inline function; the constant RT/TT of each caller lets the compiler keep the
 * accumulators in registers. */

#if KERN_AVX512
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
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p + 2 * (size_t)k)), 16));
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
static inline __attribute__((always_inline)) void tile(wtype WT, const unsigned char *w,
                                                       size_t ldw, int RT, int rows,
                                                       const float *x, size_t ldx, int TT, int K,
                                                       float *y, size_t ldy, int pf) {
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
        for (int k = 0; k < K; k += LANES) {
            __mmask16 m = K - k >= LANES ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1);
            __m512 wv[16]; /* a zero-filled tail gives 0*0 terms, as the reference */
            if (pf) {
                #pragma GCC unroll 16
                for (int i = 0; i < RT; i++) prefetch_ahead(wr[i], pf + (WT == WTYPE_F32 ? 4 : 2) * (size_t)k);
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
            for (int i = 0; i < rows && i < RT; i++) y[t * ldy + i] = fold512(acc[ACC_FOR_LANE(t * RT + i)]);
        return;
    }
    float out[16];
    _mm512_storeu_ps(out, fold16x16(acc));
    #pragma GCC unroll 16
    for (int t = 0; t < TT; t++)
        for (int i = 0; i < rows && i < RT; i++) y[t * ldy + i] = out[t * RT + i];
}

float kern_dot(const float *a, const float *b, int n) {
    __m512 acc = _mm512_setzero_ps();
    int k = 0;
    for (; k + LANES <= n; k += LANES)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), acc);
    if (k < n) {
        __mmask16 m = (__mmask16)((1u << (n - k)) - 1);
        acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + k), _mm512_maskz_loadu_ps(m, b + k), acc);
    }
    return fold512(acc);
}

float kern_sum(const float *a, int n) {
    __m512 acc = _mm512_setzero_ps();
    int k = 0;
    for (; k + LANES <= n; k += LANES) acc = _mm512_add_ps(acc, _mm512_loadu_ps(a + k));
    if (k < n) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps((__mmask16)((1u << (n - k)) - 1), a + k));
    return fold512(acc);
}

static inline __m512 exp16(__m512 x) { /* kern_exp_ref in 16 lanes, operation for operation */
    x = _mm512_max_ps(x, _mm512_set1_ps(EXP_LO));
    __m512 t = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(EXP_L2E)), _mm512_set1_ps(EXP_SHIFTER));
    __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(EXP_SHIFTER));
    __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(EXP_C1)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(EXP_C2)));
    __m512 p = _mm512_set1_ps(exp_poly[0]);
    for (int i = 1; i < 6; i++) p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(exp_poly[i]));
    __m512 r2 = _mm512_mul_ps(r, r);
    p = _mm512_add_ps(_mm512_mul_ps(p, r2), r);
    p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
    __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

void kern_attend(const float *q, int hs, const float *k, const float *v, size_t stride,
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
            for (; c + LANES <= hs; c += LANES)
                a = _mm512_fmadd_ps(_mm512_loadu_ps(q + c), _mm512_loadu_ps(kr + c), a);
            if (c < hs) {
                __mmask16 m = (__mmask16)((1u << (hs - c)) - 1);
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, q + c), _mm512_maskz_loadu_ps(m, kr + c), a);
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
    const __m512 vsum = _mm512_set1_ps(kern_sum(scratch, n));
    /* values: four FMA chains per column (keys 0, 1, 2, 3 mod 4), as the reference */
    for (int c = 0; c < hs; c += LANES) {
        __mmask16 m = hs - c >= LANES ? 0xffff : (__mmask16)((1u << (hs - c)) - 1);
        __m512 o[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        int s = 0;
        if (slots) {
            for (; s + 4 <= n; s += 4)
                for (int j = 0; j < 4; j++)
                    o[j] = _mm512_fmadd_ps(_mm512_set1_ps(scratch[s + j]),
                                           _mm512_maskz_loadu_ps(m, v + (size_t)slots[s + j] * stride + c), o[j]);
            for (; s < n; s++)
                o[s % 4] = _mm512_fmadd_ps(_mm512_set1_ps(scratch[s]),
                                           _mm512_maskz_loadu_ps(m, v + (size_t)slots[s] * stride + c), o[s % 4]);
        } else {
            for (; s < n; s++)
                o[s % 4] = _mm512_fmadd_ps(_mm512_set1_ps(scratch[s]),
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
        if (rem == 1 && streams) tile(WT, wr, ldw, 2, rt, xr, ldx, 1, K, yr, ldy, pf);
        else if (rem == 1 && WT == WTYPE_Q8_0) tile(WT, wr, ldw, 8, rt, xr, ldx, 1, K, yr, ldy, 0);
        else if (rem == 1) tile(WT, wr, ldw, 16, rt, xr, ldx, 1, K, yr, ldy, 0);
        else if (rem == 2) tile(WT, wr, ldw, 8, rt, xr, ldx, 2, K, yr, ldy, pf);
        else tile(WT, wr, ldw, 5, rt, xr, ldx, 3, K, yr, ldy, pf);
    }
}

void kern_matmul(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y,
                 int ldy) {
    const int K = w->cols;
    size_t ldw = wtype_row_bytes(w->type, K);
    const unsigned char *base = (const unsigned char *)w->data + (size_t)r0 * ldw;
    /* Whether the matrix, not this call's share of its rows, fits in the cache decides whether
     * the share streams from memory: the 110M shape's rows split 8 ways fit, the matrix does
     * not (deciding by the share made q8_0 110M 1.5-2x slower at T = 1). */
    int streams = (size_t)w->rows * ldw > ((size_t)512 << 10);
    switch (w->type) {
    case WTYPE_F32: matmul_typed(WTYPE_F32, base, ldw, r1 - r0, K, x, (size_t)ldx, T, y, (size_t)ldy, streams); break;
    case WTYPE_F16: matmul_typed(WTYPE_F16, base, ldw, r1 - r0, K, x, (size_t)ldx, T, y, (size_t)ldy, streams); break;
    case WTYPE_BF16: matmul_typed(WTYPE_BF16, base, ldw, r1 - r0, K, x, (size_t)ldx, T, y, (size_t)ldy, streams); break;
    case WTYPE_Q8_0: matmul_typed(WTYPE_Q8_0, base, ldw, r1 - r0, K, x, (size_t)ldx, T, y, (size_t)ldy, streams); break;
    }
}

#elif KERN_AVX2
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
    for (; k + LANES <= K; k += LANES) {
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

float kern_dot(const float *a, const float *b, int n) {
    float y;
    tile(a, 0, 1, b, 0, 1, n, &y, 0);
    return y;
}
#define KERN_ATTEND_IS_REF 1
#else
#define KERN_ATTEND_IS_REF 1
static inline void tile(const float *w, size_t ldw, int RT, const float *x, size_t ldx, int TT,
                        int K, float *y, size_t ldy) {
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) y[t * ldy + i] = kern_dot_ref(w + i * ldw, x + t * ldx, K);
}

float kern_dot(const float *a, const float *b, int n) { return kern_dot_ref(a, b, n); }
#endif

#if KERN_ATTEND_IS_REF /* AVX2 and scalar builds: the reference attention */
float kern_sum(const float *a, int n) { return kern_sum_ref(a, n); }
void kern_attend(const float *q, int hs, const float *k, const float *v, size_t stride,
                 const int *slots, int n, float *scratch, float *out) {
    kern_attend_ref(q, hs, k, v, stride, slots, n, scratch, out);
}
#endif

#if !KERN_AVX512
#if KERN_AVX2
#define TILE_R 2
#define TILE_T 3
#else
#define TILE_R 4
#define TILE_T 4
#endif

/* Dispatches a block of rt <= TILE_R rows against all T tokens in tiles of TILE_T. */
#define TILE_CASE(R, TT_) tile(w, ldw, R, x + t * ldx, ldx, TT_, K, y + t * ldy, ldy)
static void rows_block(const float *w, size_t ldw, int rt, const float *x, size_t ldx, int T,
                       int K, float *y, size_t ldy) {
    int t = 0;
    for (; t + TILE_T <= T; t += TILE_T) {
        switch (rt) {
        case 1: TILE_CASE(1, TILE_T); break;
        case 2: TILE_CASE(2, TILE_T); break;
#if TILE_R > 2
        case 3: TILE_CASE(3, TILE_T); break;
        case 4: TILE_CASE(4, TILE_T); break;
#endif
        }
    }
    for (; t < T; t++) {
        switch (rt) {
        case 1: TILE_CASE(1, 1); break;
        case 2: TILE_CASE(2, 1); break;
#if TILE_R > 2
        case 3: TILE_CASE(3, 1); break;
        case 4: TILE_CASE(4, 1); break;
#endif
        }
    }
}

static void matmul_f32(const float *w, int rows, int K, const float *x, size_t ldx, int T,
                       float *y, size_t ldy) {
    for (int r = 0; r < rows; r += TILE_R) {
        int rt = rows - r < TILE_R ? rows - r : TILE_R;
        rows_block(w + (size_t)r * K, (size_t)K, rt, x, ldx, T, K, y + r, ldy);
    }
}
#endif

#if !KERN_AVX512
/* Rows widened per block for non-f32 weights. */
#define WIDEN_ROWS 16

void kern_matmul(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y,
                 int ldy) {
    const int K = w->cols;
    if (w->type == WTYPE_F32) {
        matmul_f32((const float *)w->data + (size_t)r0 * K, r1 - r0, K, x, (size_t)ldx, T, y,
                   (size_t)ldy);
        return;
    }
    /* Other types: widen WIDEN_ROWS rows at a time into a small buffer (exact), then the same
     * tiles; the widening is amortised over the T tokens. */
    float buf[WIDEN_ROWS * K];
    for (int r = r0; r < r1; r += WIDEN_ROWS) {
        int rt = r1 - r < WIDEN_ROWS ? r1 - r : WIDEN_ROWS;
        for (int i = 0; i < rt; i++) kern_row_to_f32(w, r + i, buf + (size_t)i * K);
        matmul_f32(buf, rt, K, x, (size_t)ldx, T, y + (r - r0), (size_t)ldy);
    }
}
#endif
