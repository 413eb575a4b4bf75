/* report.c: the report layouts (summary, Ouroboros Table 2, ablation) and their dispatch.
 * The figures come from report_data.c, the projection from report_cost.c, the counters layout
 * from report_counters.c, the formatting from report_table.c. */
#include "results/report/report_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/text_escape.h"
#include "util/err.h"

int report_format_parse(const char *s, report_format *out) {
    if (!strcmp(s, "md") || !strcmp(s, "markdown"))
        *out = REPORT_MARKDOWN;
    else if (!strcmp(s, "csv"))
        *out = REPORT_CSV;
    else if (!strcmp(s, "json"))
        *out = REPORT_JSON;
    else if (!strcmp(s, "latex") || !strcmp(s, "tex"))
        *out = REPORT_LATEX;
    else if (!strcmp(s, "jsonl"))
        *out = REPORT_JSONL;
    else
        return -1;
    return 0;
}

int report_format_for_path(const char *path, report_format *out) {
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1)) return -1;
    if (!strcmp(dot, ".txt")) return *out = REPORT_MARKDOWN, 0;
    if (!strcmp(dot, ".tex")) return *out = REPORT_LATEX, 0;
    return report_format_parse(dot + 1, out);
}

static const char *const layout_names[REPORT_LAYOUTS] = {
    "summary", "paper", "ablation", "projected", "counters", "accept", "samples", "batch"};

const char *report_layout_name(report_layout l) {
    return (unsigned)l < REPORT_LAYOUTS ? layout_names[l] : "?";
}

int report_layout_parse(const char *s, report_layout *out) {
    const char *const *names = layout_names;
    for (int i = 0; i < REPORT_LAYOUTS; i++)
        if (!strcmp(s, names[i])) {
            *out = (report_layout)i;
            return 0;
        }
    return -1;
}

/* JSON "runs": every column of each run and of its environment, for provenance. */
static json_t *row_object(sqlite3_stmt *st) {
    json_t *o = json_object();
    for (int i = 0; o && i < sqlite3_column_count(st); i++) {
        json_t *v;
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
            v = json_integer(sqlite3_column_int64(st, i));
            break;
        case SQLITE_FLOAT:
            v = json_real(sqlite3_column_double(st, i));
            break;
        case SQLITE_NULL:
            v = json_null();
            break;
        default:
            v = txt_json((const char *)sqlite3_column_text(st, i));
        }
        json_object_set_new(o, sqlite3_column_name(st, i), v);
    }
    return o;
}

static json_t *runs_json(db *d, const int64_t *ids, int n) {
    json_t *arr = json_array();
    sqlite3_stmt *r = NULL, *e = NULL;
    sqlite3 *h = db_sqlite(d);
    if (sqlite3_prepare_v2(h, "SELECT * FROM runs WHERE id = ?", -1, &r, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, "SELECT * FROM environments WHERE id = ?", -1, &e, NULL) !=
            SQLITE_OK) {
        sqlite3_finalize(r);
        return arr;
    }
    for (int i = 0; arr && i < n; i++) {
        sqlite3_reset(r);
        sqlite3_bind_int64(r, 1, ids[i]);
        if (sqlite3_step(r) != SQLITE_ROW) continue;
        json_t *o = row_object(r);
        json_t *env = json_object_get(o, "env_id");
        if (json_is_integer(env)) {
            sqlite3_reset(e);
            sqlite3_bind_int64(e, 1, json_integer_value(env));
            if (sqlite3_step(e) == SQLITE_ROW) json_object_set_new(o, "environment", row_object(e));
        }
        json_array_append_new(arr, o);
    }
    sqlite3_finalize(r);
    sqlite3_finalize(e);
    return arr;
}

