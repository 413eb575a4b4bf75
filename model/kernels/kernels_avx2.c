/* kernels_avx2.c: the exact mode's AVX2 kernels (compiled with -mavx2 -mfma -mf16c and without
 * AVX-512, run only on CPUs that have them: kernels.c checks; the int8 mode's tiles are in
 * kernels_avx2_int8.c). The 16 lanes of the canonical order (kernels.h) are two 8-lane
 * registers: passes of one or two tokens hold both in tiles of up to 2 rows, wider ones run the
 * two halves as separate sweeps of 6 rows x 2 tokens (below). f32 weights are read in place,
 * f16 and bf16 widened exactly in registers (F16C), the block types by tiles of their own at one
 * or two tokens and widened into float panels for more. Attention's scores are f32 products
 * (kern_attend_shared), its softmax and value sums in kernels_avx2_attend.c; kern_attend of a
 * single query (tests) runs the scalar reference. */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

#if KERN_X86
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/kernels/kernels_avx2.h"
#include "model/weights/wtype_blocks.h"

/* 8 weights of a row of f32, f16 or bf16 from column k widened to float exactly (WT is a
 * constant at every call). f16 by F16C's vcvtph2ps, which widens exactly like wtype_f16_to_f32
 * (subnormals included); bf16 is its 16 bits moved up. */
static inline __attribute__((always_inline)) __m256 load_w8(wtype WT, const unsigned char *p,
                                                            size_t k) {
    switch (WT) {
    case WTYPE_F16:
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 2 * k)));
    case WTYPE_BF16:
        return _mm256_castsi256_ps(_mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p + 2 * k))), 16));
    default:
        return _mm256_loadu_ps((const float *)p + k);
    }
}

/* The first n (0..8) weights from column k, the rest 0 (a row's last partial 16). */
static inline __attribute__((always_inline)) __m256 load_w8_part(wtype WT, const unsigned char *p,
                                                                 size_t k, int n) {
    if (WT == WTYPE_F32) return maskload8((const float *)p + k, n);
    unsigned char b[16] = {0};
    memcpy(b, p + 2 * k, 2 * (size_t)n);
    return load_w8(WT, b, 0);
}

/* RT rows of type WT (ldw values apart) against TT tokens, each dot product in its own pair of
 * 8-lane accumulators (AVX2 holds the 16 lanes in two registers, so tiles are at most 2 rows x
 * 3 tokens). */
static inline __attribute__((always_inline)) void tile_w(wtype WT, const unsigned char *w,
                                                         size_t ldw, int RT, const float *x,
                                                         size_t ldx, int TT, int K, float *y,
                                                         size_t ldy, size_t ys) {
    __m256 lo[4][4], hi[4][4];
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) lo[i][t] = hi[i][t] = _mm256_setzero_ps();
    int k = 0;
    for (; k + KERN_LANES <= K; k += KERN_LANES) {
        __m256 wl[4], wh[4];
        for (int i = 0; i < RT; i++) {
            wl[i] = load_w8(WT, w, i * ldw + k);
            wh[i] = load_w8(WT, w, i * ldw + k + 8);
        }
        for (int t = 0; t < TT; t++) {
            __m256 xl = _mm256_loadu_ps(x + t * ldx + k), xh = _mm256_loadu_ps(x + t * ldx + k + 8);
            for (int i = 0; i < RT; i++) {
                lo[i][t] = _mm256_fmadd_ps(wl[i], xl, lo[i][t]);
                hi[i][t] = _mm256_fmadd_ps(wh[i], xh, hi[i][t]);
            }
        }
    }
    if (k < K) {
        int n = K - k, nl = n < 8 ? n : 8, nh = n - nl;
        for (int t = 0; t < TT; t++) {
            __m256 xl = maskload8(x + t * ldx + k, nl), xh = maskload8(x + t * ldx + k + 8, nh);
            for (int i = 0; i < RT; i++) {
                lo[i][t] = _mm256_fmadd_ps(load_w8_part(WT, w, i * ldw + k, nl), xl, lo[i][t]);
                hi[i][t] = _mm256_fmadd_ps(load_w8_part(WT, w, i * ldw + k + 8, nh), xh, hi[i][t]);
            }
        }
    }
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) y[t * ldy + i * ys] = fold256x2(lo[i][t], hi[i][t]);
}

