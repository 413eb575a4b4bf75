/* tpool.c: fork-join thread pool whose jobs are split into claimed chunks (see tpool.h). */
#include "model/tpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/err.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* Pause iterations a worker spins for the next job before it sleeps (tens of microseconds:
 * enough to bridge the serial parts of a forward pass and a decoder's bookkeeping). */
#define SPIN_LIMIT 4096

typedef struct {
    tpool *pool;
    int index;
} worker_arg;

struct tpool {
    int n;
    pthread_t *threads;
    worker_arg *args;
    /* The current job. fn/arg/n_chunks are written by the caller before it publishes the job
     * in `claim` and stay fixed until every claimed chunk is done. */
    tpool_fn fn;
    void *arg;
    /* job id << 40 | chunk count << 20 | next chunk. The count travels with the job id so a
     * worker that wakes late, still holding an old job id, can never claim against the next
     * job's count (it did once: it claimed a chunk of a job not yet published and bumped
     * `done` early, so the caller returned while a chunk was still running). */
    _Atomic uint64_t claim;
    atomic_int done;        /* chunks finished */
    atomic_int sleepers;
    atomic_int stop;
    /* What waiting threads prefetch (tpool_prefetch_idle): the ranges named for the next job
     * (next_*), moved to idle_* as it is published, a zero base ending the list. Atomics only
     * so that a worker waking late may read them while the caller sets the next job's. */
    uintptr_t next_base[TPOOL_IDLE_RANGES];
    size_t next_bytes[TPOOL_IDLE_RANGES], next_first[TPOOL_IDLE_RANGES];
    int n_next;
    _Atomic uintptr_t idle_base[TPOOL_IDLE_RANGES];
    _Atomic size_t idle_bytes[TPOOL_IDLE_RANGES], idle_first[TPOOL_IDLE_RANGES];
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* Claims and runs chunks of job `job` until none is left or a newer job replaced it. */
#define CLAIM_JOB(w) ((uint32_t)((w) >> 40))
#define CLAIM_COUNT(w) ((int)(((w) >> 20) & 0xfffff))
#define CLAIM_NEXT(w) ((int)((w) & 0xfffff))
#define MAX_CHUNKS 0xfffff

static void work(tpool *p, uint32_t job, int thread) {
    for (;;) {
        uint64_t w = atomic_load(&p->claim);
        if (CLAIM_JOB(w) != job || CLAIM_NEXT(w) >= CLAIM_COUNT(w)) return;
        if (!atomic_compare_exchange_weak(&p->claim, &w, w + 1)) continue;
        /* chunk claimed: the job cannot finish before it, so fn/arg are this job's */
        p->fn(p->arg, CLAIM_NEXT(w), CLAIM_COUNT(w), thread);
        atomic_fetch_add(&p->done, 1);
    }
}

/* A waiting thread's place in its shares of the idle ranges: range k, bytes [at, end) of it
 * still to prefetch, IDLE_LINES lines between two looks at the job word (8 and 16 lines were
 * slower than 4 and 2 on 110M q8_0's one-row passes: 0.95x and 0.97x the time of none, against
 * 0.93x; medians of 10 alternated pairs, Zen 5, a busy host). The hint is L2's (locality 2):
 * L1's measured within the noise of it. */
#define IDLE_LINES 4
typedef struct {
    int k;
    uintptr_t at, end;
} idle_cursor;

/* Moves c to the first range from c->k on with bytes left in thread's share. */
static void idle_next_range(tpool *p, int thread, idle_cursor *c) {
    for (; c->k < TPOOL_IDLE_RANGES; c->k++) {
        const uintptr_t base = atomic_load_explicit(&p->idle_base[c->k], memory_order_relaxed);
        const size_t bytes = atomic_load_explicit(&p->idle_bytes[c->k], memory_order_relaxed);
        const size_t first = atomic_load_explicit(&p->idle_first[c->k], memory_order_relaxed);
        if (!base) break;
        if (first && first <= bytes) { /* the caller's share, then even shares of the rest */
            const size_t rest = bytes - first, others = (size_t)p->n - 1;
            c->at = thread ? base + first + rest * (size_t)(thread - 1) / others : base;
            c->end = thread ? base + first + rest * (size_t)thread / others : base + first;
        } else {
            c->at = base + bytes * (size_t)thread / (size_t)p->n;
            c->end = base + bytes * (size_t)(thread + 1) / (size_t)p->n;
        }
        if (c->at < c->end) return;
    }
    c->k = TPOOL_IDLE_RANGES, c->at = c->end = 0;
}

/* Prefetches the next lines of the thread's shares; returns 0 once none is left. The ranges
 * are addresses as integers: a stale or odd one only prefetches other bytes, never faults. */
static int idle_fetch(tpool *p, int thread, idle_cursor *c) {
    if (c->at >= c->end) {
        if (c->k >= TPOOL_IDLE_RANGES) return 0;
        c->k++;
        idle_next_range(p, thread, c);
        if (c->at >= c->end) return 0;
    }
    for (int i = 0; i < IDLE_LINES && c->at < c->end; i++, c->at += 64)
        __builtin_prefetch((const void *)c->at, 0, 2);
    return 1;
}

static idle_cursor idle_start(tpool *p, int thread) {
    idle_cursor c = {0, 0, 0};
    idle_next_range(p, thread, &c);
    return c;
}

static void *worker_main(void *a) {
    worker_arg *wa = a;
    tpool *p = wa->pool;
    uint32_t seen = 0;
    idle_cursor idle = {TPOOL_IDLE_RANGES, 0, 0};
    for (;;) {
        int spins = 0;
        while (CLAIM_JOB(atomic_load(&p->claim)) == seen && !atomic_load(&p->stop)) {
            if (idle_fetch(p, wa->index, &idle)) continue;
            if (++spins < SPIN_LIMIT) {
                CPU_RELAX();
                continue;
            }
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while (CLAIM_JOB(atomic_load(&p->claim)) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->cv, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) return NULL;
        seen = CLAIM_JOB(atomic_load(&p->claim));
        idle = idle_start(p, wa->index);
        work(p, seen, wa->index);
    }
}

int tpool_new(tpool **out, int n_threads, char *err) {
    *out = NULL;
    if (n_threads < 1 || n_threads > 1024)
        return err_set(err, "threads: %d is out of range 1..1024", n_threads);
    tpool *p = calloc(1, sizeof *p);
    if (!p) return err_set(err, "thread pool: out of memory");
    p->n = n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->threads = calloc((size_t)n_threads, sizeof *p->threads);
    p->args = calloc((size_t)n_threads, sizeof *p->args);
    if (!p->threads || !p->args) {
        tpool_free(p);
        return err_set(err, "thread pool: out of memory");
    }
    for (int i = 1; i < n_threads; i++) {
        p->args[i] = (worker_arg){p, i};
        if (pthread_create(&p->threads[i], NULL, worker_main, &p->args[i]) != 0) {
            p->n = i; /* join the ones started */
            tpool_free(p);
            return err_set(err, "thread pool: cannot start thread %d of %d", i, n_threads);
        }
    }
    *out = p;
    return 0;
}

void tpool_free(tpool *p) {
    if (!p) return;
    if (p->threads) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->stop, 1);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        for (int i = 1; i < p->n; i++)
            if (p->threads[i]) pthread_join(p->threads[i], NULL);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->threads);
    free(p->args);
    free(p);
}

