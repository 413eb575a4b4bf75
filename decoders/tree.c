/* tree.c: token-tree speculative decoding with a draft model (greedy, coupled and standard
 * sampling: see "Sampling" below).
 *
 * Each step the draft model grows a tree of candidate continuations below the current token,
 * level by level, and the target verifies the WHOLE tree in one pass with the tree mask
 * (model/forward.h): row r's argmax is the greedy token after r's root-to-r path, so the
 * longest path whose every token is the target's argmax after its parent is exactly what
 * greedy decoding would emit, and the target's argmax after that path's last node is one more
 * (the bonus token). A chain draft (spec.c) is the one-branch case: a tree offers the target
 * the draft's second and third choices too, where a chain has one guess per position.
 *
 * Four ways to grow the tree (mode=):
 *   static   SpecInfer's expansion-based token tree (Miao et al., arXiv 2305.09781, section 3:
 *            a static expansion configuration <k_1, ..., k_m>): every node at depth d-1 gets
 *            the draft's k_d most probable next tokens as children (shape=k_1-...-k_m, e.g.
 *            4-2-2-1: 4 + 8 + 16 + 16 = 44 nodes). Medusa's trees are of this kind.
 *   dynamic  EAGLE-2's context-aware dynamic tree (Li et al., arXiv 2406.16858, section 4,
 *            expansion and reranking phases): a node's value is the draft's probability of its
 *            whole path (the product of its softmax probabilities); at each depth the k
 *            most valuable nodes of the newest level are expanded with their k most probable
 *            children (depth levels), and the `nodes` most valuable nodes of all candidates form
 *            the tree (an ancestor is never less valuable than its descendants, so they are a
 *            tree). Where the draft is sure the tree grows deep and narrow, where it hesitates,
 *            wide and shallow.
 *   split    llama.cpp's examples/speculative tree (its --draft-p-split rule): one draft
 *            sequence; at each depth every drafting sequence takes its most probable token, and
 *            for f = 1..7 in order, while the draft's f-th candidate has probability > p_split
 *            and fewer than `branches` sequences exist, a copy of the sequence takes that
 *            candidate instead (a new branch). A sequence stops drafting once the tree holds
 *            `nodes` tokens (the reference's n_draft), so the last depth may overshoot by up to
 *            branches - 1.
 *   sequoia  Sequoia's tree (Chen et al., arXiv 2402.12374, section 3.1; decoders/sequoia.h):
 *            one static shape, fixed at creation, of at most `nodes` nodes and depth `depth`
 *            that maximises the expected accepted tokens for the acceptance by sibling rank
 *            accept=P0/P1/... (the chance that the draft's rank-r candidate below a node the
 *            verifier reached is the target's token), by dynamic programming. Each step it is
 *            read from the draft as static mode's top-k: the node of rank r below a parent is
 *            the draft's r-th most probable token after the parent's path. The default vector
 *            is this pair's, measured as SEQUOIA_DEFAULT_ACCEPT says; for another pair run any
 *            tree and divide accept_rank<r> by offered_rank<r> (`decbench sequoia --fit` does,
 *            prints the tree and picks the budget for a cost curve). Deviations: the ranks are
 *            the draft's top-k at temperature 1 (Sequoia samples its children without
 *            replacement from the draft at T > 0; here, as draw=0, they are fixed guesses at
 *            every temperature), and the DP may skip a rank (a measured vector need not
 *            decrease).
 *
 * The draft evaluates the tree level by level, one pass per depth: the first pass feeds the
 * text the draft has not seen yet (at most the last accepted token it did not evaluate and
 * the bonus token) and gives the root's children; each later pass evaluates the newest
 * level's nodes that will be expanded (fwd_eval_more: their ancestors' K/V stay in the draft's
 * scratch from the earlier passes). After verification the draft commits the accepted path's
 * nodes it evaluated (fwd_commit of a path), so it never evaluates a token twice. Nodes of the
 * deepest level are never evaluated by the draft (their children would not be used), nor is
 * an end token (nothing follows it).
 *
 * Bounds, as spec.c: the tree is no deeper than the tokens that could still be emitted
 * (max_new, so the target's context) and than the draft's context (a node is evaluated at
 * position L + depth - 1, L the text length); once the draft's context is full every step is a
 * plain target step (1 row, drafted 0).
 *
 * Statistics: drafted = the tree's depth (its longest path, the framework's definition),
 * accepted = the accepted path's length; acceptance by position is then "the tree offered a
 * node at that depth". The decoder's counters (tree_counters below) say how large the trees
 * were and which branch the accepted tokens took (rank 0 = the draft's own first choice: all
 * a chain would have offered).
 *
 * Deviations from the references, each for exactness, bounds or this runtime:
 *   - Probabilities are the draft's softmax at temperature 1. llama.cpp's p_split compares the
 *     probabilities its sampler chain leaves (default top-k 40, top-p 0.95, min-p 0.05,
 *     temperature 0.8 before the softmax), EAGLE-2 the draft head's softmax.
 *   - llama.cpp evaluates the last depth's tokens with the draft as well (and stops the draft
 *     afterwards); here they are not evaluated (their logits would not be used).
 *   - The end token is a leaf and ends acceptance (no bonus after it).
 *
 * Sampling (decoder.h). Greedy and coupled mode grow the trees above and accept the deepest
 * path plain decoding confirms. In standard mode two rules verify a static tree:
 *   draw=0   (default) the children are the draft's top-k, fixed guesses: at each node the
 *            rejection rule for deterministic candidates (accept x with p'(x), drop it from p'),
 *            as EAGLE verifies its top-k tree and LADE its n-grams (token_tree_verify);
 *   draw=1   each node's shape[d] children are independent draws from the draft's
 *            distribution q, verified by SpecInfer's multi-step speculative sampling (Miao et
 *            al., arXiv 2305.09781, section 4.2, VerifyStochastic): every draw is tested in
 *            turn, duplicates included, with min(1, p'(x) / q(x)), a rejection replacing p' by
 *            norm(max(0, p' - q)); the residual after the last one gives the token
 *            (token_tree_verify_drawn). The draft rows of every evaluated node are kept for it.
 *            Only for mode=static (dynamic and split choose children by rank); greedy and
 *            coupled runs are draw=0's exactly.
 * Measured (stories260K target, llama2xs draft, the first 20 TinyStories prompts x 256 new
 * tokens, standard sampling, seed 7; tokens per target step, target rows): at T=1 shape
 * 4-2-2-1 draw=0 2.32 (78897 rows), draw=1 2.85 (63450); 2-2-1 1.91 vs 2.47; spec:gamma=4
 * 2.30. At T=0.7: 4-2-2-1 2.66 vs 2.95, 2-2-1 2.29 vs 2.41. Drawn children cover where the
 * draft puts its mass instead of its k most likely tokens, and a rejected draw subtracts all
 * of q from the residual where a rejected guess removes its own token only; the gain was
 * larger at T=1 than at 0.7. The accept_rank counters count a drawn token by its rank in q.
 *
 * Measured at temperature 0 (stories260K target, llama2xs draft, the first 20 TinyStories
 * prompts x 256 new tokens; tokens per target step, target rows per decode pass): a chain,
 * spec:gamma=4, 2.50 (4.7) and gamma=6 2.73 (6.6); static 4-2-2-1 (the default) 3.27 (41.2),
 * 2-2-1-1 2.95 (13.9), 2-1-1-1-1-1 3.02 (12.0); dynamic nodes=16 (default) 3.43 (15.6),
 * nodes=8 3.00 (8.4), nodes=32,depth=8 3.87 (29.8); split p_split=10 (default) 3.40 (17.2),
 * p_split=5 3.29 (16.5), p_split=20 3.13 (16.6). The one-branch trees (shape 1-1-1-1, dynamic
 * k=1,depth=4, split branches=1,nodes=4) take exactly spec:gamma=4's steps, rows and draft passes
 * (tests/test_tree.c). Of the static tree's 3012 accepted tokens, 83% were the draft's first
 * choice, 13% its second, 4% its third or lower; 454 of its 1306 decode steps took a branch a
 * chain would not have offered. Per row the dynamic tree is the most effective (3.43 tokens
 * for 15.6 rows); the static default spends 41 rows for 3.27 (a SpecInfer-style shape, kept as the
 * default for comparison with the papers; a CPU user should prefer mode=dynamic or a narrower
 * shape).
 * mode=sequoia, same prompts (docs/measurements/2026-11-29-sequoia.md): nodes=4 2.50 (4.7, the
 * chain of first choices, spec:gamma=4's figures), nodes=8 2.87 (8.4), nodes=16 3.26 (15.6),
 * nodes=32,depth=8 3.73 (29.8), nodes=44,depth=8 3.91 (40.5): at 44 nodes 0.64 tokens per step
 * more than the static 4-2-2-1 for the same rows; at 16 nodes 0.17 fewer than dynamic, whose
 * tree follows the draft's confidence step by step where Sequoia's shape is fixed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/draft_tree.h"
#include "decoders/sequoia.h"
#include "decoders/token_tree.h"
#include "util/err.h"

enum { P_MODE, P_SHAPE, P_NODES, P_DEPTH, P_K, P_BRANCHES, P_SPLIT, P_DRAW, P_ACCEPT };
enum { MODE_STATIC, MODE_DYNAMIC, MODE_SPLIT, MODE_SEQUOIA };
/* The decoder's own counters (tree_counters below). */
enum {
    TC_TREE_NODES,
    TC_TREE_NODES_MAX,
    TC_BRANCH_STEPS,
    TC_RANK0, /* TC_RANK0 + r: accepted tokens of rank r, the last one for 3 and above */
    TC_RANK1,
    TC_RANK2,
    TC_RANK3UP,
    TC_DEPTH_MAX,
    TC_OFFER0, /* TC_OFFER0 + r: candidates of rank r below a node on the accepted path */
    TC_OFFER1,
    TC_OFFER2,
    TC_OFFER3UP,
    TC_N
};

