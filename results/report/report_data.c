/* report_data.c: the aggregated figures every report, plot and comparison uses.
 *
 * Why ratios of totals: a mean of per-prompt tok/s (or of per-prompt speed-ups) weights a
 * 5-token answer like a 500-token one and is dominated by short, noisy prompts; peers differ on
 * this (Spec-Bench averages tok/s per question: its speed-up is computed beside ours, so the
 * two can be compared). Totals answer "how long does the benchmark take". Repeats are kept
 * apart so their spread can be shown (llama-bench style mean +- sd). Every per-sample
 * quantity comes from the counter list and its derived quantities (stats/stats.h); the
 * figures made from these sums are defined in report_figures.c. */
#include "results/report/report_internal.h"

#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

static int prep(sqlite3 *h, const char *sql, sqlite3_stmt **st, char *err) {
    if (sqlite3_prepare_v2(h, sql, -1, st, NULL) != SQLITE_OK)
        return err_set(err, "report: query failed: %s", db_errmsg(h));
    return 0;
}

/* A query over REP_SAMPLES_CTE, bound: ?1 the run, ?2 per dataset, ?3 greedy's run. */
static int prep_run(sqlite3 *h, const char *sql, int64_t run_id, int per_ds, int64_t g_run,
                    sqlite3_stmt **st, char *err) {
    if (prep(h, sql, st, err) != 0) return -1;
    sqlite3_bind_int64(*st, 1, run_id);
    sqlite3_bind_int(*st, 2, per_ds);
    if (sqlite3_bind_parameter_count(*st) >= 3) sqlite3_bind_int64(*st, 3, g_run);
    return 0;
}

static char *col_dup(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

/* Sample standard deviation (n - 1) from count, sum and sum of squares, clamped against
 * rounding below zero; NAN below two values. A handful of well-scaled values each time. */
static double sd_of(double k, double sum, double sq) {
    return k >= 2 ? sqrt(fmax(0, (sq - sum * sum / k) / (k - 1))) : NAN;
}

static rep_stat *find(rep_stat *s, int n, const char *ds, const char *spec) {
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].dataset, ds) == 0 && strcmp(s[i].spec, spec) == 0) return &s[i];
    return NULL;
}

