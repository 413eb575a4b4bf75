/* runner_batch.c: runner_measure for `run --batch B` (B > 1): B prompts decoded at once by each
 * decoder, their forward passes shared (model/rendezvous.h).
 *
 * Each decoder has B instances per repeat, one per sequence slot, each making its forward
 * contexts in the rendezvous (dec_env.rdv). A batch is a queue of prompts and one thread per
 * slot: a thread takes the next prompt of the queue, generates it with its slot's instance,
 * and takes the next, until the queue is empty. Only the thread holding the rendezvous's baton
 * runs (the decoders' own work, the shared passes), so nothing computes outside the pool while
 * a pass runs.
 *   - static batches (default): the run's prompts in order, B at a time; for each batch, greedy
 *     then every other decoder decodes its B prompts at once (its queue holds B prompts), so
 *     speed-ups stay paired batch by batch, as they are prompt by prompt without --batch;
 *   - --continuous: for each decoder, greedy first, one queue of every prompt: a sequence that
 *     ends is replaced by the next prompt at once, the batch ends when the queue is empty.
 * The samples are stored after their batch, each checked against greedy's output as without
 * --batch, with the batch's figures (db_batch): the batch it decoded in (static: one per batch
 * and decoder; continuous: one per decoder and repeat), the batch's wall time (the first
 * sequence's start to the last one's end: throughput is tokens over these), the mean rows of
 * the target passes the sequence took part in (its prompt passes left out), and its seconds per
 * token after the first. A
 * sample's own times (t_total, t_target, ...) are its sequence's wall times: they include the
 * other sequences' rows in its passes and their turns between them, which is the latency a
 * served request sees.
 * Decoders that keep state across prompts are refused (runner_batch_spec), so every instance is
 * a function of its prompt alone and a resumed run only leaves out the samples stored. */
#include "harness/runner_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/rendezvous.h"
#include "util/clock.h"
#include "util/err.h"

/* One sequence's outcome. */
typedef struct {
    int *out, n, rc, done;
    dec_stats st;
    double t0, t1;     /* clock at its start and end */
    long passes, rows; /* target passes it took part in, and their rows (every sequence's) */
    char err[ERR_LEN];
} seq_result;

typedef struct {
    runner *r;
    fwd_rdv *rdv;
    dec **decs;       /* the decoder's instance of each slot */
    const int *queue; /* prompt indices */
    int n_queue, next, stop;
    seq_result *res;  /* [n_queue] */
} batch_work;

typedef struct {
    batch_work *w;
    int slot;
} seq_thread;

/* A slot's thread: prompts from the queue until it is empty (the queue and `next` are read and
 * written only by the thread holding the baton). */
static void *seq_main(void *arg) {
    const seq_thread *t = arg;
    batch_work *w = t->w;
    fwd_rdv_enter(w->rdv, t->slot);
    while (!w->stop && !runner_stopped() && w->next < w->n_queue) {
        int q = w->next++;
        seq_result *s = &w->res[q];
        const runner_prompt *p = &w->r->prompts[w->queue[q]];
        fwd_rdv_reset(w->rdv, t->slot);
        s->t0 = clock_now();
        s->rc = dec_generate(w->decs[t->slot], p->ids, p->n_ids, p->max_new, s->out, &s->n, &s->st,
                             s->err);
        s->t1 = clock_now();
        fwd_rdv_counts(w->rdv, t->slot, w->r->s.target, &s->passes, &s->rows);
        s->done = 1;
        if (s->rc) w->stop = 1;
    }
    fwd_rdv_leave(w->rdv, t->slot);
    return NULL;
}