#define TREE_MAX_NODES 1024 /* tokens in one tree (and in one static shape) at most */
#define SPLIT_CANDIDATES 8  /* llama.cpp tries candidates 1..7 for a split */
/* mode=sequoia's default acceptance by rank: the draft's rank-r candidate below a node the
 * verifier reached was the target's token in p[r] of the cases, at temperature 0 on the
 * stories260K target with the llama2xs draft, the first 20 TinyStories prompts x 256 new tokens:
 * `decbench run ... --decoder tree:shape=4`, then `decbench report --layout counters`:
 * tree.accept_rank0..3up (1479, 297, 111, 95) over drafting_steps (2223). A one-level tree
 * offers every rank at every drafting step, so each count over the steps is p[r]. */
#define SEQUOIA_DEFAULT_ACCEPT "0.665/0.134/0.050/0.043"

typedef struct {
    int last; /* node the sequence ends at, -1: the root */
    int drafting, skip;
} tseq;

typedef struct {
    int mode, depth_cfg, k, nodes, branches;
    int draw;     /* draw=1 in standard sampling: children drawn from the draft (SpecInfer) */
    int root_pos; /* this step's root (the current token) position */
    float *qlog;  /* draw: the draft rows children were drawn from: 0 the root's, 1 + drow */
    int *tdrow;   /* draw: per target row, its row of qlog */
    double p_split;
    const int *shape;
    int n_shape;
    int V, T_L, D_L, draft_ok;
    fwd_ctx *ft, *fd;
    int max_nodes, max_pass, max_trows;
    dtree dt; /* the step's tree */
    tseq *seq_s;
    int n_seq;
    float *tlog, *dlog, *rootlog; /* target pass; latest draft pass; the root's draft logits */
    int *ttok, *tpar;             /* target pass: tokens, parents */
    int *rnode;                   /* the node of each target row but the root */
    int *dtok, *dpar;             /* a draft pass: tokens, parents (scratch rows) */
    int *path, *dpath, *em;
    int *walk; /* 2 x max_trows: token_tree_verify's scratch */
    int *seq; /* the text, then this step's emitted tokens */
    /* sequoia: the DP's tree (breadth-first), per template node its children, the node it
     * became this step (-1: not grown), and per parent (0: the root, 1 + i) the ranks needed */
    sequoia_node *sq;
    int n_sq, sq_depth;
    int *sq_kids, *sq_map, *sq_kmax;
} tree;

