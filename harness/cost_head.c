/* cost_head.c: `decbench cost --head DIR`: the cost curve of a learned drafter's head pass, the
 * draft curve a projection prices eagle's and medusa's head passes on (report --layout projected
 * --project-draft-cost). The points have the meaning of the pass trace's draft passes of each
 * decoder (decoders/eagle.c, medusa.c):
 *   EAGLE   t(rows, context, logit rows) of one head pass: fc, its decoder layer over `rows`
 *           rows after `context` rows of the head's own cache, and the TARGET's classifier on
 *           `logit rows` of them (an append computes its last row's logits, a tree level every
 *           row's). The grid is cost's: every rows value at every context with one row's
 *           logits, at the first context also with every row's (--logits).
 *   Medusa  t(K, 0, K): K heads, each its ResBlocks and its own classifier on one hidden state;
 *           no attention, so one context (0), and `rows` = `logit rows` = the heads run (the
 *           --rows values up to the head file's heads). Read as a grid of every row's logits.
 * A pass is timed alone, repeated at its point until it has min_seconds and three rounds (the
 * first a warm-up): the inputs' values do not change the time (random tokens and features). */
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/eagle_head.h"
#include "decoders/medusa_head.h"
#include "harness/cost_head.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/rng.h"

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int cost_head_kind(const char *dir, char *err) {
    char p[4200];
    snprintf(p, sizeof p, "%s/medusa_lm_head.safetensors", dir);
    if (is_file(p)) return COST_HEAD_MEDUSA;
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    if (is_file(p)) return COST_HEAD_EAGLE;
    return err_set(err,
                   "--head %s: neither model.safetensors (an EAGLE head) nor "
                   "medusa_lm_head.safetensors (Medusa heads) in it",
                   dir);
}

/* Times fn(user) until it has run for min_seconds in all and at least `rounds` times after one
 * warm-up call; the mean and the median seconds of a call. */
typedef int (*pass_fn)(void *user, char *err);
static int time_point(pass_fn fn, void *user, double min_seconds, measure_point *p, char *err) {
    enum { MAX_TIMES = 4096 };
    static double t[MAX_TIMES];
    if (fn(user, err)) return -1; /* warm-up */
    int n = 0;
    double sum = 0;
    while (n < MAX_TIMES && (n < 3 || sum < min_seconds)) {
        double t0 = clock_now();
        if (fn(user, err)) return -1;
        t[n] = clock_now() - t0;
        sum += t[n++];
    }
    for (int i = 1; i < n; i++) { /* insertion sort for the median: n is small */
        double x = t[i];
        int j = i;
        while (j > 0 && t[j - 1] > x) t[j] = t[j - 1], j--;
        t[j] = x;
    }
    p->repeats = n;
    p->seconds = sum / n;
    p->median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    return 0;
}

/* ---- EAGLE ----------------------------------------------------------------------------------- */

typedef struct {
    eagle_head *h;
    int context, rows, logit_rows;
    int *tok;
    float *feats, *hid, *logits;
} eagle_job;

static int eagle_pass(void *user, char *err) {
    eagle_job *j = user;
    eagle_head_truncate(j->h, j->context);
    return eagle_head_append(j->h, j->rows, j->tok, j->feats, j->logit_rows, j->hid, j->logits,
                             err);
}

static int measure_eagle(const char *dir, const model *target, tpool *pool, const measure_grid *g,
                         measure_point_fn fn, void *user, cost_head_info *info, char *err) {
    const int R = g->rows[g->n_rows - 1], D = target->cfg.dim, V = target->cfg.vocab_size;
    eagle_job j = {0};
    if (eagle_head_open(&j.h, dir, target, pool, R, 1, err)) return -1;
    const eagle_head_config *c = eagle_head_cfg(j.h);
    info->head_bytes = (int64_t)eagle_head_weight_bytes(j.h);
    info->heads = 1;
    int rc = -1;
    j.tok = malloc(sizeof(int) * (size_t)R);
    j.feats = malloc(sizeof(float) * (size_t)R * D);
    j.hid = malloc(sizeof(float) * (size_t)R * D);
    j.logits = malloc(sizeof(float) * (size_t)R * V);
    if (!j.tok || !j.feats || !j.hid || !j.logits) {
        err_set(err, "cost --head: out of memory for %d rows", R);
        goto done;
    }
    rng_state r;
    rng_seed(&r, 1);
    for (int i = 0; i < R; i++) j.tok[i] = (int)rng_below(&r, (uint32_t)V);
    for (size_t i = 0; i < (size_t)R * D; i++) j.feats[i] = rng_unit(&r) * 2 - 1;
    const double cls_bytes =
        (double)target->wcls.rows * (double)wtype_row_bytes(target->wcls.type, target->wcls.cols);
    /* per row: fc (2D x D), q, k, v, o, gate, up, down */
    const double macs_row =
        2.0 * D * D + (double)D * c->n_heads * c->head_size * 2 +
        (double)D * c->n_kv_heads * c->head_size * 2 + 3.0 * D * c->hidden_dim;
    for (int ci = 0; ci < g->n_contexts; ci++) {
        /* reach the context: committed rows of random tokens and features, R at a time */
        eagle_head_truncate(j.h, 0);
        eagle_head_reset(j.h);
        for (int at = 0; at < g->contexts[ci];) {
            int n = g->contexts[ci] - at < R ? g->contexts[ci] - at : R;
            if (eagle_head_append(j.h, n, j.tok, j.feats, 0, NULL, NULL, err)) goto done;
            at += n;
        }
        j.context = g->contexts[ci];
        for (int ri = 0; ri < g->n_rows; ri++) {
            const int rows = g->rows[ri];
            int logits[2], n_l = 0;
            if (g->logits != MEASURE_LOGITS_ALL) logits[n_l++] = 1;
            if ((g->logits == MEASURE_LOGITS_ALL || (g->logits == MEASURE_LOGITS_BOTH && ci == 0)) &&
                (n_l == 0 || rows > 1))
                logits[n_l++] = rows;
            for (int li = 0; li < n_l; li++) {
                measure_point p = {.rows = rows, .context = j.context, .logit_rows = logits[li],
                                   .batch = 1};
                j.rows = rows, j.logit_rows = logits[li];
                if (time_point(eagle_pass, &j, g->min_seconds, &p, err)) goto done;
                double macs = macs_row * rows + (double)logits[li] * D * V;
                p.gflops = 2 * macs / p.seconds / 1e9;
                p.weight_gbps = ((double)info->head_bytes + cls_bytes) / p.seconds / 1e9;
                if (fn(user, &p, err)) goto done;
            }
        }
    }
    rc = 0;
done:
    free(j.tok), free(j.feats), free(j.hid), free(j.logits);
    eagle_head_free(j.h);
    return rc;
}

