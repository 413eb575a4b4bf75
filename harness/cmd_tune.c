/* cmd_tune.c: `decbench tune`: which decoder, with which settings, for this model on this
 * machine, within a time budget.
 *
 *   decbench tune --model M [--draft D] --dataset NAME [--budget MINUTES] [--probe-prompts N]
 *                 [--limit N] [--top K] [--out DIR] [the options of `run`]
 *
 * Phases (the share of the budget each may use; each prints what it took):
 *  1. probes (50%): greedy, then every point of the coarse grid (harness/tune_grid.c: one line
 *     per decoder; decoders the models cannot run, e.g. spec without --draft, eagle without a
 *     head, are left out and named; --set NAME:KEY=V,... adds parameters to every point of
 *     NAME, such as a head or a datastore), on the first --probe-prompts prompts with the pass
 *     trace: a sweep, one run per
 *     point against one greedy run, as `decbench sweep` stores it. Points go round-robin
 *     across decoders; a point whose estimated time (its decoder's slowest probe so far, else
 *     three times greedy's) would overrun the share is skipped and listed.
 *  2. cost curves (20%, measured between the probes): t(rows, context, logit rows) of the target
 *     (and the draft) over the default rows and the contexts the prompts reach
 *     (results/report/cost.h), reused from the database when a curve of the same model file,
 *     threads, kernels and KV cache type was measured on this machine with this build from a
 *     clean tree (cost_find_run_kv), else measured a round at a time between the probes, so
 *     that the curve sees the machine as the probes did (the rounds and the grid sized from
 *     greedy's passes to fit the share), and stored as a cost run. eagle's and medusa's draft
 *     passes are their heads' (--set eagle:head=DIR, medusa:head=DIR): each head a probe uses
 *     gets the curve of its pass (harness/cost_head.c, `cost --head`; the run's model is the
 *     head's safetensors file, its draft the target), reused when one of the same head, target,
 *     threads, kernels, machine and build is stored, else measured in one go just before its
 *     decoder's first probe; the curves share the phase's time alike.
 *  3. prediction: each probe's passes priced on the curves: its projected end-to-end speed-up
 *     (results/report/report_cost.c), which, unlike the probe's own few timings, does not move with
 *     the machine's load while it ran. A probe's draft passes are priced on the draft model's
 *     curve, an eagle or medusa probe's on its head's; the table names the curves.
 *  4. finals (the rest): greedy and the best predicted point of each decoder (the --top best),
 *     measured in one run on the prompts after the probe prompts (held out: the best of many
 *     probes on the same prompts is flattered by their noise); as many of them as the rest of
 *     the budget allows, estimated from the probes' measured times (none if not even one fits).
 *  5. the table ranked by prediction (predicted and measured speed-up, tokens and rows per
 *     step), one "recommended:" line per decoder and one overall, and two figures in --out:
 *     predicted versus measured speed-up, and speed-up versus rows per step (the frontier).
 * Sequoia's trees are fitted: a probe of tree:mode=sequoia without accept= takes the acceptance
 * by sibling rank of this model pair from the static-tree probes before it (tree:mode=static:
 * accept_rank<r> / offered_rank<r> summed over them, as `decbench sequoia --fit`), so its shape
 * is the DP's for this pair rather than for the default vector's (stories260K/llama2xs); the
 * grid's order (mode before nodes, static first) puts those probes first. Without such a probe,
 * or when they accepted nothing, the default vector stays and the output says so.
 * A decoder is recommended overall only if its measured speed-up exceeds greedy's by more than
 * TUNE_MARGIN and its projected one does too; otherwise the answer is greedy, said plainly.
 * Speed-ups are end-to-end (prompt passes included), as the papers and `sweep` rank them.
 * With --batch B (serving B sequences at once): the probes stay one sequence at a time (their
 * pass traces are what is priced), the cost curves are of passes of B sequences (`cost --batch
 * B`, the draft's too; reused only from curves of the same B; a head's curve is of one sequence,
 * so eagle's and medusa's probes are then priced on their target passes only, an upper bound,
 * and tune says so), so a prediction is the probe's
 * speed-up over greedy when B sequences like it decode in lockstep (results/report/cost.h,
 * batched curves); the final run is at --batch B, and a finalist's measured figure is its
 * throughput over greedy's there (report --layout batch). A decoder keeping state across
 * prompts cannot run batched: it is probed and predicted, and left out of the final. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/commands.h"
#include "harness/cost_head.h"
#include "harness/measure.h"
#include "harness/runner.h"
#include "harness/tune.h"
#include "harness/tune_grid.h"
#include "decoders/decoder.h"
#include "results/db/db.h"
#include "results/report/cost.h"
#include "results/report/report.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/file.h"

enum { T_BUDGET = RUNNER_N_OPTS, T_PROBES, T_TOP, T_OUT, T_NOPLOT, T_SET, T_HELP, T_COUNT };

static double elapsed(const tune *t) {
    return clock_now() - t->t0;
}

/* ---- phase 1: probes ------------------------------------------------------------------------ */

/* One run of specs (canon/shown, n) over the current prompts; status 'c' or 'f'. */
static int measure_specs(tune *t, char *const *canon, char *const *shown, int n, int64_t sweep,
                         int64_t baseline, const char *title, int64_t *run_id, char *status,
                         char *err) {
    db_run run;
    db_env env;
    runner_fill_run(&t->r, &run, &env, t->cmd);
    run.sweep_id = sweep;
    run.baseline_run_id = baseline;
    if (db_begin_run(t->d, &run, run_id, err)) return -1;
    runner_result res;
    int m = runner_measure(&t->r, t->d, *run_id, canon, shown, n, title, &res, err);
    char e2[ERR_LEN];
    db_status fin = m < 0                     ? DB_FAILED
                    : m == RUNNER_INTERRUPTED ? DB_INCOMPLETE
                    : res.mismatches          ? DB_FAILED
                                              : DB_COMPLETE;
    if (db_finish_run(t->d, *run_id, fin, m < 0 ? e2 : err)) return -1;
    *status = fin == DB_COMPLETE ? 'c' : 'f';
    return m;
}

/* The --set value for decoder `name` (its parameters after "NAME:"), or NULL. */
static const char *set_of(const tune *t, const char *name) {
    return cmd_set_of(t->sets, t->n_sets, name);
}

