/* kernels_avx2_int8.c: the int8 mode's AVX2 tiles (kernels.h, "the int8 mode"), compiled with
 * the AVX2 flags and run on CPUs without AVX-512 VNNI (kernels_int8.c picks; same bits).
 *
 * A block of 32 values is one register of bytes: vpmaddubsw multiplies the unsigned weight
 * bytes u by the signed activation bytes into 16-bit pairs (no saturation: at most 63 * 127 * 2;
 * q8_0's signed weights go in as |w| against the activations given w's signs) and vpmaddwd by
 * ones sums them into the 8 lanes of P (kernels.h), exact. The activation row's c, shifted to
 * the type's offset, takes q4_0's 8, q5_0's 16, q3_k's 4 and q6_k's 32 back out (kernels.h's
 * c is -128 times the 4 values' sum; arithmetic shifts make it -8, -16, -4 and -32 times).
 * Then lane m takes fma(A * d, (float)P, lane): A the row's scale of those 4 values, d the
 * activation block's; block 2p goes to lanes 0-7 (lo) and 2p + 1 to lanes 8-15 (hi) of the
 * canonical 16, whose fold starts by adding the two.
 *
 * Tiles run a unit of 8 blocks (a k-quant's super-block) at a time: its scales are staged once
 * per row with vector operations (q4_k's 6-bit scales and mins from three 32-bit words, q3_k's
 * by byte shuffles), then the even blocks update the lo accumulators and the odd ones the hi
 * accumulators, in two sweeps, so a result needs one register, not two; each block's weights
 * are unpacked once per row and meet every token of the tile. Mins (q4_1, q5_1 per block, q4_k
 * and q5_k per sub-block) go to an 8-lane accumulator per result, as kernels.h orders them.
 * q4_0's, q4_k's and q6_k's one-row passes read packed rows instead when the model has them
 * (packed_tile). */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

#if KERN_X86
#include <stdint.h>
#include <string.h>

#include "model/kernels/kernels_avx2.h"

/* A row's scales for one unit of 8 blocks: s[0] lane j = A of block j (q4_k, q5_k: d * sc of
 * sub-block j); q3_k, q6_k: the 16
 * per-16-value scales d * sc, s[0] sub-blocks 0-7, s[1] 8-15 (the 32-value types stage none:
 * each block's f16 d is converted where it is used); m: q4_k, q5_k's M = dmin * m of
 * sub-block j, q4_1, q5_1's m of block j (0 past the row). */
typedef struct {
    __m256 s[2], m;
} unit_scales;

/* q4_k / q5_k: the 8 scales (bytes 0-7) and 8 mins (bytes 8-15) of the 12 bytes at p
 * (wtype_k4_scale_min), for 32-bit words u0, u1, u2: sub-blocks 0-3 are the low 6 bits of u0's
 * bytes (scales) and u1's (mins); 4-7 take their low 4 bits from u2's bytes (scales: low
 * nibbles, mins: high) and their high 2 from the top of u0's (scales) and u1's (mins) bytes.
 * p + 12..15 are read and ignored (they are the block's own qs). */
static inline __m128i k4_scales_mins(const unsigned char *p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);                    /* u0 u1 u2 - */
    __m128i a = _mm_shuffle_epi32(v, 0x44);                              /* u0 u1 u0 u1 */
    __m128i c = _mm_shuffle_epi32(v, 0xAA);                              /* u2 u2 u2 u2 */
    c = _mm_blend_epi16(c, _mm_srli_epi32(c, 4), 0xC0);                  /* -  -  u2 u2>>4 */
    __m128i hi = _mm_or_si128(_mm_and_si128(c, _mm_set1_epi8(15)),
                              _mm_slli_epi32(_mm_and_si128(_mm_srli_epi32(a, 6),
                                                           _mm_set1_epi8(3)), 4));
    __m128i lo = _mm_and_si128(a, _mm_set1_epi8(63));
    /* lo: sc_lo m_lo . . ; hi: . . sc_hi m_hi -> sc_lo sc_hi m_lo m_hi */
    return _mm_unpacklo_epi32(lo, _mm_unpackhi_epi64(hi, hi));
}

/* q3_k: the 16 scales minus 32 of the 12 bytes at p (wtype_q3_k_scales) as 16 signed bytes:
 * scale i's low 4 bits are byte i's low nibble (i < 8) or byte i - 8's high one, its high 2
 * bits are bits 2(i / 4) of byte 8 + i % 4. */
static inline __m128i q3k_scales(const unsigned char *p) {
    __m128i v = _mm_loadl_epi64((const __m128i *)p);
    const __m128i nib = _mm_set1_epi8(15);
    __m128i lo = _mm_unpacklo_epi64(_mm_and_si128(v, nib), _mm_and_si128(_mm_srli_epi16(v, 4), nib));
    uint32_t w;
    memcpy(&w, p + 8, 4);
    __m128i hi = _mm_and_si128(_mm_set_epi32((int)(w >> 6), (int)(w >> 4), (int)(w >> 2), (int)w),
                               _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi16(hi, 4)), _mm_set1_epi8(32));
}

static inline __m256 bytes_to_f32(__m128i v, int sign) { /* the low 8 bytes as 8 floats */
    return _mm256_cvtepi32_ps(sign ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v));
}

/* The 16-bit values at p, p + stride, ... (n of them, 0..8; 0 past them) in one register,
 * inserted in place (not gathered through memory: 2-byte stores and then a 16-byte load miss
 * store forwarding). */
