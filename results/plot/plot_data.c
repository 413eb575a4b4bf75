/* plot_data.c: the tab-separated data files the gnuplot scripts in plots/ read.
 *
 * Tabs, because decoder specs contain commas and spaces; "?" marks a missing value (the
 * scripts say `set datafile missing "?"`). Every file starts with '#' comment lines saying
 * what was selected and the units, so a data file on its own still explains itself. The
 * figures come from rep_collect(), the same numbers the reports print. */
#include "results/plot/plot_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "results/report/llama_csv.h"
#include "util/text_escape.h"
#include "util/err.h"
#include "util/file.h"

/* One name per kind: NAME.tsv read by plots/NAME.gp, which draws NAME.png and NAME.svg. */
static const char *const NAMES[REPORT_PLOT_KINDS] = {"speedup",  "scaling", "accept",
                                                     "cost",     "history", "position",
                                                     "tradeoff", "heatmap", "ablation",
                                                     "batch"};

const char *report_plot_name(report_plot_kind k) {
    return (unsigned)k < REPORT_PLOT_KINDS ? NAMES[k] : "?";
}
const char *report_plot_file(report_plot_kind k) {
    static char files[REPORT_PLOT_KINDS][32];
    if ((unsigned)k >= REPORT_PLOT_KINDS) return "?";
    snprintf(files[k], sizeof files[k], "%s.tsv", NAMES[k]);
    return files[k];
}
const char *report_plot_script(report_plot_kind k) {
    static char scripts[REPORT_PLOT_KINDS][32];
    if ((unsigned)k >= REPORT_PLOT_KINDS) return "?";
    snprintf(scripts[k], sizeof scripts[k], "%s.gp", NAMES[k]);
    return scripts[k];
}

#define put_num plot_num
#define MAXP 32 /* parameters of a spec a label looks at */
/* ---- run selection ------------------------------------------------------------------------ */

/* ---- (a) speed-up bars -------------------------------------------------------------------- */

static int write_speedup(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                         char *err) {
    rep_stat *all;
    int n;
    if (rep_collect_runs(d, ids, n_ids, 0, &all, &n, err) != 0) return -1;
    /* Columns: distinct non-greedy specs, or (spec, run) when several runs hold a spec (each
     * its own bars, "(run N)" in the legend, rather than one run's values hiding the other's);
     * rows: datasets. Greedy is the y = 1 line. */
    char **specs = calloc((size_t)n + 1, sizeof *specs);
    int64_t *runs = calloc((size_t)n + 1, sizeof *runs);
    const char **ds = calloc((size_t)n + 1, sizeof *ds);
    int n_specs = 0, n_ds = 0;
    for (int i = 0; specs && runs && ds && i < n; i++) {
        int seen = 0;
        for (int j = 0; j < n_ds && !seen; j++) seen = !strcmp(ds[j], all[i].dataset);
        if (!seen) ds[n_ds++] = all[i].dataset;
        if (!strcmp(all[i].decoder, "greedy")) continue;
        int in_other_run = 0;
        for (int j = 0; j < n && !in_other_run; j++)
            in_other_run = all[j].run_id != all[i].run_id && !strcmp(all[j].spec, all[i].spec);
        int64_t run = in_other_run ? all[i].run_id : 0;
        seen = 0;
        for (int j = 0; j < n_specs && !seen; j++)
            seen = !strcmp(specs[j], all[i].spec) && runs[j] == run;
        if (!seen) specs[n_specs] = all[i].spec, runs[n_specs++] = run;
    }
    int rc = 0;
    if (!specs || !runs || !ds)
        rc = err_set(err, "report_plot_data: out of memory");
    else if (n_specs == 0)
        rc = err_set(err, "report_plot_data: no non-greedy decoder to plot");
    if (rc == 0) {
        fprintf(f,
                "# speed-up over greedy (decode-only, ratio of total times); rows: datasets, "
                "columns: per decoder the speed-up and its error bar (%s; 0 = none)\ndataset",
                plot_errors_what(o));
        for (int j = 0; j < n_specs; j++) {
            char lab[512];
            plot_label(o, specs, n_specs, j, lab, sizeof lab);
            if (runs[j]) {
                size_t l = strlen(lab);
                snprintf(lab + l, sizeof lab - l, " (run %" PRId64 ")", runs[j]);
            }
            fputc('\t', f);
            plot_text(f, lab);
            fputs("\terror", f);
        }
        fputc('\n', f);
        for (int k = 0; k < n_ds; k++) {
            plot_text(f, ds[k]);
            for (int j = 0; j < n_specs; j++) {
                double v = NAN, e = 0;
                for (int i = 0; i < n; i++)
                    if (!strcmp(all[i].dataset, ds[k]) && !strcmp(all[i].spec, specs[j]) &&
                        (!runs[j] || all[i].run_id == runs[j])) {
                        v = all[i].speedup_dec;
                        e = plot_error(o, &all[i], 0);
                    }
                put_num(f, v);
                put_num(f, e);
            }
            fputc('\n', f);
        }
    }
    free(specs);
    free(runs);
    free(ds);
    rep_stats_free(all, n);
    return rc;
}

