/* eagle.c: EAGLE's speculative decoding with a draft head on the target's features (Li et al.,
 * "EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty", arXiv 2401.15077, and
 * EAGLE-2, "Faster Inference of Language Models with Dynamic Draft Trees", arXiv 2406.16858;
 * reference: SafeAILab/EAGLE, eagle/model/cnets1.py, ea_model.py, utils.py, choices.py).
 *
 * The draft is a head (decoders/eagle_head.h: one decoder layer over fc(cat(embed(token),
 * feature)), the target's classifier on its output), not a model: each step it reads the
 * target's hidden states of the tokens accepted last step (the features) and drafts a token tree
 * below the current token; the target verifies the whole tree in one pass with the tree mask
 * (token_tree.h), so at temperature 0 the output is greedy's bit for bit, and at T > 0 plain
 * sampling's in coupled mode, distributed as it in standard mode (the tree's tokens are the
 * head's top-k, fixed guesses: the rule for deterministic candidates, as the reference verifies
 * its top-k tree). The feature of a text position is the target's hidden state after its final
 * RMSNorm: what ea_model.py hands the head (the base LlamaModel's outputs[0], which
 * modeling_llama_kv.py returns normed), not the state before the norm. The head's cache keeps
 * the text's rows (the reference's stable_kv): after verification the accepted tokens and the
 * bonus are appended with the target's features of the rows before them, and the tree's rows
 * are dropped.
 *
 * Two trees (mode=):
 *   static   EAGLE-1's tree: the reference's mc_sim_7b_63 (eagle/model/choices.py, copied
 *            below as data): 25 nodes to depth 5, a node [r1, .., rd] being the head's
 *            rd-th most likely token after the path [r1, .., rd-1]. The head evaluates, level
 *            by level, the nodes that have children.
 *   dynamic  EAGLE-2's tree (cnets1.py topK_genrate): the root's top_k children scored by the
 *            head's log-probability; then `depth` times, the top_k best-scored nodes of the
 *            newest level are evaluated and each gets its top_k children, a node's score the
 *            sum of its path's log-probabilities; finally the total_tokens - 1 best-scored nodes
 *            of all (ties: the earlier created, so a parent always precedes its children) form
 *            the tree with the current token: total_tokens rows in the target's pass. Defaults
 *            the reference's: total_tokens=60, depth=7, top_k=10.
 *
 * Deviations from the reference: the head's probabilities are the softmax at temperature 1 at
 * every temperature (EAGLE-1 samples its children at T > 0 and EAGLE-2 scores them at T = 1
 * too); an end token is a leaf (nothing is drafted after it, as in tree.c); the training-time
 * noise on the features (EAGLE's "std") is a training device and not used at inference, as in
 * the reference. EAGLE-3 heads (several layers' features, a draft vocabulary) are not
 * supported. Bounds as tree.c: the tree is no deeper than what could still be emitted.
 *
 * Statistics: the head's passes count as draft passes (draft_steps, draft_rows, t_draft), the
 * target's as target passes; drafted = the tree's depth, accepted = the accepted path's length
 * (acceptance by position is then "the tree offered a node at that depth"); the decoder's
 * counters below say how large the trees were and which ranks were accepted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/draft_tree.h"
#include "decoders/eagle_head.h"
#include "decoders/token_tree.h"
#include "util/clock.h"
#include "util/err.h"

enum { P_HEAD, P_MODE, P_TOTAL, P_DEPTH, P_TOPK };
enum { MODE_STATIC, MODE_DYNAMIC };
enum { EC_TREE_NODES, EC_TREE_NODES_MAX, EC_HEAD_ROWS, EC_RANK0, EC_RANK1UP, EC_DEPTH_MAX, EC_N };

#define PREFILL_CHUNK 64

/* EAGLE-1's static tree, eagle/model/choices.py mc_sim_7b_63 (SafeAILab/EAGLE): each node the
 * ranks of its path from the root, -1 ending a path. */