static inline __attribute__((always_inline)) __m128i halves8(const unsigned char *p, int stride,
                                                             int n) {
    __m128i v = _mm_setzero_si128();
    uint16_t h;
#define HALF_AT(j)                                                                                 \
    if (n > (j)) {                                                                                 \
        memcpy(&h, p + (size_t)(j) * stride, 2);                                                   \
        v = _mm_insert_epi16(v, h, j);                                                             \
    }
    HALF_AT(0) HALF_AT(1) HALF_AT(2) HALF_AT(3) HALF_AT(4) HALF_AT(5) HALF_AT(6) HALF_AT(7)
#undef HALF_AT
    return v;
}

/* The scales of the super-block at u (k-quants), or the mins of the n blocks from u (q4_1,
 * q5_1; 0 past them). */
static inline __attribute__((always_inline)) void stage_unit(wtype WT, const unsigned char *u,
                                                             int n, unit_scales *st) {
    if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) {
        __m128i sm = k4_scales_mins(u + 4);
        st->s[0] = _mm256_mul_ps(_mm256_set1_ps(half_f32(u)), bytes_to_f32(sm, 0));
        st->m = _mm256_mul_ps(_mm256_set1_ps(half_f32(u + 2)),
                              bytes_to_f32(_mm_unpackhi_epi64(sm, sm), 0));
    } else if (WT == WTYPE_Q3_K || WT == WTYPE_Q6_K) {
        __m128i sc = WT == WTYPE_Q3_K ? q3k_scales(u + 96) : _mm_loadu_si128((const __m128i *)(u + 192));
        __m256 d = _mm256_set1_ps(half_f32(u + (WT == WTYPE_Q3_K ? 108 : 208)));
        st->s[0] = _mm256_mul_ps(d, bytes_to_f32(sc, 1));
        st->s[1] = _mm256_mul_ps(d, bytes_to_f32(_mm_srli_si128(sc, 8), 1));
    } else if (kern_block_min(WT)) { /* q4_1, q5_1: the blocks' m (at 2) */
        st->m = _mm256_cvtph_ps(halves8(u + 2, kern_block_bytes(WT), n));
    }
}

/* A row's scale products A * d_b for one token and unit of a k-quant: p[j] for the 8 blocks
 * (q4_k, q5_k), p[s] for the 16 sub-blocks of 16 values (q3_k, q6_k: block s / 2's d_b). */
typedef struct {
    float p[16];
} unit_products;

static inline __attribute__((always_inline)) void products(wtype WT, const unit_scales *st,
                                                          __m256 dd, unit_products *out) {
    if (WT == WTYPE_Q3_K || WT == WTYPE_Q6_K) {
        const __m256i lo = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
        const __m256i hi = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
        _mm256_storeu_ps(out->p, _mm256_mul_ps(st->s[0], _mm256_permutevar8x32_ps(dd, lo)));
        _mm256_storeu_ps(out->p + 8, _mm256_mul_ps(st->s[1], _mm256_permutevar8x32_ps(dd, hi)));
    } else {
        _mm256_storeu_ps(out->p, _mm256_mul_ps(st->s[0], dd));
    }
}

/* Block j's lane scales times its d_b (8 lanes): lanes 4m..4m+3 take the products of their
 * 4 values' scale (sub-block 2j + m for q3_k, q6_k: one 8-byte broadcast and an in-lane
 * permute; two 4-byte broadcasts and an insert measured 3-7% slower, kernel_speed q3_k T=1
 * 4.63 -> 4.34, q6_k 4.10 -> 4.00 ns per 64 weights). */
static inline __attribute__((always_inline)) __m256 block_products(wtype WT, const unit_products *p,
                                                                   int j) {
    if (WT == WTYPE_Q3_K || WT == WTYPE_Q6_K) { /* [a b a b | a b a b] -> [a a a a | b b b b] */
        __m256 ab = _mm256_castpd_ps(_mm256_broadcast_sd((const double *)(p->p + 2 * j)));
        return _mm256_permutevar_ps(ab, _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
    }
    return _mm256_broadcast_ss(p->p + j);
}

/* The 32 bits of h as 32 bytes, 16 where the bit is set, else 0 (byte v from bit v). */
static inline __m256i bits_to_16s(uint32_t h) {
    const __m256i pick = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                          2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)h), pick);
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit),
                            _mm256_set1_epi8(16));
}

/* Block j of the unit at un: its 32 weights as bytes, unsigned (w plus the type's offset), or
 * for q8_0 the signed w itself. */
static inline __attribute__((always_inline)) __m256i unpack(wtype WT, const unsigned char *un,
                                                            int j) {
    const __m256i nib = _mm256_set1_epi8(15);
    if (WT == WTYPE_Q8_0) return _mm256_loadu_si256((const __m256i *)(un + (size_t)j * 34 + 2));
    if (WT == WTYPE_Q4_0 || WT == WTYPE_Q5_0 || kern_block_min(WT)) {
        const unsigned char *blk = un + (size_t)j * kern_block_bytes(WT);
        __m128i q = _mm_loadu_si128((const __m128i *)(blk + kern_qs_at(WT)));
        __m256i u = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), nib);
        if (WT == WTYPE_Q5_0 || WT == WTYPE_Q5_1) {
            uint32_t h;
            memcpy(&h, blk + kern_qh_at(WT), 4);
            u = _mm256_or_si256(u, bits_to_16s(h));
        }
        return u;
    }
    const unsigned char *sb = un;
    if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) { /* sub-block j: the low (even j) or high nibbles
                                                  * of qs[32 (j / 2) ..], q5_k's bit j of qh[l] */
        __m256i q = _mm256_loadu_si256(
            (const __m256i *)(sb + (WT == WTYPE_Q4_K ? 16 : 48) + 32 * (j / 2)));
        __m256i u = _mm256_and_si256(j % 2 ? _mm256_srli_epi16(q, 4) : q, nib);
        if (WT == WTYPE_Q5_K) {
            __m256i qh = _mm256_loadu_si256((const __m256i *)(sb + 16));
            qh = _mm256_and_si256(_mm256_srli_epi16(qh, j), _mm256_set1_epi8(1));
            u = _mm256_or_si256(u, _mm256_slli_epi16(qh, 4));
        }
        return u;
    }
    const int h = j / 4, k = j % 4; /* values 128h + 32k + 0..31 */
    if (WT == WTYPE_Q3_K) { /* the 2 bits at 2k of qs[32h + l], + 4 where bit 4h + k of
                             * hmask[l] is set (w + 4) */
        __m256i qs = _mm256_loadu_si256((const __m256i *)(sb + 32 + 32 * h));
        __m256i hm = _mm256_loadu_si256((const __m256i *)sb);
        hm = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * h + k), _mm256_set1_epi8(1));
        return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qs, 2 * k), _mm256_set1_epi8(3)),
                               _mm256_slli_epi16(hm, 2));
    }
    /* q6_k: ql's low (k < 2) or high nibbles, qh's bits 2k, 2k + 1 above them (w + 32) */
    __m256i ql = _mm256_loadu_si256((const __m256i *)(sb + 64 * h + 32 * (k & 1)));
    __m256i qh = _mm256_loadu_si256((const __m256i *)(sb + 128 + 32 * h));
    ql = _mm256_and_si256(k < 2 ? ql : _mm256_srli_epi16(ql, 4), nib);
    qh = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), _mm256_set1_epi8(3));
    return _mm256_or_si256(ql, _mm256_slli_epi16(qh, 4));
}

