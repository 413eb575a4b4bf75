/* report_table.c: a plain table and its renderings (markdown, CSV, JSON, JSONL, LaTeX).
 *
 * Layouts fill an rtable; this file alone decides how numbers look. Markdown is for people
 * (rounded, aligned, units in the header); CSV and JSON are for programs (10 significant
 * digits, machine keys, missing values empty / null rather than "-"). Every text (cells,
 * headers, keys, notes, title) is written through its format's function of text_escape.h. */
#include "results/report/report_internal.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/text_escape.h"
#include "util/err.h"

static char *dup_or_null(rtable *t, const char *s) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) t->oom = 1;
    return d;
}

void rt_init(rtable *t, const char *title) {
    memset(t, 0, sizeof *t);
    t->title = dup_or_null(t, title);
}

void rt_free(rtable *t) {
    free(t->title);
    for (int i = 0; i < t->n_notes; i++) free(t->notes[i]);
    free(t->notes);
    for (int c = 0; c < t->n_cols; c++) {
        free(t->cols[c].header);
        free(t->cols[c].key);
        free(t->cols[c].md_fmt);
    }
    free(t->cols);
    for (int i = 0; i < t->n_rows * t->n_cols; i++) free(t->cells[i].text);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

void rt_note(rtable *t, const char *fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **n = realloc(t->notes, (size_t)(t->n_notes + 1) * sizeof *n);
    if (!n) {
        t->oom = 1;
        return;
    }
    t->notes = n;
    t->notes[t->n_notes] = dup_or_null(t, buf);
    if (t->notes[t->n_notes]) t->n_notes++;
}

int rt_col_add(rtable *t, const char *header, const char *key, rt_kind kind, const char *md_fmt) {
    /* Columns are added before rows (layouts know their columns up front). */
    if (t->n_rows > 0) {
        t->oom = 1;
        return -1;
    }
    rt_col *c = realloc(t->cols, (size_t)(t->n_cols + 1) * sizeof *c);
    if (!c) {
        t->oom = 1;
        return -1;
    }
    t->cols = c;
    c = &t->cols[t->n_cols];
    c->header = dup_or_null(t, header);
    c->key = dup_or_null(t, key);
    c->kind = kind;
    c->md_fmt = dup_or_null(t, md_fmt ? md_fmt : "%.2f");
    c->sd = -1;
    c->hidden = 0;
    return t->n_cols++;
}

void rt_col_pair(rtable *t, int mean, int sd) {
    if (mean < 0 || sd < 0 || mean >= t->n_cols || sd >= t->n_cols) return;
    t->cols[mean].sd = sd;
    t->cols[sd].hidden = 1;
}

void rt_col_hide(rtable *t, int col) {
    if (col >= 0 && col < t->n_cols) t->cols[col].hidden = 1;
}

int rt_row_add(rtable *t) {
    if (t->n_rows == t->cap_rows) {
        int cap = t->cap_rows ? 2 * t->cap_rows : 16;
        rt_cell *c = realloc(t->cells, (size_t)cap * (size_t)t->n_cols * sizeof *c);
        if (!c) {
            t->oom = 1;
            return -1;
        }
        t->cells = c;
        t->cap_rows = cap;
    }
    rt_cell *row = &t->cells[(size_t)t->n_rows * (size_t)t->n_cols];
    for (int c = 0; c < t->n_cols; c++) row[c] = (rt_cell){NULL, NAN};
    return t->n_rows++;
}

void rt_set_text(rtable *t, int row, int col, const char *s) {
    if (row < 0 || col < 0) return;
    rt_cell *c = &t->cells[(size_t)row * (size_t)t->n_cols + (size_t)col];
    free(c->text);
    c->text = dup_or_null(t, s);
}

void rt_set_num(rtable *t, int row, int col, double v) {
    if (row < 0 || col < 0) return;
    t->cells[(size_t)row * (size_t)t->n_cols + (size_t)col].num = v;
}

static const rt_cell *cell(const rtable *t, int r, int c) {
    return &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)c];
}

