/* attend_speed.c: the attention of a one-row pass at a long context against a plain read of the
 * same keys and values, on the pool's threads as the forward pass runs it. Not a test and not
 * built by default:
 *
 *   cmake --build build --target attend_speed && build/attend_speed [CONTEXT [KV_TYPE]]
 *
 * The shape is Qwen2.5-0.5B's by default (24 layers, 2 kv heads of 7 query heads each, head
 * size 64); ATTEND_LAYERS, ATTEND_KV_HEADS, ATTEND_GROUP, ATTEND_HS and ATTEND_THREADS change
 * it. CONTEXT defaults to 16384, KV_TYPE (f32, f16) to f32. The cache holds random values in
 * [-1, 1), every layer's apart, as the forward pass's does; each query sees the CONTEXT shared
 * slots and one tail slot (itself). Rounds alternate a read of every key and value the pass
 * reads (one thread per part, 8 independent 64-bit loads) with the pass's attention, one pool
 * run per layer with a chunk per kv head (model/forward.c's split of a one-row pass), then with
 * each of its parts alone (scores, softmax, values: kern_isa_ops of the active instruction
 * set), and the three one after the other; the figures are the medians of ATTEND_ROUNDS rounds (default 9) in ms and the
 * attention's time over the read's. On a busy machine ATTEND_THREADS=1 ATTEND_CPU=1 times
 * the calling thread's CPU time instead of the wall clock's. The cache's rows start on 64-byte
 * lines, as model/forward.c allocates them; ATTEND_MISALIGN=16 puts them 16 bytes past one (where
 * calloc's blocks start). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"
#include "model/tpool.h"
#include "model/weights/wtype.h"

static int cpu_time; /* ATTEND_CPU=1: the calling thread's CPU time (with ATTEND_THREADS=1) */

