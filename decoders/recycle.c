/* recycle.c: Token Recycling (Luo, Wang, Zhu, Zhang, Zhang, Yang, Xu, Che, "Turning Trash into
 * Treasure: Accelerating Inference of Large Language Models with Token Recycling", ACL 2025,
 * arXiv 2408.08696; reference code github.com/Luowaterbi/TokenRecycling,
 * evaluation/inference_recycling.py and model/recycling/tree_template_.py), no draft model.
 *
 * Section 3.1: an adjacency matrix M of vocab x k tokens holds, for each token, the k most
 * likely next tokens the target gave after it in some earlier pass (the "candidate tokens"
 * every pass computes and plain decoding throws away). Section 3.2: each step a STATIC tree is
 * read from M breadth-first, rooted at the current token: a node of the template with path
 * (r_1, ..., r_d) is the r_d-th candidate of its parent's token. One target pass verifies the
 * whole tree with the tree mask (decoders/token_tree.h: the longest path of target tokens and
 * the bonus token; at T > 0 the same tree as fixed guesses, so greedy, coupled and standard
 * sampling are exact as for the tree and suffix decoders). Section 3.3: then every row of the
 * pass, accepted or not, overwrites its token's row of M with the top-k of its logits; a token
 * on several rows keeps its last row's (the paper's "last occurrence", the best of its three
 * update rules in MAT, Figure 3(c); the reference's GPU scatter leaves the choice to CUDA).
 * The prompt pass's last row updates the prompt's last token the same way.
 *
 * Hot start (section 3.1): M outlives the prompt (the reference keeps one matrix for the whole
 * benchmark), so each prompt starts from what the earlier ones left; it is the decoder's state
 * (`run --state-save/--state-load`, a "matrix" file: the frame of decoders/state_file.h, u32 k,
 * u32 rows, then per filled row its token and k candidates, tokens ascending). warm=0 empties M
 * before every prompt (a cold start, the ablation of smpanaro/token-recycling's "Cold Start").
 *
 * The tree (tree=): `paper` is the reference's default template "2.2.2", 80 nodes over depths
 * 1-6 (8, 21, 25, 15, 8, 3 per depth), imbalanced: the earlier candidates get more children and
 * deeper subtrees (Appendix 8.1; paper_tree below, path by path). `uniform` is SpecInfer's
 * expansion <k_1, ..., k_m> (shape=, as tree:mode=static): every node of depth d-1 gets shape[d]
 * children. A template node whose rank is k or more (a candidate M does not hold) is dropped with
 * its subtree. nodes= caps the tree: the kept nodes are those of smallest depth + rank sum
 * (their path's estimated likelihood if each deeper level and each lower rank halved it), ties
 * in template order, so a parent is always kept before its children and a small budget keeps
 * the deep chain of first candidates rather than the whole first level. `sequoia` is Sequoia's
 * tree (decoders/sequoia.h, arXiv 2402.12374): the shape of at most nodes= nodes and depth=
 * levels that maximises the expected accepted tokens for the acceptance by candidate rank
 * accept=P0/P1/... (cut to the k ranks M holds; default RECYCLE_SEQUOIA_ACCEPT, measured as it
 * says; the accept_rank counters give another pair's). Measured (20 prompts, as the default's
 * vector; docs/measurements/2026-11-29-sequoia.md): nodes=8 1.87 (8.8), 16 2.03 (16.6), 32
 * 2.22 (32.2), 80 2.46 (79.0) against the paper's template cut to the same sizes 1.87, 2.03,
 * 2.30, 2.60: equal when small, behind when large, where the matrix's
 * acceptance is not positional (a node below an accepted one is accepted more often than the
 * root's candidates: long repeated phrases), which the reference's hand-tuned template uses.
 *
 * Deviations from the reference, each for this runtime or exactness:
 *   - M starts empty (-1), not zeros: a node whose parent's row of M is still empty is not
 *     drafted, nor its subtree (the reference drafts token 0 there and always verifies all 80
 *     nodes: rows that cost a GPU nothing cost a CPU a row each). So an early step of a cold
 *     matrix is a plain step.
 *   - Nothing is drafted below an end token, and the tree is cut at the depth of what could
 *     still be emitted (max_new).
 *   - Candidates are the argmax order of the logits with ties to the lower id (torch.topk's
 *     tie order is unspecified); the update after a pass that ends the output is made too (the
 *     reference stops before it), so the saved matrix includes the last pass.
 *   - At T > 0 the candidates are still the logits' top-k (functions of the prefix, fixed
 *     guesses for the rejection rule); the paper and its code are greedy only.
 *
 * Measured (docs/measurements/2026-11-29-recycle.md: stories260K, the first 10 TinyStories
 * prompts x 256 new tokens, one decoder warm across them; tokens per target step, rows per
 * decode pass): the defaults 2.55 (78.1), cold (warm=0) 2.29 (62.3), nodes=32 2.24 (31.4),
 * nodes=16 1.96 (16.2), nodes=8 1.79 (8.6); suffix 2.03 (3.5), pld:ngram=3,k=10 1.48 (6.3),
 * lookahead:W=15,N=5,G=15 2.07 (75.6). Per row the small trees are the better buy on a CPU:
 * priced on a 110M model's cost curve, nodes=8 1.11x, the 80-node default 0.41x.
 *
 * Statistics: drafted = the tree's depth, accepted = the accepted path's length (as tree.c).
 * Counters (recycle_counters below): the tree sizes verified, steps with nothing drafted, rows of
 * M written, and the rows M holds after the sample. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/draft_tree.h"
#include "decoders/sequoia.h"
#include "decoders/state_file.h"
#include "decoders/token_tree.h"
#include "util/err.h"

enum { P_K, P_TREE, P_SHAPE, P_NODES, P_WARM, P_DEPTH, P_ACCEPT };
enum { TREE_PAPER, TREE_UNIFORM, TREE_SEQUOIA };
enum {
    RC_TREE_NODES,
    RC_TREE_NODES_MAX,
    RC_EMPTY_STEPS,
    RC_ROWS_WRITTEN,
    RC_MATRIX_ROWS,
    RC_RANK0, /* RC_RANK0 + r: accepted tokens of candidate rank r, the last one for 3 and above */
    RC_RANK1,
    RC_RANK2,
    RC_RANK3UP,
    RC_OFFER0, /* RC_OFFER0 + r: candidates of rank r below a node on the accepted path */
    RC_OFFER1,
    RC_OFFER2,
    RC_OFFER3UP,
    RC_N
};

