/* report_cost.c: speed-ups projected from forward-cost curves (report --layout projected,
 * report_project() for `decbench tune`).
 *
 * Why: on a CPU a pass over T rows costs far more than one row once the matrix products stop
 * being bandwidth-bound, so tokens per step alone overstates a decoder's speed-up; and a run
 * on a small model says little about wall-clock time on a large one. Given the cost curve of
 * the target (results/report/cost.h: t(rows, context, logit rows)) and, for draft-model decoders,
 * of the draft, each pass the decoder made is priced on its curve:
 *
 *   decoder  = sum over its decode passes (target and draft) of t(rows, context, logit rows)
 *              + its bookkeeping seconds (measured: the decoder's own work does not depend on
 *                the models' size, and on a small target it is a few percent at most)
 *   greedy   = sum over i < new_tokens - 1 of t(1, prompt_tokens + i, 1)
 *              + greedy's bookkeeping per token (measured in the same run or its baseline)
 *   projected speed-up     = greedy / decoder, summed over the samples (ratio of totals)
 *   projected speed-up e2e = (greedy + the target's prompt passes)
 *                            / (decoder + the target's and the draft's prompt passes)
 *
 * The passes come from the pass trace (run --trace: each pass's model, rows, logit rows and
 * context). Without one (older runs): the per-step trace's target rows at the context its
 * emitted tokens imply, else every decode pass at the sample's mean rows, at the middle of
 * its context, with every row's logits; draft passes at their mean rows; no end-to-end figure
 * (the prompt passes are unknown). The basis column says which was used. A learned drafter's
 * head passes (eagle, medusa) are the trace's draft passes, priced on the draft curve (a head's
 * curve: `cost --head`); medusa counts no draft steps, so its traced draft passes are what make
 * a row "draft not priced" without one.
 *
 * A batched curve (`cost --batch B`, results/report/cost.h) prices each pass as B sequences' in
 * lockstep, greedy's too: the speed-up is then the decoder's over greedy when serving B
 * sequences, and the projected tok/s one sequence's (the B sequences' throughput is B times it).
 * Both curves must be at one batch size. */
#include "results/report/report_internal.h"

#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "results/report/cost.h"
#include "util/err.h"
#include "util/file.h"

/* The curves the SQL functions price passes on (sqlite3_user_data). */
typedef struct {
    const cost_curve *target, *draft; /* draft may be NULL: draft passes cost 0 */
} curves;

static void sql_t(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const curves *c = sqlite3_user_data(ctx);
    sqlite3_result_double(ctx, cost_curve_t(c->target, sqlite3_value_double(argv[0]),
                                            sqlite3_value_double(argv[1]),
                                            sqlite3_value_double(argv[2])));
}

static void sql_td(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const curves *c = sqlite3_user_data(ctx);
    sqlite3_result_double(ctx, !c->draft ? 0
                                         : cost_curve_t(c->draft, sqlite3_value_double(argv[0]),
                                                        sqlite3_value_double(argv[1]),
                                                        sqlite3_value_double(argv[2])));
}

/* Greedy's decode passes for a prompt of p tokens and n new tokens: one row each, at contexts
 * p .. p + n - 2 (its first token comes from the prompt pass). */
static void sql_greedy(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const curves *c = sqlite3_user_data(ctx);
    int64_t p = sqlite3_value_int64(argv[0]), n = sqlite3_value_int64(argv[1]);
    /* the database's values were checked when it was opened (db_check_values) */
    if (p < 0 || n < 0 || p > DB_MAX_TOKENS || n > DB_MAX_TOKENS) {
        sqlite3_result_error(ctx, "a sample's prompt_tokens or new_tokens is out of range", -1);
        return;
    }
    sqlite3_result_double(ctx, cost_curve_greedy(c->target, p, n));
}

/* Per (ds, spec): samples; samples with a pass trace; with a step trace only; greedy's
 * projected decode seconds; the decoder's target decode, draft decode, target prompt, draft
 * prompt seconds; bookkeeping seconds; draft passes; the largest target and draft rows priced.
 * The fallbacks are in the header comment. */
