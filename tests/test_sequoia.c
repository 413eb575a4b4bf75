/* test_sequoia.c: the Sequoia tree shape (decoders/sequoia.h).
 *  1. small cases worked by hand (a chain, a fan, a rank skipped, acceptance 0);
 *  2. the DP's tree is the best of ALL trees: an exhaustive enumeration of every parent-closed
 *     set of positions of the complete K-ary tree of depth D with at most n nodes, valued by
 *     the sum over its nodes of their paths' acceptance products (another form of Sequoia's
 *     F(T) - 1 than the recurrence the DP solves), for K <= 3, D <= 3, n <= 6 and several
 *     vectors, decreasing or not; the returned tree is well formed and worth what it claims;
 *  3. the expectation never falls as the budget grows, nor as the depth limit does;
 *  4. the budget pick: by hand on a flat and a steep cost curve, and equal to the best of
 *     sequoia_tree over every n and d;
 *  5. malformed inputs are refused with a message (p outside [0, 1] or summing over 1, n < 1,
 *     depth < 1, no ranks; the "P0/P1/..." parser's errors);
 *  6. sequoia_child_of_rank, which lays the shape on suffix trees and REST's trie: every rank of
 *     random sibling lists (ties included, lists shorter and longer than SEQUOIA_MAX_RANKS)
 *     equals the list sorted by the order and indexed, 0 past its end.
 * Runs in well under a second. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "decoders/sequoia.h"
#include "tests/testutil.h"
#include "util/err.h"

#define MAXPOS 64

/* The complete K-ary tree of depth D, breadth-first: parent and rank of each position. */
static int positions(int K, int D, int *par, int *rank) {
    int n = 0, lo = 0, hi = 0;
    for (int d = 1; d <= D; d++) {
        for (int q = d == 1 ? -1 : lo; q < (d == 1 ? 0 : hi); q++)
            for (int r = 0; r < K; r++) par[n] = q, rank[n] = r, n++;
        lo = hi, hi = n;
    }
    return n;
}

static double best_found;

/* Every parent-closed subset of positions i.. with at most `left` more nodes. */
static void enumerate(const double *p, int np, const int *par, const int *rank, double *prob,
                      int *in, int i, int left, double sum) {
    if (sum > best_found) best_found = sum;
    for (int j = i; j < np && left > 0; j++) {
        if (par[j] >= 0 && !in[par[j]]) continue;
        in[j] = 1;
        prob[j] = p[rank[j]] * (par[j] < 0 ? 1 : prob[par[j]]);
        enumerate(p, np, par, rank, prob, in, j + 1, left - 1, sum + prob[j]);
        in[j] = 0;
    }
}

static double brute(const double *p, int K, int n, int D) {
    int par[MAXPOS], rank[MAXPOS], in[MAXPOS] = {0};
    double prob[MAXPOS];
    int np = positions(K, D, par, rank);
    best_found = 0;
    enumerate(p, np, par, rank, prob, in, 0, n, 0);
    return best_found;
}

/* The tree is well formed: parents first, breadth-first, distinct ranks among siblings, within
 * the limits. */
static void check_tree(const sequoia_node *t, int n_out, int n, int K, int D, const char *what) {
    CHECK_MSG(n_out >= 0 && n_out <= n, "%s: %d nodes for a budget of %d", what, n_out, n);
    for (int i = 0; i < n_out; i++) {
        int q = t[i].parent;
        CHECK_MSG(q >= -1 && q < i, "%s: node %d's parent %d", what, i, q);
        CHECK_MSG(t[i].rank >= 0 && t[i].rank < K, "%s: node %d's rank %d", what, i, t[i].rank);
        CHECK_MSG(t[i].depth == (q < 0 ? 1 : t[q].depth + 1) && t[i].depth <= D, "%s: depth", what);
        CHECK_MSG(i == 0 || t[i].depth >= t[i - 1].depth, "%s: not breadth-first", what);
        for (int j = 0; j < i; j++)
            CHECK_MSG(!(t[j].parent == q && t[j].rank == t[i].rank), "%s: rank repeated", what);
    }
}

