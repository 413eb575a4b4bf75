/* kernels_int8b.c: the int8b mode (kernels.h, "the int8b mode"): the quantizer of activation
 * rows into the tiles' layout, the scalar reference of its order, the 16-row copy, and the
 * dispatch to the tiles of each instruction set (kernels_avx512_int8b.c, kernels_avx2_int8b.c)
 * through the compute table. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"
#include "model/weights/wtype_blocks.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif

int kern_int8b_supported(wtype t) {
    return kern_int8_supported(t) && wtype_pack16_supported(t);
}

size_t kern_act8b_bytes(int T, int K) {
    return ((size_t)T * (size_t)(K / 32) * KERN_A8B_REC + 63) / 64 * 64;
}

/* ---- quantizing activations -------------------------------------------------------------- */

/* Blocks [b0, b1) of token i of the chunk of n whose records start at `chunk`, from its row x. */
static void quantize_row_ref(const float *x, int b0, int b1, unsigned char *chunk, int n, int i) {
    for (int b = b0; b < b1; b++) {
        unsigned char *rec = chunk + (size_t)b * n * KERN_A8B_REC;
        int s4[8];
        float d;
        kern_a8_block_ref(x + 32 * b, (int8_t *)(rec + 32 * i), &d, s4);
        kern_a8b_put_sums(rec, n, i, d, s4[0] + s4[1] + s4[2] + s4[3],
                          s4[4] + s4[5] + s4[6] + s4[7]);
    }
}

/* Blocks [b0, b1) of tokens [lo, hi) of T. */
static void quantize_part(kern_isa isa, const float *x, int ldx, int T, int K, void *xa, int lo,
                          int hi, int b0, int b1) {
    void (*row)(const float *, int, int, unsigned char *, int, int) = quantize_row_ref;
#if KERN_X86
    if (isa >= KERN_ISA_AVX2) row = kern_avx2_act8b_quantize_row;
    if (isa >= KERN_ISA_AVX512) row = kern_avx512_act8b_quantize_row;
#else
    (void)isa;
#endif
    for (int c = 0; c < kern_a8b_chunks(T); c++) {
        const int t0 = kern_a8b_first(T, c), n = kern_a8b_first(T, c + 1) - t0;
        unsigned char *chunk = (unsigned char *)xa + kern_a8b_at(K, t0, n, 0);
        for (int i = 0; i < n; i++)
            if (t0 + i >= lo && t0 + i < hi)
                row(x + (size_t)(t0 + i) * ldx, b0, b1, chunk, n, i);
    }
}

void kern_act8b_quantize_isa(kern_isa isa, const float *x, int ldx, int T, int K, void *xa) {
    quantize_part(isa, x, ldx, T, K, xa, 0, T, 0, K / 32);
}

void kern_act8b_quantize(const float *x, int ldx, int T, int K, void *xa) {
    quantize_part(kern_isa_active(), x, ldx, T, K, xa, 0, T, 0, K / 32);
}

int kern_act8b_groups(int T) {
    return kern_a8b_chunks(T);
}

void kern_act8b_group(int T, int i, int *t0, int *t1) {
    *t0 = kern_a8b_first(T, i), *t1 = kern_a8b_first(T, i + 1);
}

void kern_act8b_quantize_range(const float *x, int ldx, int T, int K, void *xa, int t0, int t1,
                               int k0, int k1) {
    quantize_part(kern_isa_active(), x, ldx, T, K, xa, t0, t1, k0 / 32, k1 / 32);
}

/* ---- the scalar reference ------------------------------------------------------------------ */

/* One row (decoded: w, scale4, min32 as to_int8 gives them) against token t of T, in the order
 * kernels.h defines: per block, each unit's integer sum meets one fused multiply-add, then the
 * block's min. */
