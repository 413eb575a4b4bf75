/* int8b_ceiling.c: how close the int8b mode's tiles come to what its order of operations allows
 * on this CPU, and what that order allows against the int8 peak (kernels.h, "the int8b mode").
 * Not a test and not built by default:
 *
 *   cmake --build build --target int8b_ceiling && taskset -c 1 build/int8b_ceiling
 *
 * One core, everything in the cache, nanoseconds per 64 weights and token (one vpdpbusd's worth
 * of products: 16 rows x 4 values), for the three shapes of unit the tiles have:
 *   tile      kern_matmul_int8b on 64 rows x 2048 of q8_0, q4_k and q6_k, 64 tokens, from the
 *             16-row copy (as bench/kernel_speed.c times it);
 *   contract  a loop of only what the order requires per unit, token and 16 rows: the unit's
 *             vpdpbusd (8; 4 for q6_k's 16-value units), the conversion of its integer sum,
 *             the product of the two scales and the fused multiply-add into the accumulator,
 *             and per block the min's multiply-add (q4_k); 4 tokens x 2 groups at a time, as
 *             the tiles take them, operands in registers or L1;
 *   dots      the same loop without the float work: the products alone.
 * The int8 peak is 64 weights per vpdpbusd at the rate a chain of independent vpdpbusd runs
 * ("peak" below, measured here). The contract's share of the peak is the most any int8b tile
 * can reach on this CPU; a whole pass reaches less by what else it does (attention, norms,
 * activations, the weights' unpacking and their stream from memory). */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"
#include "model/weights/wtype.h"

#define K 2048
#define ROWS 64
#define TOKENS 64

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds per call of f(arg): the best of `runs` runs of at least 20 ms each. */
static double best_time(void (*f)(void *), void *arg, int runs) {
    double best = 1e30;
    for (int run = 0; run < runs; run++) {
        int calls = 0;
        const double t0 = now();
        double t;
        do {
            f(arg);
            calls++;
        } while ((t = now() - t0) < 0.02);
        if (t / calls < best) best = t / calls;
    }
    return best;
}

/* ---- the peak: independent vpdpbusd chains ------------------------------------------------ */

/* 12 chains of 8 vpdpbusd an iteration, in inline assembly: from intrinsics, gcc 12 copied 15 of
 * 16 accumulators and reloaded one from the stack each iteration, which halved the rate on
 * Zen 5 (0.29 ns against 0.157). */
__attribute__((noinline)) static void peak_loop(void *arg) {
    (void)arg;
    for (int n = 0; n < 4096 * 16 / 96; n++)
        __asm__ volatile(
            ".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13\n\tvpxord %%zmm\\r, %%zmm\\r, %%zmm\\r\n\t.endr\n\t"
            ".rept 8\n\t"
            ".irp r,0,1,2,3,4,5,6,7,8,9,10,11\n\tvpdpbusd %%zmm13, %%zmm12, %%zmm\\r\n\t.endr\n\t"
            ".endr" ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
            "xmm9", "xmm10", "xmm11", "xmm12", "xmm13");
}

/* ---- the contract loop ------------------------------------------------------------------ */

enum { SHAPE_32, SHAPE_32_MIN, SHAPE_16 };

typedef struct {
    __m512i w[8];
    __m512 a[2], m;
} unit_rec;

typedef struct {
    unit_rec rec[8][2];                    /* 8 blocks x 2 groups, as a tile's slice */
    unsigned char x[8][TOKENS / 16][128];  /* a chunk's values and scales per block (L1) */
    float y[TOKENS][32];
} contract_arg;

/* One slice of 8 blocks for 4 tokens x 2 groups, as the tiles order it: per unit the integer
 * sums from 8 (or 4) vpdpbusd, then per token and group the conversion, the scales' product and
 * the fused multiply-add, then the block's min. */