/* Each point of a decoder that --set names gets its parameters: "eagle:total_tokens=16" with
 * --set eagle:head=DIR is "eagle:total_tokens=16,head=DIR". */
static int apply_sets(const tune *t, char **pts, int n, char *err) {
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(pts[i], ":"), pts[i]);
        const char *extra = set_of(t, name);
        if (!extra) continue;
        size_t len = strlen(pts[i]) + strlen(extra) + 2;
        char *p = malloc(len);
        if (!p) return err_set(err, "out of memory");
        snprintf(p, len, "%s%s%s", pts[i], strchr(pts[i], ':') ? "," : ":", extra);
        free(pts[i]);
        pts[i] = p;
    }
    return 0;
}

/* The decoders the grid names that these models cannot run (a draft model is missing, a head or
 * a datastore no --set gives, ...): their points are dropped and the decoder named. Then every
 * point is validated. */
static int plan(tune *t, char *err) {
    char **pts;
    int n_pts;
    if (tune_points(&pts, &n_pts, err)) return -1;
    if (apply_sets(t, pts, n_pts, err)) {
        tune_points_free(pts, n_pts);
        return -1;
    }
    char **keep = calloc((size_t)n_pts + 1, sizeof *keep);
    int n_keep = 0, rc = keep ? 0 : err_set(err, "out of memory");
    dec_env env = session_env(&t->r.s);
    for (int i = 0; rc == 0 && i < n_pts; i++) {
        char name[64], e[ERR_LEN], base[1200];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(pts[i], ":"), pts[i]);
        if (strstr(t->skipped_decoders, name)) continue;
        const char *extra = set_of(t, name);
        snprintf(base, sizeof base, "%s%s%s", name, extra ? ":" : "", extra ? extra : "");
        dec *d;
        if (dec_create(&d, base, &env, e)) { /* the decoder at its defaults and its --set */
            size_t len = strlen(t->skipped_decoders);
            snprintf(t->skipped_decoders + len, sizeof t->skipped_decoders - len, "%s%s (%s)",
                     len ? "; " : "", name, e);
            continue;
        }
        dec_free(d);
        keep[n_keep++] = pts[i];
    }
    char **canon = NULL, **shown = NULL;
    int n = 0;
    if (rc == 0)
        rc = runner_specs(&t->r, (const char *const *)keep, n_keep, 0, &canon, &shown, &n, err);
    free(keep);
    tune_points_free(pts, n_pts);
    if (rc) return -1;
    t->c = calloc((size_t)n + 1, sizeof *t->c);
    if (!t->c) {
        runner_free_specs(canon, shown, n);
        return err_set(err, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        t->c[i] = (tune_cand){.canon = canon[i], .shown = shown[i], .status = 's', .measured = NAN};
        t->c[i].p.projected_e2e = NAN;
    }
    free(canon), free(shown);
    t->n = n;
    return 0;
}

static int same_decoder(const char *a, const char *b) {
    size_t n = strcspn(a, ":");
    return n == strcspn(b, ":") && !strncmp(a, b, n);
}

/* ---- cost curves, measured between the probes ---------------------------------------------
 * A curve measured after the probes sees the machine as it is then; on a shared machine that
 * is another machine (bench/projection.sh: curves minutes away from the runs they priced missed
 * by -29% to +172%). So each grid is measured a round at a time (harness/measure.h), the rounds
 * spread over the probes. */

typedef struct tune_curve {
    int draft;
    const char *path;
    measure_grid g;
    fwd_ctx *f;
    measure_run *m;
    int rounds, planned; /* rounds done (the warm-up included) and wanted */
    double round_secs;   /* estimated, then the mean of those done */
    double spent, share; /* seconds spent, and allowed */
    char note[512];
} tune_curve;

typedef struct {
    db *d;
    int64_t run;
    int64_t weight_bytes;
} store_ctx;

static int store_point(void *user, const measure_point *p, char *err) {
    store_ctx *s = user;
    db_cost c = measure_cost_row(p, s->weight_bytes, -1);
    return db_insert_cost(s->d, s->run, &c, err);
}

/* Seconds of one pass of `rows` rows, estimated from greedy's passes (one-row passes and the
 * prompt's chunks): linear between the rows measured, proportional beyond them. */
static double est_pass(const cost_usage *u, int rows) {
    if (u->n == 0) return 0.01;
    int k = 0;
    while (k < u->n - 1 && u->rows[k] < rows) k++;
    if (rows >= u->rows[k]) return u->secs[k] * rows / u->rows[k];
    if (k == 0) return u->secs[0];
    double f = (rows - u->rows[k - 1]) / (u->rows[k] - u->rows[k - 1]);
    return u->secs[k - 1] + f * (u->secs[k] - u->secs[k - 1]);
}

/* One round over grid g: every point once, and the prompt up to the largest context; passes of
 * `batch` sequences priced as passes of their rows together, each sequence's prompt its own. */
static double est_round(const cost_usage *u, const measure_grid *g, int batch) {
    double s = batch * est_pass(u, 64) * g->contexts[g->n_contexts - 1] / 64.0;
    for (int i = 0; i < g->n_rows; i++)
        s += est_pass(u, batch * g->rows[i]) * (g->n_contexts + (g->rows[i] > 1));
    return s;
}

/* The default grid of a curve of model m: the default rows up to 128, at context 0 and the
 * largest context the prompts reach, fitted to m's context (measure_grid_fit's note). */
static int default_grid(const tune *t, const model *m, measure_grid *g, char *note, size_t n_note,
                        char *err) {
    if (measure_parse_list(MEASURE_DEFAULT_ROWS, "rows", 1, 4096, g->rows, MEASURE_MAX_ROWS,
                           &g->n_rows, err))
        return -1;
    int ctx = 0;
    for (int i = 0; i < t->r.n_prompts; i++) {
        int n = t->r.prompts[i].n_ids + t->r.prompts[i].max_new;
        ctx = n > ctx ? n : ctx;
    }
    g->contexts[0] = 0, g->contexts[1] = ctx, g->n_contexts = ctx > 0 ? 2 : 1;
    return measure_grid_fit(g, m->cfg.seq_len, note, n_note, err);
}

/* A grid too slow for its share loses rows: at step 0 those between powers of two, then the
 * largest, one a step. */
static void drop_rows(measure_grid *g, int step) {
    int k = 0;
    for (int i = 0; i < g->n_rows; i++)
        if (step == 0 ? (g->rows[i] & (g->rows[i] - 1)) == 0 : i < g->n_rows - 1)
            g->rows[k++] = g->rows[i];
    g->n_rows = k;
}

