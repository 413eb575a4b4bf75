/* rest.c: REST, retrieval-based speculative decoding (He, Zhong, Cai, Lee, He, "REST:
 * Retrieval-Based Speculative Decoding", NAACL 2024, arXiv 2311.08252), no draft model.
 *
 * A datastore of token sequences with its suffix array (util/token_store.h, written by
 * `decbench datastore build`, read at creation from ds=FILE). Each step, as the reference
 * (FasterDecoding/REST: rest/model/utils.py generate_candidates_and_draft_buffer and
 * DraftRetriever/src/lib.rs Reader::search):
 *   1. retrieval: the context's suffix of max_span tokens (16), else of one token fewer, down
 *      to min_span (2), until one occurs in the datastore; the context ends with the token the
 *      last step chose (the reference's input_ids_extend);
 *   2. the continuations: the `cont` tokens (10, the retriever's `long`) after each of the
 *      first k occurrences (5000) in suffix array order;
 *   3. the trie of the continuations, each node counting the continuations through it; its
 *      num_draft (64, the reference's choices) most frequent nodes, then, as cut_to_choices,
 *      the nodes with the most distinct tokens on their path dropped first until those counts
 *      sum to at most num_draft;
 *   4. the trie is verified as a token tree in ONE target pass (decoders/token_tree.h, the
 *      verifier of tree and suffix): the longest path plain decoding confirms and the token
 *      after it are emitted (greedy's tokens at T = 0; plain sampling's in coupled mode, their
 *      distribution in standard mode: the trie is a function of the context, a fixed guess).
 *
 * Deviations from the reference, each for exactness, determinism or bounds:
 *   - Ties: nodes of equal count rank the shallower first, then the one first met in suffix
 *     array order (the reference's heap and hash sets break them in hash order, so its tree
 *     varies between runs); then every chosen node's parent is chosen too, and the trie needs
 *     no repair. cut_to_choices' ties drop the deepest, then the last met, first.
 *   - No match: a plain one-row step (the reference verifies token id 100 as a guess).
 *     Occurrences whose continuation is empty (the datastore's last tokens) do not count as a
 *     match: a shorter suffix is tried (the reference's trie would be empty and fail).
 *   - Nothing is drafted below an end token, nor deeper than what could still be emitted.
 *   - num_draft may be up to 256 (the reference asserts at most 64 draft tokens).
 *   - Standard sampling verifies by the rejection rule for fixed guesses (SpecInfer, LADE),
 *     which keeps plain sampling's distribution; the reference accepts by its nucleus
 *     posterior (a sample per path, matched), which does not.
 *   - Tokens are stored as 32-bit ids (the reference's u16 holds vocabularies below 65536) in
 *     one suffix array (the reference splits corpora past 512M tokens into chunks searched
 *     apart); the file carries the vocabulary's fingerprint.
 *
 * Memory: the datastore (8 bytes a token) and, allocated at creation, the trie of at most
 * k x cont + 1 nodes with a hash table of twice that (about 40 bytes a node: 2 MB at the
 * defaults). The counters: drafted nodes, retrieval hits and the matched suffixes' lengths.
 *
 * shape=sequoia replaces step 3's choice by Sequoia's tree (decoders/sequoia.h, arXiv
 * 2402.12374: the static shape of at most num_draft nodes and levels deep that maximises the
 * expected accepted tokens for the acceptance by sibling rank accept=), laid on the trie: a
 * shape node of rank r is the r-th child of its parent's trie node in ranks_before's order, and
 * is dropped with its subtree where there is none. Measured as bench/rest.sh (stories260K, 20
 * prompts x 256, one thread; tokens per step, rows per decode pass): num_draft 64: the reference's
 * choice 2.20 (18.7), Sequoia 2.16 (18.1); 16: 1.99 (7.7) and 2.01 (8.7); 8: 1.84 (4.8) and 1.88
 * (5.6). The counts already rank the trie's paths by how often the datastore continues them, so a
 * shape from the mean acceptance spends more rows for the same tokens; the reference's choice
 * stays the default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/sequoia.h"
#include "decoders/token_tree.h"
#include "util/err.h"
#include "util/token_store.h"

enum { P_DS, P_MAX_SPAN, P_MIN_SPAN, P_NUM_DRAFT, P_CONT, P_K, P_SHAPE, P_LEVELS, P_ACCEPT };
enum { SHAPE_COUNT, SHAPE_SEQUOIA };
enum {
    RC_HITS,
    RC_MATCH_LEN,
    RC_DRAFTED,
    RC_ACCEPTED,
    RC_RETRIEVED,
    RC_RANK0, /* RC_RANK0 + r: accepted tokens of sibling rank r (shape=sequoia), 3 and above last */
    RC_RANK1,
    RC_RANK2,
    RC_RANK3UP,
    RC_OFFER0, /* RC_OFFER0 + r: candidates of rank r below a node on the accepted path */
    RC_OFFER1,
    RC_OFFER2,
    RC_OFFER3UP,
    RC_N
};

