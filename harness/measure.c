#include "harness/measure.h"

#include <stdlib.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif
#include <stdio.h>
#include <string.h>

#include "model/kernels/kernels.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/huge.h"

#include <unistd.h>

typedef struct {
    const float *buf;
    size_t n;
    float partial[256];
} bw_task;

static void bw_worker(void *arg, int chunk, int n_chunks, int thread) {
    bw_task *t = arg;
    size_t per = t->n / (size_t)n_chunks, lo = per * chunk,
           hi = chunk == n_chunks - 1 ? t->n : lo + per;
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

/* A probe buffer of n floats, every page touched (NULL if it cannot be allocated), in 2 MB
 * pages where the kernel gives them, as the weights' copies are (fwd_new): a pass is compared
 * with a read of memory paged as its weights are. In 4 KB pages, on a VM whose page tables the
 * host shadows (the Zen 5 VM), a read interleaved with one-thread passes ran at 1.5-2.0 GB/s,
 * a third of its time in the kernel, and the pass "read" 1400-2200% of it (the best of several
 * reads in a row: 23.6 GB/s). */
static float *probe_buffer(size_t n) {
    float *buf = huge_alloc(n * sizeof(float));
    for (size_t i = 0; buf && i < n; i++) buf[i] = (float)(i & 7);
    return buf;
}

/* Seconds of one read of t's buffer by every thread of pool. */
static double probe_read(tpool *pool, bw_task *t) {
    double t0 = clock_now();
    tpool_run(pool, bw_worker, t, tpool_size(pool) > 1 ? 4 * tpool_size(pool) : 1);
    return clock_now() - t0;
}

double measure_read_bandwidth(tpool *pool, size_t bytes, int reps) {
    size_t n = bytes / sizeof(float);
    float *buf = probe_buffer(n);
    if (!buf) return -1;
    bw_task t = {buf, n, {0}};
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double dt = probe_read(pool, &t);
        best = dt < best ? dt : best;
    }
    volatile float sink = t.partial[0]; /* keep the sums alive */
    (void)sink;
    free(buf);
    return (double)n * sizeof(float) / best / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The tokens a measured pass feeds: spread over the vocabulary, the same in every measurement. */
static void measure_tokens(int *tokens, int n, int vocab) {
    for (int i = 0; i < n; i++) tokens[i] = (int)((i * 7919u + 13) % (unsigned)vocab);
}

/* Brings f's committed prefix to `context` positions: the first MEASURE_COMPUTED of them by a
 * real prefill of tokens, the rest by repeating their keys and values (fwd_repeat_prefix). A
 * pass's time does not depend on the values it attends to, and a prefill of a long context one
 * measured row at a time (max_batch 1) would take most of an hour at 32768 positions of a 1B
 * model, once per round. */
#define MEASURE_COMPUTED 64
static int reach_context(fwd_ctx *f, const int *tokens, int context, float *logits, char *err) {
    int have = fwd_n_past(f), real = context < MEASURE_COMPUTED ? context : MEASURE_COMPUTED;
    if (have < real && fwd_prefill(f, tokens + have, real - have, logits, err)) return -1;
    return fwd_repeat_prefix(f, context, err);
}

/* The median of v[0..n) (n >= 1), which it sorts. */
static double median_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int measure_bandwidth_share(fwd_ctx *f, tpool *pool, size_t bytes, int rounds, int context,
                            measure_share *out, char *err) {
    if (rounds < 1) return err_set(err, "bandwidth share: %d rounds (at least 1)", rounds);
    const model *md = fwd_model(f);
    const double weight_bytes = (double)model_weight_bytes(md);
    size_t n = bytes / sizeof(float);
    int n_tok = context > 1 ? context : 1;
    int width =
        model_logits_width(md) > md->cfg.vocab_size ? model_logits_width(md) : md->cfg.vocab_size;
    float *buf = probe_buffer(n), *logits = malloc(sizeof(float) * (size_t)width);
    int *tokens = malloc(sizeof(int) * (size_t)n_tok);
    double *share = malloc(sizeof(double) * 6 * (size_t)rounds), *probe = share + rounds,
           *pass = probe + rounds, *ratio = pass + rounds, *pass_s = ratio + rounds,
           *bound_s = pass_s + rounds;
    const double kv_bytes = (double)fwd_kv_bytes(f, context + 1);
    int rc = 0;
    if (!buf || !logits || !tokens || !share)
        rc = err_set(err, "out of memory for the bandwidth share (a %zu MB buffer)", bytes >> 20);
    if (rc == 0) measure_tokens(tokens, n_tok, md->cfg.vocab_size);
    if (rc == 0 && (fwd_truncate(f, 0, err) || reach_context(f, tokens, context, logits, err)))
        rc = -1;
    bw_task t = {buf, n, {0}};
    int last_row = 0;
    /* round -1 warms up: pages the weights in, the probe's buffer into the TLB */
    for (int r = -1; rc == 0 && r < rounds; r++) {
        double read = probe_read(pool, &t), spent = 0;
        int passes = 0;
        while (rc == 0 && (passes == 0 || spent < read)) {
            double t0 = clock_now();
            rc = fwd_eval(f, 1, tokens, NULL, NULL, &last_row, 1, logits, err);
            spent += clock_now() - t0;
            passes++;
        }
        if (rc == 0 && r >= 0) {
            probe[r] = (double)n * sizeof(float) / read / 1e9;
            pass[r] = weight_bytes * passes / spent / 1e9;
            share[r] = pass[r] / probe[r];
            pass_s[r] = spent / passes;
            bound_s[r] = (weight_bytes + kv_bytes) / (probe[r] * 1e9);
            ratio[r] = pass_s[r] / bound_s[r];
        }
    }
    if (rc == 0) {
        *out = (measure_share){.share = median_of(share, rounds), /* sorts share */
                               .probe_gbps = median_of(probe, rounds),
                               .pass_gbps = median_of(pass, rounds),
                               .kv_bytes = kv_bytes,
                               .pass_s = median_of(pass_s, rounds),
                               .bound_s = median_of(bound_s, rounds),
                               .ratio = median_of(ratio, rounds), /* sorts ratio */
                               .rounds = rounds};
        out->share_lo = share[0], out->share_hi = share[rounds - 1];
        out->ratio_lo = ratio[0], out->ratio_hi = ratio[rounds - 1];
    }
    volatile float sink = t.partial[0];
    (void)sink;
    free(buf), free(logits), free(tokens), free(share);
    return rc;
}

/* Multiply-adds of the matrix products one row of a pass costs, without the classifier, and of
 * the classifier per row whose logits are computed (2 x these = FLOPs). */
/* The calling thread's clock in GHz: 64 dependent register additions per iteration, which a core
 * retires at one a cycle (an addition of an immediate would not do: Golden Cove folds chains of
 * them, and such a chain measured 12 GHz on the Emerald Rapids VM); best of 30 runs of 2^14
 * iterations (0.35 ms at 3 GHz: short, so that some run sees no other process). */
static double clock_ghz(void) {
#if defined(__x86_64__)
    const long n = 1 << 14;
    double best = 0;
    for (int run = 0; run < 30; run++) {
        long x = 0, one = 1;
        double t0 = clock_now();
        for (long i = 0; i < n; i++)
            __asm__ volatile(".rept 64\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
        double dt = clock_now() - t0, ghz = dt > 0 ? 64.0 * n / dt / 1e9 : 0;
        best = ghz > best ? ghz : best;
    }
    return best;
#else
    return 0;
#endif
}

void measure_peak_of(int threads, measure_peak *out) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    out->cores = cpus > 0 && threads > cpus ? (int)cpus : threads;
    out->ghz = clock_ghz();
    kern_peak_per_cycle(out->ghz, &out->int8_per_cycle, &out->f32_per_cycle, &out->what);
    out->int8_gops = out->int8_per_cycle * out->cores * out->ghz;
    out->f32_gflops = out->f32_per_cycle * out->cores * out->ghz;
}

static double measure_row_macs(const model_config *c) {
    double per_layer =
        2.0 * c->dim * c->dim + 2.0 * c->dim * c->kv_dim + 3.0 * c->dim * c->hidden_dim;
    return per_layer * c->n_layers;
}

static double measure_logit_macs(const model_config *c) {
    return (double)c->vocab_size * c->dim;
}

db_cost measure_cost_row(const measure_point *p, int64_t weight_bytes, double mem_gbps) {
    return (db_cost){p->rows,      p->seconds, p->repeats, p->gflops,    p->weight_gbps,
                     weight_bytes, mem_gbps,   p->context, p->logit_rows};
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

int measure_parse_list(const char *s, const char *what, int lo, int hi, int *out, int max, int *n,
                       char *err) {
    *n = 0;
    char buf[1024];
    if (strlen(s) >= sizeof buf) return err_set(err, "%s: list too long", what);
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(p, &end, 10);
        if (!*p || *end || v < lo || v > hi)
            return err_set(err, "%s: '%s' is not a count %d..%d", what, p, lo, hi);
        if (*n >= max) return err_set(err, "%s: more than %d values", what, max);
        out[(*n)++] = (int)v;
    }
    if (!*n) return err_set(err, "%s: empty list", what);
    qsort(out, (size_t)*n, sizeof *out, cmp_int);
    int k = 1;
    for (int i = 1; i < *n; i++)
        if (out[i] != out[k - 1]) out[k++] = out[i];
    *n = k;
    return 0;
}

int measure_grid_fit(measure_grid *g, int seq_len, char *note, size_t n_note, char *err) {
    note[0] = '\0';
    int max_rows = g->rows[g->n_rows - 1];
    if (max_rows >= seq_len)
        return err_set(err, "%d rows leave no room in the model's context length %d", max_rows,
                       seq_len);
    int k = 0, room = seq_len - max_rows;
    for (int i = 0; i < g->n_contexts; i++) {
        int c = g->contexts[i];
        if (c > room) {
            size_t len = strlen(note);
            snprintf(note + len, n_note - len,
                     "%scontext %d + %d rows exceed the context length %d: measured at %d",
                     len ? "; " : "", c, max_rows, seq_len, room);
            c = room;
        }
        if (k == 0 || c > g->contexts[k - 1]) g->contexts[k++] = c;
    }
    g->n_contexts = k;
    return 0;
}

int measure_grid_points(const measure_grid *g) {
    int classifier = 0;
    for (int i = 0; g->logits == MEASURE_LOGITS_BOTH && i < g->n_rows; i++)
        classifier += g->rows[i] > 1;
    return g->n_rows * g->n_contexts + classifier;
}

/* One point of the grid while it is measured. */
typedef struct {
    int rows, context, logit_rows;
    double est;    /* seconds of its warm-up pass */
    double *times; /* its measured passes */
    int n, cap;
    double total; /* seconds measured */
} grid_point;

static int point_add(grid_point *p, double t) {
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        double *grown = realloc(p->times, sizeof *grown * (size_t)cap);
        if (!grown) return -1;
        p->times = grown, p->cap = cap;
    }
    p->times[p->n++] = t;
    p->total += t;
    return 0;
}