static const char PROJECT_SQL[] = REP_SAMPLES_CTE
    ", p AS (SELECT sample_id, "
    "SUM(CASE WHEN model = 'target' AND prefill = 0 THEN decbench_t(rows, context, logit_rows) "
    "ELSE 0 END) AS dt, "
    "SUM(CASE WHEN model = 'draft' AND prefill = 0 THEN decbench_td(rows, context, logit_rows) "
    "ELSE 0 END) AS dd, "
    "SUM(CASE WHEN model = 'target' AND prefill = 1 THEN decbench_t(rows, context, logit_rows) "
    "ELSE 0 END) AS pt, "
    "SUM(CASE WHEN model = 'draft' AND prefill = 1 THEN decbench_td(rows, context, logit_rows) "
    "ELSE 0 END) AS pd, "
    "MAX(CASE WHEN model = 'target' THEN rows END) AS tmax, "
    "MAX(CASE WHEN model = 'draft' THEN rows END) AS dmax, "
    "SUM(model = 'draft') AS dn "
    "FROM passes WHERE sample_id IN (SELECT id FROM s) GROUP BY sample_id), "
    "q AS (SELECT t.sample_id, t.rows, t.step, x.prompt_tokens + COALESCE(SUM(t.emitted) OVER "
    "(PARTITION BY t.sample_id ORDER BY t.step ROWS BETWEEN UNBOUNDED PRECEDING AND 1 "
    "PRECEDING), 0) - 1 AS ctx FROM trace t JOIN s x ON x.id = t.sample_id), "
    "tr AS (SELECT sample_id, SUM(decbench_t(rows, ctx, rows)) AS dt, MAX(rows) AS tmax "
    "FROM q WHERE step > 0 GROUP BY sample_id), "
    "m AS (SELECT s.*, p.sample_id IS NOT NULL AS has_p, tr.sample_id IS NOT NULL AS has_tr, "
    "p.dt AS p_dt, p.dd AS p_dd, p.pt AS p_pt, p.pd AS p_pd, p.tmax AS p_tmax, p.dmax AS p_dmax, "
    "p.dn AS p_dn, "
    "tr.dt AS tr_dt, tr.tmax AS tr_tmax, "
    "CASE WHEN target_steps > 1 THEN 1.0 * target_rows / (target_steps - 1) END AS tmean, "
    "CASE WHEN draft_steps > 1 THEN 1.0 * draft_rows / (draft_steps - 1) END AS dmean, "
    "prompt_tokens + new_tokens / 2.0 AS cmid "
    "FROM s LEFT JOIN p ON p.sample_id = s.id LEFT JOIN tr ON tr.sample_id = s.id) "
    "SELECT ds, spec, COUNT(*), SUM(has_p), SUM(has_tr AND NOT has_p), "
    "SUM(decbench_greedy(prompt_tokens, new_tokens)), "
    "SUM(CASE WHEN has_p THEN p_dt WHEN has_tr THEN tr_dt WHEN tmean IS NOT NULL THEN "
    "(target_steps - 1) * decbench_t(tmean, cmid, tmean) ELSE 0 END), "
    "SUM(CASE WHEN has_p THEN p_dd WHEN dmean IS NOT NULL THEN "
    "(draft_steps - 1) * decbench_td(dmean, cmid, dmean) ELSE 0 END), "
    "SUM(COALESCE(p_pt, 0)), SUM(COALESCE(p_pd, 0)), SUM(t_book), "
    "SUM(MAX(draft_steps, COALESCE(p_dn, 0))), "
    "MAX(CASE WHEN has_p THEN p_tmax WHEN has_tr THEN tr_tmax ELSE tmean END), "
    "MAX(CASE WHEN has_p THEN p_dmax ELSE dmean END), "
    "MIN(CASE WHEN has_p THEN 1 WHEN has_tr THEN tr_tmax ELSE tmean END) "
    "FROM m GROUP BY ds, spec";