/* "2-5, 7, 9-10" from ascending ids into out. */
static void id_ranges(const int64_t *ids, int n, char *out, size_t len) {
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < n && off < len; i++) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1) j++;
        if (j > i)
            off += (size_t)snprintf(out + off, len - off, "%s%" PRId64 "-%" PRId64, i ? ", " : "",
                                    ids[i], ids[j]);
        else
            off += (size_t)snprintf(out + off, len - off, "%s%" PRId64, i ? ", " : "", ids[i]);
        i = j;
    }
}

/* The runs' provenance, one note line per group of runs that share everything but their id,
 * status and start (a sweep's points: one line, not one per point). */
static int add_notes(db *d, rtable *t, const int64_t *ids, int n, char *err) {
    enum { NOTE = 1536 };
    typedef struct {
        char note[NOTE], head[256], body[NOTE], started[64];
    } run_note;
    run_note *rn = calloc((size_t)(n ? n : 1), sizeof *rn);
    int64_t *grp = malloc(sizeof *grp * (size_t)(n ? n : 1));
    char *done = calloc((size_t)(n ? n : 1), 1);
    if (!rn || !grp || !done) {
        free(rn), free(grp), free(done);
        return err_set(err, "report: out of memory");
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (rep_run_note(d, ids[i], rn[i].note, NOTE, err) != 0) rc = -1;
        if (rc) break;
        /* "Run N (HEAD): BODY, started TS[, greedy baseline from run M]" */
        const char *open = strchr(rn[i].note, '('), *close = strstr(rn[i].note, "): ");
        const char *st = strstr(rn[i].note, ", started ");
        if (!open || !close || !st || st < close) {
            snprintf(rn[i].body, NOTE, "\x01%d", i); /* unparsed: a group of its own */
            continue;
        }
        snprintf(rn[i].head, sizeof rn[i].head, "%.*s", (int)(close - open - 1), open + 1);
        const char *ts = st + strlen(", started "), *after = ts + strcspn(ts, ",");
        snprintf(rn[i].started, sizeof rn[i].started, "%.*s", (int)(after - ts), ts);
        snprintf(rn[i].body, NOTE, "%.*s%s", (int)(st - close - 3), close + 3, after);
    }
    for (int i = 0; i < n && rc == 0; i++) {
        if (done[i]) continue;
        int k = 0, same_head = 1;
        for (int j = i; j < n; j++)
            if (!done[j] && !strcmp(rn[j].body, rn[i].body)) {
                done[j] = 1;
                grp[k++] = ids[j];
                same_head &= !strcmp(rn[j].head, rn[i].head);
            }
        if (k == 1) {
            rt_note(t, "%s", rn[i].note);
            continue;
        }
        char list[512];
        id_ranges(grp, k, list, sizeof list);
        /* the last start of the group: its members are in id order, the order they ran */
        const char *last = rn[i].started;
        for (int j = i; j < n; j++)
            if (!strcmp(rn[j].body, rn[i].body)) last = rn[j].started;
        rt_note(t, "Runs %s (%d runs, %s): %s, started %s to %s", list, k,
                same_head ? rn[i].head : "statuses differ", rn[i].body, rn[i].started, last);
    }
    free(rn), free(grp), free(done);
    return rc;
}

int rep_default_runs(db *d, int64_t **ids, int *n, int64_t *sweep, char *err) {
    *sweep = 0;
    if (rep_resolve_runs(d, NULL, 0, 0, ids, n, err) != 0) return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT id, sweep_id FROM runs WHERE sweep_id = (SELECT sweep_id FROM "
                           "runs WHERE id = ?) AND status = 'complete' AND EXISTS (SELECT 1 FROM "
                           "samples WHERE run_id = runs.id) ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK) {
        free(*ids);
        *ids = NULL;
        return err_set(err, "report: %s", db_errmsg(db_sqlite(d)));
    }
    sqlite3_bind_int64(st, 1, (*ids)[0]);
    int64_t *all = NULL;
    int k = 0, rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t *g = realloc(all, (size_t)(k + 1) * sizeof *g);
        if (!g) {
            rc = err_set(err, "report: out of memory");
            break;
        }
        all = g;
        all[k++] = sqlite3_column_int64(st, 0);
        *sweep = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (rc == 0 && k > 1) {
        free(*ids);
        *ids = all;
        *n = k;
    } else {
        free(all);
        if (rc == 0) *sweep = 0;
    }
    return rc;
}