static float dot_int8b_ref(const int8_t *w, const float *scale4, const float *min32, int unit,
                           int K, const unsigned char *xa, int T, int t) {
    int c = 0;
    while (kern_a8b_first(T, c + 1) <= t) c++;
    const int t0 = kern_a8b_first(T, c), n = kern_a8b_first(T, c + 1) - t0, i = t - t0;
    float acc = 0.0f;
    for (int b = 0; b < K / 32; b++) {
        const unsigned char *rec = xa + kern_a8b_at(K, t0, n, b);
        const int8_t *q = (const int8_t *)(rec + 32 * i);
        float d, ds;
        memcpy(&d, rec + 32 * n + 4 * i, 4);
        memcpy(&ds, rec + 36 * n + 4 * i, 4);
        for (int u = 0; u < 32; u += unit) {
            int32_t p = 0;
            for (int k = u; k < u + unit; k++) p += (int32_t)w[32 * b + k] * q[k];
            acc = fmaf(scale4[(32 * b + u) / 4] * d, (float)p, acc);
        }
        if (min32) acc = fmaf(-min32[b], ds, acc);
    }
    return acc;
}

/* The values per unit of type t (kernels.h): 16 where the scale changes every 16 values. */
static int unit_of(wtype t) {
    return t == WTYPE_Q3_K || t == WTYPE_Q6_K ? 16 : 32;
}

void kern_matmul_int8b_ref(const wmat *w, int r0, int r1, const void *xa, int T, float *y,
                           int ldy) {
    const wtype_int8 *q = &kern_traits_get(w->type)->int8;
    const int K = w->cols;
    size_t ldw = wtype_row_bytes(w->type, K);
    /* one buffer: K / 4 scales, K / 32 + 1 mins, then K int8 weights (in floats, rounded up) */
    KERN_SCRATCH(scale4, (size_t)K / 4 + K / 32 + 1 + ((size_t)K + 3) / 4);
    float *min32 = scale4 + K / 4;
    int8_t *wi = (int8_t *)(min32 + K / 32 + 1);
    for (int r = r0; r < r1; r++) {
        q->to_int8((const unsigned char *)w->data + (size_t)r * ldw, wi, scale4, min32, K);
        for (int t = 0; t < T; t++)
            y[(size_t)t * ldy + (r - r0)] =
                dot_int8b_ref(wi, scale4, q->has_min ? min32 : NULL, unit_of(w->type), K, xa, T, t);
    }
    KERN_SCRATCH_END(scale4);
}

/* ---- the 16-row copy ------------------------------------------------------------------------ */

size_t kern_int8b_packed_size(const wmat *w) {
    if (!kern_int8b_supported(w->type)) return 0;
    return (size_t)((w->rows + 15) / 16) * 16 * wtype_row_bytes(w->type, w->cols);
}

void kern_int8b_pack(const wmat *w, unsigned char *dst, int part, int parts) {
    const size_t ldw = wtype_row_bytes(w->type, w->cols), gbytes = 16 * ldw;
    const int groups = (w->rows + 15) / 16;
    for (int g = (int)((long long)groups * part / parts);
         g < (int)((long long)groups * (part + 1) / parts); g++) {
        const int rows = w->rows - 16 * g < 16 ? w->rows - 16 * g : 16;
        wtype_pack16(w->type, (const unsigned char *)w->data + (size_t)g * gbytes, ldw, rows,
                     w->cols, dst + (size_t)g * gbytes);
    }
}

/* ---- dispatch ----------------------------------------------------------------------------- */

/* Whether the AVX2 ISA's int8b tiles use AVX-VNNI: -1 not decided yet. Set once and read by
 * every thread, hence atomic (as kernels.c's active ISA). */
static _Atomic int avxvnni_state = -1;

int kern_avxvnni_supported(void) {
    return kern_cpu_has(KERN_CPU_AVX_VNNI);
}

int kern_avxvnni_active(void) {
    int s = atomic_load_explicit(&avxvnni_state, memory_order_relaxed);
    if (s >= 0) return s;
    const char *env = getenv("DECBENCH_AVXVNNI");
    s = kern_cpu_has(KERN_CPU_AVX_VNNI) && !(env && strcmp(env, "0") == 0);
    atomic_store_explicit(&avxvnni_state, s, memory_order_relaxed);
    return s;
}

int kern_avxvnni_use(int on) {
    if (on && !kern_cpu_has(KERN_CPU_AVX_VNNI)) return -1;
    atomic_store_explicit(&avxvnni_state, on ? 1 : 0, memory_order_relaxed);
    return 0;
}

/* Whether the AVX-512 int8b tiles issue their far L2 prefetches: -1 not decided yet (as
 * avxvnni_state). The default is a CPU model's, not a measurement at start: the gain or loss
 * shows only against whole passes over weights larger than the caches, which take seconds to
 * time within the noise. */
