/* skip.c: layer-skip self-speculation: the target with some of its sublayers left out drafts
 * for itself, the full target verifies.
 *
 * Draft & Verify (Zhang et al., arXiv 2309.08168; dilab-zju/self-speculative-decoding,
 * decoding.py) and SWIFT (Xia et al., arXiv 2410.06916; hemingkx/SWIFT, model/swift/utils.py):
 *   1. draft: from the last accepted token, up to gamma tokens one pass each through the target
 *      with the skipped sublayers left out (fwd_set_skip: a skipped attention or MLP sublayer
 *      adds nothing to the residual stream, as the references' skipped layers return their
 *      input). The drafts live in the scratch of the target's own context (dec_eval_more), so
 *      a draft row attends to the committed cache (full-model K/V) and to the earlier drafts'
 *      K/V of the layers it runs; skipped attention writes none;
 *   2. verify: one full pass over [current token, d_1..d_g] replaces that scratch (every layer
 *      recomputed at those positions), and the accepted rows are committed: the cache is then
 *      exactly plain decoding's (tests/test_skip.c checks it against greedy's);
 *   3. accept as spec.c does (dec_accept_chain): at T = 0 the argmax chain, in standard mode
 *      the rejection rule against the skipped pass's distribution, in coupled mode the shared
 *      noise, so every mode is exact as spec's.
 * Both references skip attention and MLP sublayers separately (D&V's Bayesian search has one
 * variable per sublayer; SWIFT draws sublayers); `attn=` and `mlp=` list them, `layers=` skips
 * both of a layer. With no list given the set is SWIFT's starting one: attention and MLP of the
 * odd layers 1, 3, ... up to L-2 (the first and the last layer always run).
 *
 * Draft length: the draft stops after a token whose probability under the skipped pass (softmax
 * at temperature 1 over the whole vocabulary) is below the threshold, the token kept (both
 * references, 0.8); with auto=1 the threshold moves as D&V's auto_th_stop_draft does (its
 * auto_parameters [1, 0.5, 0.9, 0.01, 0.9]: after each step m = (m + accepted/drafted) / 2; a
 * target of th + 0.01 while m < 0.9, else th - 0.01 unless the draft was gamma long, else th;
 * th = 0.9 th + 0.1 target), restarting at conf for every prompt.
 *
 * adapt=swift: SWIFT's on-the-fly layer-set optimisation. Once a prompt's output passes
 * window + 1 tokens, after every step (opt_interval 1) one candidate set of int(2 (L-2) ratio)
 * sublayers of layers 1..L-2 is drawn at random and scored by its "matchness": one pass of the
 * first window + 1 output tokens over the prompt's cache with the candidate skipped, the share
 * of rows whose argmax is the next output token. A candidate scoring above the best so far
 * becomes the set; the optimisation stops for good at a score above max_score, after
 * `tolerance` candidates in a row that did not improve, or after max_iter candidates (SWIFT's
 * eval_llama.sh: 0.90, 300, 1000; context window 32, skip ratio 0.45). As in SWIFT's
 * evaluation, the set and the optimiser carry over from prompt to prompt, and run
 * --state-save/--state-load keep the set, its score, the optimiser's counts and its random
 * state, so a later run goes on where the saving one stopped (with nothing left to do once the
 * optimisation has stopped). Deviations: every candidate is random (SWIFT draws every 25th
 * from Bayesian optimisation, a Gaussian process we do not have); the window's pass runs in a
 * second context holding the prompt's cache, prefilled once per prompt when optimisation starts
 * (SWIFT clones the prompt's cache), both counted as draft passes in the decode time; the draft
 * is a chain (SWIFT verifies a small tree of top-k siblings chosen by confidence); the random
 * draws come from a fixed seed, so a run is repeatable.
 *
 * adapt=search: an offline search in the spirit of D&V's (which maximises measured tokens/s over
 * 2 L binary sublayer variables with Bayesian optimisation on a few prompts): once the first
 * prompt's output passes window + 1 tokens, a greedy forward selection from the empty set adds,
 * round by round, the sublayer that most raises the expected tokens per full-pass cost,
 *   E(a) / (gamma share + 1),  E(a) = (1 - a^(gamma+1)) / (1 - a),
 * a being the window's matchness of the set (the chance a draft token is accepted, as if
 * independent) and share the part of a full pass's weights a skipped pass reads (the classifier
 * and the sublayers it runs, by parameter count), and stops when no sublayer raises it. It
 * runs once: --state-save keeps the set, and a run that loads it searches no more. Deviations:
 * a model of the speed (no timing, so it does not depend on the machine's load), one prompt's
 * window, greedy selection instead of a Gaussian process, gamma taken as the draft length
 * (the confidence stop shortens drafts).
 *
 * Cost: a draft pass reads the weights of the sublayers it runs, plus the classifier; counters
 * skip_attn and skip_mlp count the sublayers left out over all draft passes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/state_file.h"
#include "util/err.h"
#include "util/rng.h"

enum {
    P_GAMMA,
    P_CONF,
    P_AUTO,
    P_LAYERS,
    P_ATTN,
    P_MLP,
    P_ADAPT,
    P_RATIO,
    P_WINDOW,
    P_MAX_SCORE,
    P_TOLERANCE,
    P_MAX_ITER
};
enum {
    SC_SKIP_ATTN,
    SC_SKIP_MLP,
    SC_STOP_GAMMA,
    SC_STOP_CONF,
    SC_STOP_END,
    SC_STOP_ROOM,
    SC_OPT_ITERS,
    SC_OPT_BETTER,
    SC_N
};

enum { ADAPT_NONE, ADAPT_SWIFT, ADAPT_SEARCH };

#define SKIP_SEED 0x5eed5c1f0ull /* the optimiser's draws: fixed, so runs repeat */

