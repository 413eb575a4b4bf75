/* suffix.c: SuffixDecoding (Oliaro, Jia, Campos, Qiao, "SuffixDecoding: Extreme Speculative
 * Decoding for Emerging AI Applications", NeurIPS 2025, arXiv 2411.04975), greedy, no draft
 * model.
 *
 * Section 4.1: two suffix trees (decoders/suffix_tree.h). The per-request tree holds the
 * prompt and the output so far; the global tree holds every output of the run (the current
 * one included, as it grows, as ArcticInference adds active responses to its global cache).
 * Section 4.2: each step, each tree proposes the best speculation tree for the context's tail
 * (for every pattern length p whose suffix occurs: a tree of at most min(budget, alpha p)
 * tokens grown greedily by estimated probability count(child)/count(parent), candidates below
 * min_prob dropped, scored by the sum of probabilities); the higher-scoring tree (the
 * per-request one on ties, as the reference) is verified by ONE target pass with the tree mask
 * (decoders/token_tree.h): the longest path of target tokens plus the target's next token are
 * emitted, greedy's tokens exactly. Every emitted token is appended to both trees.
 *
 * Warm across prompts: with warm=1 (the default) the global tree outlives the prompt, so a
 * run's later prompts speculate from its earlier outputs; its sequences are the decoder's
 * state (`run --state-save/--state-load`, the file format of suffix_tree.h), so a later run
 * can start from them. warm=0 empties it before every prompt (then it holds only the current
 * output, which the per-request tree has too).
 *
 * Memory is bounded and allocated when the decoder is created: the global tree holds at most
 * `nodes` nodes and as many stored tokens (about 36 bytes per node: 36 MB at the default
 * 2^20), evicting whole outputs oldest first when full (the reference evicts whole requests,
 * FIFO, past suffix_cache_max_requests); the per-request tree holds at most min(context x
 * depth, nodes) nodes, and stops growing (the speculation then uses the text it holds) when a
 * prompt and output need more. The counters report the global tree's size and evictions.
 *
 * Deviations from the paper and ArcticInference (csrc/suffix_decoding/suffix_tree.cc,
 * arctic_inference/suffix_decoding/cache.py):
 *   - The trees are tries without path compression (one token per node): same counts, same
 *     speculation, more nodes; the memory bound above caps them.
 *   - Ties between candidates go to the earlier parent, then the lower token id (the
 *     reference's order of equal-count siblings depends on insertion order): a tree rebuilt
 *     from a saved file then speculates exactly as the original.
 *   - Nothing is speculated below an end token, and speculation is trimmed to what could still
 *     be emitted (max_new).
 *   - The speculation budget is a parameter (budget=16; the reference defaults to the tree
 *     depth, 64, on GPUs, where a wider pass costs little); alpha and min_prob are integers in
 *     percent (alpha=100 is the reference's max_spec_factor 1.0, min_prob=10 its 0.1).
 *   - tree=1 grows trees as the paper's evaluation; ArcticInference's default is a single path
 *     (tree=0).
 * Measured (stories260K, the first 20 TinyStories prompts x 256 new tokens, one decoder warm
 * across them; tokens per target step, target rows per decode pass): the defaults 2.49 (4.1);
 * cold (warm=0) 1.44 (2.2), prompt lookup pld:ngram=3,k=10 1.59 (6.3); depth 64 2.51 (4.2),
 * depth 12 2.38 (3.8); budget 8 2.43 (3.9), 32 2.49 (4.1: alpha x pattern rarely allows more
 * than 16); a single path (tree=0) 2.48 (4.1); min_prob 5 2.49; alpha 200 2.80 (6.1). Per row,
 * alpha 100 and depth 24 are the best of these; alpha 200 buys 0.3 tokens per step for 2 more
 * rows, worth it where a pass of 6 rows costs little more than one (large targets). The same
 * prompt decoded twice by one warm decoder: 163 then 21 target steps. Bookkeeping (both trees'
 * lookups and speculation) is 4-6% of wall time against stories260K's ~0.1 ms passes. The
 * README compares it with PLD and lookahead on HumanEval, MBPP, CNN/DM and MT-Bench.
 *
 * shape=sequoia lays Sequoia's tree (decoders/sequoia.h, arXiv 2402.12374: the static shape of
 * at most budget nodes and levels deep that maximises the expected accepted tokens for the
 * acceptance by sibling rank accept=) on the suffix tree: a shape node of rank r is the r-th
 * most frequent continuation below its parent's token (ties: the lower token), and is dropped
 * with its subtree where there is none. The pattern lengths compete by the same score as the
 * grown trees, MAX_SPEC = alpha x pattern length still caps them, min_prob does not apply (the
 * shape decides the width). Measured as above (20 prompts x 256, stories260K, one warm decoder;
 * tokens per step, rows per decode pass): budget 16: grown 2.49 (4.1), Sequoia 2.38 (3.9);
 * budget 8: 2.43 (3.9) and 2.34 (3.6); budget 32: 2.49 (4.1) and 2.46 (4.0 with levels=16).
 * The grown tree reads each step's real counts, which a shape fixed by the mean acceptance
 * cannot: per row the two tie, and the grown tree stays the default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/sequoia.h"
#include "decoders/suffix_tree.h"
#include "decoders/token_tree.h"
#include "util/err.h"

enum { P_DEPTH, P_BUDGET, P_ALPHA, P_MIN_PROB, P_TREE, P_WARM, P_NODES, P_SHAPE, P_LEVELS,
       P_ACCEPT };
enum { SHAPE_PROB, SHAPE_SEQUOIA };
enum {
    SC_SPEC_STEPS,
    SC_SPEC_TOKENS,
    SC_GLOBAL_STEPS,
    SC_MATCH_LEN,
    SC_GLOBAL_NODES,
    SC_GLOBAL_TOKENS,
    SC_EVICTED,
    SC_RANK0, /* SC_RANK0 + r: accepted tokens of sibling rank r (shape=sequoia), 3 and above last */
    SC_RANK1,
    SC_RANK2,
    SC_RANK3UP,
    SC_OFFER0, /* SC_OFFER0 + r: candidates of rank r below a node on the accepted path */
    SC_OFFER1,
    SC_OFFER2,
    SC_OFFER3UP,
    SC_N
};