/* Legend of a scaling series ("N=5,G=W,pool=lru,..."): only the pairs not shared by every
 * series; "lookahead" if all series are the same. */
static void series_label(const char *series, const char **all, int n, char *out, size_t len) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", series);
    size_t off = 0;
    out[0] = 0;
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        int everywhere = 1;
        size_t l = strlen(kv);
        for (int i = 0; i < n && everywhere; i++) {
            const char *p = all[i];
            int found = 0;
            while (!found && p && *p) {
                found = !strncmp(p, kv, l) && (p[l] == ',' || p[l] == 0);
                p = strchr(p, ',');
                if (p) p++;
            }
            everywhere = found;
        }
        if (everywhere || off + l + 2 >= len) continue;
        if (off) out[off++] = ',';
        memcpy(out + off, kv, l + 1);
        off += l;
    }
    if (!off) snprintf(out, len, "lookahead");
}

/* ---- (b) lookahead scaling law ------------------------------------------------------------
 * Target steps needed per prompt versus window size W, one series per setting of the other
 * parameters (N, and G unless G = W). The lookahead paper's scaling law: for a fixed N the
 * steps fall roughly linearly in log W, so the scripts put W on a log axis. */

/* A sweep's points hold no greedy samples: greedy's mean steps per prompt over the same
 * prompts, from the run's baseline run (NAN if there is none). */
static double baseline_greedy_steps(db *d, int64_t run) {
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT AVG(g.target_steps) FROM samples g WHERE g.run_id = (SELECT "
                           "baseline_run_id FROM runs WHERE id = ?1) AND g.decoder = 'greedy' "
                           "AND EXISTS (SELECT 1 FROM samples s WHERE s.run_id = ?1 AND "
                           "s.dataset = g.dataset AND s.sample_index = g.sample_index)",
                           -1, &st, NULL) != SQLITE_OK)
        return v;
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int write_scaling(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                         char *err) {
    (void)o;
    rep_stat *s;
    int n;
    if (plot_per_spec(d, ids, n_ids, &s, &n, err) != 0) return -1;
    typedef struct {
        char series[512];
        double w, steps;
    } point;
    point *pts = calloc((size_t)n + 1, sizeof *pts);
    int n_pts = 0;
    double greedy_steps = NAN, w_min = INFINITY, w_max = -INFINITY;
    for (int i = 0; pts && i < n; i++) {
        double per_prompt = s[i].n_samples ? s[i].c[STAT_target_steps] / s[i].n_samples : NAN;
        if (!strcmp(s[i].decoder, "greedy")) greedy_steps = per_prompt;
        if (strcmp(s[i].decoder, "lookahead")) continue;
        char buf[1024], *k[MAXP], *v[MAXP];
        int np = rep_spec_params(s[i].spec, buf, sizeof buf, k, v, MAXP);
        const char *w = NULL;
        for (int j = 0; j < np; j++)
            if (!strcmp(k[j], "W")) w = v[j];
        if (!w) continue;
        point *p = &pts[n_pts++];
        p->w = atof(w);
        p->steps = per_prompt;
        if (p->w < w_min) w_min = p->w;
        if (p->w > w_max) w_max = p->w;
        int off = 0;
        for (int j = 0; j < np; j++) {
            if (!strcmp(k[j], "W")) continue;
            const char *val = !strcmp(k[j], "G") && !strcmp(v[j], w) ? "W" : v[j];
            off += snprintf(p->series + off, sizeof p->series - (size_t)off, "%s%s=%s",
                            off ? "," : "", k[j], val);
            if ((size_t)off >= sizeof p->series) break;
        }
    }
    int rc = 0;
    if (!pts)
        rc = err_set(err, "report_plot_data: out of memory");
    else if (n_pts == 0)
        rc = err_set(err, "report_plot_data: no lookahead samples with a W");
    if (rc == 0 && isnan(greedy_steps)) greedy_steps = baseline_greedy_steps(d, ids[0]);
    if (rc == 0) {
        fprintf(f, "# lookahead: mean target steps (forward passes) per prompt versus W; one "
                   "block per setting of the other parameters, greedy last\n");
        /* Series in order of first appearance, points sorted by W within a series. */
        int *done = calloc((size_t)n_pts, sizeof *done);
        const char **all_series = calloc((size_t)n_pts, sizeof *all_series);
        for (int i = 0; all_series && i < n_pts; i++) all_series[i] = pts[i].series;
        if (!all_series) {
            free(done);
            done = NULL;
        }
        for (int i = 0; done && i < n_pts; i++) {
            if (done[i]) continue;
            char lab[512];
            series_label(pts[i].series, all_series, n_pts, lab, sizeof lab);
            fputs("W\t", f);
            plot_text(f, lab);
            fputc('\n', f);
            for (;;) {
                int best = -1;
                for (int j = i; j < n_pts; j++)
                    if (!done[j] && !strcmp(pts[j].series, pts[i].series) &&
                        (best < 0 || pts[j].w < pts[best].w))
                        best = j;
                if (best < 0) break;
                done[best] = 1;
                fprintf(f, "%g", pts[best].w);
                put_num(f, pts[best].steps);
                fputc('\n', f);
            }
            fputs("\n\n", f);
        }
        free(done);
        free(all_series);
        /* Always present (the script draws the last block dashed), empty when unknown. */
        fprintf(f, "W\tgreedy%s\n%g", isnan(greedy_steps) ? " (not in these runs)" : "", w_min);
        put_num(f, greedy_steps);
        fprintf(f, "\n%g", w_max);
        put_num(f, greedy_steps);
        fputc('\n', f);
    }
    free(pts);
    rep_stats_free(s, n);
    return rc;
}

