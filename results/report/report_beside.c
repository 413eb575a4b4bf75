/* report_beside.c: our figures beside a paper's (`decbench paper`, report.h).
 *
 * The caller (the recipes of harness/paper_recipes.c) names the rows: which run, dataset and
 * decoder stand for each of the paper's cells, and the paper's numbers. Ours come from the same
 * places as every other report: the figures table (report_figures.c) over rep_collect's stats,
 * and the projected layout (report_cost.c) read back by its column keys (projected_tps,
 * projected_speedup), so a figure is defined once and the projection is whatever `report
 * --layout projected` computes. */
#include "results/report/report_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

static int figure_index(const char *key) {
    for (int f = 0; f < rep_n_figures; f++)
        if (!strcmp(rep_figures[f].key, key)) return f;
    return -1;
}

/* The stat of (run, dataset, spec): the dataset's, or with dataset NULL the run's "all" row,
 * else its only dataset's. NULL when the decoder has no samples there. */
static const rep_stat *find_stat(const rep_stat *s, int n, int64_t run, const char *dataset,
                                 const char *spec) {
    const rep_stat *one = NULL;
    int n_ds = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].run_id != run || strcmp(s[i].spec, spec)) continue;
        if (dataset) {
            if (!strcmp(s[i].dataset, dataset)) return &s[i];
            continue;
        }
        if (!strcmp(s[i].dataset, REP_ALL)) return &s[i];
        one = &s[i];
        n_ds++;
    }
    return !dataset && n_ds == 1 ? one : NULL;
}

static int col_by_key(const rtable *t, const char *key) {
    for (int c = 0; c < t->n_cols; c++)
        if (t->cols[c].key && !strcmp(t->cols[c].key, key)) return c;
    return -1;
}

static const rt_cell *cell(const rtable *t, int r, int c) {
    return &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)c];
}

/* The projected table's row for the stat's (run, dataset, spec), or -1. */
static int projected_row(const rtable *p, const rep_stat *s) {
    int c_run = col_by_key(p, "run"), c_ds = col_by_key(p, "dataset"),
        c_spec = col_by_key(p, "spec");
    if (c_ds < 0 || c_spec < 0) return -1;
    for (int r = 0; r < p->n_rows; r++) {
        const char *ds = cell(p, r, c_ds)->text, *spec = cell(p, r, c_spec)->text;
        if (!ds || !spec || strcmp(ds, s->dataset) || strcmp(spec, s->spec)) continue;
        if (c_run >= 0 && cell(p, r, c_run)->num != (double)s->run_id) continue;
        return r;
    }
    return -1;
}

/* Columns of the table; -1 where absent. */
typedef struct {
    int group, row, fig[32], proj_tps, proj_up, paper[REPORT_BESIDE_COLS], text, cite, run, dataset,
        spec;
} columns;

static int add_columns(rtable *t, const report_beside_opts *o, int any_text, columns *c,
                       char *err) {
    c->group = rt_col_add(t, o->group_header ? o->group_header : "task", "group", RT_TEXT, NULL);
    c->row = rt_col_add(t, o->row_header ? o->row_header : "algorithm", "row", RT_TEXT, NULL);
    if (o->n_figures > (int)(sizeof c->fig / sizeof c->fig[0]))
        return err_set(err, "report: more than %d figures",
                       (int)(sizeof c->fig / sizeof c->fig[0]));
    for (int k = 0; k < o->n_figures; k++) {
        int f = figure_index(o->figures[k]);
        if (f < 0) return err_set(err, "report: no figure '%s' (decbench counters)", o->figures[k]);
        c->fig[k] = rt_col_add(t, rep_figures[f].header, rep_figures[f].key, RT_REAL,
                               rep_figures[f].md_fmt);
        for (int g = 0; g < rep_n_figures; g++)
            if (rep_figures[g].sd_of && !strcmp(rep_figures[g].sd_of, rep_figures[f].key))
                rt_col_pair(t, c->fig[k],
                            rt_col_add(t, rep_figures[g].header, rep_figures[g].key, RT_REAL,
                                       rep_figures[g].md_fmt));
    }
    c->proj_tps = c->proj_up = -1;
    if (o->cost_source) {
        c->proj_tps = rt_col_add(t, "projected tok/s", "projected_tps", RT_REAL, "%.1f");
        c->proj_up = rt_col_add(t, "projected speed-up", "projected_speedup", RT_REAL, "%.2fx");
    }
    for (int k = 0; k < REPORT_BESIDE_COLS; k++)
        c->paper[k] = o->paper_header[k] ? rt_col_add(t, o->paper_header[k], o->paper_key[k],
                                                      RT_REAL, o->paper_fmt[k])
                                         : -1;
    c->text = any_text ? rt_col_add(t, "paper (in words)", "paper_text", RT_TEXT, NULL) : -1;
    c->cite = rt_col_add(t, "paper source", "paper_source", RT_TEXT, NULL);
    c->run = rt_col_add(t, "run", "run", RT_INT, NULL);
    c->dataset = rt_col_add(t, "dataset", "dataset", RT_TEXT, NULL);
    c->spec = rt_col_add(t, "spec", "spec", RT_TEXT, NULL);
    rt_col_hide(t, c->dataset);
    rt_col_hide(t, c->spec);
    return 0;
}