/* shape=sequoia's default acceptance by sibling rank: below a node the target reaches, the
 * target's next token is the suffix tree's rank-r continuation with probability p[r]. Measured
 * on stories260K (the first 20 TinyStories prompts x 256 new tokens, one warm decoder) with a
 * one-level tree offering ranks 0..7 at every speculating step,
 * `suffix:shape=sequoia,levels=1,budget=8,accept=0.3/0.1/0.1/0.1/0.1/0.1/0.1/0.1`: the
 * accept_rank counters over spec_steps (docs/measurements/2026-11-29-sequoia.md). */
#define SUFFIX_SEQUOIA_ACCEPT "0.578/0.084/0.014/0.003"

typedef struct {
    int depth, budget, tree, warm;
    double alpha, min_prob;
    int V;
    suffix_tree *local, *global;
    stree_spec *ws_local, *ws_global;
    fwd_ctx *f;
    float *logits;             /* (budget + 1) x vocab */
    int *tok, *par;            /* the target pass: budget + 1 rows */
    int *path, *em, *depth_of; /* budget + 1 */
    int *walk;                 /* 2 (budget + 1): token_tree_verify's scratch */
    int *seq;                  /* the text: prompt + output */
    int *shape_par, *shape_rank; /* shape=sequoia: Sequoia's tree, breadth-first */
    stree_shape shape;
} sfx;

/* shape=sequoia: Sequoia's best tree of at most budget nodes and levels deep for accept=. */
static int make_shape(dec *d, sfx *s, char *err) {
    const char *acc = d->str[P_ACCEPT][0] ? d->str[P_ACCEPT] : SUFFIX_SEQUOIA_ACCEPT;
    sequoia_node *sq;
    int n;
    if (sequoia_tree_text(acc, "suffix: accept", 0, s->budget, d->param[P_LEVELS], &sq, &n, err))
        return -1;
    s->shape_par = malloc(sizeof(int) * (size_t)n), s->shape_rank = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; s->shape_par && s->shape_rank && i < n; i++)
        s->shape_par[i] = sq[i].parent, s->shape_rank[i] = sq[i].rank;
    free(sq);
    if (!s->shape_par || !s->shape_rank) return err_set(err, "suffix: out of memory");
    s->shape = (stree_shape){n, s->shape_par, s->shape_rank};
    return 0;
}