/* clang-format off */
static const signed char mc_sim_7b_63[][6] = {
    {0, -1}, {1, -1}, {2, -1}, {3, -1}, {0, 0, -1}, {0, 1, -1}, {0, 2, -1}, {1, 0, -1},
    {1, 1, -1}, {2, 0, -1}, {2, 1, -1}, {3, 0, -1},
    {0, 0, 0, -1}, {0, 0, 1, -1}, {0, 0, 2, -1}, {0, 1, 0, -1}, {0, 1, 1, -1}, {0, 2, 0, -1},
    {0, 2, 1, -1}, {1, 0, 0, -1},
    {0, 0, 0, 0, -1}, {0, 0, 0, 1, -1}, {0, 0, 0, 2, -1}, {0, 0, 0, 0, 0, -1},
    {0, 0, 0, 0, 1, -1}};
/* clang-format on */
#define STATIC_NODES (int)(sizeof mc_sim_7b_63 / sizeof mc_sim_7b_63[0])
#define STATIC_DEPTH 5

typedef struct {
    int parent; /* template node, -1: the root */
    int rank, depth, kids;
} snode;

typedef struct {
    eagle_head *head;
    fwd_ctx *ft;
    int mode, total, depth_cfg, top_k, levels;
    int V, D, T_L;
    snode tmpl[STATIC_NODES];
    int max_nodes, max_pass, max_scratch, max_trows, max_kids;
    dtree dt; /* the step's tree */
    /* head */
    float *hroot, *lroot; /* the last text row's output and logits (the root's children) */
    float *hid;           /* per scratch row, its output (the feature of its children) */
    float *hlog, *feats;  /* a head pass: logits, input features */
    int *htok, *hpar;
    /* target */
    float *tlog, *thid; /* the pass's logits and features (prefill chunks too) */
    int *ttok, *tpar, *rnode, *path, *em, *walk, *tmap;
    int *seq;
} eagle;

static int imin(int a, int b) {
    return a < b ? a : b;
}

/* ---- the passes, timed into the statistics --------------------------------------------------- */

static int cancelled(dec *d, char *err) {
    if (!d->env.cancel || !*d->env.cancel) return 0;
    d->cancelled = 1;
    return err_set(err, "cancelled");
}

static void count_head(dec *d, int n, double dt) {
    d->st->t_draft += dt;
    d->st->draft_steps++;
    d->st->draft_rows += n;
}

/* The head's passes are the trace's draft passes: a tree level computes every row's logits
 * through the target's classifier, an append its last row's; the context is the head's own
 * cache (its committed rows; a tree row also attends to its few ancestors, as the target's). */
static int head_tree(dec *d, eagle *e, int n, char *err) {
    if (cancelled(d, err)) return -1;
    double t0 = clock_now();
    int first = eagle_head_scratch_rows(e->head), context = eagle_head_n_past(e->head);
    int rc = eagle_head_tree(e->head, n, e->htok, e->feats, e->hpar, e->hid + (size_t)first * e->D,
                             e->hlog, err);
    double dt = clock_now() - t0;
    count_head(d, n, dt);
    if (rc == 0) dec_trace(d, DEC_DRAFT, n, n, context, 0, dt);
    dec_count(d, EC_HEAD_ROWS, n);
    return rc;
}

/* Appends n text rows to the head (tokens, features); the last row's output and logits go to
 * hroot, lroot. */
static int head_append(dec *d, eagle *e, int n, const int *tokens, const float *feats, int prefill,
                       char *err) {
    if (cancelled(d, err)) return -1;
    double t0 = clock_now();
    int context = eagle_head_n_past(e->head);
    int rc = eagle_head_append(e->head, n, tokens, feats, 1, e->hroot, e->lroot, err);
    double dt = clock_now() - t0;
    count_head(d, prefill ? 0 : n, dt);
    if (rc == 0) dec_trace(d, DEC_DRAFT, n, 1, context, prefill, dt);
    if (!prefill) dec_count(d, EC_HEAD_ROWS, n);
    return rc;
}