/* A cell as text for people ("-" when missing) into buf; a paired column's cell reads
 * "mean ± sd" (pm: the text between the two). */
static const char *md_cell_pm(const rtable *t, int r, int c, char *buf, size_t n, const char *pm) {
    const rt_cell *x = cell(t, r, c);
    const rt_col *col = &t->cols[c];
    if (col->kind == RT_TEXT || col->kind == RT_VALUE) return x->text ? x->text : "-";
    if (isnan(x->num)) return "-";
    int len;
    if (col->kind == RT_INT)
        len = snprintf(buf, n, "%.0f", x->num);
    else
        len = snprintf(buf, n, col->md_fmt, x->num);
    const rt_cell *sd = col->sd >= 0 ? cell(t, r, col->sd) : NULL;
    if (sd && !isnan(sd->num) && len > 0 && (size_t)len < n) {
        int k = snprintf(buf + len, n - (size_t)len, "%s", pm);
        if (k > 0) len += k;
        if ((size_t)len < n) snprintf(buf + len, n - (size_t)len, t->cols[col->sd].md_fmt, sd->num);
    }
    return buf;
}

static const char *md_cell(const rtable *t, int r, int c, char *buf, size_t n) {
    return md_cell_pm(t, r, c, buf, n, " ± ");
}

static int is_text(const rt_col *c) {
    return c->kind == RT_TEXT || c->kind == RT_VALUE;
}

/* Width in characters of escaped text: UTF-8 continuation bytes do not count. */
static int md_len(const char *s) {
    int len = 0;
    for (const char *p = s; *p; p++) len += ((unsigned char)*p & 0xC0) != 0x80;
    return len;
}

/* A cell, header or note as Markdown text (txt_md: '|' and control characters escaped), padded
 * to width. Returns -1 when out of memory. */
static int md_put(FILE *out, const char *s, int width, int right) {
    char *e = txt_md(s);
    if (!e) return -1;
    int len = md_len(e);
    if (right)
        for (int i = len; i < width; i++) fputc(' ', out);
    fputs(e, out);
    if (!right)
        for (int i = len; i < width; i++) fputc(' ', out);
    free(e);
    return 0;
}

/* The width s takes once escaped, -1 when out of memory. */
static int md_width(const char *s) {
    char *e = txt_md(s);
    int len = e ? md_len(e) : -1;
    free(e);
    return len;
}