/* ---- Medusa ---------------------------------------------------------------------------------- */

typedef struct {
    const medusa_head *h;
    int k;
    tpool *pool;
    float *hidden, *logits, *scratch;
} medusa_job;

static int medusa_pass(void *user, char *err) {
    (void)err;
    medusa_job *j = user;
    for (int k = 0; k < j->k; k++) medusa_head_logits(j->h, k, j->hidden, j->logits, j->scratch, j->pool);
    return 0;
}

static int measure_medusa(const char *dir, const model *target, tpool *pool, const measure_grid *g,
                          measure_point_fn fn, void *user, cost_head_info *info, char *err) {
    medusa_head *h = NULL;
    if (medusa_head_open(&h, dir, err)) return -1;
    if (medusa_head_check(h, target, err)) {
        medusa_head_free(h);
        return -1;
    }
    const int D = h->dim, V = h->vocab;
    int64_t per_head = 0;
    for (int l = 0; l < h->n_layers; l++)
        per_head += (int64_t)D * (int64_t)wtype_row_bytes(h->res_w[l].type, D);
    per_head += (int64_t)V * (int64_t)wtype_row_bytes(h->cls[0].type, D);
    info->head_bytes = per_head * h->n_heads;
    info->heads = h->n_heads;
    medusa_job j = {.h = h, .pool = pool};
    j.hidden = malloc(sizeof(float) * (size_t)D);
    j.logits = malloc(sizeof(float) * (size_t)V);
    j.scratch = malloc(sizeof(float) * 2 * (size_t)D);
    int rc = -1;
    if (!j.hidden || !j.logits || !j.scratch) {
        err_set(err, "cost --head: out of memory");
        goto done;
    }
    rng_state r;
    rng_seed(&r, 1);
    for (int i = 0; i < D; i++) j.hidden[i] = rng_unit(&r) * 2 - 1;
    int measured = 0;
    for (int ri = 0; ri < g->n_rows && g->rows[ri] <= h->n_heads; ri++) {
        j.k = g->rows[ri];
        measure_point p = {.rows = j.k, .context = 0, .logit_rows = j.k, .batch = 1};
        if (time_point(medusa_pass, &j, g->min_seconds, &p, err)) goto done;
        p.gflops = 2.0 * j.k * ((double)h->n_layers * D * D + (double)V * D) / p.seconds / 1e9;
        p.weight_gbps = (double)per_head * j.k / p.seconds / 1e9;
        if (fn(user, &p, err)) goto done;
        measured++;
    }
    if (!measured) {
        err_set(err, "--rows: Medusa's rows are the heads run, 1..%d in %s; none was asked",
                h->n_heads, dir);
        goto done;
    }
    rc = 0;
done:
    free(j.hidden), free(j.logits), free(j.scratch);
    medusa_head_free(h);
    return rc;
}

int cost_head_grid(const char *dir, const model *target, tpool *pool, const measure_grid *g,
                   measure_point_fn fn, void *user, cost_head_info *info, char *err) {
    memset(info, 0, sizeof *info);
    int kind = cost_head_kind(dir, err);
    if (kind < 0) return -1;
    info->kind = kind;
    return kind == COST_HEAD_EAGLE ? measure_eagle(dir, target, pool, g, fn, user, info, err)
                                   : measure_medusa(dir, target, pool, g, fn, user, info, err);
}
