/* medusa.c: Medusa-1 decoding (Cai et al., "Medusa: Simple LLM Inference Acceleration
 * Framework with Multiple Decoding Heads", arXiv 2401.10774), verified exactly.
 *
 * K heads (decoders/medusa_head.h, loaded from head=DIR) read the target's hidden state after the
 * final RMSNorm at the row that chose the current token (forward.h, fwd_set_hidden_out) and
 * each proposes its top-k tokens for one later position: head k for the token k + 1 places
 * after the current one. The reference combines them into a sparse tree of top-k
 * combinations, medusa_choices: a node [r_1, ..., r_d] is head d's rank-r_d token below the
 * node [r_1, ..., r_{d-1}]. One target pass evaluates the current token and the whole tree with
 * the tree mask, and the tree is verified as every token tree here is (token_tree.h): the
 * longest path plain decoding confirms, then the bonus token; the hidden state of the last
 * accepted row feeds the heads for the next step, as the reference's update_inference_inputs
 * takes the Medusa logits of the accepted candidate's last position.
 *
 * The trees (tree=, nodes=, topk=) are the reference's lists, medusa/model/medusa_choices.py of
 * FasterDecoding/Medusa, copied as data: mc_sim_7b_63 (the default, what medusa_model.py runs
 * for Vicuna-7B) and vicuna_7b_stage2. nodes=N keeps a list's first N entries (every prefix of
 * both lists is a tree: each entry's parent comes before it), topk=k the entries whose ranks
 * are all below k (the reference's TOPK is 10, which no entry reaches), and a head file with
 * fewer heads than the tree's depth keeps the entries it can fill. Rows are ordered as the
 * reference's generate_medusa_buffers orders them: by depth, then by their ranks.
 *
 * Deviations from the reference, each for exactness or this runtime:
 *   - Verification is exact (greedy at temperature 0; at T > 0 the candidates, functions of
 *     the prefix, are fixed guesses verified by the rejection rule for deterministic candidates
 *     in standard mode, and by a match with the coupled pick in coupled mode: token_tree.h).
 *     Medusa's typical acceptance (posterior_threshold, posterior_alpha) is not offered: it
 *     accepts tokens plain sampling would not draw, so its output is not distributed as the
 *     target's.
 *   - The heads run on the accepted row's hidden state only (the reference runs them on every
 *     row of the tree pass and keeps the accepted one's): the same values, fewer products.
 *   - The end token is a leaf and ends acceptance (no bonus after it).
 * Bounds: the tree is no deeper than the tokens that may still be emitted and the context.
 *
 * Statistics: the heads' forward of a step is drafting time (t_draft) and one draft pass of the
 * pass trace: `rows` and logit rows = the heads run (each head's ResBlocks and classifier on one
 * hidden state: K heads cost K times one, whatever the context, so the context is 0); it is not
 * counted as a draft step or rows (no draft model runs). drafted = the tree's depth, accepted = the
 * accepted path's length (the framework's acceptance by position is then acceptance by head:
 * position i is head i's proposal); the counters below say how large the trees were and which ranks
 * were accepted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/draft_tree.h"
#include "decoders/token_tree.h"
#include "decoders/medusa_head.h"
#include "util/clock.h"
#include "util/err.h"

enum { P_HEAD, P_TREE, P_NODES, P_TOPK };
enum { MC_N_TREES = 2, MC_MAX_DEPTH = 4, MC_TOPK = 10 };
enum { MC_TREE_NODES, MC_RANK0, MC_RANK1UP, MC_DEPTH_MAX, MC_N };

typedef struct {
    int len;
    int r[MC_MAX_DEPTH];
} mc_choice;

/* medusa/model/medusa_choices.py (FasterDecoding/Medusa), in the file's order. */
static const mc_choice mc_sim_7b_63[] = {
    {1, {0}}, {2, {0, 0}}, {1, {1}}, {2, {0, 1}}, {1, {2}}, {3, {0, 0, 0}}, {2, {1, 0}},
    {2, {0, 2}}, {1, {3}}, {2, {0, 3}}, {1, {4}}, {2, {0, 4}}, {2, {2, 0}}, {2, {0, 5}},
    {3, {0, 0, 1}}, {1, {5}}, {2, {0, 6}}, {1, {6}}, {2, {0, 7}}, {3, {0, 1, 0}}, {2, {1, 1}},
    {1, {7}}, {2, {0, 8}}, {3, {0, 0, 2}}, {2, {3, 0}}, {2, {0, 9}}, {1, {8}}, {1, {9}},
    {3, {1, 0, 0}}, {3, {0, 2, 0}}, {2, {1, 2}}, {3, {0, 0, 3}}, {2, {4, 0}}, {2, {2, 1}},
    {3, {0, 0, 4}}, {3, {0, 0, 5}}, {4, {0, 0, 0, 0}}, {3, {0, 1, 1}}, {3, {0, 0, 6}},
    {3, {0, 3, 0}}, {2, {5, 0}}, {2, {1, 3}}, {3, {0, 0, 7}}, {3, {0, 0, 8}}, {3, {0, 0, 9}},
    {2, {6, 0}}, {3, {0, 4, 0}}, {2, {1, 4}}, {2, {7, 0}}, {3, {0, 1, 2}}, {3, {2, 0, 0}},
    {2, {3, 1}}, {2, {2, 2}}, {2, {8, 0}}, {3, {0, 5, 0}}, {2, {1, 5}}, {3, {1, 0, 1}},
    {3, {0, 2, 1}}, {2, {9, 0}}, {3, {0, 6, 0}}, {4, {0, 0, 0, 1}}, {2, {1, 6}}, {3, {0, 7, 0}}
};
static const mc_choice vicuna_7b_stage2[] = {
    {1, {0}}, {2, {0, 0}}, {1, {1}}, {2, {0, 1}}, {3, {0, 0, 0}}, {2, {1, 0}}, {1, {2}},
    {2, {0, 2}}, {3, {0, 0, 1}}, {2, {0, 3}}, {1, {3}}, {3, {0, 1, 0}}, {2, {2, 0}}, {1, {4}},
    {3, {0, 0, 2}}, {2, {0, 4}}, {2, {1, 1}}, {3, {1, 0, 0}}, {4, {0, 0, 0, 0}}, {1, {5}},
    {3, {0, 0, 3}}, {2, {0, 5}}, {3, {0, 2, 0}}, {2, {3, 0}}, {3, {0, 1, 1}}, {2, {0, 6}},
    {1, {6}}, {2, {0, 7}}, {3, {0, 0, 4}}, {2, {4, 0}}, {2, {1, 2}}, {2, {0, 8}}, {1, {7}},
    {3, {0, 3, 0}}, {4, {0, 0, 0, 1}}, {3, {0, 0, 5}}, {2, {2, 1}}, {3, {0, 0, 6}},
    {3, {1, 0, 1}}, {4, {0, 0, 1, 0}}, {3, {2, 0, 0}}, {2, {5, 0}}, {2, {0, 9}}, {3, {0, 1, 2}},
    {1, {8}}, {3, {0, 4, 0}}, {3, {0, 2, 1}}, {2, {1, 3}}, {3, {0, 0, 7}}, {4, {0, 0, 0, 2}},
    {3, {0, 0, 8}}, {3, {1, 1, 0}}, {4, {0, 1, 0, 0}}, {2, {6, 0}}, {1, {9}}, {3, {0, 1, 3}},
    {4, {0, 0, 0, 3}}, {3, {1, 0, 2}}, {3, {0, 5, 0}}, {2, {3, 1}}, {4, {0, 0, 2, 0}},
    {2, {7, 0}}, {2, {1, 4}}
};