/* ---- tree building ----------------------------------------------------------------------------
 */

static const float *logits_of(const eagle *e, int parent) {
    return parent < 0 ? e->lroot : e->hlog + (size_t)e->dt.node[parent].lrow * e->V;
}

/* One head pass over nodes eval[0..n): each takes its parent's output as its feature; their
 * outputs land in hid, their logits in hlog (row i for eval[i]). */
static int expand(dec *d, eagle *e, int n, char *err) {
    int first = eagle_head_scratch_rows(e->head);
    for (int i = 0; i < n; i++) {
        dtree_node *x = &e->dt.node[e->dt.eval[i]];
        const dtree_node *p = x->parent < 0 ? NULL : &e->dt.node[x->parent];
        e->htok[i] = x->token;
        e->hpar[i] = p ? p->drow : -1;
        memcpy(e->feats + (size_t)i * e->D, p ? e->hid + (size_t)p->drow * e->D : e->hroot,
               sizeof(float) * (size_t)e->D);
        x->drow = first + i, x->lrow = i;
    }
    return head_tree(d, e, n, err);
}

/* EAGLE-2 (topK_genrate, draft_tree.h): the newest level's top_k best nodes expanded with top_k
 * children each, `levels` levels; the total - 1 best nodes of all are marked (trow = 0). */
typedef struct {
    dec *d;
    eagle *e;
} drafting;

static int head_expand(void *ctx, int n, char *err) {
    const drafting *g = ctx;
    return expand(g->d, g->e, n, err);
}

static const float *head_logits(const void *ctx, int parent) {
    return logits_of(((const drafting *)ctx)->e, parent);
}

static int grow_dynamic(dec *d, eagle *e, int levels, char *err) {
    drafting g = {d, e};
    const dtree_drafter dr = {head_expand, head_logits, &g, e->V};
    return dtree_grow_dynamic(&e->dt, &dr, levels, e->top_k, e->total - 1, d->end_id, err);
}

/* EAGLE-1: the template, level by level; a template node whose parent was not grown (an end
 * token, or past the depth) is not grown. */
static int grow_static(dec *d, eagle *e, int levels, char *err) {
    for (int i = 0; i < STATIC_NODES; i++) e->tmap[i] = -1;
    int at = 0; /* template nodes in (depth, path) order */
    for (int lev = 1; lev <= levels && at < STATIC_NODES; lev++) {
        if (lev > 1) {
            int n = 0;
            for (int j = 0; j < at; j++)
                if (e->tmpl[j].depth == lev - 1 && e->tmpl[j].kids && e->tmap[j] >= 0 &&
                    e->dt.node[e->tmap[j]].token != d->end_id)
                    e->dt.eval[n++] = e->tmap[j];
            if (n == 0) break;
            if (expand(d, e, n, err)) return -1;
        }
        int cur = -2;
        for (; at < STATIC_NODES && e->tmpl[at].depth == lev; at++) {
            const snode *s = &e->tmpl[at];
            int pn = s->parent < 0 ? -1 : e->tmap[s->parent];
            if (s->parent >= 0 && (pn < 0 || e->dt.node[pn].drow < 0)) continue;
            if (s->parent != cur)
                dtree_top_tokens(logits_of(e, pn), e->V, e->max_kids, e->dt.ctok, NULL);
            cur = s->parent;
            int x = dtree_add(&e->dt, e->dt.ctok[s->rank], pn, s->rank, 0);
            e->dt.node[x].trow = 0;
            e->tmap[at] = x;
        }
    }
    return 0;
}

/* ---- the target's passes -----------------------------------------------------------------------
 */

/* The prompt through the target in chunks, every row's feature kept for the head: the head gets
 * rows (feature p, token p + 1) for every p but the last, whose token is the first pick. Leaves
 * the last row's logits in tlog and its feature in thid. One target step, prefill time. */
