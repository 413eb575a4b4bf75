/* kernels_avx512_vnni.c: the int8 mode's AVX-512 tiles (kernels.h, "the int8 mode"), compiled
 * with AVX-512 VNNI and run only on CPUs that have it (kernels_int8.c checks; without it the
 * AVX2 tiles run, same bits).
 *
 * A group of 64 values is one register: the weights as 64 unsigned bytes u, the activations'
 * 64 signed bytes, and vpdpbusd sums u * q over each 4 values into the 16 lanes, starting from
 * the activation row's stored c (-128 times the 4 values' sum) scaled to the type's offset:
 * q8_0 weights are made unsigned by + 128 (xor 0x80), so starting at -128 * sum leaves exactly
 * the sum of w * q; q4_0's nibbles are w + 8 (start -8 * sum = c >> 4), q5_0's 5-bit values
 * w + 16 (start c >> 3), q3_k's 3-bit values w + 4 (start c >> 5), q6_k's 6-bit values w + 32
 * (start c >> 2), and the values of q4_1, q5_1, q4_k and q5_k w itself (start 0); a 5th (q3_k:
 * 3rd) bit is added as 16 (4) under a byte mask. Mins (q4_1, q5_1 per block; q4_k, q5_k per
 * sub-block) go to an 8-lane accumulator per result, as kernels.h orders them. Each lane's
 * integer is the P of kernels.h, exact, so its conversion, times the scale vector A * d (the
 * lane's two scales), fused into the lane's accumulator is the reference's order. Lanes 0-7
 * hold block 2p and 8-15 block 2p + 1 of group p, as the canonical lanes 8 (b mod 2) + m want.
 * The tile shapes are the exact kernels' (kernels_avx512.c): 4 rows x 4 tokens; at one token 8
 * rows in the cache, 4 far apart when the matrix streams (kern_rowgroup). */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

#if KERN_X86
#include <stdint.h>
#include <string.h>

#include "model/kernels/kernels_avx512.h"

/* The staged 16 per-16-value scales (q3_k, q6_k: stage_block's lane c) of group j: sub-block
 * 4j + m / 4 in lane m. */
static inline __m512 scales16(const stage *st, int j) {
    const __m512i sub = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    return _mm512_permutexvar_ps(_mm512_add_epi32(sub, _mm512_set1_epi32(4 * j)),
                                 _mm512_loadu_ps(st->s));
}

/* Two f16 scales (block 2p and 2p + 1, or 0 for a missing second block) in lanes 0-7, 8-15. */
static inline __m512 two_halves(const unsigned char *b0, const unsigned char *b1) {
    uint16_t h0, h1 = 0;
    memcpy(&h0, b0, 2);
    if (b1) memcpy(&h1, b1, 2);
    /* one conversion and one permute (q4_0 in cache, 1 thread: 1.86 -> 1.72 ns per 64 weights
     * against two broadcasts and an insert; q8_0 within the noise) */
    return bcast_half_pair((uint32_t)h0 | (uint32_t)h1 << 16);
}

typedef struct {
    __m512i u; /* 64 unsigned weights */
    __m512 a;  /* the lanes' scales A */
} wgroup;

/* Group p of the row at r (for k-quants, st holds its super-block's scales); `one`: only the
 * first block exists (a row of an odd number of 32-value blocks): nothing past it is read. */
