/* tpool.h: a fixed pool of worker threads for the forward pass.
 *
 * tpool_run() runs fn(arg, i, n) on every thread i of n (the caller is thread 0) and returns
 * when all are done. Callers split work by index only (rows of a matrix, heads of a layer), so
 * every output value is computed by exactly one thread with the same instructions whatever n
 * is: results are bit-identical for any thread count. Workers spin briefly between jobs
 * (jobs are microseconds apart while decoding) and then sleep. */
#ifndef MODEL_TPOOL_H
#define MODEL_TPOOL_H

typedef struct tpool tpool;
typedef void (*tpool_fn)(void *arg, int thread, int n_threads);

/* n_threads >= 1; 1 means no worker threads at all. */
int tpool_new(tpool **out, int n_threads, char *err);
void tpool_free(tpool *p);
int tpool_size(const tpool *p);
void tpool_run(tpool *p, tpool_fn fn, void *arg);

/* The contiguous share [*lo, *hi) of n items for thread i of nt, each share a multiple of
 * `align` items except the last. */
void tpool_split(int n, int align, int i, int nt, int *lo, int *hi);

#endif