/* Greedy's bookkeeping seconds per decode token in run g (all its greedy samples). */
static double greedy_book(sqlite3 *h, int64_t g) {
    sqlite3_stmt *st;
    double v = 0;
    if (g && sqlite3_prepare_v2(h,
                                "SELECT SUM(t_book) / SUM(MAX(new_tokens - 1, 0)) FROM samples "
                                "WHERE run_id = ? AND decoder = 'greedy'",
                                -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, g);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
            v = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

typedef struct {
    double greedy, target, draft, prompt_t, prompt_d, book, draft_steps, tmax, dmax, tmin;
    long n, with_passes, with_trace;
    int found;
    double gbook; /* greedy's bookkeeping seconds for these samples' tokens */
} sums;

static int project_run(db *d, int64_t run, const curves *cv, const rep_stat *s, int n, sums *out,
                       char *err) {
    sqlite3 *h = db_sqlite(d);
    static const struct {
        const char *name;
        int args;
        void (*fn)(sqlite3_context *, int, sqlite3_value **);
    } fns[] = {
        {"decbench_t", 3, sql_t}, {"decbench_td", 3, sql_td}, {"decbench_greedy", 2, sql_greedy}};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof fns / sizeof fns[0]; i++)
        if (sqlite3_create_function(h, fns[i].name, fns[i].args, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                    (void *)cv, fns[i].fn, NULL, NULL) != SQLITE_OK)
            rc = err_set(err, "report: cannot register %s: %s", fns[i].name, db_errmsg(h));
    for (int per_ds = 1; per_ds >= 0 && rc == 0; per_ds--) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, PROJECT_SQL, -1, &st, NULL) != SQLITE_OK) {
            rc = err_set(err, "report: projection query: %s", db_errmsg(h));
            break;
        }
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int(st, 2, per_ds);
        int step;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            const char *ds = (const char *)sqlite3_column_text(st, 0);
            const char *spec = (const char *)sqlite3_column_text(st, 1);
            for (int i = 0; i < n; i++) {
                if (s[i].run_id != run || strcmp(s[i].dataset, ds) || strcmp(s[i].spec, spec))
                    continue;
                sums *o = &out[i];
                o->n = sqlite3_column_int64(st, 2);
                o->with_passes = sqlite3_column_int64(st, 3);
                o->with_trace = sqlite3_column_int64(st, 4);
                double *v[] = {&o->greedy, &o->target,      &o->draft, &o->prompt_t, &o->prompt_d,
                               &o->book,   &o->draft_steps, &o->tmax,  &o->dmax,     &o->tmin};
                for (int k = 0; k < 10; k++)
                    *v[k] = sqlite3_column_type(st, 5 + k) == SQLITE_NULL
                                ? NAN
                                : sqlite3_column_double(st, 5 + k);
                o->found = 1;
            }
        }
        if (step != SQLITE_DONE) rc = err_set(err, "report: projection query: %s", db_errmsg(h));
        sqlite3_finalize(st);
    }
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        sqlite3_create_function(h, fns[i].name, fns[i].args, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    return rc;
}

/* The figures of one row from its sums (report_projection's fields). */
static void figures(const rep_stat *s, const sums *p, int has_draft_curve, const cost_curve *tc,
                    const cost_curve *dc, report_projection *r) {
    memset(r, 0, sizeof *r);
    r->run_id = s->run_id;
    snprintf(r->dataset, sizeof r->dataset, "%s", s->dataset);
    snprintf(r->spec, sizeof r->spec, "%s", s->spec);
    r->measured_decode = s->speedup_dec;
    r->measured_e2e = s->speedup_e2e;
    r->tokens_per_step = rep_tokens_per_step(s);
    r->rows_per_step = rep_rows_per_step(s);
    r->n_samples = s->n_samples;
    r->projected_decode = r->projected_e2e = r->projected_tps = r->ms_per_pass = NAN;
    if (!p->found) return;
    double greedy = p->greedy + p->gbook;
    double dec = p->target + p->draft + p->book;
    r->draft_priced = !(p->draft_steps > 0) || has_draft_curve;
    if (dec > 0) {
        r->projected_decode = greedy / dec;
        r->projected_tps = s->d[STAT_D_decode_tokens] / dec;
        if (p->with_passes == p->n)
            r->projected_e2e = (greedy + p->prompt_t) / (dec + p->prompt_t + p->prompt_d);
    }
    if (s->d[STAT_D_decode_steps] > 0) r->ms_per_pass = 1e3 * p->target / s->d[STAT_D_decode_steps];
    double lo, hi, clo, chi;
    cost_curve_range(tc, &lo, &hi, &clo, &chi);
    r->extrapolated = p->tmax > hi || p->tmin < lo;
    if (dc && p->draft_steps > 0) {
        cost_curve_range(dc, &lo, &hi, &clo, &chi);
        r->extrapolated |= p->dmax > hi;
    }
    /* which samples were priced how: "passes", "steps", "mean rows", joined by '+' */
    long rest = p->n - p->with_passes - p->with_trace;
    snprintf(r->basis, sizeof r->basis, "%s%s%s%s%s%s%s", p->with_passes ? "passes" : "",
             p->with_passes && (p->with_trace || rest) ? "+" : "", p->with_trace ? "steps" : "",
             p->with_trace && rest ? "+" : "", rest ? "mean rows" : "",
             r->draft_priced ? "" : ", draft not priced", r->extrapolated ? ", extrapolated" : "");
}