static void fill_row(rtable *t, const columns *c, const report_beside_opts *o,
                     const report_beside_row *b, const rep_stat *s, const rtable *proj) {
    int r = rt_row_add(t);
    rt_set_text(t, r, c->group, b->group);
    rt_set_text(t, r, c->row, b->row);
    rt_set_num(t, r, c->run, (double)b->run_id);
    rt_set_text(t, r, c->dataset, s ? s->dataset : b->dataset);
    rt_set_text(t, r, c->spec, b->spec);
    for (int k = 0; s && k < o->n_figures; k++) {
        int f = figure_index(o->figures[k]);
        rt_set_num(t, r, c->fig[k], rep_figures[f].value(s));
        if (t->cols[c->fig[k]].sd >= 0) {
            int g = figure_index(t->cols[t->cols[c->fig[k]].sd].key);
            rt_set_num(t, r, t->cols[c->fig[k]].sd, rep_figures[g].value(s));
        }
    }
    int pr = s && proj ? projected_row(proj, s) : -1;
    if (pr >= 0) {
        int a = col_by_key(proj, "projected_tps"), b2 = col_by_key(proj, "projected_speedup");
        if (a >= 0) rt_set_num(t, r, c->proj_tps, cell(proj, pr, a)->num);
        if (b2 >= 0) rt_set_num(t, r, c->proj_up, cell(proj, pr, b2)->num);
    }
    for (int k = 0; k < REPORT_BESIDE_COLS; k++)
        if (c->paper[k] >= 0) rt_set_num(t, r, c->paper[k], b->paper[k]);
    if (c->text >= 0 && b->paper_text) rt_set_text(t, r, c->text, b->paper_text);
    if (b->cite) rt_set_text(t, r, c->cite, b->cite);
}

int report_beside(db *d, const report_beside_opts *o, const report_beside_row *rows, int n_rows,
                  report_format format, FILE *out, char *err) {
    int64_t *ids = malloc(sizeof *ids * (size_t)(n_rows + 1));
    if (!ids) return err_set(err, "report: out of memory");
    int n_ids = 0, any_text = 0;
    for (int i = 0; i < n_rows; i++) {
        int seen = 0;
        for (int k = 0; k < n_ids && !seen; k++) seen = ids[k] == rows[i].run_id;
        if (!seen) ids[n_ids++] = rows[i].run_id;
        any_text |= rows[i].paper_text != NULL;
    }
    rep_stat *all = NULL;
    int n_all = 0;
    rtable t, proj;
    rt_init(&t, o->title);
    rt_init(&proj, NULL);
    int rc = rep_collect_runs(d, ids, n_ids, 1, &all, &n_all, err);
    if (rc == 0 && o->cost_source) rc = rep_projected(d, ids, n_ids, o->cost_source, NULL, &proj, err);
    columns c;
    memset(&c, -1, sizeof c);
    if (rc == 0) rc = add_columns(&t, o, any_text, &c, err);
    for (int i = 0; rc == 0 && i < o->n_notes; i++) rt_note(&t, "%s", o->notes[i]);
    for (int i = 0; rc == 0 && i < n_rows; i++)
        fill_row(&t, &c, o, &rows[i],
                 find_stat(all, n_all, rows[i].run_id, rows[i].dataset, rows[i].spec),
                 o->cost_source ? &proj : NULL);
    /* The projection's own notes (its curve, what it prices), then the runs and definitions. */
    for (int i = 0; rc == 0 && i < proj.n_notes; i++) rt_note(&t, "%s", proj.notes[i]);
    for (int i = 0; rc == 0 && i < n_ids; i++) {
        char note[1536];
        if ((rc = rep_run_note(d, ids[i], note, sizeof note, err)) == 0) rt_note(&t, "%s", note);
    }
    for (int k = 0; rc == 0 && k < o->n_figures; k++) {
        int f = figure_index(o->figures[k]);
        rt_note(&t, "%s: %s.", rep_figures[f].header, rep_figures[f].definition);
    }
    if (rc == 0) rc = rt_write(&t, format, out, NULL, err);
    rt_free(&t);
    rt_free(&proj);
    rep_stats_free(all, n_all);
    free(ids);
    return rc;
}