static inline __attribute__((always_inline)) void tile(const float *w, size_t ldw, int RT,
                                                       const float *x, size_t ldx, int TT, int K,
                                                       float *y, size_t ldy, size_t ys) {
    tile_w(WTYPE_F32, (const unsigned char *)w, ldw, RT, x, ldx, TT, K, y, ldy, ys);
}

static float avx2_dot(const float *a, const float *b, int n) {
    float y;
    tile(a, 0, 1, b, 0, 1, n, &y, 0, 1);
    return y;
}

#define TILE_R 2
#define TILE_T 3

/* A block of rt <= TILE_R rows (ldw values apart, results ys apart) against all T tokens in
 * tiles of TILE_T. */
#define TILE_CASE(R, TT_) tile_w(WT, w, ldw, R, x + t * ldx, ldx, TT_, K, y + t * ldy, ldy, ys)
static inline __attribute__((always_inline)) void rows_block(wtype WT, const unsigned char *w,
                                                             size_t ldw, int rt, const float *x,
                                                             size_t ldx, int T, int K, float *y,
                                                             size_t ldy, size_t ys) {
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

/* ---- wide passes: half sweeps -------------------------------------------------------------
 * The 16 lanes of the canonical order are independent until the fold: lanes 0-7 take the terms
 * k = 16m + 0..7, lanes 8-15 the terms 16m + 8..15. A tile of both halves needs two registers
 * per (row, token), so AVX2's 16 registers hold 2 rows x 3 tokens: 5 loads per 6 FMAs, and at 64
 * tokens the inputs stream from L2 (f32 110M, 1 thread: 22 GFLOP/s, a fifth of the core's FMA
 * peak). From WIDE_FROM tokens on the tiles run the halves as two sweeps instead, each with one
 * register per (row, token): 6 rows x 2 tokens, 8 loads per 12 FMAs, the 2 tokens' inputs held
 * in registers. A row group's chunk of WIDE_CHUNK values of K stays in L1 while the tokens pass
 * over it, and the partial sums of up to WIDE_TOKENS tokens wait in memory between chunks. Each
 * lane still takes its terms in increasing k by the same FMAs, and a row's last partial 16
 * gives fma(0, 0, lane) past K in both halves as the reference does, so the bits are the
 * canonical order's (tests/test_kernels.c runs both sides of WIDE_FROM).
 * Measured on one core of this machine (Zen 3 VM, 4 rows x 256 values in L1, FMAs per ns; the
 * core's peak 5.9): 6x2 4.1-4.3, 2x6 4.1-4.2, 5x2 3.9-4.0, 3x4 3.9, 4x3 3.4-3.6 (16 registers
 * in use: the compiler reloads inputs), 3x3 3.5, 4x2 3.3. 6x2 keeps the weights in L1 and
 * loads each input once per 6 rows. */
#define WIDE_RT 6
#define WIDE_TT 2
#define WIDE_CHUNK 512
#define WIDE_TOKENS 64
#define WIDE_FROM 3
/* From how many tokens a block takes adjacent rows even from a matrix that streams, as
 * AVX-512's wide passes do (kernels_avx512.c, WIDE_ADJACENT_FROM, says why). Measured with AVX2
 * forced on the Xeon (Emerald Rapids VM; not yet on a Zen), kern_matmul on one thread, 64
 * tokens, ns per 64 weights and row, 3 alternations, far apart -> adjacent: f32 2048 x 768
 * 2.16-2.83 -> 2.03-2.10, f16 2.53-3.32 -> 2.41-2.46, f32 5632 x 2048 2.10-2.63 -> 1.95-2.59. */
#define WIDE_ADJACENT_FROM 16

typedef __m256 wide_part[2][WIDE_RT]; /* one token's partial sums: [half][row] */

/* Lanes h*8 .. h*8+7 of the 16-value groups in [k0, k1) (k0 a multiple of 16; k1 too unless it
 * is K) of WIDE_RT rows x TT tokens, added to p[t][h][i]. Each weight vector is loaded once
 * into a register (the compiler otherwise folds the load into both tokens' FMAs: 768 x 768 f32
 * at 64 tokens, 2.3 -> 3.4 FMAs per ns). f16 and bf16 use the same shape although it widens each
 * weight vector for 2 tokens only (vcvtph2ps issues once per cycle here): 2 rows x 6 tokens
 * streamed the inputs 3 times as often and was slower (110M f16, 1 thread, 64 tokens: 167-182
 * against 215-241 rows/s). */
static inline __attribute__((always_inline)) void wide_sweep(wtype WT, const unsigned char *const *wr,
                                                             const float *x, size_t ldx, int TT,
                                                             int k0, int k1, int K, int h,
                                                             wide_part *p) {
    __m256 a[WIDE_RT][WIDE_TT];
#pragma GCC unroll 8
    for (int i = 0; i < WIDE_RT; i++)
#pragma GCC unroll 2
        for (int t = 0; t < TT; t++) a[i][t] = p[t][h][i];
    const int full = k1 < K ? k1 : K / 16 * 16;
    int k = k0;
    for (; k < full; k += 16) {
        const int kk = k + 8 * h;
        __m256 xv[WIDE_TT];
#pragma GCC unroll 2
        for (int t = 0; t < TT; t++) xv[t] = _mm256_loadu_ps(x + t * ldx + kk);
#pragma GCC unroll 8
        for (int i = 0; i < WIDE_RT; i++) {
            __m256 wv = load_w8(WT, wr[i], (size_t)kk);
            __asm__("" : "+x"(wv));
#pragma GCC unroll 2
            for (int t = 0; t < TT; t++) a[i][t] = _mm256_fmadd_ps(wv, xv[t], a[i][t]);
        }
    }
    if (k < k1) { /* the row's last partial 16 values: lanes past K take fma(0, 0, lane) */
        const int kk = k + 8 * h, n = K - kk < 0 ? 0 : K - kk > 8 ? 8 : K - kk;
        __m256 xv[WIDE_TT];
        for (int t = 0; t < TT; t++) xv[t] = maskload8(x + t * ldx + kk, n);
        for (int i = 0; i < WIDE_RT; i++) {
            __m256 wv = load_w8_part(WT, wr[i], (size_t)kk, n);
            for (int t = 0; t < TT; t++) a[i][t] = _mm256_fmadd_ps(wv, xv[t], a[i][t]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < WIDE_RT; i++)
#pragma GCC unroll 2
        for (int t = 0; t < TT; t++) p[t][h][i] = a[i][t];
}

/* WIDE_RT rows at w (ws bytes apart; rows past `valid` repeat the last and are not stored) x
 * nt <= WIDE_TOKENS tokens, results step apart. */
static inline __attribute__((always_inline)) void wide_rows(wtype WT, const unsigned char *w,
                                                            size_t ws, int valid, const float *x,
                                                            size_t ldx, int nt, int K, float *y,
                                                            size_t ldy, size_t step) {
    const unsigned char *wr[WIDE_RT];
    for (int i = 0; i < WIDE_RT; i++) wr[i] = w + (size_t)(i < valid ? i : valid - 1) * ws;
    wide_part part[WIDE_TOKENS];
    for (int t = 0; t < nt; t++)
        for (int i = 0; i < WIDE_RT; i++) part[t][0][i] = part[t][1][i] = _mm256_setzero_ps();
    for (int k0 = 0; k0 < K; k0 += WIDE_CHUNK) {
        int k1 = K - k0 < WIDE_CHUNK ? K : k0 + WIDE_CHUNK, t = 0;
        for (; t + 2 <= nt; t += 2)
            for (int h = 0; h < 2; h++) wide_sweep(WT, wr, x + t * ldx, ldx, 2, k0, k1, K, h, part + t);
        if (t < nt)
            for (int h = 0; h < 2; h++) wide_sweep(WT, wr, x + t * ldx, ldx, 1, k0, k1, K, h, part + t);
    }
    for (int t = 0; t < nt; t++)
        for (int i = 0; i < valid; i++)
            y[t * ldy + i * step] = fold256x2(part[t][0][i], part[t][1][i]);
}

/* Rows in pairs (far apart when the matrix streams: kern_rowgroup); ldw in bytes. From
 * WIDE_FROM tokens on, blocks of WIDE_TOKENS tokens by wide tiles of half sweeps (above), their
 * rows adjacent from WIDE_ADJACENT_FROM tokens. */
static inline __attribute__((always_inline)) void matmul_float(wtype WT, const unsigned char *w,
                                                               size_t ldw, int rows, int K,
                                                               const float *x, size_t ldx, int T,
                                                               float *y, size_t ldy, int streams) {
    if (T >= WIDE_FROM) {
        for (int t0 = 0; t0 < T; t0 += WIDE_TOKENS) {
            int nt = T - t0 < WIDE_TOKENS ? T - t0 : WIDE_TOKENS;
            KERN_ROWS_LOOP(WIDE_RT, rows, streams && nt < WIDE_ADJACENT_FROM, w, ldw,
                           wide_rows(WT, wr, ws, valid, x + t0 * ldx, ldx, nt, K,
                                     y + t0 * ldy + row, ldy, step));
        }
        return;
    }
    const size_t es = WT == WTYPE_F32 ? 4 : 2; /* bytes per weight */
    KERN_ROWS_LOOP(TILE_R, rows, streams, w, ldw,
                   rows_block(WT, wr, ws / es, valid, x, ldx, T, K, y + row, ldy, step));
}

void kern_avx2_f32(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,
                   int T, float *y, size_t ldy, int streams) {
    matmul_float(WTYPE_F32, w, ldw, rows, K, x, ldx, T, y, ldy, streams);
}

/* f16 and bf16 widen in registers, once per tile of up to 3 tokens: a wide pass pays one
 * conversion per 8 weights and 3 tokens, less than storing and reloading a widened panel. */
void kern_avx2_f16(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,
                   int T, float *y, size_t ldy, int streams) {
    matmul_float(WTYPE_F16, w, ldw, rows, K, x, ldx, T, y, ldy, streams);
}

void kern_avx2_bf16(const unsigned char *w, size_t ldw, int rows, int K, const float *x,
                    size_t ldx, int T, float *y, size_t ldy, int streams) {
    matmul_float(WTYPE_BF16, w, ldw, rows, K, x, ldx, T, y, ldy, streams);
}

/* Other types: widen a few rows at a time into a small buffer (exact), then the same tiles;
 * the widening is amortised over the T tokens. */
static void avx2_matmul_widen(kern_to_float_fn to_float, const unsigned char *w, size_t ldw,
                              int rows, int K, const float *x, size_t ldx, int T, float *y,
                              size_t ldy, int streams) {
    (void)streams;
    KERN_WIDENED_PANELS(kern_avx2_f32, WIDE_RT, rows, K, x, ldx, T, y, ldy,
                        for (int i = 0; i < rt; i++)
                            to_float(w + (size_t)(r + i) * ldw, buf + (size_t)i * K, K));
}

/* ---- block types ------------------------------------------------------------------------ */
/* Each block is read as chunks of 16 values (two 8-lane halves). A chunk's integers are unpacked
 * into 32-bit lanes and its weights formed arithmetically with the operations of the type's
 * to_float (wtype_blocks.c): a product of an exact integer and a scale, exact, and at most one
 * rounded addition of a min, here fused (fmadd / fmsub of an exact product rounds once, like
 * ggml's `d1 * q - m1`). Scales are decoded once per block with scalar code. */


static inline __m256i bytes8(const unsigned char *p) { /* 8 bytes, zero-extended */
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

static inline __m256i bits8(__m256i v, int shift, int mask) {
    return _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(mask));
}

/* The scales of one block (per 32-value block: d, m; k-quants: per sub-block). */
typedef struct {
    float d[16], m[16];
} blk_scales;

static inline __attribute__((always_inline)) void scales_of(wtype WT, const unsigned char *b,
                                                            blk_scales *s) {
    switch (WT) {
    case WTYPE_Q8_0:
    case WTYPE_Q4_0:
    case WTYPE_Q5_0:
        s->d[0] = half_f32(b);
        break;
    case WTYPE_Q4_1:
    case WTYPE_Q5_1:
        s->d[0] = half_f32(b), s->m[0] = half_f32(b + 2);
        break;
    case WTYPE_Q2_K: {
        float d = half_f32(b + 80), dmin = half_f32(b + 82);
        for (int c = 0; c < 16; c++)
            s->d[c] = d * (float)(b[c] & 15), s->m[c] = dmin * (float)(b[c] >> 4);
        break;
    }
    case WTYPE_Q3_K: {
        int sc[16];
        float d = half_f32(b + 108);
        wtype_q3_k_scales(b + 96, sc);
        for (int c = 0; c < 16; c++) s->d[c] = d * (float)sc[c];
        break;
    }
    case WTYPE_Q4_K:
    case WTYPE_Q5_K: {
        float d = half_f32(b), dmin = half_f32(b + 2);
        for (int j = 0; j < 8; j++) {
            int sc, m;
            wtype_k4_scale_min(b + 4, j, &sc, &m);
            s->d[j] = d * (float)sc, s->m[j] = dmin * (float)m;
        }
        break;
    }
    default: { /* q6_k */
        float d = half_f32(b + 208);
        for (int c = 0; c < 16; c++) s->d[c] = d * (float)(int8_t)b[192 + c];
        break;
    }
    }
}

/* Weights 8h..8h+7 (h = 0, 1) of chunk c of the block at b. */
static inline __attribute__((always_inline)) __m256 half8(wtype WT, const unsigned char *b, int c,
                                                          int h, const blk_scales *s) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    switch (WT) {
    case WTYPE_Q8_0: /* q * d */
        return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                 _mm_loadl_epi64((const __m128i *)(b + 2 + 16 * c + 8 * h)))),
                             _mm256_set1_ps(s->d[0]));
    case WTYPE_Q4_0: /* (q - 8) * d */
        return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(
                                 bits8(bytes8(b + 2 + 8 * h), 4 * c, 15), _mm256_set1_epi32(8))),
                             _mm256_set1_ps(s->d[0]));
    case WTYPE_Q4_1: /* q * d + m */
        return _mm256_fmadd_ps(_mm256_cvtepi32_ps(bits8(bytes8(b + 4 + 8 * h), 4 * c, 15)),
                               _mm256_set1_ps(s->d[0]), _mm256_set1_ps(s->m[0]));
    case WTYPE_Q5_0:
    case WTYPE_Q5_1: {
        const unsigned char *qs = b + (WT == WTYPE_Q5_0 ? 6 : 8);
        uint32_t qh;
        memcpy(&qh, qs - 4, 4);
        __m256i hb = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_set1_epi32((int)(qh >> (16 * c + 8 * h))), lane),
            _mm256_set1_epi32(1));
        __m256i q = _mm256_or_si256(bits8(bytes8(qs + 8 * h), 4 * c, 15), _mm256_slli_epi32(hb, 4));
        if (WT == WTYPE_Q5_0) /* (q - 16) * d */
            return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, _mm256_set1_epi32(16))),
                                 _mm256_set1_ps(s->d[0]));
        return _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s->d[0]),
                               _mm256_set1_ps(s->m[0]));
    }
    case WTYPE_Q2_K: { /* dl * q - ml */
        int hh = c / 8, j = (c % 8) / 2, p = c % 2;
        __m256i q = bits8(bytes8(b + 16 + 32 * hh + 16 * p + 8 * h), 2 * j, 3);
        return _mm256_fmsub_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s->d[c]),
                               _mm256_set1_ps(s->m[c]));
    }
    case WTYPE_Q3_K: { /* dl * (q2 - 4 * !bit) */
        int hh = c / 8, j = (c % 8) / 2, p = c % 2;
        __m256i q = bits8(bytes8(b + 32 + 32 * hh + 16 * p + 8 * h), 2 * j, 3);
        __m256i bit = bits8(bytes8(b + 16 * p + 8 * h), 4 * hh + j, 1);
        q = _mm256_sub_epi32(_mm256_add_epi32(q, _mm256_slli_epi32(bit, 2)), _mm256_set1_epi32(4));
        return _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s->d[c]));
    }
    case WTYPE_Q4_K:
    case WTYPE_Q5_K: { /* d1 * q - m1 */
        int g = c / 4, p = (c % 4) & 1, hi = c % 4 >= 2, sub = 2 * g + hi;
        __m256i q =
            bits8(bytes8(b + (WT == WTYPE_Q4_K ? 16 : 48) + 32 * g + 16 * p + 8 * h), 4 * hi, 15);
        if (WT == WTYPE_Q5_K)
            q = _mm256_or_si256(
                q, _mm256_slli_epi32(bits8(bytes8(b + 16 + 16 * p + 8 * h), sub, 1), 4));
        return _mm256_fmsub_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s->d[sub]),
                               _mm256_set1_ps(s->m[sub]));
    }
    default: { /* q6_k: (d * sc) * (q6 - 32) */
        int hh = c / 8, k = (c % 8) / 2, p = c % 2;
        __m256i lo = bits8(bytes8(b + 64 * hh + 32 * (k & 1) + 16 * p + 8 * h), k < 2 ? 0 : 4, 15);
        __m256i hb = bits8(bytes8(b + 128 + 32 * hh + 16 * p + 8 * h), 2 * k, 3);
        __m256i q =
            _mm256_sub_epi32(_mm256_or_si256(lo, _mm256_slli_epi32(hb, 4)), _mm256_set1_epi32(32));
        return _mm256_mul_ps(_mm256_set1_ps(s->d[c]), _mm256_cvtepi32_ps(q));
    }
    }
}

