/* report_batch.c: the `batch` layout, for runs made with `run --batch B`: per run and decoder,
 * what a server decoding B requests at once sees. Its figures and their definitions are the
 * table below (`decbench counters` prints it). A run without --batch has a row (batch 1) only
 * beside batched runs (a sweep's `batch=1,2,4`): each sequence is then its own batch, its wall
 * time t_total. A decoder's speed-up is over greedy's in its run or, for a sweep's point, in
 * the run its baseline is (runs.baseline_run_id).
 *
 * Where each decoder stops paying: over the batch sizes reported, the largest B at which its
 * speed-up over greedy at the same B is above 1 ("pays to B") and the smallest at which it is
 * not ("stops at B"), per decoder spec (and --continuous or not), as two columns and a note. */
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "results/report/report_internal.h"
#include "util/err.h"

/* The layout's figures, one row each: header, key (CSV, JSON), format, definition. */
static const struct {
    const char *header, *key, *fmt, *definition;
} figs[] = {
    {"tok/s (batch)", "throughput", "%.1f",
     "throughput: the decoder's new tokens over the summed wall time of its batches (each "
     "batch from its first sequence's start to its last one's end: batch_samples.batch_wall "
     "once per batch)"},
    {"speed-up", "speedup_batch", "%.2fx",
     "tok/s (batch) over greedy's in the same run (a sweep's point: in its baseline run), at "
     "the same batch size"},
    {"rows/pass", "rows_per_pass", "%.1f",
     "mean over the samples of the mean rows, every sequence's, of the target passes a sequence "
     "took part in, its own prompt passes left out"},
    {"p50 ms/tok", "p50_ms_per_token", "%.3f",
     "nearest-rank median over the samples of milliseconds per token after the first "
     "(t_decode / decode tokens: its sequence's wall time, the other sequences' rows in its "
     "passes included)"},
    {"p90 ms/tok", "p90_ms_per_token", "%.3f", "the same, 90th percentile"},
    {"p99 ms/tok", "p99_ms_per_token", "%.3f", "the same, 99th percentile"},
};
#define N_FIGS (int)(sizeof figs / sizeof figs[0])

int report_batch_figure_count(void) { return N_FIGS; }

void report_batch_figure_info(int i, const char **header, const char **key,
                              const char **definition) {
    *header = figs[i].header, *key = figs[i].key, *definition = figs[i].definition;
}

typedef struct {
    int64_t run_id, baseline; /* baseline: the run holding greedy's samples (0: this one) */
    int shown;                /* 0: loaded only as another run's greedy baseline */
    int batch, continuous;
    char *spec, *decoder;
    long samples, tokens;
    double wall, rows, p[3];
} batch_row;