struct measure_run {
    fwd_ctx *f;
    measure_grid g;
    grid_point *pts;
    int n_pts, round, more;
    int *tokens, *out_rows;
    float *logits;
    /* measure_cost_grid_batch: f and the batch - 1 contexts made for the run, the group that
     * evaluates them in one pass, a part for each */
    int batch;
    fwd_ctx **fs;
    fwd_group *grp;
    fwd_part *parts;
};

/* One pass of point p after the context is in place (the batch is left in scratch, n_past does
 * not move). */
static int grid_pass(const measure_run *m, const grid_point *p, double *secs, char *err) {
    for (int i = 0; i < p->logit_rows; i++) m->out_rows[i] = p->rows - p->logit_rows + i;
    if (m->batch > 1) {
        const int V = model_logits_width(fwd_model(m->f));
        for (int b = 0; b < m->batch; b++)
            m->parts[b] = (fwd_part){.ctx = m->fs[b], .n = p->rows, .tokens = m->tokens,
                                     .out_rows = m->out_rows, .n_out = p->logit_rows,
                                     .logits = m->logits + (size_t)b * p->rows * V};
    }
    double t0 = clock_now();
    int rc = m->batch > 1 ? fwd_group_eval(m->grp, m->parts, m->batch, err)
                          : fwd_eval(m->f, p->rows, m->tokens, NULL, NULL, m->out_rows,
                                     p->logit_rows, m->logits, err);
    *secs = clock_now() - t0;
    return rc;
}

