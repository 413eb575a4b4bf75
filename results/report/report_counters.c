/* report_counters.c: the counters layout (`report --layout counters`): every counter of every
 * dataset x decoder, raw, with its definition.
 *
 * The other layouts show figures derived from the counters (tok/s, tokens/step, ...); this one
 * shows the counters themselves: first the framework counters (the list of stats/stats.h, in
 * list order, aggregated as the list says, from rep_collect), then the decoder's own counters
 * (counters table, named "decoder.name", aggregated as counter_defs says, in the decoder's
 * table order). So a counter added to the list or to a decoder's table is reported without a
 * change here. */
#include "results/report/report_internal.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* The decoder counters of (run, ds, spec): ?1 run, ?2 per dataset, ?3 ds, ?4 spec. */
static const char DECODER_COUNTERS_SQL[] = REP_SAMPLES_CTE
    "SELECT s.decoder || '.' || c.name, COALESCE(d.aggregation, 'sum'), "
    "COALESCE(d.deterministic, 0), COALESCE(d.definition, '(no definition stored)'), "
    "CASE COALESCE(d.aggregation, 'sum') WHEN 'mean' THEN AVG(c.value) "
    "WHEN 'max' THEN MAX(c.value) ELSE SUM(c.value) END, COUNT(*) "
    "FROM s JOIN counters c ON c.sample_id = s.id "
    "LEFT JOIN counter_defs d ON d.decoder = s.decoder AND d.name = c.name "
    "WHERE s.ds = ?3 AND s.spec = ?4 GROUP BY s.decoder, c.name "
    "ORDER BY s.decoder, MIN(COALESCE(d.position, 0)), c.name";

typedef struct {
    int run, ds, spec, name, value, per_sample, agg, compared, def;
} columns;

static void add_row(rtable *t, const columns *c, const rep_stat *s, const char *name, double v,
                    long n, const char *agg, int det, const char *def) {
    int r = rt_row_add(t);
    if (c->run >= 0) rt_set_num(t, r, c->run, (double)s->run_id);
    rt_set_text(t, r, c->ds, s->dataset);
    rt_set_text(t, r, c->spec, s->spec);
    rt_set_text(t, r, c->name, name);
    rt_set_num(t, r, c->value, v);
    rt_set_num(t, r, c->per_sample, !strcmp(agg, "sum") && n > 0 ? v / (double)n : NAN);
    rt_set_text(t, r, c->agg, agg);
    rt_set_text(t, r, c->compared, det ? "exact" : "no");
    rt_set_text(t, r, c->def, def);
}

int rep_counters(db *d, const rep_stat *s, int n, int multi_run, rtable *t, char *err) {
    columns c;
    c.run = multi_run ? rt_col_add(t, "run", "run", RT_INT, NULL) : -1;
    c.ds = rt_col_add(t, "dataset", "dataset", RT_TEXT, NULL);
    c.spec = rt_col_add(t, "decoder", "spec", RT_TEXT, NULL);
    c.name = rt_col_add(t, "counter", "counter", RT_TEXT, NULL);
    c.value = rt_col_add(t, "value", "value", RT_REAL, "%.10g");
    c.per_sample = rt_col_add(t, "per sample", "per_sample", RT_REAL, "%.4g");
    c.agg = rt_col_add(t, "over samples", "aggregation", RT_TEXT, NULL);
    c.compared = rt_col_add(t, "compare", "compared", RT_TEXT, NULL);
    c.def = rt_col_add(t, "definition", "definition", RT_TEXT, NULL);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(d), DECODER_COUNTERS_SQL, -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report: counters query: %s", db_errmsg(db_sqlite(d)));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < STAT_N_COUNTERS; k++) {
            const stat_def *def = &stat_counters[k];
            add_row(t, &c, &s[i], def->name, s[i].c[k], s[i].n_samples, stat_agg_name(def->agg),
                    def->det == STAT_DET, def->definition);
        }
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, s[i].run_id);
        sqlite3_bind_int(st, 2, strcmp(s[i].dataset, REP_ALL) != 0);
        sqlite3_bind_text(st, 3, s[i].dataset, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, s[i].spec, -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW)
            add_row(t, &c, &s[i], (const char *)sqlite3_column_text(st, 0),
                    sqlite3_column_double(st, 4), sqlite3_column_int(st, 5),
                    (const char *)sqlite3_column_text(st, 1), sqlite3_column_int(st, 2),
                    (const char *)sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    rt_note(t, "Every counter, aggregated over the samples of each dataset x decoder as its "
               "definition says (sum, mean or max; per sample = sum / samples). Framework "
               "counters (every decoder) first, then the decoder's own, named "
               "decoder.counter. compare: exact = `compare` and the CI gate require equality.");
    return 0;
}