typedef struct {
    int nl, V, gamma;
    unsigned char *mask;  /* the set: per layer FWD_SKIP_* */
    unsigned char *cand;  /* adapt: the candidate being scored */
    unsigned char *trial; /* adapt=search: a candidate of a round */
    fwd_ctx *ft, *fo;     /* the target; adapt: the prompt's cache for scoring candidates */
    float *tlog, *dlog, *olog;
    int *seq, *path, *pick, *opath;
    /* adapt: the optimiser (kept across prompts and in the state file) */
    double best;
    int iters, tol, stopped;
    rng_state rng;
} skip;

static int n_skipped(const unsigned char *mask, int nl, unsigned bit) {
    int n = 0;
    for (int l = 0; l < nl; l++) n += (mask[l] & bit) != 0;
    return n;
}

/* The set the spec names: its lists, or SWIFT's starting set when none is given. */
static int spec_set(dec *d, skip *s, char *err) {
    static const int keys[3] = {P_LAYERS, P_ATTN, P_MLP};
    static const unsigned bits[3] = {FWD_SKIP_ATTN | FWD_SKIP_MLP, FWD_SKIP_ATTN, FWD_SKIP_MLP};
    int given = 0;
    memset(s->mask, 0, (size_t)s->nl);
    for (int k = 0; k < 3; k++) {
        int n;
        const int *v = dec_param_list(d, keys[k], &n);
        for (int i = 0; i < n; i++) {
            if (v[i] >= s->nl)
                return err_set(err, "skip: %s value %d: the model has %d layers (0..%d)",
                               d->vt->params[keys[k]].key, v[i], s->nl, s->nl - 1);
            s->mask[v[i]] |= (unsigned char)bits[k];
        }
        given += n;
    }
    if (!given)
        for (int l = 1; l < s->nl - 1; l += 2) s->mask[l] = FWD_SKIP_ATTN | FWD_SKIP_MLP;
    return 0;
}