static inline int avx2_block_size(wtype WT) {
    return kern_is_kquant(WT) ? 256 : 32;
}

/* RT rows (1-2) x TT tokens (1-3) of a block type, each dot product in its own pair of 8-lane
 * accumulators in the canonical order. */
static inline __attribute__((always_inline)) void tile_blocks(wtype WT, const unsigned char *w,
                                                              size_t ldw, int RT, const float *x,
                                                              size_t ldx, int TT, int K, float *y,
                                                              size_t ldy, size_t ys, int bytes) {
    __m256 lo[2][3], hi[2][3];
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) lo[i][t] = hi[i][t] = _mm256_setzero_ps();
    const int BS = avx2_block_size(WT);
    for (int k = 0, b = 0; k < K; k += BS, b++) {
        blk_scales s[2];
        for (int i = 0; i < RT; i++) scales_of(WT, w + i * ldw + (size_t)b * bytes, &s[i]);
        for (int c = 0; c < BS / 16; c++) {
            __m256 wl[2], wh[2];
            for (int i = 0; i < RT; i++) {
                const unsigned char *blk = w + i * ldw + (size_t)b * bytes;
                wl[i] = half8(WT, blk, c, 0, &s[i]);
                wh[i] = half8(WT, blk, c, 1, &s[i]);
            }
            for (int t = 0; t < TT; t++) {
                __m256 xl = _mm256_loadu_ps(x + t * ldx + k + 16 * c);
                __m256 xh = _mm256_loadu_ps(x + t * ldx + k + 16 * c + 8);
                for (int i = 0; i < RT; i++) {
                    lo[i][t] = _mm256_fmadd_ps(wl[i], xl, lo[i][t]);
                    hi[i][t] = _mm256_fmadd_ps(wh[i], xh, hi[i][t]);
                }
            }
        }
    }
    for (int i = 0; i < RT; i++)
        for (int t = 0; t < TT; t++) y[t * ldy + i * ys] = fold256x2(lo[i][t], hi[i][t]);
}

