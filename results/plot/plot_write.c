/* plot_write.c: what every data file of plot_data.c and plot_paper.c writes the same way:
 * values, text, legends and header rows, error bars, and the figures per spec of the runs. */
#include "results/plot/plot_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/text_escape.h"

void plot_num(FILE *f, double v) {
    if (isnan(v) || isinf(v))
        fputs("\t?", f);
    else
        fprintf(f, "\t%.6g", v);
}

void plot_text(FILE *f, const char *s) {
    if (txt_put(f, txt_tsv, s)) fputc('?', f);
}

/* ---- labels ---------------------------------------------------------------------------------
 * Canonical specs list every parameter ("lookahead:W=15,N=5,G=15,init=..."), far too long for
 * a legend. A legend shows the decoder name plus only the parameters that vary between the
 * plotted specs of that decoder (rep_label_among, as the reports label them). */
#define MAXP 32

static void short_label(char **specs, int n, int i, char *out, size_t len);

void plot_label(const report_plot_opts *o, char **specs, int n, int i, char *out, size_t len) {
    if (o && o->default_specs)
        rep_label_known(specs[i], (const char *const *)specs, n, o->default_specs,
                        o->n_default_specs, out, len);
    else
        short_label(specs, n, i, out, len);
}

void plot_header(FILE *f, const report_plot_opts *o, char **specs, int n, const char *extra) {
    for (int j = 0; j < n; j++) {
        char lab[512];
        plot_label(o, specs, n, j, lab, sizeof lab);
        fputc('\t', f);
        plot_text(f, lab);
        fputs(extra, f);
    }
    fputc('\n', f);
}

const char *plot_errors_what(const report_plot_opts *o) {
    static const char *const what[] = {"sample sd over repeats", "sample sd over prompts", "none"};
    return what[o && (unsigned)o->errors <= REPORT_ERRORS_NONE ? o->errors : 0];
}

double plot_error(const report_plot_opts *o, const rep_stat *s, int e2e) {
    double v = NAN;
    if (o && o->errors == REPORT_ERRORS_REPEATS)
        v = e2e ? s->speedup_e2e_sd : s->speedup_dec_sd;
    else if (o && o->errors == REPORT_ERRORS_PROMPTS)
        v = e2e ? s->speedup_prompt_sd : s->speedup_prompt_sd_dec;
    return isnan(v) ? 0 : v;
}

static void short_label(char **specs, int n, int i, char *out, size_t len) {
    char buf[1024], *k[MAXP], *v[MAXP];
    int np = rep_spec_params(specs[i], buf, sizeof buf, k, v, MAXP);
    size_t name_len = strcspn(specs[i], ":");
    int off = snprintf(out, len, "%.*s", (int)name_len, specs[i]);
    int first = 1;
    for (int j = 0; j < np; j++) {
        int differs = 0;
        for (int o = 0; o < n && !differs; o++) {
            if (o == i || strncmp(specs[o], specs[i], name_len) ||
                (specs[o][name_len] != ':' && specs[o][name_len] != 0))
                continue;
            char b2[1024], *k2[MAXP], *v2[MAXP];
            int n2 = rep_spec_params(specs[o], b2, sizeof b2, k2, v2, MAXP), same = 0;
            for (int q = 0; q < n2 && !same; q++)
                same = !strcmp(k2[q], k[j]) && !strcmp(v2[q], v[j]);
            differs = !same;
        }
        if (differs && off > 0 && (size_t)off < len)
            off += snprintf(out + off, len - (size_t)off, "%s%s=%s", first ? " " : ",", k[j], v[j]);
        if (differs) first = 0;
    }
}

int plot_per_spec(db *d, const int64_t *ids, int n_ids, rep_stat **out, int *n, char *err) {
    *out = NULL;
    *n = 0;
    for (int r = 0; r < n_ids; r++) {
        rep_stat *s;
        int m;
        if (rep_collect(d, ids[r], 1, &s, &m, err) != 0) return -1;
        int has_all = 0;
        for (int i = 0; i < m; i++) has_all |= !strcmp(s[i].dataset, REP_ALL);
        for (int i = 0; i < m; i++) {
            if (has_all != !strcmp(s[i].dataset, REP_ALL)) {
                free(s[i].dataset);
                free(s[i].decoder);
                free(s[i].spec);
                continue;
            }
            rep_stat *g = realloc(*out, (size_t)(*n + 1) * sizeof *g);
            if (!g) {
                rep_stats_free(s + i, m - i);
                return err_set(err, "report_plot_data: out of memory");
            }
            *out = g;
            (*out)[(*n)++] = s[i];
        }
        free(s);
    }
    return 0;
}