static const mc_choice *const mc_lists[MC_N_TREES] = {mc_sim_7b_63, vicuna_7b_stage2};
static const int mc_sizes[MC_N_TREES] = {(int)(sizeof mc_sim_7b_63 / sizeof mc_sim_7b_63[0]),
                                         (int)(sizeof vicuna_7b_stage2 / sizeof vicuna_7b_stage2[0])};

typedef struct {
    int depth, rank, parent; /* parent: a node index, -1 the root */
} mnode;

typedef struct {
    medusa_head *h;
    fwd_ctx *ft;
    int V, dim, T_L;
    mnode *node; /* sorted by depth, then ranks */
    int n_node, depth, kmax[MC_MAX_DEPTH];
    int upto[MC_MAX_DEPTH + 1]; /* nodes of depth <= d: node[0..upto[d]) */
    float *tlog, *hid, *hlog, *hscratch;
    int *top; /* per head, its kmax[k] best tokens: top[k * MC_TOPK + r] */
    int *ttok, *tpar, *path, *em, *walk, *seq;
} medusa;

static int imin(int a, int b) {
    return a < b ? a : b;
}

/* a before b in generate_medusa_buffers' order: shorter first, then by ranks. */
static int choice_before(const mc_choice *a, const mc_choice *b) {
    if (a->len != b->len) return a->len < b->len;
    for (int i = 0; i < a->len; i++)
        if (a->r[i] != b->r[i]) return a->r[i] < b->r[i];
    return 0;
}

