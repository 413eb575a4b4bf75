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
 * The points of a context are measured in rounds (time_points); the inputs' values do not change
 * the time (random tokens and features). */
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

/* The points of one context, measured in rounds: each round runs every point's pass once, the
 * first round a warm-up (pages the weights in), until every point has min_seconds of passes
 * and at least 3 rounds. Interleaved rather than point by point, so that a change in the
 * machine's load (other jobs) hits every point alike instead of bending the curve between
 * two points (measure.c measures the models' grids so for that reason). */
typedef int (*pass_fn)(void *user, int point, char *err);
enum { MAX_ROUNDS = 4096, MAX_POINTS = 2 * MEASURE_MAX_ROWS };
static int time_points(pass_fn fn, void *user, int n, double min_seconds, measure_point *p,
                       char *err) {
    static double t[MAX_POINTS][MAX_ROUNDS];
    double sum[MAX_POINTS] = {0};
    int rounds = 0;
    for (int i = 0; i < n; i++)
        if (fn(user, i, err)) return -1; /* warm-up */
    for (int more = 1; more && rounds < MAX_ROUNDS; rounds++) {
        more = 0;
        for (int i = 0; i < n; i++) {
            double t0 = clock_now();
            if (fn(user, i, err)) return -1;
            t[i][rounds] = clock_now() - t0;
            sum[i] += t[i][rounds];
            more |= rounds < 2 || sum[i] < min_seconds;
        }
    }
    for (int i = 0; i < n; i++) {
        double *x = t[i];
        for (int a = 1; a < rounds; a++) { /* insertion sort for the median */
            double v = x[a];
            int b = a;
            while (b > 0 && x[b - 1] > v) x[b] = x[b - 1], b--;
            x[b] = v;
        }
        p[i].repeats = rounds;
        p[i].seconds = sum[i] / rounds;
        p[i].median = rounds % 2 ? x[rounds / 2] : (x[rounds / 2 - 1] + x[rounds / 2]) / 2;
    }
    return 0;
}

/* ---- EAGLE ----------------------------------------------------------------------------------- */

typedef struct {
    eagle_head *h;
    int context;
    const measure_point *pt; /* the points of the context: rows, logit rows */
    int *tok;
    float *feats, *hid, *logits;
} eagle_job;

static int eagle_pass(void *user, int point, char *err) {
    eagle_job *j = user;
    eagle_head_truncate(j->h, j->context);
    return eagle_head_append(j->h, j->pt[point].rows, j->tok, j->feats, j->pt[point].logit_rows,
                             j->hid, j->logits, err);
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
        measure_point pt[MAX_POINTS];
        int n = 0;
        for (int ri = 0; ri < g->n_rows; ri++) {
            const int rows = g->rows[ri];
            int logits[2], n_l = 0;
            if (g->logits != MEASURE_LOGITS_ALL) logits[n_l++] = 1;
            if ((g->logits == MEASURE_LOGITS_ALL || (g->logits == MEASURE_LOGITS_BOTH && ci == 0)) &&
                (n_l == 0 || rows > 1))
                logits[n_l++] = rows;
            for (int li = 0; li < n_l; li++)
                pt[n++] = (measure_point){.rows = rows, .context = j.context,
                                          .logit_rows = logits[li], .batch = 1};
        }
        j.pt = pt;
        if (time_points(eagle_pass, &j, n, g->min_seconds, pt, err)) goto done;
        for (int i = 0; i < n; i++) {
            double macs = macs_row * pt[i].rows + (double)pt[i].logit_rows * D * V;
            pt[i].gflops = 2 * macs / pt[i].seconds / 1e9;
            pt[i].weight_gbps = ((double)info->head_bytes + cls_bytes) / pt[i].seconds / 1e9;
            if (fn(user, &pt[i], err)) goto done;
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
    const measure_point *pt; /* rows: the heads run */
    tpool *pool;
    float *hidden, *logits, *scratch;
} medusa_job;

static int medusa_pass(void *user, int point, char *err) {
    (void)err;
    medusa_job *j = user;
    for (int k = 0; k < j->pt[point].rows; k++)
        medusa_head_logits(j->h, k, j->hidden, j->logits, j->scratch, j->pool);
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
    measure_point pt[MAX_POINTS];
    int n = 0;
    for (int ri = 0; ri < g->n_rows && g->rows[ri] <= h->n_heads; ri++)
        pt[n++] = (measure_point){.rows = g->rows[ri], .context = 0,
                                  .logit_rows = g->rows[ri], .batch = 1};
    if (!n) {
        err_set(err, "--rows: Medusa's rows are the heads run, 1..%d in %s; none was asked",
                h->n_heads, dir);
        goto done;
    }
    j.pt = pt;
    if (time_points(medusa_pass, &j, n, g->min_seconds, pt, err)) goto done;
    for (int i = 0; i < n; i++) {
        const int k = pt[i].rows;
        pt[i].gflops = 2.0 * k * ((double)h->n_layers * D * D + (double)V * D) / pt[i].seconds / 1e9;
        pt[i].weight_gbps = (double)per_head * k / pt[i].seconds / 1e9;
        if (fn(user, &pt[i], err)) goto done;
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