static int prefill(dec *d, eagle *e, const int *prompt, int n, char *err) {
    double t0 = clock_now(), t_head = 0;
    int rc = fwd_truncate(e->ft, 0, err);
    for (int done = 0; rc == 0 && done < n;) {
        int k = imin(n - done, PREFILL_CHUNK);
        if (cancelled(d, err)) return -1;
        double c0 = clock_now();
        rc = fwd_eval(e->ft, k, prompt + done, NULL, NULL, NULL, k, e->tlog, err);
        for (int i = 0; rc == 0 && i < k; i++) e->path[i] = i;
        if (rc == 0) rc = fwd_commit(e->ft, e->path, k, err);
        if (rc == 0 && d->env.on_pass) { /* the pass trace, as dec_prefill's chunks */
            dec_pass p = {.draft = 0,
                          .prefill = 1,
                          .rows = k,
                          .logit_rows = k,
                          .context = done,
                          .seconds = clock_now() - c0};
            d->env.on_pass(d->env.user, &p);
        }
        int rows = done + k < n ? k : k - 1; /* the last prompt row waits for the first pick */
        if (rc == 0 && rows > 0) {
            double h0 = clock_now();
            rc = head_append(d, e, rows, prompt + done + 1, e->thid, 1, err);
            t_head += clock_now() - h0;
        }
        done += k;
        if (rc == 0 && done == n && k > 1) { /* keep the last row's logits and feature first */
            memmove(e->tlog, e->tlog + (size_t)(k - 1) * e->V, sizeof(float) * (size_t)e->V);
            memmove(e->thid, e->thid + (size_t)(k - 1) * e->D, sizeof(float) * (size_t)e->D);
        }
    }
    double dt = clock_now() - t0;
    d->st->t_prefill += dt;
    d->st->t_target += dt - t_head;
    d->st->target_steps++;
    d->t_step = t0 + dt;
    return rc;
}

static void publish(dec *d, int n_tree, int a) {
    dec_count(d, EC_TREE_NODES, n_tree);
    if (n_tree > d->st->counters[EC_TREE_NODES_MAX]) dec_count_set(d, EC_TREE_NODES_MAX, n_tree);
    if (a > d->st->counters[EC_DEPTH_MAX]) dec_count_set(d, EC_DEPTH_MAX, a);
}

static int eagle_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    eagle *e = d->impl;
    const int D = e->D;
    memcpy(e->seq, prompt, sizeof(int) * (size_t)n_prompt);
    eagle_head_reset(e->head);
    if (prefill(d, e, prompt, n_prompt, err)) return -1;
    int L = n_prompt;
    e->seq[L] = dec_pick(d, e->tlog, n_prompt);
    L += dec_emit(d, &e->seq[L], 1);
    if (d->done) return 0;
    /* the last prompt row: its feature with the first pick */
    if (head_append(d, e, 1, &e->seq[L - 1], e->thid, 1, err)) return -1;
    while (!d->done) {
        /* 1. the tree below the current token seq[L-1] */
        int levels = imin(d->max_new - d->n_out - 1, e->levels);
        e->dt.n_node = 0;
        if (levels > 0) {
            int rc = e->mode == MODE_STATIC ? grow_static(d, e, levels, err)
                                            : grow_dynamic(d, e, levels, err);
            if (rc) return -1;
        }
        /* 2. one target pass: the current token, then the tree (parents first) */
        int rows = 1, n_tree = 0, max_depth = 0;
        e->ttok[0] = e->seq[L - 1], e->tpar[0] = -1;
        for (int i = 0; i < e->dt.n_node; i++) {
            dtree_node *x = &e->dt.node[i];
            if (x->trow < 0) continue;
            x->trow = rows;
            e->rnode[rows] = i;
            e->ttok[rows] = x->token;
            e->tpar[rows] = x->parent < 0 ? 0 : e->dt.node[x->parent].trow;
            rows++, n_tree++;
            if (x->depth > max_depth) max_depth = x->depth;
        }
        if (dec_eval(d, DEC_TARGET, e->ft, rows, e->ttok, e->tpar, NULL, rows, e->tlog, 0, err))
            return -1; /* the features land in thid (fwd_set_hidden_out) */
        /* 3. the accepted path and the token after it */
        int np;
        int n_emit = token_tree_verify(d, rows, e->ttok, e->tpar, e->tlog, L - 1, e->walk, e->path,
                                       &np, e->em);
        const int a = np - 1;
        for (int i = 1; i < np; i++)
            dec_count(d, e->dt.node[e->rnode[e->path[i]]].rank ? EC_RANK1UP : EC_RANK0, 1);
        int emitted = dec_emit(d, e->em, n_emit);
        dec_step_done(d, rows, max_depth, a, emitted);
        publish(d, n_tree, a);
        if (d->done) break;
        /* 4. commit the path; the head reads its features with the tokens after them */
        if (fwd_commit(e->ft, e->path, np, err)) return -1;
        for (int i = 0; i < np; i++)
            memcpy(e->feats + (size_t)i * D, e->thid + (size_t)e->path[i] * D,
                   sizeof(float) * (size_t)D);
        if (head_append(d, e, np, e->em, e->feats, 0, err)) return -1;
        memcpy(e->seq + L, e->em, sizeof(int) * (size_t)emitted);
        L += emitted;
    }
    return 0;
}