static inline __attribute__((always_inline)) wgroup load_group(wtype WT, const unsigned char *r,
                                                               int p, int one, const stage *st) {
    wgroup g;
    if (WT == WTYPE_Q8_0) {
        const unsigned char *b = r + (size_t)(2 * p) * 34;
        __m256i lo = _mm256_loadu_si256((const __m256i *)(b + 2));
        __m256i hi = one ? _mm256_setzero_si256() : _mm256_loadu_si256((const __m256i *)(b + 36));
        g.u = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1),
                               _mm512_set1_epi8((char)0x80));
        g.a = two_halves(b, one ? NULL : b + 34);
    } else if (WT == WTYPE_Q4_0 || WT == WTYPE_Q5_0 || kern_block_min(WT)) {
        const int BB = kern_block_bytes(WT), qs = kern_qs_at(WT);
        const unsigned char *b = r + (size_t)(2 * p) * BB;
        /* q0 q0 q1 q1 by broadcast loads and one insert, the 2nd and 4th quarters shifted:
         * lo0 hi0 lo1 hi1 with one shuffle where an insert, a widening insert and a lane shuffle
         * were three (in cache, 1 thread, best of 6: 1.71 -> 1.63 ns per 64 weights at T=1,
         * streaming 1.89 -> 1.70) */
        __m256i q0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b + qs)));
        __m256i q1 = one ? _mm256_setzero_si256()
                         : _mm256_broadcastsi128_si256(
                               _mm_loadu_si128((const __m128i *)(b + BB + qs)));
        __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
        v = _mm512_mask_srli_epi16(v, (__mmask32)0xff00ff00u, v, 4);
        g.u = _mm512_and_si512(v, _mm512_set1_epi8(15));
        if (WT == WTYPE_Q5_0 || WT == WTYPE_Q5_1) { /* bit v of qh: value v's 5th bit, + 16 */
            uint32_t h0, h1 = 0;
            memcpy(&h0, b + kern_qh_at(WT), 4);
            if (!one) memcpy(&h1, b + BB + kern_qh_at(WT), 4);
            g.u = _mm512_mask_add_epi8(g.u, (__mmask64)h0 | (__mmask64)h1 << 32, g.u,
                                       _mm512_set1_epi8(16));
        }
        g.a = two_halves(b, one ? NULL : b + BB);
    } else if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) { /* group j: low nibbles of qs[32j..],
                                                         * then the high ones */
        int j = p % 4;
        const unsigned char *b = r + (size_t)(p / 4) * kern_block_bytes(WT);
        const int qs = WT == WTYPE_Q5_K ? 48 : 16;
        __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + qs + 32 * j)));
        v = _mm512_mask_srli_epi16(v, (__mmask32)0xffff0000u, v, 4);
        g.u = _mm512_and_si512(v, _mm512_set1_epi8(15));
        if (WT == WTYPE_Q5_K) { /* the 5th bits: bit 2j of qh[l] (low half), 2j + 1 (high) */
            __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 16)));
            __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << 2 * j)),
                                             _mm256_set1_epi8((char)(2 << 2 * j)), 1);
            g.u = _mm512_mask_add_epi8(g.u, _mm512_test_epi8_mask(qh, bit), g.u,
                                       _mm512_set1_epi8(16));
        }
        /* one permute of the staged scales (the compiler turns two broadcasts and an insert
         * into three shuffles, the port this loop is short of: in cache, 1 thread, 2.23 -> 1.76
         * ns per 64 weights; 1.1B Q4_K_M T=1 pass 1.05-1.26x faster) */
        g.a = _mm512_permutexvar_ps(_mm512_add_epi32(halves_index(), _mm512_set1_epi32(2 * j)),
                                    _mm512_loadu_ps(st->s));
    } else if (WT == WTYPE_Q3_K) { /* group j: values 128h + 32k + 0..31, k = 2(j % 2) and the
                                      * next; u = the 2 bits at 2k of qs[32h + l], + 4 where bit
                                      * 4h + k of hmask[l] is set (w + 4) */
        int j = p % 4, h = j / 2, k0 = 2 * (j % 2);
        const unsigned char *b = r + (size_t)(p / 4) * kern_block_bytes(WT);
        __m512i qs = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 32 + 32 * h)));
        const __m512i shift = _mm512_inserti64x4(_mm512_set1_epi16((short)(2 * k0)),
                                                 _mm256_set1_epi16((short)(2 * k0 + 2)), 1);
        g.u = _mm512_and_si512(_mm512_srlv_epi16(qs, shift), _mm512_set1_epi8(3));
        __m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)b));
        const __m512i bit = _mm512_inserti64x4(_mm512_set1_epi8((char)(1 << (4 * h + k0))),
                                               _mm256_set1_epi8((char)(2 << (4 * h + k0))), 1);
        g.u = _mm512_mask_add_epi8(g.u, _mm512_test_epi8_mask(hm, bit), g.u, _mm512_set1_epi8(4));
        g.a = scales16(st, j);
    } else { /* q6_k: group j = values 128h + 32k + 0..31 for k = 2(j % 2) and the next */
        int j = p % 4, h = j / 2, k0 = 2 * (j % 2);
        const unsigned char *b = r + (size_t)(p / 4) * 210;
        __m512i ql = _mm512_loadu_si512((const void *)(b + 64 * h));
        ql = j % 2 ? _mm512_srli_epi16(ql, 4) : ql;
        __m512i qh =
            _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(b + 128 + 32 * h)));
        /* bits 2k, 2k+1 of each byte to bits 4, 5 by one variable shift of the 16-bit words
         * (k = k0 in the low half, k0 + 1 in the high half: left 4 / 2 for k0 = 0, right 0 / 2
         * for k0 = 2; what crosses into the other byte is masked off), then one ternary logic
         * op puts them above ql's nibble: three ops where shift, masked shift, and, shift and or
         * took five (q6_k in cache, 1 thread: 2.22 -> 1.93 ns per 64 weights at T=1,
         * 1.19 -> 1.09 at T=4) */
        const __m512i lo4_hi2 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
        const __m512i lo0_hi2 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
        qh = k0 ? _mm512_srlv_epi16(qh, lo0_hi2) : _mm512_sllv_epi16(qh, lo4_hi2);
        qh = _mm512_and_si512(qh, _mm512_set1_epi8(0x30));
        g.u = _mm512_ternarylogic_epi32(ql, _mm512_set1_epi8(15), qh, 0xEA); /* a & b | c */
        g.a = scales16(st, j);
    }
    return g;
}