/* ---- summary: every figure per dataset x decoder ----------------------------------------- */

#define MAXP 32

/* The decoder parameters of the stats, each once in first-seen order: one CSV/JSON column
 * "param_KEY" each (markdown shows the short label instead). Returns the count. */
static int param_keys(const rep_stat *s, int n, char keys[][64], int max) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        char buf[1024], *kk[MAXP], *vv[MAXP];
        int np = rep_spec_params(s[i].spec, buf, sizeof buf, kk, vv, MAXP);
        for (int j = 0; j < np; j++) {
            int seen = 0;
            for (int q = 0; q < k && !seen; q++) seen = !strcmp(keys[q], kk[j]);
            if (!seen && k < max) snprintf(keys[k++], 64, "%s", kk[j]);
        }
    }
    return k;
}

/* Columns: the short label (markdown), the decoder's name, its full spec and one column per
 * parameter (CSV/JSON only); returns the label column, *c_param the first parameter's. */
static int decoder_columns(rtable *t, const rep_stat *s, int n, char keys[][64], int *n_keys,
                           int *c_name, int *c_spec, int *c_param) {
    int c_label = rt_col_add(t, "decoder", "label", RT_TEXT, NULL);
    *c_name = rt_col_add(t, "decoder name", "decoder", RT_TEXT, NULL);
    *c_spec = rt_col_add(t, "spec", "spec", RT_TEXT, NULL);
    rt_col_hide(t, *c_name);
    rt_col_hide(t, *c_spec);
    *n_keys = param_keys(s, n, keys, MAXP);
    *c_param = t->n_cols;
    for (int q = 0; q < *n_keys; q++) {
        char key[80];
        snprintf(key, sizeof key, "param_%.63s", keys[q]);
        rt_col_hide(t, rt_col_add(t, keys[q], key, RT_VALUE, NULL));
    }
    return c_label;
}

static void decoder_cells(rtable *t, int row, const rep_stat *s, int c_label, int c_name,
                          int c_spec, int c_param, char keys[][64], int n_keys) {
    rt_set_text(t, row, c_label, s->label ? s->label : s->spec);
    rt_set_text(t, row, c_name, s->decoder);
    rt_set_text(t, row, c_spec, s->spec);
    char buf[1024], *kk[MAXP], *vv[MAXP];
    int np = rep_spec_params(s->spec, buf, sizeof buf, kk, vv, MAXP);
    for (int q = 0; q < n_keys; q++)
        for (int j = 0; j < np; j++)
            if (!strcmp(keys[q], kk[j])) rt_set_text(t, row, c_param + q, vv[j]);
}

/* Which figures of rep_figures the summary shows (report_opts.columns): want[f] = 1. -1 with
 * a message naming an unknown key and the keys there are. */
static int choose_columns(const report_opts *o, int *want, char *err) {
    const char *cols = o->columns ? o->columns : o->format == REPORT_LATEX ? "paper" : "all";
    if (!strcmp(cols, "all")) {
        for (int f = 0; f < rep_n_figures; f++) want[f] = 1;
        return 0;
    }
    if (!strcmp(cols, "paper")) cols = REPORT_PAPER_COLUMNS;
    for (int f = 0; f < rep_n_figures; f++) want[f] = 0;
    char buf[1024], *save = NULL;
    snprintf(buf, sizeof buf, "%s", cols);
    for (char *k = strtok_r(buf, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int f = 0; f < rep_n_figures; f++)
            if (!strcmp(rep_figures[f].key, k)) want[f] = found = 1;
        if (!found) {
            char keys[1024];
            size_t len = 0;
            keys[0] = '\0';
            for (int f = 0; f < rep_n_figures && len < sizeof keys; f++)
                if (!rep_figures[f].sd_of)
                    len += (size_t)snprintf(keys + len, sizeof keys - len, "%s%s", len ? ", " : "",
                                            rep_figures[f].key);
            return err_set(err, "report: --columns: no figure '%s' (figures: %s; or all, paper)", k,
                           keys);
        }
    }
    /* a figure's sd comes with it */
    for (int f = 0; f < rep_n_figures; f++)
        for (int g = 0; rep_figures[f].sd_of && g < rep_n_figures; g++)
            if (want[g] && !strcmp(rep_figures[g].key, rep_figures[f].sd_of)) want[f] = 1;
    return 0;
}