static int write_md(const rtable *t, FILE *out) {
    int bad = 0;
    if (t->title) {
        fputs("## ", out);
        bad |= md_put(out, t->title, 0, 0);
        fputs("\n\n", out);
    }
    for (int i = 0; i < t->n_notes; i++) {
        bad |= md_put(out, t->notes[i], 0, 0);
        fputs("  \n", out);
    }
    if (t->n_notes) fputc('\n', out);
    int *w = calloc((size_t)t->n_cols, sizeof *w);
    if (!w) return -1;
    char buf[256];
    for (int c = 0; c < t->n_cols; c++) {
        w[c] = md_width(t->cols[c].header);
        if (w[c] < 3) w[c] = 3;
        for (int r = 0; r < t->n_rows; r++) {
            int l = md_width(md_cell(t, r, c, buf, sizeof buf));
            if (l < 0) bad = -1;
            if (l > w[c]) w[c] = l;
        }
    }
    fputc('|', out);
    for (int c = 0; c < t->n_cols; c++) {
        if (t->cols[c].hidden) continue;
        fputc(' ', out);
        bad |= md_put(out, t->cols[c].header, w[c], !is_text(&t->cols[c]));
        fputs(" |", out);
    }
    fputs("\n|", out);
    for (int c = 0; c < t->n_cols; c++) {
        if (t->cols[c].hidden) continue;
        fputc(is_text(&t->cols[c]) ? ':' : ' ', out);
        for (int i = 0; i < w[c]; i++) fputc('-', out);
        fputs(is_text(&t->cols[c]) ? " |" : ":|", out);
    }
    fputc('\n', out);
    for (int r = 0; r < t->n_rows; r++) {
        fputc('|', out);
        for (int c = 0; c < t->n_cols; c++) {
            if (t->cols[c].hidden) continue;
            fputc(' ', out);
            bad |= md_put(out, md_cell(t, r, c, buf, sizeof buf), w[c], !is_text(&t->cols[c]));
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
    free(w);
    return bad ? -1 : 0;
}

/* RFC 4180 fields through txt_csv: decoder specs ("lookahead:W=15,N=5,G=15") are quoted; a
 * line break is escaped, so every record is one line. */
static int write_csv(const rtable *t, FILE *out) {
    int bad = 0;
    for (int c = 0; c < t->n_cols; c++) {
        if (c) fputc(',', out);
        bad |= txt_put(out, txt_csv, t->cols[c].key);
    }
    fputc('\n', out);
    for (int r = 0; r < t->n_rows; r++) {
        for (int c = 0; c < t->n_cols; c++) {
            if (c) fputc(',', out);
            const rt_cell *x = cell(t, r, c);
            if (is_text(&t->cols[c])) {
                if (x->text) bad |= txt_put(out, txt_csv, x->text);
            } else if (!isnan(x->num)) {
                fprintf(out, t->cols[c].kind == RT_INT ? "%.0f" : "%.10g", x->num);
            }
        }
        fputc('\n', out);
    }
    return bad ? -1 : 0;
}

/* A row as a JSON object keyed by column key (missing = null). */
static json_t *json_row(const rtable *t, int r) {
    json_t *o = json_object();
    for (int c = 0; o && c < t->n_cols; c++) {
        const rt_cell *x = cell(t, r, c);
        json_t *v;
        char *end = NULL;
        long long iv = x->text ? strtoll(x->text, &end, 10) : 0;
        if (t->cols[c].kind == RT_VALUE && x->text && *x->text && end && !*end)
            v = json_integer(iv);
        else if (is_text(&t->cols[c]))
            v = x->text ? txt_json(x->text) : json_null();
        else if (isnan(x->num) || isinf(x->num))
            v = json_null();
        else if (t->cols[c].kind == RT_INT)
            v = json_integer((json_int_t)x->num);
        else
            v = json_real(x->num);
        /* a key holds a dataset's name (paper layout: "<dataset>_tps"): valid UTF-8 too */
        char *key = txt_utf8(t->cols[c].key);
        if (!v || !key || json_object_set_new(o, key, v)) {
            free(key);
            json_decref(o);
            return NULL;
        }
        free(key);
    }
    return o;
}

static int write_jsonl(const rtable *t, FILE *out, char *err) {
    for (int r = 0; r < t->n_rows; r++) {
        json_t *o = json_row(t, r);
        if (!o) return err_set(err, "report: out of memory");
        int rc = json_dumpf(o, out, JSON_COMPACT | JSON_REAL_PRECISION(10) | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (rc) return err_set(err, "report: cannot write JSONL");
        fputc('\n', out);
    }
    return 0;
}

/* A LaTeX cell: text through txt_tex (the specials and control characters escaped, "±" as
 * $\pm$); a number's "x" after a digit (a speed-up) as $\times$. */
static int tex_put(FILE *out, const char *s, int number) {
    if (!number) return txt_put(out, txt_tex, s);
    for (const char *p = s; *p; p++) {
        if (*p == 'x' && p > s && p[-1] >= '0' && p[-1] <= '9') {
            fputs("$\\times$", out);
        } else if (!strncmp(p, "±", strlen("±"))) {
            fputs("$\\pm$", out);
            p += strlen("±") - 1;
        } else {
            char one[2] = {*p, 0};
            if (txt_put(out, txt_tex, one)) return -1;
        }
    }
    return 0;
}

/* Comment lines too go through txt_tex: a line break or carriage return in a note would end
 * the comment, and what follows would run as TeX. */
static int write_latex(const rtable *t, FILE *out) {
    int bad = 0;
    fprintf(out, "%% decbench report%s", t->title ? ": " : "");
    if (t->title) bad |= txt_put(out, txt_tex, t->title);
    fputc('\n', out);
    for (int i = 0; i < t->n_notes; i++) {
        fputs("% ", out);
        bad |= txt_put(out, txt_tex, t->notes[i]);
        fputc('\n', out);
    }
    fputs("% needs \\usepackage{booktabs}\n\\begin{table}[t]\n\\centering\n", out);
    if (t->title) {
        fputs("\\caption{", out);
        bad |= tex_put(out, t->title, 0);
        fputs("}\n", out);
    }
    fputs("\\begin{tabular}{", out);
    for (int c = 0; c < t->n_cols; c++)
        if (!t->cols[c].hidden) fputc(is_text(&t->cols[c]) ? 'l' : 'r', out);
    fputs("}\n\\toprule\n", out);
    const char *sep = "";
    for (int c = 0; c < t->n_cols; c++) {
        if (t->cols[c].hidden) continue;
        fputs(sep, out);
        bad |= tex_put(out, t->cols[c].header, 0);
        sep = " & ";
    }
    fputs(" \\\\\n\\midrule\n", out);
    char buf[256];
    for (int r = 0; r < t->n_rows; r++) {
        sep = "";
        for (int c = 0; c < t->n_cols; c++) {
            if (t->cols[c].hidden) continue;
            fputs(sep, out);
            bad |= tex_put(out, md_cell(t, r, c, buf, sizeof buf), !is_text(&t->cols[c]));
            sep = " & ";
        }
        fputs(" \\\\\n", out);
    }
    fputs("\\bottomrule\n\\end{tabular}\n\\end{table}\n", out);
    return bad ? -1 : 0;
}

static int write_json(const rtable *t, FILE *out, json_t *extra, char *err) {
    json_t *root = json_object(), *cols = json_array(), *rows = json_array(), *notes = json_array();
    if (!root || !cols || !rows || !notes) goto oom;
    json_object_set_new(root, "title", t->title ? txt_json(t->title) : json_null());
    for (int i = 0; i < t->n_notes; i++)
        if (json_array_append_new(notes, txt_json(t->notes[i]))) goto oom;
    json_object_set_new(root, "notes", notes);
    notes = NULL;
    for (int c = 0; c < t->n_cols; c++) {
        static const char *kinds[] = {"text", "int", "real", "value"};
        if (json_array_append_new(
                cols, json_pack("{s:o, s:o, s:s}", "key", txt_json(t->cols[c].key), "header",
                                txt_json(t->cols[c].header), "type", kinds[t->cols[c].kind])))
            goto oom;
    }
    json_object_set_new(root, "columns", cols);
    cols = NULL;
    for (int r = 0; r < t->n_rows; r++) {
        json_t *o = json_row(t, r);
        if (!o) goto oom;
        json_array_append_new(rows, o);
    }
    json_object_set_new(root, "rows", rows);
    rows = NULL;
    if (extra) json_object_set_new(root, "runs", extra);
    extra = NULL;
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(root);
    return rc == 0 ? 0 : err_set(err, "report: cannot write JSON");
oom:
    json_decref(root);
    json_decref(cols);
    json_decref(rows);
    json_decref(notes);
    json_decref(extra);
    return err_set(err, "report: out of memory");
}

int rt_write(const rtable *t, report_format f, FILE *out, struct json_t *extra, char *err) {
    if (t->oom) {
        json_decref(extra);
        return err_set(err, "report: out of memory building the table");
    }
    if (f == REPORT_JSON) return write_json(t, out, extra, err);
    json_decref(extra);
    if (f == REPORT_JSONL) {
        if (write_jsonl(t, out, err)) return -1;
    } else if (f == REPORT_CSV     ? write_csv(t, out)
               : f == REPORT_LATEX ? write_latex(t, out)
                                   : write_md(t, out)) {
        return err_set(err, "report: out of memory writing the table");
    }
    if (ferror(out)) return err_set(err, "report: write error: %s", strerror(errno));
    return 0;
}