/* Over several runs (a benchmark split into runs, e.g. one per prompt so that a cost curve can be
 * measured between them): one more row per dataset x spec found in two runs or more, run_id 0,
 * every sum added up; its measured speed-ups are the ratio of greedy's total time in the same
 * runs to the decoder's (NAN where greedy ran in another run, a sweep's baseline). */
static int aggregate(const rep_stat *all, const sums *p, int n, int has_draft_curve,
                     const cost_curve *tc, const cost_curve *dc, report_projection **r, int *n_r,
                     char *err) {
    for (int i = 0; i < n; i++) {
        int first = 1, count = 0;
        for (int j = 0; j < n; j++) {
            int same = !strcmp(all[j].dataset, all[i].dataset) && !strcmp(all[j].spec, all[i].spec);
            if (same && j < i) first = 0;
            count += same;
        }
        if (!first || count < 2) continue;
        rep_stat a = all[i];
        sums q = p[i];
        double gd = 0, ge = 0;
        int greedy_here = 1;
        a.run_id = 0;
        memset(a.c, 0, sizeof a.c), memset(a.d, 0, sizeof a.d);
        a.n_samples = 0;
        q.tmax = q.dmax = 0, q.tmin = INFINITY;
        q.greedy = q.target = q.draft = q.prompt_t = q.prompt_d = q.book = q.draft_steps = 0;
        q.gbook = 0, q.n = q.with_passes = q.with_trace = 0, q.found = 0;
        for (int j = 0; j < n; j++) {
            if (strcmp(all[j].dataset, a.dataset) || strcmp(all[j].spec, a.spec)) continue;
            for (int k = 0; k < STAT_N_COUNTERS; k++) a.c[k] += all[j].c[k];
            for (int k = 0; k < STAT_N_DERIVED; k++) a.d[k] += all[j].d[k];
            a.n_samples += all[j].n_samples;
            const sums *o = &p[j];
            q.greedy += o->greedy, q.target += o->target, q.draft += o->draft;
            q.prompt_t += o->prompt_t, q.prompt_d += o->prompt_d, q.book += o->book;
            q.draft_steps += o->draft_steps, q.gbook += o->gbook;
            q.n += o->n, q.with_passes += o->with_passes, q.with_trace += o->with_trace;
            q.found |= o->found;
            q.tmax = fmax(q.tmax, o->tmax), q.dmax = fmax(q.dmax, o->dmax);
            q.tmin = fmin(q.tmin, o->tmin);
            const rep_stat *g = NULL; /* greedy of the same run and dataset */
            for (int k = 0; k < n && !g; k++)
                if (all[k].run_id == all[j].run_id && !strcmp(all[k].dataset, a.dataset) &&
                    !strcmp(all[k].spec, "greedy"))
                    g = &all[k];
            if (!g) greedy_here = 0;
            if (g) gd += g->d[STAT_D_t_decode], ge += g->c[STAT_t_total];
        }
        a.speedup_dec = greedy_here && a.d[STAT_D_t_decode] > 0 ? gd / a.d[STAT_D_t_decode] : NAN;
        a.speedup_e2e = greedy_here && a.c[STAT_t_total] > 0 ? ge / a.c[STAT_t_total] : NAN;
        report_projection *grown = realloc(*r, sizeof **r * (size_t)(*n_r + 1));
        if (!grown) return err_set(err, "report: out of memory");
        *r = grown;
        figures(&a, &q, has_draft_curve, tc, dc, &(*r)[(*n_r)++]);
    }
    return 0;
}