/* The line under a table's run notes: what its words mean in one line, and where the rest is;
 * or (explain) every definition of the figures shown, one note each. */
static void legend(rtable *t, const int *want, int explain) {
    if (!explain) {
        rt_note(t, "tok/s: decode-only (after the prompt pass); e2e: the whole call; speed-up: "
                   "greedy's time / the decoder's on the same prompts; ± sd over repeats. Every "
                   "definition and the decoders' full specs: `decbench report --explain`.");
        return;
    }
    for (int f = 0; f < rep_n_figures; f++)
        if (!want || want[f])
            rt_note(t, "%s: %s.", rep_figures[f].header, rep_figures[f].definition);
}

/* explain: each label's full spec, one note each ("lookahead: lookahead:W=5,N=4,G=5,..."). */
static void spec_notes(rtable *t, const rep_stat *s, int n) {
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(s[j].spec, s[i].spec);
        if (!seen) rt_note(t, "decoder %s = %s", s[i].label ? s[i].label : s[i].spec, s[i].spec);
    }
}

static int summary(rtable *t, const rep_stat *s, int n, int multi_run, const report_opts *o,
                   char *err) {
    int want[64];
    if (rep_n_figures > 64) return err_set(err, "report: too many figures");
    if (choose_columns(o, want, err)) return -1;
    int c_run = multi_run ? rt_col_add(t, "run", "run", RT_INT, NULL) : -1;
    int c_ds = rt_col_add(t, "dataset", "dataset", RT_TEXT, NULL);
    char keys[MAXP][64];
    int n_keys, c_name, c_spec, c_param;
    int c_label = decoder_columns(t, s, n, keys, &n_keys, &c_name, &c_spec, &c_param);
    int c_np = rt_col_add(t, "prompts", "prompts", RT_INT, NULL);
    int c_nr = rt_col_add(t, "repeats", "repeats", RT_INT, NULL);
    /* one column per figure of the table (report_figures.c), in its order; an sd joins its
     * mean in one markdown cell */
    int col[64];
    for (int f = 0; f < rep_n_figures; f++)
        col[f] = want[f] ? rt_col_add(t, rep_figures[f].header, rep_figures[f].key, RT_REAL,
                                      rep_figures[f].md_fmt)
                         : -1;
    for (int f = 0; f < rep_n_figures; f++)
        for (int g = 0; rep_figures[f].sd_of && col[f] >= 0 && g < rep_n_figures; g++)
            if (col[g] >= 0 && !strcmp(rep_figures[g].key, rep_figures[f].sd_of))
                rt_col_pair(t, col[g], col[f]);
    for (int i = 0; i < n; i++) {
        int r = rt_row_add(t);
        if (c_run >= 0) rt_set_num(t, r, c_run, (double)s[i].run_id);
        rt_set_text(t, r, c_ds, s[i].dataset);
        decoder_cells(t, r, &s[i], c_label, c_name, c_spec, c_param, keys, n_keys);
        rt_set_num(t, r, c_np, s[i].n_prompts);
        rt_set_num(t, r, c_nr, s[i].n_repeats);
        for (int f = 0; f < rep_n_figures; f++)
            if (col[f] >= 0) rt_set_num(t, r, col[f], rep_figures[f].value(&s[i]));
    }
    legend(t, want, o->explain);
    if (o->explain) spec_notes(t, s, n);
    if (!o->columns && o->format == REPORT_LATEX)
        rt_note(t, "Columns: the paper's (%s); --columns all for every figure.",
                REPORT_PAPER_COLUMNS);
    return 0;
}

