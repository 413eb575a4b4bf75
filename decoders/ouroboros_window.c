/* ouroboros_window.c: the draft's lookahead window of ouroboros_window.h. */
#include "decoders/ouroboros_window.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"

#define CELL(w, a, l, j) ((a)[(size_t)(l) * ((w)->W + (w)->levels) + (j)])

int ouro_window_init(ouro_window *w, int W, int levels, char *err) {
    memset(w, 0, sizeof *w);
    if (W < 1 || levels < 1) return err_set(err, "window: W %d, levels %d", W, levels);
    w->W = W, w->levels = levels;
    size_t cells = (size_t)levels * (W + levels);
    w->lv = calloc(cells, sizeof(int));
    w->row = calloc(cells, sizeof(int));
    if (!w->lv || !w->row) return err_set(err, "window: out of memory");
    return 0;
}

void ouro_window_free(ouro_window *w) {
    free(w->lv), free(w->row);
    w->lv = w->row = NULL;
}

void ouro_window_reset(ouro_window *w, const int *tokens, int n, rng_state *r) {
    w->filled = 1;
    w->len0 = w->W + w->levels - 2;
    for (int j = 1; j <= w->len0; j++) CELL(w, w->lv, 0, j) = tokens[rng_below(r, (uint32_t)n)];
}

int ouro_window_max_rows(const ouro_window *w) {
    return w->levels * (w->W + w->levels);
}
int ouro_window_depth(const ouro_window *w) {
    return w->W + w->levels - 2;
}

int ouro_window_build(ouro_window *w, int root, int *tokens, int *parent, int n) {
    CELL(w, w->row, 0, 0) = root;
    for (int j = 1; j <= w->len0; j++) { /* level 0: a chain after the current token */
        tokens[n] = CELL(w, w->lv, 0, j);
        parent[n] = CELL(w, w->row, 0, j - 1);
        CELL(w, w->row, 0, j) = n++;
    }
    for (int l = 1; l < w->filled; l++) /* level l column j: below level l-1 column j */
        for (int j = 0; j <= w->len0; j++) {
            tokens[n] = CELL(w, w->lv, l, j);
            parent[n] = CELL(w, w->row, l - 1, j);
            CELL(w, w->row, l, j) = n++;
        }
    return n;
}

void ouro_window_update(ouro_window *w, int cur, const int *top, ngram_pool *pool) {
    const int L = w->levels, f = w->filled;
#define OUT(l, j) top[CELL(w, w->row, l, j)]
    if (f < L) {
        /* fill: every level slides one column; the outputs of the last level form a new one */
        for (int j = 0; j < w->len0; j++) CELL(w, w->lv, f, j) = OUT(f - 1, j + 1);
        for (int j = 1; j < w->len0; j++) CELL(w, w->lv, 0, j) = CELL(w, w->lv, 0, j + 1);
        for (int l = 1; l < f; l++)
            for (int j = 0; j < w->len0; j++) CELL(w, w->lv, l, j) = CELL(w, w->lv, l, j + 1);
        w->len0--, w->filled++;
        return;
    }
    /* full: column j, read downwards and closed by its output, follows its level-0 token */
    int phrase[64];
    for (int j = 0; j < w->W; j++) {
        for (int l = 1; l < L; l++) phrase[l - 1] = CELL(w, w->lv, l, j);
        phrase[L - 1] = OUT(L - 1, j);
        ngram_pool_add(pool, j == 0 ? cur : CELL(w, w->lv, 0, j), phrase);
        w->harvested++;
    }
    /* levels move up one; the last level becomes the outputs */
    for (int l = 0; l + 1 < L; l++)
        memcpy(&CELL(w, w->lv, l, 0), &CELL(w, w->lv, l + 1, 0), sizeof(int) * (size_t)w->W);
    for (int j = 0; j < w->W; j++) CELL(w, w->lv, L - 1, j) = OUT(L - 1, j);
#undef OUT
}