static int sfx_create(dec *d, char *err) {
    sfx *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "suffix: out of memory");
    d->impl = s;
    s->depth = d->param[P_DEPTH], s->budget = d->param[P_BUDGET], s->tree = d->param[P_TREE];
    s->warm = d->param[P_WARM];
    s->alpha = d->param[P_ALPHA] / 100.0, s->min_prob = d->param[P_MIN_PROB] / 100.0;
    const model_config *c = &d->env.target->cfg;
    s->V = c->vocab_size;
    const int nodes = d->param[P_NODES];
    long local_nodes = (long)c->seq_len * s->depth;
    if (local_nodes > nodes) local_nodes = nodes;
    size_t R = (size_t)s->budget + 1;
    if (stree_new(&s->local, s->depth, (int)local_nodes, c->seq_len, err) ||
        stree_new(&s->global, s->depth, nodes, nodes, err) ||
        stree_spec_new(&s->ws_local, s->budget, s->min_prob, err) ||
        stree_spec_new(&s->ws_global, s->budget, s->min_prob, err))
        return -1;
    s->logits = malloc(sizeof(float) * R * (size_t)s->V);
    s->tok = malloc(sizeof(int) * R), s->par = malloc(sizeof(int) * R);
    s->path = malloc(sizeof(int) * R);
    s->em = malloc(sizeof(int) * R), s->depth_of = malloc(sizeof(int) * R);
    s->seq = malloc(sizeof(int) * (size_t)c->seq_len), s->walk = malloc(sizeof(int) * 2 * R);
    if (!s->logits || !s->tok || !s->par || !s->path || !s->em || !s->depth_of ||
        !s->seq || !s->walk)
        return err_set(err, "suffix: out of memory");
    if (d->param[P_SHAPE] == SHAPE_SEQUOIA) {
        if (!s->tree) return err_set(err, "suffix: shape=sequoia is a tree; tree=0 is one path");
        if (make_shape(d, s, err)) return -1;
    } else if (d->str[P_ACCEPT][0] || d->param[P_LEVELS] != d->vt->params[P_LEVELS].def) {
        return err_set(err, "suffix: accept= and levels= shape shape=sequoia; shape=prob does "
                            "not use them");
    }
    return dec_fwd_new(d, d->env.target, (int)R, &s->f, err);
}

/* Appends tokens to the text and to both trees. */
static void learn(sfx *s, int *L, const int *tokens, int n) {
    for (int i = 0; i < n; i++) {
        s->seq[(*L)++] = tokens[i];
        stree_append(s->local, tokens[i]);
        stree_append(s->global, tokens[i]);
    }
}