/* The start of the integer sums: c scaled to the type's offset (see the header comment). */
static inline __attribute__((always_inline)) __m512i start_of(wtype WT, __m512i c) {
    switch (WT) {
    case WTYPE_Q8_0:
        return c;
    case WTYPE_Q4_0:
        return _mm512_srai_epi32(c, 4);
    case WTYPE_Q5_0:
        return _mm512_srai_epi32(c, 3);
    case WTYPE_Q6_K:
        return _mm512_srai_epi32(c, 2);
    case WTYPE_Q3_K:
        return _mm512_srai_epi32(c, 5);
    default:
        return _mm512_setzero_si512();
    }
}

/* The 8-lane min accumulator's fold (kernels.h: j + j+4, + j+2, + j+1). */
static inline float fold256(__m256 a) {
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

/* q4_1, q5_1: the mins of group p's two blocks (0 for a missing second one), for lanes 2p and
 * 2p + 1 (mod 8) of the 8-lane min accumulators, kept until min_flush. */
static inline __attribute__((always_inline)) void min_pair(wtype WT, const unsigned char *const *wr,
                                                           int RT, int p, int one,
                                                           float m8[][8]) {
    const int BB = kern_block_bytes(WT), lane = 2 * (p % 4);
#pragma GCC unroll 16
    for (int i = 0; i < RT; i++) {
        const unsigned char *b = wr[i] + (size_t)(2 * p) * BB;
        uint16_t h0, h1 = 0;
        memcpy(&h0, b + 2, 2);
        if (!one) memcpy(&h1, b + BB + 2, 2); /* nothing past the row is read */
        m8[i][lane] = _cvtsh_ss(h0);
        m8[i][lane + 1] = _cvtsh_ss(h1);
    }
}

/* q4_1, q5_1: blocks 8u..8u+7 done: lane j takes fma(-m, d * s, lane) for block 8u + j
 * (kernels.h; -(m * ds) + lane is one rounding, as fma(-m, ds, lane)); blocks past the row's end
 * give 0 * 0, which leaves the lane as it is. */
static inline __attribute__((always_inline)) void min_flush(const unsigned char *xa, size_t lda,
                                                            int K, int RT, int TT, int u,
                                                            float m8[][8], __m256 *accm) {
    const int nb = K / 32, left = nb - 8 * u;
    const __mmask8 valid = (__mmask8)(left >= 8 ? 0xff : (1u << left) - 1);
#pragma GCC unroll 16
    for (int t = 0; t < TT; t++) {
        __m256 ds = _mm256_maskz_loadu_ps(valid, kern_a8_ds(xa + t * lda, K) + 8 * u);
#pragma GCC unroll 16
        for (int i = 0; i < RT; i++)
            accm[t * RT + i] = _mm256_fnmadd_ps(_mm256_loadu_ps(m8[i]), ds, accm[t * RT + i]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < RT; i++) memset(m8[i], 0, sizeof m8[i]);
}

/* RT rows x TT tokens, RT * TT <= 16, one 16-lane accumulator each (lane t * RT + i of the
 * fold, as the exact tiles); rows past `rows` reuse the last and are not stored. PF: the rows
 * stream from memory, prefetched ahead (prefetch_rows). */
static inline __attribute__((always_inline)) void tile(wtype WT, const unsigned char *w, size_t ldw,
                                                       int RT, int rows, const unsigned char *xa,
                                                       size_t lda, int TT, int K, float *y,
                                                       size_t ldy, size_t ys, int PF) {
    __m512 acc[16];
    __m256 accm[16]; /* the mins (q4_1, q5_1, q4_k, q5_k), per (row, token) */
    float m8[16][8] = {{0}}; /* q4_1, q5_1: the mins of the 8 blocks of lanes 0-7, per row */
    const unsigned char *wr[16];
#pragma GCC unroll 16
    for (int n = 0; n < 16; n++) acc[n] = _mm512_setzero_ps(), accm[n] = _mm256_setzero_ps();
#pragma GCC unroll 16
    for (int i = 0; i < RT; i++) wr[i] = w + (i < rows ? i : rows - 1) * ldw;
    const int nb = K / 32, ng = kern_a8_groups(K), per = kern_is_kquant(WT) ? 4 : 1;
    for (int p0 = 0; p0 < ng; p0 += per) { /* a k-quant's super-block, or one group */
        stage st[16];
        if (PF) { /* the bytes of this step: a super-block, or a group's two blocks */
            const size_t bytes = (size_t)(kern_is_kquant(WT) ? 1 : 2) * kern_block_bytes(WT);
            prefetch_rows(wr, RT, (size_t)(p0 / per) * bytes, (size_t)(p0 / per + 1) * bytes);
        }
        if (kern_is_kquant(WT)) {
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++)
                stage_block(WT, wr[i] + (size_t)(p0 / 4) * kern_block_bytes(WT), &st[i]);
            if (kern_int8_min(WT)) { /* the super-block's mins: M (dmin * m, lanes 8-15) . d * s */
#pragma GCC unroll 16
                for (int t = 0; t < TT; t++) {
                    __m256 ds = _mm256_loadu_ps(kern_a8_ds(xa + t * lda, K) + 2 * p0);
#pragma GCC unroll 16
                    for (int i = 0; i < RT; i++)
                        accm[t * RT + i] =
                            _mm256_fmadd_ps(_mm256_loadu_ps(st[i].s + 8), ds, accm[t * RT + i]);
                }
            }
        }
#pragma GCC unroll 4
        for (int p = p0; p < p0 + per; p++) {
            const int one = 2 * p + 1 == nb;
            wgroup g[16];
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) g[i] = load_group(WT, wr[i], p, one, &st[i]);
            if (kern_block_min(WT)) /* -m into lanes 2p, 2p + 1 (mod 8) */
                min_pair(WT, wr, RT, p, one, m8);
#pragma GCC unroll 16
            for (int t = 0; t < TT; t++) {
                const kern_a8_group *xg = (const kern_a8_group *)(xa + t * lda) + p;
                __m512i xq = _mm512_loadu_si512((const void *)xg->q);
                __m512i s0 = start_of(WT, _mm512_loadu_si512((const void *)xg->c));
                __m512 dv = _mm512_loadu_ps(xg->d);
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) {
                    int n = ACC_FOR_LANE(t * RT + i);
                    __m512i s = _mm512_dpbusd_epi32(s0, g[i].u, xq);
                    acc[n] =
                        _mm512_fmadd_ps(_mm512_mul_ps(g[i].a, dv), _mm512_cvtepi32_ps(s), acc[n]);
                }
            }
            if (kern_block_min(WT) && (p % 4 == 3 || p == ng - 1))
                min_flush(xa, lda, K, RT, TT, p / 4, m8, accm);
        }
    }
    float out[16];
    if (RT * TT <= 4) {
#pragma GCC unroll 16
        for (int n = 0; n < RT * TT; n++) out[n] = fold512(acc[ACC_FOR_LANE(n)]);
    } else {
        _mm512_storeu_ps(out, fold16x16(acc));
    }