/* Rows [0, rows) widened exactly into buf, K floats per row: the weights tile_blocks forms in
 * registers, stored instead of multiplied. */
static inline __attribute__((always_inline)) void widen_blocks(wtype WT, const unsigned char *w,
                                                               size_t ldw, int rows, int K,
                                                               float *buf, int bytes) {
    const int BS = avx2_block_size(WT);
    for (int i = 0; i < rows; i++) {
        float *o = buf + (size_t)i * K;
        for (int k = 0, b = 0; k < K; k += BS, b++) {
            const unsigned char *blk = w + (size_t)i * ldw + (size_t)b * bytes;
            blk_scales s;
            scales_of(WT, blk, &s);
            for (int c = 0; c < BS / 16; c++) {
                _mm256_storeu_ps(o + k + 16 * c, half8(WT, blk, c, 0, &s));
                _mm256_storeu_ps(o + k + 16 * c + 8, half8(WT, blk, c, 1, &s));
            }
        }
    }
}

/* One or two tokens: two rows at a time (the registers hold no more accumulators), far apart
 * when the matrix streams (kern_rowgroup). From WIDE_FROM tokens on, panels of rows are widened
 * once into a buffer for the wide f32 tiles (the same floats in the same order, kernels_isa.h):
 * on this ISA that wins from 3 tokens (one core, in cache, ns per 64 weights and token, direct
 * -> widened: q8_0 6.2 -> 4.3 at 3 tokens, 6.9 -> 3.3 at 8; q4_k 10.5 -> 6.3 at 4; q6_k 9.7 ->
 * 6.4 at 4), unlike AVX-512's kern_widen_from, whose direct tiles hold 4 rows x 4 tokens. */
