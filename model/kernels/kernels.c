/* kernels.c: batch-invariant matrix kernels (see kernels.h for the canonical order): the
 * public entry points, the scalar reference, and the dispatch to the instruction-set files
 * (kernels_avx2.c, kernels_avx512.c) through the weight-type table (wtype.h). */
#include "model/kernels/kernels.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/kernels/kernels_isa.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif

/* ---- scalar reference ---------------------------------------------------------------- */

static float fold16(const float a[KERN_LANES]) {
    float s8[8], s4[4], s2[2];
    for (int j = 0; j < 8; j++) s8[j] = a[j] + a[j + 8];
    for (int j = 0; j < 4; j++) s4[j] = s8[j] + s8[j + 4];
    for (int j = 0; j < 2; j++) s2[j] = s4[j] + s4[j + 2];
    return s2[0] + s2[1];
}

float kern_dot_ref(const float *a, const float *b, int n) {
    float acc[KERN_LANES] = {0};
    int k = 0;
    for (; k + KERN_LANES <= n; k += KERN_LANES)
        for (int j = 0; j < KERN_LANES; j++) acc[j] = fmaf(a[k + j], b[k + j], acc[j]);
    if (k < n)
        for (int j = 0; j < KERN_LANES; j++)
            acc[j] = k + j < n ? fmaf(a[k + j], b[k + j], acc[j]) : fmaf(0.0f, 0.0f, acc[j]);
    return fold16(acc);
}

float kern_sum_ref(const float *a, int n) {
    float acc[KERN_LANES] = {0};
    int k = 0;
    for (; k + KERN_LANES <= n; k += KERN_LANES)
        for (int j = 0; j < KERN_LANES; j++) acc[j] += a[k + j];
    for (int j = 0; k + j < n; j++) acc[j] += a[k + j];
    for (int j = n - k; k < n && j < KERN_LANES; j++) acc[j] += 0.0f;
    return fold16(acc);
}

/* Cephes-style expf (constants in kernels_isa.h): only multiplications and additions in a
 * fixed order, so SIMD lanes match this exactly. */
const float kern_exp_poly[6] = {1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f,
                                4.1665795894E-2f, 1.6666665459E-1f, 5.0000001201E-1f};

float kern_exp_ref(float x) {
    x = x < KERN_EXP_LO ? KERN_EXP_LO : x;
    float t = x * KERN_EXP_L2E + KERN_EXP_SHIFTER; /* round(x / ln2), held in the mantissa */
    float n = t - KERN_EXP_SHIFTER;
    float r = x - n * KERN_EXP_C1;
    r = r - n * KERN_EXP_C2;
    float p = kern_exp_poly[0];
    for (int i = 1; i < 6; i++) p = p * r + kern_exp_poly[i];
    float r2 = r * r;
    p = p * r2 + r;
    p = p + 1.0f;
    int32_t e = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &e, 4);
    return p * scale;
}

const uint64_t kern_expf_table[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540};

static void scalar_expf(const float *x, float *y, int n) {
    for (int i = 0; i < n; i++) y[i] = expf(x[i]);
}

static void scalar_silu_mul(float *a, const float *b, int n) {
    for (int i = 0; i < n; i++) a[i] = kern_silu_mul_one(a[i], b[i], expf);
}

static void scalar_f16_from_f32(const float *src, void *dst, int n) {
    wtype_get(WTYPE_F16)->from_float(src, dst, n);
}

static void scalar_f16_to_f32(const void *src, float *dst, int n) {
    wtype_get(WTYPE_F16)->to_float(src, dst, n);
}

/* kern_attend's softmax: the scores' maximum (exact in any order), exp of each score minus it,
 * and their canonical sum, returned; NaN throughout if a score is not finite
 * (kern_softmax_nonfinite). */
float kern_isa_scalar_softmax(float *s, int n) {
    float mx = s[0];
    uint32_t any = 0;
    for (int i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, s + i, 4);
        any |= kern_exponent_carry(b);
        mx = s[i] > mx ? s[i] : mx;
    }
    if (any & 0x80000000u) return kern_softmax_nonfinite(s, n);
    for (int i = 0; i < n; i++) s[i] = kern_exp_ref(s[i] - mx);
    return kern_sum_ref(s, n);
}