/* shape=sequoia's default acceptance by sibling rank (below a node the target reaches, its next
 * token is the trie's rank-r continuation with probability p[r]), measured as bench/rest.sh
 * runs (stories260K, the first 20 TinyStories prompts x 256, the datastore of records 64-712)
 * with a one-level tree offering ranks 0..7 at every hit: the accept_rank counters over hits
 * (docs/measurements/2026-11-29-sequoia.md). */
#define REST_SEQUOIA_ACCEPT "0.444/0.094/0.040/0.041"

typedef struct {
    int max_span, min_span, num_draft, cont, k;
    int V;
    tstore *ds;
    /* the trie: node 0 is the root (the context's last token) */
    int *t_tok, *t_par, *t_cnt, *t_depth, *t_slot;
    int n_nodes, max_nodes;
    int *hash; /* node per slot, -1 empty; slots used are t_slot[1..n_nodes) */
    unsigned hmask;
    int *best, *row_of; /* the chosen nodes (num_draft), a node's row in the pass */
    int *t_child, *t_sib; /* shape=sequoia: each node's first child and next sibling, as met */
    int *sh_par, *sh_rank, n_shape; /* shape=sequoia: Sequoia's tree, breadth-first */
    int *sh_node, *best_rank;       /* a shape node's trie node (0: none); a chosen node's rank */
    fwd_ctx *f;
    float *logits;             /* (num_draft + 1) x vocab */
    int *tok, *par;            /* the target pass: num_draft + 1 rows */
    int *path, *em, *depth_of; /* num_draft + 1 */
    int *walk;                 /* 2 (num_draft + 1): token_tree_verify's scratch */
    int *seq;                  /* the text: prompt + output */
} rst;

/* shape=sequoia: Sequoia's best tree of at most num_draft nodes and levels deep for accept=,
 * and the scratch that lays it on the trie. */
static int make_shape(dec *d, rst *s, char *err) {
    const char *acc = d->str[P_ACCEPT][0] ? d->str[P_ACCEPT] : REST_SEQUOIA_ACCEPT;
    sequoia_node *sq;
    int n, D = s->num_draft;
    if (sequoia_tree_text(acc, "rest: accept", 0, D, d->param[P_LEVELS], &sq, &n, err)) return -1;
    size_t N = (size_t)s->max_nodes;
    s->sh_par = malloc(sizeof(int) * (size_t)D), s->sh_rank = malloc(sizeof(int) * (size_t)D);
    s->sh_node = malloc(sizeof(int) * (size_t)D), s->best_rank = malloc(sizeof(int) * (size_t)D);
    s->t_child = malloc(sizeof(int) * N), s->t_sib = malloc(sizeof(int) * N);
    const int ok = s->sh_par && s->sh_rank && s->sh_node && s->best_rank && s->t_child && s->t_sib;
    for (int i = 0; ok && i < n; i++) s->sh_par[i] = sq[i].parent, s->sh_rank[i] = sq[i].rank;
    free(sq);
    if (!ok) return err_set(err, "rest: out of memory");
    s->n_shape = n;
    return 0;
}

