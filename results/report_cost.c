/* report_cost.c: speed-up projected from a forward-cost curve (report --project-cost).
 *
 * Why: on a CPU a pass over T rows costs far more than one row once the matrix products stop
 * being bandwidth-bound, so tokens per step alone overstates a decoder's speed-up. Given the
 * measured latency t(T) of one target forward pass over T rows (decbench cost), the decode
 * cost of a sample is the sum over its decode passes of t(rows of that pass); greedy's is
 * (new_tokens - 1) x t(1) (its first token comes from the prefill pass, which every decoder
 * shares and which is left out on both sides). So
 *
 *   projected speed-up = sum_samples (new_tokens - 1) t(1) / sum_samples sum_passes t(rows)
 *
 * using the per-step trace when stored, else (target_steps - 1) x t(target_rows /
 * (target_steps - 1)), i.e. every pass at the sample's mean rows per pass (exact when t is
 * linear over the rows used). t is interpolated linearly between measured T and extrapolated
 * from the end segments (flagged). Draft-model passes and bookkeeping are not costed: this is
 * the target-side bound, labelled "projected" everywhere. */
#include "results/report_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/file.h"

#define MAX_POINTS 1024

typedef struct {
    int n;
    double rows[MAX_POINTS], secs[MAX_POINTS];
    char source[4200];
} cost_curve;

static void sort_curve(cost_curve *c) {
    for (int i = 1; i < c->n; i++)
        for (int j = i; j > 0 && c->rows[j - 1] > c->rows[j]; j--) {
            double r = c->rows[j], s = c->secs[j];
            c->rows[j] = c->rows[j - 1];
            c->secs[j] = c->secs[j - 1];
            c->rows[j - 1] = r;
            c->secs[j - 1] = s;
        }
}

static int add_point(cost_curve *c, double rows, double secs, const char *where, char *err) {
    if (!(rows >= 1) || !(secs > 0))
        return err_set(err, "report: %s: need rows >= 1 and seconds > 0, got %g, %g", where, rows,
                       secs);
    for (int i = 0; i < c->n; i++)
        if (c->rows[i] == rows) return err_set(err, "report: %s: rows %g given twice", where, rows);
    if (c->n == MAX_POINTS)
        return err_set(err, "report: %s: more than %d points", where, MAX_POINTS);
    c->rows[c->n] = rows;
    c->secs[c->n++] = secs;
    return 0;
}

/* CSV "rows,seconds[,...]": a header line and lines starting with '#' are skipped. */
static int load_csv(cost_curve *c, const char *path, char *err) {
    char e[ERR_LEN];
    FILE *f = file_fopen_regular(path, "cost", e);
    if (!f) return err_set(err, "report: --project-cost %s", e);
    char line[1024], where[4200];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p) continue;
        double rows, secs;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (sscanf(p, "%lf ,%lf", &rows, &secs) != 2) {
            if (c->n == 0 && lineno == 1) continue; /* header */
            rc = err_set(err, "report: %s: expected \"rows,seconds\"", where);
            break;
        }
        rc = add_point(c, rows, secs, where, err);
    }
    fclose(f);
    if (rc == 0 && c->n == 0) rc = err_set(err, "report: cost file %s has no points", path);
    return rc;
}

static int load_db(cost_curve *c, const char *arg, char *err) {
    char path[4096];
    int64_t run;
    if (report_split_source(arg, path, sizeof path, &run, err) != 0) return -1;
    db *d;
    if (db_open(&d, path, DB_READ_ANY, err) != 0) return -1;
    int rc = 0;
    if (!run) {
        char inner[ERR_LEN];
        if (db_latest_run(d, DB_STATUS_MASK(DB_COMPLETE), 0, 1, &run, inner) != 0)
            rc = err_set(err, "report: cost source: %s", inner);
    }
    sqlite3_stmt *st = NULL;
    if (rc == 0 && sqlite3_prepare_v2(db_sqlite(d),
                                      "SELECT rows, seconds FROM cost WHERE run_id = ? "
                                      "ORDER BY rows",
                                      -1, &st, NULL) != SQLITE_OK)
        rc = err_set(err, "report: %s: %s", path, sqlite3_errmsg(db_sqlite(d)));
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, run);
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
            rc =
                add_point(c, sqlite3_column_double(st, 0), sqlite3_column_double(st, 1), path, err);
        if (rc == 0 && c->n == 0)
            rc = err_set(err, "report: %s: run %" PRId64 " has no cost points", path, run);
    }
    sqlite3_finalize(st);
    db_close(d);
    snprintf(c->source, sizeof c->source, "%s run %" PRId64, path, run);
    return rc;
}

