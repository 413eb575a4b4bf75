/* kernels.h: the batch-invariant matrix kernels.
 *
 * The canonical dot product of length K (the only reduction order exact mode uses):
 *   16 lanes; lane j accumulates the terms k = j, j+16, j+32, ... in increasing k with a fused
 *   multiply-add starting from +0 (terms past K count as 0*0); then the lanes are folded
 *   pairwise: a[j] + a[j+8] (j < 8), then + [j+4], then + [j+2], then + [j+1].
 * It depends on K only, not on how many rows or tokens are computed together, the position
 * of a row in the batch, the tile shape, the SIMD width (AVX-512 holds the 16 lanes in one
 * register, AVX2 in two, the scalar reference in an array) or the thread. The SIMD kernels
 * are blocked over 4 weight rows x 4 tokens so each weight block is read once per 4 tokens;
 * tests check them bit for bit against kern_matmul_ref().
 *
 * Weight types (wtype.h): each weight is formed as the type's exact to_float forms it (F32,
 * F16 and BF16 widen exactly; Q8_0 forms d * q in float, exact: an 11-bit by 8-bit product;
 * the other block types a scale times a small integer, exact, then at most one rounded
 * addition of a min, as ggml does) and then enters the canonical order, so a quantized model
 * computes exactly what the same model with its weights dequantized to F32 computes.
 *
 * Instruction sets: the scalar reference, AVX2 and AVX-512 are all compiled in
 * (kernels_avx2.c, kernels_avx512.c); the best one the CPU supports is used unless
 * kern_isa_use() picks another. Each type's tile per ISA is named in its wtype row. */
#ifndef MODEL_KERNELS_H
#define MODEL_KERNELS_H

#include "model/kernels/kern_traits.h"

/* y[t * ldy + (r - r0)] = dot(row r of w, x + t * ldx) for r in [r0, r1), t in [0, T).
 * [r0, r1) may be one thread's share: the tiling is chosen by the size of the whole matrix,
 * which decides whether the share comes from memory or from the cache. */
void kern_matmul(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y, int ldy);

/* kern_matmul on a given instruction set (which must be supported: kern_isa_supported). */
void kern_matmul_isa(kern_isa isa, const wmat *w, int r0, int r1, const float *x, int ldx, int T,
                     float *y, int ldy);

/* The scalar reference of kern_matmul (same bits, slow). */
void kern_matmul_ref(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y,
                     int ldy);

/* Canonical dot product of two float vectors of length n. */
float kern_dot(const float *a, const float *b, int n);
float kern_dot_ref(const float *a, const float *b, int n);

/* Canonical sum of n floats: the dot-product order with every weight 1 (lane j adds the
 * terms j, j+16, ...; then the pairwise fold). */
float kern_sum(const float *a, int n);
float kern_sum_ref(const float *a, int n);

/* exp(x) for x <= 0 (softmax arguments after the max is subtracted), to about 1 ulp, by a
 * fixed polynomial: the same bits in every SIMD lane and in the scalar code, unlike libm's
 * expf whose vector and scalar versions may differ. */
float kern_exp_ref(float x);

/* y[i] = libm's expf(x[i]) for i < n, bit for bit (x and y do not overlap), in isa's SIMD lanes
 * (glibc's algorithm, kernels_isa.h): SiLU's exp, which stays libm's so that greedy output
 * equals llama2.c's. */
void kern_expf_isa(kern_isa isa, const float *x, float *y, int n);

/* a[i] = silu(a[i]) * b[i] for i < n (SwiGLU's gate), silu(v) = v * (1 / (1 + expf(-v))) as
 * llama2.c writes it, with libm's expf: in the SIMD lanes of kern_expf_isa where the CPU has them
 * and this libm's expf is glibc's algorithm (the first call compares the two on 65536 inputs
 * and, on any difference, calls libm for every value from then on). Each step is one IEEE
 * operation on one value, so every ISA gives the scalar loop's bits (a NaN's sign and payload
 * aside). */
void kern_silu_mul(float *a, const float *b, int n);
void kern_silu_mul_isa(kern_isa isa, float *a, const float *b, int n); /* no comparison */