/* ---- (c) accepted-length histograms ------------------------------------------------------- */

static int write_accept(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                        char *err) {
    sqlite3 *h = db_sqlite(d);
    /* Specs with verification steps, in run order, then their accept histogram. */
    char **specs = NULL;
    int n_specs = 0, max_k = 0, rc = 0;
    double *counts = NULL; /* n_specs x (DEC_HIST_MAX + 1) */
    sqlite3_stmt *st;
    const char *sql = "SELECT s.spec, h.k, SUM(h.count) FROM histograms h JOIN samples s ON "
                      "s.id = h.sample_id WHERE s.run_id = ? AND h.kind = 'accept' "
                      "GROUP BY s.spec, h.k ORDER BY MIN(s.id), h.k";
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report_plot_data: %s", db_errmsg(h));
    for (int r = 0; rc == 0 && r < n_ids; r++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[r]);
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
            const char *spec = (const char *)sqlite3_column_text(st, 0);
            int k = sqlite3_column_int(st, 1);
            if (k < 0 || k > DEC_HIST_MAX) continue;
            int j = 0;
            while (j < n_specs && strcmp(specs[j], spec)) j++;
            if (j == n_specs) {
                char **g = realloc(specs, (size_t)(n_specs + 1) * sizeof *g);
                double *c =
                    g ? realloc(counts, (size_t)(n_specs + 1) * (DEC_HIST_MAX + 1) * sizeof *c)
                      : NULL;
                if (g) specs = g;
                if (c) counts = c;
                if (!g || !c || !(specs[n_specs] = strdup(spec))) {
                    rc = err_set(err, "report_plot_data: out of memory");
                    break;
                }
                memset(counts + (size_t)n_specs * (DEC_HIST_MAX + 1), 0,
                       (DEC_HIST_MAX + 1) * sizeof *counts);
                n_specs++;
            }
            counts[(size_t)j * (DEC_HIST_MAX + 1) + (size_t)k] += sqlite3_column_double(st, 2);
            if (k > max_k) max_k = k;
        }
    }
    sqlite3_finalize(st);
    if (rc == 0 && n_specs == 0)
        rc = err_set(err, "report_plot_data: no accept histograms (only greedy?) in the runs");
    if (rc == 0) {
        fprintf(f, "# share of verification steps (%%) that accepted k drafted tokens (bonus "
                   "token not counted)\nk");
        plot_header(f, o, specs, n_specs, "");
        for (int k = 0; k <= max_k; k++) {
            fprintf(f, "%d", k);
            for (int j = 0; j < n_specs; j++) {
                double tot = 0, *c = counts + (size_t)j * (DEC_HIST_MAX + 1);
                for (int q = 0; q <= DEC_HIST_MAX; q++) tot += c[q];
                put_num(f, tot > 0 ? 100 * c[k] / tot : NAN);
            }
            fputc('\n', f);
        }
    }
    for (int j = 0; j < n_specs; j++) free(specs[j]);
    free(specs);
    free(counts);
    return rc;
}

