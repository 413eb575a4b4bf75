/* token_tree.c: see token_tree.h. */
#include "decoders/token_tree.h"

#include "decoders/dec_impl.h"

int token_tree_accept(int n, const int *tok, const int *parent, const int *top, int end_id,
                      int *path, int *n_path, int *emit) {
    int np = 0, ne = 0, cur = 0, ended = 0;
    path[np++] = 0;
    while (!ended) {
        int next = -1;
        for (int r = cur + 1; r < n && next < 0; r++)
            if (parent[r] == cur && tok[r] == top[cur]) next = r;
        if (next < 0) break;
        path[np++] = next;
        emit[ne++] = tok[next];
        ended = tok[next] == end_id;
        cur = next;
    }
    if (!ended) emit[ne++] = top[cur];
    *n_path = np;
    return ne;
}

int token_tree_depth(int n, const int *parent, int *depth) {
    int deepest = 0;
    for (int r = 0; r < n; r++) {
        depth[r] = r == 0 ? 0 : depth[parent[r]] + 1;
        if (depth[r] > deepest) deepest = depth[r];
    }
    return deepest;
}

void token_tree_count_ranks(dec *d, int n, const int *parent, const int *path, int n_path,
                            const int *rank, int first_accept, int first_offered, int *on_path) {
    for (int r = 0; r < n; r++) on_path[r] = 0;
    for (int i = 0; i < n_path; i++) on_path[path[i]] = 1;
    for (int i = 1; i < n_path; i++)
        dec_count(d, first_accept + (rank[path[i]] < 3 ? rank[path[i]] : 3), 1);
    for (int r = 1; r < n; r++)
        if (on_path[parent[r]]) dec_count(d, first_offered + (rank[r] < 3 ? rank[r] : 3), 1);
}

/* dec_tree_walk over rows 1..n-1 below the root; drow/dl NULL: fixed guesses. */
static int walk(dec *d, int n, const int *tok, const int *parent, const float *logits, int root_pos,
                const int *drow, const float *dl, int *scratch, int *path, int *n_path, int *emit) {
    int *trow = scratch, *cand = scratch + n;
    for (int r = 0; r < n; r++) trow[r] = r;
    for (int r = 1; r < n; r++) cand[r - 1] = r;
    dec_tree t = {.tok = tok, .par = parent, .trow = trow, .drow = drow, .tl = logits, .dl = dl};
    int next = -1, k = dec_tree_walk(d, &t, 0, root_pos, cand, n - 1, path, &next);
    for (int i = 0; i < k; i++) emit[i] = tok[path[i + 1]];
    *n_path = k + 1;
    if (next >= 0) emit[k++] = next;
    return k;
}

int token_tree_verify(dec *d, int n, const int *tok, const int *parent, const float *logits,
                      int root_pos, int *scratch, int *path, int *n_path, int *emit) {
    if (!dec_sampling_on(&d->env.sampling)) { /* greedy: each row's argmax, the longest path */
        const int V = d->env.target->cfg.vocab_size;
        for (int r = 0; r < n; r++) scratch[r] = fwd_argmax(logits + (size_t)r * V, V);
        return token_tree_accept(n, tok, parent, scratch, d->end_id, path, n_path, emit);
    }
    return walk(d, n, tok, parent, logits, root_pos, NULL, NULL, scratch, path, n_path, emit);
}

int token_tree_verify_drawn(dec *d, int n, const int *tok, const int *parent, const float *logits,
                            int root_pos, const int *drow, const float *dl, int *scratch, int *path,
                            int *n_path, int *emit) {
    return walk(d, n, tok, parent, logits, root_pos, drow, dl, scratch, path, n_path, emit);
}