static int imin(int a, int b) {
    return a < b ? a : b;
}

/* Nodes a static shape has: k_1 + k_1 k_2 + ... (stops counting past TREE_MAX_NODES). */
static long shape_nodes(const int *shape, int n, long *widest) {
    long total = 0, level = 1;
    *widest = 0;
    for (int i = 0; i < n && total <= TREE_MAX_NODES; i++) {
        level *= shape[i];
        total += level;
        if (level > *widest) *widest = level;
    }
    return total;
}

/* mode=sequoia: the tree of at most `nodes` nodes and depth `depth` that maximises the expected
 * accepted tokens for the acceptance vector accept= (sequoia.h), and the sizes it needs: the
 * draft's scratch (every node with children is evaluated), its widest pass (the nodes with
 * children of one depth) and the most candidates one parent needs. */
static int sequoia_setup(dec *d, tree *t, int *max_scratch, int *widest_k, char *err) {
    const char *acc = d->str[P_ACCEPT][0] ? d->str[P_ACCEPT] : SEQUOIA_DEFAULT_ACCEPT;
    if (sequoia_tree_text(acc, "tree: accept", 0, t->nodes, t->depth_cfg, &t->sq, &t->n_sq, err))
        return -1;
    size_t N = (size_t)t->nodes;
    t->sq_kids = calloc(N, sizeof(int)), t->sq_map = malloc(sizeof(int) * N);
    t->sq_kmax = calloc(N + 1, sizeof(int));
    if (!t->sq_kids || !t->sq_map || !t->sq_kmax) return err_set(err, "tree: out of memory");
    int per_depth[SEQUOIA_MAX_DEPTH + 1] = {0};
    *max_scratch = 0, t->max_pass = 1, t->sq_depth = 0;
    for (int i = 0; i < t->n_sq; i++) {
        const sequoia_node *s = &t->sq[i];
        if (s->parent >= 0 && t->sq_kids[s->parent]++ == 0) {
            ++*max_scratch;
            if (++per_depth[s->depth - 1] > t->max_pass) t->max_pass = per_depth[s->depth - 1];
        }
        if (s->rank + 1 > t->sq_kmax[s->parent + 1]) t->sq_kmax[s->parent + 1] = s->rank + 1;
        if (s->rank + 1 > *widest_k) *widest_k = s->rank + 1;
        if (s->depth > t->sq_depth) t->sq_depth = s->depth;
    }
    t->max_nodes = t->n_sq > 0 ? t->n_sq : 1;
    return 0;
}

