/* kernel_speed.c: nanoseconds per 64 weights of each weight type's matrix tiles, both kernel
 * modes, on one core (model/GGUF.md and README's kernel figures). Not a test and not built by
 * default:
 *
 *   cmake --build build --target kernel_speed && taskset -c 1 build/kernel_speed [TYPE ...]
 *
 * For each type (default: every type of the table) it times kern_matmul (the exact mode) and
 * kern_matmul_int8 (the int8 mode, activations quantized once outside the timing; `-` where the
 * type has no int8 product) on the active instruction set (DECBENCH_ISA=avx2|scalar picks a
 * lower one), at T = 1, 2, 4, 8, 16 and 64 rows of input, for a matrix in the cache (64 rows x
 * 2048: what the tiles' arithmetic costs) and, at T = 1, for one that streams from memory (256
 * MB: what a one-row pass of a large model sees). The figure is time / (rows x K / 64 x T): the
 * cost of one weight meeting one input row, so a tile that reuses a weight for several rows
 * gets cheaper with T. Weights are random bytes with every f16 scale set to 1, so every value is
 * finite and no denormal slows the arithmetic. Best of 40 runs of at least 25 ms each: on a
 * shared machine the best of many short runs is the figure that repeats (runs of 0.2 s each
 * moved by 30% between invocations).
 * A third line, "int8b", times the int8b mode (kernels.h) from the type's 16-row copy, as a
 * model runs it. A fourth, "pack", times the int8 mode at T = 1 with the type's packed rows
 * (kernels.h), where the type has them on this CPU, as a model's one-row passes run.
 * KERNEL_SPEED_RUNS and KERNEL_SPEED_MS change the 40 runs of 25 ms (on a busy machine, more
 * and shorter runs find a quiet slice more often: 200 runs of 3 ms). KERNEL_SPEED_T=1,8,64
 * picks the T columns, KERNEL_SPEED_NO_STREAM=1 skips the streaming one,
 * KERNEL_SPEED_STREAM_T=8 times the streaming matrix at T = 8 instead of 1 (what a model's
 * multi-row pass sees: its weights come from memory once per block of row groups). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/kernels/kernels.h"
#include "model/weights/wtype.h"

#define K 2048

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Offsets of a block's f16 scale fields (d, and dmin or m where the type has one). */
static void scale_offsets(wtype t, int *a, int *b) {
    *a = *b = -1;
    switch (t) {
    case WTYPE_Q8_0:
    case WTYPE_Q4_0:
    case WTYPE_Q5_0:
        *a = 0;
        break;
    case WTYPE_Q4_1:
    case WTYPE_Q5_1:
    case WTYPE_Q4_K:
    case WTYPE_Q5_K:
        *a = 0, *b = 2;
        break;
    case WTYPE_Q2_K:
        *a = 80, *b = 82;
        break;
    case WTYPE_Q3_K:
        *a = 108;
        break;
    case WTYPE_Q6_K:
        *a = 208;
        break;
    default:
        break;
    }
}

static unsigned char *matrix(wtype t, int rows) {
    const wtype_traits *tt = wtype_get(t);
    size_t n = wtype_row_bytes(t, K) * (size_t)rows;
    unsigned char *w = aligned_alloc(64, (n + 63) / 64 * 64);
    if (!w) return NULL;
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        w[i] = (unsigned char)(s >> 24);
    }
    if (t == WTYPE_F32 || t == WTYPE_F16 || t == WTYPE_BF16) { /* values in [-1, 1] */
        for (size_t i = 0; i < (size_t)rows * K; i++) {
            float f = (float)((int)(i * 2654435761u % 2001) - 1000) / 1000.0f;
            if (t == WTYPE_F32) memcpy(w + 4 * i, &f, 4);
            uint16_t h = t == WTYPE_F16 ? wtype_f32_to_f16(f) : wtype_f32_to_bf16(f);
            if (t != WTYPE_F32) memcpy(w + 2 * i, &h, 2);
        }
        return w;
    }
    int a, b;
    scale_offsets(t, &a, &b);
    const uint16_t one = 0x3c00;
    for (size_t blk = 0; blk < n / (size_t)tt->block_bytes; blk++) {
        unsigned char *p = w + blk * (size_t)tt->block_bytes;
        if (a >= 0) memcpy(p + a, &one, 2);
        if (b >= 0) memcpy(p + b, &one, 2);
    }
    return w;
}

