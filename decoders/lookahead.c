/* lookahead.c: lookahead decoding (Fu, Bailis, Stoica, Zhang, ICML 2024, arXiv 2402.02057,
 * Section 3: the lookahead branch, the verification branch and both in one pass)
 * as hao-ai-lab/LookaheadDecoding (LADE) and llama.cpp's examples/lookahead run it.
 *
 * State: a 2D window of N-1 levels (Jacobi iterations, oldest = level 0) by W columns over the
 * future positions, and an n-gram pool (ngram_pool.h) keyed by token, at most G (N-1)-grams
 * per key, least recently used out. Level l, column i is the guess for position
 * base + l + i, where base is the position of the current token t, which is column 0 of
 * level 0 (so level 0 holds W-1 guesses, the others W).
 *
 * One step = ONE target pass over a tree (model/forward.h: each row sees the committed prefix,
 * its ancestors and itself; its position is base + its depth):
 *   row 0         t, the root;
 *   level 0       columns 1..W-1, a causal chain: the parent of (0,i) is (0,i-1);
 *   level l >= 1  the parent of (l,i) is (l-1,i): it sees level-0 columns <= i and column i
 *                 of the levels below, exactly the paper's lookahead-branch mask;
 *   candidates    the pool's n-grams for key t, each a chain hanging from row 0: causal within
 *                 itself, seeing only t (the verification branch). Candidates that share a
 *                 prefix share its rows (a trie; share=0 feeds them apart as LADE and llama.cpp
 *                 do: same tokens and steps, 79.9 instead of 75.6 rows per step below).
 * Logits are read from row 0, the top level, the candidates, and level 0 when it is verified.
 * Verification (greedy): a candidate row matches if its token is the argmax of its parent and
 * the parent matched; the deepest match is accepted with its bonus token (the argmax after
 * it). Level 0 is itself a causal chain from t, a Jacobi window: it is verified the same way
 * whenever its logits are read anyway (N=2, or the first fill step) or with jacobi=1 (W-1
 * more logits rows), and the longer walk wins. So lookahead:W=m+1,N=2,G=0,refill=align is
 * exactly jacobi:window=m, the paper's remark that Jacobi decoding is the N=2 case (tested).
 * Every accepted token is the argmax after the greedy prefix before it, so the output is
 * greedy's; the walk stops at the end token.
 * Pool update: after a step with all levels filled, column i yields the n-gram
 * key (0,i) -> (1,i), ..., (N-2,i), out(N-2,i) (consecutive positions; key of column 0 is t).
 * Window update for a one-token advance: level l <- level l+1, top level <- the outputs of the
 * top level (each the next Jacobi iterate of its position). Before the window has N-1 levels
 * (the N-2 fill steps after the prompt) the top level's outputs become a new level instead and
 * every level drops its first column; level 0 starts as W+N-3 guesses.
 *
 * Where the references differ. Target steps (prefill included; fewer is better) for the first
 * 20 TinyStories prompts x 256 new tokens, W=15 N=5 G=15, on stories260K (4334 tokens: most
 * stories end before 256) / llama2xs (4709 tokens):
 *   refill: the window after a (k+1)-token advance, k >= 1
 *     align     shift once, then drop k columns and refill k at the end with fresh guesses,
 *               so that every guess stays at the position it was computed for (LADE's
 *               non-default branch, ALWAYS_FWD_ONE=0)                           2070 / 1913
 *     lade      shift once as if one token had been accepted (LADE's default): the window
 *               then lags k positions behind                                    2133 / 1989
 *     llamacpp  shift once per accepted token, refilling the top level with a copy of level
 *               0 after the first (llama.cpp)                                   2399 / 2429
 *   full_bonus: after a whole (N-1)-gram matched, keep the bonus token (1, llama.cpp) or drop
 *               it (0, LADE's loop stops one short: N-1 tokens instead of N; Ouroboros copied
 *               the loop). With align: 1 -> 2070 / 1913, 0 -> 2169 / 2042.
 * Defaults: refill=align, full_bonus=1. With seed_pool=1 lade edges out align (1954 vs 2003
 * / 1833 vs 1842; a guess: with the prompt's n-grams at hand the pool matters more than the
 * window, and align's fresh columns need N-2 steps to mature); without it align wins on both.
 *
 * Other deviations, with the reason:
 *  - init: level 0 copies recent context tokens with period W-1 (init=prompt, the rule of
 *    jacobi.c, so that N=2 reduces to Jacobi exactly) or uniform random tokens (init=random,
 *    seeded: 2181 steps above); LADE picks random prompt tokens, llama.cpp uses 100+i. Fresh
 *    guesses (align, fill steps) use the same rule.
 *  - seed_pool=1 adds the prompt's N-grams before decoding and each output N-gram as it
 *    completes (LADE's POOL_FROM_PROMPT, off there by default and here: 2003 / 1842 steps;
 *    LADE's loop appends the last accepted token repeatedly instead of each accepted token
 *    there; we add the true n-grams).
 *  - Candidates are verified during the fill steps too (LADE waits for all levels; with an
 *    empty pool this changes nothing, with seed_pool=1 it accepts earlier); fill_verify=0
 *    verifies nothing before every level is filled, as LADE.
 *  - llama.cpp keys column 0's n-gram on the window's old guess for t's position rather than
 *    on t; LADE and we use t.
 *  - Rows past the tokens still wanted are not fed: the window and the candidates are cut to
 *    depth max_new - n_out - 1 (the framework caps max_new at the context length), so no row
 *    sits at a position >= seq_len and the last steps carry no useless rows.
 *
 * LADE's start (what the reference implementation does), off by default: init=lade draws the
 * initial and fresh guesses at random from the prompt's tokens (LADE's copy_from, seeded by
 * `seed`), and fill_prefill=1 evaluates the window's level 0 in the prompt's own pass
 * (dec_prefill_batch: the prompt's last rows and the window in one fwd_eval), its outputs becoming
 * level 1, as LADE's first forward does: the first fill step costs no pass of its own, and like
 * LADE's that pass verifies nothing (it yields one token, as every prompt pass). Measured (target
 * steps, prompt pass included, on the 20 prompts above with stories260K): W=15,N=5,G=15 2070;
 * init=lade 2318; fill_prefill=1 2069; both 2299; W=4,N=3,G=4 2920, both 3004. The prompt's pass
 * saves the first fill step, but its level 1 is computed from guesses made before the first new
 * token was known, and the later steps give the pass back: one step less over 20 prompts. Random
 * prompt tokens are worse first guesses than the periodic copy of init=prompt (12% more steps), so
 * the defaults stay.
 *
 * Sampling (decoder.h): window outputs and harvested n-grams are dec_propose's (the argmax, or
 * the coupled pick). Greedy and coupled verification are the walks above (a match with the
 * pick); standard sampling verifies the candidates and, when it is verified, level 0 as one
 * tree with dec_tree_walk: at each position the distinct candidate tokens are tried in turn,
 * each accepted with probability p'(x) and removed from p' when rejected (LADE's sampling
 * verification, after SpecInfer; LADE merges candidates sharing a prefix as the trie does),
 * then a draw from what is left. LADE verifies no level 0 and waits for the fill steps; we keep
 * our greedy-mode choices there.
 *
 * LADE's own configuration (preset=lade). The defaults above are decbench's choices; the
 * preset sets every parameter the way hao-ai-lab/LookaheadDecoding@eed010d lade/decoding.py's
 * greedy loop (jacobi_greedy_search_multilevel, the one Spec-Bench's model/lade copies) runs,
 * so that a recipe naming LADE runs LADE's algorithm (W, N, G stay the caller's: every script
 * sets them, config_lade):
 *   refill=lade       ALWAYS_FWD_ONE is asserted to be 1 (:873): the window moves one column
 *                     whatever was accepted (:1119-1124);
 *   full_bonus=0      the match loop (:1073-1085) stops with gg = N-2 when a whole (N-1)-gram
 *                     matches and emits hits[:max_hit + 1] (:1196): at most N-1 tokens a step;
 *   init=lade         level 0 is W+N-3 random prompt tokens (set_token = copy_from, :887-902);
 *   fill_prefill=1    the first pass carries the prompt and level 0 (:938-941, :1038-1048);
 *   fill_verify=0     no candidate is looked up before the window is full (:948);
 *   share=0           each candidate is fed whole (guess_tokens, :950-953);
 *   jacobi=0, seed_pool=0   level 0 is never verified; POOL_FROM_PROMPT defaults to 0 (:862).
 * Left as they are, because they cannot be copied: LADE's random.choice is unseeded (its
 * random.seed(10) is commented out, :877; Spec-Bench's copy seeds 10), ours draws with `seed`;
 * its candidates near max_new are fed whole and the output cut afterwards, ours are cut to
 * the tokens still wanted (same tokens, fewer rows in the last steps); its POOL_FROM_PROMPT
 * loop appends the last token repeatedly (:1168-1177), seed_pool=1 adds true n-grams. LADE
 * itself (PyTorch + transformers) cannot run here (transformers is not installed and there is
 * no network), so its tokens/step on our prompts is not measured: the case rests on the reading
 * above, rule by rule (tests/test_lookahead.c checks each of them on our side).
 * Measured on the 20 prompts above (stories260K, 4334 tokens, target steps): W=15,N=5,G=15
 * defaults 2070, preset=lade 2219; W=7,N=5,G=7 (Spec-Bench's) 2464 and 2486.
 *
 * Adapting G to the hit rate (as spec's draft length adapts) does not help: verifying the
 * newest g_cur candidates, g_cur + 2 after a step that accepted a candidate and - 1 after one
 * that did not (1..G), measured on the prompts above: W=15,N=5,G=15 2070 -> 2084 steps, 75.6 ->
 * 74.7 rows per step; W=4,N=3,G=4 2920 -> 3028 steps, 11.9 -> 10.8 rows; W=8,N=4,G=8 with
 * seed_pool=1 2264 -> 2273, 32.8 -> 31.8. The window, not the candidates, makes most rows, so
 * priced with the 110M cost curve (docs/measurements/2026-11-22-greedy-and-cost-curve.md) the
 * change is within 1% either way: not kept. */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/ngram_pool.h"