static int tree_create(dec *d, char *err) {
    tree *t = calloc(1, sizeof *t);
    if (!t) return err_set(err, "tree: out of memory");
    d->impl = t;
    t->mode = d->param[P_MODE];
    t->shape = dec_param_list(d, P_SHAPE, &t->n_shape);
    t->nodes = d->param[P_NODES], t->depth_cfg = d->param[P_DEPTH], t->k = d->param[P_K];
    t->branches = d->param[P_BRANCHES], t->p_split = d->param[P_SPLIT] / 100.0;
    if (d->param[P_DRAW] && t->mode != MODE_STATIC)
        return err_set(err,
                       "tree: draw=1 draws the children of a static shape (SpecInfer's "
                       "expansion); mode=%s picks them by rank",
                       d->vt->params[P_MODE].choices[t->mode]);
    if (d->str[P_ACCEPT][0] && t->mode != MODE_SEQUOIA)
        return err_set(err,
                       "tree: accept= is the acceptance by rank mode=sequoia shapes its "
                       "tree for; mode=%s does not use it",
                       d->vt->params[P_MODE].choices[t->mode]);
    t->draw = d->param[P_DRAW] && d->env.sampling.temperature > 0 &&
              d->env.sampling.mode == DEC_SAMPLING_STANDARD;
    t->V = d->env.target->cfg.vocab_size;
    t->T_L = d->env.target->cfg.seq_len, t->D_L = d->env.draft->cfg.seq_len;
    /* node store, the widest draft pass, the draft's scratch (all its passes of a step), the
     * target pass */
    int max_scratch = 0, widest_k = t->k > SPLIT_CANDIDATES ? t->k : SPLIT_CANDIDATES;
    if (t->mode == MODE_STATIC) {
        long widest, total = shape_nodes(t->shape, t->n_shape, &widest), last_level = 1;
        if (total > TREE_MAX_NODES) {
            char list[64] = "";
            for (int i = 0; i < t->n_shape; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "-" : "",
                         t->shape[i]);
            return err_set(err, "tree: shape %s grows more than %d nodes", list, TREE_MAX_NODES);
        }
        for (int i = 0; i < t->n_shape; i++) {
            last_level *= t->shape[i];
            if (t->shape[i] > widest_k) widest_k = t->shape[i];
        }
        t->max_nodes = (int)total, t->max_pass = (int)widest;
        max_scratch = (int)(total - last_level); /* the deepest level is never evaluated */
    } else if (t->mode == MODE_DYNAMIC) {
        t->max_nodes = t->k + (t->depth_cfg - 1) * t->k * t->k, t->max_pass = t->k;
        max_scratch = (t->depth_cfg - 1) * t->k;
    } else if (t->mode == MODE_SEQUOIA) {
        if (sequoia_setup(d, t, &max_scratch, &widest_k, err)) return -1;
    } else {
        t->max_nodes = t->nodes + t->branches, t->max_pass = t->branches;
        max_scratch = t->max_nodes;
    }
    if (widest_k > t->V)
        return err_set(err, "tree: %d candidates per node, but the vocabulary has %d tokens",
                       widest_k, t->V);
    int tree_max = t->mode == MODE_DYNAMIC ? imin(t->nodes, t->max_nodes) : t->max_nodes;
    t->max_trows = 1 + tree_max;
    size_t V = (size_t)t->V, N = (size_t)t->max_nodes, P = (size_t)t->max_pass;
    size_t TR = (size_t)t->max_trows;
    t->dt.node = malloc(sizeof *t->dt.node * N);
    t->seq_s = malloc(sizeof *t->seq_s * (size_t)t->branches);
    t->tlog = malloc(sizeof(float) * TR * V);
    t->dlog = malloc(sizeof(float) * P * V);
    t->rootlog = malloc(sizeof(float) * V);
    t->ttok = malloc(sizeof(int) * TR), t->tpar = malloc(sizeof(int) * TR);
    t->rnode = malloc(sizeof(int) * TR);
    t->dtok = malloc(sizeof(int) * P), t->dpar = malloc(sizeof(int) * P);
    t->dt.eval = malloc(sizeof(int) * P);
    t->dt.order = malloc(sizeof(int) * N), t->path = malloc(sizeof(int) * TR);
    t->dpath = malloc(sizeof(int) * TR), t->em = malloc(sizeof(int) * TR);
    t->walk = malloc(sizeof(int) * 2 * TR);
    t->dt.ctok = malloc(sizeof(int) * (size_t)widest_k);
    t->dt.clogp = malloc(sizeof(double) * (size_t)widest_k);
    t->seq = malloc(sizeof(int) * ((size_t)t->T_L + TR));
    if (!t->dt.node || !t->seq_s || !t->tlog || !t->dlog || !t->rootlog || !t->ttok || !t->tpar ||
        !t->rnode || !t->dtok || !t->dpar || !t->dt.eval || !t->dt.order || !t->path || !t->dpath ||
        !t->em || !t->dt.ctok || !t->dt.clogp || !t->seq || !t->walk)
        return err_set(err, "tree: out of memory");
    if (t->draw) {
        t->qlog = malloc(sizeof(float) * (1 + (size_t)max_scratch) * V);
        t->tdrow = malloc(sizeof(int) * TR);
        if (!t->qlog || !t->tdrow) return err_set(err, "tree: out of memory");
    }
    /* the draft's scratch holds every node evaluated in one step */
    if (dec_fwd_new(d, d->env.target, t->max_trows, &t->ft, err) ||
        dec_fwd_new(d, d->env.draft, max_scratch, &t->fd, err))
        return -1;
    return 0;
}