/* The int8b mode's activation rows for each T (kern_act8b_quantize lays them out by T). */
static void *xa8b[65];

/* Runs per figure and their minimum length (KERNEL_SPEED_RUNS, KERNEL_SPEED_MS). */
static int n_runs = 40;
static double run_seconds = 0.025;

/* Best of n_runs runs of >= run_seconds: ns per 64 weights and input row (int8: 0 exact, 1 int8,
 * 2 int8b). */
static double time_ns(const wmat *m, int int8, const float *x, const void *xa, size_t lda, int T,
                      float *y) {
    double best = 1e30;
    for (int run = 0; run < n_runs; run++) {
        int reps = 0;
        double t0 = now(), dt;
        do {
            if (int8 == 2)
                kern_matmul_int8b(m, 0, m->rows, xa8b[T], T, y, m->rows);
            else if (int8)
                kern_matmul_int8(m, 0, m->rows, xa, lda, T, y, m->rows);
            else
                kern_matmul(m, 0, m->rows, x, K, T, y, m->rows);
            reps++;
        } while ((dt = now() - t0) < run_seconds);
        double ns = dt / reps * 1e9 / ((double)m->rows * K / 64 * T);
        best = ns < best ? ns : best;
    }
    return best;
}

int main(int argc, char **argv) {
    const char *isa = getenv("DECBENCH_ISA");
    if (isa)
        for (int i = 0; i < KERN_ISA_COUNT; i++)
            if (strcmp(isa, kern_isa_name((kern_isa)i)) == 0 && kern_isa_use((kern_isa)i) != 0) {
                fprintf(stderr, "kernel_speed: this CPU cannot run %s\n", isa);
                return 2;
            }
    int Ts[16] = {1, 2, 4, 8, 16, 64}, NT = 6;
    enum { TMAX = 64, CACHE_ROWS = 64 };
    const char *tl = getenv("KERNEL_SPEED_T"); /* e.g. "1,8,64": the T columns */
    if (tl) {
        NT = 0;
        for (const char *p = tl; *p && NT < 16;) {
            int v = (int)strtol(p, (char **)&p, 10);
            if (v < 1 || v > TMAX) {
                fprintf(stderr, "kernel_speed: KERNEL_SPEED_T: %d is not in 1..%d\n", v, TMAX);
                return 2;
            }
            Ts[NT++] = v;
            while (*p == ',') p++;
        }
    }
    const int stream = getenv("KERNEL_SPEED_NO_STREAM") == NULL;
    if (getenv("KERNEL_SPEED_RUNS")) n_runs = atoi(getenv("KERNEL_SPEED_RUNS"));
    if (getenv("KERNEL_SPEED_MS")) run_seconds = atof(getenv("KERNEL_SPEED_MS")) / 1000;
    if (n_runs < 1 || !(run_seconds > 0)) {
        fprintf(stderr, "kernel_speed: KERNEL_SPEED_RUNS and KERNEL_SPEED_MS must be positive\n");
        return 2;
    }
    const char *st = getenv("KERNEL_SPEED_STREAM_T");
    char *end = NULL;
    const long stream_T = st ? strtol(st, &end, 10) : 1;
    if (stream_T < 1 || stream_T > TMAX || (st && *end)) {
        fprintf(stderr, "kernel_speed: KERNEL_SPEED_STREAM_T: '%s' is not a number in 1..%d\n", st,
                TMAX);
        return 2;
    }
    float *x = aligned_alloc(64, sizeof(float) * K * TMAX); /* as a model's input rows */
    /* the streaming matrix's rows (at most 1 << 20: 256 MB of the smallest rows) x stream_T */
    float *y = malloc(sizeof(float) * ((size_t)stream_T << 20));
    size_t lda = kern_act_bytes(K);
    void *xa = aligned_alloc(64, lda * TMAX);
    if (!x || !y || !xa) return 1;
    for (int i = 0; i < K * TMAX; i++) x[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
    kern_act_quantize(x, K, TMAX, K, xa, lda);
    for (int T = 1; T <= TMAX; T++) {
        xa8b[T] = aligned_alloc(64, kern_act8b_bytes(T, K));
        if (!xa8b[T]) return 1;
        kern_act8b_quantize(x, K, T, K, xa8b[T]);
    }
    printf("# kernel_speed: ns per 64 weights and input row, one thread, %s, K = %d\n",
           kern_simd_name(), K);
    printf("%-6s %-5s", "type", "mode");
    for (int i = 0; i < NT; i++) printf("  T=%-4d", Ts[i]);
    if (stream)
        printf("  stream T=%ld\n", stream_T);
    else
        printf("\n");
    for (int ti = 0; ti < WTYPE_COUNT; ti++) {
        wtype t = (wtype)ti;
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++) wanted |= strcmp(argv[a], wtype_name(t)) == 0;
        if (!wanted) continue;
        unsigned char *wc = matrix(t, CACHE_ROWS);
        int stream_rows = stream ? (int)(((size_t)256 << 20) / wtype_row_bytes(t, K)) : 1;
        unsigned char *ws = matrix(t, stream_rows);
        if (!wc || !ws) return 1;
        wmat mc = {t, wc, CACHE_ROWS, K, NULL, NULL}, ms = {t, ws, stream_rows, K, NULL, NULL};
        for (int int8 = 0; int8 < 2; int8++) {
            printf("%-6s %-5s", wtype_name(t), int8 ? "int8" : "exact");
            if (int8 && !kern_int8_supported(t)) {
                printf("  -\n");
                continue;
            }
            for (int i = 0; i < NT; i++)
                printf("  %6.3f", time_ns(&mc, int8, x, xa, lda, Ts[i], y));
            if (stream) printf("  %6.3f", time_ns(&ms, int8, x, xa, lda, (int)stream_T, y));
            printf("\n");
            fflush(stdout);
        }
        /* the int8b mode, from the 16-row copy as a model runs it */
        if (kern_int8b_supported(t)) {
            unsigned char *rc = malloc(kern_int8b_packed_size(&mc)),
                          *rs = stream ? malloc(kern_int8b_packed_size(&ms)) : NULL;
            if (!rc || (stream && !rs)) return 1;
            kern_int8b_pack(&mc, rc, 0, 1), mc.r16 = rc;
            if (rs) kern_int8b_pack(&ms, rs, 0, 1), ms.r16 = rs;
            printf("%-6s %-5s", wtype_name(t), "int8b");
            for (int i = 0; i < NT; i++) printf("  %6.3f", time_ns(&mc, 2, x, xa, lda, Ts[i], y));
            if (rs) printf("  %6.3f", time_ns(&ms, 2, x, xa, lda, (int)stream_T, y));
            printf("\n");
            fflush(stdout);
            mc.r16 = ms.r16 = NULL;
            free(rc), free(rs);
        }
        /* the int8 mode with the type's packed rows, as a model runs it at T = 1 on this CPU */
        size_t pcb = kern_int8_packed_bytes(&mc),
               psb = stream && stream_T == 1 ? kern_int8_packed_bytes(&ms) : 0;
        unsigned char *pc = pcb ? aligned_alloc(64, (pcb + 63) / 64 * 64) : NULL,
                      *ps = psb ? aligned_alloc(64, (psb + 63) / 64 * 64) : NULL;
        if (pc) {
            kern_int8_pack(&mc, pc, 0, 1), mc.packed = pc;
            printf("%-6s %-5s", wtype_name(t), "pack");
            for (int i = 0; i < NT; i++)
                if (Ts[i] == 1)
                    printf("  %6.3f", time_ns(&mc, 1, x, xa, lda, 1, y));
                else
                    printf("  %6s", "-");
            if (ps) {
                kern_int8_pack(&ms, ps, 0, 1), ms.packed = ps;
                printf("  %6.3f", time_ns(&ms, 1, x, xa, lda, 1, y));
            }
            printf("\n");
            fflush(stdout);
        }
        free(wc), free(ws), free(pc), free(ps);
    }
    for (int T = 1; T <= TMAX; T++) free(xa8b[T]);
    free(x), free(y), free(xa);
    return 0;
}