#define RECYCLE_MAX_NODES 1024 /* template nodes at most (tree=uniform's shapes grow fast) */
#define RECYCLE_MAX_K 32
/* tree=sequoia's default acceptance by rank: the matrix's rank-r candidate below a node the
 * verifier reached was the target's token in p[r] of the cases (stories260K, the first 20
 * TinyStories prompts x 256 new tokens, one warm decoder: `decbench run ... --decoder
 * recycle:tree=uniform,shape=4`, recycle.accept_rank0..3up (1045, 261, 152, 98) over
 * drafting_steps (2708); a one-level tree offers every rank at every drafting step). The matrix
 * a one-level tree fills differs a little from a deeper tree's. */
#define RECYCLE_SEQUOIA_ACCEPT "0.386/0.096/0.056/0.036"

/* The reference's default template "2.2.2" (model/recycling/tree_template_.py): each node as its
 * path of candidate ranks from the root, breadth-first (parents before children). */
static const char *const paper_tree =
    "0 1 2 3 4 5 6 7 "
    "00 01 02 03 04 05 06 07 10 11 12 13 20 21 22 30 31 40 50 60 70 "
    "000 001 002 003 004 005 006 007 010 011 012 020 021 030 040 050 060 070 100 101 110 200 "
    "300 400 500 "
    "0000 0001 0002 0003 0004 0010 0011 0020 0030 0040 0100 0200 1000 2000 3000 "
    "00000 00001 00002 00010 00020 00100 01000 10000 "
    "000000 000001 000100";