/* The nearest-rank percentile q (0..1) of v[0..n), sorted ascending. */
static double nearest_rank(const double *v, int n, double q) {
    if (n == 0) return NAN;
    int k = (int)ceil(q * n);
    return v[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

/* The per-token times of one decoder's samples of a run, in milliseconds, into p50/p90/p99. */
static int percentiles(sqlite3 *h, batch_row *b, char *err) {
    sqlite3_stmt *st;
    /* a batch-1 run's samples have no batch figures: the same quotient from the sample */
    if (sqlite3_prepare_v2(h,
                           b->batch > 1
                               ? "SELECT b.t_per_token FROM samples s JOIN batch_samples b ON "
                                 "b.sample_id = s.id WHERE s.run_id = ? AND s.spec = ? AND "
                                 "b.t_per_token IS NOT NULL ORDER BY 1"
                               : "SELECT (t_total - t_prefill) / (new_tokens - 1) FROM samples "
                                 "WHERE run_id = ? AND spec = ? AND new_tokens > 1 ORDER BY 1",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report: %s", db_errmsg(h));
    sqlite3_bind_int64(st, 1, b->run_id);
    sqlite3_bind_text(st, 2, b->spec, -1, SQLITE_STATIC);
    double *v = NULL;
    int n = 0, cap = 0, rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            double *g = realloc(v, sizeof *v * (size_t)cap);
            if (!g) {
                rc = err_set(err, "report: out of memory");
                break;
            }
            v = g;
        }
        v[n++] = 1000 * sqlite3_column_double(st, 0);
    }
    sqlite3_finalize(st);
    static const double q[3] = {0.5, 0.9, 0.99};
    for (int i = 0; i < 3; i++) b->p[i] = nearest_rank(v, n, q[i]);
    free(v);
    return rc;
}

/* Appends the rows of one run: a batched run's (unbatched: none), or with unbatched set, a
 * run without --batch's at batch 1 (each sample its own batch of one: its t_total the wall
 * time; rows per pass its target rows over its decode passes). */
static int run_rows(sqlite3 *h, int64_t run_id, int unbatched, batch_row **rows, int *n,
                    char *err) {
    sqlite3_stmt *st;
    static const char batched_sql[] =
        "SELECT r.batch, r.continuous, s.spec, MIN(s.decoder), COUNT(*), SUM(s.new_tokens), "
        "AVG(b.rows_per_pass), (SELECT SUM(w) FROM (SELECT DISTINCT b2.batch_index, "
        "b2.batch_wall AS w FROM batch_samples b2 JOIN samples s2 ON s2.id = b2.sample_id "
        "WHERE s2.run_id = r.id AND s2.spec = s.spec)), COALESCE(r.baseline_run_id, 0) "
        "FROM runs r JOIN samples s ON "
        "s.run_id = r.id JOIN batch_samples b ON b.sample_id = s.id WHERE r.id = ? "
        "GROUP BY s.spec ORDER BY MIN(s.id)";
    static const char unbatched_sql[] =
        "SELECT r.batch, r.continuous, s.spec, MIN(s.decoder), COUNT(*), SUM(s.new_tokens), "
        "AVG(CASE WHEN s.target_steps > 1 THEN 1.0 * s.target_rows / (s.target_steps - 1) END), "
        "SUM(s.t_total), COALESCE(r.baseline_run_id, 0) FROM runs r JOIN samples s ON "
        "s.run_id = r.id WHERE r.id = ? AND r.batch = 1 AND NOT EXISTS (SELECT 1 FROM "
        "batch_samples b WHERE b.sample_id = s.id) GROUP BY s.spec ORDER BY MIN(s.id)";
    if (sqlite3_prepare_v2(h, unbatched ? unbatched_sql : batched_sql, -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report: %s", db_errmsg(h));
    sqlite3_bind_int64(st, 1, run_id);
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        batch_row *g = realloc(*rows, sizeof *g * (size_t)(*n + 1));
        if (!g) {
            rc = err_set(err, "report: out of memory");
            break;
        }
        *rows = g;
        batch_row *b = &g[(*n)++];
        memset(b, 0, sizeof *b);
        b->run_id = run_id;
        b->batch = sqlite3_column_int(st, 0);
        b->continuous = sqlite3_column_int(st, 1);
        b->spec = strdup((const char *)sqlite3_column_text(st, 2));
        b->decoder = strdup((const char *)sqlite3_column_text(st, 3));
        b->samples = sqlite3_column_int64(st, 4);
        b->tokens = sqlite3_column_int64(st, 5);
        b->rows = sqlite3_column_type(st, 6) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 6);
        b->wall = sqlite3_column_double(st, 7);
        b->baseline = sqlite3_column_int64(st, 8);
        b->shown = 1;
        if (!b->spec || !b->decoder) rc = err_set(err, "report: out of memory");
    }
    sqlite3_finalize(st);
    for (int i = 0; rc == 0 && i < *n; i++)
        if ((*rows)[i].run_id == run_id) rc = percentiles(h, &(*rows)[i], err);
    return rc;
}

int rep_batched_runs(db *d, const int64_t *ids, int n_ids, int *any, char *err) {
    *any = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(d), "SELECT batch > 1 FROM runs WHERE id = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return err_set(err, "report: %s", db_errmsg(db_sqlite(d)));
    for (int i = 0; i < n_ids && !*any; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[i]);
        if (sqlite3_step(st) == SQLITE_ROW) *any = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return 0;
}

/* Greedy's throughput against which row b is measured: its run's, else its baseline run's. */
static double greedy_tput(const batch_row *rows, int n, const batch_row *b) {
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < n; j++) {
            int64_t want = pass == 0 ? b->run_id : b->baseline;
            if (want && rows[j].run_id == want && rows[j].batch == b->batch &&
                !strcmp(rows[j].decoder, "greedy") && rows[j].wall > 0)
                return rows[j].tokens / rows[j].wall;
        }
    return NAN;
}

/* Where row i's decoder stops paying, over the rows shown of the same spec and continuous:
 * *pays the largest batch with a speed-up above 1, *stops the smallest without (0: none). */
static void stop_paying(const batch_row *rows, const double *sp, int n, int i, int *pays,
                        int *stops) {
    *pays = 0, *stops = 0;
    for (int j = 0; j < n; j++) {
        if (!rows[j].shown || strcmp(rows[j].spec, rows[i].spec) ||
            rows[j].continuous != rows[i].continuous || isnan(sp[j]))
            continue;
        if (sp[j] > 1 && rows[j].batch > *pays) *pays = rows[j].batch;
        if (!(sp[j] > 1) && (*stops == 0 || rows[j].batch < *stops)) *stops = rows[j].batch;
    }
}

int report_batch_speedup(db *d, int64_t run_id, const char *spec, double *out, char *err) {
    batch_row *rows = NULL;
    int n = 0, rc = run_rows(db_sqlite(d), run_id, 0, &rows, &n, err);
    *out = NAN;
    int64_t base = n > 0 ? rows[0].baseline : 0;
    if (rc == 0 && base) rc = run_rows(db_sqlite(d), base, 0, &rows, &n, err);
    for (int i = 0; rc == 0 && i < n; i++)
        if (rows[i].run_id == run_id && !strcmp(rows[i].spec, spec) && rows[i].wall > 0)
            *out = rows[i].tokens / rows[i].wall / greedy_tput(rows, n, &rows[i]);
    for (int i = 0; i < n; i++) free(rows[i].spec), free(rows[i].decoder);
    free(rows);
    return rc;
}

int rep_batch_layout(db *d, const int64_t *ids, int n_ids, const report_opts *o, rtable *t,
                     char *err) {
    batch_row *rows = NULL;
    int n = 0, rc = 0;
    for (int r = 0; rc == 0 && r < n_ids; r++)
        rc = run_rows(db_sqlite(d), ids[r], 0, &rows, &n, err);
    if (rc == 0 && n == 0)
        rc = err_set(err, "report: no batched run among the run(s) reported (the batch layout "
                          "needs a run made with `run --batch B`, B > 1)");
    /* beside batched runs, the unbatched ones at batch 1; then the greedy baselines not among
     * the runs reported (loaded, not shown) */
    for (int r = 0; rc == 0 && r < n_ids; r++)
        rc = run_rows(db_sqlite(d), ids[r], 1, &rows, &n, err);
    for (int i = 0, n0 = n; rc == 0 && i < n0; i++) {
        int64_t base = rows[i].baseline;
        int have = !base;
        for (int j = 0; j < n && !have; j++) have = rows[j].run_id == base;
        if (have) continue;
        int from = n;
        rc = run_rows(db_sqlite(d), base, rows[i].batch == 1, &rows, &n, err);
        for (int j = from; j < n; j++) rows[j].shown = 0;
    }
    const char **specs = rc == 0 ? malloc(sizeof *specs * (size_t)n) : NULL;
    if (rc == 0 && !specs) rc = err_set(err, "report: out of memory");
    if (rc == 0) {
        for (int i = 0; i < n; i++) specs[i] = rows[i].spec;
        int c_run = n_ids > 1 ? rt_col_add(t, "run", "run", RT_INT, NULL) : -1;
        int c_lab = rt_col_add(t, "decoder", "label", RT_TEXT, NULL);
        int c_spec = rt_col_add(t, "spec", "spec", RT_TEXT, NULL);
        rt_col_hide(t, c_spec);
        int c_b = rt_col_add(t, "batch", "batch", RT_INT, NULL);
        int c_cont = rt_col_add(t, "continuous", "continuous", RT_INT, NULL);
        int c_n = rt_col_add(t, "samples", "samples", RT_INT, NULL);
        int c_fig = t->n_cols; /* the figures, in the table's order */
        for (int f = 0; f < N_FIGS; f++)
            rt_col_add(t, figs[f].header, figs[f].key, RT_REAL, figs[f].fmt);
        int c_pays = rt_col_add(t, "pays to B", "pays_to_batch", RT_INT, NULL);
        int c_stops = rt_col_add(t, "stops at B", "stops_at_batch", RT_INT, NULL);
        rt_note(t, "Batched decoding (run --batch B); definitions: decbench counters, "
                   "results/README.md. pays to B / stops at B: over the batch sizes reported, "
                   "the largest B at which the decoder's speed-up over greedy at the same B is "
                   "above 1, and the smallest at which it is not.");
        double *sp = malloc(sizeof *sp * (size_t)n);
        int *order = malloc(sizeof *order * (size_t)n), m = sp && order ? n : 0;
        if (!m) rc = err_set(err, "report: out of memory");
        /* rows by batch size, in run order within one (a sweep's batch=1,2,4 reads down) */
        for (int i = 0, k = 0; i < m; i++) {
            for (k = i; k > 0 && rows[order[k - 1]].batch > rows[i].batch; k--)
                order[k] = order[k - 1];
            order[k] = i;
        }
        for (int i = 0; i < m; i++) {
            double tput = rows[i].wall > 0 ? rows[i].tokens / rows[i].wall : NAN;
            sp[i] =
                !strcmp(rows[i].decoder, "greedy") ? NAN : tput / greedy_tput(rows, n, &rows[i]);
        }
        int sizes = 0; /* batch sizes shown */
        for (int i = 0; i < m; i++) {
            int seen = !rows[i].shown;
            for (int j = 0; j < i && !seen; j++)
                seen = rows[j].shown && rows[j].batch == rows[i].batch;
            sizes += !seen;
        }
        for (int k = 0; k < m; k++) {
            int i = order[k];
            const batch_row *b = &rows[i];
            if (!b->shown) continue;
            double tput = b->wall > 0 ? b->tokens / b->wall : NAN;
            double greedy = greedy_tput(rows, n, b);
            char lab[1024];
            rep_label_known(b->spec, specs, n, o->default_specs, o->n_default_specs, lab,
                            sizeof lab);
            int r = rt_row_add(t);
            if (c_run >= 0) rt_set_num(t, r, c_run, (double)b->run_id);
            rt_set_text(t, r, c_lab, lab);
            rt_set_text(t, r, c_spec, b->spec);
            rt_set_num(t, r, c_b, b->batch);
            rt_set_num(t, r, c_cont, b->continuous);
            rt_set_num(t, r, c_n, (double)b->samples);
            const double v[N_FIGS] = {tput, tput / greedy, b->rows, b->p[0], b->p[1], b->p[2]};
            for (int f = 0; f < N_FIGS; f++) rt_set_num(t, r, c_fig + f, v[f]);
            int pays, stops;
            stop_paying(rows, sp, n, i, &pays, &stops);
            rt_set_num(t, r, c_pays, pays ? pays : NAN);
            rt_set_num(t, r, c_stops, stops ? stops : NAN);
        }
        /* the answer in words, once per decoder, when more than one batch size was measured */
        for (int i = 0; sizes > 1 && i < m; i++) {
            int first = rows[i].shown && !isnan(sp[i]);
            for (int j = 0; j < i && first; j++)
                first = !(rows[j].shown && !strcmp(rows[j].spec, rows[i].spec) &&
                          rows[j].continuous == rows[i].continuous);
            if (!first) continue;
            int pays, stops;
            stop_paying(rows, sp, n, i, &pays, &stops);
            char lab[1024];
            rep_label_known(rows[i].spec, specs, n, o->default_specs, o->n_default_specs, lab,
                            sizeof lab);
            const char *cont = rows[i].continuous ? " (continuous)" : "";
            if (pays && stops > pays)
                rt_note(t, "%s%s: pays up to batch %d, stops paying at batch %d.", lab, cont, pays,
                        stops);
            else if (pays && stops)
                rt_note(t,
                        "%s%s: pays at batch %d, not at batch %d (not monotone in B: noise or "
                        "a real dip).",
                        lab, cont, pays, stops);
            else if (pays)
                rt_note(t, "%s%s: pays at every batch size measured (up to %d).", lab, cont, pays);
            else
                rt_note(t, "%s%s: pays at no batch size measured (from %d).", lab, cont, stops);
        }
        free(sp);
        free(order);
        for (int f = 0; o->explain && f < N_FIGS; f++)
            rt_note(t, "%s: %s.", figs[f].header, figs[f].definition);
    }
    free(specs);
    for (int i = 0; i < n; i++) free(rows[i].spec), free(rows[i].decoder);
    free(rows);
    return rc;
}
