/* kernels_avx512_int8b.c: the int8b mode's AVX-512 tiles (kernels.h, "the int8b mode"), compiled
 * with AVX-512 VNNI and run only on CPUs that have it (kernels_int8b.c checks; without it the
 * AVX2 tiles run, same bits).
 *
 * A register holds 16 rows, one 32-bit lane each: the 16-row copy (kernels.h) gives, per block,
 * each 32-bit word of the 16 rows in one load, so a word of packed weights is unpacked for 16
 * rows at once into 4 values per lane, and vpdpbusd adds the products of those 4 values with 4
 * activations broadcast from a token's row into the lane's integer sum. A unit's sum (8 such
 * steps, 4 for the 16-value units) starts from the token's stored start, which cancels the
 * offset the unpacked weights carry (q8_0 w + 128, q4_0 w + 8, q5_0 w + 16, q6_k w + 32, q3_k
 * w + 4; none for the types with mins), so it is the unit's exact P; its conversion times
 * A * d_b, fused into the lane's accumulator, then the block's min, is the reference's order.
 *
 * Shapes: 32 rows (two groups, RG = 2; which two: FAR_PAIRS_BYTES) by the tokens of one chunk of
 * the activations (up to 8, KERN_A8B_CHUNK), over slices of 8 blocks (a k-quant's super-block). A
 * slice's weights are unpacked once into a panel on the stack (704 bytes per block and group: 8
 * registers of integers, the units' A, the min), which every chunk of tokens then reads from L1: at
 * 64 tokens the unpacking is paid once per 64 tokens. Passes of up to 8 tokens (one chunk) skip
 * the panel: few_tokens unpacks each block into registers and multiplies it with all of them at
 * once, one group or two at a time (few_groups), as one-token passes always did.
 * The accumulators live in registers within a slice and in y between slices (the same float,
 * stored and loaded: no rounding). Tokens are taken 4 at a time (8 with one group) with the 8
 * steps of a block interleaved across them, so that 8 integer sums are in flight: a token's 8
 * dependent vpdpbusd one after another kept the core at 70% of the rate of this interleaved order
 * (scratch prototype, 16 rows x 16 tokens, K = 2048, in cache: 0.39 -> 0.30 ns per 64 weights and
 * token; two groups per broadcast, 0.27: a broadcast activation serves 2 registers of weights).
 *
 * Not AMX: on a CPU with AMX-INT8, TDPBSUD took a chunk's sums from the panel's words as they lie
 * (a register of words is the layout its second operand wants) with the same bits, but the order
 * needs each unit's sum out of the tile before its float step: one 32-bit value stored per row,
 * token and block, and those tile stores bounded it. The products took 0.92-1.10x the time of
 * these runs (docs/measurements/2026-12-01-amx.md). */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

#if KERN_X86
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

enum { SLICE = 8 };
/* Passes of up to 8 tokens (few_tokens) prefetch each group's stream a few KB ahead into L1
 * (few_tokens_dist; past a group's end, the next group of its stream) and PF_FAR_L2 ahead into
 * L2. Without the
 * far one, the unpacking and the memory took turns on Zen 4: kernel_speed's streaming q6_k tile
 * took the sum of its in-cache time and the read's (3.8-4.4 ns per 64 weights against 1.3-2.0 in
 * cache), and one-row passes read 41-60% of the probe on the 1.1B preset's k-quants. With it,
 * medians of 6-8 alternated pairs (EPYC Zen 4 VM, 2 threads unless said): one-row passes took
 * 0.66x the time on 1.1B Q6_K, 0.68x on Q4_K_M, 0.91x on Q4_0, 0.98x on q8_0; 0.71x on 110M Q6_K
 * and Q4_K_M, 0.80x on Q4_0, 0.92x on q8_0; one thread: 0.55x on 1.1B Q6_K, 0.65x on Q4_K_M,
 * 0.94x on q8_0. 16 KB against 8, 12, 24 and 32 KB: 1.31, 1.03, 1.03, 1.06x the time (Q6_K),
 * 1.07, 1.02, 1.02, 1.25x (Q4_K_M). The first 16 KB of a product's streams prefetched into L2
 * at its start as well: 0.99-1.05x (110M, 12 pairs), left out. On a Xeon the same prefetch at 8 KB
 * had measured within the noise of a busy machine (q8_0 102-111%, Q4_K_M 77-89%, Q6_K 84-85%, Q4_0
 * 89-93% of the probe, 2 threads); the AVX2 tiles prefetch 8 KB ahead into L2
 * (kernels_avx2_int8b.c; on this Zen 4, 16 KB there instead: 0.97-1.00x, not taken).
 * Passes of several tokens prefetch the next slice's bytes while they unpack this one (into L1),
 * and those of up to 24 rows their streams PF_FAR_ROWS ahead into L2 as well (since few_tokens
 * took the passes of up to 8 tokens and few_chunks those of 9-16 of the 32-value types, the panel
 * and these prefetches serve the rest; the
 * figures at 2 and 8 rows are of the panel before that; the passes of 2-8 tokens take PF_FAR_L2,
 * as PF_FAR_ROWS made them no faster on Zen 4, few_groups): against the next slice alone, medians
 * of 10-14 pairs on the same Zen 4, 1.1B preset, 2 threads: 2 rows 0.74x the time on Q6_K,
 * 0.84-0.86x on Q4_K_M and Q4_0, 0.99x on q8_0; 8 rows 0.81x on Q4_0, 0.92x on q8_0, 0.95x on
 * Q6_K, 1.00x on Q4_K_M (110M q8_0 at 2 and 4 rows 1.03-1.05x, within that host's noise); 32 KB
 * against 16: 0.92-0.95x at 2 rows. At 64 rows, where the tiles' arithmetic bounds the pass, it
 * cost 1.02x and is not issued. On Zen 5 (EPYC family 26, 2 threads, 1.1B preset, medians of 4-8
 * pairs) both far prefetches cost time: one row 1.08-1.10x on Q6_K with them at 8, 16 or 32
 * KB, 1.09x on Q4_K_M, 1.08x on q8_0, 1.14x on Q4_0; 2 rows 1.15-1.25x (Q4_0, Q6_K, Q4_K_M; the
 * 2-24 rows' far prefetch alone: 1.15-1.20x). So they are issued on Zen 4 alone
 * (kern_far_prefetch_active, a constant FAR in few_tokens); the switch costs nothing measurable
 * (0.98-1.01x against builds without or with them compiled in). (The prefetch addresses are formed
 * as integers: near the copy's end they point past it, which a prefetch may do and a C pointer may
 * not.) */