typedef struct {
    int k, warm, V;
    int *m;        /* V x k: row t holds t's candidates, most likely first; -1: empty row */
    long n_filled; /* rows of m filled */
    /* the template after the k filter and the nodes cap, breadth-first */
    int n_node, max_depth;
    int *t_par, *t_rank, *t_depth; /* t_par: template index, -1 the root */
    int *t_row;                    /* this step: the node's row in the pass, -1: not drafted */
    int *row_rank;                 /* this step: each row's candidate rank (row 0: unused) */
    fwd_ctx *f;
    float *logits;             /* (1 + n_node) x V */
    int *tok, *par;            /* the pass */
    int *path, *em, *depth_of; /* 1 + n_node each */
    int *walk;                 /* 2 (1 + n_node): token_tree_verify's scratch */
} recycle;

static int imin(int a, int b) {
    return a < b ? a : b;
}

/* Section 3.3: token tok's row of M becomes the top-k of the row of logits that followed it. */
static void update(dec *d, recycle *r, int tok, const float *l) {
    int *row = r->m + (size_t)tok * (size_t)r->k;
    r->n_filled += row[0] < 0;
    dtree_top_tokens(l, r->V, r->k, row, NULL); /* most likely first, ties to the lower id */
    dec_count(d, RC_ROWS_WRITTEN, 1);
}

static void clear_matrix(recycle *r) {
    for (size_t i = 0; i < (size_t)r->V * (size_t)r->k; i++) r->m[i] = -1;
    r->n_filled = 0;
}

/* ---- the template ------------------------------------------------------------------------- */

/* The full template before the k filter: the paper's paths or shape's expansion. par, rank and
 * depth have room for RECYCLE_MAX_NODES. */
static int full_template(const dec *d, int *par, int *rank, int *depth, int *n, char *err) {
    *n = 0;
    if (d->param[P_TREE] == TREE_PAPER) {
        const char *s = paper_tree;
        const char *start[RECYCLE_MAX_NODES];
        int len[RECYCLE_MAX_NODES];
        while (*s) {
            while (*s == ' ') s++;
            const char *b = s;
            while (*s >= '0' && *s <= '9') s++;
            int i = (*n)++, l = (int)(s - b);
            start[i] = b, len[i] = l, depth[i] = l, rank[i] = b[l - 1] - '0', par[i] = -1;
            for (int j = 0; j < i && l > 1; j++) /* the parent: the path without its last rank */
                if (len[j] == l - 1 && !memcmp(start[j], b, (size_t)(l - 1))) par[i] = j;
            if (l > 1 && par[i] < 0)
                return err_set(err, "recycle: template node %.*s has no parent", l, b);
        }
        return 0;
    }
    if (d->param[P_TREE] == TREE_SEQUOIA) {
        /* Sequoia's DP tree for accept= over at most nodes= nodes (the ranks M holds) */
        const char *acc = d->str[P_ACCEPT][0] ? d->str[P_ACCEPT] : RECYCLE_SEQUOIA_ACCEPT;
        sequoia_node *sq;
        if (sequoia_tree_text(acc, "recycle: accept", d->param[P_K], d->param[P_NODES],
                              d->param[P_DEPTH], &sq, n, err))
            return -1;
        for (int i = 0; i < *n; i++)
            par[i] = sq[i].parent, rank[i] = sq[i].rank, depth[i] = sq[i].depth;
        free(sq);
        return 0;
    }
    int n_shape;
    const int *shape = dec_param_list(d, P_SHAPE, &n_shape);
    long total = 0, level = 1;
    for (int i = 0; i < n_shape; i++) total += level *= shape[i];
    if (total > RECYCLE_MAX_NODES)
        return err_set(err, "recycle: shape grows %ld nodes, more than %d", total,
                       RECYCLE_MAX_NODES);
    int lo = 0, hi = 0; /* the previous depth's nodes; lo = hi = 0 and -1 parents: the root */
    for (int dep = 1; dep <= n_shape; dep++) {
        for (int p = dep == 1 ? -1 : lo; p < (dep == 1 ? 0 : hi); p++)
            for (int c = 0; c < shape[dep - 1]; c++) {
                int i = (*n)++;
                par[i] = p, rank[i] = c, depth[i] = dep;
            }
        lo = hi, hi = *n;
    }
    return 0;
}