/* The start of the integer sums: c scaled to the type's offset (none for q8_0 and the types
 * without one). */
static inline __attribute__((always_inline)) int has_offset(wtype WT) {
    return WT == WTYPE_Q4_0 || WT == WTYPE_Q5_0 || WT == WTYPE_Q3_K || WT == WTYPE_Q6_K;
}

static inline __attribute__((always_inline)) __m256i start_of(wtype WT, __m256i c) {
    return _mm256_srai_epi32(c, WT == WTYPE_Q4_0 ? 4 : WT == WTYPE_Q5_0 ? 3 : WT == WTYPE_Q3_K ? 5 : 2);
}

/* One token's view of block j of a unit: its bytes and the start of its sums. */
typedef struct {
    __m256i q, s0;
} act_block;

static inline __attribute__((always_inline)) act_block act_of(wtype WT, const kern_a8_group *xg,
                                                              int j) {
    const kern_a8_group *g = xg + j / 2; /* xg: the unit's first group (its first block is even) */
    const int half = j % 2;
    act_block a;
    a.q = _mm256_loadu_si256((const __m256i *)(g->q + 32 * half));
    a.s0 = has_offset(WT) ? start_of(WT, _mm256_loadu_si256((const __m256i *)(g->c + 8 * half)))
                          : _mm256_setzero_si256();
    return a;
}

/* Block j's activation scale d_b in 8 lanes, from its group. (A broadcast of the row's dd[b]
 * instead made q8_0 one-row tiles 1.7x slower on this machine; the k-quants' unit products,
 * one load of dd per unit, did not.) */
static inline __attribute__((always_inline)) __m256 act_d(const kern_a8_group *xg, int j) {
    return _mm256_loadu_ps(xg[j / 2].d + 8 * (j % 2));
}

/* P (8 lanes) of weights u (unpack) against one token's block. */
static inline __attribute__((always_inline)) __m256i sums(wtype WT, __m256i u, __m256i uabs,
                                                          const act_block *a) {
    const __m256i ones = _mm256_set1_epi16(1);
    if (WT == WTYPE_Q8_0)
        return _mm256_madd_epi16(_mm256_maddubs_epi16(uabs, _mm256_sign_epi8(a->q, u)), ones);
    __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(u, a->q), ones);
    return has_offset(WT) ? _mm256_add_epi32(a->s0, p) : p;
}

#define I8_RT_MAX 8
#define I8_TT_MAX 8

/* RT rows (wr[i]) x TT tokens (activation rows xa + t * lda) over the whole row: acc[par][i][t]
 * the lanes of even (par 0) and odd blocks, mn[i][t] the mins. */