static int skip_create(dec *d, char *err) {
    skip *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "skip: out of memory");
    d->impl = s;
    const model_config *c = &d->env.target->cfg;
    s->nl = c->n_layers, s->V = c->vocab_size, s->gamma = d->param[P_GAMMA];
    size_t V = (size_t)s->V, G = (size_t)s->gamma, W = (size_t)d->param[P_WINDOW] + 1;
    s->mask = calloc((size_t)s->nl, 1);
    s->cand = calloc((size_t)s->nl, 1);
    s->trial = calloc((size_t)s->nl, 1);
    s->tlog = malloc(sizeof(float) * (G + 1) * V);
    s->dlog = malloc(sizeof(float) * G * V);
    s->seq = malloc(sizeof(int) * ((size_t)c->seq_len + G + 1));
    s->path = malloc(sizeof(int) * (G + 1));
    s->pick = malloc(sizeof(int) * 2 * (size_t)s->nl);
    if (!s->mask || !s->cand || !s->trial || !s->tlog || !s->dlog || !s->seq || !s->path ||
        !s->pick)
        return err_set(err, "skip: out of memory");
    if (spec_set(d, s, err)) return -1;
    if (dec_fwd_new(d, d->env.target, s->gamma + 1, &s->ft, err)) return -1;
    if (d->param[P_ADAPT]) {
        if (!(s->olog = malloc(sizeof(float) * W * V))) return err_set(err, "skip: out of memory");
        if (s->nl < 3 && d->param[P_ADAPT] == ADAPT_SWIFT)
            return err_set(
                err, "skip: adapt=swift draws from layers 1..L-2; the model has %d layers", s->nl);
        if (dec_fwd_new(d, d->env.target, (int)W, &s->fo, err)) return -1;
        if (!(s->opath = malloc(sizeof(int) * (size_t)fwd_max_batch(s->fo))))
            return err_set(err, "skip: out of memory");
    }
    rng_seed(&s->rng, SKIP_SEED);
    return 0;
}

/* The probability of x in row l: softmax at temperature 1 over the whole vocabulary (the
 * references' draft confidence), in one fixed order. */
static double full_prob(const float *l, int V, int x) {
    float mx = l[0];
    for (int v = 1; v < V; v++) mx = l[v] > mx ? l[v] : mx;
    double sum = 0;
    for (int v = 0; v < V; v++) sum += exp((double)l[v] - mx);
    return exp((double)l[x] - mx) / sum;
}

/* SWIFT's candidate: k of the 2 (L-2) sublayers of layers 1..L-2, uniformly (a partial
 * Fisher-Yates shuffle of the sublayer indices; index i < L-2 is attention of layer i + 1). */
static void draw_candidate(skip *s, int k) {
    int n = 2 * (s->nl - 2);
    for (int i = 0; i < n; i++) s->pick[i] = i;
    memset(s->cand, 0, (size_t)s->nl);
    for (int i = 0; i < k && i < n; i++) {
        int j = i + (int)rng_below(&s->rng, (uint32_t)(n - i)), t = s->pick[i];
        s->pick[i] = s->pick[j], s->pick[j] = t;
        int sub = s->pick[i], l = sub % (s->nl - 2) + 1;
        s->cand[l] |= (unsigned char)(sub < s->nl - 2 ? FWD_SKIP_ATTN : FWD_SKIP_MLP);
    }
}

/* SWIFT's matchness of the set `mask`: one pass of the first window + 1 output tokens
 * (out[0..]) over the prompt's cache with mask skipped, the share of rows whose argmax is the
 * next output token. */
static int window_score(dec *d, skip *s, const unsigned char *mask, const int *prompt, int n_prompt,
                        int *fo_ready, double *score, char *err) {
    const int W = d->param[P_WINDOW];
    if (!*fo_ready) { /* the prompt's cache, in decode time (it is work SWIFT's copy saves) */
        const int B = fwd_max_batch(s->fo);
        if (fwd_truncate(s->fo, 0, err)) return -1;
        for (int done = 0; done < n_prompt;) {
            int k = n_prompt - done < B ? n_prompt - done : B, last = k - 1;
            if (dec_eval(d, DEC_DRAFT, s->fo, k, prompt + done, NULL, &last, 1, s->olog, 0, err))
                return -1;
            for (int i = 0; i < k; i++) s->opath[i] = i;
            if (fwd_commit(s->fo, s->opath, k, err)) return -1;
            done += k;
        }
        *fo_ready = 1;
    }
    fwd_set_skip(s->fo, mask);
    int rc = dec_eval(d, DEC_DRAFT, s->fo, W + 1, d->out, NULL, NULL, W + 1, s->olog, 0, err);
    fwd_set_skip(s->fo, NULL);
    if (rc) return -1;
    /* matchness is scored by argmax, as SWIFT does at every temperature: it chooses no token */
    int match = 0;
    for (int i = 0; i < W; i++)
        match += fwd_argmax(s->olog + (size_t)i * s->V, s->V) == d->out[i + 1];
    *score = (double)match / W;
    dec_count(d, SC_OPT_ITERS, 1);
    return 0;
}

