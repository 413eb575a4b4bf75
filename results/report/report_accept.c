/* report_accept.c: acceptance by speculative position across a dataset, for the `accept`
 * report layout and the `position` plot, the figures ik_llama.cpp's llama-spec-bench and
 * SPEED-Bench report (ikawrakow/ik_llama.cpp@8337e4c examples/spec-bench/spec-bench.cpp:530-565:
 * drafted_by_position, accepted_by_position, acceptance_rate_by_position,
 * conditional_acceptance_rate), for every decoder that drafts.
 *
 * Every verification step that drafted a token at position i (0-based from the first drafted
 * token) counts one try there (drafted at i); it counts one acceptance when the target
 * confirmed it (accepted at i). Both are stored per sample (histograms pos_tried and
 * pos_accepted, schema.sql) and summed over every sample of the dataset (ratios of totals, like
 * every figure here), so positions that later prompts reach less often weigh less.
 *   rate at i          accepted at i / drafted at i (spec-bench.cpp:541): the curve the
 *                      speculative-decoding papers plot against gamma;
 *   conditional at i   accepted at i / accepted at i - 1 (spec-bench.cpp:542-549; none at the
 *                      first position): the chance that a step which got this far accepts one
 *                      more. A step accepts a prefix of its draft, so it accepted at i - 1
 *                      exactly when it accepted at least i tokens; when such a step drafted no
 *                      i-th token (a draft of exactly i tokens, all accepted) it still counts in
 *                      the denominator, as in ik_llama.cpp, and the figure is then below the
 *                      chance of accepting a drafted i-th token. */
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

double rep_position_cond(const rep_pos *p, int k) {
    return k > 0 && k < p->n_pos && p->accepted[k - 1] > 0 ? p->accepted[k] / p->accepted[k - 1]
                                                           : NAN;
}

/* The `accept` layout: one row per dataset x decoder that drafted: the rate (%) at each
 * position, the conditional rate (%) from the second on, how many tries the first position
 * rests on, and (CSV and JSON only) the drafted and accepted counts at each position. */
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
    int c_cond = t->n_cols; /* cond k % for k = 2..max_k */
    for (int k = 1; k < max_k; k++) {
        char h[32], key[32];
        snprintf(h, sizeof h, "cond %d %%", k + 1);
        snprintf(key, sizeof key, "cond%d_pct", k + 1);
        rt_col_add(t, h, key, RT_REAL, "%.1f");
    }
    int c_tries = rt_col_add(t, "tries at 1", "tries_pos1", RT_INT, NULL);
    int c_counts = t->n_cols; /* drafted k, accepted k: machine columns */
    for (int k = 0; k < max_k; k++) {
        char h[32], key[32];
        snprintf(h, sizeof h, "drafted %d", k + 1);
        snprintf(key, sizeof key, "drafted_pos%d", k + 1);
        rt_col_hide(t, rt_col_add(t, h, key, RT_INT, NULL));
        snprintf(h, sizeof h, "accepted %d", k + 1);
        snprintf(key, sizeof key, "accepted_pos%d", k + 1);
        rt_col_hide(t, rt_col_add(t, h, key, RT_INT, NULL));
    }
    for (int i = 0; i < n; i++) {
        int r = rt_row_add(t);
        if (c_run >= 0) rt_set_num(t, r, c_run, (double)all[i].run_id);
        rt_set_text(t, r, c_ds, all[i].dataset);
        rt_set_text(t, r, c_lab, all[i].label ? all[i].label : all[i].spec);
        rt_set_text(t, r, c_spec, all[i].spec);
        for (int k = 0; k < all[i].n_pos; k++) {
            rt_set_num(t, r, c0 + k, 100 * rep_position_rate(&all[i], k));
            if (k > 0) rt_set_num(t, r, c_cond + k - 1, 100 * rep_position_cond(&all[i], k));
            rt_set_num(t, r, c_counts + 2 * k, all[i].tried[k]);
            rt_set_num(t, r, c_counts + 2 * k + 1, all[i].accepted[k]);
        }
        rt_set_num(t, r, c_tries, all[i].tried[0]);
    }
    rt_note(t, "Acceptance by speculative position, as ik_llama.cpp's llama-spec-bench reports it "
               "(examples/spec-bench/spec-bench.cpp:530-565): position 1 = the first drafted "
               "token of a step; drafted k = the steps that drafted a k-th token, accepted k = "
               "those whose k-th token the target confirmed (per sample in the histograms "
               "table, summed over the dataset; CSV and JSON: drafted_posK, accepted_posK).");
    rt_note(t, "pos k %%: accepted k / drafted k. cond k %%: accepted k / accepted k-1, the "
               "chance that a step which accepted k-1 tokens accepts a k-th; a step that drafted "
               "exactly k-1 tokens and accepted them all counts in its denominator (as in "
               "ik_llama.cpp), so with drafts of varying length it is below the rate among steps "
               "that drafted a k-th token.");
    rep_positions_free(all, n);
    return 0;
}