static inline __attribute__((always_inline)) void
int8_tile(wtype WT, const unsigned char *const *wr, int RT, const unsigned char *xa, size_t lda,
          int TT, int K, __m256 acc[2][I8_RT_MAX][I8_TT_MAX], __m256 mn[I8_RT_MAX][I8_TT_MAX]) {
    const int nb = K / 32;
#pragma GCC unroll 8
    for (int i = 0; i < RT; i++)
#pragma GCC unroll 8
        for (int t = 0; t < TT; t++)
            acc[0][i][t] = acc[1][i][t] = mn[i][t] = _mm256_setzero_ps();
    /* acc and mn wait in memory while a sweep runs: their address escapes here, and the
     * compiler barriers around each sweep below keep GCC from holding the other parity's
     * accumulators and the mins in registers through it (12 of the 16 at one token x 4 rows),
     * which made it spill the unpacked weights to the stack in the block loop. In cache, one
     * thread, ns per 64 weights at T=1: q4_k 2.7 -> 2.4-2.5, q6_k 4.0 -> 3.5, q4_0 3.1 -> 2.8. */
    __asm__ volatile("" : : "r"(acc), "r"(mn) : "memory");
    const int BB = kern_block_bytes(WT), UB = kern_is_kquant(WT) ? BB : 8 * BB; /* unit bytes */
    for (int b0 = 0; b0 < nb; b0 += 8) { /* a unit of 8 blocks */
        const int n = nb - b0 < 8 ? nb - b0 : 8;
        const unsigned char *un[I8_RT_MAX];
        const kern_a8_group *xg[I8_TT_MAX];
#pragma GCC unroll 8
        for (int i = 0; i < RT; i++) un[i] = wr[i] + (size_t)(b0 / 8) * UB;
#pragma GCC unroll 8
        for (int t = 0; t < TT; t++) xg[t] = (const kern_a8_group *)(xa + t * lda) + b0 / 2;
        unit_scales st[I8_RT_MAX];
#pragma GCC unroll 8
        for (int i = 0; i < RT; i++) stage_unit(WT, un[i], n, &st[i]);
        unit_products ad[I8_RT_MAX][I8_TT_MAX];
        if (kern_is_kquant(WT))
#pragma GCC unroll 8
            for (int t = 0; t < TT; t++) {
                __m256 dd = _mm256_loadu_ps(kern_a8_dd(xa + t * lda, K) + b0);
#pragma GCC unroll 8
                for (int i = 0; i < RT; i++) products(WT, &st[i], dd, &ad[i][t]);
            }
        if (kern_int8_min(WT)) { /* the unit's mins: M . d * s (k-quants), -m . d * s */
#pragma GCC unroll 8
            for (int t = 0; t < TT; t++) {
                const float *dsp = kern_a8_ds(xa + t * lda, K) + b0;
                __m256 ds = kern_is_kquant(WT) ? _mm256_loadu_ps(dsp) : maskload8(dsp, n);
#pragma GCC unroll 8
                for (int i = 0; i < RT; i++)
                    mn[i][t] = kern_block_min(WT) ? _mm256_fnmadd_ps(st[i].m, ds, mn[i][t])
                                                  : _mm256_fmadd_ps(st[i].m, ds, mn[i][t]);
            }
        }
#pragma GCC unroll 2
        for (int par = 0; par < 2; par++) {
            __m256 a[I8_RT_MAX][I8_TT_MAX];
#pragma GCC unroll 8
            for (int i = 0; i < RT; i++)
#pragma GCC unroll 8
                for (int t = 0; t < TT; t++) a[i][t] = acc[par][i][t];
            __asm__ volatile("" ::: "memory");
#pragma GCC unroll 4
            for (int jj = 0; jj < 4; jj++) {
                const int j = par + 2 * jj;
                if (j >= n) break;
                __m256i u[I8_RT_MAX], uabs[I8_RT_MAX];
                __m256 A[I8_RT_MAX]; /* the 32-value types: the block's d */
#pragma GCC unroll 8
                for (int i = 0; i < RT; i++) {
                    u[i] = unpack(WT, un[i], j);
                    uabs[i] = WT == WTYPE_Q8_0 ? _mm256_sign_epi8(u[i], u[i]) : u[i];
                    if (!kern_is_kquant(WT)) {
                        uint16_t h;
                        memcpy(&h, un[i] + (size_t)j * kern_block_bytes(WT), 2);
                        A[i] = _mm256_cvtph_ps(_mm_set1_epi16((short)h));
                    }
                }
#pragma GCC unroll 8
                for (int t = 0; t < TT; t++) {
                    act_block x = act_of(WT, xg[t], j);
#pragma GCC unroll 8
                    for (int i = 0; i < RT; i++) {
                        __m256 ad_j = kern_is_kquant(WT)
                                          ? block_products(WT, &ad[i][t], j)
                                          : _mm256_mul_ps(A[i], act_d(xg[t], j));
                        a[i][t] = _mm256_fmadd_ps(ad_j, _mm256_cvtepi32_ps(sums(WT, u[i], uabs[i], &x)),
                                                  a[i][t]);
                    }
                }
            }
            __asm__ volatile("" ::: "memory");
#pragma GCC unroll 8
            for (int i = 0; i < RT; i++)
#pragma GCC unroll 8
                for (int t = 0; t < TT; t++) acc[par][i][t] = a[i][t];
        }
    }
    if (nb % 2) /* the missing last odd block: zero terms, fma(0, 0, lane) as the reference */
#pragma GCC unroll 8
        for (int i = 0; i < RT; i++)
#pragma GCC unroll 8
            for (int t = 0; t < TT; t++)
                acc[1][i][t] = _mm256_fmadd_ps(_mm256_setzero_ps(), _mm256_setzero_ps(), acc[1][i][t]);
}

/* RT rows at w (ws bytes apart; rows past `valid` repeat the last and are not stored) x TT
 * tokens, results step apart. */
static inline __attribute__((always_inline)) void
int8_rows(wtype WT, const unsigned char *w, size_t ws, int RT, int valid, const unsigned char *xa,
          size_t lda, int TT, int K, float *y, size_t ldy, size_t step) {
    const unsigned char *wr[I8_RT_MAX];
#pragma GCC unroll 8
    for (int i = 0; i < RT; i++) wr[i] = w + (size_t)(i < valid ? i : valid - 1) * ws;
    __m256 acc[2][I8_RT_MAX][I8_TT_MAX], mn[I8_RT_MAX][I8_TT_MAX];
    int8_tile(WT, wr, RT, xa, lda, TT, K, acc, mn);
    for (int i = 0; i < valid; i++)
        for (int t = 0; t < TT; t++) {
            float v = fold256x2(acc[0][i][t], acc[1][i][t]);
            if (kern_int8_min(WT)) v -= fold256(mn[i][t]);
            y[t * ldy + i * step] = v;
        }
}

/* Tile shapes: one token, 4 rows (far apart when the matrix streams: kern_rowgroup); more, 2
 * rows x 4 tokens, the 1-3 tokens left 2 x 1-3. Measured on one core of this machine (Zen 3
 * VM, kernel_speed, in cache, ns per 64 weights and token, T = 8 / 64): q4_k 2 x 4 2.3 / 2.6,
 * 4 x 2 2.8 / 2.9, 3 x 3 2.6 / 2.7, 4 x 3 3.1 / 3.0, 1 x 8 2.4 / 2.5; q8_0 2 x 4 2.0 / 2.2,
 * 4 x 2 2.5 / 2.7; 2 x 6 no better. At one token 8 rows were no faster than 4. */
