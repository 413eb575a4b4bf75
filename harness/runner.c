/* runner.c: the measurement loop of `run` and `sweep` (design in runner.h): every decoder on
 * every prompt and repeat, with the state of a resumed run rebuilt first. The rest of the run
 * lives in runner_open.c, runner_plan.c, runner_record.c and runner_sample.c; the shared options
 * in runner_opts.c. */
#include "harness/runner_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/rng.h"

/* ---- the state of a resumed run ----------------------------------------------------------- */

/* A decoder that keeps state across prompts (Ouroboros' pool, the suffix decoder's tree) starts
 * each repeat from --state-load or empty, and every sample changes it. When an earlier process
 * stored some of this repeat's samples (--resume), the state they left is rebuilt before the
 * decoder measures again or its state is saved: each of them is generated again, unstored, in
 * the run's order, from the same starting state. A decoder is a deterministic function of its
 * state, the prompt and the seed (decoder.h), so this is the state an uninterrupted run would
 * have: the remaining samples measure the same work, and --state-save writes the same file.
 * The state is not a function of the outputs alone (Ouroboros' pool also learns the draft's
 * phrases and the target's corrections), which is why the samples are generated again rather
 * than their outputs replayed. idx[0..n_idx): the prompts, in order. */
static int rebuild_state(runner *r, dec *dc, const char *shown, const int *idx, int n_idx, int rep,
                         char *err) {
    char label[160];
    snprintf(label, sizeof label, "%.60s (rebuilding its %s, not stored)", shown,
             dec_state_name(dc));
    progress_note(&r->prog,
                  "decbench: %s: rebuilding its %s from the %d sample(s) of repeat %d stored "
                  "before (generated again, not stored)",
                  shown, dec_state_name(dc), n_idx, rep);
    for (int j = 0; j < n_idx; j++) {
        runner_prompt *p = &r->prompts[idx[j]];
        int prep = runner_prepare(r, idx[j], err);
        if (prep) return prep;
        if (p->skip) continue; /* left out (--skip-long): the run never generated it */
        dec_stats st;
        int n;
        progress_sample_start(&r->prog, label);
        int g = dec_generate(dc, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
        if (g == DEC_CANCELLED || runner_changed_file()) return RUNNER_CANCELLED;
        if (g) {
            char e[ERR_LEN], w[512];
            snprintf(e, sizeof e, "%s", err);
            runner_where(p, shown, rep, w, sizeof w);
            return err_set(err, "%s (rebuilding the %s): %s", w, dec_state_name(dc), e);
        }
    }
    return 0;
}

/* ---- the loop ----------------------------------------------------------------------------- */

void runner_samp_add(samp_sums *c, const dec_stats *st) {
    c->tests += st->samp_tests;
    c->accepts += st->samp_accepts;
    c->expected += st->samp_expected;
    c->variance += st->samp_variance;
}

/* Acceptance against its theoretical rate: each rejection test accepts with a probability the
 * decoder knows before drawing (sum min(p, q), or p(x) for a fixed guess), so the acceptances
 * of a correct verifier are their expected number within a few standard deviations. |z| > 5
 * (a chance of 6e-7 for a correct one) is reported as a failure. Returns how many failed. */
long runner_sampling_check(runner *r, const samp_sums *c, char *const *shown, int n) {
    long bad = 0;
    for (int k = 0; k < n; k++) {
        if (c[k].tests == 0) continue;
        double z = c[k].variance > 0 ? (c[k].accepts - c[k].expected) / sqrt(c[k].variance) : 0;
        int suspect = fabs(z) > 5;
        bad += suspect;
        progress_note(&r->prog,
                      "decbench: sampling check: %s: %ld of %ld rejection tests accepted "
                      "(%.1f%%), theory %.1f (%.1f%%): z = %.2f%s",
                      shown[k], c[k].accepts, c[k].tests, 100.0 * c[k].accepts / c[k].tests,
                      c[k].expected, 100.0 * c[k].expected / c[k].tests, z,
                      suspect ? ": *** FAILED (|z| > 5): the verifier does not keep plain "
                                "sampling's distribution"
                              : "");
    }
    return bad;
}

int runner_measure(runner *r, db *d, int64_t run_id, char *const *canon, char *const *shown, int n,
                   const char *title, runner_result *res, char *err) {
    if (r->o.batch > 1) return runner_measure_batch(r, d, run_id, canon, shown, n, title, res, err);
    memset(res, 0, sizeof *res);
    dec **decs = calloc((size_t)n, sizeof *decs);
    char *warmed = calloc((size_t)n, 1), *todo = calloc((size_t)n, 1);
    samp_sums *check = calloc((size_t)n, sizeof *check);
    /* rebuild_state's work: per decoder with state, the prompts of this repeat an earlier
     * process stored, not yet generated again */
    char *stateful = calloc((size_t)n, 1);
    int *stored = malloc(sizeof *stored * (size_t)n * (size_t)(r->n_prompts + 1));
    int *n_stored = calloc((size_t)n, sizeof *n_stored);
    int rc = -1;
    if (!decs || !warmed || !todo || !check || !stateful || !stored || !n_stored) {
        err_set(err, "out of memory");
        goto done;
    }
    dec_env env = runner_measuring_env(r);
    long total = 0; /* the samples of this shard (all of them without --shard) */
    for (int rep = 0; rep < r->o.repeats; rep++)
        for (int i = 0; i < r->n_prompts; i++)
            for (int k = 0; k < n; k++) total += runner_in_shard(r, canon[k], rep, i);
    progress_begin(&r->prog, title, total);
    for (int rep = 0; rep < r->o.repeats; rep++) {
        /* Fresh instances per repeat: no state carries from one repeat into the next. */
        for (int k = 0; k < n; k++) {
            dec_free(decs[k]);
            decs[k] = NULL;
            if (dec_create(&decs[k], canon[k], &env, err)) goto done;
            char ignored[ERR_LEN];
            stateful[k] = dec_state_name(decs[k]) && dec_state_check(decs[k], ignored) == 0;
            n_stored[k] = 0;
        }
        if (runner_load_states(r, decs, n, err)) goto done;
        for (int i = 0; i < r->n_prompts; i++) {
            runner_prompt *p = &r->prompts[i];
            int n_todo = 0, n_mine = 0;
            for (int k = 0; k < n; k++) {
                int done = 0, mine = runner_in_shard(r, canon[k], rep, i);
                if (mine && db_sample_done(d, run_id, p->sample->dataset, p->key_index, canon[k],
                                           rep, &done, err))
                    goto done;
                todo[k] = mine && !done;
                n_todo += todo[k];
                n_mine += mine;
                if (mine && done && stateful[k])
                    stored[(size_t)k * (size_t)r->n_prompts + (size_t)n_stored[k]++] = i;
            }
            /* a later turn is built from greedy's earlier answers when first needed */
            int prep = n_todo ? runner_prepare(r, i, err) : 0;
            if (prep < 0) goto done;
            if (prep == RUNNER_CANCELLED) {
                rc = RUNNER_INTERRUPTED;
                goto done;
            }
            if (p->skip) n_todo = 0; /* longer than the context: left out (--skip-long) */
            for (int k = 0; p->skip && k < n; k++) todo[k] = 0;
            progress_skip(&r->prog, n_mine - n_todo);
            res->skipped += n_mine - n_todo;
            for (int k = 0; k < n; k++) {
                if (!todo[k]) continue;
                /* each step returns -1 on error, RUNNER_CANCELLED when Ctrl-C stopped it */
                int step_rc = 0;
                if (!warmed[k]) {
                    step_rc = runner_warm_up(r, canon[k], shown[k], err);
                    warmed[k] = step_rc == 0;
                }
                if (step_rc == 0 && n_stored[k]) {
                    step_rc = rebuild_state(r, decs[k], shown[k],
                                            stored + (size_t)k * (size_t)r->n_prompts, n_stored[k],
                                            rep, err);
                    n_stored[k] = 0;
                }
                if (step_rc == 0 && !p->ref && !runner_is_greedy(canon[k]) &&
                    !runner_standard_sampling(r))
                    step_rc = runner_reference(r, p, err);
                if (step_rc < 0) goto done;
                if (step_rc == 0 && !runner_stopped()) {
                    step_rc = runner_measure_one(r, d, run_id, decs[k], canon[k], shown[k], p, rep,
                                                 res, err);
                    if (step_rc == 0) runner_samp_add(&check[k], &r->last);
                }
                if (step_rc < 0) goto done;
                if (step_rc == RUNNER_CANCELLED || runner_stopped()) {
                    rc = RUNNER_INTERRUPTED;
                    goto done;
                }
            }
        }
    }
    /* the saved state is the last repeat's: its samples stored before are generated again */
    for (int k = 0; r->state_save && k < n; k++) {
        if (!n_stored[k] || !runner_has_state(r, decs[k])) continue;
        int b = rebuild_state(r, decs[k], shown[k], stored + (size_t)k * (size_t)r->n_prompts,
                              n_stored[k], r->o.repeats - 1, err);
        n_stored[k] = 0;
        if (b < 0) goto done;
        if (b == RUNNER_CANCELLED || runner_stopped()) {
            rc = RUNNER_INTERRUPTED;
            goto done;
        }
    }
    if (runner_save_states(r, decs, canon, n, err)) goto done;
    if (runner_standard_sampling(r)) res->samp_suspect = runner_sampling_check(r, check, shown, n);
    rc = RUNNER_DONE;
done:
    if (runner_changed_file()) { /* whatever stopped the loop, this is why */
        rc = err_set(err,
                     "%s changed while in use: the file shrank under the run's mapping (SIGBUS); "
                     "the sample being measured is not stored: restore the file, then --resume",
                     runner_changed_file());
    }
    free(check);
    free(stateful);
    free(stored);
    free(n_stored);
    for (int k = 0; decs && k < n; k++) dec_free(decs[k]);
    free(decs);
    free(warmed);
    free(todo);
    progress_end(&r->prog);
    return rc;
}