#include "util/err.h"

enum {
    P_W,
    P_N,
    P_G,
    P_SEED_POOL,
    P_REFILL,
    P_FULL_BONUS,
    P_JACOBI,
    P_SHARE,
    P_INIT,
    P_SEED,
    P_FILL_PREFILL,
    P_FILL_VERIFY,
    P_PRESET
};
enum { REFILL_ALIGN, REFILL_LADE, REFILL_LLAMACPP };
enum { INIT_PROMPT, INIT_RANDOM, INIT_LADE };
enum { PRESET_NONE, PRESET_LADE };

typedef struct {
    fwd_ctx *f;
    ngram_pool *pool;
    float *logits;
    int W, N, G, C;  /* C = W + N - 2: the widest the window gets (before the fill steps) */
    int top, width;  /* highest filled level, columns in use */
    int *lv, *rowid; /* (N-1) x C: window tokens; batch row of each cell (-1: not fed) */
    int *r;          /* C: the top level's outputs */
    int *tok, *par, *am, *dep; /* per batch row (am: dec_propose, -1 without logits; dep: match
                                * depth) */
    int *rdep, *trow;          /* per batch row: depth below row 0; logits row (-1: none) */
    int *cand;                 /* standard sampling: the candidate rows dec_tree_walk verifies */
    int *child, *sib;          /* candidate trie: first child, next sibling (per row) */
    int cand0;                 /* first candidate row */
    int *outl;                 /* batch rows whose logits are read */
    int *path, *cpath, *emit, *ngram;
    int *ctx; /* prompt + output so far, seq_len */
    int len;  /* tokens in ctx; the current token is ctx[len - 1] */
    int n_prompt;
    rng_state rng;
} lookahead;