/* ---- (d) cost curve ------------------------------------------------------------------------
 * A grid curve (results/report/cost.h) is drawn at its first context with every row's logits (what
 * a curve measured before version 5 holds, so figures of both kinds compare). Columns: rows T, ms
 * per pass, GFLOP/s, GB/s, the bandwidth bound (weight bytes / memory bandwidth: no pass can be
 * faster, and at T = 1 a pass should be close to it) and T x t(1) (what T separate one-row passes
 * would cost: the gap to it is the batching gain). The bandwidth is the measured memory bandwidth
 * when stored, else the best GB/s any pass reached (then the bound is optimistic only by the
 * measurement's own error). */
static int write_cost(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                      char *err) {
    (void)n_ids;
    llama_points ll = {0};
    if (o && o->llama_csv && llama_csv_read(o->llama_csv, &ll, err)) return -1;
    sqlite3 *h = db_sqlite(d);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h,
                           "WITH c AS (SELECT * FROM cost WHERE run_id = ?1 AND logit_rows = "
                           "rows AND (context IS NULL OR context = (SELECT MIN(context) FROM "
                           "cost WHERE run_id = ?1))) "
                           "SELECT rows, seconds, gflops, gbps, weight_bytes, mem_gbps, "
                           "(SELECT MAX(gbps) FROM c), "
                           "(SELECT seconds FROM c ORDER BY rows LIMIT 1), "
                           "(SELECT MIN(rows) FROM c) "
                           "FROM c ORDER BY rows",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report_plot_data: %s", db_errmsg(h));
    sqlite3_bind_int64(st, 1, ids[0]);
    char note[1536];
    if (rep_run_note(d, ids[0], note, sizeof note, err) != 0) {
        sqlite3_finalize(st);
        return -1;
    }
    fputs("# forward-pass latency versus rows per pass. ", f);
    plot_text(f, note);
    if (ll.n) {
        fputs(" llama_ms: llama-bench, ", f);
        plot_text(f, o->llama_csv);
    }
    fputc('\n', f);
    fprintf(f, "rows\tms_per_pass\tgflops\tgbps\tbandwidth_bound_ms\tlinear_ms\tllama_ms\n");
    int n = 0, li = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        double rows = sqlite3_column_double(st, 0), secs = sqlite3_column_double(st, 1);
        double wb = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
        double bw = sqlite3_column_type(st, 5) != SQLITE_NULL   ? sqlite3_column_double(st, 5)
                    : sqlite3_column_type(st, 6) != SQLITE_NULL ? sqlite3_column_double(st, 6)
                                                                : NAN;
        double t1 = sqlite3_column_double(st, 7), r0 = sqlite3_column_double(st, 8);
        for (; li < ll.n && ll.rows[li] < rows; li++) { /* llama-bench sizes the run lacks */
            fprintf(f, "%d\t?\t?\t?\t?\t?", ll.rows[li]);
            put_num(f, ll.ms[li]);
            fputc('\n', f);
        }
        fprintf(f, "%g", rows);
        put_num(f, 1e3 * secs);
        put_num(f, sqlite3_column_type(st, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 2));
        put_num(f, sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3));
        put_num(f, bw > 0 ? 1e3 * wb / (bw * 1e9) : NAN);
        put_num(f, r0 == 1 ? 1e3 * t1 * rows : NAN);
        put_num(f, li < ll.n && ll.rows[li] == rows ? ll.ms[li++] : NAN);
        fputc('\n', f);
        n++;
    }
    sqlite3_finalize(st);
    for (; n && li < ll.n; li++) {
        fprintf(f, "%d\t?\t?\t?\t?\t?", ll.rows[li]);
        put_num(f, ll.ms[li]);
        fputc('\n', f);
    }
    return n ? 0 : err_set(err, "report_plot_data: run %" PRId64 " has no cost points", ids[0]);
}

/* ---- (e) tok/s history over commits ------------------------------------------------------- */

/* Default: every complete run with samples that ran the same model, datasets and max_new as
 * the latest one, so that the line only moves when the code (or machine) does. */