void kern_attend_ref(const float *q, int hs, const float *k, const float *v, size_t stride,
                     const int *slots, int n, float *scratch, float *out) {
    float div = sqrtf((float)hs);
    for (int s = 0; s < n; s++) {
        size_t slot = slots ? (size_t)slots[s] : (size_t)s;
        scratch[s] = kern_dot_ref(q, k + slot * stride, hs) / div;
    }
    float sum = kern_isa_scalar_softmax(scratch, n);
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

/* kern_attend_ref's scores for kern_attend_kv: each key row widened exactly, then the
 * canonical dot. */
static void scalar_scores(wtype kt, const float *q, size_t ldq, int nq, int hs, const void *k,
                          int n, float *s, size_t lds) {
    const float div = sqrtf((float)hs);
    KERN_SCRATCH(row, (size_t)hs);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < hs; i++) row[i] = kern_kv_value(kt, k, (size_t)j * hs + i);
        for (int t = 0; t < nq; t++)
            s[(size_t)t * lds + j] = kern_dot_ref(q + (size_t)t * ldq, row, hs) / div;
    }
    KERN_SCRATCH_END(row);
}

/* kern_attend_ref's value sums for each query of kern_attend_kv (each value widened exactly). */
void kern_isa_scalar_values(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                            const void *v, int n_shared, const int *const *tail, const int *n_tail,
                            float *out, size_t ldo) {
    for (int t = 0; t < nq; t++) {
        const float *et = e + (size_t)t * lde;
        int n = n_shared + n_tail[t];
        for (int i = 0; i < hs; i++) {
            float c4[4] = {0, 0, 0, 0};
            for (int s = 0; s < n; s++) {
                size_t slot = s < n_shared ? (size_t)s : (size_t)tail[t][s - n_shared];
                c4[s % 4] = fmaf(et[s], kern_kv_value(vt, v, slot * hs + i), c4[s % 4]);
            }
            out[(size_t)t * ldo + i] = ((c4[0] + c4[1]) + (c4[2] + c4[3])) / sum[t];
        }
    }
}

void kern_row_to_f32(const wmat *w, int row, float *out) {
    size_t ldw = wtype_row_bytes(w->type, w->cols);
    wtype_get(w->type)->to_float((const unsigned char *)w->data + ldw * (size_t)row, out, w->cols);
}

float *kern_scratch_floats(size_t n) {
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "decbench: out of memory for a kernel buffer of %zu bytes\n",
                n * sizeof(float));
        exit(EXIT_FAILURE);
    }
    return p;
}

void kern_matmul_ref(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y,
                     int ldy) {
    KERN_SCRATCH(row, (size_t)w->cols);
    for (int r = r0; r < r1; r++) {
        kern_row_to_f32(w, r, row);
        for (int t = 0; t < T; t++)
            y[(size_t)t * ldy + (r - r0)] = kern_dot_ref(row, x + (size_t)t * ldx, w->cols);
    }
    KERN_SCRATCH_END(row);
}

/* ---- the scalar ISA: the reference, one dot product at a time -------------------------- */

static void scalar_matmul_widen(kern_to_float_fn to_float, const unsigned char *w, size_t ldw,
                                int rows, int K, const float *x, size_t ldx, int T, float *y,
                                size_t ldy, int streams) {
    (void)streams;
    KERN_SCRATCH(row, (size_t)K);
    for (int r = 0; r < rows; r++) {
        to_float(w + (size_t)r * ldw, row, K);
        for (int t = 0; t < T; t++)
            y[(size_t)t * ldy + r] = kern_dot_ref(row, x + (size_t)t * ldx, K);
    }
    KERN_SCRATCH_END(row);
}