#define LV(la, l, i) ((la)->lv[(l) * (la)->C + (i)])
#define ROW(la, l, i) ((la)->rowid[(l) * (la)->C + (i)])

/* The fresh guess for position p: dec_guess, the rule jacobi.c uses, with period W-1; with
 * init=lade a token of the prompt drawn at random (LADE's copy_from). */
static int guess_for(lookahead *la, int p, int init, int vocab) {
    if (init == INIT_LADE) return la->ctx[rng_below(&la->rng, (uint32_t)la->n_prompt)];
    return dec_guess(la->ctx, la->len, p, la->W > 1 ? la->W - 1 : 1, init == INIT_RANDOM, &la->rng,
                     vocab);
}

static int la_create(dec *d, char *err) {
    lookahead *la = calloc(1, sizeof *la);
    if (!la) return err_set(err, "lookahead: out of memory");
    d->impl = la;
    const model_config *cfg = &d->env.target->cfg;
    la->W = d->param[P_W], la->N = d->param[P_N], la->G = d->param[P_G];
    if (d->param[P_PRESET] == PRESET_LADE && la->N < 3)
        return err_set(err, "lookahead: preset=lade needs N >= 3 (LADE's loop fills level 1 "
                            "before it verifies: decoding.py:1038, 1049)");
    la->C = la->W + la->N - 2;
    size_t L = (size_t)la->N - 1, C = (size_t)la->C, cells = L * C;
    size_t rows = cells + (size_t)la->G * L, outs = 1 + 2 * C + (size_t)la->G * L;
    size_t longest = (C > L ? C : L) + 1;
    la->logits = malloc(sizeof(float) * outs * (size_t)cfg->vocab_size);
    la->lv = malloc(sizeof(int) * cells);
    la->rowid = malloc(sizeof(int) * cells);
    la->r = malloc(sizeof(int) * C);
    size_t batch = rows < 64 ? 64 : rows; /* the context's batch: fill_prefill's prompt rows */
    la->tok = malloc(sizeof(int) * batch);
    la->par = malloc(sizeof(int) * batch);
    la->am = malloc(sizeof(int) * rows);
    la->dep = malloc(sizeof(int) * rows);
    la->rdep = malloc(sizeof(int) * rows);
    la->trow = malloc(sizeof(int) * rows);
    la->cand = malloc(sizeof(int) * rows);
    la->child = malloc(sizeof(int) * rows);
    la->sib = malloc(sizeof(int) * rows);
    la->outl = malloc(sizeof(int) * outs);
    la->path = malloc(sizeof(int) * longest);
    la->cpath = malloc(sizeof(int) * longest);
    la->emit = malloc(sizeof(int) * longest);
    la->ngram = malloc(sizeof(int) * L);
    la->ctx = malloc(sizeof(int) * (size_t)cfg->seq_len);
    if (!la->logits || !la->lv || !la->rowid || !la->r || !la->tok || !la->par || !la->am ||
        !la->dep || !la->rdep || !la->trow || !la->cand || !la->child || !la->sib || !la->outl ||
        !la->path || !la->cpath || !la->emit || !la->ngram || !la->ctx)
        return err_set(err, "lookahead: out of memory");
    if (ngram_pool_new(&la->pool, cfg->vocab_size, la->G, la->N - 1, err)) return -1;
    return dec_fwd_new(d, d->env.target, (int)rows, &la->f, err);
}