#define PF_DIST 2048     /* q8_0 */
#define PF_DIST_LOW 4096 /* the types of fewer bits, after a k-quant's super-block */
#define PF_FAR_L2 16384
#define PF_FAR_ROWS 32768

/* Which two groups of 16 rows a tile reads together. Adjacent groups (g, g + 1) make two streams
 * that both jump a group at every pair; groups of FAR_PAIRS_BYTES or less pair [0, h) with
 * [h, 2h) instead (the odd one last, alone), so that each stream reads in address order. Passes
 * of one row always pair that way. Zen 5, 2 threads, alternated pairs (the 110M preset's groups
 * are 7-13 KB, 18-35 KB in w2; the 1.1B preset's 18-96 KB): a classifier of 768-value q8_0 rows
 * read 74-81% of the probe in adjacent pairs, 93-97% in halves; one-row passes took 0.77x the
 * time on 110M q8_0, 0.87x on Q4_K_M and Q6_K, 0.71x on Qwen2.5-0.5B, 0.94-0.95x on 1.1B q8_0
 * and Q4_K_M; 4 and 8 rows 0.92-0.95x on 110M q8_0, 0.95-0.97x on Qwen2.5-0.5B. But halves of
 * the 1.1B preset's groups made its 4- and 8-row passes 1.06x and 1.02-1.03x (hence the bound
 * for several rows); 64 rows, within the noise either way. One group at a time (one stream, no
 * broadcast shared) read as well as halves on small groups, but made the 1.1B Q4_K_M one-row
 * pass 1.14x the time. */
#define FAR_PAIRS_BYTES ((size_t)16 << 10)

/* One block of one group of 16 rows, unpacked: the integers u (w plus the type's offset) of
 * values 4m..4m+3 in register m, the units' scales A (a[1]: the second half's, 16-value
 * units), and -M (types with mins). */
typedef struct {
    __m512i w[8];
    __m512 a[2];
    __m512 m;
} brec;

/* How a type's sums start and end (the run kernels are shared by the types of one kind). */
enum { K_S128, K_S8, K_S16, K_H32, K_H4, K_MIN, K_KINDS };

static inline int kind_of(wtype WT) {
    switch (WT) {
    case WTYPE_Q8_0:
        return K_S128;
    case WTYPE_Q4_0:
        return K_S8;
    case WTYPE_Q5_0:
        return K_S16;
    case WTYPE_Q6_K:
        return K_H32;
    case WTYPE_Q3_K:
        return K_H4;
    default:
        return K_MIN;
    }
}

/* ---- unpacking a slice --------------------------------------------------------------------- */

static inline __m512i ld(const unsigned char *p) {
    return _mm512_loadu_si512((const void *)p);
}

static inline __m512 halves(const unsigned char *p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

/* Byte j (0..3) of each 32-bit lane, unsigned / signed, as floats. */
static inline __m512 byte_u(__m512i v, int j) {
    return _mm512_cvtepi32_ps(
        _mm512_and_si512(_mm512_srli_epi32(v, 8 * j), _mm512_set1_epi32(255)));
}

static inline __m512 byte_s(__m512i v, int j) {
    return _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(v, 24 - 8 * j), 24));
}

/* q5_0, q5_1: 16 where bit 4c + i of the lane's qh word is set, in byte i of chunk c (values
 * 4c..4c+3 of the block): byte c / 2 of the word copied to the lane's 4 bytes, each tested
 * against its bit. */
static inline __m512i fifth_bits(__m512i qh, int c) {
    const __m512i rep = _mm512_set1_epi32(0x01010101 * (c / 2));
    const __m512i idx =
        _mm512_add_epi8(rep, _mm512_set4_epi32(0x0c0c0c0c, 0x08080808, 0x04040404, 0x00000000));
    const __m512i bit = _mm512_set1_epi32((int)(0x08040201u << (4 * (c % 2))));
    const __mmask64 k = _mm512_test_epi8_mask(_mm512_shuffle_epi8(qh, idx), bit);
    return _mm512_maskz_mov_epi8(k, _mm512_set1_epi8(16));
}

/* Block b = 8 sb + j of the group at g (16-row copy) into r (ks: the super-block's scales; j a
 * constant where the caller unrolls, so that a k-quant's shifts are immediates). */
