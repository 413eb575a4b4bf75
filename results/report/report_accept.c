/* report_accept.c: acceptance rate by draft position across a dataset, for the `accept`
 * report layout and the `position` plot.
 *
 * Every verification step that drafted a token at position i (0-based from the first drafted
 * token) counts one try there; it counts one acceptance when the target confirmed it. The rate
 * at a position is sum of acceptances / sum of tries over every sample of the dataset (a ratio
 * of totals, like every figure here), so positions that later prompts reach less often weigh
 * less. This is the curve the speculative-decoding papers plot against gamma: each deeper
 * position is accepted only if every position before it was, so the rates fall with depth. */
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "results/report/report_internal.h"
#include "util/err.h"

int rep_positions(db *d, int64_t run_id, int per_ds, rep_pos **out, int *n, char *err) {
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(d),
                           REP_SAMPLES_CTE
                           "SELECT s.ds, s.spec, MIN(s.decoder), h.kind, h.k, SUM(h.count), "
                           "MIN(s.id) FROM s JOIN histograms h ON h.sample_id = s.id WHERE "
                           "h.kind IN ('pos_tried', 'pos_accepted') GROUP BY s.ds, s.spec, "
                           "h.kind, h.k ORDER BY MIN(s.id)",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report: %s", db_errmsg(db_sqlite(d)));
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, per_ds);
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        const char *ds = (const char *)sqlite3_column_text(st, 0),
                   *spec = (const char *)sqlite3_column_text(st, 1);
        int k = sqlite3_column_int(st, 4);
        if (k < 0 || k >= DEC_HIST_MAX) continue;
        int j = 0;
        while (j < *n && (strcmp((*out)[j].dataset, ds) || strcmp((*out)[j].spec, spec))) j++;
        if (j == *n) {
            rep_pos *g = realloc(*out, sizeof *g * (size_t)(*n + 1));
            if (!g) {
                rc = err_set(err, "report: out of memory");
                break;
            }
            *out = g;
            memset(&g[j], 0, sizeof g[j]);
            g[j].run_id = run_id;
            g[j].dataset = strdup(ds);
            g[j].spec = strdup(spec);
            g[j].decoder = strdup((const char *)sqlite3_column_text(st, 2));
            (*n)++;
            if (!g[j].dataset || !g[j].spec || !g[j].decoder) {
                rc = err_set(err, "report: out of memory");
                break;
            }
        }
        rep_pos *p = &(*out)[j];
        double c = sqlite3_column_double(st, 5);
        if (!strcmp((const char *)sqlite3_column_text(st, 3), "pos_tried"))
            p->tried[k] += c;
        else
            p->accepted[k] += c;
        if (k + 1 > p->n_pos) p->n_pos = k + 1;
    }
    sqlite3_finalize(st);
    if (rc) {
        rep_positions_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void rep_positions_free(rep_pos *p, int n) {
    for (int i = 0; i < n; i++) {
        free(p[i].dataset);
        free(p[i].spec);
        free(p[i].decoder);
        free(p[i].label);
    }
    free(p);
}

double rep_position_rate(const rep_pos *p, int k) {
    return k < p->n_pos && p->tried[k] > 0 ? p->accepted[k] / p->tried[k] : NAN;
}

/* The `accept` layout: one row per dataset x decoder that drafted, the rate (%) at each
 * position, and how many tries the deepest position rests on. */
int rep_accept_layout(db *d, const int64_t *ids, int n_ids, const report_opts *o, rtable *t,
                      char *err) {
    rep_pos *all = NULL;
    int n = 0, max_k = 0;
    for (int r = 0; r < n_ids; r++) {
        rep_pos *p;
        int m;
        if (rep_positions(d, ids[r], 1, &p, &m, err) != 0) {
            rep_positions_free(all, n);
            return -1;
        }
        if (m == 0) continue; /* a run that drafted nothing (greedy's, a sweep's baseline) */
        rep_pos *g = realloc(all, sizeof *g * (size_t)(n + m));
        if (!g) {
            rep_positions_free(p, m);
            rep_positions_free(all, n);
            return err_set(err, "report: out of memory");
        }
        all = g;
        memcpy(all + n, p, sizeof *p * (size_t)m);
        n += m;
        free(p);
    }
    const char **specs = malloc(sizeof *specs * (size_t)(n ? n : 1));
    for (int i = 0; specs && i < n; i++) specs[i] = all[i].spec;
    for (int i = 0; i < n; i++) {
        char lab[1024];
        rep_label_known(all[i].spec, specs, specs ? n : 0, o->default_specs, o->n_default_specs,
                        lab, sizeof lab);
        all[i].label = strdup(lab);
        if (all[i].n_pos > max_k) max_k = all[i].n_pos;
    }
    free(specs);
    if (n == 0) {
        rep_positions_free(all, n);
        return err_set(err, "report: no decoder drafted tokens in the run(s) reported (acceptance "
                            "by position needs spec, ouroboros, lookahead, pld, ...)");
    }
    int c_run = n_ids > 1 ? rt_col_add(t, "run", "run", RT_INT, NULL) : -1;
    int c_ds = rt_col_add(t, "dataset", "dataset", RT_TEXT, NULL);
    int c_lab = rt_col_add(t, "decoder", "label", RT_TEXT, NULL);
    int c_spec = rt_col_add(t, "spec", "spec", RT_TEXT, NULL);
    rt_col_hide(t, c_spec);
    int c0 = t->n_cols;
    for (int k = 0; k < max_k; k++) {
        char h[32], key[32];
        snprintf(h, sizeof h, "pos %d %%", k + 1);
        snprintf(key, sizeof key, "pos%d_pct", k + 1);
        rt_col_add(t, h, key, RT_REAL, "%.1f");
    }
    int c_tries = rt_col_add(t, "tries at 1", "tries_pos1", RT_INT, NULL);
    for (int i = 0; i < n; i++) {
        int r = rt_row_add(t);
        if (c_run >= 0) rt_set_num(t, r, c_run, (double)all[i].run_id);
        rt_set_text(t, r, c_ds, all[i].dataset);
        rt_set_text(t, r, c_lab, all[i].label ? all[i].label : all[i].spec);
        rt_set_text(t, r, c_spec, all[i].spec);
        for (int k = 0; k < all[i].n_pos; k++)
            rt_set_num(t, r, c0 + k, 100 * rep_position_rate(&all[i], k));
        rt_set_num(t, r, c_tries, all[i].tried[0]);
    }
    rt_note(t, "Acceptance rate by draft position: at position k, the drafted tokens the target "
               "confirmed / the drafted tokens at k, summed over every sample of the dataset "
               "(position 1 = the first drafted token of a step; a deeper token counts only when "
               "the step drafted that deep).");
    rep_positions_free(all, n);
    return 0;
}