/* Feeds seq[dn..L) (the text the draft has not seen, ending with the current token, which it
 * never has) to the draft as a chain, commits it, and leaves the last row's logits (the
 * root's) in rootlog. The draft's cache only ever holds text (the prompt, then accepted
 * nodes), so it needs no resync. */
static int draft_catch_up(dec *d, tree *t, int L, char *err) {
    const int B = fwd_max_batch(t->fd);
    int dn = fwd_n_past(t->fd);
    if (dn > L - 1 && fwd_truncate(t->fd, dn = L - 1, err)) return -1; /* not in normal runs */
    while (dn < L) {
        int k = imin(L - dn, B), last = k - 1;
        if (dec_eval(d, DEC_DRAFT, t->fd, k, t->seq + dn, NULL, &last, 1, t->rootlog, 0, err))
            return -1;
        for (int i = 0; i < k; i++) t->path[i] = i;
        if (fwd_commit(t->fd, t->path, k, err)) return -1;
        dn += k;
    }
    return 0;
}

/* One draft pass over nodes eval[0..n) (each a child of the root or of a node evaluated in an
 * earlier pass of this step); their logits land in dlog, row i for eval[i]. */
static int draft_level(dec *d, tree *t, int n, char *err) {
    const int first = fwd_scratch_rows(t->fd);
    for (int i = 0; i < n; i++) {
        dtree_node *x = &t->dt.node[t->dt.eval[i]];
        t->dtok[i] = x->token;
        t->dpar[i] = x->parent < 0 ? -1 : t->dt.node[x->parent].drow;
        x->drow = first + i, x->lrow = i;
    }
    int rc = first == 0
                 ? dec_eval(d, DEC_DRAFT, t->fd, n, t->dtok, t->dpar, NULL, n, t->dlog, 0, err)
                 : dec_eval_more(d, DEC_DRAFT, t->fd, n, t->dtok, t->dpar, NULL, n, t->dlog, err);
    if (rc == 0 && t->draw) /* kept for verification: q of the children drawn from them */
        memcpy(t->qlog + (1 + (size_t)first) * t->V, t->dlog, sizeof(float) * (size_t)n * t->V);
    return rc;
}

/* The rank of token x in a row of draft logits: how many tokens come before it (larger logit,
 * ties to the lower id), top_tokens' order. */
static int rank_of(const float *l, int V, int x) {
    int r = 0;
    for (int v = 0; v < V; v++) r += l[v] > l[x] || (l[v] == l[x] && v < x);
    return r;
}

static const float *logits_of(const tree *t, int parent) {
    return parent < 0 ? t->rootlog : t->dlog + (size_t)t->dt.node[parent].lrow * t->V;
}

/* static: every node of depth d-1 gets the draft's shape[d-1] best tokens as children; with
 * draw, shape[d-1] independent draws from the draft's distribution (SpecInfer's expansion at
 * T > 0), each with its own index among the draws for its position, so that the children of
 * siblings carrying one token (merged when verified) are independent too. */
static int grow_static(dec *d, tree *t, int depth, char *err) {
    int lo = 0, hi = 0; /* the newest level: nodes lo..hi-1 (none: the root) */
    if (t->draw) memcpy(t->qlog, t->rootlog, sizeof(float) * (size_t)t->V);
    for (int lev = 1; lev <= depth; lev++) {
        int drawn = 0;
        int n_eval = 0;
        for (int i = lo; i < hi; i++)
            if (t->dt.node[i].token != d->end_id) t->dt.eval[n_eval++] = i;
        if (lev > 1 && n_eval == 0) break; /* only end tokens: nothing to expand */
        if (lev > 1 && draft_level(d, t, n_eval, err)) return -1;
        const int k = t->shape[lev - 1];
        int new_lo = t->dt.n_node;
        for (int e = 0; e < (lev == 1 ? 1 : n_eval); e++) {
            int parent = lev == 1 ? -1 : t->dt.eval[e];
            const float *pl = logits_of(t, parent);
            if (t->draw) {
                for (int j = 0; j < k; j++) {
                    int x = dec_draft_pick(d, pl, t->root_pos + lev, drawn++);
                    dtree_add(&t->dt, x, parent, rank_of(pl, t->V, x), 0);
                }
                continue;
            }
            dtree_top_tokens(pl, t->V, k, t->dt.ctok, NULL);
            for (int j = 0; j < k; j++) dtree_add(&t->dt, t->dt.ctok[j], parent, j, 0);
        }
        lo = new_lo, hi = t->dt.n_node;
    }
    return 0;
}