void measure_run_free(measure_run *m) {
    if (!m) return;
    for (int p = 0; m->pts && p < m->n_pts; p++) free(m->pts[p].times);
    free(m->pts), free(m->tokens), free(m->out_rows), free(m->logits);
    for (int b = 1; m->fs && b < m->batch; b++) fwd_free(m->fs[b]);
    free(m->fs), free(m->parts);
    fwd_group_free(m->grp);
    free(m);
}

static int run_new(measure_run **out, fwd_ctx *f, int batch, const measure_grid *g, char *err) {
    *out = NULL;
    const model *md = fwd_model(f);
    const model_config *c = &md->cfg;
    if (batch < 1 || batch > MEASURE_MAX_BATCH)
        return err_set(err, "batch of %d sequences, expected 1..%d", batch, MEASURE_MAX_BATCH);
    int max_rows = g->rows[g->n_rows - 1], max_ctx = g->contexts[g->n_contexts - 1];
    int n_tok = max_ctx > max_rows ? max_ctx : max_rows;
    measure_run *m = calloc(1, sizeof *m);
    if (m) {
        m->f = f, m->g = *g, m->more = 1, m->n_pts = measure_grid_points(g), m->batch = batch;
        m->pts = calloc((size_t)m->n_pts, sizeof *m->pts);
        m->tokens = malloc(sizeof(int) * (size_t)n_tok);
        m->out_rows = malloc(sizeof(int) * (size_t)max_rows);
        m->logits = malloc(sizeof(float) * (size_t)batch * max_rows * model_logits_width(md));
        m->fs = calloc((size_t)batch, sizeof *m->fs);
        m->parts = calloc((size_t)batch, sizeof *m->parts);
    }
    if (!m || !m->pts || !m->tokens || !m->out_rows || !m->logits || !m->fs || !m->parts) {
        measure_run_free(m);
        return err_set(err, "out of memory");
    }
    m->fs[0] = f;
    for (int b = 1; b < batch; b++)
        if (fwd_new(&m->fs[b], md, fwd_pool(f), fwd_max_batch(f), fwd_kern_mode(f), err)) {
            measure_run_free(m);
            return -1;
        }
    if (batch > 1 && fwd_group_new(&m->grp, md, fwd_pool(f), batch * max_rows, batch,
                                   fwd_kern_mode(f), err)) {
        measure_run_free(m);
        return -1;
    }
    measure_tokens(m->tokens, n_tok, c->vocab_size);
    int k = 0;
    for (int j = 0; j < g->n_contexts; j++)
        for (int i = 0; i < g->n_rows; i++) {
            int both = g->logits == MEASURE_LOGITS_BOTH && j == 0 && g->rows[i] > 1;
            for (int all = g->logits == MEASURE_LOGITS_ALL;
                 all <= (both || g->logits == MEASURE_LOGITS_ALL); all++)
                m->pts[k++] = (grid_point){
                    g->rows[i], g->contexts[j], all ? g->rows[i] : 1, 0, NULL, 0, 0, 0};
        }
    *out = m;
    return 0;
}