/* Decodes the queue with the slots' instances, n_slots threads at once. */
static int decode_queue(batch_work *w, int n_slots, char *err) {
    seq_thread th[RUNNER_MAX_BATCH];
    pthread_t id[RUNNER_MAX_BATCH];
    int started = 0;
    w->next = 0, w->stop = 0;
    for (int q = 0; q < w->n_queue; q++) w->res[q].done = 0, w->res[q].rc = 0;
    if (n_slots > w->n_queue) n_slots = w->n_queue;
    for (int s = 0; s < n_slots; s++) fwd_rdv_join(w->rdv, s);
    for (; started < n_slots; started++) {
        th[started] = (seq_thread){w, started};
        if (pthread_create(&id[started], NULL, seq_main, &th[started])) break;
    }
    for (int s = started; s < n_slots; s++) fwd_rdv_leave(w->rdv, s); /* never entered */
    for (int s = 0; s < started; s++) pthread_join(id[s], NULL);
    if (started == 0) return err_set(err, "--batch: cannot start a thread for a sequence");
    return 0;
}

/* The batch figures of result q of a queue whose results span [t0, t1]. */
static db_batch batch_of(const seq_result *s, int index, double wall) {
    double tokens = stat_derived_value(&s->st, STAT_D_decode_tokens);
    double t_decode = stat_derived_value(&s->st, STAT_D_t_decode);
    return (db_batch){.batch_index = index,
                      .batch_wall = wall,
                      .rows_per_pass = s->passes ? (double)s->rows / (double)s->passes : NAN,
                      .t_per_token = tokens > 0 ? t_decode / tokens : NAN};
}

/* Stores the queue's finished samples in queue order; returns the first failure (an error of a
 * sequence: -1 naming it; Ctrl-C: RUNNER_CANCELLED), or 0. */
static int store_queue(runner *r, db *d, int64_t run_id, const batch_work *w, dec *const *decs,
                       const char *canon, const char *shown, int rep, int index, samp_sums *check,
                       runner_result *res, char *err) {
    double t0 = 0, t1 = 0;
    int any = 0;
    for (int q = 0; q < w->n_queue; q++) {
        const seq_result *s = &w->res[q];
        if (!s->done) continue;
        t0 = any && t0 < s->t0 ? t0 : s->t0;
        t1 = any && t1 > s->t1 ? t1 : s->t1;
        any = 1;
    }
    int rc = 0;
    for (int q = 0; q < w->n_queue && rc == 0; q++) {
        const seq_result *s = &w->res[q];
        runner_prompt *p = &r->prompts[w->queue[q]];
        if (!s->done) continue;
        if (s->rc == DEC_CANCELLED || runner_changed_file()) {
            rc = RUNNER_CANCELLED;
            break;
        }
        if (s->rc) {
            char where[512];
            runner_where(p, shown, rep, where, sizeof where);
            rc = err_set(err, "%s: %s", where, s->err);
            break;
        }
        memcpy(r->out, s->out, sizeof(int) * (size_t)s->n);
        db_batch b = batch_of(s, index, t1 - t0);
        progress_sample_start(&r->prog, shown);
        rc = runner_store_one(r, d, run_id, decs[0], canon, shown, p, rep, s->n, &s->st, &b, res,
                              err);
        if (rc == 0) runner_samp_add(check, &s->st);
    }
    return rc;
}