/* Appends tokens to the context; with seed_pool, adds each N-gram they complete. */
static void la_push(dec *d, lookahead *la, const int *t, int n) {
    for (int i = 0; i < n; i++) {
        la->ctx[la->len++] = t[i];
        int s = la->len - la->N;
        if (d->param[P_SEED_POOL] && s >= 0) ngram_pool_add(la->pool, la->ctx[s], la->ctx + s + 1);
    }
}

/* Builds the batch: window cells up to depth max_depth, then (with_cand) the candidates for the
 * current token; without with_cand nothing is verified, so level 0's logits are read only as
 * the top level's. Returns the row count; *n_out receives the logits rows (listed in outl). */
static int la_build(dec *d, lookahead *la, int max_depth, int with_cand, int *cand_len,
                    int *n_out) {
    const int verify0 = with_cand && (d->param[P_JACOBI] || la->top == 0);
    int n = 0, no = 0;
    LV(la, 0, 0) = la->ctx[la->len - 1];
    for (int l = 0; l <= la->top; l++)
        for (int i = 0; i < la->width; i++) {
            if (l + i > max_depth) {
                ROW(la, l, i) = -1;
                continue;
            }
            la->tok[n] = LV(la, l, i);
            la->par[n] = l ? ROW(la, l - 1, i) : i ? ROW(la, 0, i - 1) : -1;
            la->am[n] = -1;
            la->rdep[n] = l + i;
            if (n == 0 || l == la->top || (l == 0 && verify0)) la->outl[no++] = n;
            ROW(la, l, i) = n++;
        }
    la->child[0] = -1; /* row 0's candidate children (level 0's row 1 is not one of them) */
    la->cand0 = n;
    int L = la->N - 1 < max_depth ? la->N - 1 : max_depth,
        cnt = with_cand ? ngram_pool_count(la->pool, LV(la, 0, 0)) : 0;
    *cand_len = cnt > 0 ? L : 0;
    for (int c = 0; c < cnt && L > 0; c++) {
        const int *g = ngram_pool_get(la->pool, LV(la, 0, 0), c);
        int node = 0;
        for (int j = 0; j < L; j++) {
            int x = d->param[P_SHARE] ? la->child[node] : -1;
            while (x >= 0 && la->tok[x] != g[j]) x = la->sib[x];
            if (x < 0) {
                x = n++;
                la->tok[x] = g[j], la->par[x] = node, la->am[x] = -1, la->child[x] = -1;
                la->rdep[x] = j + 1;
                la->sib[x] = la->child[node], la->child[node] = x;
                la->outl[no++] = x;
            }
            node = x;
        }
    }
    *n_out = no;
    return n;
}