/* One SWIFT optimisation step: score a random candidate, keep it if it beats the best. */
static int optimise(dec *d, skip *s, const int *prompt, int n_prompt, int *fo_ready, char *err) {
    double score;
    draw_candidate(s, (int)(2 * (s->nl - 2) * d->rparam[P_RATIO]));
    if (window_score(d, s, s->cand, prompt, n_prompt, fo_ready, &score, err)) return -1;
    if (score > s->best) {
        memcpy(s->mask, s->cand, (size_t)s->nl);
        s->best = score, s->tol = 0;
        if (score > d->rparam[P_MAX_SCORE]) s->stopped = 1;
        dec_count(d, SC_OPT_BETTER, 1);
    } else if (++s->tol > d->param[P_TOLERANCE]) {
        s->stopped = 1;
    }
    if (++s->iters > d->param[P_MAX_ITER]) s->stopped = 1;
    return 0;
}

/* The share of a full pass's weights a pass skipping `mask` reads: parameters of the sublayers
 * it runs plus the classifier's, over all of them (a one-row pass reads every weight once;
 * attention over the cache and the norms are left out). */
static double pass_share(const model_config *c, const unsigned char *mask) {
    double q = (double)c->n_heads * c->head_size, dim = c->dim;
    double attn = 2 * dim * q + 2 * dim * c->kv_dim, mlp = 3 * dim * c->hidden_dim;
    double all = dim * c->vocab_size + c->n_layers * (attn + mlp), run = all;
    for (int l = 0; l < c->n_layers; l++)
        run -= (mask[l] & FWD_SKIP_ATTN ? attn : 0) + (mask[l] & FWD_SKIP_MLP ? mlp : 0);
    return run / all;
}

/* adapt=search's objective: tokens per step over the step's cost in full passes, for drafts of
 * gamma tokens each accepted with probability a (the window's matchness) and draft passes
 * costing pass_share of a full one: (1 - a^(gamma+1)) / (1 - a) / (gamma share + 1). The empty
 * set (a = 1, share 1) gives 1, plain decoding. */
static double objective(int gamma, double a, double share) {
    double tokens = a >= 1 ? gamma + 1 : (1 - pow(a, gamma + 1)) / (1 - a);
    return tokens / (gamma * share + 1);
}

/* adapt=search: greedy forward selection over the 2 L sublayers, from the empty set: each round
 * scores every sublayer not in the set added to it, and adds the best if it beats the set's
 * objective; stops when none does. Runs once (then the set is kept: `stopped`). */
static int search(dec *d, skip *s, const int *prompt, int n_prompt, int *fo_ready, char *err) {
    const model_config *c = &d->env.target->cfg;
    unsigned char *cur = s->cand, *trial = s->trial;
    double best = 1, best_a = 1;
    memset(cur, 0, (size_t)s->nl);
    for (;;) {
        int pick = -1;
        double round = best, round_a = 0;
        for (int sub = 0; sub < 2 * s->nl; sub++) {
            unsigned bit = sub % 2 ? FWD_SKIP_MLP : FWD_SKIP_ATTN;
            if (cur[sub / 2] & bit) continue;
            memcpy(trial, cur, (size_t)s->nl);
            trial[sub / 2] |= (unsigned char)bit;
            double a;
            if (window_score(d, s, trial, prompt, n_prompt, fo_ready, &a, err)) return -1;
            double o = objective(s->gamma, a, pass_share(c, trial));
            if (o > round) round = o, round_a = a, pick = sub;
        }
        if (pick < 0) break;
        cur[pick / 2] |= (unsigned char)(pick % 2 ? FWD_SKIP_MLP : FWD_SKIP_ATTN);
        best = round, best_a = round_a;
        dec_count(d, SC_OPT_BETTER, 1);
    }
    memcpy(s->mask, cur, (size_t)s->nl);
    s->best = best_a, s->stopped = 1;
    return 0;
}