int report_project(db *d, const int64_t *ids, int n_ids, const char *cost_source,
                   const char *draft_source, report_projection **out, int *n_out, char *err) {
    *out = NULL;
    *n_out = 0;
    cost_curve *tc = NULL, *dc = NULL;
    if (cost_curve_load(&tc, cost_source, "--project-cost", err) ||
        (draft_source && cost_curve_load(&dc, draft_source, "--project-draft-cost", err))) {
        cost_curve_free(tc);
        return -1;
    }
    if (dc && cost_curve_batch(dc) != cost_curve_batch(tc)) {
        err_set(err,
                "report: --project-draft-cost %s is a curve of batch %d, --project-cost %s one "
                "of batch %d: a batch's draft and target passes run in the same lockstep, so "
                "both curves must be measured at one batch size (cost --batch B)",
                draft_source, cost_curve_batch(dc), cost_source, cost_curve_batch(tc));
        cost_curve_free(tc);
        cost_curve_free(dc);
        return -1;
    }
    curves cv = {tc, dc};
    rep_stat *all = NULL;
    int n_all = 0, rc = rep_collect_runs(d, ids, n_ids, 1, &all, &n_all, err);
    sums *p = rc == 0 ? calloc((size_t)n_all + 1, sizeof *p) : NULL;
    report_projection *r = rc == 0 ? calloc((size_t)n_all + 1, sizeof *r) : NULL;
    if (rc == 0 && (!p || !r)) rc = err_set(err, "report: out of memory");
    for (int i = 0; rc == 0 && i < n_ids; i++) rc = project_run(d, ids[i], &cv, all, n_all, p, err);
    for (int i = 0; rc == 0 && i < n_all; i++) {
        int64_t g = all[i].greedy_run ? all[i].greedy_run : all[i].run_id;
        p[i].gbook = greedy_book(db_sqlite(d), g) * all[i].d[STAT_D_decode_tokens];
        figures(&all[i], &p[i], dc != NULL, tc, dc, &r[i]);
    }
    for (int i = 0; rc == 0 && i < n_all; i++) r[i].batch = cost_curve_batch(tc);
    int n_r = n_all;
    if (rc == 0 && n_ids > 1) rc = aggregate(all, p, n_all, dc != NULL, tc, dc, &r, &n_r, err);
    for (int i = n_all; rc == 0 && i < n_r; i++) r[i].batch = cost_curve_batch(tc);
    free(p);
    rep_stats_free(all, n_all);
    cost_curve_free(tc);
    cost_curve_free(dc);
    if (rc) {
        free(r);
        return -1;
    }
    *out = r;
    *n_out = n_r;
    return 0;
}

static void curve_note(rtable *t, const char *what, const char *source, char *err) {
    cost_curve *c;
    if (cost_curve_load(&c, source, NULL, err)) return;
    double lo, hi, clo, chi;
    cost_curve_range(c, &lo, &hi, &clo, &chi);
    if (cost_curve_is_grid(c))
        rt_note(t,
                "%s cost curve %s: %d points, rows %g..%g, contexts %g..%g, t(1, %g, 1) = %.4g "
                "ms.",
                what, cost_curve_source(c), cost_curve_points(c), lo, hi, clo, chi, clo,
                1e3 * cost_curve_t(c, 1, clo, 1));
    else
        rt_note(t,
                "%s cost curve %s: %d points, rows %g..%g, one context, every row's logits "
                "(a version 1 curve: context and logit rows not modelled), t(1) = %.4g ms%s.",
                what, cost_curve_source(c), cost_curve_points(c), lo, hi,
                1e3 * cost_curve_t(c, 1, 0, 1), lo > 1 ? " (extrapolated)" : "");
    cost_curve_free(c);
}