#define I8_RT1 4
#define I8_RT 2
#define I8_TT 4

/* Several tokens: a block of row groups whose weights take about I8_BLOCK_BYTES (they stay in L2)
 * meets one tile of tokens after another, so a tile's activation rows (3 bytes per value,
 * kernels_isa.h) are read once per block, not once per row group: at 64 tokens they did not
 * fit in L2 and streamed from L3 for every 2 rows (1.1B q8_0 / Q4_K_M, 1 thread: 18.2 / 16.6
 * rows/s at 64 tokens, below the 20.9 / 14.5 at 8). */
#define I8_BLOCK_BYTES (128 << 10)

static inline __attribute__((always_inline)) void
int8_matmul(wtype WT, const unsigned char *w, size_t ldw, int rows, int K, const unsigned char *xa,
            size_t lda, int T, float *y, size_t ldy, int streams) {
    if (T == 1) {
        KERN_ROWS_LOOP(I8_RT1, rows, streams, w, ldw,
                       int8_rows(WT, wr, ws, I8_RT1, valid, xa, lda, 1, K, y + row, ldy, step));
        return;
    }
    kern_rowgroups g = kern_rowgroups_of(rows, I8_RT, streams);
    int per = (int)(I8_BLOCK_BYTES / (I8_RT * ldw));
    per = per < 1 ? 1 : per;
    for (int j0 = 0; j0 < g.groups; j0 += per) {
        int j1 = g.groups - j0 < per ? g.groups : j0 + per;
        for (int t = 0; t < T; t += I8_TT) {
            const int tt = T - t < I8_TT ? T - t : I8_TT;
            const unsigned char *xt = xa + t * lda;
            for (int j = j0; j < j1; j++) {
                int row, valid, step;
                kern_rowgroup(&g, j, rows, I8_RT, &row, &valid, &step);
                const unsigned char *wr = w + (size_t)row * ldw;
                size_t ws = (size_t)step * ldw;
                float *yt = y + t * ldy + row;
                if (tt == I8_TT)
                    int8_rows(WT, wr, ws, I8_RT, valid, xt, lda, I8_TT, K, yt, ldy, step);
                else if (tt == 3)
                    int8_rows(WT, wr, ws, I8_RT, valid, xt, lda, 3, K, yt, ldy, step);
                else if (tt == 2)
                    int8_rows(WT, wr, ws, I8_RT, valid, xt, lda, 2, K, yt, ldy, step);
                else
                    int8_rows(WT, wr, ws, I8_RT, valid, xt, lda, 1, K, yt, ldy, step);
            }
        }
    }
}

/* Lane m of 8 packed rows (u: the bytes of their 4 values, w plus the type's offset) against a
 * token's block (group g, half par; st: the block's 8 starts, already scaled by start_of): P plus
 * the start of the sums, as sums() forms it. */
static inline __attribute__((always_inline)) __m256i packed_lane(wtype WT, __m256i u,
                                                                 const kern_a8_group *g, int par,
                                                                 const int32_t *st, int m) {
    int32_t x4;
    memcpy(&x4, g->q + 32 * par + 4 * m, 4);
    const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_set1_epi32(x4)),
                                        _mm256_set1_epi16(1));
    return has_offset(WT) ? _mm256_add_epi32(p, _mm256_set1_epi32(st[m])) : p;
}

/* q4_k: the 64 six-bit values (v = 8j + i: sub-block j, row i) of the scales or the mins of a
 * packed unit (wtype_q4_k_pack8), low bits at lo, high bits at hi, as bytes v at out. */
static inline __attribute__((always_inline)) void q4k_unpack6(const unsigned char *lo,
                                                              const unsigned char *hi,
                                                              unsigned char *out) {
    const __m256i nib = _mm256_set1_epi8(15), three = _mm256_set1_epi8(3);
    const __m256i L = _mm256_loadu_si256((const __m256i *)lo);
    const __m128i T = _mm_loadu_si128((const __m128i *)hi);
    const __m256i t0 = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(T, 2), T), three);
    const __m256i t1 =
        _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(T, 6), _mm_srli_epi16(T, 4)), three);
    _mm256_storeu_si256((__m256i *)out,
                        _mm256_or_si256(_mm256_and_si256(L, nib), _mm256_slli_epi16(t0, 4)));
    _mm256_storeu_si256(
        (__m256i *)(out + 32),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(L, 4), nib), _mm256_slli_epi16(t1, 4)));
}

/* q6_k: the top 2 bits of lane-word k's values (byte b: bits 2k, 2k + 1 of h) moved to bits 4-5
 * of each byte (16-bit shifts: the bits they carry across bytes are masked off). */
static inline __attribute__((always_inline)) __m256i q6_top(__m256i h, int k) {
    const __m256i m30 = _mm256_set1_epi8(0x30);
    if (k == 0) return _mm256_and_si256(_mm256_slli_epi16(h, 4), m30);
    if (k == 1) return _mm256_and_si256(_mm256_slli_epi16(h, 2), m30);
    if (k == 2) return _mm256_and_si256(h, m30);
    return _mm256_and_si256(_mm256_srli_epi16(h, 2), m30);
}

/* fold256 of 8 rows at once, v[m] holding lane m of rows 0-7: m + m+4, + m+2, + m+1 (v is
 * overwritten). */
static inline __attribute__((always_inline)) __m256 fold_rows8(__m256 v[8]) {
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) v[m] = _mm256_add_ps(v[m], v[m + 4]);
#pragma GCC unroll 2
    for (int m = 0; m < 2; m++) v[m] = _mm256_add_ps(v[m], v[m + 2]);
    return _mm256_add_ps(v[0], v[1]);
}