static int skip_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    skip *s = d->impl;
    const size_t V = (size_t)s->V;
    double th = d->rparam[P_CONF], m = 0; /* the stop threshold and D&V's running matchness */
    int fo_ready = 0;
    memcpy(s->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, s->ft, prompt, n_prompt, s->tlog, err)) return -1;
    s->seq[L] = dec_pick(d, s->tlog, L);
    L += dec_emit(d, &s->seq[L], 1);
    while (!d->done) {
        const int n_past = L - 1;
        int g = d->max_new - d->n_out - 1; /* drafts that could still be emitted */
        if (g > s->gamma) g = s->gamma;
        int stop = g == s->gamma ? SC_STOP_GAMMA : SC_STOP_ROOM;
        /* 1. draft with the set skipped, in the target's scratch; d_i (x[i], at position
         * L + i) comes from the draft row i */
        int *x = s->seq + L;
        fwd_set_skip(s->ft, s->mask);
        for (int i = 0; i < g; i++) {
            float *dl = s->dlog + (size_t)i * V;
            int rc =
                i ? dec_eval_more(d, DEC_DRAFT, s->ft, 1, &x[i - 1], NULL, NULL, 1, dl, err)
                  : dec_eval(d, DEC_DRAFT, s->ft, 1, &s->seq[n_past], NULL, NULL, 1, dl, 0, err);
            if (rc) {
                fwd_set_skip(s->ft, NULL);
                return -1;
            }
            dec_count(d, SC_SKIP_ATTN, n_skipped(s->mask, s->nl, FWD_SKIP_ATTN));
            dec_count(d, SC_SKIP_MLP, n_skipped(s->mask, s->nl, FWD_SKIP_MLP));
            x[i] = dec_draft_pick(d, dl, L + i, 0);
            if (x[i] == d->end_id) /* nothing after the end token can be emitted */
                g = i + 1, stop = SC_STOP_END;
            else if (th > 0 && i + 1 < g && full_prob(dl, s->V, x[i]) < th)
                g = i + 1, stop = SC_STOP_CONF;
        }
        fwd_set_skip(s->ft, NULL);
        dec_count(d, stop, 1);
        /* 2. verify: one full pass over [current token, d_1..d_g] */
        if (dec_eval(d, DEC_TARGET, s->ft, g + 1, s->seq + n_past, NULL, NULL, g + 1, s->tlog, 0,
                     err))
            return -1;
        /* 3. accept as spec does */
        int ended, a = dec_accept_chain(d, s->tlog, s->dlog, x, g, L, &ended);
        int emitted = dec_emit(d, x, ended ? a : a + 1);
        dec_step_done(d, g + 1, g, a, emitted);
        if (d->param[P_AUTO] && g > 0) { /* D&V's auto_th_stop_draft */
            m = 0.5 * m + 0.5 * a / g;
            double target = m < 0.9 ? th + 0.01 : g == s->gamma ? th : th - 0.01;
            th = 0.9 * th + 0.1 * target;
        }
        if (d->done) break;
        /* 4. commit rows 0..a: the full pass's K/V */
        for (int i = 0; i <= a; i++) s->path[i] = i;
        if (fwd_commit(s->ft, s->path, a + 1, err)) return -1;
        L += emitted;
        if (s->fo && !s->stopped && d->n_out > d->param[P_WINDOW] + 1 &&
            (d->param[P_ADAPT] == ADAPT_SWIFT ? optimise : search)(d, s, prompt, n_prompt,
                                                                   &fo_ready, err))
            return -1;
    }
    return 0;
}

static void skip_destroy(dec *d) {
    skip *s = d->impl;
    if (!s) return;
    fwd_free(s->ft), fwd_free(s->fo);
    free(s->mask), free(s->cand), free(s->trial), free(s->tlog), free(s->dlog);
    free(s->olog), free(s->seq), free(s->path), free(s->pick), free(s->opath);
    free(s);
}

/* ---- the state file: the layer set and the optimiser ---------------------------------------
 * state_file.h's frame (the vocabulary at byte 12), then u32 layers, one byte per layer (its
 * FWD_SKIP_* bits), u32 iterations, u32 failures in a row, u32 stopped (0/1), the best score as
 * the u32 pair of its IEEE double bits (low word first), the optimiser's random state (u32
 * pair, low word first: a loaded run draws the candidates the saving run would have drawn
 * next), and the checksum. */