static inline __attribute__((always_inline)) void
matmul_blocks(wtype WT, const unsigned char *w, size_t ldw, int rows, int K, const float *x,
              size_t ldx, int T, float *y, size_t ldy, int bytes, int streams) {
    if (T >= WIDE_FROM) {
        KERN_WIDENED_PANELS(kern_avx2_f32, WIDE_RT, rows, K, x, ldx, T, y, ldy,
                            widen_blocks(WT, w + (size_t)r * ldw, ldw, rt, K, buf, bytes));
        return;
    }
    KERN_ROWS_LOOP(2, rows, streams, w, ldw, {
        if (valid == 1)
            T == 1 ? tile_blocks(WT, wr, ws, 1, x, ldx, 1, K, y + row, ldy, step, bytes)
                   : tile_blocks(WT, wr, ws, 1, x, ldx, 2, K, y + row, ldy, step, bytes);
        else
            T == 1 ? tile_blocks(WT, wr, ws, 2, x, ldx, 1, K, y + row, ldy, step, bytes)
                   : tile_blocks(WT, wr, ws, 2, x, ldx, 2, K, y + row, ldy, step, bytes);
    });
}

#define TYPED(fn, WT, BYTES)                                                                       \
    void fn(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,       \
            int T, float *y, size_t ldy, int streams) {                                            \
        matmul_blocks(WT, w, ldw, rows, K, x, ldx, T, y, ldy, BYTES, streams);                     \
    }
