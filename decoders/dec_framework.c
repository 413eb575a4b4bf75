/* dec_framework.c: the decoder framework of dec_impl.h: creating a decoder from its spec,
 * generate's bookkeeping (output buffer, statistics, cancel), the timed forward passes
 * (dec_eval, dec_prefill), dec_emit and dec_step_done, and the state hooks' dispatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_framework.h"
#include "decoders/sampling.h"
#include "model/rendezvous.h"
#include "util/clock.h"
#include "util/err.h"

/* Rows every forward context holds at least (dec_fwd_new), and the prompt chunk of dec_prefill. */
#define MIN_BATCH 64

int dec_create(dec **out, const char *spec, const dec_env *env, char *err) {
    *out = NULL;
    const char *colon = strchr(spec, ':');
    const dec_vtable *vt = dec_vtable_of_spec(spec, err);
    if (!vt || dec_vtable_check(vt, err)) return -1;
    if (vt->needs_draft && !env->draft)
        return err_set(err, "%s needs a draft model (--draft FILE)", vt->name);
    /* a draft whose vocabulary differs by padding rows writes the target's width
     * (model_pad_logits, set by the harness after checking the vocabularies) */
    if (env->draft && model_logits_width(env->draft) != env->target->cfg.vocab_size)
        return err_set(err,
                       "draft model %s has a vocabulary of %d tokens but the target %s has %d: "
                       "they must share one vocabulary",
                       env->draft->path, env->draft->cfg.vocab_size, env->target->path,
                       env->target->cfg.vocab_size);
    if (dec_sampling_check(&env->sampling, err)) return -1;
    dec *d = calloc(1, sizeof *d);
    if (!d) return err_set(err, "decoder: out of memory");
    d->vt = vt;
    d->env = *env;
    snprintf(d->name, sizeof d->name, "%s", vt->name);
    d->end_id = env->target->cfg.end_id;
    if (dec_params_parse(d, colon ? colon + 1 : "", err) || dec_sampling_alloc(d, err) ||
        vt->create(d, err)) {
        dec_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

void dec_free(dec *d) {
    if (!d) return;
    if (d->vt && d->vt->destroy) d->vt->destroy(d);
    samp_work_free(d->sw);
    free(d->sp), free(d->sq), free(d->sr);
    free(d);
}

void dec_set_seed(dec *d, unsigned long long seed) {
    d->env.sampling.seed = seed;
}

const char *dec_state_name(const dec *d) {
    return d->vt->state_name;
}

static int no_state(const dec *d, char *err) {
    return err_set(err, "%s keeps no state across prompts (nothing to save or load)", d->spec);
}

int dec_state_check(const dec *d, char *err) {
    if (!d->vt->state_name) return no_state(d, err);
    return d->vt->state_check ? d->vt->state_check(d, err) : 0;
}

int dec_state_save(const dec *d, const char *path, char *what, size_t n_what, char *err) {
    if (n_what) what[0] = '\0';
    if (!d->vt->state_name) return no_state(d, err);
    return d->vt->state_save(d, path, what, n_what, err);
}

int dec_state_load(dec *d, const char *path, char *err) {
    if (!d->vt->state_name) return no_state(d, err);
    return d->vt->state_load(d, path, err);
}

const char *dec_name(const dec *d) {
    return d->name;
}
const char *dec_spec(const dec *d) {
    return d->spec;
}

int dec_generate(dec *d, const int *prompt, int n_prompt, int max_new, int *out, int *n_out,
                 dec_stats *st, char *err) {
    memset(st, 0, sizeof *st);
    *n_out = 0;
    const model_config *cfg = &d->env.target->cfg;
    if (n_prompt < 1) return err_set(err, "empty prompt: at least one token (BOS) is needed");
    if (n_prompt > cfg->seq_len)
        return err_set(err, "prompt of %d tokens is longer than the context length %d", n_prompt,
                       cfg->seq_len);
    if (max_new < 0) return err_set(err, "max_new %d is negative", max_new);
    d->out = out;
    d->n_out = 0;
    d->max_new = max_new < cfg->seq_len - n_prompt ? max_new : cfg->seq_len - n_prompt;
    d->done = d->max_new == 0;
    d->st = st;
    st->counter_defs = d->vt->counters;
    st->n_counters = d->vt->n_counters;
    d->n_steps = 0;
    d->cancelled = 0;
    st->prompt_tokens = n_prompt;
    d->t_start = d->t_step = clock_now();
    int rc = d->done ? 0 : d->vt->generate(d, prompt, n_prompt, err);
    st->t_total = clock_now() - d->t_start;
    st->t_book = st->t_total - st->t_target - st->t_draft;
    st->new_tokens = d->n_out;
    *n_out = d->n_out;
    return rc && d->cancelled ? DEC_CANCELLED : rc;
}

/* Whether env.cancel stops the pass about to run (then err says so and the decoder fails out
 * of its loop like on any error; dec_generate turns that into DEC_CANCELLED). */
static int cancel_now(dec *d, char *err) {
    if (!d->env.cancel || !*d->env.cancel) return 0;
    d->cancelled = 1;
    return err_set(err, "cancelled");
}

/* One forward pass of `which` taking dt seconds, counted as a step with its n rows. */
static void count_pass(dec *d, dec_which which, int n, double dt, int is_prefill) {
    dec_stats *st = d->st;
    if (which == DEC_TARGET) {
        st->t_target += dt;
        st->target_steps++;
        if (!is_prefill) st->target_rows += n;
    } else {
        st->t_draft += dt;
        st->draft_steps++;
        if (!is_prefill) st->draft_rows += n;
    }
}

/* The pass trace (env.on_pass): what the pass's cost depends on. A pass of n rows asks for
 * n_out logits rows (out_rows NULL: all n, or none when n_out is 0) after `context` committed
 * tokens (a level of a tree evaluated with fwd_eval_more also attends to its few ancestors in
 * scratch, as a chain's rows do to theirs). */
static void trace_pass(dec *d, dec_which which, int n, const int *out_rows, int n_out, int context,
                       int is_prefill, double dt) {
    if (!d->env.on_pass) return;
    dec_pass p = {
        which == DEC_DRAFT, is_prefill, n, out_rows || n_out == 0 ? n_out : n, context, dt};
    d->env.on_pass(d->env.user, &p);
}

void dec_trace(dec *d, dec_which which, int rows, int logit_rows, int context, int is_prefill,
               double seconds) {
    if (!d->env.on_pass) return;
    dec_pass p = {which == DEC_DRAFT, is_prefill, rows, logit_rows, context, seconds};
    d->env.on_pass(d->env.user, &p);
}

int dec_eval(dec *d, dec_which which, fwd_ctx *f, int n, const int *tokens, const int *parent,
             const int *out_rows, int n_out, float *logits, int is_prefill, char *err) {
    if (cancel_now(d, err)) return -1;
    int context = fwd_n_past(f);
    double t0 = clock_now();
    int rc = fwd_eval(f, n, tokens, parent, NULL, out_rows, n_out, logits, err);
    double dt = clock_now() - t0;
    count_pass(d, which, n, dt, is_prefill);
    trace_pass(d, which, n, out_rows, n_out, context, is_prefill, dt);
    return rc;
}

int dec_eval_more(dec *d, dec_which which, fwd_ctx *f, int n, const int *tokens, const int *parent,
                  const int *out_rows, int n_out, float *logits, char *err) {
    if (cancel_now(d, err)) return -1;
    int context = fwd_n_past(f);
    double t0 = clock_now();
    int rc = fwd_eval_more(f, n, tokens, parent, out_rows, n_out, logits, err);
    double dt = clock_now() - t0;
    count_pass(d, which, n, dt, 0);
    trace_pass(d, which, n, out_rows, n_out, context, 0, dt);
    return rc;
}

/* The prompt tokens[0..n) in chunks of MIN_BATCH (what every context holds) with a cancel
 * check before each: a long prompt on a large model takes a while. The chunking cannot change
 * the result (batch invariance); each chunk's last row also computes logits, which the next
 * overwrites. Each chunk is one pass of the trace. */
static int prefill_chunks(dec *d, dec_which which, fwd_ctx *f, const int *tokens, int n,
                          float *logits, char *err) {
    for (int done = 0; done < n;) {
        int chunk = n - done < MIN_BATCH ? n - done : MIN_BATCH;
        double c0 = clock_now();
        if (cancel_now(d, err) || fwd_prefill(f, tokens + done, chunk, logits, err)) return -1;
        int last = chunk - 1; /* one pass per chunk: its last row's logits */
        trace_pass(d, which, chunk, &last, 1, done, 1, clock_now() - c0);
        done += chunk;
    }
    return 0;
}

/* Counts a prompt pass that started at t0 as one step of `which`. Both models' prompt passes
 * are prefill time: the draft's is not decoding either (spec and Ouroboros prefill the draft
 * once per prompt, as the reference implementations time it inside the prompt phase). */
static void prefill_done(dec *d, dec_which which, double t0) {
    double dt = clock_now() - t0;
    dec_stats *st = d->st;
    st->t_prefill += dt;
    if (which == DEC_TARGET) {
        st->t_target += dt;
        st->target_steps++;
    } else {
        st->t_draft += dt;
        st->draft_steps++;
    }
    d->t_step = t0 + dt; /* the first decode step's time starts after the prompt passes */
}

int dec_prefill(dec *d, dec_which which, fwd_ctx *f, const int *prompt, int n_prompt, float *logits,
                char *err) {
    double t0 = clock_now();
    int rc = fwd_truncate(f, 0, err) || prefill_chunks(d, which, f, prompt, n_prompt, logits, err)
                 ? -1
                 : 0;
    prefill_done(d, which, t0);
    return rc;
}

int dec_prefill_batch(dec *d, dec_which which, fwd_ctx *f, const int *prompt, int n_before, int n,
                      const int *tokens, const int *parent, int n_commit, const int *out_rows,
                      int n_out, float *logits, char *err) {
    double t0 = clock_now();
    int path[MIN_BATCH];
    for (int i = 0; i < n_commit && i < MIN_BATCH; i++) path[i] = i;
    int rc = n_commit < 1 || n_commit > MIN_BATCH
                 ? err_set(err, "dec_prefill_batch: %d prompt rows to commit (1..%d)", n_commit,
                           MIN_BATCH)
             : fwd_truncate(f, 0, err) ||
                     prefill_chunks(d, which, f, prompt, n_before, logits, err) ||
                     cancel_now(d, err)
                 ? -1
                 : 0;
    if (rc == 0) {
        double c0 = clock_now();
        rc = fwd_eval(f, n, tokens, parent, NULL, out_rows, n_out, logits, err) ? -1 : 0;
        if (rc == 0) trace_pass(d, which, n, out_rows, n_out, n_before, 1, clock_now() - c0);
        if (rc == 0 && fwd_commit(f, path, n_commit, err)) rc = -1;
    }
    prefill_done(d, which, t0);
    return rc;
}

int dec_draft_resync(fwd_ctx *fd, const int *dseq, const int *seq, int old_L, int L, char *err) {
    int dn = fwd_n_past(fd), keep = dn < old_L ? dn : old_L;
    while (keep < dn && keep < L - 1 && dseq[keep] == seq[keep]) keep++;
    return keep < dn ? fwd_truncate(fd, keep, err) : 0;
}

int dec_emit(dec *d, const int *tokens, int n) {
    int k = 0;
    while (k < n && !d->done) {
        int t = tokens[k++];
        d->out[d->n_out++] = t;
        if (t == d->end_id || d->n_out >= d->max_new) d->done = 1;
    }
    if (k && d->env.on_tokens) d->env.on_tokens(d->env.user, d->out + d->n_out - k, k);
#ifdef DECBENCH_TEST_COUNTER
    d->st->test_emits += k > 0; /* the test build's extra counter (stats/stats.h) */
#endif
    return k;
}

void dec_step_done(dec *d, int rows, int drafted, int accepted, int emitted) {
    dec_stats *st = d->st;
    st->verify_steps++;
    st->drafting_steps += drafted > 0;
    st->drafted += drafted;
    st->accepted += accepted;
    st->accept_hist[accepted < DEC_HIST_MAX ? accepted : DEC_HIST_MAX]++;
    for (int i = 0; i < drafted && i < DEC_HIST_MAX; i++) {
        st->pos_tried[i]++;
        if (i < accepted) st->pos_accepted[i]++;
    }
    double now = clock_now();
    if (d->env.on_step) {
        dec_step s = {++d->n_steps, rows, drafted, accepted, emitted, now - d->t_step};
        d->env.on_step(d->env.user, &s);
    } else {
        d->n_steps++;
    }
    d->t_step = now;
}

int dec_fwd_new(dec *d, const model *m, int max_batch, fwd_ctx **out, char *err) {
    if (fwd_new(out, m, d->env.pool, max_batch < MIN_BATCH ? MIN_BATCH : max_batch, d->env.kernels,
                err))
        return -1;
    fwd_allow_nonfinite(*out, d->env.allow_nonfinite);
    if (d->env.rdv) fwd_rdv_attach(d->env.rdv, *out, d->env.rdv_slot);
    return 0;
}

int dec_guess(const int *ctx, int len, int p, int period, int random, rng_state *r, int vocab) {
    if (random) return (int)rng_below(r, (uint32_t)vocab);
    int q = p - period;
    while (q >= len) q -= period;
    return q >= 0 ? ctx[q] : ctx[p % len];
}
