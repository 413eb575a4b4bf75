/* sequoia.c: the Sequoia tree shape by dynamic programming (sequoia.h says the model and the
 * recurrence). */
#include "decoders/sequoia.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

int sequoia_parse_accept(const char *s, const char *what, double *p, int *k, char *err) {
    *k = 0;
    double sum = 0;
    for (const char *c = s;;) {
        char *end;
        double v = strtod(c, &end);
        if (end == c || (*end && *end != '/') || !isfinite(v))
            return err_set(err, "%s=%s: not numbers joined by '/' (e.g. 0.7/0.1/0.05)", what, s);
        if (v < 0 || v > 1)
            return err_set(err, "%s=%s: %g is not a probability in [0, 1]", what, s, v);
        if (*k == SEQUOIA_MAX_RANKS)
            return err_set(err, "%s=%s: more than %d ranks", what, s, SEQUOIA_MAX_RANKS);
        p[(*k)++] = v, sum += v;
        if (!*end) break;
        c = end + 1;
    }
    /* one token follows a node: its ranks are exclusive events (rounding allowed) */
    if (sum > 1 + 1e-9)
        return err_set(err, "%s=%s: the ranks' acceptance sums to %g, more than 1", what, s, sum);
    return 0;
}

/* The DP tables for nodes m = 0..M (the root included) and depth limits 0..D: V[d][m], and
 * the subtree size given to rank r on m nodes at depth limit d (0: rank r absent). */
typedef struct {
    int K, M, D;
    double *V;   /* (D + 1) x (M + 1) */
    double *G;   /* one depth's (K + 1) x (M + 1), reused */
    int *choice; /* (D + 1) x K x (M + 1) */
} dp;

static double *vat(const dp *t, int d, int m) {
    return t->V + (size_t)d * (size_t)(t->M + 1) + (size_t)m;
}
static int *cat(const dp *t, int d, int r, int m) {
    return t->choice + ((size_t)d * (size_t)t->K + (size_t)r) * (size_t)(t->M + 1) + (size_t)m;
}

static int check_input(const double *p, int k, int n, int depth, char *err) {
    if (k < 1 || k > SEQUOIA_MAX_RANKS)
        return err_set(err, "sequoia: %d acceptance values, expected 1..%d", k, SEQUOIA_MAX_RANKS);
    double sum = 0;
    for (int r = 0; r < k; r++) {
        if (!(p[r] >= 0 && p[r] <= 1))
            return err_set(err, "sequoia: acceptance of rank %d is %g, not in [0, 1]", r, p[r]);
        sum += p[r];
    }
    if (sum > 1 + 1e-9)
        return err_set(err, "sequoia: the ranks' acceptance sums to %g, more than 1", sum);
    if (n < 1 || n > SEQUOIA_MAX_NODES)
        return err_set(err, "sequoia: budget of %d nodes, expected 1..%d", n, SEQUOIA_MAX_NODES);
    if (depth < 1 || depth > SEQUOIA_MAX_DEPTH)
        return err_set(err, "sequoia: depth %d, expected 1..%d", depth, SEQUOIA_MAX_DEPTH);
    return 0;
}

/* Fills the tables for n draft nodes (M = n + 1) and depth limits up to D. */
static int solve(const double *p, int k, int n, int D, dp *t, char *err) {
    t->K = k, t->M = n + 1, t->D = D;
    size_t row = (size_t)t->M + 1;
    t->V = malloc(sizeof(double) * (size_t)(D + 1) * row);
    t->G = malloc(sizeof(double) * (size_t)(k + 1) * row);
    t->choice = calloc((size_t)(D + 1) * (size_t)k * row, sizeof(int));
    if (!t->V || !t->G || !t->choice) return err_set(err, "sequoia: out of memory");
    for (int m = 0; m <= t->M; m++) *vat(t, 0, m) = m ? 1 : 0; /* the root alone */
    for (int d = 1; d <= D; d++) {
        double *G = t->G;
        for (int m = 0; m <= t->M; m++) G[(size_t)k * row + (size_t)m] = 0;
        for (int r = k - 1; r >= 0; r--) {
            const double *next = G + (size_t)(r + 1) * row;
            double *cur = G + (size_t)r * row;
            for (int m = 0; m <= t->M; m++) {
                double best = next[m];
                int pick = 0;
                for (int s = 1; s <= m; s++) { /* strictly better only: ties keep fewer nodes */
                    double v = p[r] * *vat(t, d - 1, s) + next[m - s];
                    if (v > best) best = v, pick = s;
                }
                cur[m] = best;
                *cat(t, d, r, m) = pick;
            }
        }
        *vat(t, d, 0) = 0;
        for (int m = 1; m <= t->M; m++) *vat(t, d, m) = 1 + G[m - 1];
    }
    return 0;
}

