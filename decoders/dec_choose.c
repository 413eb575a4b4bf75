/* dec_choose.c: how every decoder chooses and verifies tokens (dec_impl.h: dec_pick,
 * dec_propose, dec_draft_pick, dec_draft_prob, dec_accept, dec_accept_node, dec_tree_walk),
 * on the arithmetic of sampling.h. At temperature 0 each is the argmax and a comparison, as
 * the decoders computed before sampling existed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/sampling.h"
#include "util/err.h"

double dec_sampling_margin(const dec_sampling *s, const float *logits, int V, int pos) {
    const int on = dec_sampling_on(s);
    if (on && s->mode != DEC_SAMPLING_COUPLED) return NAN;
    samp_work *w = NULL;
    double *p = NULL;
    char err[ERR_LEN];
    if (on && (samp_work_new(&w, V, err) || !(p = malloc(sizeof(double) * (size_t)V)))) {
        samp_work_free(w);
        return NAN;
    }
    if (on) samp_dist(w, s, logits, p); /* the kept set: p > 0 */
    const uint64_t key = on ? samp_key(s->seed, pos) : 0;
    double best = -INFINITY, second = -INFINITY;
    for (int v = 0; v < V; v++) {
        if (on && !(p[v] > 0)) continue;
        double sc = on ? (double)logits[v] / s->temperature + samp_gumbel(key, v) : logits[v];
        if (sc > best)
            second = best, best = sc;
        else if (sc > second)
            second = sc;
    }
    samp_work_free(w);
    free(p);
    return second > -INFINITY ? best - second : NAN;
}

static int vocab(const dec *d) {
    return d->env.target->cfg.vocab_size;
}

static int sampling(const dec *d) {
    return d->env.sampling.temperature > 0;
}

static int coupled(const dec *d) {
    return sampling(d) && d->env.sampling.mode == DEC_SAMPLING_COUPLED;
}

int dec_pick(dec *d, const float *logits, int pos) {
    if (!sampling(d)) return fwd_argmax(logits, vocab(d));
    const dec_sampling *s = &d->env.sampling;
    if (s->mode == DEC_SAMPLING_COUPLED) return samp_gumbel_pick(d->sw, s, logits, pos);
    samp_dist(d->sw, s, logits, d->sp);
    return samp_draw(d->sp, vocab(d), samp_uniform(samp_key(s->seed, pos), SAMP_PICK, 0));
}

int dec_propose(dec *d, const float *logits, int pos) {
    return coupled(d) ? dec_pick(d, logits, pos) : fwd_argmax(logits, vocab(d));
}

int dec_draft_pick(dec *d, const float *dl, int pos, int index) {
    if (!sampling(d)) return fwd_argmax(dl, vocab(d));
    const dec_sampling *s = &d->env.sampling;
    if (s->mode == DEC_SAMPLING_COUPLED) return samp_gumbel_pick(d->sw, s, dl, pos);
    samp_dist(d->sw, s, dl, d->sq);
    uint32_t id = (uint32_t)index;
    return samp_draw(d->sq, vocab(d), samp_uniform(samp_key(s->seed, pos), SAMP_DRAFT, id));
}

double dec_draft_prob(const float *dl, int V, int x) {
    enum { K = 10 };
    int top[K], n = 0;
    for (int v = 0; v < V; v++) { /* the K largest, by (logit, lower id), in order */
        int i = n < K ? n++ : K;
        if (i == K && !(dl[v] > dl[top[K - 1]])) continue;
        if (i == K) i = K - 1;
        while (i > 0 && dl[v] > dl[top[i - 1]]) top[i] = top[i - 1], i--;
        top[i] = v;
    }
    double z = 0, px = 0;
    for (int i = 0; i < n; i++) {
        double e = samp_exp((double)dl[top[i]] - dl[top[0]]);
        z += e;
        if (top[i] == x) px = e;
    }
    return px / z;
}

/* One rejection test of standard mode, counted: accepted with probability `ratio` (u below
 * it), whose expected value before the proposal was drawn is `alpha`. */
static int test(dec *d, uint64_t key, int j, double ratio, double alpha) {
    if (d->env.sampling.test_flaw == 2) ratio = 1; /* accepts every proposal */
    int ok = samp_uniform(key, SAMP_ACCEPT, (uint32_t)j) < ratio;
    dec_stats *st = d->st;
    st->samp_tests++;
    st->samp_accepts += ok;
    st->samp_expected += alpha;
    st->samp_variance += alpha * (1 - alpha);
    return ok;
}

/* The residual draw after every proposal at a node was rejected: from r (or from p with the
 * test flaw: the classic bug the statistical test must catch). */
static int residual(dec *d, uint64_t key, const double *r) {
    const double *from = d->env.sampling.test_flaw ? d->sp : r;
    return samp_draw(from, vocab(d), samp_uniform(key, SAMP_RESID, 0));
}