__attribute__((target("avx512f,avx512vnni"), always_inline)) static inline void
contract_slice(const contract_arg *c, const unsigned char *x, float *y, int shape, int floats) {
    const int units = shape == SHAPE_16 ? 2 : 1, per = 8 / units;
    __m512 acc[2][4];
    for (int g = 0; g < 2; g++)
        for (int t = 0; t < 4; t++) acc[g][t] = _mm512_loadu_ps(y + 32 * t + 16 * g);
    for (int j = 0; j < 8; j++) {
        const unit_rec *r = c->rec[j];
        const unsigned char *xb = x; /* the same record each block: L1, as the tiles find it */
        for (int u = 0; u < units; u++) {
            __m512i s[2][4];
#pragma GCC unroll 8
            for (int t = 0; t < 4; t++) s[0][t] = s[1][t] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int m = per * u; m < per * (u + 1); m++)
#pragma GCC unroll 4
                for (int t = 0; t < 4; t++) {
                    int32_t v;
                    memcpy(&v, xb + 32 * t + 4 * m, 4);
                    const __m512i xv = _mm512_set1_epi32(v);
                    s[0][t] = _mm512_dpbusd_epi32(s[0][t], r[0].w[m], xv);
                    s[1][t] = _mm512_dpbusd_epi32(s[1][t], r[1].w[m], xv);
                }
#pragma GCC unroll 4
            for (int t = 0; t < 4; t++) {
                float d;
                memcpy(&d, xb + 4 * t + 96, 4);
                const __m512 dv = _mm512_set1_ps(d);
                for (int g = 0; g < 2; g++)
                    acc[g][t] = floats ? _mm512_fmadd_ps(_mm512_mul_ps(r[g].a[u], dv),
                                                         _mm512_cvtepi32_ps(s[g][t]), acc[g][t])
                                       : _mm512_castsi512_ps(_mm512_add_epi32(
                                             _mm512_castps_si512(acc[g][t]), s[g][t]));
            }
        }
        if (shape == SHAPE_32_MIN && floats)
#pragma GCC unroll 4
            for (int t = 0; t < 4; t++) {
                float ds;
                memcpy(&ds, xb + 4 * t + 112, 4);
                for (int g = 0; g < 2; g++)
                    acc[g][t] = _mm512_fmadd_ps(r[g].m, _mm512_set1_ps(ds), acc[g][t]);
            }
    }
    for (int g = 0; g < 2; g++)
        for (int t = 0; t < 4; t++) _mm512_storeu_ps(y + 32 * t + 16 * g, acc[g][t]);
}

#define CONTRACT_FN(name, SHAPE, FLOATS)                                                           \
    __attribute__((target("avx512f,avx512vnni"), noinline)) static void name(void *arg) {          \
        contract_arg *c = arg;                                                                     \
        for (int rep = 0; rep < ROWS / 32 * (K / 256); rep++)                                      \
            for (int t0 = 0; t0 < TOKENS; t0 += 4)                                                 \
                contract_slice(c, c->x[rep % 8][t0 / 16], c->y[t0], SHAPE, FLOATS);                \
    }
CONTRACT_FN(contract_32, SHAPE_32, 1)
CONTRACT_FN(contract_32_min, SHAPE_32_MIN, 1)
CONTRACT_FN(contract_16, SHAPE_16, 1)
CONTRACT_FN(dots_32, SHAPE_32, 0)
CONTRACT_FN(dots_16, SHAPE_16, 0)

/* ---- the tiles -------------------------------------------------------------------------- */

typedef struct {
    wmat m;
    void *xa;
    float *y;
} tile_arg;

static void tile_call(void *arg) {
    tile_arg *a = arg;
    kern_matmul_int8b(&a->m, 0, ROWS, a->xa, TOKENS, a->y, ROWS);
}