TYPED(kern_avx2_q8_0, WTYPE_Q8_0, 34)
TYPED(kern_avx2_q4_0, WTYPE_Q4_0, 18)
TYPED(kern_avx2_q4_1, WTYPE_Q4_1, 20)
TYPED(kern_avx2_q5_0, WTYPE_Q5_0, 22)
TYPED(kern_avx2_q5_1, WTYPE_Q5_1, 24)
TYPED(kern_avx2_q2_k, WTYPE_Q2_K, 84)
TYPED(kern_avx2_q3_k, WTYPE_Q3_K, 110)
TYPED(kern_avx2_q4_k, WTYPE_Q4_K, 144)
TYPED(kern_avx2_q5_k, WTYPE_Q5_K, 176)
TYPED(kern_avx2_q6_k, WTYPE_Q6_K, 210)

/* ---- libm's expf (kernels_isa.h) ------------------------------------------------------- */

static inline __m256d pd_bits(uint64_t b) {
    return _mm256_castsi256_pd(_mm256_set1_epi64x((long long)b));
}

/* 4 floats' expf in double lanes, glibc's operations in glibc's order. */
static inline __m128 expf4(__m128 x) {
    const __m256d inv = pd_bits(KERN_EXPF_INV_LN2_N), shift = pd_bits(KERN_EXPF_SHIFT);
    const __m256d xd = _mm256_cvtps_pd(x);
    const __m256d kds = _mm256_fmadd_pd(inv, xd, shift); /* k in the low mantissa bits */
    const __m256d r = _mm256_fmsub_pd(inv, xd, _mm256_sub_pd(kds, shift));
    const __m256i ki = _mm256_castpd_si256(kds);
    __m256i t = _mm256_i64gather_epi64((const long long *)kern_expf_table,
                                       _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
    t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
    const __m256d z = _mm256_fmadd_pd(r, pd_bits(KERN_EXPF_C0), pd_bits(KERN_EXPF_C1));
    __m256d y = _mm256_fmadd_pd(r, pd_bits(KERN_EXPF_C2), _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, _mm256_mul_pd(r, r), y);
    return _mm256_cvtpd_ps(_mm256_mul_pd(y, _mm256_castsi256_pd(t)));
}

/* 8 floats' expf: expf4's lanes, then libm for the lanes glibc treats apart (|x| >= 88, inf,
 * NaN). */
static inline __m256 expf8(__m256 x) {
    __m256 e =
        _mm256_set_m128(expf4(_mm256_extractf128_ps(x, 1)), expf4(_mm256_castps256_ps128(x)));
    const __m256i top =
        _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    int sp = _mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_cmpgt_epi32(top, _mm256_set1_epi32(KERN_EXPF_SPECIAL_TOP - 1))));
    if (sp) {
        float ev[8], xv[8];
        _mm256_storeu_ps(ev, e), _mm256_storeu_ps(xv, x);
        for (; sp; sp &= sp - 1) {
            const int k = __builtin_ctz((unsigned)sp);
            ev[k] = expf(xv[k]);
        }
        e = _mm256_loadu_ps(ev);
    }
    return e;
}