static const char MAGIC[8] = {'D', 'B', 'S', 'K', 'I', 'P', 'L', '1'};
#define HEADER_BYTES (8 + 3 * 4)

static int skip_state_save(const dec *d, const char *path, char *what, size_t n_what, char *err) {
    const skip *s = d->impl;
    size_t size = HEADER_BYTES + (size_t)s->nl + 7 * 4 + 8;
    unsigned char *buf = malloc(size), *b = buf;
    if (!buf) return err_set(err, "%s: out of memory for %zu bytes", path, size);
    b = sf_put_head(b, MAGIC, s->V), b = sf_put_u32(b, (uint32_t)s->nl);
    memcpy(b, s->mask, (size_t)s->nl), b += s->nl;
    uint64_t bits;
    memcpy(&bits, &s->best, sizeof bits);
    b = sf_put_u32(b, (uint32_t)s->iters), b = sf_put_u32(b, (uint32_t)s->tol);
    b = sf_put_u32(b, (uint32_t)s->stopped);
    b = sf_put_u32(b, (uint32_t)bits), b = sf_put_u32(b, (uint32_t)(bits >> 32));
    b = sf_put_u32(b, (uint32_t)s->rng.s), b = sf_put_u32(b, (uint32_t)(s->rng.s >> 32));
    int rc = sf_write(buf, size, "layer set", path, err);
    free(buf);
    if (rc == 0)
        snprintf(what, n_what, "%d attention and %d MLP sublayers skipped",
                 n_skipped(s->mask, s->nl, FWD_SKIP_ATTN), n_skipped(s->mask, s->nl, FWD_SKIP_MLP));
    return rc;
}

static int skip_state_load(dec *d, const char *path, char *err) {
    skip *s = d->impl;
    unsigned char *buf;
    size_t size = 0;
    if (sf_read(path, "layer set", &buf, &size, err)) return -1;
    int rc = -1;
    if (sf_check_head(buf, size, MAGIC, HEADER_BYTES, s->V, "layer set", path, err)) goto out;
    uint32_t nl = sf_get_u32(buf + 16);
    size_t end = size - 8, at = HEADER_BYTES;
    if (nl != (uint32_t)s->nl) {
        err_set(err, "%s: byte 16: a set for %u layers, the model has %d", path, nl, s->nl);
        goto out;
    }
    if (end - at < (size_t)nl + 7 * 4) {
        err_set(err, "%s: byte %zu: truncated: %zu bytes left, %zu expected", path, at, end - at,
                (size_t)nl + 7 * 4);
        goto out;
    }
    for (uint32_t l = 0; l < nl; l++)
        if (buf[at + l] > (FWD_SKIP_ATTN | FWD_SKIP_MLP)) {
            err_set(err, "%s: byte %zu: layer %u: skip bits %u, expected 0..3", path, at + l, l,
                    buf[at + l]);
            goto out;
        }
    const unsigned char *f = buf + at + nl;
    uint32_t stopped = sf_get_u32(f + 8);
    uint64_t bits = sf_get_u32(f + 12) | (uint64_t)sf_get_u32(f + 16) << 32;
    double best;
    memcpy(&best, &bits, sizeof best);
    if (stopped > 1 || !(best >= 0 && best <= 1)) {
        err_set(err, "%s: byte %zu: the optimiser's state is not valid (stopped %u, score %g)",
                path, at + nl, stopped, best);
        goto out;
    }
    if (sf_check_end(buf, at + nl + 7 * 4, end, path, err)) goto out;
    memcpy(s->mask, buf + at, nl);
    s->iters = (int)sf_get_u32(f), s->tol = (int)sf_get_u32(f + 4);
    s->stopped = (int)stopped, s->best = best;
    s->rng.s = sf_get_u32(f + 20) | (uint64_t)sf_get_u32(f + 24) << 32;
    rc = 0;
out:
    free(buf);
    return rc;
}