/* Where greedy's samples for run_id live: the run itself, else its baseline run, else 0. */
static int greedy_run(sqlite3 *h, int64_t run_id, int64_t *out, char *err) {
    sqlite3_stmt *st;
    if (prep(h,
             "SELECT CASE WHEN EXISTS (SELECT 1 FROM samples WHERE run_id = ?1 AND "
             "decoder = 'greedy') THEN ?1 ELSE (SELECT baseline_run_id FROM runs WHERE id = ?1) "
             "END",
             &st, err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    *out = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return 0;
}

/* Query 1: per (ds, spec), in the run's order (datasets by first sample, greedy first): the
 * sample counts, the derived sums, then one aggregate per framework counter, generated from
 * the list (stats/stats.h), so a counter added there arrives here without an edit. */
static const char TOTALS_HEAD[] =
    REP_SAMPLES_CTE ", dorder AS (SELECT ds, MIN(id) AS o FROM s GROUP BY ds) "
                    "SELECT s.ds, s.spec, MIN(s.decoder), COUNT(*), "
                    "COUNT(DISTINCT s.dataset || char(31) || s.sample_index), "
                    "COUNT(DISTINCT s.repeat), COALESCE(SUM(s.matched), 0), COUNT(s.matched)";
static const char TOTALS_TAIL[] = " FROM s JOIN dorder USING (ds) GROUP BY s.ds, s.spec "
                                  "ORDER BY MIN(dorder.o), MIN(s.decoder) <> 'greedy', MIN(s.id)";

static int collect_totals(sqlite3 *h, int64_t run_id, int per_ds, rep_stat **out, int *n,
                          char *err) {
    char sql[sizeof TOTALS_HEAD + sizeof TOTALS_TAIL + (STAT_N_COUNTERS + STAT_N_DERIVED) * 64];
    int len = snprintf(sql, sizeof sql, "%s", TOTALS_HEAD);
    for (int k = 0; k < STAT_N_DERIVED; k++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, ", SUM(%s)", stat_derived[k].sql);
    for (int k = 0; k < STAT_N_COUNTERS; k++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, ", %s(s.%s)",
                        stat_agg_sql(stat_counters[k].agg), stat_counters[k].name);
    snprintf(sql + len, sizeof sql - (size_t)len, "%s", TOTALS_TAIL);
    sqlite3_stmt *st;
    if (prep_run(h, sql, run_id, per_ds, 0, &st, err) != 0) return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        rep_stat *grown = realloc(*out, (size_t)(*n + 1) * sizeof **out);
        if (!grown) {
            sqlite3_finalize(st);
            return err_set(err, "report: out of memory");
        }
        *out = grown;
        rep_stat *r = &(*out)[(*n)++];
        memset(r, 0, sizeof *r);
        int col = 0;
        r->run_id = run_id;
        r->dataset = col_dup(st, col++);
        r->spec = col_dup(st, col++);
        r->decoder = col_dup(st, col++);
        r->n_samples = sqlite3_column_int(st, col++);
        r->n_prompts = sqlite3_column_int(st, col++);
        r->n_repeats = sqlite3_column_int(st, col++);
        r->matched = sqlite3_column_int(st, col++);
        r->checked = sqlite3_column_int(st, col++);
        for (int k = 0; k < STAT_N_DERIVED; k++) r->d[k] = sqlite3_column_double(st, col++);
        for (int k = 0; k < STAT_N_COUNTERS; k++) r->c[k] = sqlite3_column_double(st, col++);
        r->tps_dec = r->tps_dec_sd = r->tps_e2e = r->tps_e2e_sd = NAN;
        r->speedup_dec = r->speedup_e2e = r->speedup_sb = NAN;
        r->speedup_dec_sd = r->speedup_e2e_sd = r->speedup_prompt_sd = NAN;
        r->speedup_prompt_sd_dec = NAN;
        if (!r->dataset || !r->spec || !r->decoder) {
            sqlite3_finalize(st);
            return err_set(err, "report: out of memory");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return err_set(err, "report: reading samples failed (%d)", rc);
    return 0;
}

/* Query 2: tok/s of each repeat (ratio of totals within the repeat), then mean and sd.
 * Decode-only: tokens after the prompt pass over the time after it (STAT_DERIVED);
 * end-to-end: every token over the whole generate call. */
static int collect_repeats(sqlite3 *h, int64_t run_id, int per_ds, rep_stat *s, int n, char *err) {
    char sql[1024];
    snprintf(sql, sizeof sql,
             REP_SAMPLES_CTE "SELECT ds, spec, repeat, SUM(%s), SUM(%s), SUM(new_tokens), "
                             "SUM(t_total) FROM s GROUP BY ds, spec, repeat",
             stat_derived[STAT_D_decode_tokens].sql, stat_derived[STAT_D_t_decode].sql);
    sqlite3_stmt *st;
    if (prep_run(h, sql, run_id, per_ds, 0, &st, err) != 0) return -1;
    /* Sum and sum of squares per row: a handful of repeats of well-scaled values. */
    double *acc = calloc((size_t)n * 5, sizeof *acc); /* count, sum_d, sq_d, sum_e, sq_e */
    if (!acc) {
        sqlite3_finalize(st);
        return err_set(err, "report: out of memory");
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        rep_stat *r = find(s, n, (const char *)sqlite3_column_text(st, 0),
                           (const char *)sqlite3_column_text(st, 1));
        if (!r) continue;
        double tok_d = sqlite3_column_double(st, 3), td = sqlite3_column_double(st, 4),
               tok_e = sqlite3_column_double(st, 5), te = sqlite3_column_double(st, 6);
        double *a = &acc[(r - s) * 5];
        double vd = td > 0 ? tok_d / td : NAN, ve = te > 0 ? tok_e / te : NAN;
        a[0] += 1;
        a[1] += vd;
        a[2] += vd * vd;
        a[3] += ve;
        a[4] += ve * ve;
    }
    sqlite3_finalize(st);
    for (int i = 0; i < n; i++) {
        double *a = &acc[i * 5], k = a[0];
        if (k < 1) continue;
        s[i].tps_dec = a[1] / k;
        s[i].tps_e2e = a[3] / k;
        s[i].tps_dec_sd = sd_of(k, a[1], a[2]);
        s[i].tps_e2e_sd = sd_of(k, a[3], a[4]);
    }
    free(acc);
    return 0;
}

/* Query 3: speed-up over greedy as a ratio of totals over the prompts both ran; each prompt's
 * time is its mean over repeats, so differing repeat counts do not weigh in. */
static int collect_speedups(sqlite3 *h, int64_t run_id, int per_ds, int64_t g_run, rep_stat *s,
                            int n, char *err) {
    char sql[2048];
    const char *td = stat_derived[STAT_D_t_decode].sql;
    snprintf(sql, sizeof sql,
             REP_SAMPLES_CTE
             ", d AS (SELECT ds, spec, dataset, sample_index, AVG(%s) AS td, AVG(t_total) AS te "
             "FROM s GROUP BY ds, spec, dataset, sample_index), "
             "g AS (SELECT dataset, sample_index, AVG(%s) AS td, AVG(t_total) AS te "
             "FROM samples WHERE run_id = ?3 AND decoder = 'greedy' "
             "GROUP BY dataset, sample_index) "
             "SELECT d.ds, d.spec, SUM(g.td), SUM(d.td), SUM(g.te), SUM(d.te), COUNT(*) "
             "FROM d JOIN g ON g.dataset = d.dataset AND g.sample_index = d.sample_index "
             "GROUP BY d.ds, d.spec",
             td, td);
    sqlite3_stmt *st;
    if (prep_run(h, sql, run_id, per_ds, g_run, &st, err) != 0) return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rep_stat *r = find(s, n, (const char *)sqlite3_column_text(st, 0),
                           (const char *)sqlite3_column_text(st, 1));
        if (!r) continue;
        double gd = sqlite3_column_double(st, 2), dd = sqlite3_column_double(st, 3);
        double ge = sqlite3_column_double(st, 4), de = sqlite3_column_double(st, 5);
        r->speedup_dec = dd > 0 ? gd / dd : NAN;
        r->speedup_e2e = de > 0 ? ge / de : NAN;
        r->n_common = sqlite3_column_int(st, 6);
        r->greedy_run = g_run;
    }
    sqlite3_finalize(st);
    return 0;
}

/* Query 3b: Spec-Bench's speed-up, as its evaluation/speed.py computes it
 * (hemingkx/Spec-Bench@fd2c1cd). A question's tok/s is the sum of its turns' new tokens over
 * the sum of their wall times (:27-30: both MT-Bench turns in one datapoint; turn t of record
 * i is stored at sample_index i + (t - 1) 10^6, schema.sql step 6); one run's speed-up is the
 * mean over its questions of the decoder's tok/s over the same mean of greedy's (:59-61); the
 * figure is the mean of the runs' speed-ups (get_mean_speedup, :98-116), run i of the decoder
 * against run i of the baseline (zip): here repeat r against greedy's repeat r, over the
 * questions both ran in it. Spec-Bench counts the baseline's tokens by re-tokenising its text
 * (:50-53); ours are the tokens it generated. */
static int collect_speedup_sb(sqlite3 *h, int64_t run_id, int per_ds, int64_t g_run, rep_stat *s,
                              int n, char *err) {
    static const char sql[] = REP_SAMPLES_CTE
        ", d AS (SELECT ds, spec, dataset, sample_index % 1000000 AS q, repeat, "
        "SUM(new_tokens) AS nt, SUM(t_total) AS te FROM s "
        "GROUP BY ds, spec, dataset, q, repeat), "
        "g AS (SELECT dataset, sample_index % 1000000 AS q, repeat, SUM(new_tokens) AS nt, "
        "SUM(t_total) AS te FROM samples WHERE run_id = ?3 AND decoder = 'greedy' "
        "GROUP BY dataset, q, repeat), "
        "r AS (SELECT d.ds, d.spec, d.repeat, AVG(d.nt / d.te) AS dt, AVG(g.nt / g.te) AS gt "
        "FROM d JOIN g ON g.dataset = d.dataset AND g.q = d.q AND g.repeat = d.repeat "
        "WHERE d.te > 0 AND g.te > 0 GROUP BY d.ds, d.spec, d.repeat) "
        "SELECT ds, spec, AVG(dt / gt) FROM r WHERE gt > 0 GROUP BY ds, spec";
    sqlite3_stmt *st;
    if (prep_run(h, sql, run_id, per_ds, g_run, &st, err) != 0) return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rep_stat *r = find(s, n, (const char *)sqlite3_column_text(st, 0),
                           (const char *)sqlite3_column_text(st, 1));
        if (r && sqlite3_column_type(st, 2) != SQLITE_NULL)
            r->speedup_sb = sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    return 0;
}

/* Query 4: the spread of the speed-ups. Over repeats: each repeat's ratio of totals against
 * greedy's same repeat (over the prompts both ran in it), then the sd of those ratios; over
 * prompts: each prompt's end-to-end speed-up (mean times over repeats), then their sd. */
static int collect_spread(sqlite3 *h, int64_t run_id, int per_ds, int64_t g_run, rep_stat *s, int n,
                          char *err) {
    const char *td = stat_derived[STAT_D_t_decode].sql;
    char sql[2048];
    snprintf(sql, sizeof sql,
             REP_SAMPLES_CTE
             ", g AS (SELECT dataset, sample_index, repeat, %s AS td, t_total AS te FROM samples "
             "WHERE run_id = ?3 AND decoder = 'greedy') "
             "SELECT s.ds, s.spec, s.repeat, SUM(g.td), SUM(%s), SUM(g.te), SUM(s.t_total) "
             "FROM s JOIN g ON g.dataset = s.dataset AND g.sample_index = s.sample_index AND "
             "g.repeat = s.repeat GROUP BY s.ds, s.spec, s.repeat",
             td, td);
    sqlite3_stmt *st;
    double *acc = calloc((size_t)n * 5, sizeof *acc); /* count, sum/sq decode, sum/sq e2e */
    if (!acc) return err_set(err, "report: out of memory");
    if (prep_run(h, sql, run_id, per_ds, g_run, &st, err) != 0) {
        free(acc);
        return -1;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        rep_stat *r = find(s, n, (const char *)sqlite3_column_text(st, 0),
                           (const char *)sqlite3_column_text(st, 1));
        double dd = sqlite3_column_double(st, 4), de = sqlite3_column_double(st, 6);
        if (!r || dd <= 0 || de <= 0) continue;
        double vd = sqlite3_column_double(st, 3) / dd, ve = sqlite3_column_double(st, 5) / de;
        double *a = &acc[(r - s) * 5];
        a[0] += 1, a[1] += vd, a[2] += vd * vd, a[3] += ve, a[4] += ve * ve;
    }
    sqlite3_finalize(st);
    for (int i = 0; i < n; i++) {
        double *a = &acc[i * 5];
        s[i].speedup_dec_sd = sd_of(a[0], a[1], a[2]);
        s[i].speedup_e2e_sd = sd_of(a[0], a[3], a[4]);
    }
    memset(acc, 0, (size_t)n * 5 * sizeof *acc);
    snprintf(sql, sizeof sql,
             REP_SAMPLES_CTE
             ", d AS (SELECT ds, spec, dataset, sample_index, AVG(t_total) AS te, AVG(%s) AS td "
             "FROM s GROUP BY ds, spec, dataset, sample_index), "
             "g AS (SELECT dataset, sample_index, AVG(t_total) AS te, AVG(%s) AS td FROM "
             "samples WHERE run_id = ?3 AND decoder = 'greedy' GROUP BY dataset, sample_index) "
             "SELECT d.ds, d.spec, g.te / d.te, CASE WHEN d.td > 0 THEN g.td / d.td END FROM d "
             "JOIN g ON g.dataset = d.dataset AND g.sample_index = d.sample_index WHERE d.te > 0",
             td, td);
    if (prep_run(h, sql, run_id, per_ds, g_run, &st, err) != 0) {
        free(acc);
        return -1;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        rep_stat *r = find(s, n, (const char *)sqlite3_column_text(st, 0),
                           (const char *)sqlite3_column_text(st, 1));
        if (!r) continue;
        double v = sqlite3_column_double(st, 2), *a = &acc[(r - s) * 5];
        a[0] += 1, a[1] += v, a[2] += v * v;
        if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
            double w = sqlite3_column_double(st, 3);
            a[3] += w, a[4] += w * w;
        }
    }
    sqlite3_finalize(st);
    for (int i = 0; i < n; i++) {
        double *a = &acc[i * 5];
        s[i].speedup_prompt_sd = sd_of(a[0], a[1], a[2]);
        s[i].speedup_prompt_sd_dec = sd_of(a[0], a[3], a[4]);
    }
    free(acc);
    return 0;
}

int rep_collect(db *d, int64_t run_id, int all_rows, rep_stat **out, int *n, char *err) {
    sqlite3 *h = db_sqlite(d);
    *out = NULL;
    *n = 0;
    int64_t g_run;
    if (greedy_run(h, run_id, &g_run, err) != 0) return -1;
    for (int pass = 0; pass < 2; pass++) {
        int per_ds = pass == 0, first = *n;
        if (pass == 1) {
            /* An "all datasets" row only adds information with two or more datasets. */
            int n_ds = 0;
            for (int i = 0; i < *n; i++) {
                int seen = 0;
                for (int j = 0; j < i && !seen; j++)
                    seen = strcmp((*out)[i].dataset, (*out)[j].dataset) == 0;
                n_ds += !seen;
            }
            if (!all_rows || n_ds < 2) break;
        }
        if (collect_totals(h, run_id, per_ds, out, n, err) != 0 ||
            collect_repeats(h, run_id, per_ds, *out + first, *n - first, err) != 0 ||
            (g_run &&
             (collect_speedups(h, run_id, per_ds, g_run, *out + first, *n - first, err) != 0 ||
              collect_speedup_sb(h, run_id, per_ds, g_run, *out + first, *n - first, err) != 0 ||
              collect_spread(h, run_id, per_ds, g_run, *out + first, *n - first, err) != 0))) {
            rep_stats_free(*out, *n);
            *out = NULL;
            *n = 0;
            return -1;
        }
    }
    return 0;
}

int rep_collect_runs(db *d, const int64_t *ids, int n_ids, int all_rows, rep_stat **out, int *n,
                     char *err) {
    rep_stat *all = NULL;
    int n_all = 0;
    *out = NULL, *n = 0;
    for (int i = 0; i < n_ids; i++) {
        rep_stat *s;
        int m;
        if (rep_collect(d, ids[i], all_rows, &s, &m, err) != 0) {
            rep_stats_free(all, n_all);
            return -1;
        }
        rep_stat *grown = realloc(all, (size_t)(n_all + m) * sizeof *all);
        if (!grown) {
            rep_stats_free(s, m);
            rep_stats_free(all, n_all);
            return err_set(err, "report: out of memory");
        }
        all = grown;
        memcpy(all + n_all, s, (size_t)m * sizeof *s);
        n_all += m;
        free(s); /* the strings moved into all */
    }
    *out = all, *n = n_all;
    return 0;
}

void rep_stats_free(rep_stat *s, int n) {
    for (int i = 0; i < n; i++) {
        free(s[i].label);
        free(s[i].dataset);
        free(s[i].decoder);
        free(s[i].spec);
    }
    free(s);
}

static double ratio(double a, double b) {
    return b > 0 ? a / b : NAN;
}
double rep_tokens_per_step(const rep_stat *s) {
    return ratio(s->c[STAT_new_tokens], s->c[STAT_target_steps]);
}
double rep_accepted_len(const rep_stat *s) {
    return ratio(s->c[STAT_accepted], s->c[STAT_verify_steps]);
}
double rep_rows_per_step(const rep_stat *s) {
    return ratio(s->c[STAT_target_rows], s->d[STAT_D_decode_steps]);
}
double rep_book_share(const rep_stat *s) {
    return ratio(s->c[STAT_t_book], s->c[STAT_t_total]);
}
double rep_draft_share(const rep_stat *s) {
    return ratio(s->c[STAT_t_draft], s->c[STAT_t_total]);
}
double rep_exact_share(const rep_stat *s) {
    return ratio((double)s->matched, (double)s->checked);
}

int rep_resolve_runs(db *d, const int64_t *run_ids, int n_runs, int need_cost, int64_t **ids,
                     int *n, char *err) {
    *ids = NULL;
    *n = 0;
    if (!run_ids || n_runs <= 0) {
        int64_t id;
        char inner[ERR_LEN];
        if (db_latest_run(d, DB_STATUS_MASK(DB_COMPLETE), !need_cost, need_cost, &id, inner) != 0)
            return err_set(err, "report: %s (give a run id to report another run)",
                           inner + strlen("db_latest_run: "));
        *ids = malloc(sizeof **ids);
        if (!*ids) return err_set(err, "report: out of memory");
        (*ids)[0] = id;
        *n = 1;
        return 0;
    }
    sqlite3_stmt *st;
    if (prep(db_sqlite(d),
             need_cost ? "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1), "
                         "EXISTS (SELECT 1 FROM cost WHERE run_id = ?1)"
                       : "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?1), "
                         "EXISTS (SELECT 1 FROM samples WHERE run_id = ?1)",
             &st, err) != 0)
        return -1;
    *ids = malloc((size_t)n_runs * sizeof **ids);
    if (!*ids) {
        sqlite3_finalize(st);
        return err_set(err, "report: out of memory");
    }
    for (int i = 0; i < n_runs; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, run_ids[i]);
        int found = 0, has = 0;
        if (sqlite3_step(st) == SQLITE_ROW) {
            found = sqlite3_column_int(st, 0);
            has = sqlite3_column_int(st, 1);
        }
        if (!found || !has) {
            sqlite3_finalize(st);
            free(*ids);
            *ids = NULL;
            return err_set(err, "report: run %" PRId64 " %s in %s", run_ids[i],
                           !found      ? "does not exist"
                           : need_cost ? "has no cost points"
                                       : "has no samples",
                           db_path(d));
        }
        (*ids)[i] = run_ids[i];
    }
    sqlite3_finalize(st);
    *n = n_runs;
    return 0;
}