/* The template the decoder drafts: full_template without the nodes of rank >= k (and their
 * subtrees), capped at `cap` nodes of the smallest depth + rank sum (ties: template order). */
static int build_template(dec *d, recycle *r, int cap, char *err) {
    int par[RECYCLE_MAX_NODES], rank[RECYCLE_MAX_NODES], depth[RECYCLE_MAX_NODES], n;
    int score[RECYCLE_MAX_NODES], keep[RECYCLE_MAX_NODES], map[RECYCLE_MAX_NODES];
    if (full_template(d, par, rank, depth, &n, err)) return -1;
    int max_score = 0;
    for (int i = 0; i < n; i++) {
        keep[i] = rank[i] < r->k && (par[i] < 0 || keep[par[i]]);
        score[i] = depth[i] + rank[i] + (par[i] < 0 ? 0 : score[par[i]] - depth[par[i]]);
        if (score[i] > max_score) max_score = score[i];
    }
    int kept = 0;
    for (int s = 1; s <= max_score; s++) /* a child's score exceeds its parent's */
        for (int i = 0; i < n; i++)
            if (keep[i] && score[i] == s) keep[i] = kept < cap ? (kept++, 2) : 0;
    r->n_node = 0, r->max_depth = 0;
    for (int i = 0; i < n; i++) {
        map[i] = -1;
        if (keep[i] != 2) continue;
        int j = map[i] = r->n_node++;
        r->t_par[j] = par[i] < 0 ? -1 : map[par[i]];
        r->t_rank[j] = rank[i], r->t_depth[j] = depth[i];
        if (depth[i] > r->max_depth) r->max_depth = depth[i];
    }
    return 0;
}

static int recycle_create(dec *d, char *err) {
    recycle *r = calloc(1, sizeof *r);
    if (!r) return err_set(err, "recycle: out of memory");
    d->impl = r;
    r->k = d->param[P_K], r->warm = d->param[P_WARM];
    if (d->param[P_TREE] != TREE_SEQUOIA && (d->str[P_ACCEPT][0] || d->param[P_DEPTH] != 6))
        return err_set(err,
                       "recycle: accept= and depth= shape tree=sequoia; tree=%s does not use "
                       "them",
                       d->vt->params[P_TREE].choices[d->param[P_TREE]]);
    r->V = d->env.target->cfg.vocab_size;
    if (r->k > r->V)
        return err_set(err, "recycle: k=%d candidates per token, but the vocabulary has %d tokens",
                       r->k, r->V);
    size_t N = RECYCLE_MAX_NODES;
    r->t_par = malloc(sizeof(int) * N), r->t_rank = malloc(sizeof(int) * N);
    r->t_depth = malloc(sizeof(int) * N), r->t_row = malloc(sizeof(int) * N);
    r->m = malloc(sizeof(int) * (size_t)r->V * (size_t)r->k);
    if (!r->t_par || !r->t_rank || !r->t_depth || !r->t_row || !r->m)
        return err_set(err, "recycle: out of memory");
    if (build_template(d, r, d->param[P_NODES], err)) return -1;
    clear_matrix(r);
    size_t R = (size_t)r->n_node + 1;
    r->logits = malloc(sizeof(float) * R * (size_t)r->V);
    r->tok = malloc(sizeof(int) * R), r->par = malloc(sizeof(int) * R);
    r->path = malloc(sizeof(int) * R), r->em = malloc(sizeof(int) * R);
    r->depth_of = malloc(sizeof(int) * R), r->walk = malloc(sizeof(int) * 2 * R);
    r->row_rank = malloc(sizeof(int) * R);
    if (!r->logits || !r->tok || !r->par || !r->path || !r->em || !r->depth_of || !r->walk ||
        !r->row_rank)
        return err_set(err, "recycle: out of memory");
    return dec_fwd_new(d, d->env.target, (int)R, &r->f, err);
}