/* The longest candidate prefix the target confirms: row x matches if its token is the argmax
 * of its parent and the parent matched (row 0, the current token, always does), and nothing
 * follows a matched end token. Parents come before children, so one pass over the candidate
 * rows [first, n) finds the deepest match. Returns its depth k, rows in cpath[1..k]. */
static int walk_candidates(const dec *d, lookahead *la, int first, int n) {
    int best = 0, k = 0;
    for (int x = first; x < n; x++) {
        int p = la->par[x];
        int live = p == 0 || (la->dep[p] > 0 && la->tok[p] != d->end_id);
        la->dep[x] = live && la->tok[x] == la->am[p] ? (p ? la->dep[p] : 0) + 1 : 0;
        if (la->dep[x] > k) k = la->dep[x], best = x;
    }
    for (int j = k, x = best; j > 0; j--, x = la->par[x]) la->cpath[j] = x;
    return k;
}

/* Walks level 0 (rows 0..w0-1, a chain) like a Jacobi window; accepted count, rows 1..k. */
static int walk_level0(const dec *d, const lookahead *la) {
    int k = 0;
    while (k + 1 < la->width && ROW(la, 0, k + 1) >= 0 && la->am[k] >= 0 &&
           la->tok[k + 1] == la->am[k])
        if (la->tok[++k] == d->end_id) break;
    return k;
}

/* Moves every level's columns s to the left and sets the width to w; cells with no source
 * get fresh guesses. The context already ends with the new current token (the new base). */
static void drop_columns(lookahead *la, int s, int w, int init, int vocab) {
    int base = la->len - 1, src = la->width;
    la->width = w;
    for (int l = 0; l <= la->top; l++)
        for (int i = 0; i < w; i++)
            LV(la, l, i) =
                i + s < src ? LV(la, l, i + s) : guess_for(la, base + l + i, init, vocab);
}

/* Advances the window by a tokens (see the header); old_base: the position of the old current
 * token. The context already holds the new tokens. */