/* ---- Ouroboros Table 2: algorithms x tasks ----------------------------------------------- */

/* Row labels: the short label, made unique with the run id when several runs share a spec. */
static void algo_label(const rep_stat *s, int n, int i, char *out, size_t len) {
    int clash = 0;
    const char *lab = s[i].label ? s[i].label : s[i].spec;
    for (int j = 0; j < n && !clash; j++)
        clash = s[j].run_id != s[i].run_id && strcmp(s[j].spec, s[i].spec) == 0;
    if (clash)
        snprintf(out, len, "%s (run %" PRId64 ")", lab, s[i].run_id);
    else
        snprintf(out, len, "%s", lab);
}

/* Distinct datasets (REP_ALL excluded) in order of appearance; returns count, or -1 with a
 * message when there are more than max (a column per dataset: none is left out silently). */
static int datasets(const rep_stat *s, int n, const char **out, int max, char *err) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(s[i].dataset, REP_ALL)) continue;
        int seen = 0;
        for (int j = 0; j < k && !seen; j++) seen = !strcmp(out[j], s[i].dataset);
        if (!seen && k == max)
            return err_set(err,
                           "report: more than %d datasets for one table: report fewer runs "
                           "at a time",
                           max);
        if (!seen) out[k++] = s[i].dataset;
    }
    return k;
}

/* Per dataset: tok/s ± sd, speed-up ± sd and (with_steps) tokens/step columns starting at
 * col0, in the rows row_of[] gives (-1: not shown). End-to-end figures: the papers whose tables
 * these layouts reproduce (Ouroboros, LADE) and Spec-Bench time the whole generate call,
 * prompt pass included. */
#define TASK_COLS(with_steps) (4 + (with_steps))
static void task_columns(rtable *t, const rep_stat *s, int n, const char **ds, int n_ds, int col0,
                         const int *row_of, int with_steps) {
    for (int i = 0; i < n; i++) {
        if (row_of[i] < 0) continue;
        for (int k = 0; k < n_ds; k++) {
            if (strcmp(s[i].dataset, ds[k])) continue;
            int c = col0 + TASK_COLS(with_steps) * k;
            rt_set_num(t, row_of[i], c, s[i].tps_e2e);
            rt_set_num(t, row_of[i], c + 1, s[i].tps_e2e_sd);
            rt_set_num(t, row_of[i], c + 2, s[i].speedup_e2e);
            rt_set_num(t, row_of[i], c + 3, s[i].speedup_e2e_sd);
            if (with_steps) rt_set_num(t, row_of[i], c + 4, rep_tokens_per_step(&s[i]));
        }
    }
}

static void add_task_cols(rtable *t, const char **ds, int n_ds, int with_steps) {
    for (int k = 0; k < n_ds; k++) {
        char h[160], key[160];
        snprintf(h, sizeof h, "%s tok/s", ds[k]);
        snprintf(key, sizeof key, "%s_tps", ds[k]);
        int c = rt_col_add(t, h, key, RT_REAL, "%.1f");
        snprintf(key, sizeof key, "%s_tps_sd", ds[k]);
        rt_col_pair(t, c, rt_col_add(t, "sd", key, RT_REAL, "%.1f"));
        snprintf(h, sizeof h, "%s speed-up", ds[k]);
        snprintf(key, sizeof key, "%s_speedup", ds[k]);
        c = rt_col_add(t, h, key, RT_REAL, "%.2fx");
        snprintf(key, sizeof key, "%s_speedup_sd", ds[k]);
        rt_col_pair(t, c, rt_col_add(t, "sd", key, RT_REAL, "%.2f"));
        if (!with_steps) continue;
        snprintf(h, sizeof h, "%s tokens/step", ds[k]);
        snprintf(key, sizeof key, "%s_tokens_per_step", ds[k]);
        rt_col_add(t, h, key, RT_REAL, "%.2f");
    }
}