int runner_measure_batch(runner *r, db *d, int64_t run_id, char *const *canon,
                         char *const *shown, int n, const char *title, runner_result *res,
                         char *err) {
    memset(res, 0, sizeof *res);
    const int B = r->o.batch;
    fwd_rdv *rdv = NULL;
    dec **decs = calloc((size_t)n * B, sizeof *decs);
    char *warmed = calloc((size_t)n, 1);
    samp_sums *check = calloc((size_t)n, sizeof *check);
    int *batch = malloc(sizeof(int) * (size_t)(r->n_prompts + 1));
    int *queue = malloc(sizeof(int) * (size_t)(r->n_prompts + 1));
    int n_res = r->n_prompts > B ? r->n_prompts : B;
    seq_result *sr = calloc((size_t)n_res, sizeof *sr);
    int rc = -1, index = 0;
    if (!decs || !warmed || !check || !batch || !queue || !sr) {
        err_set(err, "out of memory");
        goto done;
    }
    for (int q = 0; q < n_res; q++)
        if (!(sr[q].out = malloc(sizeof(int) * (size_t)(r->max_out > 0 ? r->max_out : 1)))) {
            err_set(err, "out of memory");
            goto done;
        }
    if (fwd_rdv_new(&rdv, B, err)) goto done;
    dec_env env = runner_measuring_env(r);
    env.rdv = rdv;
    progress_begin(&r->prog, title, (long)r->o.repeats * r->n_prompts * n);
    for (int rep = 0; rep < r->o.repeats; rep++) {
        /* fresh instances per repeat, as without --batch */
        for (int k = 0; k < n * B; k++) {
            dec_free(decs[k]);
            decs[k] = NULL;
            env.rdv_slot = k % B;
            if (dec_create(&decs[k], canon[k / B], &env, err)) goto done;
        }
        /* static: the prompts B at a time, every decoder on each batch; continuous: one batch of
         * every prompt per decoder */
        for (int first = 0; first < r->n_prompts;) {
            int n_batch = 0;
            while (first < r->n_prompts && (r->o.continuous || n_batch < B)) {
                int prep = runner_prepare(r, first, err);
                if (prep < 0) goto done;
                if (prep == RUNNER_CANCELLED) {
                    rc = RUNNER_INTERRUPTED;
                    goto done;
                }
                if (r->prompts[first].skip) { /* longer than the context (--skip-long) */
                    progress_skip(&r->prog, n);
                    res->skipped += n;
                } else {
                    batch[n_batch++] = first;
                }
                first++;
            }
            for (int k = 0; k < n && n_batch; k++) {
                int n_queue = 0;
                for (int j = 0; j < n_batch; j++) {
                    runner_prompt *p = &r->prompts[batch[j]];
                    int done = 0;
                    if (db_sample_done(d, run_id, p->sample->dataset, p->key_index, canon[k], rep,
                                       &done, err))
                        goto done;
                    if (done) {
                        progress_skip(&r->prog, 1);
                        res->skipped++;
                        continue;
                    }
                    /* greedy's reference when greedy is not measured first (runner.h) */
                    if (!p->ref && !runner_is_greedy(canon[k]) && !runner_standard_sampling(r)) {
                        int g = runner_reference(r, p, err);
                        if (g < 0) goto done;
                        if (g == RUNNER_CANCELLED) {
                            rc = RUNNER_INTERRUPTED;
                            goto done;
                        }
                    }
                    queue[n_queue++] = batch[j];
                }
                if (!n_queue) continue;
                if (!warmed[k]) {
                    int g = runner_warm_up(r, canon[k], shown[k], err);
                    if (g < 0) goto done;
                    if (g == RUNNER_CANCELLED || runner_stopped()) {
                        rc = RUNNER_INTERRUPTED;
                        goto done;
                    }
                    warmed[k] = 1;
                }
                batch_work w = {r, rdv, decs + (size_t)k * B, queue, n_queue, 0, 0, sr};
                progress_sample_start(&r->prog, shown[k]);
                if (decode_queue(&w, B, err)) goto done;
                int s = store_queue(r, d, run_id, &w, decs + (size_t)k * B, canon[k], shown[k],
                                    rep, index++, &check[k], res, err);
                if (s < 0) goto done;
                if (s == RUNNER_CANCELLED || runner_stopped()) {
                    rc = RUNNER_INTERRUPTED;
                    goto done;
                }
            }
        }
    }
    if (runner_standard_sampling(r)) res->samp_suspect = runner_sampling_check(r, check, shown, n);
    rc = RUNNER_DONE;
done:
    if (runner_changed_file())
        rc = err_set(err,
                     "%s changed while in use: the file shrank under the run's mapping (SIGBUS); "
                     "the samples being measured are not stored: restore the file, then --resume",
                     runner_changed_file());
    for (int k = 0; decs && k < n * B; k++) dec_free(decs[k]);
    fwd_rdv_free(rdv);
    for (int q = 0; sr && q < n_res; q++) free(sr[q].out);
    free(sr);
    free(decs);
    free(warmed);
    free(check);
    free(batch);
    free(queue);
    progress_end(&r->prog);
    return rc;
}