/* n floats to IEEE halves (2 bytes each, dst), rounded to nearest even, bit for bit
 * wtype_f32_to_f16 (a NaN: its sign and a quiet NaN without payload), and back, bit for bit
 * wtype_f16_to_f32 (a signalling NaN half comes back quiet in SIMD lanes, as the kernels'
 * other widenings do): the f16 KV cache's writes and its widened keys. F16C's vcvtps2ph and
 * vcvtph2ps where the CPU has them; per value, a 64-row pass of 110M q8_0 with an f16 cache spent
 * 22% of its samples converting (perf, Zen 5). */
void kern_f16_from_f32(const float *src, void *dst, int n);
void kern_f16_from_f32_isa(kern_isa isa, const float *src, void *dst, int n);
void kern_f16_to_f32_isa(kern_isa isa, const void *src, float *dst, int n);

/* One query head attending over keys/values at slots[0..n) of a cache whose rows are
 * `stride` floats apart (k, v point at the head's first column): scores = canonical
 * dot(q, k) / sqrt(hs), softmax with kern_exp and kern_sum, out = sum_s e_s v_s (in slot
 * order, fused multiply-add per column) / sum; a score that is NaN or infinite makes every
 * weight and the sum NaN, so every output of the query. slots == NULL means 0..n-1. scratch
 * holds n floats. The result depends only on the inputs, never on which other heads or rows are
 * computed. */
void kern_attend(const float *q, int hs, const float *k, const float *v, size_t stride,
                 const int *slots, int n, float *scratch, float *out);
void kern_attend_ref(const float *q, int hs, const float *k, const float *v, size_t stride,
                     const int *slots, int n, float *scratch, float *out);

/* ---- the int8 mode (forward.h's KERN_EXACT_INT8) -------------------------------------------
 * For the weight types with an int8 row in their table (wtype.h: every block type but q2_k), a
 * matrix product first quantizes each input row by itself (kern_act_quantize), as llama.cpp
 * does before its integer dot products, then multiplies integers. Its own canonical order,
 * again a function of K alone (not of T, the tile, the ISA or the thread):
 *   activations: blocks b of 32 values, amax_b = the largest |x| (NaN if the block holds one,
 *     infinite if it holds an infinity: a block's NaN or infinity reaches every product of it,
 *     and the logits check), d_b = amax_b / 127, q = x * (1 / d_b) rounded to the nearest int8
 *     (ties to even, limited to +-127; 0 when d_b = 0 or the product is NaN);
 *   weights: integers w with a float scale A per 4 consecutive values and, for types with mins
 *     (q4_1, q5_1, q4_k, q5_k), a float M per block of 32: q8_0 w = q, A = d; q4_0 w = q - 8,
 *     A = d; q5_0 w = q5 - 16, A = d; q4_1 and q5_1 w = q (0..15, 0..31), A = d, M = -m (their
 *     value is d * q + m); q4_k w = q (0..15), A = d * sc, M = dmin * m (of the value's
 *     sub-block); q5_k w = q (0..31), A and M as q4_k; q6_k w = q6 - 32, A = d * sc; q3_k
 *     w = q2 - 4 * !bit (-4..3), A = d * (scale - 32) of the value's sub-block of 16;
 *   per block b and lane m = 0..7, P = the sum of w * q over values 32b + 4m .. +3 (an exact
 *     integer); 16 float lanes from +0, lane 8 (b mod 2) + m taking fma(A * d_b, (float)P, lane)
 *     for b = 0, 1, 2, ...; a missing last odd block counts as zero terms; the pairwise fold of
 *     the canonical order (a[j] + a[j+8], then +4, +2, +1);
 *   for types with mins, minus: 8 lanes, lane j taking fma(M, d * s, lane) for block 8u + j of
 *     super-block u = 0, 1, ... (s = the sum of that block's q, d its d_b, d * s rounded), folded
 *     pairwise (j + j+4, + j+2, + j+1).
 * The integer sums are exact in any order, so every ISA (AVX-512 VNNI vpdpbusd, AVX2
 * vpmaddubsw) reproduces the scalar reference bit for bit; a row's result depends on that row's
 * activations only, so the mode is batch-invariant like the exact one, with other bits (the
 * activations are rounded to 8 bits: results are close to, not equal to, the exact mode's). */

/* Whether type t has an int8 row (else the int8 mode runs its exact kernels). */
int kern_int8_supported(wtype t);

/* Bytes of one quantized activation row of K values (K a multiple of 32), a multiple of 64. */
size_t kern_act_bytes(int K);