/* ---- creation ----------------------------------------------------------------------------------
 */

/* The static template in generate_tree_buffers' order (by depth, then by path), with each node's
 * parent and rank, and which nodes have children. */
static void build_template(eagle *e) {
    int len[STATIC_NODES], idx[STATIC_NODES];
    for (int i = 0; i < STATIC_NODES; i++) {
        len[i] = 0;
        while (mc_sim_7b_63[i][len[i]] >= 0) len[i]++;
        idx[i] = i;
    }
    for (int i = 1; i < STATIC_NODES; i++) { /* insertion sort by (length, path) */
        int x = idx[i], j = i;
        while (j > 0) {
            int y = idx[j - 1], before = len[x] < len[y];
            if (len[x] == len[y]) before = memcmp(mc_sim_7b_63[x], mc_sim_7b_63[y], len[x]) < 0;
            if (!before) break;
            idx[j] = y, j--;
        }
        idx[j] = x;
    }
    e->max_kids = 1;
    for (int i = 0; i < STATIC_NODES; i++) {
        const signed char *p = mc_sim_7b_63[idx[i]];
        int n = len[idx[i]];
        snode *s = &e->tmpl[i];
        s->depth = n, s->rank = p[n - 1], s->kids = 0, s->parent = -1;
        for (int j = 0; j < i && n > 1; j++) /* the path without its last rank */
            if (len[idx[j]] == n - 1 && memcmp(mc_sim_7b_63[idx[j]], p, n - 1) == 0) s->parent = j;
        if (s->parent >= 0) e->tmpl[s->parent].kids++;
        if (s->rank + 1 > e->max_kids) e->max_kids = s->rank + 1;
    }
}

static void eagle_destroy(dec *d) {
    eagle *e = d->impl;
    if (!e) return;
    eagle_head_free(e->head);
    fwd_free(e->ft);
    free(e->dt.node), free(e->hroot), free(e->lroot), free(e->hid), free(e->hlog), free(e->feats);
    free(e->htok), free(e->hpar), free(e->dt.eval), free(e->tlog), free(e->thid), free(e->ttok);
    free(e->tpar), free(e->rnode), free(e->path), free(e->em), free(e->walk), free(e->dt.order);
    free(e->tmap), free(e->dt.ctok), free(e->dt.clogp), free(e->seq);
    free(e);
}