static double value_of(const double *p, const sequoia_node *t, int n_out) {
    double prob[SEQUOIA_MAX_NODES], sum = 0;
    for (int i = 0; i < n_out; i++) {
        prob[i] = p[t[i].rank] * (t[i].parent < 0 ? 1 : prob[t[i].parent]);
        sum += prob[i];
    }
    return sum;
}

static double solve(const double *p, int K, int n, int D, sequoia_node *t, int *n_out) {
    char err[ERR_LEN] = "";
    double e = -1;
    CHECK_MSG(sequoia_tree(p, K, n, D, t, n_out, &e, err) == 0, "%s", err);
    return e;
}

static void test_by_hand(void) {
    sequoia_node t[SEQUOIA_MAX_NODES];
    int n;
    const double half[] = {0.5}, two[] = {0.6, 0.3}, skip[] = {0.5, 0, 0.4}, zero[] = {0};
    CHECK(fabs(solve(half, 1, 3, 3, t, &n) - 0.875) < 1e-12 && n == 3); /* .5 + .25 + .125 */
    CHECK(t[0].parent == -1 && t[1].parent == 0 && t[2].parent == 1);
    CHECK(fabs(solve(half, 1, 3, 1, t, &n) - 0.5) < 1e-12 && n == 1); /* one child fits */
    CHECK(fabs(solve(two, 2, 2, 2, t, &n) - 0.96) < 1e-12 && n == 2); /* chain .6 + .36 > .9 */
    CHECK(t[1].parent == 0 && t[1].rank == 0);
    CHECK(fabs(solve(two, 2, 2, 1, t, &n) - 0.9) < 1e-12 && n == 2); /* the fan */
    CHECK(t[0].rank == 0 && t[1].rank == 1 && t[1].parent == -1);
    CHECK(fabs(solve(skip, 3, 2, 1, t, &n) - 0.9) < 1e-12 && n == 2); /* rank 1 skipped */
    CHECK(t[0].rank == 0 && t[1].rank == 2);
    CHECK(solve(zero, 1, 5, 4, t, &n) == 0 && n == 0); /* nothing is worth a row */
    /* three nodes, p = .6/.3, depth 2: the chain and a second choice at the root
     * (.6 + .36 + .3 = 1.26) beat the chain of three (1.176) and a fan below the first (1.14) */
    CHECK(fabs(solve(two, 2, 3, 3, t, &n) - 1.26) < 1e-12 && n == 3);
}

static void test_brute(void) {
    const double vecs[][3] = {{0.7, 0.15, 0.05}, {0.3, 0.3, 0.3},  {0.2, 0.5, 0.1},
                              {0.9, 0.05, 0.0},  {0.45, 0.0, 0.4}, {1.0, 0.0, 0.0}};
    sequoia_node t[SEQUOIA_MAX_NODES];
    int cases = 0;
    for (size_t v = 0; v < sizeof vecs / sizeof vecs[0]; v++)
        for (int K = 1; K <= 3; K++)
            for (int D = 1; D <= 3; D++)
                for (int n = 1; n <= 6; n++) {
                    int n_out;
                    double e = solve(vecs[v], K, n, D, t, &n_out), b = brute(vecs[v], K, n, D);
                    char what[96];
                    snprintf(what, sizeof what, "vector %zu K=%d D=%d n=%d", v, K, D, n);
                    check_tree(t, n_out, n, K, D, what);
                    CHECK_MSG(fabs(e - b) < 1e-12, "%s: DP %.15g, exhaustive %.15g", what, e, b);
                    CHECK_MSG(fabs(value_of(vecs[v], t, n_out) - e) < 1e-12,
                              "%s: the tree is worth %.15g, the DP says %.15g", what,
                              value_of(vecs[v], t, n_out), e);
                    cases++;
                }
    fprintf(stderr, "%d cases equal to the exhaustive search\n", cases);
}