/* 8 at a time (expf8), the last n % 8 by libm. */
static void avx2_expf(const float *x, float *y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, expf8(_mm256_loadu_ps(x + i)));
    for (; i < n; i++) y[i] = expf(x[i]);
}

/* kern_silu_mul 8 at a time: expf8 of -a, then a * (1 / (1 + e)) * b, in the scalar loop's
 * order. */
static void avx2_silu_mul(float *a, const float *b, int n) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(a + i), e = expf8(_mm256_xor_ps(v, sign));
        const __m256 r = _mm256_div_ps(one, _mm256_add_ps(one, e));
        _mm256_storeu_ps(a + i, _mm256_mul_ps(_mm256_mul_ps(v, r), _mm256_loadu_ps(b + i)));
    }
    for (; i < n; i++) a[i] = kern_silu_mul_one(a[i], b[i], expf);
}

/* kern_f16_from_f32 8 at a time by vcvtps2ph (round to nearest even); from a block with a NaN
 * on, and the last n % 8, wtype's conversion, whose NaN drops the payload. */
static void avx2_f16_from_f32(const float *src, void *dst, int n) {
    unsigned char *p = dst;
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(src + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) break;
        _mm_storeu_si128((__m128i *)(p + 2 * i),
                         _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    wtype_get(WTYPE_F16)->from_float(src + i, p + 2 * (size_t)i, n - i);
}

/* kern_f16_to_f32 8 at a time by vcvtph2ps, the last n % 8 by wtype's conversion. */
static void avx2_f16_to_f32(const void *src, float *dst, int n) {
    const unsigned char *p = src;
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 2 * i))));
    wtype_get(WTYPE_F16)->to_float(p + 2 * (size_t)i, dst + i, n - i);
}

const kern_isa_ops kern_isa_avx2_ops = {
    .name = "avx2",
    .dot = avx2_dot,
    .sum = kern_avx2_sum,
    .attend = kern_attend_ref,
    .scores = kern_avx2_scores,
    .softmax = kern_avx2_softmax,
    .values = kern_avx2_values,
    .matmul_widen = avx2_matmul_widen,
    .expf = avx2_expf,
    .silu_mul = avx2_silu_mul,
    .f16_from_f32 = avx2_f16_from_f32,
    .f16_to_f32 = avx2_f16_to_f32,
};
#endif
