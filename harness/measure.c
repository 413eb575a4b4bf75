#include "harness/measure.h"

#include <stdlib.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif
#include <string.h>

#include "util/clock.h"
#include "util/err.h"

typedef struct {
    const float *buf;
    size_t n;
    float partial[256];
} bw_task;

static void bw_worker(void *arg, int chunk, int n_chunks, int thread) {
    bw_task *t = arg;
    size_t per = t->n / (size_t)n_chunks, lo = per * chunk, hi = chunk == n_chunks - 1 ? t->n : lo + per;
    float sum = 0;
    size_t i = lo;
#ifdef __AVX512F__ /* wide loads, four independent sums: the loop is bound by memory only */
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (; i + 64 <= hi; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(t->buf + i));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(t->buf + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(t->buf + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(t->buf + i + 48));
    }
    sum = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
#endif
    float s[8] = {0};
    for (; i + 8 <= hi; i += 8)
        for (int j = 0; j < 8; j++) s[j] += t->buf[i + j];
    for (; i < hi; i++) sum += t->buf[i];
    for (int j = 0; j < 8; j++) sum += s[j];
    if (chunk < 256) t->partial[chunk] = sum;
    (void)thread;
}

double measure_read_bandwidth(tpool *pool, size_t bytes, int reps) {
    size_t n = bytes / sizeof(float);
    float *buf = malloc(n * sizeof(float));
    if (!buf) return -1;
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 7); /* touch every page */
    bw_task t = {buf, n, {0}};
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = clock_now();
        tpool_run(pool, bw_worker, &t, tpool_size(pool) > 1 ? 4 * tpool_size(pool) : 1);
        double dt = clock_now() - t0;
        best = dt < best ? dt : best;
    }
    volatile float sink = t.partial[0]; /* keep the sums alive */
    (void)sink;
    free(buf);
    return (double)n * sizeof(float) / best / 1e9;
}

double measure_row_macs(const model_config *c) {
    double per_layer = 2.0 * c->dim * c->dim + 2.0 * c->dim * c->kv_dim + 3.0 * c->dim * c->hidden_dim;
    return per_layer * c->n_layers + (double)c->vocab_size * c->dim;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int measure_forward(fwd_ctx *f, int rows, int context, double min_seconds, measure_point *out,
                    char *err) {
    return measure_forward_logits(f, rows, rows, context, min_seconds, out, err);
}

int measure_forward_logits(fwd_ctx *f, int rows, int n_logits, int context, double min_seconds,
                           measure_point *out, char *err) {
    const model *m = fwd_model(f);
    const model_config *c = &m->cfg;
    if (rows > fwd_max_batch(f)) return err_set(err, "rows %d exceed the batch capacity %d", rows, fwd_max_batch(f));
    if (context + rows > c->seq_len)
        return err_set(err, "context %d + rows %d exceed the model's context length %d", context, rows, c->seq_len);
    if (n_logits < 1 || n_logits > rows)
        return err_set(err, "logits of %d rows requested from a pass of %d", n_logits, rows);
    int n = context > rows ? context : rows;
    int *tokens = malloc(sizeof(int) * (size_t)n), *out_rows = malloc(sizeof(int) * (size_t)rows);
    float *logits = malloc(sizeof(float) * (size_t)rows * c->vocab_size);
    enum { MAX_REPS = 4096 };
    double *times = malloc(sizeof(double) * MAX_REPS);
    if (!tokens || !out_rows || !logits || !times) {
        free(tokens), free(out_rows), free(logits), free(times);
        return err_set(err, "out of memory");
    }
    for (int i = 0; i < n_logits; i++) out_rows[i] = rows - n_logits + i;
    for (int i = 0; i < n; i++) tokens[i] = (int)((i * 7919u + 13) % (unsigned)c->vocab_size);
    int rc = fwd_truncate(f, 0, err);
    if (!rc && context > 0) rc = fwd_prefill(f, tokens, context, logits, err);
    /* one pass to warm caches and page in the weights, then the measured ones */
    if (!rc) rc = fwd_eval(f, rows, tokens, NULL, NULL, out_rows, n_logits, logits, err);
    int reps = 0;
    double start = clock_now();
    while (!rc && reps < MAX_REPS && (reps < 3 || clock_now() - start < min_seconds)) {
        double t0 = clock_now();
        rc = fwd_eval(f, rows, tokens, NULL, NULL, out_rows, n_logits, logits, err);
        times[reps++] = clock_now() - t0;
    }
    if (!rc) {
        qsort(times, (size_t)reps, sizeof(double), cmp_double);
        double med = times[reps / 2];
        double cls = (double)c->vocab_size * c->dim; /* the classifier runs on n_logits rows */
        double macs = (measure_row_macs(c) - cls) * rows + cls * n_logits;
        *out = (measure_point){rows, med, reps, 2.0 * macs / med / 1e9,
                               (double)model_weight_bytes(m) / med / 1e9};
    }
    free(tokens), free(out_rows), free(logits), free(times);
    return rc;
}