int rep_run_note(db *d, int64_t run_id, char *out, size_t n, char *err) {
    sqlite3_stmt *st;
    if (prep(db_sqlite(d),
             "SELECT r.status, COALESCE(r.label, ''), COALESCE(r.model_path, '?'), "
             "COALESCE('sha256 ' || substr(r.model_sha256, 1, 16), 'hash ' || r.model_hash, '?')"
             " || COALESCE(', shard ' || r.shard, ''), "
             "COALESCE(r.datasets, '?'), COALESCE(r.max_new, 0), "
             "COALESCE(r.repeats, 0), COALESCE(r.threads, 0), COALESCE(r.kernels, '?'), "
             "COALESCE(substr(e.git_commit, 1, 10), '?'), COALESCE(e.git_dirty, 0), "
             "COALESCE(e.cpu_model, '?'), r.started, r.baseline_run_id, "
             "CASE WHEN r.sampling = 'greedy' THEN '' ELSE ', ' || r.sampling || ' sampling (T=' "
             "|| r.temperature || ', top-k=' || r.top_k || ', top-p=' || r.top_p || ', seed=' || "
             "r.sampling_seed || ')' END || CASE WHEN r.kv_type = 'f32' THEN '' ELSE ', KV cache ' "
             "|| r.kv_type END "
             "FROM runs r LEFT JOIN environments e ON e.id = r.env_id WHERE r.id = ?",
             &st, err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return err_set(err, "report: run %" PRId64 " does not exist", run_id);
    }
#define T(i) ((const char *)sqlite3_column_text(st, i))
    const char *label = T(1);
    char base[48] = "";
    if (sqlite3_column_type(st, 13) != SQLITE_NULL)
        snprintf(base, sizeof base, ", greedy baseline from run %lld",
                 (long long)sqlite3_column_int64(st, 13));
    snprintf(out, n,
             "Run %" PRId64 " (%s%s%s%s): model %s [%s], datasets %s, max_new %d, %d repeat(s), "
             "%d thread(s), kernels %s%s, commit %s%s, %s, started %s%s",
             run_id, T(0), label[0] ? ", '" : "", label, label[0] ? "'" : "", T(2), T(3), T(4),
             sqlite3_column_int(st, 5), sqlite3_column_int(st, 6), sqlite3_column_int(st, 7), T(8),
             T(14), T(9), sqlite3_column_int(st, 10) ? "+dirty" : "", T(11), T(12), base);
#undef T
    sqlite3_finalize(st);
    return 0;
}

void rep_label(const char *spec, const char *const *defaults, int n, char *out, size_t len) {
    size_t name_len = strcspn(spec, ":");
    const char *def = NULL;
    for (int i = 0; i < n && !def; i++)
        if (!strncmp(defaults[i], spec, name_len) &&
            (defaults[i][name_len] == ':' || defaults[i][name_len] == '\0'))
            def = defaults[i];
    if (!def) {
        snprintf(out, len, "%s", spec);
        return;
    }
    enum { MAXK = 64 };
    char b1[1024], b2[1024], *k1[MAXK], *v1[MAXK], *k2[MAXK], *v2[MAXK];
    int n1 = rep_spec_params(spec, b1, sizeof b1, k1, v1, MAXK),
        n2 = rep_spec_params(def, b2, sizeof b2, k2, v2, MAXK);
    size_t off = (size_t)snprintf(out, len, "%.*s", (int)name_len, spec);
    int first = 1;
    for (int i = 0; i < n1 && off < len; i++) {
        int same = 0;
        for (int j = 0; j < n2 && !same; j++) same = !strcmp(k1[i], k2[j]) && !strcmp(v1[i], v2[j]);
        if (same) continue;
        off += (size_t)snprintf(out + off, len - off, "%c%s=%s", first ? ':' : ',', k1[i], v1[i]);
        first = 0;
    }
}

/* Whether spec names decoder name (its text up to ':' is exactly name). */
static int same_decoder(const char *spec, const char *name, size_t name_len) {
    return !strncmp(spec, name, name_len) && (spec[name_len] == ':' || spec[name_len] == '\0');
}

void rep_label_among(const char *spec, const char *const *specs, int n, char *out, size_t len) {
    enum { MAXK = 64 };
    size_t name_len = strcspn(spec, ":");
    char b1[1024], *k1[MAXK], *v1[MAXK];
    int n1 = rep_spec_params(spec, b1, sizeof b1, k1, v1, MAXK);
    size_t off = (size_t)snprintf(out, len, "%.*s", (int)name_len, spec);
    int first = 1;
    for (int i = 0; i < n1 && off < len; i++) {
        /* shown when another spec of the decoder gives it another value or leaves it out (a
         * quiet parameter at its default: decoders/decoder.h) */
        int varies = 0;
        for (int j = 0; j < n && !varies; j++) {
            if (!specs[j] || !same_decoder(specs[j], spec, name_len) || !strcmp(specs[j], spec))
                continue;
            char b2[1024], *k2[MAXK], *v2[MAXK];
            int n2 = rep_spec_params(specs[j], b2, sizeof b2, k2, v2, MAXK), has = 0;
            for (int q = 0; q < n2 && !has; q++)
                if (!strcmp(k2[q], k1[i])) has = 1, varies = strcmp(v2[q], v1[i]) != 0;
            if (!has) varies = 1;
        }
        if (!varies) continue;
        off += (size_t)snprintf(out + off, len - off, "%c%s=%s", first ? ':' : ',', k1[i], v1[i]);
        first = 0;
    }
}

void rep_label_known(const char *spec, const char *const *specs, int n, const char *const *defaults,
                     int n_defaults, char *out, size_t len) {
    size_t name_len = strcspn(spec, ":");
    int known = 0;
    for (int i = 0; defaults && i < n_defaults && !known; i++)
        known = same_decoder(defaults[i], spec, name_len);
    if (known)
        rep_label_among(spec, specs, n, out, len);
    else
        snprintf(out, len, "%s", spec);
}

int rep_labels(rep_stat *s, int n, const char *const *defaults, int n_defaults) {
    const char **specs = malloc(sizeof *specs * (size_t)(n ? n : 1));
    if (!specs) return -1;
    for (int i = 0; i < n; i++) specs[i] = s[i].spec;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char lab[1024];
        rep_label_known(s[i].spec, specs, n, defaults, defaults ? n_defaults : 0, lab, sizeof lab);
        free(s[i].label);
        if (!(s[i].label = strdup(lab))) rc = -1;
    }
    free(specs);
    return rc;
}

int rep_spec_params(const char *spec, char *buf, size_t bufn, char **keys, char **vals, int max) {
    snprintf(buf, bufn, "%s", spec);
    char *p = strchr(buf, ':');
    if (!p) return 0;
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(p + 1, ",", &save); tok && n < max;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        keys[n] = tok;
        vals[n] = eq ? (*eq = 0, eq + 1) : (char *)"";
        n++;
    }
    return n;
}