int rep_projected(db *d, const int64_t *ids, int n_ids, const char *cost_source,
                  const char *draft_cost_source, rtable *t, char *err) {
    report_projection *r;
    int n;
    if (report_project(d, ids, n_ids, cost_source, draft_cost_source, &r, &n, err)) return -1;
    int c_run = n_ids > 1 ? rt_col_add(t, "run", "run", RT_TEXT, NULL) : -1;
    int c_ds = rt_col_add(t, "dataset", "dataset", RT_TEXT, NULL);
    int c_spec = rt_col_add(t, "decoder", "spec", RT_TEXT, NULL);
    int c_meas = rt_col_add(t, "measured speed-up", "measured_speedup", RT_REAL, "%.2fx");
    int c_meas_e = rt_col_add(t, "measured e2e", "measured_speedup_e2e", RT_REAL, "%.2fx");
    int c_tps = rt_col_add(t, "tokens/step", "tokens_per_step", RT_REAL, "%.2f");
    int c_rows = rt_col_add(t, "rows/step", "rows_per_step", RT_REAL, "%.1f");
    int c_ms = rt_col_add(t, "projected ms/pass", "projected_ms_per_pass", RT_REAL, "%.3f");
    int c_ptps = rt_col_add(t, "projected tok/s", "projected_tps", RT_REAL, "%.1f");
    int c_sp = rt_col_add(t, "projected speed-up", "projected_speedup", RT_REAL, "%.2fx");
    int c_spe = rt_col_add(t, "projected e2e", "projected_speedup_e2e", RT_REAL, "%.2fx");
    int c_basis = rt_col_add(t, "basis", "basis", RT_TEXT, NULL);
    /* a batched curve's size, as a column too (CSV and JSON readers see it by row); batch-1
     * tables keep their columns */
    int batch = n > 0 ? r[0].batch : 1;
    int c_batch = batch > 1 ? rt_col_add(t, "batch", "batch", RT_INT, NULL) : -1;
    int any_extra = 0, unpriced = 0;
    for (int i = 0; i < n; i++) {
        int row = rt_row_add(t);
        if (c_run >= 0) {
            char id[32];
            snprintf(id, sizeof id, "%lld", (long long)r[i].run_id);
            rt_set_text(t, row, c_run, r[i].run_id ? id : "all");
        }
        rt_set_text(t, row, c_ds, r[i].dataset);
        rt_set_text(t, row, c_spec, r[i].spec);
        if (c_batch >= 0) rt_set_num(t, row, c_batch, r[i].batch);
        rt_set_num(t, row, c_meas, r[i].measured_decode);
        rt_set_num(t, row, c_meas_e, r[i].measured_e2e);
        rt_set_num(t, row, c_tps, r[i].tokens_per_step);
        rt_set_num(t, row, c_rows, r[i].rows_per_step);
        if (!(r[i].projected_decode > 0)) continue;
        rt_set_num(t, row, c_ms, r[i].ms_per_pass);
        rt_set_num(t, row, c_ptps, r[i].projected_tps);
        rt_set_num(t, row, c_sp, r[i].projected_decode);
        rt_set_num(t, row, c_spe, r[i].projected_e2e);
        rt_set_text(t, row, c_basis, r[i].basis);
        any_extra |= r[i].extrapolated;
        unpriced |= !r[i].draft_priced;
    }
    free(r);
    curve_note(t, "PROJECTED, not measured: target", cost_source, err);
    if (draft_cost_source) curve_note(t, "Draft", draft_cost_source, err);
    if (batch > 1)
        rt_note(t,
                "Priced at batch %d: each pass as %d sequences' in lockstep (the decoder's and "
                "greedy's alike, each sequence as the traced one), so the projected speed-up is "
                "over greedy serving %d sequences and projected tok/s is one sequence's (the "
                "batch's throughput is %d times it). Measured columns are the run's own.",
                batch, batch, batch, batch);
    rt_note(t, "projected speed-up = greedy's decode passes t(1, context, 1) / the decoder's "
               "decode passes (target and draft, each at its rows, context and logit rows), "
               "both plus their measured bookkeeping seconds; e2e adds the prompt passes. Basis "
               "'passes': the run's pass trace (run --trace); 'steps': its step trace (every "
               "row's logits, context from the tokens emitted); 'mean rows': each sample's mean "
               "rows per pass at its middle context.");
    if (unpriced)
        rt_note(t, "'draft not priced': the decoder ran draft-model passes but no draft cost curve "
                   "was given (--project-draft-cost): its figure counts the target's passes only, "
                   "an upper bound.");
    if (any_extra)
        rt_note(t, "'extrapolated': some passes had more (or fewer) rows than the curve "
                   "measured; t was extended linearly from the end segment.");
    if (n_ids > 1)
        rt_note(t, "Run 'all': the runs added up (every sum; measured = greedy's total time over "
                   "the decoder's, in the same runs).");
    return 0;
}