static void test_monotonic(void) {
    /* a measured-looking vector (tree.c's default is of this kind) */
    const double p[] = {0.62, 0.12, 0.05, 0.03, 0.02};
    sequoia_node t[SEQUOIA_MAX_NODES];
    int n_out;
    double prev = 0;
    for (int n = 1; n <= 80; n++) {
        double e = solve(p, 5, n, 8, t, &n_out);
        CHECK_MSG(e >= prev && n_out == n, "n=%d: %.6f after %.6f, %d nodes", n, e, prev, n_out);
        CHECK(fabs(value_of(p, t, n_out) - e) < 1e-9);
        prev = e;
    }
    prev = 0;
    for (int d = 1; d <= 12; d++) {
        double e = solve(p, 5, 40, d, t, &n_out);
        CHECK_MSG(e >= prev, "depth %d: %.6f after %.6f", d, e, prev);
        prev = e;
    }
}

static void test_budget(void) {
    char err[ERR_LEN] = "";
    const double p[] = {0.8, 0.1};
    double flat[33], steep[33];
    for (int i = 0; i < 33; i++) flat[i] = 1, steep[i] = 1 + i;
    sequoia_pick b;
    /* free rows: the largest budget, and the deepest tree that helps */
    CHECK(sequoia_budget(p, 2, 32, 6, flat, 33, 0, &b, err) == 0);
    CHECK_MSG(b.n == 32, "flat: n=%d", b.n);
    /* a row costs as much as the pass: one node (1.8 / 2 beats 2.44 / 3 and 1.9 / 3) */
    CHECK(sequoia_budget(p, 2, 32, 6, steep, 33, 0, &b, err) == 0);
    CHECK_MSG(b.n == 1 && b.depth == 1 && fabs(b.tokens_per_s - 0.9) < 1e-12, "steep: n=%d d=%d",
              b.n, b.depth);
    /* a made-up curve with a drafting cost: the best of every n and d */
    double curve[41];
    for (int i = 0; i < 41; i++) curve[i] = 1 + 0.02 * i + (i > 16 ? 0.05 * (i - 16) : 0);
    CHECK(sequoia_budget(p, 2, 64, 5, curve, 41, 0.1, &b, err) == 0);
    double best = 0;
    int bn = 0, bd = 0;
    sequoia_node t[SEQUOIA_MAX_NODES];
    int n_out;
    for (int n = 1; n <= 40; n++)
        for (int d = 1; d <= 5; d++) {
            double r = (1 + solve(p, 2, n, d, t, &n_out)) / (curve[n] + 0.1 * d);
            if (r > best) best = r, bn = n, bd = d;
        }
    CHECK_MSG(b.n == bn && b.depth == bd && fabs(b.tokens_per_s - best) < 1e-12,
              "pick n=%d d=%d %.6f, expected n=%d d=%d %.6f", b.n, b.depth, b.tokens_per_s, bn, bd,
              best);
    fprintf(stderr, "budget on the made-up curve: n=%d depth=%d, %.3f expected accepted\n", b.n,
            b.depth, b.expected);
}