int measure_run_new(measure_run **out, fwd_ctx *f, const measure_grid *g, char *err) {
    return run_new(out, f, 1, g, err);
}

int measure_run_new_batch(measure_run **out, fwd_ctx *f, int batch, const measure_grid *g,
                          char *err) {
    return run_new(out, f, batch, g, err);
}

/* Rounds over the whole grid (contexts ascending: the prompt is extended from one context to
 * the next, so each round prefills the largest context once). Measuring point by point would
 * let the machine's load, which changes by the second on a shared machine, bend the curve's
 * shape (measured: t(1) 16.5 ms and t(2) 32 ms one minute, 49 and 48 ms the next); in rounds
 * every point samples the whole measuring period alike and the curve keeps its shape.
 * Round 0 is a warm-up pass per point (pages the weights in, estimates each point's time);
 * then each round gives each point passes until a fifth of min_seconds is spent on it, until
 * every point has min_seconds of passes and at least 3 rounds, or the deadline passed (when it
 * passes during the warm-up round, the warm-up passes are the measurement). */
int measure_run_round(measure_run *m, char *err) {
    if (!m->more) return 0;
    const measure_grid *g = &m->g;
    int round = m->round++, rc = 0;
    for (int b = 0; rc == 0 && b < m->batch; b++) rc = fwd_truncate(m->fs[b], 0, err);
    m->more = 0;
    for (int p = 0; rc == 0 && p < m->n_pts; p++) {
        grid_point *q = &m->pts[p];
        if (round > 3 && q->total >= g->min_seconds) continue;
        for (int b = 0; rc == 0 && b < m->batch; b++)
            if (fwd_n_past(m->fs[b]) < q->context)
                rc = reach_context(m->fs[b], m->tokens, q->context, m->logits, err);
        /* passes until a fifth of min_seconds is spent on the point in this round (one in the
         * warm-up round; at most 1000) */
        double spent = 0;
        for (int r = 0;
             rc == 0 && r < 1000 && (r == 0 || (round > 0 && spent < 0.2 * g->min_seconds)); r++) {
            double t;
            rc = grid_pass(m, q, &t, err);
            spent += t;
            if (rc == 0 && round == 0) q->est = t > 1e-7 ? t : 1e-7;
            if (rc == 0 && round > 0 && point_add(q, t)) rc = err_set(err, "out of memory");
        }
        m->more |= round < 3 || q->total < g->min_seconds;
    }
    return rc;
}