static _Atomic int far_prefetch_state = -1;

/* The CPU's family if it is AMD's (25: Zen 3 and 4, 26: Zen 5), else 0. */
static unsigned amd_family(void) {
#if defined(__x86_64__) || defined(_M_X64)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d) || b != 0x68747541) return 0; /* "Auth"enticAMD */
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned base = (a >> 8) & 0xf, ext = (a >> 20) & 0xff;
    return base == 0xf ? base + ext : base;
#else
    return 0;
#endif
}

int kern_far_prefetch_active(void) {
    int s = atomic_load_explicit(&far_prefetch_state, memory_order_relaxed);
    if (s >= 0) return s;
    const char *env = getenv("DECBENCH_FAR_PREFETCH");
    /* family 25: of Zen 3 and 4, only Zen 4 has AVX-512, the only ISA that reads this */
    s = env && *env ? strcmp(env, "0") != 0 : amd_family() == 25;
    atomic_store_explicit(&far_prefetch_state, s, memory_order_relaxed);
    return s;
}

void kern_far_prefetch_use(int on) {
    atomic_store_explicit(&far_prefetch_state, on ? 1 : 0, memory_order_relaxed);
}

int kern_far_prefetch_issued(void) {
    return kern_isa_active() == KERN_ISA_AVX512 && kern_cpu_has(KERN_CPU_AVX512_VNNI) &&
           kern_far_prefetch_active();
}

/* 512-bit FMAs the calling core issues per cycle at a clock of ghz: 12 independent chains
 * (enough to cover the FMA latency twice over on every core with AVX-512) in inline assembly, so
 * that no compiler or sanitizer build adds moves or spills to the loop; best of 30 runs of 2^12
 * iterations (0.1 ms), as measure.c's clock. The operands are zeros, so no denormal slows it. */
static double avx512_fma_per_cycle(double ghz) {
#if defined(__x86_64__)
    const long n = 1 << 12;
    double best = 0;
    for (int run = 0; run < 30; run++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < n; i++)
            __asm__ volatile(
                ".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12\n\t"
                "vpxord %%zmm\\r, %%zmm\\r, %%zmm\\r\n\t.endr\n\t"
                ".rept 8\n\t"
                ".irp r,0,1,2,3,4,5,6,7,8,9,10,11\n\t"
                "vfmadd231ps %%zmm12, %%zmm12, %%zmm\\r\n\t.endr\n\t"
                ".endr" ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                "xmm9", "xmm10", "xmm11", "xmm12");
        clock_gettime(CLOCK_MONOTONIC, &b);
        double dt = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        double r = dt > 0 ? 96.0 * n / dt / 1e9 / ghz : 0;
        best = r > best ? r : best;
    }
    return best;
#else
    (void)ghz;
    return 0;
#endif
}

void kern_peak_per_cycle(double ghz, double *int8_ops, double *f32_flops, const char **what) {
    const kern_isa isa = kern_isa_active();
    if (isa == KERN_ISA_SCALAR) { /* two scalar FMAs, a multiply-add of integers */
        *int8_ops = 2, *f32_flops = 4, *what = "scalar";
        return;
    }
    if (isa == KERN_ISA_AVX512) {
        const int amd = amd_family() != 0;
        /* Measured where the clock is known: 1.87 a cycle on Zen 5 (EPYC, family 26), where the
         * vendor rule said 1; about 1 on Zen 4; 2 on Xeon Gold and Platinum, 1 on parts with
         * one FMA unit. Rounded to the nearer of 1 and 2. */
        const int units = ghz > 0 ? (avx512_fma_per_cycle(ghz) >= 1.5 ? 2 : 1) : (amd ? 1 : 2);
        *f32_flops = units * 16 * 2;
        *int8_ops = kern_cpu_has(KERN_CPU_AVX512_VNNI) ? units * 64 * 2 : 2 * 32 * 2;
        /* The peak is the vector units': a CPU with AMX-INT8 (cpuid 7.0 edx bit 25) has a
         * higher one that no kernel here uses (kernels_avx512_int8b.c says why), and the name
         * says so. */
        static const char *names[2][2][2] = {
            {{"avx512 x1, int8 avx2", "avx512 x2, int8 avx2"}, {"avx512-vnni x1", "avx512-vnni x2"}},
            {{"avx512 x1, int8 avx2, amx unused", "avx512 x2, int8 avx2, amx unused"},
             {"avx512-vnni x1, amx unused", "avx512-vnni x2, amx unused"}}};
        *what =
            names[kern_cpu_has(KERN_CPU_AMX_INT8)][kern_cpu_has(KERN_CPU_AVX512_VNNI)][units == 2];
        return;
    }
    /* vpdpbusd (AVX-VNNI) does a vpmaddubsw's 32 multiply-adds, the sums in 32 bits */
    *int8_ops = 2 * 32 * 2, *f32_flops = 2 * 8 * 2,
    *what = kern_avxvnni_active() ? "avx2 x2, int8 avx-vnni" : "avx2 x2";
}