static int rst_create(dec *d, char *err) {
    rst *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "rest: out of memory");
    d->impl = s;
    s->max_span = d->param[P_MAX_SPAN], s->min_span = d->param[P_MIN_SPAN];
    s->num_draft = d->param[P_NUM_DRAFT], s->cont = d->param[P_CONT], s->k = d->param[P_K];
    if (s->min_span > s->max_span)
        return err_set(err, "%s: min_span=%d is more than max_span=%d", d->spec, s->min_span,
                       s->max_span);
    if (!d->str[P_DS][0])
        return err_set(err, "rest needs a datastore: rest:ds=FILE (written by `decbench datastore "
                            "build`)");
    const model_config *c = &d->env.target->cfg;
    s->V = c->vocab_size;
    if (tstore_load(&s->ds, d->str[P_DS], s->V, d->env.vocab_fingerprint, err)) return -1;
    s->max_nodes = s->k * s->cont + 1;
    unsigned slots = 1;
    while (slots < 2u * (unsigned)s->max_nodes) slots <<= 1;
    s->hmask = slots - 1;
    size_t N = (size_t)s->max_nodes, R = (size_t)s->num_draft + 1;
    s->t_tok = malloc(sizeof(int) * N), s->t_par = malloc(sizeof(int) * N);
    s->t_cnt = malloc(sizeof(int) * N), s->t_depth = malloc(sizeof(int) * N);
    s->t_slot = malloc(sizeof(int) * N), s->row_of = malloc(sizeof(int) * N);
    s->hash = malloc(sizeof(int) * slots);
    s->best = malloc(sizeof(int) * R);
    s->logits = malloc(sizeof(float) * R * (size_t)s->V);
    s->tok = malloc(sizeof(int) * R), s->par = malloc(sizeof(int) * R);
    s->path = malloc(sizeof(int) * R), s->em = malloc(sizeof(int) * R);
    s->depth_of = malloc(sizeof(int) * R), s->walk = malloc(sizeof(int) * 2 * R);
    s->seq = malloc(sizeof(int) * (size_t)c->seq_len);
    if (!s->t_tok || !s->t_par || !s->t_cnt || !s->t_depth || !s->t_slot || !s->row_of ||
        !s->hash || !s->best || !s->logits || !s->tok || !s->par || !s->path || !s->em ||
        !s->depth_of || !s->walk || !s->seq)
        return err_set(err, "rest: out of memory");
    memset(s->hash, -1, sizeof(int) * slots);
    if (d->param[P_SHAPE] == SHAPE_SEQUOIA) {
        if (make_shape(d, s, err)) return -1;
    } else if (d->str[P_ACCEPT][0] || d->param[P_LEVELS] != d->vt->params[P_LEVELS].def) {
        return err_set(err, "rest: accept= and levels= shape shape=sequoia; shape=count does not "
                            "use them");
    }
    return dec_fwd_new(d, d->env.target, (int)R, &s->f, err);
}

/* ---- the trie of the continuations --------------------------------------------------------- */

static void trie_reset(rst *s) {
    for (int i = 1; i < s->n_nodes; i++) s->hash[s->t_slot[i]] = -1;
    s->n_nodes = 1;
    s->t_par[0] = -1, s->t_depth[0] = 0, s->t_cnt[0] = 0;
}

/* The child of `parent` with token t, made if new; counts one more continuation through it. */
static int trie_child(rst *s, int parent, int t) {
    unsigned h = ((unsigned)parent * 0x9e3779b1u) ^ ((unsigned)t * 0x85ebca6bu);
    h ^= h >> 15;
    for (unsigned i = h & s->hmask;; i = (i + 1) & s->hmask) {
        int x = s->hash[i];
        if (x < 0) {
            x = s->n_nodes++;
            s->hash[i] = x, s->t_slot[x] = (int)i;
            s->t_tok[x] = t, s->t_par[x] = parent, s->t_cnt[x] = 1;
            s->t_depth[x] = s->t_depth[parent] + 1;
            return x;
        }
        if (s->t_par[x] == parent && s->t_tok[x] == t) {
            s->t_cnt[x]++;
            return x;
        }
    }
}

/* Retrieval (steps 1-2): the longest suffix of seq[0..L) from max_span down to min_span
 * tokens with an occurrence followed by at least one token; its continuations, up to `depth`
 * tokens and stopping after an end token, into the trie. Returns the suffix's length, 0 when
 * none occurs. *occ receives the occurrences read. */