/* The plan of one model's curve, after greedy's probe (whose passes time it): reused from the
 * database, or a grid of the default rows up to 128 at context 0 and the largest context the
 * prompts reach, with as many rounds (2 to 6) as `share` seconds allow; when two rounds (the
 * warm-up and one measured round) do not fit, the rows between powers of two go, then the
 * largest, one by one. */
static int curve_plan(tune *t, tune_curve *c, int draft, double share, char *err) {
    memset(c, 0, sizeof *c);
    c->draft = draft;
    const model *m = draft ? t->r.s.draft : t->r.s.target;
    /* the files opened (a bare name found in the models folder), not the names as typed */
    c->path = draft ? t->r.s.draft_path : t->r.s.model_path;
    if (!m) return 0;
    cost_usage u;
    if (cost_usage_of(t->d, &t->base_id, 1, 0, &u, err)) return -1;
    if (draft) /* greedy never runs the draft: the target's passes scaled by the weights */
        for (int i = 0; i < u.n; i++)
            u.secs[i] *= (double)model_weight_bytes(m) / (double)model_weight_bytes(t->r.s.target);
    measure_grid *g = &c->g;
    if (default_grid(t, m, g, c->note, sizeof c->note, err)) return -1;
    int64_t reuse = 0;
    db_env here;
    db_env_capture(&here);
    /* --draft self:TYPE is no file to fingerprint: its curve is measured, not looked up */
    if (!(draft && session_self_type(t->r.o.draft)) &&
        cost_find_run_batch(t->d, c->path, t->r.s.threads, kern_mode_name(t->r.s.kernels),
                            kv_type_name(t->r.s.kv), t->batch, g->rows[g->n_rows - 1], &here,
                            &reuse, err))
        return -1;
    if (reuse) {
        t->cost_run[draft] = reuse;
        fprintf(stderr,
                "decbench tune: %s cost curve: run %" PRId64 " of %s (same model, machine "
                "and build)\n",
                draft ? "draft" : "target", reuse, t->r.o.db_path);
        return 0;
    }
    for (int step = 0; (c->round_secs = est_round(&u, g, t->batch)) * 2 > share && g->n_rows > 2;
         step++)
        drop_rows(g, step);
    c->share = share;
    c->planned = (int)(share / c->round_secs);
    c->planned = c->planned > 6 ? 6 : c->planned < 2 ? 2 : c->planned;
    /* each point's passes per round: its part of a planned round (measure.c gives a fifth of
     * min_seconds per round) */
    g->min_seconds = 5 * share / c->planned / measure_grid_points(g);
    if (fwd_new(&c->f, m, t->r.s.pool, g->rows[g->n_rows - 1], t->r.s.kernels, err) ||
        measure_run_new_batch(&c->m, c->f, t->batch, g, err))
        return -1;
    char seqs[64] = "";
    if (t->batch > 1) snprintf(seqs, sizeof seqs, " of passes of %d sequences", t->batch);
    fprintf(stderr,
            "decbench tune: %s cost curve%s: %d points (rows 1..%d, contexts %d..%d), %d rounds "
            "of about %.1f s between the probes%s%s\n",
            draft ? "draft" : "target", seqs, measure_grid_points(g), g->rows[g->n_rows - 1],
            g->contexts[0], g->contexts[g->n_contexts - 1], c->planned, c->round_secs,
            c->note[0] ? "; " : "", c->note);
    return 0;
}

static int curve_round(tune_curve *c, char *err) {
    double t0 = clock_now();
    if (measure_run_round(c->m, err)) return -1;
    c->spent += clock_now() - t0;
    c->rounds++;
    c->round_secs = c->spent / c->rounds;
    /* rounds take what the machine gives them (a loaded one: 3x the estimate): fewer of them */
    int fit = c->rounds + (int)((c->share - c->spent) / c->round_secs);
    if (fit < c->planned) c->planned = fit < 2 ? 2 : fit;
    return 0;
}

/* Seconds the curves' remaining planned rounds will take. */
static double curves_left(const tune_curve *c) {
    double s = 0;
    for (int k = 0; k < 2; k++)
        if (c[k].m && c[k].rounds < c[k].planned)
            s += (c[k].planned - c[k].rounds) * c[k].round_secs;
    return s;
}

/* A round of each curve that is due: the rounds spread evenly from `from` to `until` (clock
 * values). */
static int curves_due(tune_curve *c, double from, double until, char *err) {
    for (int k = 0; k < 2; k++) {
        if (!c[k].m || c[k].rounds >= c[k].planned) continue;
        double due = from + (until - from) * c[k].rounds / c[k].planned;
        if (clock_now() >= due && curve_round(&c[k], err)) return -1;
    }
    return 0;
}

/* The rounds still owed (at least the warm-up and one measured round, the rest as time
 * allows), then the points stored as a cost run. */
static int curve_finish(tune *t, tune_curve *c, double until, char *err) {
    if (!c->m) return 0;
    int rc = 0;
    while (rc == 0 &&
           (c->rounds < 2 || (c->rounds < c->planned && clock_now() + c->round_secs <= until)))
        rc = curve_round(c, err);
    const model *m = c->draft ? t->r.s.draft : t->r.s.target;
    db_run run;
    db_env env;
    runner_fill_run(&t->r, &run, &env, t->cmd);
    run.model_path = c->path;
    run.draft_path = NULL;
    if (c->draft && session_self_type(t->r.o.draft)) /* no file: the runner's fingerprint */
        run.model_hash = t->r.self_hash, run.model_bytes = t->r.self_bytes;
    run.draft_hash = NULL, run.draft_bytes = 0;
    run.datasets = NULL, run.prompt_template = NULL;
    run.label = c->draft ? "tune: draft cost curve" : "tune: target cost curve";
    run.batch = t->batch, run.continuous = 0; /* the curve's passes: B sequences each */
    store_ctx s = {t->d, 0, (int64_t)model_weight_bytes(m)};
    if (rc == 0)
        rc =
            db_begin_run(t->d, &run, &s.run, err) || measure_run_finish(c->m, store_point, &s, err);
    char e2[ERR_LEN];
    if (s.run && db_finish_run(t->d, s.run, rc ? DB_FAILED : DB_COMPLETE, rc ? e2 : err)) rc = -1;
    if (rc == 0) {
        t->cost_run[c->draft] = s.run;
        fprintf(stderr, "decbench tune: %s cost curve: run %" PRId64 ", %d rounds, %.1f s\n",
                c->draft ? "draft" : "target", s.run, c->rounds, c->spent);
    }
    return rc;
}