/* The tile that runs for isa: its own, else the next lower ISA's (the AVX-512 one only with
 * VNNI; the AVX2 one with AVX-VNNI where the CPU has it); NULL: the scalar reference. */
static wtype_matmul_int8b_fn int8b_tile(wtype t, kern_isa isa) {
    const kern_traits *k = kern_traits_get(t);
    for (int i = isa; i > KERN_ISA_SCALAR; i--) {
        if (i == KERN_ISA_AVX512 && !kern_cpu_has(KERN_CPU_AVX512_VNNI)) continue;
        if (i == KERN_ISA_AVX2 && k->int8b_avxvnni && kern_avxvnni_active())
            return k->int8b_avxvnni;
        if (k->int8b[i]) return k->int8b[i];
    }
    return NULL;
}

void kern_matmul_int8b_isa(kern_isa isa, const wmat *w, int r0, int r1, const void *xa, int T,
                           float *y, int ldy) {
    wtype_matmul_int8b_fn f = int8b_tile(w->type, isa);
    if (!f || r0 >= r1) {
        if (r0 < r1) kern_matmul_int8b_ref(w, r0, r1, xa, T, y, ldy);
        return;
    }
    const int K = w->cols;
    const size_t ldw = wtype_row_bytes(w->type, K), gbytes = 16 * ldw;
    /* whole groups straight into y; a group cut by r0 or r1 into a buffer of 16 x T, then its
     * rows in [r0, r1) */
    const int ga = (r0 + 15) / 16, gb = r1 / 16;
    if (w->r16 && ga < gb)
        f(w->r16 + (size_t)ga * gbytes, gbytes, gb - ga, K, xa, T, y + (16 * ga - r0), (size_t)ldy);
    KERN_SCRATCH(part, (size_t)16 * T + (w->r16 ? 0 : gbytes / sizeof(float) + 1));
    unsigned char *copy = (unsigned char *)(part + (size_t)16 * T);
    for (int g = r0 / 16; g < (r1 + 15) / 16; g++) {
        if (w->r16 && g >= ga && g < gb) continue;
        const unsigned char *p = w->r16 ? w->r16 + (size_t)g * gbytes : copy;
        const int rows = w->rows - 16 * g < 16 ? w->rows - 16 * g : 16;
        if (!w->r16)
            wtype_pack16(w->type, (const unsigned char *)w->data + (size_t)g * gbytes, ldw, rows, K,
                         copy);
        const int lo = 16 * g > r0 ? 16 * g : r0, hi = 16 * g + 16 < r1 ? 16 * g + 16 : r1;
        if (lo == 16 * g && hi == 16 * g + 16) { /* a whole group (no copy made): straight in */
            f(p, gbytes, 1, K, xa, T, y + (lo - r0), (size_t)ldy);
            continue;
        }
        f(p, gbytes, 1, K, xa, T, part, 16);
        for (int t = 0; t < T; t++)
            memcpy(y + (size_t)t * ldy + (lo - r0), part + 16 * t + (lo - 16 * g),
                   sizeof(float) * (size_t)(hi - lo));
    }
    KERN_SCRATCH_END(part);
}

void kern_matmul_int8b(const wmat *w, int r0, int r1, const void *xa, int T, float *y, int ldy) {
    kern_matmul_int8b_isa(kern_isa_active(), w, r0, r1, xa, T, y, ldy);
}
