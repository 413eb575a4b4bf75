/* plot_paper.c: the data of the figures a paper on these decoders shows (plots/README.md):
 *   position  acceptance rate by draft position, one line per decoder spec (gamma = 1..8 of a
 *             spec sweep are eight lines): how fast acceptance decays with depth; a second
 *             block holds the conditional rate (accepted at k / accepted at k-1, ik_llama.cpp's
 *             llama-spec-bench: report_accept.c);
 *   tradeoff  tokens per target step against rows per step, one point per spec: what a decoder
 *             gains against what it spends, the trade-off a CPU makes visible;
 *   heatmap   a lookahead sweep's W x N grid: tokens/step and end-to-end speed-up per cell;
 *   ablation  the variants of one decoder: end-to-end speed-up with error bars, tokens/step.
 * Figures come from rep_collect / rep_positions, the numbers the reports print. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/plot/plot_internal.h"
#include "util/text_escape.h"
#include "util/err.h"

#define MAXP 32

/* The distinct specs of s[0..n) in order, into a malloc'd array of borrowed pointers. */
static char **distinct_specs(const rep_stat *s, int n, int skip_greedy, int *out_n) {
    char **specs = calloc((size_t)n + 1, sizeof *specs);
    int k = 0;
    for (int i = 0; specs && i < n; i++) {
        if (skip_greedy && !strcmp(s[i].decoder, "greedy")) continue;
        int seen = 0;
        for (int j = 0; j < k && !seen; j++) seen = !strcmp(specs[j], s[i].spec);
        if (!seen) specs[k++] = s[i].spec;
    }
    *out_n = k;
    return specs;
}

/* ---- position ----------------------------------------------------------------------------- */

int plot_write_position(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                        char *err) {
    rep_pos *all = NULL;
    int n = 0, max_k = 0, rc = 0;
    for (int r = 0; r < n_ids && rc == 0; r++) {
        rep_pos *p;
        int m;
        if (rep_positions(d, ids[r], 0, &p, &m, err) != 0) {
            rc = -1;
            break;
        }
        /* one line per spec over every run: the same spec in two runs adds up */
        for (int i = 0; i < m && rc == 0; i++) {
            int j = 0;
            while (j < n && strcmp(all[j].spec, p[i].spec)) j++;
            if (j < n) {
                for (int k = 0; k < p[i].n_pos; k++) {
                    all[j].tried[k] += p[i].tried[k];
                    all[j].accepted[k] += p[i].accepted[k];
                }
                if (p[i].n_pos > all[j].n_pos) all[j].n_pos = p[i].n_pos;
                continue;
            }
            rep_pos *g = realloc(all, sizeof *g * (size_t)(n + 1));
            if (!g) {
                rc = err_set(err, "report_plot_data: out of memory");
                break;
            }
            all = g;
            all[n] = p[i];
            memset(&p[i], 0, sizeof p[i]); /* moved */
            n++;
        }
        rep_positions_free(p, m);
    }
    if (rc == 0 && n == 0)
        rc = err_set(err, "report_plot_data: no decoder drafted tokens in the runs (acceptance "
                          "by position needs spec, ouroboros, lookahead, pld, ...)");
    char **specs = rc == 0 ? calloc((size_t)n, sizeof *specs) : NULL;
    if (rc == 0 && !specs) rc = err_set(err, "report_plot_data: out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        specs[i] = all[i].spec;
        if (all[i].n_pos > max_k) max_k = all[i].n_pos;
    }
    if (rc == 0) {
        fprintf(f, "# acceptance rate (%%) by draft position, over every sample of the runs: the "
                   "drafted tokens the target confirmed at position k / the drafted tokens at "
                   "k\nposition");
        plot_header(f, o, specs, n, "");
        for (int k = 0; k < max_k; k++) {
            fprintf(f, "%d", k + 1);
            for (int j = 0; j < n; j++) plot_num(f, 100 * rep_position_rate(&all[j], k));
            fputc('\n', f);
        }
        /* block 1 (gnuplot's index 1): the conditional rate, from position 2 on */
        fprintf(f, "\n\n# conditional acceptance rate (%%) by draft position: accepted at k / "
                   "accepted at k-1 (ik_llama.cpp's conditional_acceptance_rate)\nposition");
        plot_header(f, o, specs, n, "");
        for (int k = 1; k < max_k; k++) {
            fprintf(f, "%d", k + 1);
            for (int j = 0; j < n; j++) plot_num(f, 100 * rep_position_cond(&all[j], k));
            fputc('\n', f);
        }
    }
    free(specs);
    rep_positions_free(all, n);
    return rc;
}