static inline __attribute__((always_inline)) void
unpack_block(wtype WT, const unsigned char *g, int sb, int j0, brec *r, const __m512 *ks) {
    const int b = 8 * sb + j0;
    const __m512i m4 = _mm512_set1_epi8(15);
    if (WT == WTYPE_Q8_0) {
        const unsigned char *p = g + (size_t)b * 544;
        r->a[0] = halves(p);
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++)
            r->w[m] = _mm512_xor_si512(ld(p + 32 + 64 * m), _mm512_set1_epi8((char)0x80));
    } else if (WT == WTYPE_Q4_0 || WT == WTYPE_Q4_1 || WT == WTYPE_Q5_0 || WT == WTYPE_Q5_1) {
        /* block fields x16: d @0; q4_1, q5_1: m @32; q5_0 qh @32, q5_1 qh @64; qs after */
        const int BB = WT == WTYPE_Q4_0 ? 18 : WT == WTYPE_Q4_1 ? 20 : WT == WTYPE_Q5_0 ? 22 : 24;
        const int qs = 16 * (BB - 16);
        const unsigned char *p = g + (size_t)b * 16 * BB;
        r->a[0] = halves(p);
        if (WT == WTYPE_Q4_1 || WT == WTYPE_Q5_1) r->m = halves(p + 32); /* -M = m */
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            const __m512i v = ld(p + qs + 64 * k);
            r->w[k] = _mm512_and_si512(v, m4);
            r->w[k + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        }
        if (WT == WTYPE_Q5_0 || WT == WTYPE_Q5_1) {
            const __m512i qh = ld(p + (WT == WTYPE_Q5_0 ? 32 : 64));
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) r->w[c] = _mm512_or_si512(r->w[c], fifth_bits(qh, c));
        }
    } else if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) {
        /* super-block fields x16: d @0, dmin @32, scales @64 (3 words), q5_k qh @256 (8 words),
         * qs (32 words: pair p's word k at 8p + k, low nibbles sub-block 2p, high 2p + 1) */
        const int s = j0, pr = s / 2, hi = s % 2;
        const unsigned char *p = g + (size_t)sb * 16 * (WT == WTYPE_Q4_K ? 144 : 176);
        const unsigned char *qs = p + (WT == WTYPE_Q4_K ? 256 : 768) + 512 * pr;
        r->a[0] = ks[s], r->m = ks[8 + s];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m512i v = ld(qs + 64 * k);
            r->w[k] = _mm512_and_si512(hi ? _mm512_srli_epi16(v, 4) : v, m4);
            if (WT == WTYPE_Q5_K) { /* bit s of qh byte l: the 5th bit of value 32s + l */
                const __m512i h = ld(p + 256 + 64 * k);
                const __m512i at4 =
                    s <= 4 ? _mm512_slli_epi16(h, 4 - s) : _mm512_srli_epi16(h, s - 4);
                r->w[k] = _mm512_ternarylogic_epi32(r->w[k], at4, _mm512_set1_epi8(16), 0xF8);
            }
        }
    } else if (WT == WTYPE_Q3_K) {
        /* super-block fields x16: hmask @0 (8 words), qs @512 (16 words), scales @1536, d @1728;
         * block bb = 4h + j: value 128h + 32j + l is bits 2j of qs byte 32h + l, plus 4 when
         * bit 4h + j of hmask byte l is set (w + 4) */
        const int bb = j0, h = bb / 4, j = bb % 4;
        const unsigned char *p = g + (size_t)sb * 1760;
        r->a[0] = ks[2 * bb], r->a[1] = ks[2 * bb + 1];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m512i q = _mm512_and_si512(
                _mm512_srli_epi16(ld(p + 512 + 64 * (8 * h + k)), 2 * j), _mm512_set1_epi8(3));
            const __m512i hm = ld(p + 64 * k);
            const int sh = 4 * h + j; /* the bit to bit 2 */
            const __m512i at2 =
                sh <= 2 ? _mm512_slli_epi16(hm, 2 - sh) : _mm512_srli_epi16(hm, sh - 2);
            r->w[k] = _mm512_ternarylogic_epi32(q, at2, _mm512_set1_epi8(4), 0xF8);
        }
    } else { /* q6_k: ql @0 (32 words), qh @2048 (16 words), scales @3072 (4 words), d @3328;
              * block bb = 4h + q: value 128h + 32q + l is ql byte 64h + 32(q & 1) + l (low
              * nibble for q < 2, high above) with bits 2q, 2q + 1 of qh byte 32h + l on top */
        const int bb = j0, h = bb / 4, q = bb % 4;
        const unsigned char *p = g + (size_t)sb * 3360;
        r->a[0] = ks[2 * bb], r->a[1] = ks[2 * bb + 1];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            __m512i lo = ld(p + 64 * (16 * h + 8 * (q & 1) + k));
            lo = q >= 2 ? _mm512_srli_epi16(lo, 4) : lo;
            const __m512i qh = ld(p + 2048 + 64 * (8 * h + k));
            const __m512i at4 =
                q <= 2 ? _mm512_slli_epi16(qh, 4 - 2 * q) : _mm512_srli_epi16(qh, 2);
            /* (lo & 15) | (at4 & 0x30) */
            r->w[k] = _mm512_ternarylogic_epi32(_mm512_and_si512(lo, m4), at4,
                                                _mm512_set1_epi8(0x30), 0xF8);
        }
    }
}

/* The k-quants' scales of super-block sb for one group, as floats: q4_k / q5_k A of sub-blocks
 * 0-7 in ks[0..7] and -M in ks[8..15]; q3_k and q6_k A of the 16 sub-blocks of 16. */
static inline __attribute__((always_inline)) void kquant_scales(wtype WT, const unsigned char *g,
                                                                int sb, __m512 *ks) {
    if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) {
        const unsigned char *p = g + (size_t)sb * 16 * (WT == WTYPE_Q4_K ? 144 : 176);
        const __m512 d = halves(p), ndmin = _mm512_sub_ps(_mm512_setzero_ps(), halves(p + 32));
        const __m512i s0 = ld(p + 64), s1 = ld(p + 128), s2 = ld(p + 192);
        const __m512i k6 = _mm512_set1_epi8(0x3F), k4 = _mm512_set1_epi8(15),
                      k30 = _mm512_set1_epi8(0x30);
        /* ggml's get_scale_min_k4 for 4 sub-blocks at once: bytes 0-3 (scales 0-3), 4-7 (mins
         * 0-3), 8-11 (low nibbles: scales 4-7; high nibbles: mins 4-7, with the top 2 bits of
         * bytes 0-3 and 4-7 above them) */
        const __m512i sc_lo = _mm512_and_si512(s0, k6), mn_lo = _mm512_and_si512(s1, k6);
        const __m512i sc_hi = _mm512_ternarylogic_epi32(_mm512_and_si512(s2, k4),
                                                        _mm512_srli_epi32(s0, 2), k30, 0xF8);
        const __m512i mn_hi = _mm512_ternarylogic_epi32(
            _mm512_and_si512(_mm512_srli_epi32(s2, 4), k4), _mm512_srli_epi32(s1, 2), k30, 0xF8);
#pragma GCC unroll 8
        for (int s = 0; s < 8; s++) {
            ks[s] = _mm512_mul_ps(d, byte_u(s < 4 ? sc_lo : sc_hi, s % 4));
            ks[8 + s] = _mm512_mul_ps(ndmin, byte_u(s < 4 ? mn_lo : mn_hi, s % 4));
        }
    } else if (WT == WTYPE_Q3_K) {
        const unsigned char *p = g + (size_t)sb * 1760;
        const __m512 d = halves(p + 1728);
        const __m512i s0 = ld(p + 1536), s1 = ld(p + 1600), s2 = ld(p + 1664);
        const __m512i k4 = _mm512_set1_epi8(15), k3 = _mm512_set1_epi8(3);
        /* scales 4i..4i+3: 4 low bits from s0 / s1 (low, then high nibbles), 2 high from s2 */
        __m512i x[4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const __m512i lo = _mm512_and_si512(
                i < 2 ? (i ? s1 : s0) : _mm512_srli_epi32(i == 2 ? s0 : s1, 4), k4);
            const __m512i top = _mm512_and_si512(_mm512_srli_epi32(s2, 2 * i), k3);
            x[i] = _mm512_or_si512(lo, _mm512_slli_epi32(top, 4));
        }
        const __m512 c32 = _mm512_set1_ps(32.0f);
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++)
            ks[c] = _mm512_mul_ps(d, _mm512_sub_ps(byte_u(x[c / 4], c % 4), c32));
    } else { /* q6_k */
        const unsigned char *p = g + (size_t)sb * 3360;
        const __m512 d = halves(p + 3328);
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++)
            ks[c] = _mm512_mul_ps(d, byte_s(ld(p + 3072 + 64 * (c / 4)), c % 4));
    }
}