const kern_isa_ops kern_isa_scalar_ops = {
    .name = "scalar",
    .dot = kern_dot_ref,
    .sum = kern_sum_ref,
    .attend = kern_attend_ref,
    .scores = scalar_scores,
    .softmax = kern_isa_scalar_softmax,
    .values = kern_isa_scalar_values,
    .matmul_widen = scalar_matmul_widen,
    .expf = scalar_expf,
    .silu_mul = scalar_silu_mul,
    .f16_from_f32 = scalar_f16_from_f32,
    .f16_to_f32 = scalar_f16_to_f32,
};

/* ---- dispatch ------------------------------------------------------------------------- */

static const kern_isa_ops *const isa_ops[KERN_ISA_COUNT] = {
    [KERN_ISA_SCALAR] = &kern_isa_scalar_ops,
    [KERN_ISA_AVX2] = KERN_X86_FN(&kern_isa_avx2_ops),
    [KERN_ISA_AVX512] = KERN_X86_FN(&kern_isa_avx512_ops),
};

int kern_isa_supported(kern_isa isa) {
    if (isa < 0 || isa >= KERN_ISA_COUNT || !isa_ops[isa]) return 0;
#if KERN_X86
    /* what the instruction-set files are compiled for (CMakeLists.txt) */
    if (isa == KERN_ISA_AVX2) { /* F16C (for the scales) by cpuid: clang lacks its name */
        unsigned a, b, c = 0, d;
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    }
    if (isa == KERN_ISA_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#endif
    return 1;
}

static int cpu_has(kern_cpu_feature f) {
#if KERN_X86
    unsigned r[4] = {0, 0, 0, 0}; /* eax, ebx, ecx, edx of cpuid leaf 7 */
    const unsigned sub = f == KERN_CPU_AVX_VNNI ? 1 : 0;
    if (!__get_cpuid_count(7, sub, &r[0], &r[1], &r[2], &r[3])) return 0;
    switch (f) {
    case KERN_CPU_AVX512_VNNI: /* 7.0 ecx bit 11 */
        return kern_isa_supported(KERN_ISA_AVX512) && (r[2] >> 11 & 1);
    case KERN_CPU_AVX_VNNI: /* 7.1 eax bit 4 */
        return kern_isa_supported(KERN_ISA_AVX2) && (r[0] >> 4 & 1);
    case KERN_CPU_AMX_INT8: /* 7.0 edx bit 25 */
        return (int)(r[3] >> 25 & 1);
    case KERN_CPU_FEATURES:
        break;
    }
#else
    (void)f;
#endif
    return 0;
}

int kern_cpu_has(kern_cpu_feature f) {
    /* 0 not asked yet, else the answer + 1; every thread that sets one stores the same value */
    static _Atomic int known[KERN_CPU_FEATURES];
    if ((unsigned)f >= KERN_CPU_FEATURES) return 0;
    int k = atomic_load_explicit(&known[f], memory_order_relaxed);
    if (k == 0) {
        k = cpu_has(f) + 1;
        atomic_store_explicit(&known[f], k, memory_order_relaxed);
    }
    return k - 1;
}

const char *kern_isa_name(kern_isa isa) {
    static const char *names[KERN_ISA_COUNT] = {"scalar", "avx2", "avx512"};
    return isa >= 0 && isa < KERN_ISA_COUNT ? names[isa] : "?";
}

/* The ISA in use: the best the CPU supports (or a lower one the environment names in
 * DECBENCH_ISA=avx2|scalar: what a CPU without AVX-512 would run, measured on one with it) until
 * kern_isa_use() picks another. Set once and read by every thread, hence atomic (every writer
 * stores the same value). */
static _Atomic int active_isa = -1;

kern_isa kern_isa_active(void) {
    int a = atomic_load_explicit(&active_isa, memory_order_relaxed);
    if (a >= 0) return (kern_isa)a;
    a = KERN_ISA_SCALAR;
    for (int i = KERN_ISA_COUNT - 1; i > KERN_ISA_SCALAR; i--)
        if (kern_isa_supported((kern_isa)i)) {
            a = i;
            break;
        }
    const char *env = getenv("DECBENCH_ISA");
    for (int i = 0; env && i < a; i++)
        if (strcmp(env, kern_isa_name((kern_isa)i)) == 0) a = i;
    atomic_store_explicit(&active_isa, a, memory_order_relaxed);
    return (kern_isa)a;
}

int kern_isa_use(kern_isa isa) {
    if (!kern_isa_supported(isa)) return -1;
    atomic_store_explicit(&active_isa, (int)isa, memory_order_relaxed);
    return 0;
}

const char *kern_simd_name(void) {
    return kern_isa_name(kern_isa_active());
}

void kern_matmul_isa(kern_isa isa, const wmat *w, int r0, int r1, const float *x, int ldx, int T,
                     float *y, int ldy) {
    const wtype_traits *tt = wtype_get(w->type);
    const int K = w->cols;
    size_t ldw = wtype_row_bytes(w->type, K);
    const unsigned char *base = (const unsigned char *)w->data + (size_t)r0 * ldw;
    int streams = kern_streams((size_t)w->rows * ldw);
    wtype_matmul_fn f = kern_traits_get(w->type)->exact.isa[isa];
    if (f)
        f(base, ldw, r1 - r0, K, x, (size_t)ldx, T, y, (size_t)ldy, streams);
    else
        isa_ops[isa]->matmul_widen(tt->to_float, base, ldw, r1 - r0, K, x, (size_t)ldx, T, y,
                                   (size_t)ldy, streams);
}

void kern_matmul(const wmat *w, int r0, int r1, const float *x, int ldx, int T, float *y, int ldy) {
    kern_matmul_isa(kern_isa_active(), w, r0, r1, x, ldx, T, y, ldy);
}

float kern_dot(const float *a, const float *b, int n) {
    return isa_ops[kern_isa_active()]->dot(a, b, n);
}

float kern_sum(const float *a, int n) {
    return isa_ops[kern_isa_active()]->sum(a, n);
}

void kern_attend(const float *q, int hs, const float *k, const float *v, size_t stride,
                 const int *slots, int n, float *scratch, float *out) {
    isa_ops[kern_isa_active()]->attend(q, hs, k, v, stride, slots, n, scratch, out);
}

void kern_expf_isa(kern_isa isa, const float *x, float *y, int n) {
    isa_ops[isa]->expf(x, y, n);
}

/* Per ISA: 0 not compared yet, 1 equal to libm's expf, 2 not (libm for every value). */
static _Atomic int expf_state[KERN_ISA_COUNT];

/* Whether isa's expf equals libm's on 65536 inputs: every sign and exponent, and for each a
 * mantissa of its own (bit patterns i * 65537 + 40503). ~0.3 ms, once per process and ISA. */
static int expf_agrees(kern_isa isa) {
    enum { N = 4096 };
    float x[N], y[N];
    for (uint32_t i0 = 0; i0 < 65536; i0 += N) {
        for (uint32_t i = 0; i < N; i++) {
            uint32_t b = (i0 + i) * 65537u + 40503u;
            memcpy(&x[i], &b, 4);
        }
        isa_ops[isa]->expf(x, y, N);
        for (int i = 0; i < N; i++) {
            float ref = expf(x[i]);
            if (memcmp(&ref, &y[i], 4) != 0) return 0;
        }
    }
    return 1;
}

/* The active ISA if its expf equals this libm's (compared on the first call), else scalar. */
static kern_isa expf_isa(void) {
    kern_isa isa = kern_isa_active();
    int st = atomic_load_explicit(&expf_state[isa], memory_order_relaxed);
    if (st == 0) { /* threads that race here all compute the same answer */
        st = isa == KERN_ISA_SCALAR || expf_agrees(isa) ? 1 : 2;
        if (st == 2)
            fprintf(stderr, "decbench: this libm's expf is not glibc's algorithm; SiLU calls it "
                            "per value (same bits, slower)\n");
        atomic_store_explicit(&expf_state[isa], st, memory_order_relaxed);
    }
    return st == 1 ? isa : KERN_ISA_SCALAR;
}

void kern_silu_mul(float *a, const float *b, int n) {
    isa_ops[expf_isa()]->silu_mul(a, b, n);
}

void kern_silu_mul_isa(kern_isa isa, float *a, const float *b, int n) {
    isa_ops[isa]->silu_mul(a, b, n);
}

void kern_f16_from_f32(const float *src, void *dst, int n) {
    isa_ops[kern_isa_active()]->f16_from_f32(src, dst, n);
}

void kern_f16_from_f32_isa(kern_isa isa, const float *src, void *dst, int n) {
    isa_ops[isa]->f16_from_f32(src, dst, n);
}

void kern_f16_to_f32_isa(kern_isa isa, const void *src, float *dst, int n) {
    isa_ops[isa]->f16_to_f32(src, dst, n);
}

float kern_dot_isa(kern_isa isa, const float *a, const float *b, int n) {
    return isa_ops[isa]->dot(a, b, n);
}

float kern_sum_isa(kern_isa isa, const float *a, int n) {
    return isa_ops[isa]->sum(a, n);
}

void kern_attend_isa(kern_isa isa, const float *q, int hs, const float *k, const float *v,
                     size_t stride, const int *slots, int n, float *scratch, float *out) {
    isa_ops[isa]->attend(q, hs, k, v, stride, slots, n, scratch, out);
}

int kern_attend_kv_supported(wtype t) {
    return t == WTYPE_F32 || t == WTYPE_F16;
}

/* kern_attend_kv for queries whose tails are already what remains after the shared keys */
static void attend_batch(kern_isa isa, wtype kv, const float *q, size_t ldq, int nq, int hs,
                         const void *k, const void *v, int n_shared, const int *const *tail,
                         const int *n_tail, float *scratch, size_t lds, float *out, size_t ldo) {
    const kern_isa_ops *ops = isa_ops[isa];
    const float div = sqrtf((float)hs);
    if (n_shared > 0 && ops->scores) {
        ops->scores(kv, q, ldq, nq, hs, k, n_shared, scratch, lds);
    } else if (n_shared > 0) { /* the shared keys as the rows of a matrix of their type */
        wmat keys = {kv, k, n_shared, hs, NULL, NULL};
        kern_matmul_isa(isa, &keys, 0, n_shared, q, (int)ldq, nq, scratch, (int)lds);
        for (int t = 0; t < nq; t++)
            for (int s = 0; s < n_shared; s++) scratch[(size_t)t * lds + s] /= div;
    }
    float sum[nq];
    KERN_SCRATCH(row, (size_t)hs); /* a tail key widened */
    for (int t = 0; t < nq; t++) {
        float *st = scratch + (size_t)t * lds;
        for (int j = 0; j < n_tail[t]; j++) {
            const float *kr = (const float *)k + (size_t)tail[t][j] * hs;
            if (kv != WTYPE_F32) {
                ops->f16_to_f32((const unsigned char *)k + (size_t)tail[t][j] * hs * 2, row, hs);
                kr = row;
            }
            st[n_shared + j] = ops->dot(q + (size_t)t * ldq, kr, hs) / div;
        }
        sum[t] = ops->softmax(st, n_shared + n_tail[t]);
    }
    KERN_SCRATCH_END(row);
    ops->values(kv, scratch, lds, sum, nq, hs, v, n_shared, tail, n_tail, out, ldo);
}

/* How many of a query's tail slots continue the shared ones: tail[j] == n_shared + j. */
static int tail_run(const int *tail, int n_tail, int n_shared) {
    int j = 0;
    while (j < n_tail && tail[j] == n_shared + j) j++;
    return j;
}

/* A query's tail keys are scored one dot product at a time and their values summed one row at a
 * time; the shared keys sixteen at a time for all queries, each block read once. In a pass of
 * rows that extend one another (a chain: cost's passes, a Jacobi window, a prompt), row t's
 * tail is the pass's rows 0..t, contiguous with the shared prefix, so most of those keys can be
 * shared: the queries are cut into groups of consecutive queries whose runs of such keys
 * (tail_run) differ by at most ATTEND_GROUP_SPREAD, and each group shares the prefix plus its
 * shortest run. Every query still sees its own slots in its own order (kern_attend_kv's
 * contract: a query's bits do not depend on the others), so the cut changes no result. Each group
 * reads the shared keys and values again: groups are cut only while those fit the L2 cache
 * (ATTEND_GROUP_BYTES); past it the queries go as one group that shares the runs' common part.
 * 64-row passes at context 32, 2 threads, Zen 5: 110M q8_0 0.96x the time, 1.1B q8_0 0.96x;
 * spreads of 1, 4 and 16 were slower than 8 (docs/measurements/2026-11-30-peers-zen5.md). */
#define ATTEND_GROUP_SPREAD 8
#define ATTEND_GROUP_BYTES ((size_t)512 << 10)

void kern_attend_kv_isa(kern_isa isa, wtype kv, const float *q, size_t ldq, int nq, int hs,
                        const void *k, const void *v, int n_shared, const int *const *tail,
                        const int *n_tail, float *scratch, size_t lds, float *out, size_t ldo) {
    if (nq < 1) return;
    int run[nq], n_rest[nq], most = 0;
    const int *rest[nq];
    for (int t = 0; t < nq; t++) {
        run[t] = tail_run(tail[t], n_tail[t], n_shared);
        most = run[t] > most ? run[t] : most;
    }
    const size_t row_bytes = 2 * (size_t)hs * kern_kv_bytes(kv); /* a key and a value */
    const int cut = (size_t)(n_shared + most) * row_bytes <= ATTEND_GROUP_BYTES;
    for (int t0 = 0, t1; t0 < nq; t0 = t1) {
        int lo = run[t0], hi = run[t0];
        for (t1 = t0 + 1; cut && t1 < nq; t1++) {
            int l = run[t1] < lo ? run[t1] : lo, h = run[t1] > hi ? run[t1] : hi;
            if (h - l > ATTEND_GROUP_SPREAD) break;
            lo = l, hi = h;
        }
        if (!cut)
            for (t1 = t0 + 1; t1 < nq; t1++) lo = run[t1] < lo ? run[t1] : lo;
        /* a last block of 1-3 shared keys costs each query a fold of 16 accumulators: those
         * keys stay in the tails (110M q8_0, 8 rows: 2% slower without this) */
        const int part = (n_shared + lo) % 16;
        if (part < 4 && part <= lo) lo -= part;
        for (int t = t0; t < t1; t++) rest[t] = tail[t] + lo, n_rest[t] = n_tail[t] - lo;
        attend_batch(isa, kv, q + (size_t)t0 * ldq, ldq, t1 - t0, hs, k, v, n_shared + lo,
                     rest + t0, n_rest + t0, scratch + (size_t)t0 * lds, lds,
                     out + (size_t)t0 * ldo, ldo);
    }
}

void kern_attend_kv(wtype kv, const float *q, size_t ldq, int nq, int hs, const void *k,
                    const void *v, int n_shared, const int *const *tail, const int *n_tail,
                    float *scratch, size_t lds, float *out, size_t ldo) {
    kern_attend_kv_isa(kern_isa_active(), kv, q, ldq, nq, hs, k, v, n_shared, tail, n_tail, scratch,
                       lds, out, ldo);
}

void kern_attend_shared_isa(kern_isa isa, const float *q, size_t ldq, int nq, int hs,
                            const float *k, const float *v, int n_shared, const int *const *tail,
                            const int *n_tail, float *scratch, size_t lds, float *out, size_t ldo) {
    kern_attend_kv_isa(isa, WTYPE_F32, q, ldq, nq, hs, k, v, n_shared, tail, n_tail, scratch, lds,
                       out, ldo);
}

void kern_attend_shared(const float *q, size_t ldq, int nq, int hs, const float *k, const float *v,
                        int n_shared, const int *const *tail, const int *n_tail, float *scratch,
                        size_t lds, float *out, size_t ldo) {
    kern_attend_kv_isa(kern_isa_active(), WTYPE_F32, q, ldq, nq, hs, k, v, n_shared, tail, n_tail,
                       scratch, lds, out, ldo);
}