static int same_prefix(const mc_choice *a, const mc_choice *parent) {
    if (a->len != parent->len + 1) return 0;
    for (int i = 0; i < parent->len; i++)
        if (a->r[i] != parent->r[i]) return 0;
    return 1;
}

/* The tree of the chosen list: its first `nodes` entries, those within topk and the heads,
 * in the reference's row order, each with its parent. */
static int build_tree(dec *d, medusa *m, char *err) {
    const mc_choice *list = mc_lists[d->param[P_TREE]];
    int n = imin(d->param[P_NODES], mc_sizes[d->param[P_TREE]]), topk = d->param[P_TOPK];
    mc_choice kept[64];
    int nk = 0;
    for (int i = 0; i < n; i++) {
        int ok = list[i].len <= m->h->n_heads;
        for (int j = 0; ok && j < list[i].len; j++) ok = list[i].r[j] < topk;
        if (ok) kept[nk++] = list[i];
    }
    for (int i = 1; i < nk; i++) { /* insertion sort: 63 entries at most */
        mc_choice x = kept[i];
        int j = i;
        while (j > 0 && choice_before(&x, &kept[j - 1])) kept[j] = kept[j - 1], j--;
        kept[j] = x;
    }
    m->node = malloc(sizeof *m->node * (size_t)(nk ? nk : 1));
    if (!m->node) return err_set(err, "medusa: out of memory");
    m->n_node = nk, m->depth = 0;
    for (int i = 0; i < nk; i++) {
        mnode *x = &m->node[i];
        x->depth = kept[i].len, x->rank = kept[i].r[kept[i].len - 1], x->parent = -1;
        for (int j = 0; j < i && x->depth > 1; j++)
            if (same_prefix(&kept[i], &kept[j])) x->parent = j;
        if (x->depth > 1 && x->parent < 0) /* cannot happen: the filters keep prefixes */
            return err_set(err, "medusa: tree entry %d has no parent", i);
        if (x->depth > m->depth) m->depth = x->depth;
        if (x->rank + 1 > m->kmax[x->depth - 1]) m->kmax[x->depth - 1] = x->rank + 1;
    }
    for (int dd = 0; dd <= MC_MAX_DEPTH; dd++) {
        m->upto[dd] = 0;
        while (m->upto[dd] < nk && m->node[m->upto[dd]].depth <= dd) m->upto[dd]++;
    }
    for (int k = 0; k < m->depth; k++)
        if (m->kmax[k] > m->V)
            return err_set(err, "medusa: head %d proposes %d tokens, the vocabulary has %d", k,
                           m->kmax[k], m->V);
    return 0;
}