static int history_runs(db *d, int64_t **ids, int *n, char *err) {
    int64_t *latest;
    int one;
    if (rep_resolve_runs(d, NULL, 0, 0, &latest, &one, err) != 0) return -1;
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(
        db_sqlite(d),
        "SELECT r.id FROM runs r, runs l WHERE l.id = ? AND r.status = 'complete' AND "
        "r.model_hash IS l.model_hash AND r.datasets IS l.datasets AND r.max_new IS l.max_new "
        "AND EXISTS (SELECT 1 FROM samples WHERE run_id = r.id) ORDER BY r.id",
        -1, &st, NULL);
    if (rc != SQLITE_OK) {
        free(latest);
        return err_set(err, "report_plot_data: %s", db_errmsg(db_sqlite(d)));
    }
    sqlite3_bind_int64(st, 1, latest[0]);
    free(latest);
    *ids = NULL;
    *n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t *g = realloc(*ids, (size_t)(*n + 1) * sizeof *g);
        if (!g) break;
        *ids = g;
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return *n ? 0 : err_set(err, "report_plot_data: no runs for the history");
}

static int write_history(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                         char *err) {
    rep_stat *s;
    int n;
    if (plot_per_spec(d, ids, n_ids, &s, &n, err) != 0) return -1;
    char **specs = calloc((size_t)n + 1, sizeof *specs);
    int n_specs = 0;
    for (int i = 0; specs && i < n; i++) {
        int seen = 0;
        for (int j = 0; j < n_specs && !seen; j++) seen = !strcmp(specs[j], s[i].spec);
        if (!seen) specs[n_specs++] = s[i].spec;
    }
    sqlite3_stmt *st = NULL;
    int rc = specs ? 0 : err_set(err, "report_plot_data: out of memory");
    if (rc == 0 && sqlite3_prepare_v2(db_sqlite(d),
                                      "SELECT COALESCE(substr(e.git_commit, 1, 7), 'unknown') || "
                                      "CASE WHEN e.git_dirty THEN '+' ELSE '' END "
                                      "FROM runs r LEFT JOIN environments e ON e.id = r.env_id "
                                      "WHERE r.id = ?",
                                      -1, &st, NULL) != SQLITE_OK)
        rc = err_set(err, "report_plot_data: %s", db_errmsg(db_sqlite(d)));
    if (rc == 0) {
        /* The commit is named where it changes, not at every run: a sweep's 13 runs of one
         * commit once read as 13 identical labels. */
        fprintf(f, "# decode-only tok/s (mean over repeats) per run, in run order; commit = the "
                   "commit where it changes from the run before ('+' = uncommitted changes), "
                   "else empty\nrun\tcommit");
        plot_header(f, o, specs, n_specs, "");
        char prev[64] = "";
        for (int r = 0; r < n_ids; r++) {
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, ids[r]);
            const char *commit = "unknown";
            if (sqlite3_step(st) == SQLITE_ROW) commit = (const char *)sqlite3_column_text(st, 0);
            fprintf(f, "%" PRId64 "\t", ids[r]);
            if (strcmp(commit, prev)) plot_text(f, commit);
            snprintf(prev, sizeof prev, "%s", commit);
            for (int j = 0; j < n_specs; j++) {
                double v = NAN;
                for (int i = 0; i < n; i++)
                    if (s[i].run_id == ids[r] && !strcmp(s[i].spec, specs[j])) v = s[i].tps_dec;
                put_num(f, v);
            }
            fputc('\n', f);
        }
    }
    sqlite3_finalize(st);
    free(specs);
    rep_stats_free(s, n);
    return rc;
}

/* "2-5, 7" from ascending ids. */
static void id_list(const int64_t *ids, int n, char *out, size_t len) {
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < n && off < len; i++) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1) j++;
        off +=
            (size_t)(j > i ? snprintf(out + off, len - off, "%s%" PRId64 "-%" PRId64, i ? ", " : "",
                                      ids[i], ids[j])
                           : snprintf(out + off, len - off, "%s%" PRId64, i ? ", " : "", ids[i]));
        i = j;
    }
}