static int load_curve(cost_curve *c, const char *arg, char *err) {
    memset(c, 0, sizeof *c);
    if (!arg) return err_set(err, "report: the projected layout needs a cost source");
    char path[4096];
    int64_t run;
    if (report_split_source(arg, path, sizeof path, &run, err) != 0) return -1;
    /* By content, not by name: an SQLite header means a decbench database. */
    char magic[16] = {0};
    char e[ERR_LEN];
    FILE *f = file_fopen_regular(path, "cost", e); /* a directory or FIFO is refused here */
    if (!f) return err_set(err, "report: --project-cost %s", e);
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    int rc;
    if (got == 16 && memcmp(magic, "SQLite format 3", 16) == 0) {
        rc = load_db(c, arg, err);
    } else if (run) {
        rc = err_set(err, "report: %s is not a database, so a run id (:%" PRId64 ") means nothing",
                     path, run);
    } else {
        rc = load_csv(c, path, err);
        snprintf(c->source, sizeof c->source, "%s", path);
    }
    sort_curve(c);
    return rc;
}

/* Latency of a pass over x rows: linear between measured points, the end segments' line
 * outside them (a single point: constant). */
static double cost_t(const cost_curve *c, double x) {
    if (c->n == 1) return c->secs[0];
    int i = 0;
    while (i < c->n - 2 && x > c->rows[i + 1]) i++;
    double x0 = c->rows[i], x1 = c->rows[i + 1], y0 = c->secs[i], y1 = c->secs[i + 1];
    double y = y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    return y > 0 ? y : c->secs[0] * 1e-3; /* only a wild extrapolation could go below zero */
}

static void sql_cost_t(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    const cost_curve *c = sqlite3_user_data(ctx);
    sqlite3_result_double(ctx, cost_t(c, sqlite3_value_double(argv[0])));
}

/* Per (ds, spec): greedy-equivalent cost, projected cost, trace coverage and the range of
 * rows the projection evaluated t at. */
static const char PROJECT_SQL[] = REP_SAMPLES_CTE
    ", x AS (SELECT s.*, EXISTS (SELECT 1 FROM trace t WHERE t.sample_id = s.id AND t.step > 0) "
    "AS has_trace FROM s) "
    "SELECT ds, spec, SUM(MAX(new_tokens - 1, 0)), "
    "SUM(CASE WHEN has_trace THEN (SELECT SUM(decbench_cost_t(t.rows)) FROM trace t "
    "WHERE t.sample_id = x.id AND t.step > 0) "
    "WHEN target_steps > 1 THEN (target_steps - 1) * "
    "decbench_cost_t(1.0 * target_rows / (target_steps - 1)) ELSE 0 END), "
    "SUM(has_trace), "
    "MIN(CASE WHEN has_trace THEN (SELECT MIN(t.rows) FROM trace t WHERE t.sample_id = x.id "
    "AND t.step > 0) WHEN target_steps > 1 THEN 1.0 * target_rows / (target_steps - 1) END), "
    "MAX(CASE WHEN has_trace THEN (SELECT MAX(t.rows) FROM trace t WHERE t.sample_id = x.id "
    "AND t.step > 0) WHEN target_steps > 1 THEN 1.0 * target_rows / (target_steps - 1) END) "
    "FROM x GROUP BY ds, spec";

typedef struct {
    double greedy_cost, cost, lo, hi;
    long traced;
    int found;
} projection;

static int project_run(db *d, int64_t run, const cost_curve *c, rep_stat *s, int n, projection *p,
                       char *err) {
    sqlite3 *h = db_sqlite(d);
    if (sqlite3_create_function(h, "decbench_cost_t", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                (void *)c, sql_cost_t, NULL, NULL) != SQLITE_OK)
        return err_set(err, "report: cannot register the cost function: %s", sqlite3_errmsg(h));
    int rc = 0;
    for (int per_ds = 1; per_ds >= 0 && rc == 0; per_ds--) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, PROJECT_SQL, -1, &st, NULL) != SQLITE_OK) {
            rc = err_set(err, "report: projection query: %s", sqlite3_errmsg(h));
            break;
        }
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int(st, 2, per_ds);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *ds = (const char *)sqlite3_column_text(st, 0);
            const char *spec = (const char *)sqlite3_column_text(st, 1);
            for (int i = 0; i < n; i++) {
                if (s[i].run_id != run || strcmp(s[i].dataset, ds) || strcmp(s[i].spec, spec))
                    continue;
                p[i].greedy_cost = sqlite3_column_double(st, 2) * cost_t(c, 1);
                p[i].cost = sqlite3_column_double(st, 3);
                p[i].traced = sqlite3_column_int(st, 4);
                p[i].lo = sqlite3_column_double(st, 5);
                p[i].hi = sqlite3_column_double(st, 6);
                p[i].found = 1;
            }
        }
        sqlite3_finalize(st);
    }
    sqlite3_create_function(h, "decbench_cost_t", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    return rc;
}

