/* draft_tree.c: the drafters' token trees (see draft_tree.h). */
#include "decoders/draft_tree.h"

#include <math.h>
#include <string.h>

int dtree_add(dtree *t, int token, int parent, int rank, double value) {
    dtree_node *x = &t->node[t->n_node];
    *x = (dtree_node){.token = token,
                      .parent = parent,
                      .depth = parent < 0 ? 1 : t->node[parent].depth + 1,
                      .rank = rank,
                      .drow = -1,
                      .lrow = -1,
                      .trow = -1,
                      .value = value};
    return t->n_node++;
}

void dtree_top_tokens(const float *l, int V, int n, int *tok, double *logp) {
    int m = 0;
    for (int i = 0; i < V; i++) {
        if (m == n && !(l[i] > l[tok[m - 1]])) continue;
        int j = m < n ? m++ : m - 1;
        while (j > 0 && l[i] > l[tok[j - 1]]) tok[j] = tok[j - 1], j--;
        tok[j] = i;
    }
    if (!logp) return;
    double mx = l[tok[0]], sum = 0;
    for (int i = 0; i < V; i++) sum += exp((double)l[i] - mx);
    for (int j = 0; j < m; j++) logp[j] = (double)l[tok[j]] - mx - log(sum);
}

/* Whether node a ranks before node b: the higher value, then the one created first. */
static int ranks_before(const dtree *t, int a, int b) {
    double va = t->node[a].value, vb = t->node[b].value;
    return va > vb || (va == vb && a < b);
}

/* Sorts idx[0..n) by ranks_before. Insertion sort: n is at most a few hundred, and glibc's
 * qsort may allocate. */
static void sort_by_value(const dtree *t, int *idx, int n) {
    for (int i = 1; i < n; i++) {
        int x = idx[i], j = i;
        while (j > 0 && ranks_before(t, x, idx[j - 1])) idx[j] = idx[j - 1], j--;
        idx[j] = x;
    }
}

int dtree_grow_dynamic(dtree *t, const dtree_drafter *dr, int levels, int k, int keep, int end_id,
                       char *err) {
    t->n_node = 0;
    int lo = 0, hi = 0; /* the newest level: nodes lo..hi-1 */
    for (int lev = 1; lev <= levels; lev++) {
        int n_front = 0;
        if (lev > 1) {
            for (int i = lo; i < hi; i++)
                if (t->node[i].token != end_id) t->order[n_front++] = i;
            sort_by_value(t, t->order, n_front);
            n_front = n_front < k ? n_front : k;
            if (n_front == 0) break;
            memcpy(t->eval, t->order, sizeof(int) * (size_t)n_front);
            if (dr->expand(dr->ctx, n_front, err)) return -1;
        }
        int new_lo = t->n_node;
        for (int f = 0; f < (lev == 1 ? 1 : n_front); f++) {
            int parent = lev == 1 ? -1 : t->eval[f];
            double base = parent < 0 ? 0 : t->node[parent].value;
            dtree_top_tokens(dr->logits(dr->ctx, parent), dr->V, k, t->ctok, t->clogp);
            for (int j = 0; j < k; j++) dtree_add(t, t->ctok[j], parent, j, base + t->clogp[j]);
        }
        lo = new_lo, hi = t->n_node;
    }
    for (int i = 0; i < t->n_node; i++) t->order[i] = i;
    sort_by_value(t, t->order, t->n_node);
    for (int i = 0; i < (keep < t->n_node ? keep : t->n_node); i++) t->node[t->order[i]].trow = 0;
    return 0;
}