/* ---- the run kernels: one slice, one chunk of NT tokens, RG groups -------------------------- */

static inline __attribute__((always_inline)) __m512i bcast(const unsigned char *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

static inline __attribute__((always_inline)) __m512 bcastf(const unsigned char *p) {
    float v;
    memcpy(&v, p, 4);
    return _mm512_set1_ps(v);
}

/* A unit's integer sum s added to a token's accumulator: (the unit's scale a times the token's
 * scale d) times s, fused with the add. One definition for run and few_tokens, whose results must
 * agree bit for bit with each other and with the scalar reference (kernels_int8b.c). */
static inline __attribute__((always_inline)) __m512 add_unit(__m512 acc, __m512 a, __m512 d,
                                                             __m512i s) {
    return _mm512_fmadd_ps(_mm512_mul_ps(a, d), _mm512_cvtepi32_ps(s), acc);
}

/* The start of token t's sum of unit u (the record of a chunk of NT tokens at xr). */
static inline __attribute__((always_inline)) __m512i start_of(int KIND, const unsigned char *xr,
                                                              int NT, int t, int u) {
    switch (KIND) {
    case K_S128:
        return bcast(xr + 40 * NT + 4 * t);
    case K_S8:
        return bcast(xr + 44 * NT + 4 * t);
    case K_S16:
        return _mm512_slli_epi32(bcast(xr + 44 * NT + 4 * t), 1);
    case K_H32:
        return bcast(xr + 48 * NT + 4 * (u * NT + t));
    case K_H4:
        return _mm512_srai_epi32(bcast(xr + 48 * NT + 4 * (u * NT + t)), 3);
    default:
        return _mm512_setzero_si512();
    }
}

/* The accumulators of tokens t0..t0 + n - 1 (rows y + t ldy) and RG groups (y + g ystep) within
 * a slice: zero on a row's first slice, else the floats the slice before stored (no rounding). */
static inline __attribute__((always_inline)) void acc_load(int RG, int t0, int n, __m512 (*acc)[8],
                                                           const float *y, size_t ldy, size_t ystep,
                                                           int first) {
#pragma GCC unroll 8
    for (int t = 0; t < n; t++)
#pragma GCC unroll 2
        for (int g = 0; g < RG; g++)
            acc[g][t] =
                first ? _mm512_setzero_ps() : _mm512_loadu_ps(y + (t0 + t) * ldy + g * ystep);
}

static inline __attribute__((always_inline)) void acc_store(int RG, int t0, int n, __m512 (*acc)[8],
                                                            float *y, size_t ldy, size_t ystep) {
#pragma GCC unroll 8
    for (int t = 0; t < n; t++)
#pragma GCC unroll 2
        for (int g = 0; g < RG; g++) _mm512_storeu_ps(y + (t0 + t) * ldy + g * ystep, acc[g][t]);
}

/* ---- the run: one slice of the panel ------------------------------------------------------ */

/* One slice (blocks b0.., nbs of them) of RG groups for the chunk of NT tokens at xr0 (a record
 * of KERN_A8B_REC bytes a block and token), results at y + t ldy + g ystep. Tokens GI at a time
 * over the whole slice: only their accumulators are live (with all of a chunk's, 2 x 8 and the
 * sums did not fit the 32 registers and spilled), kept in y between slices. The words come from
 * the slice's panel pn (RG records a block). With nl > 0 the
 * first tokens prefetch the nl lines of each group's next slice (next + g gstep), spread over the
 * slice's blocks: block j's share while they read block j. */
static inline __attribute__((always_inline)) void
run(int KIND, int RG, int NT, const brec *pn, size_t gstep, int nbs, const unsigned char *xr0,
    float *y, size_t ldy, size_t ystep, int first, uintptr_t next, size_t nl) {
    enum { GI_MAX = 8 };
    const int GI = RG == 2 ? 4 : 8, units = KIND == K_H32 || KIND == K_H4 ? 2 : 1;
#pragma GCC unroll 2
    for (int t0 = 0; t0 < NT; t0 += GI) {
        const int n = NT - t0 < GI ? NT - t0 : GI;
        __m512 acc[2][GI_MAX];
        acc_load(RG, t0, n, acc, y, ldy, ystep, first);
        const unsigned char *xr = xr0;
        for (int j = 0; j < nbs; j++, xr += (size_t)KERN_A8B_REC * NT) {
            const brec *r = pn + j * RG;
            if (nl && t0 == 0) {
                const size_t la = nl * (size_t)j / (size_t)nbs,
                             le = nl * (size_t)(j + 1) / (size_t)nbs;
#pragma GCC unroll 2
                for (int g = 0; g < RG; g++)
                    for (size_t l = la; l < le; l++)
                        _mm_prefetch((const char *)(next + (size_t)g * gstep + 64 * l),
                                     _MM_HINT_T0);
            }
#pragma GCC unroll 2
            for (int u = 0; u < units; u++) {
                __m512i s[2][GI_MAX];
#pragma GCC unroll 8
                for (int t = 0; t < n; t++) {
                    const __m512i st = start_of(KIND, xr, NT, t0 + t, u);
#pragma GCC unroll 2
                    for (int g = 0; g < RG; g++) s[g][t] = st;
                }
#pragma GCC unroll 8
                for (int m = 8 / units * u; m < 8 / units * (u + 1); m++) {
#pragma GCC unroll 8
                    for (int t = 0; t < n; t++) {
                        const __m512i x = bcast(xr + 32 * (t0 + t) + 4 * m);
#pragma GCC unroll 2
                        for (int g = 0; g < RG; g++)
                            s[g][t] = _mm512_dpbusd_epi32(s[g][t], r[g].w[m], x);
                    }
                }
#pragma GCC unroll 8
                for (int t = 0; t < n; t++) {
                    const __m512 d = bcastf(xr + 32 * NT + 4 * (t0 + t));
#pragma GCC unroll 2
                    for (int g = 0; g < RG; g++)
                        acc[g][t] = add_unit(acc[g][t], r[g].a[u], d, s[g][t]);
                }
            }
            if (KIND == K_MIN)
#pragma GCC unroll 8
                for (int t = 0; t < n; t++) {
                    const __m512 ds = bcastf(xr + 36 * NT + 4 * (t0 + t));
#pragma GCC unroll 2
                    for (int g = 0; g < RG; g++) acc[g][t] = _mm512_fmadd_ps(r[g].m, ds, acc[g][t]);
                }
        }
        acc_store(RG, t0, n, acc, y, ldy, ystep);
    }
}

/* The compiled runs, one per kind, groups and chunk size. */
#define NT_1_8(MK, X, RG) MK(X, RG, 1) NT_2_8(MK, X, RG)
#define NT_2_8(MK, X, RG)                                                                          \
    MK(X, RG, 2) MK(X, RG, 3) MK(X, RG, 4) MK(X, RG, 5) MK(X, RG, 6) MK(X, RG, 7) MK(X, RG, 8)
#define ROW_2_8(F, X, RG)                                                                          \
    F##_##X##_##RG##_2, F##_##X##_##RG##_3, F##_##X##_##RG##_4, F##_##X##_##RG##_5,                \
        F##_##X##_##RG##_6, F##_##X##_##RG##_7, F##_##X##_##RG##_8

typedef void (*run_fn)(const brec *pn, int nbs, const unsigned char *xr, float *y, size_t ldy,
                       size_t ystep, int first, uintptr_t next, size_t gstep, size_t nl);
#define RUN1(KIND, RG, NT)                                                                         \
    static void run_##KIND##_##RG##_##NT(const brec *pn, int nbs, const unsigned char *xr,         \
                                         float *y, size_t ldy, size_t ystep, int first,            \
                                         uintptr_t next, size_t gstep, size_t nl) {                \
        run(KIND, RG, NT, pn, gstep, nbs, xr, y, ldy, ystep, first, next, nl);                     \
    }
