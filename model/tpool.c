/* tpool.c: fork-join thread pool with spin-then-sleep workers. */
#include "model/tpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "util/err.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* Spins before a worker sleeps: long enough to bridge the gap between the matrix products of
 * one forward pass and between decoding steps, short enough not to burn a core when idle. */
#define SPIN_LIMIT 200000

typedef struct {
    tpool *pool;
    int index;
} worker_arg;

struct tpool {
    int n;
    pthread_t *threads;
    worker_arg *args;
    tpool_fn fn;
    void *arg;
    atomic_uint gen;     /* bumped once per job */
    atomic_int pending;  /* workers still running the current job */
    atomic_int sleepers; /* workers blocked on cv */
    atomic_int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *worker_main(void *p) {
    worker_arg *wa = p;
    tpool *pool = wa->pool;
    unsigned seen = 0;
    for (;;) {
        int spins = 0;
        while (atomic_load(&pool->gen) == seen && !atomic_load(&pool->stop)) {
            if (++spins < SPIN_LIMIT) {
                CPU_RELAX();
                continue;
            }
            pthread_mutex_lock(&pool->mu);
            atomic_fetch_add(&pool->sleepers, 1);
            while (atomic_load(&pool->gen) == seen && !atomic_load(&pool->stop))
                pthread_cond_wait(&pool->cv, &pool->mu);
            atomic_fetch_sub(&pool->sleepers, 1);
            pthread_mutex_unlock(&pool->mu);
        }
        if (atomic_load(&pool->stop)) return NULL;
        seen = atomic_load(&pool->gen);
        pool->fn(pool->arg, wa->index, pool->n);
        atomic_fetch_sub(&pool->pending, 1);
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

void tpool_run(tpool *p, tpool_fn fn, void *arg) {
    if (!p || p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->pending, p->n - 1);
    atomic_fetch_add(&p->gen, 1);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    fn(arg, 0, p->n);
    /* Spin for the workers; if one was descheduled (more threads than free cores), yield
     * instead of burning the time slice it needs. */
    for (int spins = 0; atomic_load(&p->pending) > 0; spins++) {
        if (spins < 4096) CPU_RELAX();
        else sched_yield();
    }
}

void tpool_split(int n, int align, int i, int nt, int *lo, int *hi) {
    if (align < 1) align = 1;
    int units = (n + align - 1) / align;
    int per = units / nt, extra = units % nt;
    int u0 = i * per + (i < extra ? i : extra);
    int u1 = u0 + per + (i < extra ? 1 : 0);
    *lo = u0 * align < n ? u0 * align : n;
    *hi = u1 * align < n ? u1 * align : n;
}