static double now(void) {
    struct timespec t;
    clock_gettime(cpu_time ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int env_int(const char *name, int dflt) {
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

typedef struct {
    int layers, kvh, group, hs, n, nt;
    wtype kt;
    size_t row;                   /* bytes of a cache row */
    unsigned char **k, **v;       /* [layer * kvh + g]: n + 1 rows */
    float *q;                     /* [kvh][group][hs] */
    float *scratch, *out;         /* per thread: [group][n + 1], [group][hs] */
    int layer, part; /* 0 whole, 1 scores, 2 softmax, 3 values, 4 read, 5 the three in a row */
    const kern_isa_ops *ops;
    volatile uint64_t sink;
} bench;

static void job(void *arg, int chunk, int n_chunks, int thread) {
    (void)n_chunks;
    bench *b = arg;
    const int g = chunk, hs = b->hs, nq = b->group;
    const size_t lds = ((size_t)b->n + 16) / 16 * 16; /* whole lines, as model/forward.c's */
    const unsigned char *k = b->k[b->layer * b->kvh + g], *v = b->v[b->layer * b->kvh + g];
    float *s = b->scratch + (size_t)thread * nq * lds, *out = b->out + (size_t)thread * nq * hs;
    const float *q = b->q + (size_t)g * nq * hs;
    int tail_slot = b->n, n_tail[64];
    const int *tail[64];
    for (int t = 0; t < nq; t++) tail[t] = &tail_slot, n_tail[t] = 1;
    float sum[64];
    switch (b->part) {
    case 0:
        kern_attend_kv(b->kt, q, hs, nq, hs, k, v, b->n, tail, n_tail, s, lds, out, hs);
        break;
    case 1:
        b->ops->scores(b->kt, q, hs, nq, hs, k, b->n, s, lds);
        break;
    case 2:
        for (int t = 0; t < nq; t++) sum[t] = b->ops->softmax(s + t * lds, b->n + 1);
        b->sink += (uint64_t)sum[0];
        break;
    case 3:
        for (int t = 0; t < nq; t++) sum[t] = 1.0f;
        b->ops->values(b->kt, s, lds, sum, nq, hs, v, b->n, tail, n_tail, out, hs);
        break;
    case 5: /* the parts one after the other (the tail's score left as the last pass made it) */
        b->ops->scores(b->kt, q, hs, nq, hs, k, b->n, s, lds);
        for (int t = 0; t < nq; t++) sum[t] = b->ops->softmax(s + t * lds, b->n + 1);
        b->ops->values(b->kt, s, lds, sum, nq, hs, v, b->n, tail, n_tail, out, hs);
        break;
    default: { /* read the keys and values */
        uint64_t a[8] = {0};
        for (int which = 0; which < 2; which++) {
            const uint64_t *p = (const uint64_t *)(which ? v : k);
            size_t words = b->row * (size_t)b->n / 8;
            for (size_t i = 0; i + 8 <= words; i += 8)
                for (int j = 0; j < 8; j++) a[j] ^= p[i + j];
        }
        b->sink += a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7];
    }
    }
}

static double run(bench *b, tpool *pool, int part) {
    b->part = part;
    double t0 = now();
    for (int l = 0; l < b->layers; l++) {
        b->layer = l;
        tpool_run(pool, job, b, b->kvh);
    }
    return 1e3 * (now() - t0);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    bench b = {.layers = env_int("ATTEND_LAYERS", 24), .kvh = env_int("ATTEND_KV_HEADS", 2),
               .group = env_int("ATTEND_GROUP", 7), .hs = env_int("ATTEND_HS", 64),
               .n = argc > 1 ? atoi(argv[1]) : 16384, .nt = env_int("ATTEND_THREADS", 2)};
    b.kt = argc > 2 && !strcmp(argv[2], "f16") ? WTYPE_F16 : WTYPE_F32;
    int rounds = env_int("ATTEND_ROUNDS", 9);
    cpu_time = env_int("ATTEND_CPU", 0);
    const int misalign = env_int("ATTEND_MISALIGN", 0) & 63; /* bytes past a 64-byte boundary */
    if (b.n < 1 || b.group < 1 || b.group > 64 || b.hs < 1 || rounds < 1) return 2;
    kern_isa isa = kern_isa_active();
    b.ops = isa == KERN_ISA_AVX512 ? &kern_isa_avx512_ops
            : isa == KERN_ISA_AVX2 ? &kern_isa_avx2_ops
                                   : &kern_isa_scalar_ops;
    b.row = (size_t)b.hs * (b.kt == WTYPE_F16 ? 2 : 4);
    int heads = b.layers * b.kvh;
    b.k = calloc(heads, sizeof *b.k), b.v = calloc(heads, sizeof *b.v);
    float *tmp = malloc(sizeof(float) * b.hs);
    uint64_t rs = 88172645463325252ull;
    void (*store)(const float *, void *, int) = wtype_get(b.kt)->from_float;
    for (int h = 0; h < 2 * heads; h++) {
        unsigned char *p = aligned_alloc(64, (b.row * (b.n + 1) + 127) / 64 * 64);
        if (!p) return 1;
        p += misalign;
        for (int r = 0; r <= b.n; r++) {
            for (int i = 0; i < b.hs; i++) {
                rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
                tmp[i] = (float)(rs >> 40) / (float)(1 << 23) - 1.0f;
            }
            store(tmp, p + b.row * r, b.hs);
        }
        (h < heads ? b.k : b.v)[h % heads] = p;
    }
    b.q = malloc(sizeof(float) * b.kvh * b.group * b.hs);
    for (int i = 0; i < b.kvh * b.group * b.hs; i++) {
        rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
        b.q[i] = (float)(rs >> 40) / (float)(1 << 23) - 1.0f;
    }
    size_t cells = (size_t)b.nt * b.group * (((size_t)b.n + 16) / 16 * 16);
    b.scratch = aligned_alloc(64, (cells * sizeof(float) + 63) / 64 * 64);
    memset(b.scratch, 0, cells * sizeof(float));
    b.out = calloc((size_t)b.nt * b.group * b.hs, sizeof(float));
    tpool *pool;
    char err[256];
    if (tpool_new(&pool, b.nt, err)) return fprintf(stderr, "%s\n", err), 1;
    double *t[6];
    for (int p = 0; p < 6; p++) t[p] = calloc(rounds, sizeof(double));
    run(&b, pool, 4), run(&b, pool, 0);
    for (int r = 0; r < rounds; r++) {
        t[4][r] = run(&b, pool, 4);
        t[0][r] = run(&b, pool, 0);
        t[1][r] = run(&b, pool, 1);
        t[2][r] = run(&b, pool, 2);
        t[3][r] = run(&b, pool, 3);
        t[5][r] = run(&b, pool, 5);
    }
    double ratio[rounds];
    for (int r = 0; r < rounds; r++) ratio[r] = t[0][r] / t[4][r];
    qsort(ratio, rounds, sizeof(double), cmp);
    for (int p = 0; p < 6; p++) qsort(t[p], rounds, sizeof(double), cmp);
    double mb = 2.0 * heads * b.row * b.n / 1e6, pairs = (double)b.layers * b.kvh * b.group * b.n;
    printf("%s %s context %d: %.0f MB, read %.2f ms (%.1f GB/s), attention %.2f ms (ratio %.2f, "
           "%.2f-%.2f); ns per key and query: scores %.2f softmax %.2f values %.2f, the three in a "
           "row %.2f, together %.2f\n",
           kern_isa_name(isa), b.kt == WTYPE_F16 ? "f16" : "f32", b.n, mb, t[4][rounds / 2],
           mb / t[4][rounds / 2], t[0][rounds / 2], ratio[rounds / 2], ratio[0],
           ratio[rounds - 1], 1e6 * t[1][rounds / 2] / pairs, 1e6 * t[2][rounds / 2] / pairs,
           1e6 * t[3][rounds / 2] / pairs, 1e6 * t[5][rounds / 2] / pairs,
           1e6 * t[0][rounds / 2] / pairs);
    tpool_free(pool);
    for (int h = 0; h < heads; h++) free(b.k[h] - misalign), free(b.v[h] - misalign);
    for (int p = 0; p < 6; p++) free(t[p]);
    free(b.k), free(b.v), free(b.q), free(b.scratch), free(b.out), free(tmp);
    return 0;
}