int report_plot_runs(db *d, report_plot_kind kind, const report_plot_opts *o, int64_t **ids, int *n,
                     char *what, size_t what_n, char *err) {
    static const report_plot_opts none = {0};
    if (!o) o = &none;
    int64_t sweep = 0;
    int rc;
    const char *why;
    if (o->run_ids && o->n_runs > 0) {
        rc = rep_resolve_runs(d, o->run_ids, o->n_runs, kind == REPORT_PLOT_COST, ids, n, err);
        why = kind == REPORT_PLOT_COST && o->n_runs > 1 ? "the first run named" : "as named";
    } else if (kind == REPORT_PLOT_COST) {
        rc = rep_resolve_runs(d, NULL, 0, 1, ids, n, err);
        why = "the latest complete run with cost points";
    } else if (kind == REPORT_PLOT_HISTORY || kind == REPORT_PLOT_BATCH) {
        rc = history_runs(d, ids, n, err);
        why = "every complete run with the latest one's model, datasets and max_new";
    } else {
        rc = rep_default_runs(d, ids, n, &sweep, err);
        why = sweep ? "every complete run of the latest run's sweep" : "the latest complete run";
    }
    if (rc != 0) return -1;
    if (kind == REPORT_PLOT_COST && *n > 1) *n = 1;
    if (what && what_n) {
        char list[256];
        id_list(*ids, *n, list, sizeof list);
        snprintf(what, what_n, "run%s %s (%s)", *n > 1 ? "s" : "", list, why);
    }
    return 0;
}

int report_plot_recipe_of(db *d, int64_t run, char *recipe, size_t recipe_n, char *part,
                          size_t part_n, char *parts, size_t parts_n) {
    sqlite3_stmt *st;
    int found = 0;
    /* `decbench paper` labels each part's run "paper RECIPE/PART" (harness/cmd_paper.c) */
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT label FROM runs WHERE id = ? AND label LIKE "
                           "'paper %/%'",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *label = (const char *)sqlite3_column_text(st, 0) + strlen("paper ");
        size_t r = strcspn(label, "/");
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)r, label);
        txt_plain_buf(recipe, recipe_n, buf);
        txt_plain_buf(part, part_n, label + r + 1);
        found = 1;
    }
    sqlite3_finalize(st);
    if (!found) return 0;
    /* the latest complete run of each part of the recipe */
    int64_t ids[64];
    int n = 0;
    char like[300];
    snprintf(like, sizeof like, "paper %s/%%", recipe);
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT MAX(id) FROM runs WHERE label LIKE ? AND status = 'complete' "
                           "GROUP BY label ORDER BY MAX(id)",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, like, -1, SQLITE_TRANSIENT);
        while (n < 64 && sqlite3_step(st) == SQLITE_ROW) ids[n++] = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    id_list(ids, n, parts, parts_n);
    return 1;
}

int report_plot_data(db *d, report_plot_kind kind, const report_plot_opts *o, const char *out_dir,
                     char *err) {
    if ((unsigned)kind >= REPORT_PLOT_KINDS)
        return err_set(err, "report_plot_data: unknown plot kind %d", (int)kind);
    static const report_plot_opts none = {0};
    if (!o) o = &none;
    int64_t *ids = NULL;
    int n = 0, rc;
    char what[512];
    if (report_plot_runs(d, kind, o, &ids, &n, what, sizeof what, err) != 0) return -1;

    /* Through PATH.tmp and a rename (util/file.h): a failure leaves the older file whole. */
    char path[4352], e[ERR_LEN];
    snprintf(path, sizeof path, "%s/%s", out_dir, report_plot_file(kind));
    file_out fo;
    if (file_out_open(&fo, path, "plot data", e)) {
        free(ids);
        return err_set(err, "report_plot_data: %s", e);
    }
    FILE *f = fo.f;
    switch (kind) {
    case REPORT_PLOT_SPEEDUP:
        rc = write_speedup(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_SCALING:
        rc = write_scaling(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_ACCEPT:
        rc = write_accept(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_COST:
        rc = write_cost(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_HISTORY:
        rc = write_history(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_POSITION:
        rc = plot_write_position(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_TRADEOFF:
        rc = plot_write_tradeoff(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_HEATMAP:
        rc = plot_write_heatmap(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_ABLATION:
        rc = plot_write_ablation(d, o, ids, n, f, err);
        break;
    case REPORT_PLOT_BATCH:
        rc = plot_write_batch(d, o, ids, n, f, err);
        break;
    }
    if (rc == 0) { /* last, so that each file's first lines stay its own */
        fputs("# ", f);
        plot_text(f, what);
        fputc('\n', f);
    }
    if (rc == 0 && file_out_commit(&fo, e) != 0) rc = err_set(err, "report_plot_data: %s", e);
    file_out_abort(&fo);
    free(ids);
    return rc;
}