static void la_advance(dec *d, lookahead *la, int a, int old_base) {
    const int vocab = d->env.target->cfg.vocab_size, init = d->param[P_INIT];
    const int refill = d->param[P_REFILL], top = la->top, C = la->C;
    for (int i = 0; i < la->width; i++) {
        int row = ROW(la, top, i);
        la->r[i] = row >= 0 ? la->am[row] : guess_for(la, old_base + top + 1 + i, init, vocab);
    }
    if (top < la->N - 2) { /* fill step: a new level, one column less */
        memcpy(la->lv + (top + 1) * C, la->r, sizeof(int) * la->width);
        la->top++;
        drop_columns(la, refill == REFILL_ALIGN ? a : 1, la->width - 1, init, vocab);
        return;
    }
    memmove(la->lv, la->lv + C, sizeof(int) * C * top);
    memcpy(la->lv + top * C, la->r, sizeof(int) * la->width);
    if (refill == REFILL_ALIGN && a > 1)
        drop_columns(la, a - 1, la->width, init, vocab);
    else if (refill == REFILL_LLAMACPP)
        for (int v = 1; v < a && top > 0; v++) {
            memmove(la->lv, la->lv + C, sizeof(int) * C * top);
            memcpy(la->lv + top * C, la->lv, sizeof(int) * la->width);
        }
}

/* Adds column i's n-gram (key (0,i), then (1..N-2, i), then the top's output) to the pool. */
static void la_harvest(lookahead *la) {
    const int top = la->top;
    for (int i = 0; i < la->width; i++) {
        int row = ROW(la, top, i);
        if (row < 0) continue;
        for (int l = 1; l <= top; l++) la->ngram[l - 1] = LV(la, l, i);
        la->ngram[top] = la->am[row];
        ngram_pool_add(la->pool, LV(la, 0, i), la->ngram);
    }
}

/* The logits rows of the last pass into am[] (dec_propose: the argmax, or the coupled pick);
 * row r sits at position base + rdep[r] and predicts the next one. shift: batch row r of the
 * pass is la row r - shift (dec_prefill_batch puts prompt rows first). */
static void la_propose(dec *d, lookahead *la, int n_out, int base, int shift) {
    const size_t V = (size_t)d->env.target->cfg.vocab_size;
    for (int j = 0; j < n_out; j++) {
        int r = la->outl[j] - shift;
        la->am[r] = dec_propose(d, la->logits + (size_t)j * V, base + la->rdep[r] + 1);
    }
}

/* Standard sampling's verification (LADE's, SpecInfer's rule for fixed candidates): the trie's
 * candidates and, when verified, level 0 as one more chain, walked by dec_tree_walk. Returns
 * the accepted depth, rows in path[1..k]; *next: the token after them, -1 after an accepted end
 * token. */
static int la_walk_sampled(dec *d, lookahead *la, int n, int n_out, int verify0, int *next) {
    int nc = 0;
    for (int x = la->cand0; x < n; x++) la->cand[nc++] = x;
    for (int i = 1; verify0 && i < la->width && ROW(la, 0, i) >= 0; i++)
        la->cand[nc++] = ROW(la, 0, i);
    for (int r = 0; r < n; r++) la->trow[r] = -1;
    for (int j = 0; j < n_out; j++) la->trow[la->outl[j]] = j;
    const dec_tree t = {.tok = la->tok, .par = la->par, .trow = la->trow, .tl = la->logits};
    return dec_tree_walk(d, &t, 0, la->len - 1, la->cand, nc, la->path, next);
}

/* LADE's start (fill_prefill=1): the prompt's pass also carries the window, level 0 below the
 * prompt's last token; its outputs become level 1, so the first fill step costs no pass of its
 * own. Nothing is verified in that pass (it yields one token, as every prompt pass). */