static int tile_setup(tile_arg *a, wtype t) {
    const size_t ldw = wtype_row_bytes(t, K);
    unsigned char *w = malloc(ldw * ROWS);
    float *x = malloc(sizeof(float) * K * TOKENS);
    a->xa = aligned_alloc(64, kern_act8b_bytes(TOKENS, K));
    a->y = malloc(sizeof(float) * ROWS * TOKENS);
    if (!w || !x || !a->xa || !a->y) return -1;
    srand(1);
    for (size_t i = 0; i < ldw * ROWS; i++) w[i] = (unsigned char)rand();
    /* every f16 field of a block set to 1.0 (q8_0 d; q4_k d, dmin; q6_k d): finite weights */
    const uint16_t one = 0x3c00;
    const size_t bb = wtype_get(t)->block_bytes;
    for (size_t b = 0; b < ldw * ROWS / bb; b++) {
        unsigned char *blk = w + b * bb;
        if (t == WTYPE_Q8_0) memcpy(blk, &one, 2);
        if (t == WTYPE_Q4_K) memcpy(blk, &one, 2), memcpy(blk + 2, &one, 2);
        if (t == WTYPE_Q6_K) memcpy(blk + bb - 2, &one, 2);
    }
    for (int i = 0; i < K * TOKENS; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    kern_act8b_quantize(x, K, TOKENS, K, a->xa);
    free(x);
    a->m = (wmat){t, w, ROWS, K, NULL, NULL};
    unsigned char *r16 = malloc(kern_int8b_packed_size(&a->m));
    if (!r16) return -1;
    kern_int8b_pack(&a->m, r16, 0, 1);
    a->m.r16 = r16;
    return 0;
}

int main(void) {
    if (!__builtin_cpu_supports("avx512vnni")) {
        fprintf(stderr, "int8b_ceiling: this CPU has no AVX-512 VNNI\n");
        return 2;
    }
    int32_t sink;
    contract_arg *c = aligned_alloc(64, (sizeof(contract_arg) + 63) / 64 * 64);
    if (!c) return 1;
    memset(c, 1, sizeof *c);
    for (int j = 0; j < 8; j++)
        for (int g = 0; g < 2; g++)
            c->rec[j][g].a[0] = c->rec[j][g].a[1] = c->rec[j][g].m = _mm512_set1_ps(1e-3f);
    for (int j = 0; j < 8; j++)
        for (int q = 0; q < TOKENS / 16; q++)
            for (int i = 96; i < 128; i += 4) {
                const float s = 1e-3f;
                memcpy(&c->x[j][q][i], &s, 4);
            }
    memset(c->y, 0, sizeof c->y);
    /* vpdpbusd a contract call makes: slices x 16 token quads x 8 blocks x 2 groups x 8 */
    const double dots = (double)(ROWS / 32 * (K / 256)) * (TOKENS / 4) * 8 * 2 * 4 * 8;
    struct {
        const char *type;
        wtype t;
        void (*contract)(void *), (*bare)(void *);
    } rows[] = {{"q8_0", WTYPE_Q8_0, contract_32, dots_32},
                {"q4_k", WTYPE_Q4_K, contract_32_min, dots_32},
                {"q6_k", WTYPE_Q6_K, contract_16, dots_16}};
    /* the parts round-robin, 20 rounds, each part's best: this VM's speed moves by a third
     * within minutes with the host's load, and a part measured at another minute than the peak
     * would carry that into its share */
    enum { NTYPES = sizeof rows / sizeof rows[0], ROUNDS = 20 };
    tile_arg tiles[NTYPES];
    for (int i = 0; i < NTYPES; i++)
        if (tile_setup(&tiles[i], rows[i].t) != 0) return 1;
    double peak = 1e30, tile[NTYPES], con[NTYPES], bare[NTYPES];
    for (int i = 0; i < NTYPES; i++) tile[i] = con[i] = bare[i] = 1e30;
    for (int round = 0; round < ROUNDS; round++) {
        double v = best_time(peak_loop, &sink, 1) / (4096 * 16 / 96 * 96.0) * 1e9;
        peak = v < peak ? v : peak;
        for (int i = 0; i < NTYPES; i++) {
            v = best_time(tile_call, &tiles[i], 1) / ((double)ROWS * K / 64 * TOKENS) * 1e9;
            tile[i] = v < tile[i] ? v : tile[i];
            v = best_time(rows[i].contract, c, 1) / dots * 1e9;
            con[i] = v < con[i] ? v : con[i];
            v = best_time(rows[i].bare, c, 1) / dots * 1e9;
            bare[i] = v < bare[i] ? v : bare[i];
        }
    }
    printf("# int8b_ceiling: ns per 64 weights and token, one thread, in cache, best of %d "
           "rounds; peak %.3f (a vpdpbusd chain)\n",
           ROUNDS, peak);
    printf("%-6s %8s %9s %8s %13s %15s\n", "type", "tile", "contract", "dots", "tile/contract",
           "contract share");
    for (int i = 0; i < NTYPES; i++) {
        printf("%-6s %8.3f %9.3f %8.3f %12.0f%% %14.0f%%\n", rows[i].type, tile[i], con[i],
               bare[i], 100 * con[i] / tile[i], 100 * peak / con[i]);
        free((void *)tiles[i].m.data), free((void *)tiles[i].m.r16), free(tiles[i].xa);
        free(tiles[i].y);
    }
    printf("# contract share: the most of the int8 peak an int8b tile can reach here\n");
    free(c);
    return sink == 42 ? 3 : 0;
}