/* ---- tradeoff ----------------------------------------------------------------------------- */

int plot_write_tradeoff(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                        char *err) {
    rep_stat *s;
    int n, n_specs;
    if (plot_per_spec(d, ids, n_ids, &s, &n, err) != 0) return -1;
    char **specs = distinct_specs(s, n, 0, &n_specs);
    int rc = specs ? 0 : err_set(err, "report_plot_data: out of memory");
    if (rc == 0 && n_specs < 2)
        rc = err_set(err, "report_plot_data: the trade-off needs a decoder besides greedy");
    if (rc == 0) {
        fprintf(f, "# tokens per target step against rows per decode pass, one point per decoder "
                   "spec; one block per decoder (greedy is (1, 1))\n");
        /* one block per decoder name, in first-seen order */
        char done[64][64];
        int n_done = 0;
        for (int i = 0; i < n_specs && n_done < 64; i++) {
            size_t len = strcspn(specs[i], ":");
            int seen = 0;
            for (int j = 0; j < n_done && !seen; j++)
                seen = strlen(done[j]) == len && !strncmp(done[j], specs[i], len);
            if (seen) continue;
            snprintf(done[n_done++], sizeof done[0], "%.*s", (int)len, specs[i]);
            fprintf(f, "%srows_per_step\t", n_done > 1 ? "\n\n" : "");
            plot_text(f, done[n_done - 1]);
            fputs("\tlabel\n", f);
            for (int j = i; j < n_specs; j++) {
                if (strncmp(specs[j], specs[i], len) ||
                    (specs[j][len] != ':' && specs[j][len] != '\0'))
                    continue;
                double x = NAN, y = NAN;
                for (int q = 0; q < n; q++)
                    if (!strcmp(s[q].spec, specs[j])) {
                        x = rep_rows_per_step(&s[q]);
                        y = rep_tokens_per_step(&s[q]);
                    }
                char lab[512];
                plot_label(o, specs, n_specs, j, lab, sizeof lab);
                fprintf(f, "%.6g", x);
                plot_num(f, y);
                fputc('\t', f);
                plot_text(f, lab);
                fputc('\n', f);
            }
        }
    }
    free(specs);
    rep_stats_free(s, n);
    return rc;
}

/* ---- heatmap ------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorted distinct values of v[0..n) into out; returns their count. */
static int distinct(const double *v, int n, double *out) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < k && !seen; j++) seen = out[j] == v[i];
        if (!seen) out[k++] = v[i];
    }
    qsort(out, (size_t)k, sizeof *out, cmp_double);
    return k;
}

static int index_of(const double *v, int n, double x) {
    for (int i = 0; i < n; i++)
        if (v[i] == x) return i;
    return -1;
}