static int retrieve(rst *s, const int *seq, int L, int depth, int end_id, int *occ) {
    trie_reset(s);
    *occ = 0;
    const tstore *ds = s->ds;
    int top = s->max_span < L ? s->max_span : L;
    for (int span = top; span >= s->min_span; span--) {
        int lo, hi;
        if (tstore_find(ds, seq + L - span, span, &lo, &hi) == 0) continue;
        if (hi - lo > s->k) hi = lo + s->k;
        for (int j = lo; j < hi; j++) {
            long p = (long)ds->sa[j] + span;
            long stop = p + depth < ds->n ? p + depth : ds->n;
            for (int node = 0; p < stop; p++) {
                node = trie_child(s, node, (int)ds->tok[p]);
                if ((int)ds->tok[p] == end_id) break;
            }
        }
        *occ = hi - lo;
        if (s->n_nodes > 1) return span;
    }
    return 0;
}

/* Node a ranks before node b: more continuations, then shallower, then met first. A parent
 * thus ranks before each of its children (at least their count, one shallower, met earlier). */
static int ranks_before(const rst *s, int a, int b) {
    if (s->t_cnt[a] != s->t_cnt[b]) return s->t_cnt[a] > s->t_cnt[b];
    if (s->t_depth[a] != s->t_depth[b]) return s->t_depth[a] < s->t_depth[b];
    return a < b;
}

/* Distinct tokens on node x's path (the reference's HashSet of a path's tokens). */
static int distinct_on_path(const rst *s, int x) {
    int toks[64], n = 0, u = 0;
    for (; x > 0 && n < 64; x = s->t_par[x]) {
        int t = s->t_tok[x], seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = toks[i] == t;
        u += !seen;
        toks[n++] = t;
    }
    return u;
}

/* Step 3: the chosen nodes into s->best (parents before children); returns their count. */
static int choose(rst *s) {
    int nb = 0, N = s->num_draft;
    for (int x = 1; x < s->n_nodes; x++) { /* the N best, kept sorted */
        if (nb == N && !ranks_before(s, x, s->best[nb - 1])) continue;
        int i = nb < N ? nb++ : nb - 1;
        for (; i > 0 && ranks_before(s, x, s->best[i - 1]); i--) s->best[i] = s->best[i - 1];
        s->best[i] = x;
    }
    /* cut_to_choices: drop the nodes with the most distinct tokens on their path (deepest,
     * then last met, on ties: children before their parents) while the counts sum past N */
    int sum = 0, u[257];
    for (int i = 0; i < nb; i++) sum += u[i] = distinct_on_path(s, s->best[i]);
    while (sum > N) {
        int w = 0;
        for (int i = 1; i < nb; i++) {
            int a = s->best[i], b = s->best[w];
            if (u[i] > u[w] || (u[i] == u[w] && (s->t_depth[a] > s->t_depth[b] ||
                                                 (s->t_depth[a] == s->t_depth[b] && a > b))))
                w = i;
        }
        sum -= u[w];
        s->best[w] = s->best[nb - 1], u[w] = u[nb - 1];
        nb--;
    }
    /* parents before children: by depth, then as met */
    for (int i = 1; i < nb; i++) {
        int x = s->best[i], j = i;
        for (; j > 0 && (s->t_depth[s->best[j - 1]] > s->t_depth[x] ||
                         (s->t_depth[s->best[j - 1]] == s->t_depth[x] && s->best[j - 1] > x));
             j--)
            s->best[j] = s->best[j - 1];
        s->best[j] = x;
    }
    return nb;
}

/* The trie's sibling lists for sequoia_child_of_rank, in ranks_before's order. */
static int trie_next(const void *ctx, int c) {
    return ((const rst *)ctx)->t_sib[c];
}

static int trie_before(const void *ctx, int a, int b) {
    return ranks_before((const rst *)ctx, a, b);
}

/* Step 3 with shape=sequoia: shape node j is the rank[j]-th child of its parent's trie node,
 * dropped with its subtree where there is none; the chosen nodes into s->best in shape order
 * (parents before children), their ranks into s->best_rank. Returns their count. */