static void curve_free(tune_curve *c) {
    measure_run_free(c->m);
    fwd_free(c->f);
    c->m = NULL, c->f = NULL;
}

/* ---- the heads' cost curves -----------------------------------------------------------------
 * eagle's and medusa's draft passes are their heads' (decoders/draft_head.h), which neither
 * model's curve prices: each head a probe uses (--set eagle:head=DIR, medusa:head=DIR) gets a
 * curve of its pass (harness/cost_head.c, as `cost --head`), reused from the database like the
 * models' curves (the run's model is the head's safetensors file, its draft the target whose
 * classifier and shape the passes ran with: an EAGLE head reads the target's classifier, so a
 * curve with another target's is not reused), else measured once, just before the first probe of
 * its decoder: a head's passes are a small part of the target's, so the curve takes seconds and
 * is measured in one go, seeing the machine as that decoder's probes do. */

static const char *const head_decoder[2] = {"eagle", "medusa"};

typedef struct {
    char dir[FILE_PATH_MAX];
    char file[4200]; /* the head's safetensors file (draft_head_info): the stored run's model */
    measure_grid g;
    int64_t bytes; /* the head's own weights: the cost rows' weight bytes */
    int due;       /* 1: measured before its decoder's first probe */
    double secs;   /* estimated seconds of the measurement */
} tune_head;