/* Quantizes T rows of K values (x[t * ldx + k]) into T activation rows lda bytes apart at xa
 * (64-byte aligned, lda >= kern_act_bytes(K)), on the active ISA (the scalar reference or the
 * AVX2 version, same bytes; _isa: on the one named, for the tests). */
void kern_act_quantize(const float *x, int ldx, int T, int K, void *xa, size_t lda);
void kern_act_quantize_isa(kern_isa isa, const float *x, int ldx, int T, int K, void *xa,
                           size_t lda);

/* y[t * ldy + (r - r0)] = the int8-mode dot product of row r of w (kern_int8_supported) with
 * activation row t, for r in [r0, r1), t in [0, T). */
void kern_matmul_int8(const wmat *w, int r0, int r1, const void *xa, size_t lda, int T, float *y,
                      int ldy);
void kern_matmul_int8_isa(kern_isa isa, const wmat *w, int r0, int r1, const void *xa, size_t lda,
                          int T, float *y, int ldy);
void kern_matmul_int8_ref(const wmat *w, int r0, int r1, const void *xa, size_t lda, int T,
                          float *y, int ldy);

/* Packed rows: a type may lay out its rows again, a few at a time, for a one-row tile of one ISA
 * that reads them faster (wtype.h's pack: q4_0, q4_k and q6_k on AVX2, 8 rows, lane i of a
 * register holding row i).
 * Same bits: the packed tile runs the same operations per row and lane. forward.c makes the
 * copy once per model in the int8 mode (wmat.packed) and kern_matmul_int8 reads it at T = 1.
 * kern_int8_packed_size: the copy's bytes (the first rows / G x G rows, G the type's
 * pack_rows), 0 when the type has no packed layout or the rows are longer than
 * KERN_PACKED_MAX_K (a tile keeps a value per 4 of the row on its stack: 64 KB at most;
 * Llama-3-70B's longest rows are 28672); kern_int8_packed_bytes: the same, but 0 too
 * when its tile would not run on the active ISA (whether a model makes the copy);
 * kern_int8_pack writes share `part` of `parts` of it (parts threads may write one copy). */
enum { KERN_PACKED_MAX_K = 65536 };
size_t kern_int8_packed_size(const wmat *w);
size_t kern_int8_packed_bytes(const wmat *w);
void kern_int8_pack(const wmat *w, unsigned char *dst, int part, int parts);

/* ---- the int8b mode (forward.h's KERN_EXACT_INT8B) -----------------------------------------
 * The int8 mode's integers with a reduction order made for integer dot products: a whole block's
 * products are added up in integers and meet one float FMA, and a row is one float lane, so a
 * tile holds 16 rows in a register and reuses each unpacked weight for every token of the pass
 * (ggml's q8_0 and q4_0 dot products, and ik_llama.cpp's interleaved rows, do the same). Its
 * canonical order, again a function of K alone:
 *   activations: the int8 mode's (blocks b of 32, d_b, q), laid out for the tiles
 *     (kern_act8b_quantize; kernels_isa.h, "int8b activations");
 *   weights: the int8 mode's integers w, scales A and mins M (its to_int8), in units of 32
 *     values (a block) for every type but q3_k and q6_k, whose scale changes every 16 values:
 *     their units are the two halves of a block; every value of a unit has the same A;
 *   per row and token, one float acc from +0; for b = 0, 1, 2, ...: for each unit u of block b
 *     in order, P_u = the sum of w * q over the unit (an exact integer, |P| < 2^20) and
 *     acc = fma(A_u * d_b, (float)P_u, acc); then, for the types with mins (q4_1, q5_1, q4_k,
 *     q5_k), acc = fma(-M_b, ds_b, acc) with ds_b = d_b * (sum of block b's q), rounded (the
 *     int8 mode's ds); the result is acc, with no fold.
 * So a token's result depends on its own activation row and K only (batch-invariant), and every
 * ISA reproduces the scalar reference bit for bit: the integers are exact in any order, and the
 * float steps are the same operations in the same order. Its bits differ from the int8 mode's
 * (other float steps), as the int8 mode's differ from the exact mode's.
 * The tiles read a copy of the matrix with 16 rows interleaved ("16-row copy", below), made once
 * per model (forward.c). Without it (kern_matmul_int8b on a wmat whose r16 is NULL) they build
 * each group of 16 rows in a buffer first: same bits, slower. */

/* Whether type t has int8b tiles (every type with an int8 row). */
int kern_int8b_supported(wtype t);