static int sfx_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    sfx *s = d->impl;
    const long evicted0 = stree_evicted(s->global);
    if (!s->warm) stree_clear(s->global);
    stree_clear(s->local);
    stree_begin(s->local);
    stree_begin(s->global);
    for (int i = 0; i < n_prompt; i++) stree_append(s->local, prompt[i]);
    memcpy(s->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, s->f, prompt, n_prompt, s->logits, err)) return -1;
    int first = dec_pick(d, s->logits, n_prompt); /* the argmax at temperature 0 */
    learn(s, &L, &first, dec_emit(d, &first, 1));
    while (!d->done) {
        /* 1. the better speculation of the two trees, trimmed to what could be emitted */
        int max_spec = d->max_new - d->n_out - 1;
        if (max_spec > s->budget) max_spec = s->budget;
        stree_draft a = {0}, b = {0};
        if (max_spec > 0 && s->shape.n) {
            stree_speculate_shape(s->local, s->seq, L, max_spec, s->alpha, &s->shape, d->end_id,
                                  s->ws_local, &a);
            stree_speculate_shape(s->global, s->seq, L, max_spec, s->alpha, &s->shape, d->end_id,
                                  s->ws_global, &b);
        } else if (max_spec > 0) {
            stree_speculate(s->local, s->seq, L, max_spec, s->alpha, s->min_prob, s->tree,
                            d->end_id, s->ws_local, &a);
            stree_speculate(s->global, s->seq, L, max_spec, s->alpha, s->min_prob, s->tree,
                            d->end_id, s->ws_global, &b);
        }
        const int from_global = b.n > 0 && b.score > a.score;
        const stree_draft *sp = from_global ? &b : &a;
        /* 2. one target pass: the current token, then the speculation tree */
        int rows = 1 + sp->n;
        s->tok[0] = s->seq[L - 1], s->par[0] = -1;
        for (int i = 0; i < sp->n; i++)
            s->tok[1 + i] = sp->tok[i], s->par[1 + i] = sp->parent[i] + 1;
        if (dec_eval(d, DEC_TARGET, s->f, rows, s->tok, s->par, NULL, rows, s->logits, 0, err))
            return -1;
        /* 3. the longest path of target tokens, then the bonus token (at temperature > 0:
         * of plain sampling's tokens, token_tree.h) */
        int np, n_emit = token_tree_verify(d, rows, s->tok, s->par, s->logits, L - 1, s->walk,
                                           s->path, &np, s->em);
        int emitted = dec_emit(d, s->em, n_emit);
        dec_step_done(d, rows, token_tree_depth(rows, s->par, s->depth_of), np - 1, emitted);
        if (sp->n) {
            dec_count(d, SC_SPEC_STEPS, 1), dec_count(d, SC_SPEC_TOKENS, sp->n);
            dec_count(d, SC_GLOBAL_STEPS, from_global), dec_count(d, SC_MATCH_LEN, sp->match_len);
        }
        if (s->shape.n) { /* the ranks into walk's first half (verify is done with it) */
            for (int r = 1; r < rows; r++) s->walk[r] = sp->rank[r - 1];
            token_tree_count_ranks(d, rows, s->par, s->path, np, s->walk, SC_RANK0, SC_OFFER0,
                                   s->walk + rows);
        }
        learn(s, &L, s->em, emitted);
        if (d->done) break;
        if (fwd_commit(s->f, s->path, np, err)) return -1;
    }
    dec_count_set(d, SC_GLOBAL_NODES, stree_nodes(s->global));
    dec_count_set(d, SC_GLOBAL_TOKENS, (double)stree_tokens(s->global));
    dec_count_set(d, SC_EVICTED, (double)(stree_evicted(s->global) - evicted0));
    return 0;
}

static void sfx_destroy(dec *d) {
    sfx *s = d->impl;
    if (!s) return;
    fwd_free(s->f);
    stree_free(s->local), stree_free(s->global);
    stree_spec_free(s->ws_local), stree_spec_free(s->ws_global);
    free(s->logits), free(s->tok), free(s->par), free(s->path), free(s->em);
    free(s->walk);
    free(s->depth_of), free(s->seq);
    free(s->shape_par), free(s->shape_rank);
    free(s);
}

/* ---- counters and state -------------------------------------------------------------------- */