/* The `lines` cache lines from near into L1, and the same lines `far` bytes further on into L2
 * (kernel_speed q4_k, streaming, one thread: the packed tile's median 3.2 -> 2.85 ns per 64
 * weights with the far lines 8 units ahead; 16 units ahead, or the far lines alone, or into L3,
 * 3.0-3.2). */
static inline __attribute__((always_inline)) void prefetch_ahead(const unsigned char *near,
                                                                 int lines, size_t far) {
#pragma GCC unroll 4
    for (int l = 0; l < lines; l++) {
        _mm_prefetch((const char *)near + 64 * l, _MM_HINT_T0);
        _mm_prefetch((const char *)near + far + 64 * l, _MM_HINT_T1);
    }
}

/* One token over packed rows (kernels.h, "packed rows"; q4_0: wtype_q4_0_pack8, q4_k:
 * wtype_q4_k_pack8, q6_k: wtype_q6_k_pack8). Lane i of a register is row i of the group, so lane
 * m of the canonical 16 is one register for all 8 rows; a block's scales A * d_b are conversions
 * and multiplications for 8 rows at once (q4_0: one, the rows' d; q4_k: one, d * sc of the
 * sub-block, staged per unit with its mins as stage_unit does; q6_k: two, d * sc of the block's
 * sub-blocks for lanes 0-3 and 4-7, as int8_tile forms them); a 32-byte load holds the low
 * nibbles of lanes k and k + 4 of every row (q4_k: lane m of the even sub-block in the low
 * nibbles and of the odd one in the high; q6_k: two registers of top bits complete the 8 lanes);
 * the activations' 4 bytes and c of a lane are broadcasts. The same fma(A * d_b, (float)P, lane)
 * per row and lane as int8_tile, in the same block order, so the same bits; the folds are
 * vertical (lane j + j+8 of all 8 rows in one add; q4_k's mins as fold256). Even and odd blocks
 * of a unit go in two sweeps, as in int8_tile, so the 8 lanes of a parity stay in registers. A
 * group is one sequential stream (8 x ldw bytes), a unit of it 8 x the row's unit. When the
 * matrix streams (prefetch), each block fetches its share of the lines of the next unit (q4_0:
 * 1 KB ahead) into L1 and of the unit 8 further on into L2 (prefetch_ahead). kernel_speed at T =
 * 1, one thread, ns per 64 weights, in cache / streaming 256 MB, plain (4 rows far apart in
 * int8_tile) -> packed: q4_0 2.7-2.9 -> 1.9-2.0 / 3.3-3.6 -> 2.9-3.3 (the plain read's speed);
 * q4_k 2.5-3.3 -> 2.0 / 3.4-4.5 -> 2.6-3.5; q6_k 3.4-3.5 -> 2.9-3.1 / 4.5-5.0 -> 3.7-4.4 (other
 * L1 prefetch distances, 1 KB to 2 super-blocks, no better). */
static inline __attribute__((always_inline)) void packed_tile(wtype WT, const unsigned char *p,
                                                              size_t ldw, int groups, int K,
                                                              const kern_a8_group *xg, float *y,
                                                              int prefetch) {
    const int nb = K / 32;
    const int BB = kern_block_bytes(WT);
    const size_t UB = 8 * (size_t)(kern_is_kquant(WT) ? BB : 8 * BB); /* a unit of 8 rows */
    const __m256i nib = _mm256_set1_epi8(15);
    const float *ds = kern_a8_ds(xg, K);
    /* The starts scaled once per call, for all its groups, instead of a shift per lane and group
     * (kernel_speed, in cache, 4 runs each: q4_0 2.01-2.67 -> 1.90-1.96 ns per 64 weights, q6_k
     * 2.93-3.79 -> 2.76-2.84). At most K / 4 values (KERN_PACKED_MAX_K). */
    int32_t st[has_offset(WT) ? 8 * nb : 1];
    if (has_offset(WT))
        for (int b = 0; b < nb; b++) {
            const __m256i c = _mm256_loadu_si256((const __m256i *)(xg[b / 2].c + 8 * (b % 2)));
            _mm256_storeu_si256((__m256i *)(st + 8 * b), start_of(WT, c));
        }
    for (int gi = 0; gi < groups; gi++) {
        const unsigned char *grp = p + (size_t)gi * 8 * ldw;
        __m256 acc[2][8], mn[8], A[8]; /* mn: q4_k's mins, lane i row i; A: its d * sc */
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) acc[0][m] = acc[1][m] = mn[m] = _mm256_setzero_ps();
        __asm__ volatile("" : : "r"(acc), "r"(mn), "r"(A) : "memory"); /* as int8_tile's */
        for (int b0 = 0; b0 < nb; b0 += 8) {
            const int n = nb - b0 < 8 ? nb - b0 : 8;
            const unsigned char *un = grp + (size_t)(b0 / 8) * UB;
            const __m256 d8 = WT == WTYPE_Q6_K || WT == WTYPE_Q4_K
                                  ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)un))
                                  : _mm256_setzero_ps();
            if (WT == WTYPE_Q4_K) { /* the unit's scales d * sc and mins, as stage_unit */
                unsigned char sc[64], mi[64];
                q4k_unpack6(un + 32, un + 96, sc);
                q4k_unpack6(un + 64, un + 112, mi);
                const __m256 dm8 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(un + 16)));
#pragma GCC unroll 8
                for (int j = 0; j < 8; j++) {
                    const __m128i scj = _mm_loadl_epi64((const __m128i *)(sc + 8 * j)),
                                  mij = _mm_loadl_epi64((const __m128i *)(mi + 8 * j));
                    A[j] = _mm256_mul_ps(d8, bytes_to_f32(scj, 0));
                    const __m256 M = _mm256_mul_ps(dm8, bytes_to_f32(mij, 0));
                    mn[j] = _mm256_fmadd_ps(M, _mm256_broadcast_ss(ds + b0 + j), mn[j]);
                }
            }