/* Bytes of T quantized activation rows of K values (K a multiple of 32) in the int8b layout,
 * rounded up to a multiple of 64 (aligned_alloc's sizes). */
size_t kern_act8b_bytes(int T, int K);

/* Quantizes T rows of K values (x[t * ldx + k]) into the int8b layout at xa (64-byte aligned,
 * kern_act8b_bytes(T, K) bytes): the same q and d_b as kern_act_quantize, on the active ISA (the
 * scalar reference, AVX2 or AVX-512, same bytes; _isa: on the one named). */
void kern_act8b_quantize(const float *x, int ldx, int T, int K, void *xa);
void kern_act8b_quantize_isa(kern_isa isa, const float *x, int ldx, int T, int K, void *xa);
/* The layout interleaves the bytes and sums of groups of up to 8 tokens: kern_act8b_groups(T)
 * of them, group i holding tokens [*t0, *t1). Threads that quantize one group's tokens apart
 * write the same cache lines: they split a group by columns instead. */
int kern_act8b_groups(int T);
void kern_act8b_group(int T, int i, int *t0, int *t1);
/* The same for tokens [t0, t1) of the T and columns [k0, k1) (multiples of 32, or k1 = K) only:
 * threads may quantize disjoint ranges of a pass (the norm's threads a share of a group's
 * columns; the threads that produced disjoint columns of x those columns of every token). */
void kern_act8b_quantize_range(const float *x, int ldx, int T, int K, void *xa, int t0, int t1,
                               int k0, int k1);

/* y[t * ldy + (r - r0)] = the int8b dot product of row r of w (kern_int8b_supported) with token
 * t of the T rows at xa (kern_act8b_quantize), for r in [r0, r1), t in [0, T). */
void kern_matmul_int8b(const wmat *w, int r0, int r1, const void *xa, int T, float *y, int ldy);
void kern_matmul_int8b_isa(kern_isa isa, const wmat *w, int r0, int r1, const void *xa, int T,
                           float *y, int ldy);
void kern_matmul_int8b_ref(const wmat *w, int r0, int r1, const void *xa, int T, float *y,
                           int ldy);

/* The 16-row copy (wmat.r16): the rows in groups of 16 (the last group padded with zero rows),
 * each group's blocks in order, each block the 16 rows' copies of it field by field: a 2-byte
 * field (an f16 scale) as 16 halves, a field of 4k bytes as its k 32-bit words, each word of the
 * 16 rows in a row (64 bytes: a register whose lane i is row i). A block takes the bytes of the
 * 16 rows' blocks (wtype_pack16, model/weights). kern_int8b_packed_size: its bytes (0 when
 * the type has no int8b tiles); kern_int8b_pack writes share `part` of `parts` of it. */
size_t kern_int8b_packed_size(const wmat *w);
void kern_int8b_pack(const wmat *w, unsigned char *dst, int part, int parts);

/* Attention of nq queries against one head's keys and values (rows hs floats apart: a head's
 * slice of the KV cache), each bit for bit kern_attend over its own slot list: query t (at
 * q + t * ldq) sees slots 0..n_shared-1, then tail[t][0..n_tail[t]). Its scores and softmax
 * weights go to scratch + t * lds, its result to out + t * ldo. The shared keys and values are
 * read from memory once for all queries (kern_attend_kv, below: this is its f32 case): the
 * scores with the canonical dot per score, as kern_attend's, the weighted values with the same
 * four fused multiply-add chains per column, each in slot order. */
void kern_attend_shared(const float *q, size_t ldq, int nq, int hs, const float *k, const float *v,
                        int n_shared, const int *const *tail, const int *n_tail, float *scratch,
                        size_t lds, float *out, size_t ldo);
void kern_attend_shared_isa(kern_isa isa, const float *q, size_t ldq, int nq, int hs,
                            const float *k, const float *v, int n_shared, const int *const *tail,
                            const int *n_tail, float *scratch, size_t lds, float *out, size_t ldo);

