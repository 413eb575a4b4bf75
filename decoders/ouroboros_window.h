/* ouroboros_window.h: the lookahead window the Ouroboros DRAFT model runs to generate phrases
 * (Ouroboros §3.1, which borrows lookahead decoding: Fu et al., arXiv 2402.02057, §3).
 *
 * The window is a 2-D array of Jacobi-iteration guesses below the draft's current token c:
 * `levels` rows (beta: one per phrase token) of columns; level 0 column 0 is c itself. Level 0
 * columns 1.. are a causal chain after c (guesses for the next tokens); level l >= 1 column j
 * hangs below level l-1 column j. With the tree forward pass that is exactly LADE's mask: level
 * l column j sees c, level-0 columns <= j and column j of the levels above, at depth l + j.
 * The argmax of the last level's column j, appended to the column (levels 1..beta-1), is a
 * phrase of beta tokens that follows the level-0 token of column j: the pool is fed with
 * W such phrases per pass.
 *
 * Fill phase (as LADE): level 0 starts with W + beta - 2 guesses copied at random from the
 * prompt; each of the first beta - 1 passes adds one level from the outputs of the last one,
 * every level sliding one column (the window advances one token per pass). Full phase: levels
 * move up by one (level 0 drops its column 0), the last level becomes the new outputs. As in
 * LADE and Ouroboros, the window assumes the draft advanced by ONE token per pass, whatever
 * it accepted; the guesses stay guesses and never affect exactness. */
#ifndef DECODERS_OUROBOROS_WINDOW_H
#define DECODERS_OUROBOROS_WINDOW_H

#include "decoders/ngram_pool.h"
#include "util/rng.h"

typedef struct {
    int W, levels;
    int filled;     /* levels filled so far, 1..levels */
    int len0;       /* level-0 guesses (column 0, the current token, excluded) */
    int *lv;        /* [levels][W + levels] tokens; level 0 column 0 unused */
    int *row;       /* [levels][W + levels] batch row of each cell in the last build */
    long harvested; /* phrases put into the pool since creation */
} ouro_window;

int ouro_window_init(ouro_window *w, int W, int levels, char *err);
void ouro_window_free(ouro_window *w);

/* Restarts the fill phase: level 0 drawn from tokens[0..n) with r. */
void ouro_window_reset(ouro_window *w, const int *tokens, int n, rng_state *r);

/* Rows the window adds to a batch at most, and the depth below the current token it needs. */
int ouro_window_max_rows(const ouro_window *w);
int ouro_window_depth(const ouro_window *w);

/* Appends the window's rows below batch row `root` (the current token) to tokens/parent from
 * row n on; returns the new row count. */
int ouro_window_build(ouro_window *w, int root, int *tokens, int *parent, int n);

/* After the pass: top[r] is the argmax of batch row r. Feeds the pool with the window's phrases
 * (full phase only) keyed on `cur` for column 0, and advances the window by one token. */
void ouro_window_update(ouro_window *w, int cur, const int *top, ngram_pool *pool);

#endif