/* Assigns rows: stats with the same label share a row (one per algorithm). */
static int assign_rows(rtable *t, const rep_stat *s, int n, const int *keep, int *row_of,
                       int c_label) {
    char(*labels)[600] = calloc((size_t)n, sizeof *labels);
    if (!labels) return -1;
    int n_rows = 0;
    int *label_row = calloc((size_t)n, sizeof *label_row);
    if (!label_row) {
        free(labels);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        row_of[i] = -1;
        if (!keep[i]) continue;
        char lab[600];
        algo_label(s, n, i, lab, sizeof lab);
        int found = -1;
        for (int j = 0; j < n_rows && found < 0; j++)
            if (!strcmp(labels[j], lab)) found = label_row[j];
        if (found < 0) {
            found = rt_row_add(t);
            rt_set_text(t, found, c_label, lab);
            snprintf(labels[n_rows], sizeof labels[0], "%s", lab);
            label_row[n_rows++] = found;
        }
        row_of[i] = found;
    }
    free(labels);
    free(label_row);
    return 0;
}

static int paper(rtable *t, const rep_stat *s, int n, char *err) {
    const char *ds[64];
    int n_ds = datasets(s, n, ds, 64, err);
    if (n_ds < 0) return -1;
    int c_label = rt_col_add(t, "Algorithm", "algorithm", RT_TEXT, NULL);
    add_task_cols(t, ds, n_ds, 0);
    int *keep = malloc((size_t)n * sizeof *keep), *row_of = malloc((size_t)n * sizeof *row_of);
    if (!keep || !row_of) {
        free(keep);
        free(row_of);
        return err_set(err, "report: out of memory");
    }
    for (int i = 0; i < n; i++) keep[i] = strcmp(s[i].dataset, REP_ALL) != 0;
    int rc = assign_rows(t, s, n, keep, row_of, c_label);
    if (rc == 0) task_columns(t, s, n, ds, n_ds, c_label + 1, row_of, 0);
    free(keep);
    free(row_of);
    rt_note(t, "Layout of Ouroboros (Zhao et al., 2024) Table 2: end-to-end tok/s (mean ± sd over "
               "repeats; the paper, like LADE and Spec-Bench, times the whole generate call) and "
               "speed-up over greedy (ratio of total end-to-end times ± sd over repeats) per "
               "task.");
    return rc == 0 ? 0 : err_set(err, "report: out of memory");
}

/* ---- ablation: variants of one decoder ---------------------------------------------------- */