static int choose_shape(rst *s) {
    for (int x = 0; x < s->n_nodes; x++) s->t_child[x] = 0;
    for (int x = s->n_nodes - 1; x >= 1; x--) /* lists in the order met */
        s->t_sib[x] = s->t_child[s->t_par[x]], s->t_child[s->t_par[x]] = x;
    int nb = 0;
    for (int j = 0; j < s->n_shape; j++) {
        const int pj = s->sh_par[j], parent = pj < 0 ? 0 : s->sh_node[pj];
        const int r = s->sh_rank[j];
        s->sh_node[j] = pj >= 0 && !parent ? 0
                                           : sequoia_child_of_rank(s, s->t_child[parent],
                                                                   trie_next, trie_before, r);
        if (s->sh_node[j]) s->best[nb] = s->sh_node[j], s->best_rank[nb++] = r;
    }
    return nb;
}

static void learn(rst *s, int *L, const int *tokens, int n) {
    for (int i = 0; i < n; i++) s->seq[(*L)++] = tokens[i];
}

static int rst_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    rst *s = d->impl;
    memcpy(s->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, s->f, prompt, n_prompt, s->logits, err)) return -1;
    int first = dec_pick(d, s->logits, n_prompt);
    learn(s, &L, &first, dec_emit(d, &first, 1));
    while (!d->done) {
        /* 1-3. the trie, no deeper than what could still be emitted */
        int depth = d->max_new - d->n_out - 1;
        if (depth > s->cont) depth = s->cont;
        int occ = 0, match = depth > 0 ? retrieve(s, s->seq, L, depth, d->end_id, &occ) : 0;
        int nb = !match ? 0 : s->n_shape ? choose_shape(s) : choose(s);
        /* 4. one target pass: the current token, then the trie */
        int rows = 1 + nb;
        s->tok[0] = s->seq[L - 1], s->par[0] = -1;
        s->row_of[0] = 0;
        for (int i = 0; i < nb; i++) {
            int x = s->best[i];
            s->row_of[x] = 1 + i;
            s->tok[1 + i] = s->t_tok[x], s->par[1 + i] = s->row_of[s->t_par[x]];
        }
        if (dec_eval(d, DEC_TARGET, s->f, rows, s->tok, s->par, NULL, rows, s->logits, 0, err))
            return -1;
        int np, n_emit = token_tree_verify(d, rows, s->tok, s->par, s->logits, L - 1, s->walk,
                                           s->path, &np, s->em);
        int emitted = dec_emit(d, s->em, n_emit);
        dec_step_done(d, rows, token_tree_depth(rows, s->par, s->depth_of), np - 1, emitted);
        if (match) {
            dec_count(d, RC_HITS, 1), dec_count(d, RC_MATCH_LEN, match);
            dec_count(d, RC_DRAFTED, nb), dec_count(d, RC_ACCEPTED, np - 1);
            dec_count(d, RC_RETRIEVED, occ);
        }
        if (s->n_shape) { /* the ranks into walk's first half (verify is done with it) */
            for (int r = 1; r < rows; r++) s->walk[r] = s->best_rank[r - 1];
            token_tree_count_ranks(d, rows, s->par, s->path, np, s->walk, RC_RANK0, RC_OFFER0,
                                   s->walk + rows);
        }
        learn(s, &L, s->em, emitted);
        if (d->done) break;
        if (fwd_commit(s->f, s->path, np, err)) return -1;
    }
    return 0;
}

static void rst_destroy(dec *d) {
    rst *s = d->impl;
    if (!s) return;
    fwd_free(s->f);
    tstore_free(s->ds);
    free(s->t_tok), free(s->t_par), free(s->t_cnt), free(s->t_depth), free(s->t_slot);
    free(s->row_of), free(s->hash), free(s->best), free(s->logits), free(s->tok), free(s->par);
    free(s->path), free(s->em), free(s->depth_of), free(s->walk), free(s->seq);
    free(s->t_child), free(s->t_sib), free(s->sh_par), free(s->sh_rank), free(s->sh_node);
    free(s->best_rank);
    free(s);
}