static int eagle_create(dec *d, char *err) {
    eagle *e = calloc(1, sizeof *e);
    if (!e) return err_set(err, "eagle: out of memory");
    d->impl = e;
    if (!d->str[P_HEAD][0])
        return err_set(err, "eagle needs a draft head: eagle:head=DIR (DIR/config.json and "
                            "DIR/model.safetensors, README \"Decoders\")");
    e->mode = d->param[P_MODE];
    e->total = d->param[P_TOTAL], e->depth_cfg = d->param[P_DEPTH], e->top_k = d->param[P_TOPK];
    const param_def *pd = d->vt->params;
    if (e->mode == MODE_STATIC && (e->total != pd[P_TOTAL].def || e->depth_cfg != pd[P_DEPTH].def ||
                                   e->top_k != pd[P_TOPK].def))
        return err_set(err, "eagle: total_tokens, depth and top_k shape mode=dynamic's tree; "
                            "mode=static drafts EAGLE-1's fixed tree (mc_sim_7b_63)");
    const model *tm = d->env.target;
    e->V = tm->cfg.vocab_size, e->D = tm->cfg.dim, e->T_L = tm->cfg.seq_len;
    if (e->mode == MODE_STATIC) {
        build_template(e);
        e->levels = STATIC_DEPTH;
        e->max_nodes = STATIC_NODES;
        int per_depth[STATIC_DEPTH + 1] = {0};
        e->max_pass = 1, e->max_scratch = 0;
        for (int i = 0; i < STATIC_NODES; i++)
            if (e->tmpl[i].kids) {
                e->max_scratch++;
                int c = ++per_depth[e->tmpl[i].depth];
                if (c > e->max_pass) e->max_pass = c;
            }
        e->max_trows = 1 + STATIC_NODES;
    } else {
        e->levels = e->depth_cfg + 1;
        e->max_nodes = e->top_k + e->depth_cfg * e->top_k * e->top_k;
        e->max_pass = e->top_k;
        e->max_scratch = e->depth_cfg * e->top_k;
        e->max_trows = e->total;
        e->max_kids = e->top_k;
    }
    if (e->max_kids > e->V)
        return err_set(err, "eagle: %d candidates per node, but the vocabulary has %d tokens",
                       e->max_kids, e->V);
    /* the head's rows per call: a prompt chunk, an accepted path and its bonus, a tree level */
    int head_rows = PREFILL_CHUNK;
    if (e->levels + 1 > head_rows) head_rows = e->levels + 1;
    if (e->max_pass > head_rows) head_rows = e->max_pass;
    if (eagle_head_open(&e->head, d->str[P_HEAD], tm, d->env.pool, head_rows, e->max_scratch, err))
        return -1;
    size_t V = (size_t)e->V, D = (size_t)e->D, N = (size_t)e->max_nodes;
    size_t P = (size_t)e->max_pass, S = (size_t)(e->max_scratch ? e->max_scratch : 1);
    size_t TR = (size_t)(e->max_trows > PREFILL_CHUNK ? e->max_trows : PREFILL_CHUNK);
    e->dt.node = malloc(sizeof *e->dt.node * N);
    e->hroot = malloc(sizeof(float) * D), e->lroot = malloc(sizeof(float) * V);
    e->hid = malloc(sizeof(float) * S * D), e->hlog = malloc(sizeof(float) * P * V);
    e->feats = malloc(sizeof(float) * TR * D);
    e->htok = malloc(sizeof(int) * P), e->hpar = malloc(sizeof(int) * P);
    e->dt.eval = malloc(sizeof(int) * (P > N ? P : N));
    e->tlog = malloc(sizeof(float) * TR * V), e->thid = malloc(sizeof(float) * TR * D);
    e->ttok = malloc(sizeof(int) * TR), e->tpar = malloc(sizeof(int) * TR);
    e->rnode = malloc(sizeof(int) * TR), e->path = malloc(sizeof(int) * TR);
    e->em = malloc(sizeof(int) * TR), e->walk = malloc(sizeof(int) * 2 * TR);
    e->dt.order = malloc(sizeof(int) * N), e->tmap = malloc(sizeof(int) * STATIC_NODES);
    e->dt.ctok = malloc(sizeof(int) * (size_t)e->max_kids);
    e->dt.clogp = malloc(sizeof(double) * (size_t)e->max_kids);
    e->seq = malloc(sizeof(int) * ((size_t)e->T_L + TR));
    if (!e->dt.node || !e->hroot || !e->lroot || !e->hid || !e->hlog || !e->feats || !e->htok ||
        !e->hpar || !e->dt.eval || !e->tlog || !e->thid || !e->ttok || !e->tpar || !e->rnode ||
        !e->path || !e->em || !e->walk || !e->dt.order || !e->tmap || !e->dt.ctok || !e->dt.clogp ||
        !e->seq)
        return err_set(err, "eagle: out of memory");
    if (dec_fwd_new(d, tm, (int)TR, &e->ft, err)) return -1;
    fwd_set_hidden_out(e->ft, e->thid, NULL); /* the features: after the final norm */
    return 0;
}