#pragma GCC unroll 16
    for (int t = 0; t < TT; t++)
        for (int i = 0; i < rows && i < RT; i++) {
            float v = out[t * RT + i];
            if (kern_int8_min(WT)) v -= fold256(accm[t * RT + i]);
            y[t * ldy + i * ys] = v;
        }
}

/* Tiles in the exact kernels' schedule (kernels_isa.h, KERN_AVX512_SCHEDULE): tokens in fours with
 * 4-row tiles; up to 3 tokens: one, 4 rows streaming (prefetched ahead) or 8 in the cache; two or
 * three, 8x2 or 5x3; the 1-3 left over past a block of 4 in 4-row tiles of the same row group,
 * while its rows are in L1, not in a second pass over the weights (ms per pass, 2 alternations,
 * second pass -> same group: 1.1B q8_0 T = 5 172-199 -> 134-166 on 1 thread, 90-91 -> 82-84 on
 * 2; Q4_K_M 2-7% (1 thread T = 5 123-125 -> 116-123, 2 threads 81 -> 76); 110M q8_0 T = 5
 * 15.6-16.2 -> 13.7-14.2, Q4_K_M a tie); rows far apart when the matrix streams
 * (kern_rowgroup). */
static inline __attribute__((always_inline)) void
matmul_int8(wtype WT, const unsigned char *w, size_t ldw, int rows, int K, const unsigned char *xa,
            size_t lda, int T, float *y, size_t ldy, int streams) {
#define INT8_TILE(RT, TT, t, last)                                                                 \
    tile(WT, wr, ws, RT, valid, xa + (t) * lda, lda, TT, K, y + (t) * ldy + row, ldy, step, last)
    KERN_AVX512_SCHEDULE(T, rows, streams, w, ldw, INT8_TILE, 0, 1);
#undef INT8_TILE
}

#define INT8(fn, WT)                                                                               \
    void fn(const unsigned char *w, size_t ldw, int rows, int K, const void *xa, size_t lda,       \
            int T, float *y, size_t ldy, int streams) {                                            \
        matmul_int8(WT, w, ldw, rows, K, xa, lda, T, y, ldy, streams);                             \
    }
INT8(kern_vnni_q8_0, WTYPE_Q8_0)
INT8(kern_vnni_q4_0, WTYPE_Q4_0)
INT8(kern_vnni_q5_0, WTYPE_Q5_0)
INT8(kern_vnni_q4_1, WTYPE_Q4_1)
INT8(kern_vnni_q5_1, WTYPE_Q5_1)
INT8(kern_vnni_q3_k, WTYPE_Q3_K)
INT8(kern_vnni_q4_k, WTYPE_Q4_K)
INT8(kern_vnni_q5_k, WTYPE_Q5_K)
INT8(kern_vnni_q6_k, WTYPE_Q6_K)
#endif