#pragma GCC unroll 2
            for (int par = 0; par < 2; par++) {
                __m256 a[8];
#pragma GCC unroll 8
                for (int m = 0; m < 8; m++) a[m] = acc[par][m];
                __asm__ volatile("" ::: "memory");
#pragma GCC unroll 4
                for (int jj = 0; jj < 4; jj++) {
                    const int j = par + 2 * jj;
                    if (j >= n) break;
                    const kern_a8_group *g = xg + (b0 + j) / 2;
                    const int32_t *stj = has_offset(WT) ? st + 8 * (b0 + j) : st;
                    const __m256 db = _mm256_broadcast_ss(g->d + 8 * par);
                    const unsigned char *blk = un + (size_t)j * 144, *lo;
                    __m256 s[2];
                    __m256i H[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
                    if (WT == WTYPE_Q4_K) {
                        if (prefetch) prefetch_ahead(un + UB + 64 * (12 * par + 3 * jj), 3, 8 * UB);
                        s[0] = s[1] = _mm256_mul_ps(A[j], db);
                        lo = un + 128 + 256 * (j / 2);
                    } else if (WT == WTYPE_Q6_K) {
                        if (prefetch) prefetch_ahead(un + UB + 64 * (16 * par + 4 * jj), 4, 8 * UB);
#pragma GCC unroll 2
                        for (int h = 0; h < 2; h++) {
                            const __m128i sc =
                                _mm_loadl_epi64((const __m128i *)(un + 16 + 8 * (2 * j + h)));
                            s[h] = _mm256_mul_ps(_mm256_mul_ps(d8, bytes_to_f32(sc, 1)), db);
                        }
                        lo = un + 144 + 128 * j;
#pragma GCC unroll 2
                        for (int h = 0; h < 2; h++)
                            H[h] = _mm256_loadu_si256(
                                (const __m256i *)(un + 1168 + 64 * j + 32 * h));
                    } else { /* q4_0: the block is its rows' d, then its words */
                        if (prefetch) prefetch_ahead(blk + 1024, 3, 8 * UB);
                        s[0] = s[1] = _mm256_mul_ps(
                            _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)blk)), db);
                        lo = blk + 16;
                    }
                    if (WT == WTYPE_Q4_K) { /* lane m: word m's low (even j) or high nibbles */
#pragma GCC unroll 8
                        for (int m = 0; m < 8; m++) {
                            const __m256i q = _mm256_loadu_si256((const __m256i *)(lo + 32 * m));
                            const __m256i u =
                                _mm256_and_si256(par ? _mm256_srli_epi16(q, 4) : q, nib);
                            a[m] = _mm256_fmadd_ps(
                                s[0], _mm256_cvtepi32_ps(packed_lane(WT, u, g, par, stj, m)), a[m]);
                        }
                    } else { /* word k: lane k in the low nibbles, k + 4 in the high */
#pragma GCC unroll 4
                        for (int k = 0; k < 4; k++) {
                            const __m256i q = _mm256_loadu_si256((const __m256i *)(lo + 32 * k));
                            __m256i u[2] = {_mm256_and_si256(q, nib),
                                            _mm256_and_si256(_mm256_srli_epi16(q, 4), nib)};
                            if (WT == WTYPE_Q6_K)
#pragma GCC unroll 2
                                for (int h = 0; h < 2; h++)
                                    u[h] = _mm256_or_si256(u[h], q6_top(H[h], k));
#pragma GCC unroll 2
                            for (int h = 0; h < 2; h++) {
                                const __m256i P = packed_lane(WT, u[h], g, par, stj, k + 4 * h);
                                a[k + 4 * h] =
                                    _mm256_fmadd_ps(s[h], _mm256_cvtepi32_ps(P), a[k + 4 * h]);
                            }
                        }
                    }
                }
                __asm__ volatile("" ::: "memory");
#pragma GCC unroll 8
                for (int m = 0; m < 8; m++) acc[par][m] = a[m];
            }
        }
        if (nb % 2) /* the missing last odd block, as int8_tile */
#pragma GCC unroll 8
            for (int m = 0; m < 8; m++)
                acc[1][m] = _mm256_fmadd_ps(_mm256_setzero_ps(), _mm256_setzero_ps(), acc[1][m]);
        /* the canonical fold (fold256x2), one vertical add per step for all 8 rows; q4_k minus
         * its mins' fold (fold256) */
        __m256 f[8];
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++) f[m] = _mm256_add_ps(acc[0][m], acc[1][m]);
        __m256 r = fold_rows8(f);
        if (WT == WTYPE_Q4_K) r = _mm256_sub_ps(r, fold_rows8(mn));
        _mm256_storeu_ps(y + 8 * gi, r);
    }
}

#define PACKED(fn, WT)                                                                             \
    void fn(const unsigned char *p, size_t ldw, int groups, int K, const void *xa, float *y,      \
            int streams) {                                                                         \
        if (streams)                                                                               \
            packed_tile(WT, p, ldw, groups, K, xa, y, 1);                                          \
        else                                                                                       \
            packed_tile(WT, p, ldw, groups, K, xa, y, 0);                                          \
    }
PACKED(kern_avx2_packed_q4_0, WTYPE_Q4_0)
PACKED(kern_avx2_packed_q4_k, WTYPE_Q4_K)
PACKED(kern_avx2_packed_q6_k, WTYPE_Q6_K)