static int medusa_create(dec *d, char *err) {
    medusa *m = calloc(1, sizeof *m);
    if (!m) return err_set(err, "medusa: out of memory");
    d->impl = m;
    if (!d->str[P_HEAD][0])
        return err_set(err, "medusa needs its heads: medusa:head=DIR (config.json and "
                            "medusa_lm_head.safetensors, trained for this target)");
    const model *t = d->env.target;
    if (medusa_head_open(&m->h, d->str[P_HEAD], err) || medusa_head_check(m->h, t, err))
        return -1;
    m->V = t->cfg.vocab_size, m->dim = t->cfg.dim, m->T_L = t->cfg.seq_len;
    if (build_tree(d, m, err)) return -1;
    const int R = 1 + m->n_node;
    if (dec_fwd_new(d, t, R, &m->ft, err)) return -1;
    size_t V = (size_t)m->V, D = (size_t)m->dim, B = (size_t)fwd_max_batch(m->ft);
    m->tlog = malloc(sizeof(float) * B * V);
    m->hid = malloc(sizeof(float) * B * D);
    m->hlog = malloc(sizeof(float) * V);
    m->hscratch = malloc(sizeof(float) * 2 * D);
    m->top = malloc(sizeof(int) * MC_MAX_DEPTH * MC_TOPK);
    m->ttok = malloc(sizeof(int) * B), m->tpar = malloc(sizeof(int) * B);
    m->path = malloc(sizeof(int) * B), m->em = malloc(sizeof(int) * B);
    m->walk = malloc(sizeof(int) * 2 * B);
    m->seq = malloc(sizeof(int) * ((size_t)m->T_L + B + 1));
    if (!m->tlog || !m->hid || !m->hlog || !m->hscratch || !m->top || !m->ttok || !m->tpar ||
        !m->path || !m->em || !m->walk || !m->seq)
        return err_set(err, "medusa: out of memory");
    /* every target pass also hands out the hidden states of its rows: the heads' input */
    fwd_set_hidden_out(m->ft, m->hid, NULL);
    return 0;
}

static void publish(dec *d, int n_tree, int a) {
    dec_count(d, MC_TREE_NODES, n_tree);
    if (a > d->st->counters[MC_DEPTH_MAX]) dec_count_set(d, MC_DEPTH_MAX, a);
}

static int medusa_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    medusa *m = d->impl;
    memcpy(m->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, m->ft, prompt, n_prompt, m->tlog, err)) return -1;
    m->seq[L] = dec_pick(d, m->tlog, n_prompt);
    L += dec_emit(d, &m->seq[L], 1);
    const float *h = m->hid; /* the hidden state of the row that chose seq[L-1] */
    while (!d->done) {
        /* 1. how deep: what could still be emitted, the context, the heads' tree */
        int depth = imin(d->max_new - d->n_out - 1, m->T_L - L);
        depth = imin(depth, m->depth);
        if (depth < 0) depth = 0;
        /* 2. the heads' proposals, then the tree's rows: the current token, then the nodes */
        double h0 = clock_now(), h_top = 0;
        for (int k = 0; k < depth; k++) {
            medusa_head_logits(m->h, k, h, m->hlog, m->hscratch, d->env.pool);
            double c0 = clock_now();
            dtree_top_tokens(m->hlog, m->V, m->kmax[k], m->top + k * MC_TOPK, NULL);
            h_top += clock_now() - c0;
        }
        if (depth > 0) { /* the heads' forward: drafting time, and one draft pass of the trace */
            double dt = clock_now() - h0 - h_top;
            d->st->t_draft += dt;
            dec_trace(d, DEC_DRAFT, depth, depth, 0, 0, dt);
        }
        const int n_tree = m->upto[depth], rows = 1 + n_tree;
        m->ttok[0] = m->seq[L - 1], m->tpar[0] = -1;
        for (int i = 0; i < n_tree; i++) {
            const mnode *x = &m->node[i];
            m->ttok[1 + i] = m->top[(x->depth - 1) * MC_TOPK + x->rank];
            m->tpar[1 + i] = x->parent < 0 ? 0 : 1 + x->parent;
        }
        if (dec_eval(d, DEC_TARGET, m->ft, rows, m->ttok, m->tpar, NULL, rows, m->tlog, 0, err))
            return -1;
        /* 3. the longest path plain decoding confirms, then the bonus token */
        int np;
        int n_emit = token_tree_verify(d, rows, m->ttok, m->tpar, m->tlog, L - 1, m->walk, m->path,
                                       &np, m->em);
        const int a = np - 1;
        for (int i = 1; i < np; i++)
            dec_count(d, m->node[m->path[i] - 1].rank ? MC_RANK1UP : MC_RANK0, 1);
        int emitted = dec_emit(d, m->em, n_emit);
        dec_step_done(d, rows, n_tree ? m->node[n_tree - 1].depth : 0, a, emitted);
        publish(d, n_tree, a);
        if (d->done) break;
        /* 4. commit the path; its last row's hidden state feeds the next step's heads */
        if (fwd_commit(m->ft, m->path, np, err)) return -1;
        h = m->hid + (size_t)m->path[np - 1] * (size_t)m->dim;
        memcpy(m->seq + L, m->em, sizeof(int) * (size_t)emitted);
        L += emitted;
    }
    return 0;
}