static int la_prefill_window(dec *d, lookahead *la, const int *prompt, int n_prompt, char *err) {
    const int vocab = d->env.target->cfg.vocab_size, init = d->param[P_INIT];
    la->top = 0, la->width = la->C;
    for (int i = 1; i < la->width; i++) LV(la, 0, i) = guess_for(la, la->len - 1 + i, init, vocab);
    int L, n_out, n = la_build(d, la, d->max_new - 1, 0, &L, &n_out);
    /* the batch: prompt[n_prompt - 1 - c .. n_prompt - 1) as a chain, then the window rows
     * (row 0, the root, is the prompt's last token) */
    int c = fwd_max_batch(la->f) - n;
    if (c > 63) c = 63;
    if (c > n_prompt - 1) c = n_prompt - 1;
    memmove(la->tok + c, la->tok, sizeof(int) * (size_t)n);
    memmove(la->par + c, la->par, sizeof(int) * (size_t)n);
    for (int r = c; r < c + n; r++) la->par[r] = la->par[r] < 0 ? c - 1 : la->par[r] + c;
    for (int i = 0; i < c; i++) la->tok[i] = prompt[n_prompt - 1 - c + i], la->par[i] = i - 1;
    for (int j = 0; j < n_out; j++) la->outl[j] += c;
    if (dec_prefill_batch(d, DEC_TARGET, la->f, prompt, n_prompt - 1 - c, c + n, la->tok, la->par,
                          c + 1, la->outl, n_out, la->logits, err))
        return -1;
    la_propose(d, la, n_out, n_prompt - 1, c);
    int cur = dec_pick(d, la->logits, n_prompt); /* outl[0] is the root */
    dec_emit(d, &cur, 1);
    la_push(d, la, &cur, 1);
    if (!d->done) la_advance(d, la, 1, n_prompt - 1);
    return 0;
}

static int la_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    lookahead *la = d->impl;
    const int vocab = d->env.target->cfg.vocab_size, N = la->N, init = d->param[P_INIT];
    const int standard =
        d->env.sampling.temperature > 0 && d->env.sampling.mode == DEC_SAMPLING_STANDARD;
    rng_seed(&la->rng, (uint64_t)d->param[P_SEED]);
    ngram_pool_clear(la->pool);
    la->len = 0, la->n_prompt = n_prompt;
    la_push(d, la, prompt, n_prompt);
    if (d->param[P_FILL_PREFILL]) {
        if (la_prefill_window(d, la, prompt, n_prompt, err)) return -1;
    } else {
        if (dec_prefill(d, DEC_TARGET, la->f, prompt, n_prompt, la->logits, err)) return -1;
        int cur = dec_pick(d, la->logits, n_prompt);
        dec_emit(d, &cur, 1);
        la_push(d, la, &cur, 1);
        la->top = 0, la->width = la->C;
        for (int i = 1; i < la->width; i++)
            LV(la, 0, i) = guess_for(la, la->len - 1 + i, init, vocab);
    }

    while (!d->done) {
        /* fill_verify=0: before every level is filled, nothing is verified (LADE) */
        const int verify = la->top == N - 2 || d->param[P_FILL_VERIFY];
        int max_depth = d->max_new - d->n_out - 1, L, n_out;
        int n = la_build(d, la, max_depth, verify, &L, &n_out);
        if (dec_eval(d, DEC_TARGET, la->f, n, la->tok, la->par, la->outl, n_out, la->logits, 0,
                     err))
            return -1;
        la_propose(d, la, n_out, la->len - 1, 0);
        /* verification: the longest walk plain decoding confirms (greedy, coupled), or the
         * rejection rule's walk (standard sampling) */
        int verify0 = verify && (d->param[P_JACOBI] || la->top == 0), k, use0, next = -1;
        if (standard) {
            k = la_walk_sampled(d, la, n, n_out, verify0, &next);
            use0 = k > 0 && la->path[1] < la->cand0;
        } else {
            int kc = walk_candidates(d, la, la->cand0, n);
            int kj = verify0 ? walk_level0(d, la) : 0;
            use0 = kj > kc, k = use0 ? kj : kc;
            la->path[0] = 0;
            for (int j = 1; j <= k; j++) la->path[j] = use0 ? j : la->cpath[j];
            next = la->am[la->path[k]];
        }
        int w0 = 0;
        while (w0 < la->width && ROW(la, 0, w0) >= 0) w0++;
        int drafted = use0 ? w0 - 1 : L > 0 ? L : verify0 ? w0 - 1 : 0;
        int last = la->path[k], ended = k > 0 && la->tok[last] == d->end_id;
        int no_bonus = !use0 && !d->param[P_FULL_BONUS] && k == N - 1;
        int n_emit = 0;
        for (int j = 1; j <= k; j++) la->emit[n_emit++] = la->tok[la->path[j]];
        if (!ended && !no_bonus) la->emit[n_emit++] = next;
        if (la->top == N - 2) la_harvest(la);
        int old_base = la->len - 1;
        int emitted = dec_emit(d, la->emit, n_emit);
        la_push(d, la, la->emit, emitted);
        dec_step_done(d, n, drafted, k, emitted);
        if (d->done) break;
        /* commit t and the accepted rows (without the last one when its bonus was dropped:
         * that token is the next current token and is fed again) */
        int a = no_bonus ? k : k + 1;
        if (fwd_commit(la->f, la->path, a, err)) return -1;
        la_advance(d, la, a, old_base);
    }
    return 0;
}