static int measure_run_more(const measure_run *m) {
    return m->more;
}

int measure_run_finish(measure_run *m, measure_point_fn fn, void *user, char *err) {
    const model *md = fwd_model(m->f);
    int rc = 0;
    /* out of time after the warm-up: the warm-up passes are the measurement */
    for (int p = 0; m->round == 1 && rc == 0 && p < m->n_pts; p++)
        if (point_add(&m->pts[p], m->pts[p].est)) rc = err_set(err, "out of memory");
    if (rc == 0 && m->round == 0) rc = err_set(err, "the cost grid was not measured");
    for (int p = 0; rc == 0 && p < m->n_pts; p++) {
        grid_point *q = &m->pts[p];
        if (q->n == 0) {
            rc = err_set(err, "cost grid: rows %d, context %d not measured", q->rows, q->context);
            break;
        }
        qsort(q->times, (size_t)q->n, sizeof(double), cmp_double);
        double mean = q->total / q->n;
        double macs = m->batch * (measure_row_macs(&md->cfg) * q->rows +
                                  measure_logit_macs(&md->cfg) * q->logit_rows);
        measure_point mp = {q->rows,
                            q->context,
                            q->logit_rows,
                            mean,
                            q->times[q->n / 2],
                            q->n,
                            2.0 * macs / mean / 1e9,
                            (double)model_weight_bytes(md) / mean / 1e9,
                            m->batch};
        rc = fn(user, &mp, err);
    }
    return rc;
}

int measure_cost_grid(fwd_ctx *f, const measure_grid *g, measure_point_fn fn, void *user,
                      char *err) {
    return measure_cost_grid_batch(f, 1, g, fn, user, err);
}

int measure_cost_grid_batch(fwd_ctx *f, int batch, const measure_grid *g, measure_point_fn fn,
                            void *user, char *err) {
    measure_run *m;
    if (run_new(&m, f, batch, g, err)) return -1;
    int rc = 0;
    while (rc == 0 && measure_run_more(m) &&
           !(g->deadline > 0 && m->round > 0 && clock_now() > g->deadline))
        rc = measure_run_round(m, err);
    if (rc == 0) rc = measure_run_finish(m, fn, user, err);
    measure_run_free(m);
    return rc;
}
