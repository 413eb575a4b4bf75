/* test_tpool.c: the thread pool runs every chunk of a job exactly once, and tpool_run returns
 * only after all of them have finished, over many short jobs of varying size (the pattern of a
 * forward pass). This is the test that would have caught a late worker claiming a chunk of a
 * job not yet published (it made the caller return while a chunk was running). Most jobs also
 * name ranges for the waiting threads to prefetch (tpool_prefetch_idle: none, some, more than
 * TPOOL_IDLE_RANGES, before a job of one chunk that runs on the caller alone), which must
 * change none of that. Spans (tpool_span, forward.c's stealing): with every thread taking from
 * the front of its own span and then from the backs of all, every unit is taken exactly once,
 * and an owner's takes from the front come in order. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "model/tpool.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

typedef struct {
    int job;
    atomic_int runs[64];
    atomic_int running;
    atomic_int bad_job;
    int *stamp; /* stamp[c] = job of the last run of chunk c */
} job_state;

static void chunk_fn(void *arg, int chunk, int n_chunks, int thread) {
    job_state *s = arg;
    (void)thread;
    atomic_fetch_add(&s->running, 1);
    if (n_chunks < 1 || chunk >= n_chunks) atomic_fetch_add(&s->bad_job, 1);
    atomic_fetch_add(&s->runs[chunk], 1);
    for (volatile int spin = 0; spin < (chunk % 7) * 50; spin++) {} /* uneven chunk lengths */
    s->stamp[chunk] = s->job;
    atomic_fetch_sub(&s->running, 1);
}

/* A job of spans: chunk c owns span c (its front, `want` units at a time), then takes from the
 * backs of all spans one unit at a time, as forward.c's mm_worker does. */
enum { SPANS = 6, UNITS = 400 };
typedef struct {
    tpool_span span[SPANS];
    int want[SPANS];
    atomic_int taken[SPANS][UNITS];
    atomic_int out_of_order;
} span_job;

static void span_fn(void *arg, int chunk, int n_chunks, int thread) {
    span_job *j = arg;
    (void)n_chunks, (void)thread;
    int a, e, next = 0;
    while (tpool_span_take(&j->span[chunk], j->want[chunk], 0, &a, &e)) {
        if (a != next || e <= a || e - a > j->want[chunk]) atomic_fetch_add(&j->out_of_order, 1);
        next = e;
        for (int u = a; u < e; u++) atomic_fetch_add(&j->taken[chunk][u], 1);
    }
    for (int k = 0; k < SPANS; k++)
        while (tpool_span_take(&j->span[k], 1, 1, &a, &e))
            for (int u = a; u < e; u++) atomic_fetch_add(&j->taken[k][u], 1);
}

static void test_spans(tpool *p, rng_state *r) {
    static span_job j;
    int n[SPANS], failures = 0;
    for (int job = 0; job < 5000; job++) {
        memset(&j, 0, sizeof j);
        for (int k = 0; k < SPANS; k++) {
            n[k] = (int)rng_below(r, UNITS + 1);
            j.want[k] = 1 + (int)rng_below(r, 8);
            tpool_span_init(&j.span[k], n[k]);
        }
        tpool_run(p, span_fn, &j, SPANS);
        int ok = atomic_load(&j.out_of_order) == 0;
        for (int k = 0; k < SPANS; k++)
            for (int u = 0; u < UNITS; u++) ok &= atomic_load(&j.taken[k][u]) == (u < n[k]);
        failures += !ok;
    }
    CHECK_MSG(failures == 0, "%d threads: %d of 5000 jobs of spans took a unit twice, not at all "
                             "or out of order", tpool_size(p), failures);
    int a = -1, e = -1;
    tpool_span_init(&j.span[0], 0);
    CHECK(!tpool_span_take(&j.span[0], 4, 0, &a, &e) && !tpool_span_take(&j.span[0], 1, 1, &a, &e));
    tpool_span_init(&j.span[0], TPOOL_SPAN_MAX);
    CHECK(tpool_span_take(&j.span[0], 3, 1, &a, &e) && a == TPOOL_SPAN_MAX - 3 &&
          e == TPOOL_SPAN_MAX);
}

int main(void) {
    char err[ERR_LEN];
    for (int threads = 2; threads <= 3; threads++) {
        tpool *p;
        CHECK(tpool_new(&p, threads, err) == 0);
        rng_state r;
        rng_seed(&r, 5);
        int stamp[64], failures = 0;
        job_state s;
        const size_t big = (size_t)1 << 20;
        unsigned char *buf = malloc(big);
        CHECK(buf != NULL);
        for (int job = 0; job < 100000; job++) {
            int n = 1 + (int)rng_below(&r, 64);
            for (int k = 0, ranges = (int)rng_below(&r, TPOOL_IDLE_RANGES + 2); k < ranges; k++) {
                const size_t at = rng_below(&r, (uint32_t)big);
                const size_t len = rng_below(&r, (uint32_t)(big - at));
                tpool_prefetch_idle(p, buf + at, len, 0);
            }
            memset(&s, 0, sizeof s);
            s.job = job;
            s.stamp = stamp;
            tpool_run(p, chunk_fn, &s, n);
            int ok = atomic_load(&s.running) == 0 && atomic_load(&s.bad_job) == 0;
            for (int c = 0; c < 64; c++) ok &= atomic_load(&s.runs[c]) == (c < n);
            for (int c = 0; c < n; c++) ok &= stamp[c] == job;
            failures += !ok;
        }
        CHECK_MSG(failures == 0, "%d threads: %d of 100000 jobs ran a chunk twice, not at all, or "
                                 "returned before it finished", threads, failures);
        test_spans(p, &r);
        tpool_free(p);
        free(buf);
    }
    return test_finish("test_tpool");
}
