/* kernels.c: batch-invariant matrix kernels (see kernels.h for the canonical order).
 * Scalar reference first, then the SIMD tiles, then the type dispatch. */
#include "model/kernels.h"

#include <math.h>
#include <string.h>

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define KERN_AVX512 1
#include <immintrin.h>
#elif defined(__AVX2__) && defined(__FMA__)
#define KERN_AVX2 1
#include <immintrin.h>
#endif

#define LANES 16

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

static inline __attribute__((always_inline)) void tile(const float *w, size_t ldw, int RT,
                                                       const float *x, size_t ldx, int TT, int K,
                                                       float *y, size_t ldy) {
    __m512 acc[4][4];
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) acc[i][t] = _mm512_setzero_ps();
    int k = 0;
    for (; k + LANES <= K; k += LANES) {
        __m512 wv[4];
        for (int i = 0; i < RT; i++) wv[i] = _mm512_loadu_ps(w + i * ldw + k);
        for (int t = 0; t < TT; t++) {
            __m512 xv = _mm512_loadu_ps(x + t * ldx + k);
            for (int i = 0; i < RT; i++) acc[i][t] = _mm512_fmadd_ps(wv[i], xv, acc[i][t]);
        }
    }
    if (k < K) { /* zero-filled tail: 0*0 terms, as the reference */
        __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
        __m512 wv[4];
        for (int i = 0; i < RT; i++) wv[i] = _mm512_maskz_loadu_ps(m, w + i * ldw + k);
        for (int t = 0; t < TT; t++) {
            __m512 xv = _mm512_maskz_loadu_ps(m, x + t * ldx + k);
            for (int i = 0; i < RT; i++) acc[i][t] = _mm512_fmadd_ps(wv[i], xv, acc[i][t]);
        }
    }
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) y[t * ldy + i] = fold512(acc[i][t]);
}

float kern_dot(const float *a, const float *b, int n) {
    float y;
    tile(a, 0, 1, b, 0, 1, n, &y, 0);
    return y;
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
#else
static inline void tile(const float *w, size_t ldw, int RT, const float *x, size_t ldx, int TT,
                        int K, float *y, size_t ldy) {
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) y[t * ldy + i] = kern_dot_ref(w + i * ldw, x + t * ldx, K);
}

float kern_dot(const float *a, const float *b, int n) { return kern_dot_ref(a, b, n); }
#endif

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

void kern_matmul(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y,
                 int ldy) {
    const int K = w->cols;
    if (w->type == WTYPE_F32) {
        const float *wf = (const float *)w->data;
        for (int r = r0; r < r1; r += TILE_R) {
            int rt = r1 - r < TILE_R ? r1 - r : TILE_R;
            rows_block(wf + (size_t)r * K, (size_t)K, rt, x, (size_t)ldx, T, K, y + (r - r0),
                       (size_t)ldy);
        }
        return;
    }
    /* Other types: widen TILE_R rows at a time into a small buffer (exact), then the same
     * tiles. The widening is amortised over the T tokens. */
    float buf[TILE_R * K];
    for (int r = r0; r < r1; r += TILE_R) {
        int rt = r1 - r < TILE_R ? r1 - r : TILE_R;
        for (int i = 0; i < rt; i++) kern_row_to_f32(w, r + i, buf + (size_t)i * K);
        rows_block(buf, (size_t)K, rt, x, (size_t)ldx, T, K, y + (r - r0), (size_t)ldy);
    }
}