#define RUN_KIND(KIND) NT_1_8(RUN1, KIND, 1) NT_1_8(RUN1, KIND, 2)
RUN_KIND(K_S128)
RUN_KIND(K_S8)
RUN_KIND(K_S16)
RUN_KIND(K_H32)
RUN_KIND(K_H4)
RUN_KIND(K_MIN)
#define RUN_ROW(KIND, RG)                                                                          \
    { run_##KIND##_##RG##_1, ROW_2_8(run, KIND, RG) }

/* [kind][RG - 1][NT - 1] */
static const run_fn runs[K_KINDS][2][KERN_A8B_CHUNK] = {
    [K_S128] = {RUN_ROW(K_S128, 1), RUN_ROW(K_S128, 2)},
    [K_S8] = {RUN_ROW(K_S8, 1), RUN_ROW(K_S8, 2)},
    [K_S16] = {RUN_ROW(K_S16, 1), RUN_ROW(K_S16, 2)},
    [K_H32] = {RUN_ROW(K_H32, 1), RUN_ROW(K_H32, 2)},
    [K_H4] = {RUN_ROW(K_H4, 1), RUN_ROW(K_H4, 2)},
    [K_MIN] = {RUN_ROW(K_MIN, 1), RUN_ROW(K_MIN, 2)},
};

/* ---- the tiles --------------------------------------------------------------------------- */

/* How far ahead few_tokens prefetches its groups' streams (measured on one-token passes). A
 * k-quant's super-block of 16 rows is read from its scales first, which q6_k keeps at its end (3 KB
 * on): 2 KB ahead of the unpacking, they were not yet on their way, and those loads took 36% of the
 * q6_k tile's samples in a one-thread decode of 110M Q4_K_M; a super-block and more ahead they are.
 * With the streams in address order (FAR_PAIRS_BYTES), 4 KB instead of 2 (and a super-block and 4
 * KB instead of 1) made one-row passes 0.91-0.94x the time on 110M Q4_0, Q4_K_M and Q6_K and 0.985x
 * on 1.1B Q4_K_M, but not q8_0's (0.98x on 110M, 1.00x on 1.1B, 1.02x on Qwen2.5-0.5B: 6
 * alternated pairs each, Zen 5, 2 threads); 8 KB was no better than 4. */
static inline size_t few_tokens_dist(wtype WT) {
    return kern_is_kquant(WT) ? 16 * (size_t)kern_block_bytes(WT) + PF_DIST_LOW
           : WT == WTYPE_Q8_0 ? PF_DIST
                              : PF_DIST_LOW;
}

/* NT tokens (1-8, one chunk) without a panel: RG groups' blocks unpacked into registers and
 * multiplied at once, a block's 8 activation words broadcast once for all RG groups. Group g's
 * bytes start at gp + g * gstep, its 16 results for token t go to y + t * ldy + g * ystep. FAR (a
 * constant at each call): the far L2 prefetches as well (kern_far_prefetch_active). The sums and
 * their order are run's: the accumulator stays in a register where run stores and reloads it. */
static inline __attribute__((always_inline)) void few_tokens(wtype WT, int FAR, int NT,
                                                             const unsigned char *gp, size_t gstep,
                                                             int RG, int K, const unsigned char *xr,
                                                             float *y, size_t ldy, size_t ystep) {
    const int nb = K / 32, kq = kern_is_kquant(WT), KIND = kind_of(WT);
    const int units = KIND == K_H32 || KIND == K_H4 ? 2 : 1;
    const size_t dist = few_tokens_dist(WT);
    __m512 acc[8][2], ks[2][16];
#pragma GCC unroll 8
    for (int t = 0; t < NT; t++)
#pragma GCC unroll 2
        for (int g = 0; g < RG; g++) acc[t][g] = _mm512_setzero_ps();
    for (int sb = 0; 8 * sb < nb; sb++) {
        if (kq)
#pragma GCC unroll 2
            for (int g = 0; g < RG; g++) kquant_scales(WT, gp + (size_t)g * gstep, sb, ks[g]);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++, xr += (size_t)KERN_A8B_REC * NT) { /* j a constant */
            const int b = 8 * sb + j;
            if (b >= nb) break;
            {
                /* group g's stream dist bytes on into L1 and PF_FAR_L2 on into L2; past its
                 * end, the next group, which the next call reads in this stream
                 * (matmul_int8b), and whose first bytes would otherwise be read cold: 110M's
                 * rows of 768 values are 10-13 KB a group */
                const size_t bb = 16 * (size_t)kern_block_bytes(WT) / (kq ? 8 : 1);
#pragma GCC unroll 2
                for (int g = 0; g < RG; g++)
                    for (size_t a = (size_t)b * bb; a < (size_t)(b + 1) * bb; a += 64) {
                        const uintptr_t at = (uintptr_t)gp + (size_t)g * gstep + a;
                        _mm_prefetch((const char *)(at + dist), _MM_HINT_T0);
                        if (FAR) _mm_prefetch((const char *)(at + PF_FAR_L2), _MM_HINT_T1);
                    }
            }
            brec r[2];
#pragma GCC unroll 2
            for (int g = 0; g < RG; g++)
                unpack_block(WT, gp + (size_t)g * gstep, sb, j, &r[g], ks[g]);
#pragma GCC unroll 2
            for (int u = 0; u < units; u++) {
                __m512i s[8][2];
#pragma GCC unroll 8
                for (int t = 0; t < NT; t++) {
                    const __m512i st = start_of(KIND, xr, NT, t, u);
#pragma GCC unroll 2
                    for (int g = 0; g < RG; g++) s[t][g] = st;
                }
#pragma GCC unroll 8
                for (int m = 8 / units * u; m < 8 / units * (u + 1); m++)
#pragma GCC unroll 8
                    for (int t = 0; t < NT; t++) {
                        const __m512i x = bcast(xr + 32 * t + 4 * m);
#pragma GCC unroll 2
                        for (int g = 0; g < RG; g++)
                            s[t][g] = _mm512_dpbusd_epi32(s[t][g], r[g].w[m], x);
                    }
#pragma GCC unroll 8
                for (int t = 0; t < NT; t++) {
                    const __m512 d = bcastf(xr + 32 * NT + 4 * t);
#pragma GCC unroll 2
                    for (int g = 0; g < RG; g++)
                        acc[t][g] = add_unit(acc[t][g], r[g].a[u], d, s[t][g]);
                }
            }
            if (KIND == K_MIN)
#pragma GCC unroll 8
                for (int t = 0; t < NT; t++) {
                    const __m512 ds = bcastf(xr + 36 * NT + 4 * t);
#pragma GCC unroll 2
                    for (int g = 0; g < RG; g++) acc[t][g] = _mm512_fmadd_ps(r[g].m, ds, acc[t][g]);
                }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < NT; t++)
#pragma GCC unroll 2
        for (int g = 0; g < RG; g++) _mm512_storeu_ps(y + t * ldy + g * ystep, acc[t][g]);
}

/* How many groups few_tokens multiplies at once (RG) in a pass of NT tokens, or 0 where the panel
 * serves the pass better: two share each broadcast activation word, but their unpacked blocks
 * and 2 NT sums must fit the 32 registers as well. A type whose words unpack in one operation
 * (q8_0) takes two up to 8 tokens; the 32-value types of 4-5 bits, up to 6; the k-quants (their
 * scales and mins live beside the words) one group from 2 tokens on. One token takes two (the
 * pairs, FAR_PAIRS_BYTES). Zen 5, 2 threads, 1.1B preset, medians of 5 rounds of (panel, one group,
 * two groups) alternated, the time against the panel's (the direct run's for q8_0 and Q4_0):
 *
 *   rows           2           3           4           6           8
 *   Q4_K_M   0.68 / 0.76 0.66 / 0.72 0.82 / 0.82 0.82 / 0.89 0.80 / 0.99
 *   Q6_K     0.67 / 0.79 0.73 / 0.83 0.78 / 0.98 0.84 / 1.00 0.90 / 1.20
 *   q8_0     0.87 / 0.89 0.84 / 0.97 1.32 / 1.01 1.02 / 0.86 1.07 / 0.93
 *   Q4_0     0.81 / 0.80 1.00 / 0.85 1.03 / 0.87 0.86 / 0.85 0.91 / 1.12
 *
 * (one group / two groups). This host's memory moved by a third within minutes: q8_0 at 3 rows
 * came out at 0.84 with one group here, 0.94 with two in an earlier run; two groups of Q4_0 at 8
 * rows took 2.0x the time of one group in that run. The chosen rule against the panel, 6-8
 * alternated pairs: Q4_K_M 0.72x the time at 2 rows, 0.86x at 4, 0.89x at 6, 0.94x at 7, but
 * 1.02-1.14x at 8 (pure q4_k 1.18x): 8 tokens of the types with mins (q4_k, q5_k) keep the panel
 * (0). Q6_K 0.80, 0.91, 0.93x at 2, 4, 8 rows; q8_0 0.87, 0.90, 0.99x; Q4_0 0.79, 0.92, 0.99x;
 * 110M Q4_K_M 0.75x at 2, 0.86x at 4; 110M q8_0 1.00, 0.97, 0.97x. One row: 0.99-1.04x (the
 * same code as before). Types without a file of their own here (q4_1, q5_0, q5_1, q3_k, q5_k)
 * follow their kin; a 1.1B q5_0 file took 0.84x, 0.81x, 0.86x at 2, 3, 4 rows with two groups.
 * The same rule on Zen 4 (EPYC family 25, far prefetches on; 1.1B preset, 2 threads, medians of 6
 * rotated rounds against the panel and direct run it replaced): Q4_K_M 0.66, 0.74, 0.96x the time
 * at 2, 4, 8 rows, Q6_K 0.75, 0.69, 0.90x, q8_0 0.91, 0.75, 0.73x, Q4_0 0.99, 0.99, 0.93x; 110M
 * Q4_K_M 0.72, 0.77, 0.99x, q8_0 0.88, 0.90, 0.80x (8 pairs). There PF_FAR_ROWS (32 KB) instead
 * of PF_FAR_L2 at 2-8 tokens came out no faster (Q4_K_M 0.85x against the panel at 2 rows, 0.72x
 * at 4; Q6_K 0.81, 0.71x; q8_0 0.90, 0.85x; Q4_0 1.06, 1.02x), and q4_k's 8 tokens with one
 * group against the panel 0.99x (1.1B) and 0.97x (110M), pairs spread 0.86-1.08x: the panel kept.
 */
static inline int few_groups(wtype WT, int NT) {
    if (NT == 1 || WT == WTYPE_Q8_0) return 2;
    if (kern_is_kquant(WT)) return NT == 8 && kind_of(WT) == K_MIN ? 0 : 1;
    return NT <= 6 ? 2 : 1;
}

/* A pass of NT tokens (few_tokens) over `groups` groups: with two groups at a time, [0, h) with
 * [h, 2h), the odd one last (FAR_PAIRS_BYTES); with one, each in turn (a single stream in address
 * order). FAR as in few_tokens. */
static inline __attribute__((always_inline)) void
few_tokens_pass(wtype WT, int FAR, int NT, const unsigned char *p, size_t gbytes, int groups, int K,
                const unsigned char *xa, float *y, size_t ldy) {
    const int h = groups / 2, pairs = few_groups(WT, NT) == 2;
    const size_t dist = few_tokens_dist(WT), hstep = (size_t)h * gbytes;
    /* the streams' first bytes, which no earlier call prefetched, asked for at once */
    for (int g = 0; g < (pairs && groups >= 2 ? 2 : 1); g++)
        for (size_t a = 0; a < dist && a < gbytes; a += 64)
            _mm_prefetch((const char *)(p + (size_t)g * hstep + a), _MM_HINT_T0);
    if (!pairs) {
        for (int g = 0; g < groups; g++)
            few_tokens(WT, FAR, NT, p + (size_t)g * gbytes, gbytes, 1, K, xa, y + 16 * g, ldy, 16);
        return;
    }
    for (int g = 0; g < h; g++)
        few_tokens(WT, FAR, NT, p + (size_t)g * gbytes, hstep, 2, K, xa, y + 16 * g, ldy,
                   16 * (size_t)h);
    if (groups % 2)
        few_tokens(WT, FAR, NT, p + (size_t)(groups - 1) * gbytes, gbytes, 1, K, xa,
                   y + 16 * (size_t)(groups - 1), ldy, 16);
}

/* Whether a pass of T tokens runs as few_tokens_pass over each chunk of the activations (1: a
 * chunk of up to 8 tokens, as few_groups allows; 2: 9-16 tokens) instead of the panel (0).
 * Passes of 9-16 tokens of the 32-value types (q8_0, q4_0 and kin) run as two chunks, which
 * read the weights twice: Zen 4 (far prefetches on), 2 threads, 6 alternated pairs, time against
 * the panel at 12 / 16 rows: 1.1B q8_0 0.78 / 0.78, Q4_0 0.85 / 0.85, 110M q8_0 0.86 / 0.93; the
 * k-quants lost (1.1B Q4_K_M 1.13 / 1.28, Q6_K 1.08 / 1.18, 110M Q4_K_M 1.09 / 1.11) and keep the
 * panel. Not measured on Zen 5 or a Xeon. */
static inline int few_chunks(wtype WT, int T) {
    if (T <= KERN_A8B_CHUNK) return few_groups(WT, T) ? 1 : 0;
    return kern_a8b_chunks(T) == 2 && !kern_is_kquant(WT) ? 2 : 0;
}

/* A chunk of n tokens (1-8) by few_tokens_pass, with n and far_l2 (kern_far_prefetch_active) as
 * constants: a test in the prefetch loop of each block would cost registers there. */
static inline __attribute__((always_inline)) void
few_chunk(wtype WT, int far_l2, int n, const unsigned char *p, size_t gbytes, int groups, int K,
          const unsigned char *x, float *y, size_t ldy) {
#define FEW(NT)                                                                                    \
    if (far_l2)                                                                                    \
        few_tokens_pass(WT, 1, NT, p, gbytes, groups, K, x, y, ldy);                               \
    else                                                                                           \
        few_tokens_pass(WT, 0, NT, p, gbytes, groups, K, x, y, ldy);
    switch (n) {
    case 1:
        FEW(1) break;
    case 2:
        FEW(2) break;
    case 3:
        FEW(3) break;
    case 4:
        FEW(4) break;
    case 5:
        FEW(5) break;
    case 6:
        FEW(6) break;
    case 7:
        FEW(7) break;
    default:
        FEW(8) break;
    }
#undef FEW
}

/* The unpacking of a block costs about what a run of this many rows over it does: the share of
 * the next slice's prefetches that passes of 9-24 rows issue while they unpack (matmul_int8b;
 * measured when the panel took passes of 2 rows and more).
 * Zen 5, 2 threads, medians of 5 alternated pairs against none issued there: 1.1B Q4_K_M 0.77x
 * the time at 2 rows on one thread, 0.90-0.95x at 8 rows, 0.99-1.00x at 4, 12, 16 and 24; Q6_K
 * 0.90x at 2 and 0.93x at 8; 110M Q4_K_M 0.88x at 2, 0.98x at 8; q8_0 0.98x and Q4_0 1.02x at
 * 16. 2 and 8 did no better. Against the burst with the unpacking that came before both: 1.00x at
 * 2 and 4 rows (the split was not measured on the Xeon). */
enum { UNPACK_ROWS = 4 };

static inline __attribute__((always_inline)) void matmul_int8b(wtype WT, const unsigned char *p,
                                                               size_t gbytes, int groups, int K,
                                                               const unsigned char *xa, int T,
                                                               float *y, size_t ldy) {
    const int nb = K / 32, nc = kern_a8b_chunks(T), kq = kern_is_kquant(WT);
    const int far_l2 = kern_far_prefetch_active();
    if (few_chunks(WT, T)) { /* each chunk of the activations in registers, no panel */
        for (int c = 0; c < nc; c++) {
            const int t0 = kern_a8b_first(T, c), n = kern_a8b_first(T, c + 1) - t0;
            few_chunk(WT, far_l2, n, p, gbytes, groups, K, xa + kern_a8b_at(K, t0, n, 0),
                      y + (size_t)t0 * ldy, ldy);
        }
        return;
    }
    brec panel[SLICE * 2];
    __m512 ks[2][16];
    /* the chunks' first tokens, and each chunk's share of a slice's prefetch lines, computed
     * once: per chunk and slice, their 64-bit divisions were 48 a slice */
    int first[nc + 1];
    size_t share[nc + 1], shared_lines = 0;
    for (int c = 0; c <= nc; c++) first[c] = kern_a8b_first(T, c), share[c] = 0;
    /* pair k: groups k and h + k, or 2k and 2k + 1 (FAR_PAIRS_BYTES) */
    const int far = gbytes <= FAR_PAIRS_BYTES, h = groups / 2;
    for (int k = 0; k < (groups + 1) / 2; k++) { /* the last one alone when groups is odd */
        const int RG = k < h ? 2 : 1, g = far ? (k < h ? k : groups - 1) : 2 * k;
        const size_t gstep = far ? (size_t)h * gbytes : gbytes, ystep = far ? 16 * (size_t)h : 16;
        const unsigned char *gp = p + (size_t)g * gbytes;
        for (int b0 = 0; b0 < nb; b0 += SLICE) {
            const int nbs = nb - b0 < SLICE ? nb - b0 : SLICE;
            /* the next slice's bytes in each group (past the last slice: the next group of its
             * stream), spread over the chunks: all at once, they filled the line-fill buffers and
             * the unpacking waited (1.1B Q4_K_M, 64 rows, one thread: the unpacking 15% of the
             * tiles' samples). With fewer than 4 chunks (T <= 24) that spread is too coarse, and
             * the first chunk's run spreads them over its blocks (run's nl). Issued with the
             * unpacking's blocks instead, they waited on the fill buffers during the brief
             * unpacking and then left the memory idle through the run: against that, 2 threads,
             * medians of 7 alternated pairs, 1.1B Q4_K_M took 0.83-0.91x the time at 8 rows (0.80x
             * on one thread), 0.93x at 4 and 16, 0.89x at 24; 1.1B Q6_K 0.84x at 8; 1.1B Q4_0 0.91x
             * and q8_0 0.90x at 16; 110M Q4_K_M 0.88x at 8 (one thread, 110M q8_0 at 16: 0.91x); 2
             * rows 0.99x (Xeon with AMX, busy host). Spread over the blocks of every chunk's run at
             * 32 and 64 rows as well: 0.90-1.07x, no gain that the host's noise let through. All in
             * the run left the memory idle through the unpacking where the run is short (Zen 5, 2
             * threads, against the burst with the unpacking: 1.27x the time at 2 rows, 1.15x at 4):
             * the unpacking's blocks now issue the first lu of them, the share of a slice's time an
             * unpacking takes if it costs what UNPACK_ROWS rows' run does. */
            const size_t bb = 16 * (size_t)kern_block_bytes(WT) / (kq ? 8 : 1),
                         lines = (size_t)nbs * bb / 64;
            const uintptr_t next = b0 + SLICE < nb
                                       ? (uintptr_t)gp + (size_t)(b0 + SLICE) * bb
                                       : (uintptr_t)gp + (far ? 1 : (size_t)RG) * gbytes;
            const int by_block = nc < 4;
            if (far_l2 && by_block) /* the streams PF_FAR_ROWS on, into L2 */
                for (int i = 0; i < RG; i++)
                    for (size_t a = (size_t)b0 * bb; a < (size_t)(b0 + nbs) * bb; a += 64)
                        _mm_prefetch(
                            (const char *)((uintptr_t)gp + (size_t)i * gstep + a + PF_FAR_ROWS),
                            _MM_HINT_T1);
            const size_t lu = by_block ? lines * UNPACK_ROWS / (UNPACK_ROWS + (size_t)T) : 0;
            for (int i = 0; i < RG; i++) {
                if (kq) kquant_scales(WT, gp + (size_t)i * gstep, b0 / 8, ks[i]);
                /* a loop of its own: a test inside the other made T = 32 12% slower */
                if (lu) {
                    size_t l = 0, acc = 0;
                    const uintptr_t ni = next + (size_t)i * gstep;
#pragma GCC unroll 8
                    for (int j = 0; j < nbs; j++) {
                        unpack_block(WT, gp + (size_t)i * gstep, b0 / 8, j, &panel[j * RG + i],
                                     ks[i]);
                        for (acc += lu; acc >= (size_t)nbs; acc -= (size_t)nbs, l++)
                            _mm_prefetch((const char *)(ni + 64 * l), _MM_HINT_T0);
                    }
                } else
#pragma GCC unroll 8
                    for (int j = 0; j < nbs; j++)
                        unpack_block(WT, gp + (size_t)i * gstep, b0 / 8, j, &panel[j * RG + i],
                                     ks[i]);
            }
            if (!by_block && lines != shared_lines) {
                for (int c = 0; c <= nc; c++) share[c] = lines * (size_t)c / (size_t)nc;
                shared_lines = lines;
            }
            for (int c = 0; c < nc; c++) {
                const int t0 = first[c], n = first[c + 1] - t0;
                for (int i = 0; i < RG && !by_block; i++)
                    for (size_t l = share[c]; l < share[c + 1]; l++)
                        _mm_prefetch((const char *)(next + (size_t)i * gstep + 64 * l),
                                     _MM_HINT_T0);
                runs[kind_of(WT)][RG - 1][n - 1](
                    panel, nbs, xa + kern_a8b_at(K, t0, n, b0), y + (size_t)t0 * ldy + 16 * g, ldy,
                    ystep, b0 == 0, next + 64 * lu, gstep, by_block && c == 0 ? lines - lu : 0);
            }
        }
    }
}

#define INT8B(fn, WT)                                                                              \
    void fn(const unsigned char *p, size_t gbytes, int groups, int K, const void *xa, int T,       \
            float *y, size_t ldy) {                                                                \
        matmul_int8b(WT, p, gbytes, groups, K, xa, T, y, ldy);                                     \
    }
INT8B(kern_vnni8b_q8_0, WTYPE_Q8_0)
INT8B(kern_vnni8b_q4_0, WTYPE_Q4_0)
INT8B(kern_vnni8b_q4_1, WTYPE_Q4_1)
INT8B(kern_vnni8b_q5_0, WTYPE_Q5_0)
INT8B(kern_vnni8b_q5_1, WTYPE_Q5_1)
INT8B(kern_vnni8b_q3_k, WTYPE_Q3_K)
INT8B(kern_vnni8b_q4_k, WTYPE_Q4_K)
INT8B(kern_vnni8b_q5_k, WTYPE_Q5_K)
INT8B(kern_vnni8b_q6_k, WTYPE_Q6_K)
#endif