static int ablation(rtable *t, const rep_stat *s, int n, const char *name, char *err) {
    /* Union of parameter keys over the variants, and whether each one's value varies. */
    char keys[MAXP][64], first[MAXP][128];
    int n_keys = 0, varies[MAXP] = {0}, n_var = 0;
    int *keep = calloc((size_t)n, sizeof *keep), *row_of = calloc((size_t)n, sizeof *row_of);
    if (!keep || !row_of) {
        free(keep);
        free(row_of);
        return err_set(err, "report: out of memory");
    }
    for (int i = 0; i < n; i++) {
        if (!strcmp(s[i].dataset, REP_ALL)) continue;
        if (!strcmp(s[i].decoder, "greedy")) keep[i] = 1;
        if (strcmp(s[i].decoder, name)) continue;
        keep[i] = 1;
        n_var++;
        char buf[1024], *k[MAXP], *v[MAXP];
        int np = rep_spec_params(s[i].spec, buf, sizeof buf, k, v, MAXP);
        for (int j = 0; j < np; j++) {
            int f = -1;
            for (int q = 0; q < n_keys && f < 0; q++)
                if (!strcmp(keys[q], k[j])) f = q;
            if (f < 0 && n_keys < MAXP) {
                f = n_keys++;
                snprintf(keys[f], sizeof keys[f], "%s", k[j]);
                snprintf(first[f], sizeof first[f], "%s", v[j]);
            } else if (f >= 0 && strcmp(first[f], v[j])) {
                varies[f] = 1;
            }
        }
    }
    if (n_var == 0) {
        free(keep);
        free(row_of);
        return err_set(err, "report: no '%s' samples in the run(s) reported", name);
    }
    /* A key missing from some variant also varies (its default applies there). */
    for (int i = 0; i < n; i++) {
        if (!keep[i] || strcmp(s[i].decoder, name)) continue;
        char buf[1024], *k[MAXP], *v[MAXP];
        int np = rep_spec_params(s[i].spec, buf, sizeof buf, k, v, MAXP);
        for (int q = 0; q < n_keys; q++) {
            int has = 0;
            for (int j = 0; j < np && !has; j++) has = !strcmp(keys[q], k[j]);
            if (!has) varies[q] = 1;
        }
    }
    const char *ds[64];
    int n_ds = datasets(s, n, ds, 64, err);
    if (n_ds < 0) {
        free(keep);
        free(row_of);
        return -1;
    }
    int c_label = rt_col_add(t, "Variant", "variant", RT_TEXT, NULL);
    int c_key[MAXP];
    for (int q = 0; q < n_keys; q++)
        c_key[q] = varies[q] ? rt_col_add(t, keys[q], keys[q], RT_TEXT, NULL) : -1;
    int col0 = t->n_cols;
    add_task_cols(t, ds, n_ds, 1);
    int rc = assign_rows(t, s, n, keep, row_of, c_label);
    for (int i = 0; rc == 0 && i < n; i++) {
        if (row_of[i] < 0 || strcmp(s[i].decoder, name)) continue;
        char buf[1024], *k[MAXP], *v[MAXP];
        int np = rep_spec_params(s[i].spec, buf, sizeof buf, k, v, MAXP);
        for (int q = 0; q < n_keys; q++) {
            if (c_key[q] < 0) continue;
            const char *val = "(default)";
            for (int j = 0; j < np; j++)
                if (!strcmp(keys[q], k[j])) val = v[j];
            rt_set_text(t, row_of[i], c_key[q], val);
        }
    }
    if (rc == 0) task_columns(t, s, n, ds, n_ds, col0, row_of, 1);
    free(keep);
    free(row_of);
    if (rc != 0) return err_set(err, "report: out of memory");
    /* Each entry fits (keys 64, values 128 bytes), so the whole list cannot overflow. */
    char fixed[MAXP * (64 + 128 + 2) + 1] = "";
    size_t off = 0;
    for (int q = 0; q < n_keys; q++) {
        if (varies[q]) continue;
        if (off) fixed[off++] = ',';
        size_t lk = strlen(keys[q]), lv = strlen(first[q]);
        memcpy(fixed + off, keys[q], lk);
        fixed[off + lk] = '=';
        memcpy(fixed + off + lk + 1, first[q], lv + 1);
        off += lk + 1 + lv;
    }
    rt_note(t,
            "Ablation of '%s' (layout of the Ouroboros ablation table, its Table 3): columns are "
            "the parameters that differ between variants; fixed: %s. Greedy is the reference. "
            "End-to-end tok/s and speed-up (± sd over repeats), as in the paper, and tokens per "
            "target step.",
            name, fixed[0] ? fixed : "(none)");
    return 0;
}