/* Section 3.2: the template read from M below `cur`, as the rows of one pass (row 0: cur). A
 * node is drafted when its parent was, is not the end token, and has a filled row of M. */
static int draft(dec *d, recycle *r, int cur, int max_depth) {
    int rows = 1;
    r->tok[0] = cur, r->par[0] = -1;
    for (int i = 0; i < r->n_node; i++) {
        int p = r->t_par[i], prow = p < 0 ? 0 : r->t_row[p];
        r->t_row[i] = -1;
        if (prow < 0 || r->t_depth[i] > max_depth || r->tok[prow] == d->end_id) continue;
        const int *cand = r->m + (size_t)r->tok[prow] * (size_t)r->k;
        if (cand[0] < 0) continue;
        r->t_row[i] = rows;
        r->tok[rows] = cand[r->t_rank[i]], r->par[rows] = prow;
        r->row_rank[rows] = r->t_rank[i];
        rows++;
    }
    return rows;
}

static int recycle_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    recycle *r = d->impl;
    const size_t V = (size_t)r->V;
    if (!r->warm) clear_matrix(r);
    if (dec_prefill(d, DEC_TARGET, r->f, prompt, n_prompt, r->logits, err)) return -1;
    update(d, r, prompt[n_prompt - 1], r->logits);
    int L = n_prompt; /* tokens so far; the current one (the last) is not in the cache yet */
    int cur = dec_pick(d, r->logits, n_prompt); /* the argmax at temperature 0 */
    L += dec_emit(d, &cur, 1);
    while (!d->done) {
        int rows = draft(d, r, cur, imin(d->max_new - d->n_out - 1, r->max_depth));
        if (rows == 1) dec_count(d, RC_EMPTY_STEPS, 1);
        if (dec_eval(d, DEC_TARGET, r->f, rows, r->tok, r->par, NULL, rows, r->logits, 0, err))
            return -1;
        /* the longest path of target tokens, then the bonus token (at T > 0: plain sampling's
         * tokens, or distributed as them: token_tree.h) */
        int np, n_emit = token_tree_verify(d, rows, r->tok, r->par, r->logits, L - 1, r->walk,
                                           r->path, &np, r->em);
        int emitted = dec_emit(d, r->em, n_emit);
        dec_step_done(d, rows, token_tree_depth(rows, r->par, r->depth_of), np - 1, emitted);
        token_tree_count_ranks(d, rows, r->par, r->path, np, r->row_rank, RC_RANK0, RC_OFFER0,
                               r->walk);
        dec_count(d, RC_TREE_NODES, rows - 1);
        if (rows - 1 > d->st->counters[RC_TREE_NODES_MAX])
            dec_count_set(d, RC_TREE_NODES_MAX, rows - 1);
        /* section 3.3: every row, in order (a later duplicate overwrites an earlier one) */
        for (int i = 0; i < rows; i++) update(d, r, r->tok[i], r->logits + (size_t)i * V);
        if (d->done) break;
        if (fwd_commit(r->f, r->path, np, err)) return -1;
        L += emitted;
        cur = r->em[emitted - 1];
    }
    dec_count_set(d, RC_MATRIX_ROWS, (double)r->n_filled);
    return 0;
}

static void recycle_destroy(dec *d) {
    recycle *r = d->impl;
    if (!r) return;
    fwd_free(r->f);
    free(r->m), free(r->t_par), free(r->t_rank), free(r->t_depth), free(r->t_row);
    free(r->logits), free(r->tok), free(r->par), free(r->path), free(r->em), free(r->depth_of);
    free(r->walk), free(r->row_rank);
    free(r);
}

/* ---- counters and state -------------------------------------------------------------------- */