static void medusa_destroy(dec *d) {
    medusa *m = d->impl;
    if (!m) return;
    medusa_head_free(m->h);
    fwd_free(m->ft);
    free(m->node), free(m->tlog), free(m->hid), free(m->hlog), free(m->hscratch), free(m->top);
    free(m->ttok), free(m->tpar), free(m->path), free(m->em), free(m->walk), free(m->seq);
    free(m);
}

static const stat_def medusa_counters[MC_N] = {
    [MC_TREE_NODES] = {"tree_nodes", STAT_INT, STAT_SUM, STAT_DET,
                       "draft tokens in the trees the target verified (tree size, the current "
                       "token not counted)"},
    [MC_RANK0] = {"accept_rank0", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were their head's first choice"},
    [MC_RANK1UP] = {"accept_rank1up", STAT_INT, STAT_SUM, STAT_DET,
                    "accepted tokens that were their head's second choice or lower"},
    [MC_DEPTH_MAX] = {"accepted_depth_max", STAT_INT, STAT_MAX, STAT_DET,
                      "the longest path accepted in one step"},
};

/* clang-format off */
const dec_vtable dec_medusa_vtable = {
    .name = "medusa",
    .summary = "Medusa-1: K heads on the target's last hidden state propose a tree of top-k "
               "combinations, one target pass verifies it exactly (no typical acceptance)",
    .params = {
        [P_HEAD] = {"head", PARAM_STR, 0, 0, 0, {0}, "the heads' folder: config.json and "
         "medusa_lm_head.safetensors (required)"},
        [P_TREE] = {"tree", PARAM_ENUM, 0, 0, 0, {"mc_sim_7b_63", "vicuna_7b_stage2"},
         "the reference's medusa_choices list"},
        [P_NODES] = {"nodes", PARAM_INT, 63, 1, 63, {0}, "the list's first N entries"},
        [P_TOPK] = {"topk", PARAM_INT, MC_TOPK, 1, MC_TOPK, {0},
         "only entries whose ranks are all below this"},
    },
    .create = medusa_create,
    .generate = medusa_generate,
    .destroy = medusa_destroy,
    .counters = medusa_counters,
    .n_counters = MC_N,
    /* probed when tune is given the heads (tune --set medusa:head=DIR): the tree's first 5, 15
     * and all 63 nodes (docs/measurements/2026-11-29-medusa.md: 5 and 15 project best on 110M) */
    .tune_grid = "nodes=5,15,63",
};
/* clang-format on */