/* kern_attend_shared over a cache whose keys and values are stored as type kv (k, v: rows of hs
 * values of that type; kern_attend_kv_supported: WTYPE_F32, what kern_attend_shared reads, and
 * WTYPE_F16, IEEE halves). Each stored value is widened exactly where it is read and enters the
 * f32 order unchanged (the canonical dot per score, the softmax, the values' chains in slot
 * order), so the result is, bit for bit, kern_attend_shared's over the cache widened to float,
 * and each query kern_attend_ref's over its own slots of it. How it runs (the same order in
 * every ISA): the scores of all nq queries 16 keys at a time, each block of keys read from
 * memory once for all of them (AVX-512); the value sums a block of value rows at a time
 * (kern_values_block, kernels_isa.h), each block read once for every query and column. */
int kern_attend_kv_supported(wtype t);
void kern_attend_kv(wtype kv, const float *q, size_t ldq, int nq, int hs, const void *k,
                    const void *v, int n_shared, const int *const *tail, const int *n_tail,
                    float *scratch, size_t lds, float *out, size_t ldo);
void kern_attend_kv_isa(kern_isa isa, wtype kv, const float *q, size_t ldq, int nq, int hs,
                        const void *k, const void *v, int n_shared, const int *const *tail,
                        const int *n_tail, float *scratch, size_t lds, float *out, size_t ldo);

/* Row `row` of w widened to float (embedding lookup). */
void kern_row_to_f32(const wmat *w, int row, float *out);

/* kern_dot, kern_sum and kern_attend on a given (supported) instruction set. */
float kern_dot_isa(kern_isa isa, const float *a, const float *b, int n);
float kern_sum_isa(kern_isa isa, const float *a, int n);
void kern_attend_isa(kern_isa isa, const float *q, int hs, const float *k, const float *v,
                     size_t stride, const int *slots, int n, float *scratch, float *out);

/* Instruction sets: whether this build and CPU can run isa; its name ("scalar", "avx2",
 * "avx512"); the one the kern_* entry points use (the best supported one by default); and a
 * way to pick another for the whole process (tests; returns -1 if isa is not supported). */
int kern_isa_supported(kern_isa isa);
const char *kern_isa_name(kern_isa isa);
kern_isa kern_isa_active(void);
int kern_isa_use(kern_isa isa);

/* AVX-VNNI (the 256-bit vpdpbusd: Intel's Alder Lake and later client cores, its E-core Xeons,
 * Zen 5): whether the CPU has it; whether the AVX2 instruction set's int8b tiles use it (by
 * default where the CPU has it, unless the environment says DECBENCH_AVXVNNI=0: what a CPU with
 * AVX2 alone runs); and a way to set that for the whole process (tests; -1 if not supported).
 * Either way the bits are the same. */
int kern_avxvnni_supported(void);
int kern_avxvnni_active(void);
int kern_avxvnni_use(int on);

/* The AVX-512 int8b tiles' far prefetches into L2 (kernels_avx512_int8b.c has the figures), and
 * the AVX-512 attention's (kernels_avx512_attend.c, ATTEND_FAR_PREFETCH): whether they are issued
 * (by default on Zen 4 alone, AMD family 25 with AVX-512, where the tiles' cut one-row passes to
 * 0.66-0.98x the time; on Zen 5 they cost 1.08-1.25x; the environment's
 * DECBENCH_FAR_PREFETCH=1 or 0 overrides), and a way to set that for the whole process (tests).
 * Either way the bits are the same. */
int kern_far_prefetch_active(void);
void kern_far_prefetch_use(int on);
/* Whether the int8b mode's passes issue them: the setting is on and the tile that runs is
 * AVX-512's (the active ISA is AVX-512 and the CPU has VNNI). */
int kern_far_prefetch_issued(void);

/* What the active instruction set's matrix tiles can issue at most per cycle and core: int8 ops
 * (2 per multiply-add: vpdpbusd with AVX-512 VNNI, else vpmaddubsw) and f32 flops (2 per FMA),
 * and a name for it ("avx512-vnni x2", ...). With AVX-512 the number of 512-bit units is
 * measured on the calling core at the clock ghz (vpdpbusd issues where the FMAs do on every such
 * core): Xeon Gold and Platinum and Zen 5 issue two a cycle, Zen 4 one (it runs a 512-bit
 * instruction on its two 256-bit pipes); with ghz 0, the vendor's rule (Intel 2, AMD 1). AVX2:
 * two 256-bit units. `decbench cost` multiplies it by the cores and ghz. */
void kern_peak_per_cycle(double ghz, double *int8_ops, double *f32_flops, const char **what);

/* The name of the active instruction set ("avx512", "avx2", "scalar"). */
const char *kern_simd_name(void);

#endif