static void test_errors(void) {
    char err[ERR_LEN];
    sequoia_node t[8];
    int n;
    double e;
    const double bad_hi[] = {1.5}, bad_lo[] = {0.5, -0.1}, bad_sum[] = {0.7, 0.4}, nan_p[] = {NAN},
                 ok[] = {0.5};
    CHECK(sequoia_tree(bad_hi, 1, 4, 2, t, &n, &e, err) == -1 && strstr(err, "rank 0 is 1.5"));
    CHECK(sequoia_tree(bad_lo, 2, 4, 2, t, &n, &e, err) == -1 && strstr(err, "rank 1 is -0.1"));
    CHECK(sequoia_tree(nan_p, 1, 4, 2, t, &n, &e, err) == -1 && strstr(err, "not in [0, 1]"));
    CHECK(sequoia_tree(bad_sum, 2, 4, 2, t, &n, &e, err) == -1 && strstr(err, "more than 1"));
    CHECK(sequoia_tree(ok, 1, 0, 2, t, &n, &e, err) == -1 && strstr(err, "budget of 0 nodes"));
    CHECK(sequoia_tree(ok, 1, -3, 2, t, &n, &e, err) == -1 && strstr(err, "budget of -3"));
    CHECK(sequoia_tree(ok, 1, 4, 0, t, &n, &e, err) == -1 && strstr(err, "depth 0"));
    CHECK(sequoia_tree(ok, 0, 4, 2, t, &n, &e, err) == -1 && strstr(err, "0 acceptance values"));
    sequoia_pick b;
    const double c1[] = {1.0, 1.0}, c0[] = {1.0, 0.0};
    CHECK(sequoia_budget(ok, 1, 4, 2, c1, 1, 0, &b, err) == -1 && strstr(err, "1 and 2 rows"));
    CHECK(sequoia_budget(ok, 1, 4, 2, c0, 2, 0, &b, err) == -1 && strstr(err, "2 rows is 0"));
    CHECK(sequoia_budget(ok, 1, 4, 2, c1, 2, -1, &b, err) == -1 && strstr(err, "per depth"));
    double p[SEQUOIA_MAX_RANKS];
    int k;
    CHECK(sequoia_parse_accept("0.7/0.1/0.05", "accept", p, &k, err) == 0 && k == 3 &&
          p[0] == 0.7 && p[2] == 0.05);
    CHECK(sequoia_parse_accept("1", "accept", p, &k, err) == 0 && k == 1 && p[0] == 1);
    const struct {
        const char *s, *msg;
    } bad[] = {{"", "not numbers joined by '/'"},
               {"0.5/", "not numbers joined by '/'"},
               {"0.5//0.2", "not numbers joined by '/'"},
               {"0.5-0.2", "not numbers joined by '/'"},
               {"0.5/x", "not numbers joined by '/'"},
               {"inf", "not numbers joined by '/'"},
               {"1.2", "1.2 is not a probability"},
               {"0.5/-0.1", "-0.1 is not a probability"},
               {"0.6/0.5", "sums to 1.1, more than 1"},
               {"0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", "more than 16 ranks"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(sequoia_parse_accept(bad[i].s, "tree: accept", p, &k, err) == -1, "'%s' taken",
                  bad[i].s);
        CHECK_MSG(strstr(err, bad[i].msg) && strstr(err, "tree: accept="), "'%s': %s", bad[i].s,
                  err);
    }
}

/* Sibling lists for test_child_of_rank: node c (1..) has key[c] and the next sibling nxt[c]. */
typedef struct {
    int key[64], nxt[64];
} siblings;

static int sib_next(const void *ctx, int c) {
    return ((const siblings *)ctx)->nxt[c];
}

/* the larger key first, ties to the lower node */
static int sib_before(const void *ctx, int a, int b) {
    const siblings *s = ctx;
    return s->key[a] > s->key[b] || (s->key[a] == s->key[b] && a < b);
}

static void test_child_of_rank(void) {
    unsigned seed = 7;
    int bad = 0;
    for (int round = 0; round < 2000; round++) {
        siblings s;
        const int n = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 40;
        int sorted[64], first = 0;
        for (int c = n; c >= 1; c--) { /* the list n, n - 1, ..., 1: not in order */
            s.key[c] = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
            s.nxt[c] = first, first = c;
        }
        for (int c = 1; c <= n; c++) { /* insertion sort by sib_before */
            int j = c - 1;
            for (; j > 0 && sib_before(&s, c, sorted[j - 1]); j--) sorted[j] = sorted[j - 1];
            sorted[j] = c;
        }
        for (int r = -1; r <= SEQUOIA_MAX_RANKS; r++) {
            const int want = r >= 0 && r < SEQUOIA_MAX_RANKS && r < n ? sorted[r] : 0;
            bad += sequoia_child_of_rank(&s, first, sib_next, sib_before, r) != want;
        }
    }
    CHECK_MSG(bad == 0, "sequoia_child_of_rank: %d ranks differ from the sorted lists'", bad);
}

int main(void) {
    test_child_of_rank();
    test_by_hand();
    test_brute();
    test_monotonic();
    test_budget();
    test_errors();
    return test_finish("test_sequoia");
}