static const stat_def rst_counters[RC_N] = {
    [RC_HITS] = {"hits", STAT_INT, STAT_SUM, STAT_DET,
                 "target steps whose context's suffix occurred in the datastore (the others: 1 "
                 "row)"},
    [RC_MATCH_LEN] = {"match_len", STAT_INT, STAT_SUM, STAT_DET,
                      "lengths of the matched suffixes (mean: / hits)"},
    [RC_DRAFTED] = {"drafted_nodes", STAT_INT, STAT_SUM, STAT_DET,
                    "trie nodes verified (the draft trees' sizes)"},
    [RC_ACCEPTED] = {"accepted", STAT_INT, STAT_SUM, STAT_DET,
                     "of them, tokens accepted (the accepted paths' lengths)"},
    [RC_RETRIEVED] = {"retrieved", STAT_INT, STAT_SUM, STAT_DET,
                      "occurrences whose continuations were read (at most k a hit)"},
    [RC_RANK0] = {"accept_rank0", STAT_INT, STAT_SUM, STAT_DET,
                  "shape=sequoia: accepted tokens that were their parent's most frequent "
                  "continuation (/ hits: accept= P0 for a one-level tree)"},
    [RC_RANK1] = {"accept_rank1", STAT_INT, STAT_SUM, STAT_DET,
                  "shape=sequoia: accepted tokens of sibling rank 1"},
    [RC_RANK2] = {"accept_rank2", STAT_INT, STAT_SUM, STAT_DET,
                  "shape=sequoia: accepted tokens of sibling rank 2"},
    [RC_RANK3UP] = {"accept_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                    "shape=sequoia: accepted tokens of sibling rank 3 or more"},
    [RC_OFFER0] = {"offered_rank0", STAT_INT, STAT_SUM, STAT_DET,
                   "shape=sequoia: candidates of rank 0 below a node the verifier reached (accept_rank0 / "
                   "offered_rank0: Sequoia's p[0], from any tree; `decbench sequoia --fit`)"},
    [RC_OFFER1] = {"offered_rank1", STAT_INT, STAT_SUM, STAT_DET,
                   "shape=sequoia: candidates of rank 1 below a node the verifier reached"},
    [RC_OFFER2] = {"offered_rank2", STAT_INT, STAT_SUM, STAT_DET,
                   "shape=sequoia: candidates of rank 2 below a node the verifier reached"},
    [RC_OFFER3UP] = {"offered_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                     "shape=sequoia: candidates of rank 3 or more below a node the verifier reached"},
};

/* clang-format off */
const dec_vtable dec_rest_vtable = {
    .name = "rest",
    .summary = "REST: draft trees retrieved from a datastore by the context's longest suffix, no "
               "draft model (He et al. 2023)",
    .params = {
        [P_DS] = {"ds", PARAM_STR, 0, 0, 0, {0},
         "FILE: the datastore, from `decbench datastore build`; required"},
        [P_MAX_SPAN] = {"max_span", PARAM_INT, 16, 1, 64, {0},
         "longest context suffix looked up (the reference's max_token_span)"},
        [P_MIN_SPAN] = {"min_span", PARAM_INT, 2, 1, 64, {0}, "shortest context suffix looked up"},
        [P_NUM_DRAFT] = {"num_draft", PARAM_INT, 64, 1, 256, {0},
         "trie nodes verified per step at most (the reference's num_draft)"},
        [P_CONT] = {"cont", PARAM_INT, 10, 1, 64, {0},
         "tokens read after each occurrence (the retriever's long)"},
        [P_K] = {"k", PARAM_INT, 5000, 1, 100000, {0}, "occurrences read per lookup at most"},
        [P_SHAPE] = {"shape", PARAM_ENUM, SHAPE_COUNT, 0, 0, {"count", "sequoia"},
         "count: the num_draft most frequent trie nodes (the reference); sequoia: Sequoia's tree "
         "of num_draft nodes for accept=, laid on the trie by continuation rank", .quiet = 1},
        [P_LEVELS] = {"levels", PARAM_INT, 6, 1, SEQUOIA_MAX_DEPTH, {0},
         "shape=sequoia: the tree's depth at most", .quiet = 1},
        [P_ACCEPT] = {"accept", PARAM_STR, 0, 0, 0, {0}, "shape=sequoia: acceptance by rank "
         "P0/P1/... (default " REST_SEQUOIA_ACCEPT ")"},
    },
    .create = rst_create,
    .generate = rst_generate,
    .destroy = rst_destroy,
    .counters = rst_counters,
    .n_counters = RC_N,
    .tune_grid = "num_draft=8,16,64",
};
/* clang-format on */