int rep_projected(db *d, const int64_t *ids, int n_ids, const char *cost_source, rtable *t,
                  char *err) {
    cost_curve *c = malloc(sizeof *c);
    if (!c) return err_set(err, "report: out of memory");
    if (load_curve(c, cost_source, err) != 0) {
        free(c);
        return -1;
    }
    rep_stat *all = NULL;
    int n_all = 0, rc = 0;
    for (int i = 0; rc == 0 && i < n_ids; i++) {
        rep_stat *s;
        int n;
        if ((rc = rep_collect(d, ids[i], 1, &s, &n, err)) != 0) break;
        rep_stat *grown = realloc(all, (size_t)(n_all + n) * sizeof *all);
        if (!grown) {
            rep_stats_free(s, n);
            rc = err_set(err, "report: out of memory");
            break;
        }
        all = grown;
        memcpy(all + n_all, s, (size_t)n * sizeof *s);
        n_all += n;
        free(s);
    }
    projection *p = rc == 0 ? calloc((size_t)n_all + 1, sizeof *p) : NULL;
    if (rc == 0 && !p) rc = err_set(err, "report: out of memory");
    for (int i = 0; rc == 0 && i < n_ids; i++) rc = project_run(d, ids[i], c, all, n_all, p, err);
    if (rc == 0) {
        int c_run = n_ids > 1 ? rt_col_add(t, "run", "run", RT_INT, NULL) : -1;
        int c_ds = rt_col_add(t, "dataset", "dataset", RT_TEXT, NULL);
        int c_spec = rt_col_add(t, "decoder", "spec", RT_TEXT, NULL);
        int c_meas = rt_col_add(t, "measured speed-up", "measured_speedup", RT_REAL, "%.2fx");
        int c_tps = rt_col_add(t, "tokens/step", "tokens_per_step", RT_REAL, "%.2f");
        int c_rows = rt_col_add(t, "rows/step", "rows_per_step", RT_REAL, "%.1f");
        int c_ms = rt_col_add(t, "projected ms/pass", "projected_ms_per_pass", RT_REAL, "%.3f");
        int c_ptps = rt_col_add(t, "projected tok/s", "projected_tps", RT_REAL, "%.1f");
        int c_sp = rt_col_add(t, "projected speed-up", "projected_speedup", RT_REAL, "%.2fx");
        int c_basis = rt_col_add(t, "basis", "basis", RT_TEXT, NULL);
        int any_extra = 0;
        for (int i = 0; i < n_all; i++) {
            int r = rt_row_add(t);
            if (c_run >= 0) rt_set_num(t, r, c_run, (double)all[i].run_id);
            rt_set_text(t, r, c_ds, all[i].dataset);
            rt_set_text(t, r, c_spec, all[i].spec);
            rt_set_num(t, r, c_meas, all[i].speedup_dec);
            rt_set_num(t, r, c_tps, rep_tokens_per_step(&all[i]));
            rt_set_num(t, r, c_rows, rep_rows_per_step(&all[i]));
            if (!p[i].found || !(p[i].cost > 0)) continue;
            rt_set_num(t, r, c_ms, 1e3 * p[i].cost / all[i].d[STAT_D_decode_steps]);
            rt_set_num(t, r, c_ptps, all[i].c[STAT_new_tokens] / p[i].cost);
            rt_set_num(t, r, c_sp, p[i].greedy_cost / p[i].cost);
            int extra = p[i].lo < c->rows[0] || p[i].hi > c->rows[c->n - 1];
            any_extra |= extra;
            char basis[64];
            snprintf(basis, sizeof basis, "%s%s",
                     p[i].traced == all[i].n_samples ? "trace"
                     : p[i].traced                   ? "trace+mean rows"
                                                     : "mean rows",
                     extra ? ", extrapolated" : "");
            rt_set_text(t, r, c_basis, basis);
        }
        rt_note(t,
                "PROJECTED, not measured: cost curve %s, %d point(s), T = %g..%g, t(1) = %.4g "
                "ms%s.",
                c->source, c->n, c->rows[0], c->rows[c->n - 1], 1e3 * cost_t(c, 1),
                c->rows[0] > 1 ? " (extrapolated)" : "");
        rt_note(t, "projected speed-up = sum (new_tokens - 1) t(1) / sum over decode passes of "
                   "t(rows); basis 'trace' uses each pass's rows, 'mean rows' uses (target_steps "
                   "- 1) t(mean rows per pass). Target passes only: draft-model passes and "
                   "bookkeeping are not costed.");
        if (any_extra)
            rt_note(t, "'extrapolated': some passes had more (or fewer) rows than the curve "
                       "measured; t was extended linearly from the end segment.");
    }
    free(p);
    rep_stats_free(all, n_all);
    free(c);
    return rc;
}