int report_write(db *d, const report_opts *o, FILE *out, char *err) {
    int64_t *ids, sweep = 0;
    int n_ids;
    if (o->run_ids && o->n_runs > 0
            ? rep_resolve_runs(d, o->run_ids, o->n_runs, 0, &ids, &n_ids, err) != 0
            : rep_default_runs(d, &ids, &n_ids, &sweep, err) != 0)
        return -1;
    rtable t;
    static const char *titles[REPORT_LAYOUTS] = {
        "Decoding summary", "Speed by task (Ouroboros Table 2 layout)",
        "Ablation",         "Projected speed-up from the forward-cost curve",
        "Counters",         "Acceptance rate by draft position",
        "Samples",          "Batched decoding"};
    rt_init(&t, titles[(unsigned)o->layout < REPORT_LAYOUTS ? o->layout : 0]);
    int rc = add_notes(d, &t, ids, n_ids, err);
    if (rc == 0 && sweep) {
        /* the latest run is a sweep's point: the whole sweep, said so, rather than one point */
        char *grid = NULL, inner[ERR_LEN], list[512];
        id_ranges(ids, n_ids, list, sizeof list);
        db_get_sweep(d, sweep, &grid, inner);
        rt_note(&t,
                "Sweep %" PRId64 "%s%s%s: its %d complete runs (%s); `--run ID` reports one, "
                "`--sweep ID` another sweep.",
                sweep, grid ? " (grid '" : "", grid ? grid : "", grid ? "')" : "", n_ids, list);
        free(grid);
    }
    if (rc == 0 && o->layout == REPORT_SAMPLES && o->format == REPORT_JSONL) {
        rc = rep_samples_layout(d, ids, n_ids, o, NULL, out, err); /* writes the records */
        rt_free(&t);
        free(ids);
        return rc;
    }
    if (rc == 0 && o->layout == REPORT_PROJECTED) {
        rc = rep_projected(d, ids, n_ids, o->cost_source, o->draft_cost_source, &t, err);
    } else if (rc == 0 && o->layout == REPORT_ACCEPT) {
        rc = rep_accept_layout(d, ids, n_ids, o, &t, err);
    } else if (rc == 0 && o->layout == REPORT_SAMPLES) {
        rc = rep_samples_layout(d, ids, n_ids, o, &t, NULL, err);
    } else if (rc == 0 && o->layout == REPORT_BATCH) {
        rc = rep_batch_layout(d, ids, n_ids, o, &t, err);
    } else if (rc == 0) {
        rep_stat *all = NULL;
        int n_all = 0;
        rc = rep_collect_runs(d, ids, n_ids,
                              o->layout == REPORT_SUMMARY || o->layout == REPORT_COUNTERS, &all,
                              &n_all, err);
        if (rc == 0 && rep_labels(all, n_all, o->default_specs, o->n_default_specs) != 0)
            rc = err_set(err, "report: out of memory");
        if (rc == 0) {
            if (o->layout == REPORT_PAPER)
                rc = paper(&t, all, n_all, err);
            else if (o->layout == REPORT_ABLATION)
                rc = ablation(&t, all, n_all,
                              o->ablation_decoder ? o->ablation_decoder : "ouroboros", err);
            else if (o->layout == REPORT_COUNTERS)
                rc = rep_counters(d, all, n_all, n_ids > 1, &t, err);
            else
                rc = summary(&t, all, n_all, n_ids > 1, o, err);
            if (rc == 0 && o->explain && o->layout != REPORT_SUMMARY) spec_notes(&t, all, n_all);
        }
        rep_stats_free(all, n_all);
    }
    if (rc == 0)
        rc = rt_write(&t, o->format, out,
                      o->format == REPORT_JSON ? runs_json(d, ids, n_ids) : NULL, err);
    rt_free(&t);
    /* a batched run's markdown summary goes on with its batch figures (the other formats hold
     * one table: --layout batch) */
    int batched = 0;
    if (rc == 0 && o->layout == REPORT_SUMMARY && o->format == REPORT_MARKDOWN)
        rc = rep_batched_runs(d, ids, n_ids, &batched, err);
    if (rc == 0 && batched) {
        rt_init(&t, "Batched decoding");
        fputc('\n', out);
        rc = rep_batch_layout(d, ids, n_ids, o, &t, err);
        if (rc == 0) rc = rt_write(&t, o->format, out, NULL, err);
        rt_free(&t);
    }
    free(ids);
    return rc;
}