/* sequoia: the DP's tree read from the draft level by level: the template node of rank r below
 * a grown parent is the draft's r-th most probable token after the parent's path (as static
 * mode's top-k children). A template node whose parent was not grown or not evaluated (an end
 * token) is not grown, nor its subtree. */
static int grow_sequoia(dec *d, tree *t, int depth, char *err) {
    int i = 0; /* the template's nodes, breadth-first: level lev is sq[i..) of that depth */
    for (int lev = 1; lev <= depth && i < t->n_sq; lev++) {
        if (lev > 1) {
            int n_eval = 0;
            for (int j = 0; j < i; j++)
                if (t->sq[j].depth == lev - 1 && t->sq_map[j] >= 0 && t->sq_kids[j] &&
                    t->dt.node[t->sq_map[j]].token != d->end_id)
                    t->dt.eval[n_eval++] = t->sq_map[j];
            if (n_eval == 0) break;
            if (draft_level(d, t, n_eval, err)) return -1;
        }
        int at = -2; /* the parent whose candidates ctok holds (siblings are adjacent) */
        for (; i < t->n_sq && t->sq[i].depth == lev; i++) {
            const sequoia_node *s = &t->sq[i];
            int pn = s->parent < 0 ? -1 : t->sq_map[s->parent];
            t->sq_map[i] = -1;
            if (s->parent >= 0 && (pn < 0 || t->dt.node[pn].drow < 0)) continue;
            if (s->parent != at)
                dtree_top_tokens(logits_of(t, pn), t->V, t->sq_kmax[s->parent + 1], t->dt.ctok,
                                 NULL);
            at = s->parent;
            t->sq_map[i] = dtree_add(&t->dt, t->dt.ctok[s->rank], pn, s->rank, 0);
        }
    }
    return 0;
}

/* dynamic (EAGLE-2, draft_tree.h): the draft's passes over the levels' best nodes */
typedef struct {
    dec *d;
    tree *t;
} drafting;

static int draft_expand(void *ctx, int n, char *err) {
    const drafting *g = ctx;
    return draft_level(g->d, g->t, n, err);
}

static const float *draft_logits(const void *ctx, int parent) {
    return logits_of(((const drafting *)ctx)->t, parent);
}

/* dynamic: expand the k most valuable nodes of the newest level, depth levels; then keep the
 * `nodes` most valuable candidates (marked by trow = 0 here). */
static int grow_dynamic(dec *d, tree *t, int depth, char *err) {
    drafting g = {d, t};
    const dtree_drafter dr = {draft_expand, draft_logits, &g, t->V};
    return dtree_grow_dynamic(&t->dt, &dr, depth, t->k, t->nodes, d->end_id, err);
}

/* split (llama.cpp): sequences that branch where the draft's next candidates are likely. */
static int grow_split(dec *d, tree *t, int depth, char *err) {
    t->n_seq = 1;
    t->seq_s[0] = (tseq){.last = -1, .drafting = 1};
    for (int lev = 1; lev <= depth; lev++) {
        int n_new = 0, full = 0;
        for (int s = 0; s < t->n_seq; s++) t->seq_s[s].skip = 0;
        for (int s = 0; s < t->n_seq; s++) {
            if (!t->seq_s[s].drafting || t->seq_s[s].skip) continue;
            const int from = t->seq_s[s].last;
            dtree_top_tokens(logits_of(t, from), t->V, SPLIT_CANDIDATES, t->dt.ctok, t->dt.clogp);
            int sa[SPLIT_CANDIDATES], n_sa = 1;
            sa[0] = s;
            for (int f = 1; f < SPLIT_CANDIDATES; f++) {
                if (t->n_seq >= t->branches || !(exp(t->dt.clogp[f]) > t->p_split)) break;
                t->seq_s[t->n_seq] = (tseq){.last = from, .drafting = 1, .skip = 1};
                sa[n_sa++] = t->n_seq++;
            }
            for (int i = 0; i < n_sa; i++) {
                tseq *q = &t->seq_s[sa[i]];
                q->last = dtree_add(&t->dt, t->dt.ctok[i], from, i, 0);
                if (t->dt.ctok[i] == d->end_id) q->drafting = 0;
                if (t->dt.n_node >= t->nodes) q->drafting = 0, full = 1;
                if (q->drafting) t->dt.eval[n_new++] = q->last;
            }
        }
        if (full || lev == depth || n_new == 0) break; /* these nodes stay leaves */
        if (draft_level(d, t, n_new, err)) return -1;
    }
    return 0;
}

static void publish(dec *d, int n_tree, int a, int branched);