int plot_write_heatmap(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                       char *err) {
    (void)o;
    rep_stat *s;
    int n;
    if (plot_per_spec(d, ids, n_ids, &s, &n, err) != 0) return -1;
    double *w = calloc((size_t)n + 1, sizeof *w), *nn = calloc((size_t)n + 1, sizeof *nn);
    double *ws = calloc((size_t)n + 1, sizeof *ws), *ns = calloc((size_t)n + 1, sizeof *ns);
    int *of = calloc((size_t)n + 1, sizeof *of), m = 0, rc = 0;
    if (!w || !nn || !ws || !ns || !of) rc = err_set(err, "report_plot_data: out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (strcmp(s[i].decoder, "lookahead")) continue;
        char buf[1024], *k[MAXP], *v[MAXP];
        int np = rep_spec_params(s[i].spec, buf, sizeof buf, k, v, MAXP), has = 0;
        for (int j = 0; j < np; j++) {
            if (!strcmp(k[j], "W")) w[m] = atof(v[j]), has |= 1;
            if (!strcmp(k[j], "N")) nn[m] = atof(v[j]), has |= 2;
        }
        if (has != 3) continue;
        char a[160], b[160];
        for (int j = 0; j < m && rc == 0; j++)
            if (w[j] == w[m] && nn[j] == nn[m])
                rc = err_set(err,
                             "report_plot_data: heatmap: %s and %s share W=%g, N=%g (another "
                             "parameter differs): plot one of them (--run)",
                             txt_plain_buf(a, sizeof a, s[of[j]].spec),
                             txt_plain_buf(b, sizeof b, s[i].spec), w[m], nn[m]);
        of[m++] = i;
    }
    if (rc == 0 && m < 2)
        rc = err_set(err,
                     "report_plot_data: a W x N heatmap needs two or more lookahead specs "
                     "(a sweep such as --grid 'lookahead:W=1,2,4,8;N=2,3,5;G=W'); the runs "
                     "have %d",
                     m);
    if (rc == 0) {
        int nw = distinct(w, m, ws), nnn = distinct(nn, m, ns);
        fprintf(f, "# lookahead W x N: block 0 tokens per target step, block 1 end-to-end speed-up "
                   "over greedy; columns: W index, N index, value, W, N\n");
        for (int b = 0; b < 2; b++) {
            fprintf(f, "%sx\ty\t%s\tW\tN\n", b ? "\n\n" : "",
                    b ? "speed-up over greedy (end-to-end)" : "tokens per target step");
            for (int i = 0; i < m; i++) {
                const rep_stat *x = &s[of[i]];
                fprintf(f, "%d\t%d", index_of(ws, nw, w[i]), index_of(ns, nnn, nn[i]));
                plot_num(f, b ? x->speedup_e2e : rep_tokens_per_step(x));
                fprintf(f, "\t%g\t%g\n", w[i], nn[i]);
            }
        }
    }
    free(w);
    free(nn);
    free(ws);
    free(ns);
    free(of);
    rep_stats_free(s, n);
    return rc;
}

/* ---- ablation ----------------------------------------------------------------------------- */

int plot_write_ablation(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                        char *err) {
    rep_stat *s;
    int n, n_specs;
    if (plot_per_spec(d, ids, n_ids, &s, &n, err) != 0) return -1;
    char **specs = distinct_specs(s, n, 1, &n_specs);
    int rc = specs ? 0 : err_set(err, "report_plot_data: out of memory");
    /* the decoder: o->decoder, else the one with the most specs */
    char name[64] = "";
    if (rc == 0 && o->decoder) {
        snprintf(name, sizeof name, "%s", o->decoder);
    } else if (rc == 0) {
        int best = 1; /* a decoder with two or more variants */
        for (int i = 0; i < n_specs; i++) {
            size_t len = strcspn(specs[i], ":");
            int count = 0;
            for (int j = 0; j < n_specs; j++)
                count += !strncmp(specs[j], specs[i], len) &&
                         (specs[j][len] == ':' || specs[j][len] == '\0');
            if (count > best) best = count, snprintf(name, sizeof name, "%.*s", (int)len, specs[i]);
        }
    }
    int k = 0;
    for (int i = 0; rc == 0 && i < n_specs; i++) { /* keep that decoder's specs */
        size_t len = strlen(name);
        if (!strncmp(specs[i], name, len) && (specs[i][len] == ':' || specs[i][len] == '\0'))
            specs[k++] = specs[i];
    }
    char shown[96];
    if (rc == 0 && k < 2)
        rc = err_set(err, "report_plot_data: an ablation needs two or more variants of %s%s",
                     name[0] ? txt_plain_buf(shown, sizeof shown, name) : "one decoder",
                     name[0] ? "" : " (--grid or several --decoder of the same name)");
    if (rc == 0) {
        fputs("# variants of ", f);
        plot_text(f, name);
        fprintf(f,
                ": end-to-end speed-up over greedy with its error bar (%s; 0 = none) and tokens "
                "per target step\nvariant\tspeedup_e2e\terror\ttokens_per_step\n",
                plot_errors_what(o));
        for (int j = 0; j < k; j++) {
            char lab[512];
            plot_label(o, specs, k, j, lab, sizeof lab);
            double v = NAN, e = 0, t = NAN;
            for (int q = 0; q < n; q++)
                if (!strcmp(s[q].spec, specs[j])) {
                    v = s[q].speedup_e2e;
                    e = plot_error(o, &s[q], 1);
                    t = rep_tokens_per_step(&s[q]);
                }
            plot_text(f, lab);
            plot_num(f, v);
            plot_num(f, e);
            plot_num(f, t);
            fputc('\n', f);
        }
    }
    free(specs);
    rep_stats_free(s, n);
    return rc;
}