/* The head=DIR among the --set parameters of decoder k into dir; 0 when there is none. */
static int head_dir_of(const tune *t, int k, char *dir, size_t n) {
    const char *p = set_of(t, head_decoder[k]);
    while (p && *p) {
        size_t len = strcspn(p, ",");
        if (!strncmp(p, "head=", 5) && len > 5) {
            snprintf(dir, n, "%.*s", (int)(len - 5), p + 5);
            return 1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

/* The plan of head k's curve, after greedy's probe: none when no probe of its decoder is
 * planned, reused from the database, or the grid of the target's curve (rows up to 128, contexts
 * 0 and the prompts' largest; Medusa: the rows up to its heads, context 0) with passes for
 * `share` seconds, rows dropped as curve_plan drops them when even four passes of each point
 * (a warm-up and three measured) would overrun it. */
static int head_plan(tune *t, tune_head *h, int k, double share, char *err) {
    memset(h, 0, sizeof *h);
    int used = 0;
    for (int i = 0; i < t->n && !used; i++) used = same_decoder(t->c[i].canon, head_decoder[k]);
    if (!used || !head_dir_of(t, k, h->dir, sizeof h->dir)) return 0;
    const model *m = t->r.s.target;
    draft_head *dh;
    if (draft_head_open(&dh, h->dir, m, NULL, 1, err)) return -1;
    draft_head_info hi = *draft_head_info_of(dh);
    snprintf(h->file, sizeof h->file, "%s", hi.file);
    draft_head_free(dh);
    hi.file = h->file;
    const int medusa = hi.kind == DRAFT_HEAD_MEDUSA;
    h->bytes = hi.bytes;
    measure_grid *g = &h->g;
    if (medusa) { /* rows: the heads run, up to the file's; no attention, one context */
        int n = 0;
        if (measure_parse_list(MEASURE_DEFAULT_ROWS, "rows", 1, 4096, g->rows, MEASURE_MAX_ROWS,
                               &g->n_rows, err))
            return -1;
        for (int i = 0; i < g->n_rows; i++)
            if (g->rows[i] <= hi.heads) g->rows[n++] = g->rows[i];
        g->n_rows = n, g->contexts[0] = 0, g->n_contexts = 1;
    } else {
        char note[256];
        if (default_grid(t, m, g, note, sizeof note, err)) return -1;
    }
    /* a Medusa curve has one row's logits at one row only (rows = logit rows) */
    int64_t reuse = 0;
    db_env here;
    db_env_capture(&here);
    if (cost_find_run_batch(t->d, h->file, t->r.s.threads, kern_mode_name(t->r.s.kernels),
                            kv_type_name(t->r.s.kv), 1, medusa ? 1 : g->rows[g->n_rows - 1], &here,
                            &reuse, err))
        return -1;
    if (reuse) { /* only a curve measured with this target */
        char want[17];
        int64_t bytes;
        db_run_info ri;
        if (db_file_fingerprint(t->r.s.model_path, &bytes, want, err) ||
            db_get_run(t->d, reuse, &ri, err))
            return -1;
        if (strcmp(ri.draft_hash, want)) reuse = 0;
        db_run_info_free(&ri);
    }
    if (reuse) {
        t->head_run[k] = reuse;
        fprintf(stderr,
                "decbench tune: %s head cost curve: run %" PRId64 " of %s (same head, target, "
                "machine and build)\n",
                head_decoder[k], reuse, t->r.o.db_path);
        return 0;
    }
    cost_usage u;
    if (cost_usage_of(t->d, &t->base_id, 1, 0, &u, err)) return -1;
    for (int i = 0; i < u.n; i++) /* a head pass: the target's scaled by the weights it reads */
        u.secs[i] *= hi.bytes_read / (double)model_weight_bytes(m);
    int points = medusa ? g->n_rows : measure_grid_points(g);
    for (int step = 0; 4 * (h->secs = est_round(&u, g, 1)) > share && g->n_rows > 2; step++) {
        drop_rows(g, step);
        points = medusa ? g->n_rows : measure_grid_points(g);
    }
    /* cost_head.c measures each point until min_seconds (3 rounds at least) */
    g->min_seconds = 0.75 * share / points;
    h->secs = share > 4 * h->secs ? share : 4 * h->secs;
    h->due = 1;
    fprintf(stderr,
            "decbench tune: %s head cost curve (%s): %d points (rows 1..%d, contexts %d..%d), "
            "measured before %s's first probe\n",
            head_decoder[k], h->file, points, g->rows[g->n_rows - 1], g->contexts[0],
            g->contexts[g->n_contexts - 1], head_decoder[k]);
    return 0;
}

/* Measures head k's planned curve and stores it as a cost run. */
static int head_measure(tune *t, tune_head *h, int k, char *err) {
    h->due = 0;
    db_run run;
    db_env env;
    runner_fill_run(&t->r, &run, &env, t->cmd);
    run.model_path = h->file;
    run.draft_path = t->r.s.model_path; /* the head's target (see above) */
    run.draft_hash = NULL, run.draft_bytes = 0;
    run.datasets = NULL, run.prompt_template = NULL;
    run.label = k ? "tune: medusa head cost curve" : "tune: eagle head cost curve";
    run.batch = 1, run.continuous = 0;
    store_ctx s = {t->d, 0, h->bytes};
    cost_head_info info;
    double t0 = clock_now();
    int rc = db_begin_run(t->d, &run, &s.run, err) ||
             cost_head_grid(h->dir, t->r.s.target, t->r.s.pool, &h->g, store_point, &s, &info, err);
    char e2[ERR_LEN];
    if (s.run && db_finish_run(t->d, s.run, rc ? DB_FAILED : DB_COMPLETE, rc ? e2 : err)) rc = -1;
    if (rc) return -1;
    t->head_run[k] = s.run;
    fprintf(stderr, "decbench tune: %s head cost curve: run %" PRId64 ", %.1f s\n", head_decoder[k],
            s.run, clock_now() - t0);
    return 0;
}

/* Sequoia's tree fitted to this pair (see the header): when c is tree:mode=sequoia without
 * accept=, the vector from the complete static-tree probes among c[0..i) goes into its spec. */
static int fit_sequoia(tune *t, int i, char *err) {
    tune_cand *c = &t->c[i];
    if (strncmp(c->canon, "tree:", 5) || !strstr(c->canon, "mode=sequoia") ||
        strstr(c->canon, "accept="))
        return 0;
    static const char *const names[] = {"accept_rank0",  "accept_rank1",  "accept_rank2",
                                        "accept_rank3up", "offered_rank0", "offered_rank1",
                                        "offered_rank2", "offered_rank3up"};
    double a[4] = {0}, o[4] = {0}, sum[8];
    int probes = 0;
    for (int j = 0; j < i; j++) {
        const tune_cand *s = &t->c[j];
        long samples;
        if (!s->run || s->status != 'c' || strncmp(s->canon, "tree:", 5) ||
            !strstr(s->canon, "mode=static"))
            continue;
        if (db_counter_sums(t->d, s->run, s->canon, names, 8, sum, &samples, err)) return -1;
        for (int r = 0; r < 4; r++) a[r] += sum[r], o[r] += sum[4 + r];
        probes++;
    }
    if (!(a[0] > 0 && o[0] > 0)) {
        fprintf(stderr, "decbench tune: %s: no static-tree probe accepted a token before it; the "
                        "default acceptance vector stays\n", c->shown);
        return 0;
    }
    /* Each rank's rate is its own ratio, so on few probe tokens they can sum past 1, which no
     * acceptance vector does: scaled to sum to 1 then, as `decbench sequoia --fit` does. */
    char acc[64] = "", spec[1200];
    double total = 0;
    for (int r = 0; r < 4 && o[r] > 0 && a[r] > 0; r++) total += a[r] / o[r];
    for (int r = 0, k = 0; r < 4 && o[r] > 0 && a[r] > 0; r++, k++)
        snprintf(acc + strlen(acc), sizeof acc - strlen(acc), "%s%.3f", k ? "/" : "",
                 floor(a[r] / o[r] / (total > 1 ? total : 1) * 1000) / 1000);
    snprintf(spec, sizeof spec, "%s,accept=%s", c->canon, acc);
    dec_info info;
    char *canon, *shown = malloc(strlen(c->shown) + strlen(acc) + 9);
    if (!shown) return err_set(err, "out of memory");
    sprintf(shown, "%s,accept=%s", c->shown, acc);
    if (dec_describe(spec, &info, err)) {
        free(shown);
        return -1;
    }
    if (!(canon = strdup(info.spec))) {
        free(shown);
        return err_set(err, "out of memory");
    }
    fprintf(stderr, "decbench tune: %s: accept=%s, fitted from %d static-tree probe%s%s\n",
            c->shown, acc, probes, probes == 1 ? "" : "s", total > 1 ? " (scaled to sum to 1)" : "");
    free(c->canon), free(c->shown);
    c->canon = canon, c->shown = shown;
    return 0;
}

/* ---- phase 1: probes, with the curves' rounds between them -------------------------------- */

static int probes(tune *t, tune_curve *cv, char *err) {
    char title[96], status;
    int saved = t->r.n_prompts, warm = t->r.o.warmup, rc = 0;
    t->r.n_prompts = t->n_probe;
    t->r.o.warmup = 0; /* the probes' timings only rank; the finals warm up */
    char *g[] = {"greedy"};
    snprintf(title, sizeof title, "tune %" PRId64 " greedy", t->sweep_id);
    double s0 = clock_now();
    int m = measure_specs(t, g, g, 1, t->sweep_id, 0, title, &t->base_id, &status, err);
    t->greedy_secs = clock_now() - s0;
    if (m) rc = m;
    /* probes and curves share 70% of the budget, the curves 20% of it, each curve alike */
    tune_head hd[2];
    memset(hd, 0, sizeof hd);
    int heads = 0;
    char dir[FILE_PATH_MAX];
    for (int k = 0; k < 2; k++) {
        int used = 0;
        for (int i = 0; i < t->n && !used; i++) used = same_decoder(t->c[i].canon, head_decoder[k]);
        heads += used && head_dir_of(t, k, dir, sizeof dir);
    }
    /* a head's curve is of one sequence (cost --head): it cannot price passes of B */
    if (heads && t->batch > 1) {
        snprintf(t->heads_unpriced, sizeof t->heads_unpriced,
                 "at batch %d eagle and medusa are priced on their target passes only (an upper "
                 "bound): a head's cost curve is of one sequence",
                 t->batch);
        fprintf(stderr, "decbench tune: %s\n", t->heads_unpriced);
        heads = 0;
    }
    double share = 0.2 * t->budget / ((t->r.s.draft ? 2 : 1) + heads);
    for (int k = 0; rc == 0 && k < 2; k++) rc = curve_plan(t, &cv[k], k, share, err);
    for (int k = 0; rc == 0 && heads && k < 2; k++) rc = head_plan(t, &hd[k], k, share, err);
    double from = clock_now(), until = t->t0 + 0.7 * t->budget;
    for (int i = 0; rc == 0 && i < t->n; i++) {
        tune_cand *c = &t->c[i];
        if ((rc = curves_due(cv, from, until, err)) != 0) break;
        double est = 3 * t->greedy_secs, heads_left = 0;
        for (int j = 0; j < i; j++)
            if (t->c[j].run && same_decoder(t->c[j].canon, c->canon) && t->c[j].secs > est)
                est = t->c[j].secs;
        for (int k = 0; k < 2; k++) heads_left += hd[k].due ? hd[k].secs : 0;
        if (clock_now() + est + curves_left(cv) + heads_left > until) continue; /* stays 's' */
        for (int k = 0; rc == 0 && k < 2; k++)
            if (hd[k].due && same_decoder(c->canon, head_decoder[k]))
                rc = head_measure(t, &hd[k], k, err);
        if (rc) break;
        snprintf(title, sizeof title, "tune %" PRId64 " probe %d/%d", t->sweep_id, i + 1, t->n);
        if ((rc = fit_sequoia(t, i, err)) != 0) break;
        s0 = clock_now();
        rc = measure_specs(t, &c->canon, &c->shown, 1, t->sweep_id, t->base_id, title, &c->run,
                           &c->status, err);
        c->secs = clock_now() - s0;
    }
    for (int k = 0; rc == 0 && k < 2; k++) rc = curve_finish(t, &cv[k], until, err);
    t->r.n_prompts = saved;
    t->r.o.warmup = warm;
    return rc;
}

/* ---- phases 3 and 4: prediction and finals ------------------------------------------------- */

/* Which draft curve prices a spec's draft passes: 0 the draft model's, 1 eagle's head's, 2
 * medusa's head's (the learned drafters run no draft model). */
static int draft_curve_of(const char *spec) {
    for (int k = 0; k < 2; k++)
        if (same_decoder(spec, head_decoder[k])) return 1 + k;
    return 0;
}

static int predict(tune *t, char *err) {
    int64_t *ids = malloc(sizeof *ids * (size_t)(t->n + 1));
    if (!ids) return err_set(err, "out of memory");
    for (int k = 0; k < 2; k++) {
        if (t->cost_run[k])
            snprintf(t->cost_src[k], sizeof t->cost_src[k], "%s:%" PRId64, t->r.o.db_path,
                     t->cost_run[k]);
        if (t->head_run[k])
            snprintf(t->head_src[k], sizeof t->head_src[k], "%s:%" PRId64, t->r.o.db_path,
                     t->head_run[k]);
    }
    int rc = 0;
    /* each probe's draft passes priced on its draft curve: the draft model's, or for eagle and
     * medusa their head's (without one, none: their target passes only, an upper bound) */
    for (int dc = 0; rc == 0 && dc < 3; dc++) {
        int m = 0;
        for (int i = 0; i < t->n; i++)
            if (t->c[i].run && t->c[i].status == 'c' && draft_curve_of(t->c[i].canon) == dc) {
                int seen = 0; /* a run once */
                for (int j = 0; j < m && !seen; j++) seen = ids[j] == t->c[i].run;
                if (!seen) ids[m++] = t->c[i].run;
            }
        const char *draft = dc == 0 ? (t->cost_run[1] ? t->cost_src[1] : NULL)
                                    : (t->head_run[dc - 1] ? t->head_src[dc - 1] : NULL);
        report_projection *p = NULL;
        int np = 0;
        if (m) rc = report_project(t->d, ids, m, t->cost_src[0], draft, &p, &np, err);
        for (int j = 0; rc == 0 && j < np; j++)
            for (int i = 0; i < t->n; i++)
                if (t->c[i].run == p[j].run_id && !strcmp(t->c[i].canon, p[j].spec))
                    t->c[i].p = p[j];
        free(p);
    }
    free(ids);
    return rc;
}

static int by_prediction(const void *a, const void *b) {
    double x = tune_pred(a), y = tune_pred(b);
    if (isnan(x) != isnan(y)) return isnan(x) ? 1 : -1;
    return x > y ? -1 : x < y;
}

/* At --batch B, a decoder that keeps state across prompts cannot run batched: named in
 * t->batch_left_out (once per decoder), and 1. */
static int batch_left_out(tune *t, const tune_cand *c) {
    runner_opts at = t->r.o;
    at.batch = t->batch;
    char e[ERR_LEN], name[64];
    if (runner_batch_spec(&at, c->canon, e) == 0) return 0;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(c->canon, ":"), c->canon);
    if (!strstr(t->batch_left_out, name)) {
        size_t len = strlen(t->batch_left_out);
        snprintf(t->batch_left_out + len, sizeof t->batch_left_out - len, "%s%s", len ? "; " : "",
                 name);
    }
    return 1;
}

/* reserve: seconds kept for the figures after the final run (gnuplot's, or the data files'
 * alone with --no-plot). */
static int finals(tune *t, int top, double reserve, char *err) {
    /* the best predicted point of each decoder (t->c is sorted by prediction) */
    char *canon[RUNNER_MAX_SPECS], *shown[RUNNER_MAX_SPECS];
    canon[0] = shown[0] = "greedy";
    int n = 1;
    double per_prompt = t->greedy_secs / t->n_probe;
    for (int i = 0; i < t->n && n <= top && n < RUNNER_MAX_SPECS; i++) {
        tune_cand *c = &t->c[i];
        if (isnan(tune_pred(c))) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = t->c[j].finalist && same_decoder(t->c[j].canon, c->canon);
        if (seen || batch_left_out(t, c)) continue;
        c->finalist = 1;
        canon[n] = c->canon, shown[n++] = c->shown;
        per_prompt += c->secs / t->n_probe;
    }
    if (n == 1) return 0;
    /* prompts: the held-out ones after the probe prompts, as many as fit what is left of the
     * budget (a warm-up generation per setting, 15% slack, the figures' reserve) */
    int have = t->r.n_prompts - t->n_probe, held_out = have > 0;
    if (!held_out) have = t->r.n_prompts;
    double left = t->budget - elapsed(t) - reserve;
    int use = (int)((left / 1.15 / per_prompt - t->r.o.warmup) / t->r.o.repeats);
    if (use < 1) {
        fprintf(stderr,
                "decbench tune: no final run: one prompt would take about %.0f s, %.0f s of the "
                "budget are left (the table's measurements are the probes')\n",
                per_prompt * (t->r.o.warmup + t->r.o.repeats) * 1.15, left);
        for (int i = 0; i < t->n; i++) t->c[i].finalist = 0;
        return 0;
    }
    /* at --batch B, one whole batch at least: fewer sequences would measure another batch size */
    if (t->batch > 1 && use < t->batch) use = t->batch;
    use = use > have ? have : use;
    fprintf(stderr,
            "decbench tune: final run: greedy and %d setting(s) on %d %s prompt(s), about %.0f s "
            "(%.0f s of the budget left)\n",
            n - 1, use, held_out ? "held-out" : "probe",
            per_prompt * (use * t->r.o.repeats + t->r.o.warmup), left);
    if (t->batch > 1 && use < t->batch)
        fprintf(stderr,
                "decbench tune: note: %d prompt(s) for a final at batch %d: its batches hold "
                "fewer sequences than served (raise --limit)\n",
                use, t->batch);
    if (t->batch_left_out[0])
        fprintf(stderr, "decbench tune: not in the final at batch %d (state across prompts): %s\n",
                t->batch, t->batch_left_out);
    runner_prompt *saved = t->r.prompts;
    int saved_n = t->r.n_prompts;
    if (held_out) t->r.prompts += t->n_probe;
    t->r.n_prompts = use;
    t->n_final = use;
    t->held_out = held_out;
    char status, title[64];
    snprintf(title, sizeof title, "tune %" PRId64 " final", t->sweep_id);
    /* the final at the batch size served (the probes ran one sequence at a time, traced) */
    int trace = t->r.o.trace;
    t->r.o.batch = t->batch, t->r.o.continuous = t->continuous;
    if (t->batch > 1) t->r.o.trace = 0;
    int m = measure_specs(t, canon, shown, n, 0, 0, title, &t->final_id, &status, err);
    t->r.o.batch = 1, t->r.o.continuous = 0, t->r.o.trace = trace;
    t->r.prompts = saved;
    t->r.n_prompts = saved_n;
    if (m) return m;
    if (t->batch > 1) { /* throughput over greedy's at the same batch size */
        for (int i = 0; i < t->n; i++)
            if (t->c[i].finalist &&
                report_batch_speedup(t->d, t->final_id, t->c[i].canon, &t->c[i].measured, err))
                return -1;
        return 0;
    }
    report_projection *p;
    int np;
    if (report_project(t->d, &t->final_id, 1, t->cost_src[0],
                       t->cost_run[1] ? t->cost_src[1] : NULL, &p, &np, err))
        return -1;
    for (int j = 0; j < np; j++)
        for (int i = 0; i < t->n; i++)
            if (t->c[i].finalist && !strcmp(t->c[i].canon, p[j].spec))
                t->c[i].measured = p[j].measured_e2e;
    free(p);
    return 0;
}

/* ---- the command ------------------------------------------------------------------------- */

static void usage(const args_opt *o) {
    args_usage("decbench tune --model FILE [--draft FILE] --dataset NAME [--budget MINUTES] "
               "[options]",
               o, T_COUNT);
    printf("Probes a coarse grid of every decoder's settings (harness/tune_grid.c) on a few "
           "prompts,\n"
           "prices each probe's forward passes on the models' cost curves (eagle's and medusa's\n"
           "draft passes on their heads'; measured between the probes, or reused from the\n"
           "database), runs greedy and the best predicted setting of each decoder on held-out\n"
           "prompts, and prints them ranked, with a 'recommended:' line per decoder and one\n"
           "overall. Budget: probes 50%%, cost curves 20%%, the final run "
           "the\n"
           "rest. Speed-ups are end-to-end. Defaults here: --max-new 128, --limit = "
           "--probe-prompts + 5.\n");
    runner_help();
}

static void tune_free(tune *t) {
    for (int i = 0; i < t->n; i++) free(t->c[i].canon), free(t->c[i].shown);
    free(t->c);
    free(t->cmd);
    db_close(t->d);
    runner_close(&t->r);
}

/* The sweep's spec: the grid lines of the decoders probed. */
static void sweep_spec(const tune *t, char *spec, size_t n) {
    snprintf(spec, n, "tune:");
    int k = 0;
    for (int i = 0; i < dec_registry_size(); i++) {
        const char *name = dec_registry_name(i);
        char g[1024];
        int used = 0;
        for (int j = 0; j < t->n && !used; j++) used = same_decoder(t->c[j].canon, name);
        if (used && tune_grid_of(i, g, sizeof g) >= 0)
            snprintf(spec + strlen(spec), n - strlen(spec), "%s%s", k++ ? " + " : " ", g);
    }
}

int cmd_tune(int argc, char **argv) {
    args_opt o[T_COUNT];
    runner_options(o);
    o[T_BUDGET] = (args_opt){.name = "--budget",
                             .takes_value = 1,
                             .metavar = "MINUTES",
                             .help = "minutes the whole command may take (default 10; a decimal "
                                     "number)"};
    o[T_PROBES] = (args_opt){.name = "--probe-prompts",
                             .takes_value = 1,
                             .metavar = "N",
                             .help = "prompts each grid point is probed on (default 3)"};
    o[T_TOP] = (args_opt){.name = "--top",
                          .takes_value = 1,
                          .metavar = "K",
                          .help = "decoders whose best setting runs in the final run (default 6)"};
    o[T_OUT] = (args_opt){.name = "--out",
                          .takes_value = 1,
                          .metavar = "DIR",
                          .help = "folder for the figures (default: tune/ beside the --db file, "
                                  "results/tune for the default database)"};
    o[T_NOPLOT] =
        (args_opt){.name = "--no-plot", .help = "write the figures' data only (no gnuplot)"};
    o[T_SET] = (args_opt){.name = "--set",
                          .takes_value = 1,
                          .metavar = "NAME:KEY=V,...",
                          .help = "parameters for every point of decoder NAME, e.g. a head or a "
                                  "datastore: --set eagle:head=DIR --set rest:ds=FILE "
                                  "(repeatable, one per decoder)"};
    o[T_HELP] = (args_opt){.name = "--help", .alias = "-h", .help = "this help"};
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, T_COUNT, pos, 0, &n_pos, err)) return cmd_usage("tune", err);
    if (args_flag(o, T_COUNT, "--help")) {
        usage(o);
        return 0;
    }
    runner_opts ro;
    long probes_n, top;
    double budget = 10;
    const char *b = args_str(o, T_COUNT, "--budget", NULL);
    if (b) {
        char *end;
        budget = strtod(b, &end);
        if (!*b || *end || !(budget > 0) || budget > 1e5)
            return cmd_usage("tune", "--budget: expected minutes, a number above 0");
    }
    if (runner_opts_get(o, T_COUNT, &ro, err) ||
        args_int(o, T_COUNT, "--probe-prompts", 3, 1, 1000, &probes_n, err) ||
        args_int(o, T_COUNT, "--top", 6, 1, RUNNER_MAX_SPECS - 1, &top, err))
        return cmd_usage("tune", err);
    if (ro.n_datasets != 1) return cmd_usage("tune", "--dataset: tune takes one dataset");
    const args_opt *sets = args_get(o, T_COUNT, "--set");
    if (cmd_sets_check(sets->values, sets->count, err)) return cmd_usage("tune", err);
    if (ro.shard_n)
        return cmd_usage("tune", "--shard: tune measures its whole work in one process");
    /* --batch B: served at B; the probes run one sequence at a time (see the header) */
    int serve_batch = ro.batch, serve_continuous = ro.continuous;
    ro.batch = 1, ro.continuous = 0;
    if (!args_get(o, T_COUNT, "--limit")->count)
        ro.limit = (int)probes_n + (serve_batch > 5 ? serve_batch : 5);
    if (!args_get(o, T_COUNT, "--max-new")->count) ro.max_new = 128;
    ro.trace = 1; /* the pass trace is what the projection prices */
    tune t;
    memset(&t, 0, sizeof t);
    t.t0 = clock_now();
    t.budget = 60 * budget;
    t.cmd = runner_command_line(argc, argv);
    t.sets = sets->values, t.n_sets = sets->count;
    t.batch = serve_batch, t.continuous = serve_continuous;
    char spec[4096];
    tune_curve cv[2];
    memset(cv, 0, sizeof cv);
    int rc = 1, m = 0;
    /* Every file is checked before the first probe: a figures folder that cannot be made
     * would otherwise fail after the whole budget was spent. */
    /* The figures go beside the database by default (its folder's tune/: results/tune for the
     * default results/decbench.db), not into ./results of wherever the command ran. */
    char out_default[FILE_PATH_MAX];
    const char *slash = strrchr(ro.db_path, '/');
    if (!slash)
        snprintf(out_default, sizeof out_default, "tune");
    else
        snprintf(out_default, sizeof out_default, "%.*s/tune",
                 (int)(slash == ro.db_path ? 1 : slash - ro.db_path), ro.db_path);
    const char *out = args_str(o, T_COUNT, "--out", out_default);
    file_io figures[7] = {{"--out", out, FILE_IO_OUT_DIR, "figures"}};
    char fig_path[6][FILE_PATH_MAX + 32];
    static const char *const fig_files[6] = {"tune_predicted.tsv", "tune_predicted.png",
                                             "tune_predicted.svg", "tune_frontier.tsv",
                                             "tune_frontier.png",  "tune_frontier.svg"};
    for (int k = 0; k < 6; k++) {
        snprintf(fig_path[k], sizeof fig_path[k], "%s/%s", out, fig_files[k]);
        figures[1 + k] = (file_io){"--out", fig_path[k], FILE_IO_OUT, NULL};
    }
    if (file_check_io(figures, 1, err) || runner_open(&t.r, &ro, err) ||
        runner_check_files(&t.r, figures + 1, 6, err) || plan(&t, err) ||
        runner_make_parent(ro.db_path, err) || db_open(&t.d, ro.db_path, DB_WRITE, err))
        goto out;
    t.n_probe = (int)probes_n < t.r.n_prompts ? (int)probes_n : t.r.n_prompts;
    sweep_spec(&t, spec, sizeof spec);
    if (db_begin_sweep(t.d, spec, t.r.datasets, &t.sweep_id, err)) goto out;
    runner_catch_signals();
    if (t.skipped_decoders[0]) fprintf(stderr, "decbench tune: left out: %s\n", t.skipped_decoders);
    if (t.batch > 1)
        fprintf(stderr,
                "decbench tune: serving batch %d%s: probes one sequence at a time (traced), cost "
                "curves of passes of %d sequences, the final run at --batch %d\n",
                t.batch, t.continuous ? " (continuous)" : "", t.batch, t.batch);
    fprintf(stderr,
            "decbench tune: sweep %" PRId64 " in %s: %d grid point(s) on %d probe prompt(s), "
            "budget %.1f min\n",
            t.sweep_id, ro.db_path, t.n, t.n_probe, budget);
    m = probes(&t, cv, err);
    curve_free(&cv[0]), curve_free(&cv[1]);
    if (m == 0) {
        int probed = 0, skipped = 0;
        for (int i = 0; i < t.n; i++) probed += t.c[i].run != 0, skipped += t.c[i].status == 's';
        fprintf(stderr, "decbench tune: probes: %d run, %d skipped for the budget, %.0f s so far\n",
                probed, skipped, elapsed(&t));
        if (predict(&t, err)) goto out;
        qsort(t.c, (size_t)t.n, sizeof *t.c, by_prediction);
        /* gnuplot's two figures take a few seconds; their data files alone, a moment */
        m = finals(&t, (int)top, args_flag(o, T_COUNT, "--no-plot") ? 0.5 : 3, err);
    }
    if (m < 0) goto out;
    if (m == RUNNER_INTERRUPTED) {
        fprintf(stderr,
                "decbench tune: interrupted: sweep %" PRId64 " in %s holds what was measured\n",
                t.sweep_id, ro.db_path);
        rc = 130;
        goto out;
    }
    tune_print(&t);
    if (tune_plots(&t, out, !args_flag(o, T_COUNT, "--no-plot"), err) == 0)
        fprintf(stderr, "decbench tune: figures in %s: tune_predicted, tune_frontier\n", out);
    else
        fprintf(stderr, "decbench tune: figures: %s\n", err);
    fprintf(stderr,
            "decbench tune: done in %.0f s of a %.0f s budget; sweep %" PRId64 " (probes), "
            "run %" PRId64 " (final) in %s\n",
            elapsed(&t), t.budget, t.sweep_id, t.final_id, ro.db_path);
    rc = 0;
out:
    if (rc == 1) cmd_fail("tune", err);
    curve_free(&cv[0]), curve_free(&cv[1]);
    tune_free(&t);
    return rc;
}
