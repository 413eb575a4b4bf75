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

static void *worker_main(void *a) {
    worker_arg *wa = a;
    tpool *p = wa->pool;
    uint32_t seen = 0;
    for (;;) {
        int spins = 0;
        while (CLAIM_JOB(atomic_load(&p->claim)) == seen && !atomic_load(&p->stop)) {
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
    if (n_chunks <= 0) return;
    if (!p || p->n == 1 || n_chunks == 1 || n_chunks > MAX_CHUNKS) {
        for (int c = 0; c < n_chunks; c++) fn(arg, c, n_chunks, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->done, 0);
    uint32_t job = (CLAIM_JOB(atomic_load(&p->claim)) + 1) & 0xffffff;
    /* publish: workers may claim from here */
    atomic_store(&p->claim, (uint64_t)job << 40 | (uint64_t)n_chunks << 20);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    work(p, job, 0);
    /* Every chunk is claimed; wait for the ones workers are still running. */
    for (int spins = 0; atomic_load(&p->done) < n_chunks; spins++) {
        if (spins < 4096) CPU_RELAX();
        else sched_yield();
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