static const stat_def recycle_counters[RC_N] = {
    [RC_TREE_NODES] = {"tree_nodes", STAT_INT, STAT_SUM, STAT_DET,
                       "draft tokens in the trees the target verified (the current token not "
                       "counted)"},
    [RC_TREE_NODES_MAX] = {"tree_nodes_max", STAT_INT, STAT_MAX, STAT_DET,
                           "the largest tree of the sample"},
    [RC_EMPTY_STEPS] = {"empty_steps", STAT_INT, STAT_SUM, STAT_DET,
                        "target steps with nothing drafted (the current token's row of the "
                        "matrix empty, or no room left)"},
    [RC_ROWS_WRITTEN] = {"rows_written", STAT_INT, STAT_SUM, STAT_DET,
                         "rows of the adjacency matrix overwritten with a pass's top-k (one per "
                         "row of every target pass)"},
    [RC_MATRIX_ROWS] = {"matrix_rows", STAT_INT, STAT_MAX, STAT_DET,
                        "tokens whose row of the adjacency matrix is filled after the sample "
                        "(its memory: 4 k bytes per vocabulary token, filled or not)"},
    [RC_RANK0] = {"accept_rank0", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were their parent's first candidate in the matrix"},
    [RC_RANK1] = {"accept_rank1", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were the second candidate"},
    [RC_RANK2] = {"accept_rank2", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were the third candidate"},
    [RC_RANK3UP] = {"accept_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                    "accepted tokens that were the fourth candidate or lower"},
    [RC_OFFER0] = {"offered_rank0", STAT_INT, STAT_SUM, STAT_DET,
                   "candidates of rank 0 below a node the verifier reached (accept_rank0 / "
                   "offered_rank0: Sequoia's p[0], from any tree; `decbench sequoia --fit`)"},
    [RC_OFFER1] = {"offered_rank1", STAT_INT, STAT_SUM, STAT_DET,
                   "candidates of rank 1 below a node the verifier reached"},
    [RC_OFFER2] = {"offered_rank2", STAT_INT, STAT_SUM, STAT_DET,
                   "candidates of rank 2 below a node the verifier reached"},
    [RC_OFFER3UP] = {"offered_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                     "candidates of rank 3 or more below a node the verifier reached"},
};

static const char MAGIC[8] = {'D', 'B', 'R', 'E', 'C', 'Y', 'C', '1'};
#define HEADER_BYTES 24 /* magic, version, vocabulary, k, rows */

static int recycle_state_check(const dec *d, char *err) {
    if (!d->param[P_WARM])
        return err_set(err, "%s empties its matrix before every prompt (warm=0); use warm=1",
                       d->spec);
    return 0;
}

static int recycle_state_save(const dec *d, const char *path, char *what, size_t n_what,
                              char *err) {
    const recycle *r = d->impl;
    const size_t K = (size_t)r->k;
    size_t size = HEADER_BYTES + (size_t)r->n_filled * 4 * (1 + K) + 8;
    unsigned char *buf = malloc(size), *b = buf;
    if (!buf) return err_set(err, "%s: out of memory for %zu bytes", path, size);
    b = sf_put_head(b, MAGIC, r->V);
    b = sf_put_u32(sf_put_u32(b, (uint32_t)r->k), (uint32_t)r->n_filled);
    for (int t = 0; t < r->V; t++) {
        const int *row = r->m + (size_t)t * K;
        if (row[0] < 0) continue;
        b = sf_put_u32(b, (uint32_t)t);
        for (size_t j = 0; j < K; j++) b = sf_put_u32(b, (uint32_t)row[j]);
    }
    int rc = sf_write(buf, size, "matrix", path, err);
    free(buf);
    if (rc == 0) snprintf(what, n_what, "%ld rows of %d candidates", r->n_filled, r->k);
    return rc;
}

/* Checks the whole file; only then replaces M (on error M is unchanged). */
static int recycle_state_load(dec *d, const char *path, char *err) {
    recycle *r = d->impl;
    unsigned char *buf;
    size_t size = 0;
    if (sf_read(path, "matrix", &buf, &size, err)) return -1;
    int rc = -1;
    const size_t end = size - 8;
    if (sf_check_head(buf, size, MAGIC, HEADER_BYTES, r->V, "matrix", path, err)) goto done;
    uint32_t k = sf_get_u32(buf + 16), n = sf_get_u32(buf + 20);
    if (k != (uint32_t)r->k) {
        err_set(err, "%s: byte 16: rows of %u candidates, the decoder keeps k=%d", path, k, r->k);
        goto done;
    }
    if (n > (uint32_t)r->V) {
        err_set(err, "%s: byte 20: %u rows, more than the vocabulary's %d tokens", path, n, r->V);
        goto done;
    }
    const size_t rec = 4 * (1 + (size_t)k);
    size_t at = HEADER_BYTES;
    long prev = -1;
    for (uint32_t i = 0; i < n; i++, at += rec) {
        if (end - at < rec) {
            err_set(err, "%s: byte %zu: truncated in row %u of %u", path, at, i + 1, n);
            goto done;
        }
        uint32_t t = sf_get_u32(buf + at);
        if (t >= (uint32_t)r->V || (long)t <= prev) {
            err_set(err, "%s: byte %zu: row token %u, expected %ld..%d (ascending)", path, at, t,
                    prev + 1, r->V - 1);
            goto done;
        }
        prev = t;
        for (uint32_t j = 0; j < k; j++) {
            uint32_t c = sf_get_u32(buf + at + 4 + 4 * j);
            int dup = 0;
            for (uint32_t q = 0; q < j; q++) dup |= sf_get_u32(buf + at + 4 + 4 * q) == c;
            if (c >= (uint32_t)r->V || dup) {
                err_set(err, "%s: byte %zu: candidate %u of token %u: %u, %s", path, at + 4 + 4 * j,
                        j + 1, t, c, dup ? "a repeat of an earlier one" : "outside the vocabulary");
                goto done;
            }
        }
    }
    if (sf_check_end(buf, at, end, path, err)) goto done;
    clear_matrix(r);
    for (size_t a = HEADER_BYTES; a < end; a += rec) {
        int *row = r->m + (size_t)sf_get_u32(buf + a) * (size_t)k;
        for (uint32_t j = 0; j < k; j++) row[j] = (int)sf_get_u32(buf + a + 4 + 4 * j);
    }
    r->n_filled = n;
    rc = 0;
done:
    free(buf);
    return rc;
}

/* clang-format off */
const dec_vtable dec_recycle_vtable = {
    .name = "recycle",
    .summary = "Token Recycling: a static tree read from an adjacency matrix of the top-k tokens "
               "earlier passes gave after each token, no draft model (Luo et al. 2024)",
    .params = {
        [P_K] = {"k", PARAM_INT, 8, 1, RECYCLE_MAX_K, {0}, "candidates kept per token (the matrix's width)"},
        [P_TREE] = {"tree", PARAM_ENUM, TREE_PAPER, 0, 0, {"paper", "uniform", "sequoia"},
         "paper: the reference's 80-node template; uniform: shape's children per depth; "
         "sequoia: the DP's best tree of nodes= nodes for accept="},
        [P_SHAPE] = {"shape", PARAM_LIST, 0, 1, 32, {0}, "tree=uniform: children per node at each depth",
         "4-2-2-1"},
        [P_NODES] = {"nodes", PARAM_INT, 80, 1, RECYCLE_MAX_NODES, {0},
         "tree size at most: the nodes of smallest depth + rank sum"},
        [P_WARM] = {"warm", PARAM_INT, 1, 0, 1, {0}, "keep the matrix across prompts (hot start)"},
        [P_DEPTH] = {"depth", PARAM_INT, 6, 1, 16, {0}, "tree=sequoia: the tree's depth at most",
         .quiet = 1},
        [P_ACCEPT] = {"accept", PARAM_STR, 0, 0, 0, {0}, "tree=sequoia: acceptance by rank P0/P1/... "
         "(default " RECYCLE_SEQUOIA_ACCEPT ")"},
    },
    .create = recycle_create,
    .generate = recycle_generate,
    .destroy = recycle_destroy,
    .counters = recycle_counters,
    .n_counters = RC_N,
    .state_name = "matrix",
    .state_check = recycle_state_check,
    .state_save = recycle_state_save,
    .state_load = recycle_state_load,
    .tune_grid = "nodes=8,16,32,80",
};
/* clang-format on */