static void la_destroy(dec *d) {
    lookahead *la = d->impl;
    if (!la) return;
    fwd_free(la->f);
    ngram_pool_free(la->pool);
    free(la->logits), free(la->lv), free(la->rowid), free(la->r), free(la->tok), free(la->par);
    free(la->am), free(la->dep), free(la->rdep), free(la->trow), free(la->cand);
    free(la->child), free(la->sib), free(la->outl), free(la->path), free(la->cpath);
    free(la->emit), free(la->ngram), free(la->ctx);
    free(la);
}

/* clang-format off */
const dec_vtable dec_lookahead_vtable = {
    .name = "lookahead",
    .summary = "lookahead decoding: Jacobi trajectory window + n-gram pool, verified in one pass",
    .params = {
        [P_W] = {"W", PARAM_INT, 15, 1, 64, {0}, "window columns (future positions)"},
        [P_N] = {"N", PARAM_INT, 5, 2, 12, {0}, "n-gram size: the window has N-1 levels"},
        [P_G] = {"G", PARAM_INT, 15, 0, 64, {0}, "n-grams per key in the pool = verification candidates"},
        [P_SEED_POOL] = {"seed_pool", PARAM_INT, 0, 0, 1, {0}, "1: add the prompt's and the output's n-grams"},
        [P_REFILL] = {"refill", PARAM_ENUM, REFILL_ALIGN, 0, 0, {"align", "lade", "llamacpp"},
         "window update after a multi-token accept"},
        [P_FULL_BONUS] = {"full_bonus", PARAM_INT, 1, 0, 1, {0}, "keep the bonus token after a whole n-gram matched"},
        [P_JACOBI] = {"jacobi", PARAM_INT, 0, 0, 1, {0}, "also verify level 0 as a Jacobi window (free for N=2)"},
        [P_SHARE] = {"share", PARAM_INT, 1, 0, 1, {0}, "candidates share rows for common prefixes (a trie)"},
        [P_INIT] = {"init", PARAM_ENUM, INIT_PROMPT, 0, 0, {"prompt", "random", "lade"},
         "initial and fresh guesses: recent context, uniform tokens, random prompt tokens (LADE)"},
        [P_SEED] = {"seed", PARAM_INT, 0, 0, 2147483647, {0}, "seed of init=random and init=lade"},
        [P_FILL_PREFILL] = {"fill_prefill", PARAM_INT, 0, 0, 1, {0},
         "1: the prompt's pass also fills the window's first level (LADE's start)", .quiet = 1},
        [P_FILL_VERIFY] = {"fill_verify", PARAM_INT, 1, 0, 1, {0},
         "0: the fill steps verify nothing (LADE waits for every level)", .quiet = 1},
        [P_PRESET] = {"preset", PARAM_ENUM, PRESET_NONE, 0, 0, {"none", "lade"},
         "lade: every setting as hao-ai-lab/LookaheadDecoding's greedy loop runs it (W, N, G "
         "stay yours)", .quiet = 1,
         .sets = {[PRESET_LADE] = "refill=lade,full_bonus=0,init=lade,fill_prefill=1,"
                                  "fill_verify=0,share=0,jacobi=0,seed_pool=0"}},
    },
    .create = la_create,
    .generate = la_generate,
    .destroy = la_destroy,
    .tune_grid = "W=2,4,8;N=2,3,5;G=W",
};
/* clang-format on */
