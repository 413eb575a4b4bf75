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
#include <stdio.h>
#include <string.h>

#include "decoders/draft_head.h"
#include "harness/cost_head.h"
#include "util/clock.h"
#include "util/err.h"

/* The points of one context, measured in rounds: each round runs the pass of every point that
 * still needs passes once, the first round a warm-up (pages the weights in), until every point
 * has min_seconds of passes and at least 3 rounds. Interleaved rather than point by point, so
 * that a change in the machine's load (other jobs) hits every point alike instead of bending
 * the curve between two points (measure.c measures the models' grids so for that reason). A
 * point that has its seconds leaves the rounds: were every point run until the fastest had its
 * seconds, the slowest would take that many times more (rows 128 against rows 1; tune sizes its
 * curves' time from min_seconds). */
enum { MAX_ROUNDS = 4096, MAX_POINTS = 2 * MEASURE_MAX_ROWS };
static int time_points(draft_head *h, int n, double min_seconds, measure_point *p, char *err) {
    static double t[MAX_POINTS][MAX_ROUNDS];
    double sum[MAX_POINTS] = {0};
    int done[MAX_POINTS] = {0};
    for (int i = 0; i < n; i++)
        if (draft_head_pass(h, p[i].rows, p[i].logit_rows, err)) return -1; /* warm-up */
    for (int more = 1, round = 0; more && round < MAX_ROUNDS; round++) {
        more = 0;
        for (int i = 0; i < n; i++) {
            if (round >= 3 && sum[i] >= min_seconds) continue;
            double t0 = clock_now();
            if (draft_head_pass(h, p[i].rows, p[i].logit_rows, err)) return -1;
            t[i][done[i]++] = clock_now() - t0;
            sum[i] += t[i][done[i] - 1];
            more |= round < 2 || sum[i] < min_seconds;
        }
    }
    for (int i = 0; i < n; i++) {
        double *x = t[i];
        int rounds = done[i];
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

int cost_head_grid(const char *dir, const model *target, tpool *pool, const measure_grid *g,
                   measure_point_fn fn, void *user, cost_head_info *info, char *err) {
    memset(info, 0, sizeof *info);
    draft_head *h = NULL;
    if (draft_head_open(&h, dir, target, pool, g->rows[g->n_rows - 1], err)) return -1;
    const draft_head_info *hi = draft_head_info_of(h);
    info->kind = hi->kind, info->heads = hi->heads, info->head_bytes = hi->bytes;
    const int medusa = hi->kind == DRAFT_HEAD_MEDUSA;
    int rc = -1;
    for (int ci = 0; ci < (medusa ? 1 : g->n_contexts); ci++) {
        const int context = medusa ? 0 : g->contexts[ci];
        measure_point pt[MAX_POINTS];
        int n = 0;
        for (int ri = 0; ri < g->n_rows; ri++) {
            const int rows = g->rows[ri];
            if (medusa) { /* rows = logit rows = the heads run, up to the file's */
                if (rows <= hi->heads)
                    pt[n++] = (measure_point){.rows = rows, .logit_rows = rows, .batch = 1};
                continue;
            }
            int logits[2], n_l = 0;
            if (g->logits != MEASURE_LOGITS_ALL) logits[n_l++] = 1;
            if ((g->logits == MEASURE_LOGITS_ALL ||
                 (g->logits == MEASURE_LOGITS_BOTH && ci == 0)) &&
                (n_l == 0 || rows > 1))
                logits[n_l++] = rows;
            for (int li = 0; li < n_l; li++)
                pt[n++] = (measure_point){
                    .rows = rows, .context = context, .logit_rows = logits[li], .batch = 1};
        }
        if (!n) {
            err_set(err, "--rows: Medusa's rows are the heads run, 1..%d in %s; none was asked",
                    hi->heads, dir);
            goto done;
        }
        if (draft_head_reach(h, context, err) || time_points(h, n, g->min_seconds, pt, err))
            goto done;
        for (int i = 0; i < n; i++) {
            double macs = medusa ? hi->macs_row * pt[i].rows
                                 : hi->macs_row * pt[i].rows + hi->macs_logit * pt[i].logit_rows;
            double bytes = medusa ? hi->bytes_read * pt[i].rows : hi->bytes_read;
            pt[i].gflops = 2 * macs / pt[i].seconds / 1e9;
            pt[i].weight_gbps = bytes / pt[i].seconds / 1e9;
            if (fn(user, &pt[i], err)) goto done;
        }
    }
    rc = 0;
done:
    draft_head_free(h);
    return rc;
}