static void dp_free(dp *t) {
    free(t->V), free(t->G), free(t->choice);
}

/* The tree of V(m, d), breadth-first: each node's children take the sizes the choices give
 * its remaining budget, rank by rank. bud/lim: scratch of room n. */
static int recover(const dp *t, int m, int d, sequoia_node *out, int *bud, int *lim) {
    int n = 0;
    for (int i = -1; i < n; i++) {
        int rem = (i < 0 ? m : bud[i]) - 1, l = i < 0 ? d : lim[i];
        if (l == 0) continue;
        for (int r = 0; r < t->K; r++) {
            int s = *cat(t, l, r, rem);
            if (!s) continue;
            out[n] = (sequoia_node){.parent = i, .rank = r, .depth = i < 0 ? 1 : out[i].depth + 1};
            bud[n] = s, lim[n] = l - 1, n++;
            rem -= s;
        }
    }
    return n;
}

int sequoia_tree(const double *p, int k, int n, int depth, sequoia_node *out, int *n_out,
                 double *expected, char *err) {
    if (check_input(p, k, n, depth, err)) return -1;
    dp t = {0};
    int *bud = malloc(sizeof(int) * (size_t)n), *lim = malloc(sizeof(int) * (size_t)n);
    int rc = -1;
    if (!bud || !lim) {
        err_set(err, "sequoia: out of memory");
        goto done;
    }
    if (solve(p, k, n, depth, &t, err)) goto done;
    *n_out = recover(&t, n + 1, depth, out, bud, lim);
    *expected = *vat(&t, depth, n + 1) - 1;
    rc = 0;
done:
    dp_free(&t), free(bud), free(lim);
    return rc;
}

int sequoia_tree_text(const char *accept, const char *what, int max_ranks, int n, int depth,
                      sequoia_node **out, int *n_out, char *err) {
    double p[SEQUOIA_MAX_RANKS], expected;
    int k;
    *out = NULL;
    if (sequoia_parse_accept(accept, what, p, &k, err)) return -1;
    if (max_ranks > 0 && k > max_ranks) k = max_ranks;
    sequoia_node *t = malloc(sizeof *t * (size_t)(n > 0 ? n : 1));
    if (!t) return err_set(err, "%s: out of memory", what);
    if (sequoia_tree(p, k, n, depth, t, n_out, &expected, err)) {
        free(t);
        return -1;
    }
    *out = t;
    return 0;
}

int sequoia_budget(const double *p, int k, int n_max, int depth, const double *cost, int n_cost,
                   double draft_cost, sequoia_pick *best, char *err) {
    if (n_cost < 2) return err_set(err, "sequoia: the cost curve needs passes of 1 and 2 rows");
    if (n_max > n_cost - 1) n_max = n_cost - 1;
    if (check_input(p, k, n_max, depth, err)) return -1;
    for (int i = 0; i <= n_max; i++)
        if (!(cost[i] > 0) || !isfinite(cost[i]))
            return err_set(err, "sequoia: the cost of a pass of %d rows is %g s, not positive",
                           i + 1, cost[i]);
    if (!(draft_cost >= 0) || !isfinite(draft_cost))
        return err_set(err, "sequoia: drafting cost per depth %g s, not >= 0", draft_cost);
    dp t = {0};
    if (solve(p, k, n_max, depth, &t, err)) {
        dp_free(&t);
        return -1;
    }
    memset(best, 0, sizeof *best);
    for (int n = 1; n <= n_max; n++)
        for (int d = 1; d <= depth; d++) {
            double f = *vat(&t, d, n + 1), rate = f / (cost[n] + d * draft_cost);
            if (rate > best->tokens_per_s)
                *best = (sequoia_pick){.n = n, .depth = d, .expected = f - 1, .tokens_per_s = rate};
        }
    dp_free(&t);
    return 0;
}

int sequoia_child_of_rank(const void *ctx, int first, int (*next)(const void *ctx, int c),
                          int (*before)(const void *ctx, int a, int b), int rank) {
    int top[SEQUOIA_MAX_RANKS], n = 0;
    if (rank < 0 || rank >= SEQUOIA_MAX_RANKS) return 0;
    for (int c = first; c; c = next(ctx, c)) {
        int at = n; /* c's place among the kept: after every one that ranks before it */
        while (at > 0 && !before(ctx, top[at - 1], c)) at--;
        if (at > rank) continue;
        if (n <= rank) n++;
        for (int j = n - 1; j > at; j--) top[j] = top[j - 1];
        top[at] = c;
    }
    return n > rank ? top[rank] : 0;
}