static int tree_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    tree *t = d->impl;
    memcpy(t->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, t->ft, prompt, n_prompt, t->tlog, err)) return -1;
    t->seq[L] = dec_pick(d, t->tlog, n_prompt); /* the argmax at temperature 0 */
    L += dec_emit(d, &t->seq[L], 1);
    t->draft_ok = n_prompt < t->D_L;
    if (t->draft_ok && dec_prefill(d, DEC_DRAFT, t->fd, prompt, n_prompt, t->rootlog, err))
        return -1;
    while (!d->done) {
        /* 1. how deep: what could still be emitted, the draft's context, the mode's limit */
        int depth = d->max_new - d->n_out - 1;
        depth = imin(depth, t->D_L - L + 1); /* a node of depth x is fed at L + x - 1 */
        depth = imin(depth, t->mode == MODE_STATIC    ? t->n_shape
                            : t->mode == MODE_DYNAMIC ? t->depth_cfg
                            : t->mode == MODE_SEQUOIA ? t->sq_depth
                                                      : t->nodes);
        if (t->draft_ok && t->D_L - L + 1 <= 0) t->draft_ok = 0; /* out of room for good */
        if (!t->draft_ok) depth = 0;
        /* 2. the tree, level by level */
        t->dt.n_node = 0;
        t->root_pos = L - 1;
        if (depth > 0) {
            if (draft_catch_up(d, t, L, err)) return -1;
            int rc = t->mode == MODE_STATIC    ? grow_static(d, t, depth, err)
                     : t->mode == MODE_DYNAMIC ? grow_dynamic(d, t, depth, err)
                     : t->mode == MODE_SEQUOIA ? grow_sequoia(d, t, depth, err)
                                               : grow_split(d, t, depth, err);
            if (rc) return -1;
        }
        /* 3. one target pass: the current token, then the tree's nodes (parents first) */
        int rows = 1, n_tree = 0, max_depth = 0;
        t->ttok[0] = t->seq[L - 1], t->tpar[0] = -1;
        for (int i = 0; i < t->dt.n_node; i++) {
            dtree_node *x = &t->dt.node[i];
            if (t->mode == MODE_DYNAMIC && x->trow < 0) continue; /* not among the best */
            x->trow = rows;
            t->rnode[rows] = i;
            t->ttok[rows] = x->token;
            t->tpar[rows] = x->parent < 0 ? 0 : t->dt.node[x->parent].trow;
            rows++, n_tree++;
            if (x->depth > max_depth) max_depth = x->depth;
        }
        if (dec_eval(d, DEC_TARGET, t->ft, rows, t->ttok, t->tpar, NULL, rows, t->tlog, 0, err))
            return -1;
        /* 4. the longest path of target tokens, then the bonus token (at temperature > 0: of
         * plain sampling's tokens, token_tree.h) */
        int np, nd = 0, branched = 0, n_emit;
        if (t->draw) {
            for (int r = 1; r < rows; r++) {
                int p = t->dt.node[t->rnode[r]].parent;
                t->tdrow[r] = p < 0 ? 0 : 1 + t->dt.node[p].drow;
            }
            n_emit = token_tree_verify_drawn(d, rows, t->ttok, t->tpar, t->tlog, L - 1, t->tdrow,
                                             t->qlog, t->walk, t->path, &np, t->em);
        } else {
            n_emit = token_tree_verify(d, rows, t->ttok, t->tpar, t->tlog, L - 1, t->walk, t->path,
                                       &np, t->em);
        }
        const int a = np - 1;
        for (int i = 1; i < np; i++) {
            const dtree_node *x = &t->dt.node[t->rnode[t->path[i]]];
            if (x->drow >= 0) t->dpath[nd++] = x->drow; /* a prefix of the path (see above) */
            if (x->rank) branched = 1;
        }
        for (int r = 1; r < rows; r++) t->walk[r] = t->dt.node[t->rnode[r]].rank;
        token_tree_count_ranks(d, rows, t->tpar, t->path, np, t->walk, TC_RANK0, TC_OFFER0,
                               t->walk + rows);
        int emitted = dec_emit(d, t->em, n_emit);
        dec_step_done(d, rows, max_depth, a, emitted);
        publish(d, n_tree, a, branched);
        if (d->done) break;
        /* 5. commit: the target keeps the path, the draft the path's nodes it evaluated */
        if (fwd_commit(t->ft, t->path, np, err)) return -1;
        if (nd && fwd_commit(t->fd, t->dpath, nd, err)) return -1;
        memcpy(t->seq + L, t->em, sizeof(int) * (size_t)emitted);
        L += emitted;
    }
    return 0;
}

static void tree_destroy(dec *d) {
    tree *t = d->impl;
    if (!t) return;
    fwd_free(t->ft), fwd_free(t->fd);
    free(t->dt.node), free(t->seq_s), free(t->tlog), free(t->dlog), free(t->rootlog);
    free(t->ttok), free(t->tpar), free(t->rnode), free(t->dtok), free(t->dpar), free(t->dt.eval);
    free(t->dt.order), free(t->path), free(t->dpath), free(t->em), free(t->walk), free(t->dt.ctok),
        free(t->dt.clogp);
    free(t->seq), free(t->qlog), free(t->tdrow);
    free(t->sq), free(t->sq_kids), free(t->sq_map), free(t->sq_kmax);
    free(t);
}

/* ---- counters ------------------------------------------------------------------------------ */