int tpool_size(const tpool *p) { return p ? p->n : 1; }

void tpool_run(tpool *p, tpool_fn fn, void *arg, int n_chunks) {
    const int n_next = p ? p->n_next : 0;
    if (p) p->n_next = 0;
    if (n_chunks <= 0) return;
    if (!p || p->n == 1 || n_chunks == 1 || n_chunks > MAX_CHUNKS) {
        for (int c = 0; c < n_chunks; c++) fn(arg, c, n_chunks, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    for (int k = 0; k < TPOOL_IDLE_RANGES; k++) {
        atomic_store_explicit(&p->idle_base[k], k < n_next ? p->next_base[k] : 0,
                              memory_order_relaxed);
        atomic_store_explicit(&p->idle_bytes[k], k < n_next ? p->next_bytes[k] : 0,
                              memory_order_relaxed);
        atomic_store_explicit(&p->idle_first[k], k < n_next ? p->next_first[k] : 0,
                              memory_order_relaxed);
    }
    atomic_store(&p->done, 0);
    uint32_t job = (CLAIM_JOB(atomic_load(&p->claim)) + 1) & 0xffffff;
    /* publish: workers may claim from here */
    atomic_store(&p->claim, (uint64_t)job << 40 | (uint64_t)n_chunks << 20);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    idle_cursor idle = idle_start(p, 0);
    work(p, job, 0);
    /* Every chunk is claimed; wait for the ones workers are still running. */
    for (int spins = 0; atomic_load(&p->done) < n_chunks; spins++) {
        if (idle_fetch(p, 0, &idle)) continue;
        if (spins < 4096) CPU_RELAX();
        else sched_yield();
    }
}

void tpool_prefetch_idle(tpool *p, const void *base, size_t bytes, size_t first) {
    if (!p || p->n == 1 || !base || p->n_next == TPOOL_IDLE_RANGES) return;
    p->next_base[p->n_next] = (uintptr_t)base, p->next_bytes[p->n_next] = bytes;
    p->next_first[p->n_next++] = first;
}

void tpool_span_init(tpool_span *s, int n) {
    atomic_store_explicit(s, (uint32_t)(n < 0 ? 0 : n > TPOOL_SPAN_MAX ? TPOOL_SPAN_MAX : n),
                          memory_order_relaxed);
}

int tpool_span_take(tpool_span *s, int want, int from_back, int *a, int *e) {
    uint32_t w = atomic_load_explicit(s, memory_order_relaxed);
    for (;;) {
        const int front = (int)(w >> 16), back = (int)(w & 0xffff);
        if (front >= back) return 0;
        const int take = back - front < want ? back - front : want < 1 ? 1 : want;
        const uint32_t nw = from_back ? w - (uint32_t)take : w + ((uint32_t)take << 16);
        if (atomic_compare_exchange_weak_explicit(s, &w, nw, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *a = from_back ? back - take : front, *e = from_back ? back : front + take;
            return 1;
        }
    }
}

void tpool_split(int n, int align, int i, int parts, int *lo, int *hi) {
    if (align < 1) align = 1;
    int units = (n + align - 1) / align;
    int per = units / parts, extra = units % parts;
    int u0 = i * per + (i < extra ? i : extra);
    int u1 = u0 + per + (i < extra ? 1 : 0);
    *lo = u0 * align < n ? u0 * align : n;
    *hi = u1 * align < n ? u1 * align : n;
}