static const stat_def sfx_counters[SC_N] = {
    [SC_SPEC_STEPS] = {"spec_steps", STAT_INT, STAT_SUM, STAT_DET,
                       "target steps that verified a speculation tree (the others: 1 row)"},
    [SC_SPEC_TOKENS] = {"spec_tokens", STAT_INT, STAT_SUM, STAT_DET,
                        "speculated tokens verified (the trees' sizes)"},
    [SC_GLOBAL_STEPS] = {"global_steps", STAT_INT, STAT_SUM, STAT_DET,
                         "of spec_steps, those whose tree came from the global tree (earlier "
                         "outputs) rather than the prompt and output so far"},
    [SC_MATCH_LEN] = {"match_len", STAT_INT, STAT_SUM, STAT_DET,
                      "pattern lengths the speculations grew from (mean: / spec_steps)"},
    [SC_GLOBAL_NODES] = {"global_nodes", STAT_INT, STAT_MAX, STAT_DET,
                         "nodes of the global suffix tree after the sample (its memory: about "
                         "36 bytes each)"},
    [SC_GLOBAL_TOKENS] = {"global_tokens", STAT_INT, STAT_MAX, STAT_DET,
                          "output tokens the global suffix tree holds after the sample"},
    [SC_EVICTED] = {"evicted", STAT_INT, STAT_SUM, STAT_DET,
                    "earlier outputs removed from the full global tree during the sample"},
    [SC_RANK0] = {"accept_rank0", STAT_INT, STAT_SUM, STAT_DET,
                  "shape=sequoia: accepted tokens that were their parent's most frequent "
                  "continuation (/ spec_steps: accept= P0 for a one-level tree)"},
    [SC_RANK1] = {"accept_rank1", STAT_INT, STAT_SUM, STAT_DET,
                  "shape=sequoia: accepted tokens of sibling rank 1"},
    [SC_RANK2] = {"accept_rank2", STAT_INT, STAT_SUM, STAT_DET,
                  "shape=sequoia: accepted tokens of sibling rank 2"},
    [SC_RANK3UP] = {"accept_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                    "shape=sequoia: accepted tokens of sibling rank 3 or more"},
    [SC_OFFER0] = {"offered_rank0", STAT_INT, STAT_SUM, STAT_DET,
                   "shape=sequoia: candidates of rank 0 below a node the verifier reached (accept_rank0 / "
                   "offered_rank0: Sequoia's p[0], from any tree; `decbench sequoia --fit`)"},
    [SC_OFFER1] = {"offered_rank1", STAT_INT, STAT_SUM, STAT_DET,
                   "shape=sequoia: candidates of rank 1 below a node the verifier reached"},
    [SC_OFFER2] = {"offered_rank2", STAT_INT, STAT_SUM, STAT_DET,
                   "shape=sequoia: candidates of rank 2 below a node the verifier reached"},
    [SC_OFFER3UP] = {"offered_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                     "shape=sequoia: candidates of rank 3 or more below a node the verifier reached"},
};

static int sfx_state_check(const dec *d, char *err) {
    if (!d->param[P_WARM])
        return err_set(err, "%s empties its global tree before every prompt (warm=0); use warm=1",
                       d->spec);
    return 0;
}

static int sfx_state_save(const dec *d, const char *path, char *what, size_t n_what, char *err) {
    const sfx *s = d->impl;
    long seqs, tokens;
    if (stree_save(s->global, s->V, path, &seqs, &tokens, err)) return -1;
    snprintf(what, n_what, "%ld outputs, %ld tokens", seqs, tokens);
    return 0;
}

static int sfx_state_load(dec *d, const char *path, char *err) {
    sfx *s = d->impl;
    return stree_load(s->global, s->V, path, err);
}

/* clang-format off */
const dec_vtable dec_suffix_vtable = {
    .name = "suffix",
    .summary = "SuffixDecoding: speculation trees from suffix trees of the prompt and of earlier "
               "outputs, no draft model (Oliaro et al. 2025)",
    .params = {
        [P_DEPTH] = {"depth", PARAM_INT, 24, 2, 256, {0}, "longest substring the suffix trees index"},
        [P_BUDGET] = {"budget", PARAM_INT, 16, 1, 256, {0}, "speculated tokens per target step at most"},
        [P_ALPHA] = {"alpha", PARAM_INT, 100, 1, 10000, {0},
         "MAX_SPEC = alpha x pattern length, alpha in percent"},
        [P_MIN_PROB] = {"min_prob", PARAM_INT, 10, 1, 100, {0},
         "candidates less likely than this (percent) are not speculated"},
        [P_TREE] = {"tree", PARAM_INT, 1, 0, 1, {0}, "1: speculation trees (the paper); 0: one path"},
        [P_WARM] = {"warm", PARAM_INT, 1, 0, 1, {0}, "keep the global tree of outputs across prompts"},
        [P_NODES] = {"nodes", PARAM_INT, 1 << 20, 64, 1 << 26, {0},
         "the global tree's memory bound, in nodes (and stored tokens)"},
        [P_SHAPE] = {"shape", PARAM_ENUM, SHAPE_PROB, 0, 0, {"prob", "sequoia"},
         "prob: grown by estimated probability (the paper); sequoia: Sequoia's tree of budget "
         "nodes for accept=, laid on the suffix tree by continuation rank", .quiet = 1},
        [P_LEVELS] = {"levels", PARAM_INT, 6, 1, SEQUOIA_MAX_DEPTH, {0},
         "shape=sequoia: the tree's depth at most", .quiet = 1},
        [P_ACCEPT] = {"accept", PARAM_STR, 0, 0, 0, {0}, "shape=sequoia: acceptance by rank "
         "P0/P1/... (default " SUFFIX_SEQUOIA_ACCEPT ")"},
    },
    .create = sfx_create,
    .generate = sfx_generate,
    .destroy = sfx_destroy,
    .counters = sfx_counters,
    .n_counters = SC_N,
    .state_name = "suffix tree",
    .state_check = sfx_state_check,
    .state_save = sfx_state_save,
    .state_load = sfx_state_load,
    .tune_grid = "budget=4,8,16",
};
/* clang-format on */