static const stat_def skip_counters[SC_N] = {
    [SC_SKIP_ATTN] = {"skip_attn", STAT_INT, STAT_SUM, STAT_DET,
                      "attention sublayers left out, summed over the draft passes"},
    [SC_SKIP_MLP] = {"skip_mlp", STAT_INT, STAT_SUM, STAT_DET,
                     "MLP sublayers left out, summed over the draft passes"},
    [SC_STOP_GAMMA] = {"stop_gamma", STAT_INT, STAT_SUM, STAT_DET,
                       "target steps whose draft reached gamma tokens"},
    [SC_STOP_CONF] = {"stop_conf", STAT_INT, STAT_SUM, STAT_DET,
                      "target steps whose draft stopped after a token below the confidence "
                      "threshold"},
    [SC_STOP_END] = {"stop_end", STAT_INT, STAT_SUM, STAT_DET,
                     "target steps whose draft stopped at the end token"},
    [SC_STOP_ROOM] = {"stop_room", STAT_INT, STAT_SUM, STAT_DET,
                      "target steps whose draft was cut by max_new"},
    [SC_OPT_ITERS] = {"opt_iters", STAT_INT, STAT_SUM, STAT_DET,
                      "adapt=swift|search: candidate layer sets scored on the window"},
    [SC_OPT_BETTER] =
        {"opt_better", STAT_INT, STAT_SUM, STAT_DET,
         "adapt=swift|search: candidates that beat the best so far and became the set"},
};

/* clang-format off */
const dec_vtable dec_skip_vtable = {
    .name = "skip",
    .summary = "layer-skip self-speculation: the target with sublayers skipped drafts, the full "
               "target verifies (Draft & Verify 2023, SWIFT 2024)",
    .params = {
        [P_GAMMA] = {"gamma", PARAM_INT, 8, 1, 64, {0}, "most tokens drafted per target step"},
        [P_CONF] = {"conf", PARAM_REAL, 0, 0, 0, {0},
         "stop drafting after a token of draft probability below this (0: never)",
         .rdef = 0.8, .rmin = 0, .rmax = 1},
        [P_AUTO] = {"auto", PARAM_INT, 1, 0, 1, {0},
         "1: the threshold follows acceptance (Draft & Verify's auto_th_stop_draft)"},
        [P_LAYERS] = {"layers", PARAM_LIST, 0, 0, 255, {0},
         "layers skipped whole, e.g. 1-3 or 1..3 (none of the three lists: SWIFT's odd layers)",
         .def_list = ""},
        [P_ATTN] = {"attn", PARAM_LIST, 0, 0, 255, {0}, "layers whose attention is skipped",
         .def_list = ""},
        [P_MLP] = {"mlp", PARAM_LIST, 0, 0, 255, {0}, "layers whose MLP is skipped",
         .def_list = ""},
        [P_ADAPT] = {"adapt", PARAM_ENUM, 0, 0, 0, {"none", "swift", "search"},
         "swift: SWIFT's on-the-fly optimisation of the set; search: a greedy search on the "
         "first prompt (both kept across prompts and in the state file)"},
        [P_RATIO] = {"ratio", PARAM_REAL, 0, 0, 0, {0},
         "swift: the share of the sublayers of layers 1..L-2 a candidate skips",
         .rdef = 0.45, .rmin = 0, .rmax = 1},
        [P_WINDOW] = {"window", PARAM_INT, 32, 1, 1024, {0},
         "swift, search: candidates are scored on the first window + 1 output tokens"},
        [P_MAX_SCORE] = {"max_score", PARAM_REAL, 0, 0, 0, {0},
         "swift: optimisation stops at a score above this", .rdef = 0.9, .rmin = 0, .rmax = 1},
        [P_TOLERANCE] = {"tolerance", PARAM_INT, 300, 1, 100000, {0},
         "swift: ... or after this many candidates in a row without a better score"},
        [P_MAX_ITER] = {"max_iter", PARAM_INT, 1000, 1, 1000000, {0},
         "swift: ... or after this many candidates"},
    },
    .create = skip_create,
    .generate = skip_generate,
    .destroy = skip_destroy,
    .counters = skip_counters,
    .n_counters = SC_N,
    .state_name = "layer set",
    .state_save = skip_state_save,
    .state_load = skip_state_load,
    .tune_grid = "gamma=4,8;conf=0,0.8",
};
/* clang-format on */
