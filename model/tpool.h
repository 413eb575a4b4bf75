/* tpool.h: a fixed pool of worker threads for the forward pass.
 *
 * tpool_run(p, fn, arg, n) runs fn(arg, c, n, thread) once for every chunk c in [0, n): the
 * caller and the workers claim chunks one at a time until none is left, then the call returns.
 * `thread` (0 = the caller, 1..size-1 the workers) only indexes per-thread scratch.
 *
 * Why claimed chunks rather than one share per thread: on a machine with more runnable
 * threads than cores (a shared CI box, a laptop doing other work) a worker may not run for
 * milliseconds; with fixed shares every pass would wait for it, many times per token. Here the
 * caller simply takes the chunks no worker has claimed, and waits only for chunks already
 * under way.
 *
 * Exactness: callers give each chunk whole output values (rows of a product, heads of a row),
 * computed by the same code whichever thread runs it, so results are bit-identical for any
 * thread count and any claiming order. */
#ifndef MODEL_TPOOL_H
#define MODEL_TPOOL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tpool tpool;
typedef void (*tpool_fn)(void *arg, int chunk, int n_chunks, int thread);

/* n_threads >= 1; 1 means no worker threads at all. */
int tpool_new(tpool **out, int n_threads, char *err);
void tpool_free(tpool *p);
int tpool_size(const tpool *p);
void tpool_run(tpool *p, tpool_fn fn, void *arg, int n_chunks);

/* Prefetching while waiting. In a tpool_run, a thread out of chunks waits for the others'
 * chunks, then (a worker) for the next job; meanwhile it can fetch bytes the next job will read.
 * Each tpool_prefetch_idle names one such range for the next tpool_run, which takes them (up
 * to TPOOL_IDLE_RANGES, further ones ignored): while waiting, thread i prefetches the
 * i-th of equal shares of each range in turn, into L2: the rows a product gives it where the
 * product has one piece a thread (forward.c's one-row passes). first, if not 0, is the caller's
 * share (the first `first` bytes), the workers then taking equal shares of the rest: a product
 * whose first piece is larger (model/balance.h). Only a hint: no result depends on it. */
#define TPOOL_IDLE_RANGES 3
void tpool_prefetch_idle(tpool *p, const void *base, size_t bytes, size_t first);

/* The contiguous share [*lo, *hi) of n items for part i of parts, each share a multiple of
 * `align` items except the last. */
void tpool_split(int n, int align, int i, int parts, int *lo, int *hi);

/* A span: units [0, n) of one piece of work, taken from the front by the thread that claimed
 * the piece, a few at a time, and from the back by a thread that ran out of pieces of its own;
 * every unit is taken exactly once. One atomic word (front << 16 | back): n <= TPOOL_SPAN_MAX.
 * tpool_span_take takes up to `want` units, [*a, *e), and returns 0 once none is left. */
#define TPOOL_SPAN_MAX 0xffff
typedef _Atomic uint32_t tpool_span;
void tpool_span_init(tpool_span *s, int n);
int tpool_span_take(tpool_span *s, int want, int from_back, int *a, int *e);

#endif