/* One activation row (kern_act_quantize_isa, which zeroes it first), the scalar quantize_row's
 * operations in 8 lanes: |x| by clearing the sign, the block's maximum by vpmaxsd on its bits
 * (as the scalar loop: a NaN wins; the maximum of non-negative floats in any order; as fast as
 * vmaxps, which was here and let a NaN vanish), d and 1 / d as scalars, x * (1 / d) with NaN
 * made 0, limited to +-127 and rounded by vcvtps2dq (to nearest even, as the scalar's 1.5 * 2^23 trick), the sums of 4 by two
 * horizontal adds.
 * The scalar loop took 3% of a 64-row pass of 110M Q4_K_M on one thread, serially. The loops
 * over the 4 vectors carry unroll pragmas: without them GCC -O2 kept loops over stack
 * copies, written in 16-byte pieces and read back in 32, which stalled every load on store
 * forwarding (hot, one row: K = 768 1.29-1.34 -> 0.48 us, K = 2048 3.32 -> 1.16 us; the 110M
 * Q4_K_M one-row pass on two threads, where the main thread quantizes while the worker waits,
 * 2.81-2.94 -> 2.62-2.76 ms, medians of 8 and 10 alternations; its 64-row pass 79.6 -> 75.3
 * ms, medians of 4). */
/* One block of 32 activations (kern_a8_block_ref's bytes): its q in order, the sums of q per 4
 * values (m0..m7) and d. */
static inline __attribute__((always_inline)) void quantize_block(const float *xb, __m256i *bytes,
                                                                 __m256i *s4, float *d_out) {
    const __m256 sign = _mm256_set1_ps(-0.0f), lim = _mm256_set1_ps(127.0f),
                 nlim = _mm256_set1_ps(-127.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256 v[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) v[i] = _mm256_loadu_ps(xb + 8 * i);
    /* the largest |x| as integer bits, as the reference: a NaN wins */
    __m256i m = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++)
        m = _mm256_max_epi32(_mm256_castps_si256(_mm256_andnot_ps(sign, v[i])), m);
    __m128i m4 = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, 0x4E));
    m4 = _mm_max_epi32(m4, _mm_shuffle_epi32(m4, 0xB1));
    const float amax = _mm_cvtss_f32(_mm_castsi128_ps(m4));
    const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    __m256i q[4];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        __m256 p = _mm256_mul_ps(v[i], _mm256_set1_ps(id));
        p = _mm256_and_ps(p, _mm256_cmp_ps(p, p, _CMP_ORD_Q));
        q[i] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(p, nlim), lim));
    }
    /* sums of 4: [m0 m2 m4 m6 | m1 m3 m5 m7] -> m0..m7 */
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(q[0], q[1]), _mm256_hadd_epi32(q[2], q[3]));
    *s4 = _mm256_permutevar8x32_epi32(h, order);
    __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    *bytes = _mm256_permutevar8x32_epi32(b, order);
    *d_out = d;
}

/* The sum of the 4 lanes of a 128-bit vector of int32. */
static inline int hsum4(__m128i t) {
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4E));
    t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1));
    return _mm_cvtsi128_si32(t);
}

void kern_avx2_act_quantize_row(const float *x, int K, void *out) {
    kern_a8_group *g = out;
    const int ng = kern_a8_groups(K);
    float *ds = (float *)(g + ng), *dd = ds + 2 * ng;
    for (int b = 0; b < K / 32; b++) {
        __m256i bytes, s4;
        float d;
        quantize_block(x + 32 * b, &bytes, &s4, &d);
        kern_a8_group *gr = &g[b / 2];
        const int half = b % 2;
        _mm256_storeu_si256((__m256i *)(gr->q + 32 * half), bytes);
        _mm256_storeu_si256((__m256i *)(gr->c + 8 * half),
                            _mm256_mullo_epi32(s4, _mm256_set1_epi32(-128)));
        _mm256_storeu_ps(gr->d + 8 * half, _mm256_set1_ps(d));
        ds[b] = d * (float)hsum4(_mm_add_epi32(_mm256_castsi256_si128(s4),
                                               _mm256_extracti128_si256(s4, 1)));
        dd[b] = d;
    }
}

void kern_avx2_act8b_quantize_row(const float *x, int b0, int b1, unsigned char *chunk, int n,
                                  int i) {
    for (int b = b0; b < b1; b++) {
        unsigned char *rec = chunk + (size_t)b * n * KERN_A8B_REC;
        __m256i bytes, s4;
        float d;
        quantize_block(x + 32 * b, &bytes, &s4, &d);
        _mm256_storeu_si256((__m256i *)(rec + 32 * i), bytes);
        kern_a8b_put_sums(rec, n, i, d, hsum4(_mm256_castsi256_si128(s4)),
                          hsum4(_mm256_extracti128_si256(s4, 1)));
    }
}

#define INT8(fn, WT)                                                                               \
    void fn(const unsigned char *w, size_t ldw, int rows, int K, const void *xa, size_t lda,       \
            int T, float *y, size_t ldy, int streams) {                                            \
        int8_matmul(WT, w, ldw, rows, K, xa, lda, T, y, ldy, streams);                             \
    }
INT8(kern_avx2_int8_q8_0, WTYPE_Q8_0)
INT8(kern_avx2_int8_q4_0, WTYPE_Q4_0)
INT8(kern_avx2_int8_q5_0, WTYPE_Q5_0)
INT8(kern_avx2_int8_q4_1, WTYPE_Q4_1)
INT8(kern_avx2_int8_q5_1, WTYPE_Q5_1)
INT8(kern_avx2_int8_q3_k, WTYPE_Q3_K)
INT8(kern_avx2_int8_q4_k, WTYPE_Q4_K)
INT8(kern_avx2_int8_q5_k, WTYPE_Q5_K)
INT8(kern_avx2_int8_q6_k, WTYPE_Q6_K)
#endif
