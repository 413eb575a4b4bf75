/* test_draft_tree.c: the drafters' token trees (decoders/draft_tree.h), with a made-up drafter
 * whose logits are a hash of a node's path, so every check can be recomputed here:
 *  1. dtree_top_tokens: the n largest logits, ties to the lower id, against a full sort, and
 *     their log-softmax;
 *  2. dtree_grow_dynamic, over depths, widths, budgets and end tokens: the tree is well formed
 *     (parents first, depths, each value its parent's plus its log-probability), the nodes
 *     evaluated on each level are its k best-valued ones that are not end tokens (ties to the
 *     earlier), every evaluated node has its k most probable children in rank order, and the
 *     marked nodes are the `keep` best-valued of all, which includes every marked node's
 *     parent.
 * The tree and EAGLE decoders' outputs on real models are test_tree's and test_eagle's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/draft_tree.h"
#include "tests/testutil.h"
#include "util/err.h"

#define V 12
#define MAX_NODES 4096

/* Logits after a path: small integers (ties are common) from a hash of the path's tokens. */
static void path_logits(const dtree *t, int node, float *l) {
    unsigned h = 2166136261u;
    for (int x = node; x >= 0; x = t->node[x].parent)
        h = (h ^ (unsigned)t->node[x].token) * 16777619u;
    for (int v = 0; v < V; v++) {
        h = h * 1103515245u + 12345u;
        l[v] = (float)((h >> 16) % 6);
    }
}

typedef struct {
    dtree *t;
    float rows[MAX_NODES][V]; /* the latest pass's logits, row lrow */
    float root[V];
    int passes;
} fake;

static int fake_expand(void *ctx, int n, char *err) {
    (void)err;
    fake *f = ctx;
    dtree *t = f->t;
    f->passes++;
    for (int i = 0; i < n; i++) {
        dtree_node *x = &t->node[t->eval[i]];
        x->drow = 1000 + f->passes * 100 + i, x->lrow = i;
        path_logits(t, t->eval[i], f->rows[i]);
    }
    return 0;
}

static const float *fake_logits(const void *ctx, int parent) {
    const fake *f = ctx;
    return parent < 0 ? f->root : f->rows[f->t->node[parent].lrow];
}

static int before(const dtree *t, int a, int b) {
    return t->node[a].value > t->node[b].value ||
           (t->node[a].value == t->node[b].value && a < b);
}

static void test_top_tokens(void) {
    unsigned h = 7;
    int bad = 0;
    for (int round = 0; round < 500; round++) {
        float l[V];
        for (int v = 0; v < V; v++) l[v] = (float)(((h = h * 1103515245u + 12345u) >> 16) % 5);
        int n = 1 + round % V, tok[V], order[V];
        double logp[V];
        dtree_top_tokens(l, V, n, tok, logp);
        for (int v = 0; v < V; v++) { /* the full order: larger first, ties to the lower id */
            int j = v;
            for (; j > 0 && l[v] > l[order[j - 1]]; j--) order[j] = order[j - 1];
            order[j] = v;
        }
        double sum = 0;
        for (int v = 0; v < V; v++) sum += exp((double)l[v] - l[order[0]]);
        for (int j = 0; j < n; j++) {
            bad += tok[j] != order[j];
            bad += fabs(logp[j] - ((double)l[order[j]] - l[order[0]] - log(sum))) > 1e-12;
        }
    }
    CHECK_MSG(bad == 0, "dtree_top_tokens: %d tokens or log-probabilities differ from a sort", bad);
}

static void test_grow_dynamic(void) {
    static fake f;
    dtree t = {malloc(sizeof(dtree_node) * MAX_NODES), 0, malloc(sizeof(int) * MAX_NODES),
               malloc(sizeof(int) * MAX_NODES), malloc(sizeof(int) * V),
               malloc(sizeof(double) * V)};
    CHECK(t.node && t.order && t.eval && t.ctok && t.clogp);
    int cases = 0, bad = 0;
    for (int levels = 1; levels <= 5; levels++)
        for (int k = 1; k <= 4; k++)
            for (int keep = 1; keep <= 40; keep += 13)
                for (int end_id = -1; end_id < 3; end_id += 3) {
                    memset(&f, 0, sizeof f);
                    f.t = &t;
                    t.n_node = 0;
                    path_logits(&t, -1, f.root);
                    const dtree_drafter dr = {fake_expand, fake_logits, &f, V};
                    char err[ERR_LEN];
                    CHECK(dtree_grow_dynamic(&t, &dr, levels, k, keep, end_id, err) == 0);
                    cases++;
                    /* well formed, children of evaluated nodes only, values summed */
                    int marked = 0, lev_end[8] = {0}, depth_max = 0;
                    for (int i = 0; i < t.n_node; i++) {
                        const dtree_node *x = &t.node[i];
                        const dtree_node *p = x->parent < 0 ? NULL : &t.node[x->parent];
                        bad += x->parent >= i || x->depth != (p ? p->depth + 1 : 1);
                        bad += p && (p->drow < 0 || p->token == end_id);
                        marked += x->trow == 0;
                        bad += x->trow != 0 && x->trow != -1;
                        if (x->depth > depth_max) depth_max = x->depth;
                        lev_end[x->depth] = i + 1;
                    }
                    bad += depth_max > levels;
                    /* each evaluated node has its k most probable children, ranks in order */
                    for (int i = -1; i < t.n_node; i++) {
                        if (i >= 0 && t.node[i].drow < 0) continue;
                        float l[V];
                        int tok[V], got = 0;
                        double logp[V];
                        path_logits(&t, i, l);
                        dtree_top_tokens(l, V, k, tok, logp);
                        for (int c = 0; c < t.n_node; c++)
                            if (t.node[c].parent == i) {
                                const double base = i < 0 ? 0 : t.node[i].value;
                                bad += t.node[c].rank != got || t.node[c].token != tok[got] ||
                                       t.node[c].value != base + logp[got];
                                got++;
                            }
                        bad += got != k;
                    }
                    /* the evaluated nodes of a level are its k best non-end nodes */
                    for (int d = 1; d < depth_max; d++) {
                        int lo = d > 1 ? lev_end[d - 1] : 0, n_front = 0, front[MAX_NODES];
                        for (int i = lo; i < lev_end[d]; i++)
                            if (t.node[i].token != end_id) {
                                int j = n_front++;
                                for (; j > 0 && before(&t, i, front[j - 1]); j--)
                                    front[j] = front[j - 1];
                                front[j] = i;
                            }
                        for (int j = 0; j < n_front; j++)
                            bad += (t.node[front[j]].drow >= 0) != (j < k);
                    }
                    /* marked: the keep best of all */
                    bad += marked != (keep < t.n_node ? keep : t.n_node);
                    for (int i = 0; i < t.n_node; i++)
                        for (int j = 0; j < t.n_node; j++)
                            bad += t.node[i].trow == 0 && t.node[j].trow != 0 && before(&t, j, i);
                    for (int i = 0; i < t.n_node; i++)
                        bad += t.node[i].trow == 0 && t.node[i].parent >= 0 &&
                               t.node[t.node[i].parent].trow != 0;
                }
    CHECK_MSG(bad == 0, "dtree_grow_dynamic: %d violations over %d cases", bad, cases);
    free(t.node), free(t.order), free(t.eval), free(t.ctok), free(t.clogp);
}

int main(void) {
    test_top_tokens();
    test_grow_dynamic();
    return test_finish("test_draft_tree");
}