static const stat_def tree_counters[TC_N] = {
    [TC_TREE_NODES] = {"tree_nodes", STAT_INT, STAT_SUM, STAT_DET,
                       "draft tokens in the trees the target verified (tree size, the current "
                       "token not counted)"},
    [TC_TREE_NODES_MAX] = {"tree_nodes_max", STAT_INT, STAT_MAX, STAT_DET,
                           "the largest tree of the sample"},
    [TC_BRANCH_STEPS] = {"branch_steps", STAT_INT, STAT_SUM, STAT_DET,
                         "steps whose accepted path took a branch other than the draft's first "
                         "choice (what a chain draft could not have accepted)"},
    [TC_RANK0] = {"accept_rank0", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were the draft's most probable child of their parent"},
    [TC_RANK1] = {"accept_rank1", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were the draft's second choice"},
    [TC_RANK2] = {"accept_rank2", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were the draft's third choice"},
    [TC_RANK3UP] = {"accept_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                    "accepted tokens that were the draft's fourth choice or lower"},
    [TC_DEPTH_MAX] = {"accepted_depth_max", STAT_INT, STAT_MAX, STAT_DET,
                      "the longest path accepted in one step (accepted depth; the sum over "
                      "steps is the framework's accepted)"},
    [TC_OFFER0] = {"offered_rank0", STAT_INT, STAT_SUM, STAT_DET,
                   "candidates of rank 0 below a node the verifier reached (accept_rank0 / "
                   "offered_rank0: Sequoia's p[0], from any tree; `decbench sequoia --fit`)"},
    [TC_OFFER1] = {"offered_rank1", STAT_INT, STAT_SUM, STAT_DET,
                   "candidates of rank 1 below a node the verifier reached"},
    [TC_OFFER2] = {"offered_rank2", STAT_INT, STAT_SUM, STAT_DET,
                   "candidates of rank 2 below a node the verifier reached"},
    [TC_OFFER3UP] = {"offered_rank3up", STAT_INT, STAT_SUM, STAT_DET,
                     "candidates of rank 3 or more below a node the verifier reached"},
};

/* One step's tree counters (the accepted ranks were counted on the way). */
static void publish(dec *d, int n_tree, int a, int branched) {
    dec_count(d, TC_TREE_NODES, n_tree);
    if (n_tree > d->st->counters[TC_TREE_NODES_MAX]) dec_count_set(d, TC_TREE_NODES_MAX, n_tree);
    dec_count(d, TC_BRANCH_STEPS, branched);
    if (a > d->st->counters[TC_DEPTH_MAX]) dec_count_set(d, TC_DEPTH_MAX, a);
}

/* clang-format off */
const dec_vtable dec_tree_vtable = {
    .name = "tree",
    .summary = "token-tree speculative decoding: the draft grows a tree of candidates level by "
               "level, one target pass verifies it (SpecInfer, EAGLE-2, llama.cpp p_split)",
    .params = {
        [P_MODE] = {"mode", PARAM_ENUM, MODE_STATIC, 0, 0, {"static", "dynamic", "split", "sequoia"},
         "static: shape's top-k per depth; dynamic: EAGLE-2's best nodes under a budget; "
         "split: llama.cpp's p_split branches; sequoia: the DP's best tree for accept="},
        [P_SHAPE] = {"shape", PARAM_LIST, 0, 1, 16, {0}, "static: children per node at each depth",
         "4-2-2-1"},
        [P_NODES] = {"nodes", PARAM_INT, 16, 1, TREE_MAX_NODES, {0},
         "dynamic, sequoia: tree size (tokens); split: stop drafting at this size (n_draft)"},
        [P_DEPTH] = {"depth", PARAM_INT, 6, 1, 16, {0}, "dynamic: expansion steps (the tree's depth); "
         "sequoia: the tree's depth at most"},
        [P_K] = {"k", PARAM_INT, 4, 1, 16, {0}, "dynamic: nodes expanded per step and children each"},
        [P_BRANCHES] = {"branches", PARAM_INT, 4, 1, 64, {0}, "split: draft sequences at most (n_parallel)"},
        [P_SPLIT] = {"p_split", PARAM_INT, 10, 0, 100, {0}, "split: a candidate above this probability "
                                                "(percent) opens a branch"},
        [P_DRAW] = {"draw", PARAM_INT, 0, 0, 1, {0}, "static, standard sampling: 1 draws each node's "
         "children from the draft (SpecInfer's rule), 0 takes its top-k as fixed guesses (EAGLE's)",
         .quiet = 1},
        [P_ACCEPT] = {"accept", PARAM_STR, 0, 0, 0, {0}, "sequoia: acceptance by rank P0/P1/... "
         "(default " SEQUOIA_DEFAULT_ACCEPT ": stories260K/llama2xs, T=0)"},
    },
    .needs_draft = 1,
    .create = tree_create,
    .generate = tree_generate,
    .destroy = tree_destroy,
    .counters = tree_counters,
    .n_counters = TC_N,
    .tune_grid = "mode=static,dynamic,sequoia;nodes=4,8,16",
};
/* clang-format on */