int dec_accept_node(dec *d, const float *tl, const float *const *dl, const int *x, int n, int pos,
                    int *tok) {
    if (!sampling(d) || coupled(d)) {
        *tok = dec_pick(d, tl, pos);
        for (int i = 0; i < n; i++)
            if (x[i] == *tok) return i;
        return -1;
    }
    const int V = vocab(d);
    const dec_sampling *s = &d->env.sampling;
    const uint64_t key = samp_key(s->seed, pos);
    double *p = d->sp, *r = d->sr, *q = d->sq;
    samp_dist(d->sw, s, tl, p);
    memcpy(r, p, sizeof(double) * (size_t)V);
    double sr = 1; /* r's total: r / sr is the current target distribution p' */
    for (int j = 0; j < n; j++) {
        int xj = x[j];
        if (!dl) {
            /* a fixed guess: accepted with probability p'(x) */
            double a = r[xj] / sr;
            if (test(d, key, j, a, a)) return j;
            sr -= r[xj];
            r[xj] = 0;
        } else {
            samp_dist(d->sw, s, dl[j], q);
            double alpha = 0, pq = r[xj] / sr;
            for (int v = 0; v < V; v++) alpha += fmin(r[v] / sr, q[v]);
            if (test(d, key, j, q[xj] > 0 ? pq / q[xj] : 1, alpha)) return j;
            double t = 0;
            for (int v = 0; v < V; v++) t += r[v] = fmax(r[v] / sr - q[v], 0);
            sr = t;
        }
        if (!(sr > 0)) { /* nothing left (cannot happen when p' > 0 was tested): draw from p */
            memcpy(r, p, sizeof(double) * (size_t)V);
            sr = 1;
        }
    }
    *tok = residual(d, key, r);
    return -1;
}

int dec_accept(dec *d, const float *tl, const float *dl, int x, int pos, int *tok) {
    const float *rows[1] = {dl};
    return dec_accept_node(d, tl, dl ? rows : NULL, &x, 1, pos, tok) == 0;
}

int dec_accept_chain(dec *d, const float *tlog, const float *dlog, int *x, int g, int pos0,
                     int *ended) {
    const size_t V = (size_t)vocab(d);
    int a = 0, t;
    *ended = 0;
    while (a < g) {
        const float *tl = tlog + (size_t)a * V, *dl = dlog ? dlog + (size_t)a * V : NULL;
        if (!dec_accept(d, tl, dl, x[a], pos0 + a, &t)) {
            x[a] = t;
            return a;
        }
        if (x[a++] == d->end_id) { /* an accepted end token: no bonus after it */
            *ended = 1;
            return a;
        }
    }
    x[a] = dec_pick(d, tlog + (size_t)a * V, pos0 + a);
    return a;
}

/* Whether row r's parent is in the current set (its rows are listed in set[0..ns)). */
static int child_of(const int *par, int r, const int *set, int ns) {
    for (int i = 0; i < ns; i++)
        if (par[r] == set[i]) return 1;
    return 0;
}

int dec_tree_walk(dec *d, const dec_tree *t, int root, int root_pos, const int *cand, int nc,
                  int *path, int *next) {
    enum { MAX_KIDS = 1024 }; /* children of one node considered at most */
    /* S is kept as a contiguous run of cand (candidates are in tree order, so a set's rows
     * precede its children's): set[0..ns) */
    int set_buf[2][MAX_KIDS], *set = set_buf[0], *kids = set_buf[1], ns = 1, k = 0;
    int x[MAX_KIDS];
    const float *q[MAX_KIDS];
    set[0] = root;
    path[0] = root;
    const size_t V = (size_t)vocab(d);
    for (;;) {
        int src = -1; /* the first member of S with logits */
        for (int i = 0; i < ns && src < 0; i++)
            if (t->trow[set[i]] >= 0) src = set[i];
        if (src < 0) {
            *next = -1;
            break;
        }
        const float *row = t->tl + (size_t)t->trow[src] * V;
        const int pos = root_pos + k + 1;
        /* the proposals: children of S, distinct tokens unless drawn from a draft */
        int nk = 0, nx = 0;
        for (int c = 0; c < nc && nk < MAX_KIDS; c++) {
            int r = cand[c];
            if (!child_of(t->par, r, set, ns)) continue;
            kids[nk++] = r;
            int dup = 0;
            if (!t->drow)
                for (int i = 0; i < nx && !dup; i++) dup = x[i] == t->tok[r];
            if (dup) continue;
            q[nx] = t->drow ? t->dl + (size_t)t->drow[r] * V : NULL;
            x[nx++] = t->tok[r];
        }
        if (nx == 0) {
            *next = dec_pick(d, row, pos);
            break;
        }
        int tok, got = dec_accept_node(d, row, t->drow ? q : NULL, x, nx, pos, &tok);
        if (got < 0) {
            *next = tok;
            break;
        }
        /* S <- the children carrying the accepted token */
        int ns2 = 0, w = x[got];
        for (int i = 0; i < nk; i++)
            if (t->tok[kids[i]] == w) kids[ns2++] = kids[i];
        int *tmp = set;
        set = kids, kids = tmp, ns = ns2;
        path[++k] = set[0];
        if (w == d->end_id) {
            *next = -1;
            break;
        }
    }
    /* a root-to-node path through the accepted rows: the parents of the deepest one */
    for (int j = k; j > 1; j--) path[j - 1] = t->par[path[j]];
    return k;
}