/* ---- counters ----------------------------------------------------------------------------------
 */

static const stat_def eagle_counters[EC_N] = {
    [EC_TREE_NODES] = {"tree_nodes", STAT_INT, STAT_SUM, STAT_DET,
                       "draft tokens in the trees the target verified (the current token not "
                       "counted)"},
    [EC_TREE_NODES_MAX] = {"tree_nodes_max", STAT_INT, STAT_MAX, STAT_DET,
                           "the largest tree of the sample"},
    [EC_HEAD_ROWS] = {"head_rows", STAT_INT, STAT_SUM, STAT_DET,
                      "rows the draft head evaluated after the prompt (text rows and tree rows)"},
    [EC_RANK0] = {"accept_rank0", STAT_INT, STAT_SUM, STAT_DET,
                  "accepted tokens that were the head's most probable child of their parent"},
    [EC_RANK1UP] = {"accept_rank1up", STAT_INT, STAT_SUM, STAT_DET,
                    "accepted tokens that were the head's second choice or lower"},
    [EC_DEPTH_MAX] = {"accepted_depth_max", STAT_INT, STAT_MAX, STAT_DET,
                      "the longest path accepted in one step"},
};

/* clang-format off */
const dec_vtable dec_eagle_vtable = {
    .name = "eagle",
    .summary = "EAGLE: a draft head on the target's features drafts a token tree, one target "
               "pass verifies it (EAGLE-1's static tree, EAGLE-2's dynamic tree)",
    .params = {
        [P_HEAD] = {"head", PARAM_STR, 0, 0, 0, {0}, "the head's folder: config.json and "
                    "model.safetensors (required)"},
        [P_MODE] = {"mode", PARAM_ENUM, MODE_DYNAMIC, 0, 0, {"static", "dynamic"},
         "static: EAGLE-1's tree (mc_sim_7b_63); dynamic: EAGLE-2's best nodes under a budget"},
        [P_TOTAL] = {"total_tokens", PARAM_INT, 60, 2, 1024, {0},
         "dynamic: rows of the target's pass (the current token and total_tokens - 1 drafts)"},
        [P_DEPTH] = {"depth", PARAM_INT, 7, 1, 16, {0},
         "dynamic: expansion passes after the first level (the tree's depth - 1)"},
        [P_TOPK] = {"top_k", PARAM_INT, 10, 1, 32, {0},
         "dynamic: nodes expanded per level and children of each"},
    },
    .needs_draft = 0,
    .create = eagle_create,
    .generate = eagle_generate,
    .destroy = eagle_destroy,
    .counters = eagle_counters,
    .n_counters = EC_N,
    /* probed when tune is given a head (tune --set eagle:head=DIR); without one tune leaves
     * eagle out, naming the missing head= */
    .tune_grid = "total_tokens=16,32,60",
};
/* clang-format on */
