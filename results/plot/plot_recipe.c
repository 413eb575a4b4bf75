/* plot_recipe.c: a paper recipe's own figure (`decbench paper NAME ... --plot DIR`): the rows
 * of its table (report_beside) as bars, clustered by the table's groups (its tasks, settings)
 * and coloured by its rows (the algorithms), in the table's own figure: its speed-up when it
 * shows one (end-to-end for Ouroboros and lookahead, Spec-Bench's for Spec-Bench), else its
 * per-step figure. `decbench plot` of the same database draws one run at a time, with
 * decode-only speed-ups and a legend per decoder spec, which is not the paper's table. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/plot/plot_internal.h"
#include "util/err.h"
#include "util/file.h"

/* The table's figure to draw: its first speed-up, else its first figure of which greedy's
 * value is 1 (the figure's dashed line). -1 when it has none. */
static int pick_figure(const report_beside_opts *bo) {
    static const char *const per_step[] = {"tokens_per_step", "tau", "rows_per_step"};
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < bo->n_figures; k++) {
            int ok = pass ? 0
                          : !strncmp(bo->figures[k], "speedup", 7) &&
                                strcmp(bo->figures[k], "speedup_prompt_sd");
            for (int q = 0; pass && q < 3; q++) ok |= !strcmp(bo->figures[k], per_step[q]);
            for (int f = 0; ok && f < rep_n_figures; f++)
                if (!strcmp(rep_figures[f].key, bo->figures[k])) return f;
        }
    return -1;
}

typedef struct {
    int64_t run;
    rep_stat *s;
    int n;
} run_stats;

/* The stat of a row: its run's figures for its spec over its dataset (NULL: the run's "all"
 * row, or its only dataset's). */
static const rep_stat *row_stat(db *d, run_stats *cache, int *n_cache, const report_beside_row *r,
                                char *err, int *rc) {
    int c = 0;
    while (c < *n_cache && cache[c].run != r->run_id) c++;
    if (c == *n_cache) {
        cache[c].run = r->run_id;
        if (!r->run_id || rep_collect(d, r->run_id, 1, &cache[c].s, &cache[c].n, err) != 0) {
            if (r->run_id) *rc = -1;
            cache[c].s = NULL;
            cache[c].n = 0;
        }
        (*n_cache)++;
    }
    const rep_stat *s = cache[c].s, *one = NULL;
    int n_ds = 0;
    for (int i = 0; i < cache[c].n; i++) {
        if (strcmp(s[i].spec, r->spec)) continue;
        if (r->dataset ? !strcmp(s[i].dataset, r->dataset) : !strcmp(s[i].dataset, REP_ALL))
            return &s[i];
        one = &s[i];
        n_ds++;
    }
    return !r->dataset && n_ds == 1 ? one : NULL;
}

int report_plot_beside(db *d, const report_beside_opts *bo, const report_beside_row *rows,
                       int n_rows, const char *out_dir, char *err) {
    int fig = pick_figure(bo);
    if (fig < 0)
        return err_set(err, "report_plot_beside: the table shows no speed-up or per-step figure "
                            "to draw");
    int fig_sd = -1;
    for (int f = 0; f < rep_n_figures; f++)
        if (rep_figures[f].sd_of && !strcmp(rep_figures[f].sd_of, rep_figures[fig].key)) fig_sd = f;
    const char **groups = calloc((size_t)n_rows + 1, sizeof *groups),
               **series = calloc((size_t)n_rows + 1, sizeof *series);
    run_stats *cache = calloc((size_t)n_rows + 1, sizeof *cache);
    double *val = malloc(sizeof *val * (size_t)(n_rows + 1)),
           *sd = malloc(sizeof *sd * (size_t)(n_rows + 1));
    int n_groups = 0, n_series = 0, n_cache = 0, rc = 0;
    if (!groups || !series || !cache || !val || !sd) rc = err_set(err, "out of memory");
    /* Greedy is the dashed line at 1, not a bar. */
    for (int i = 0; rc == 0 && i < n_rows; i++) {
        val[i] = sd[i] = NAN;
        if (!strcmp(rows[i].spec, "greedy")) continue;
        const rep_stat *s = row_stat(d, cache, &n_cache, &rows[i], err, &rc);
        if (s) {
            val[i] = rep_figures[fig].value(s);
            sd[i] = fig_sd >= 0 ? rep_figures[fig_sd].value(s) : NAN;
        }
        int seen = 0;
        for (int k = 0; k < n_groups && !seen; k++) seen = !strcmp(groups[k], rows[i].group);
        if (!seen) groups[n_groups++] = rows[i].group;
        seen = 0;
        for (int k = 0; k < n_series && !seen; k++) seen = !strcmp(series[k], rows[i].row);
        if (!seen) series[n_series++] = rows[i].row;
    }
    if (rc == 0 && n_series == 0)
        rc = err_set(err, "report_plot_beside: the table has no row but greedy's to draw");
    char path[FILE_PATH_MAX + 16], e[ERR_LEN];
    file_out fo;
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/paper.tsv", out_dir);
        if (file_out_open(&fo, path, "plot data", e)) rc = err_set(err, "%s", e);
    }
    if (rc == 0) {
        FILE *f = fo.f;
        fputs("# ", f);
        plot_text(f, bo->title ? bo->title : "a paper's table");
        fputs(": ours, this machine; bars: ", f);
        plot_text(f, bo->row_header ? bo->row_header : "row");
        fputs(", clusters: ", f);
        plot_text(f, bo->group_header ? bo->group_header : "group");
        fprintf(f,
                ", as the table groups them; values: %s (%s), errors: %s (0 = none); greedy = "
                "1 is the dashed line\n",
                rep_figures[fig].key, rep_figures[fig].header,
                fig_sd >= 0 ? rep_figures[fig_sd].key : "none");
        /* the first header cell names the figure: the script shows it at the top of the key */
        fprintf(f, "ours: %s", rep_figures[fig].header);
        for (int k = 0; k < n_series; k++) {
            fputc('\t', f);
            plot_text(f, series[k]);
            fputs("\terror", f);
        }
        fputc('\n', f);
        for (int g = 0; g < n_groups; g++) {
            plot_text(f, groups[g]);
            for (int k = 0; k < n_series; k++) {
                double v = NAN, s = NAN;
                for (int i = 0; i < n_rows; i++)
                    if (!strcmp(rows[i].group, groups[g]) && !strcmp(rows[i].row, series[k]) &&
                        !isnan(val[i]))
                        v = val[i], s = sd[i];
                plot_num(f, v);
                plot_num(f, isnan(s) ? 0 : s);
            }
            fputc('\n', f);
        }
        if (file_out_commit(&fo, e) != 0) rc = err_set(err, "%s", e);
        file_out_abort(&fo);
    }
    for (int c = 0; c < n_cache; c++) rep_stats_free(cache[c].s, cache[c].n);
    free(cache);
    free(groups);
    free(series);
    free(val);
    free(sd);
    return rc;
}
