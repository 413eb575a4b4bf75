/* plot_batch.c: the `batch` figure: throughput and per-token latency against the batch size
 * (`run --batch B`), one line per decoder, over runs at several batch sizes (by default every
 * complete run of the latest one's model, datasets and max_new: B = 1, 2, 4, ... as run).
 *   throughput   a run's new tokens of the decoder over its wall time: the summed walls of its
 *                batches (batch_samples.batch_wall once per batch) in a batched run, the summed
 *                t_total of its samples in a run without --batch (one sequence at a time);
 *   latency      nearest-rank p50, p90 and p99 over the samples of milliseconds per token after
 *                the first, (t_total - t_prefill) / (new_tokens - 1): what batch_samples'
 *                t_per_token holds for a batched sample.
 * A decoder is its name when the runs hold one spec of it, else its spec. */
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "results/plot/plot_internal.h"
#include "util/err.h"

typedef struct {
    char *spec, *decoder;
    int batch;
    double tput, p[3];
} batch_point;

static double rank_of(const double *v, int n, double q) {
    if (n == 0) return NAN;
    int k = (int)ceil(q * n);
    return v[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_point(const void *a, const void *b) {
    const batch_point *x = a, *y = b;
    int c = strcmp(x->spec, y->spec);
    return c ? c : x->batch - y->batch;
}

/* The points of one run: one per spec. */
static int run_points(sqlite3 *h, int64_t run, batch_point **pts, int *n, int *batched,
                      char *err) {
    sqlite3_stmt *st, *lat;
    if (sqlite3_prepare_v2(
            h,
            "SELECT s.spec, MIN(s.decoder), r.batch, SUM(s.new_tokens), CASE WHEN r.batch > 1 "
            "THEN (SELECT SUM(w) FROM (SELECT DISTINCT b.batch_index, b.batch_wall AS w FROM "
            "batch_samples b JOIN samples s2 ON s2.id = b.sample_id WHERE s2.run_id = r.id AND "
            "s2.spec = s.spec)) ELSE SUM(s.t_total) END FROM runs r JOIN samples s ON s.run_id = "
            "r.id WHERE r.id = ? GROUP BY s.spec ORDER BY MIN(s.id)",
            -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report_plot_data: %s", db_errmsg(h));
    if (sqlite3_prepare_v2(h,
                           "SELECT 1000 * (t_total - t_prefill) / (new_tokens - 1) FROM samples "
                           "WHERE run_id = ? AND spec = ? AND new_tokens > 1 ORDER BY 1",
                           -1, &lat, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return err_set(err, "report_plot_data: %s", db_errmsg(h));
    }
    sqlite3_bind_int64(st, 1, run);
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        batch_point *g = realloc(*pts, sizeof *g * (size_t)(*n + 1));
        if (!g) {
            rc = err_set(err, "report_plot_data: out of memory");
            break;
        }
        *pts = g;
        batch_point *p = &g[(*n)++];
        memset(p, 0, sizeof *p);
        p->spec = strdup((const char *)sqlite3_column_text(st, 0));
        p->decoder = strdup((const char *)sqlite3_column_text(st, 1));
        p->batch = sqlite3_column_int(st, 2);
        double wall = sqlite3_column_double(st, 4);
        p->tput = wall > 0 ? sqlite3_column_double(st, 3) / wall : NAN;
        *batched |= p->batch > 1;
        if (!p->spec || !p->decoder) {
            rc = err_set(err, "report_plot_data: out of memory");
            break;
        }
        double *v = NULL;
        int m = 0;
        sqlite3_reset(lat);
        sqlite3_bind_int64(lat, 1, run);
        sqlite3_bind_text(lat, 2, p->spec, -1, SQLITE_STATIC);
        while (sqlite3_step(lat) == SQLITE_ROW) {
            double *gv = realloc(v, sizeof *v * (size_t)(m + 1));
            if (!gv) break;
            v = gv;
            v[m++] = sqlite3_column_double(lat, 0);
        }
        qsort(v, (size_t)m, sizeof *v, cmp_double);
        static const double q[3] = {0.5, 0.9, 0.99};
        for (int i = 0; i < 3; i++) p->p[i] = rank_of(v, m, q[i]);
        free(v);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(lat);
    return rc;
}

int plot_write_batch(db *d, const report_plot_opts *o, const int64_t *ids, int n_ids, FILE *f,
                     char *err) {
    (void)o;
    batch_point *pts = NULL;
    int n = 0, batched = 0, rc = 0;
    for (int r = 0; rc == 0 && r < n_ids; r++)
        rc = run_points(db_sqlite(d), ids[r], &pts, &n, &batched, err);
    if (rc == 0 && !batched)
        rc = err_set(err, "report_plot_data: no batched run among the runs plotted (the batch "
                          "figure needs runs made with `run --batch B`, B > 1)");
    if (rc == 0) {
        qsort(pts, (size_t)n, sizeof *pts, cmp_point);
        int block = 0;
        for (int i = 0; i < n; i++) {
            if (i == 0 || strcmp(pts[i].spec, pts[i - 1].spec)) {
                int one = 1; /* the decoder's only spec: its name is its title */
                for (int j = 0; j < n; j++)
                    one &= strcmp(pts[j].decoder, pts[i].decoder) || !strcmp(pts[j].spec, pts[i].spec);
                fputs(block++ ? "\n\nbatch\t" : "batch\t", f);
                plot_text(f, one ? pts[i].decoder : pts[i].spec);
                fputs("\tp50_ms\tp90_ms\tp99_ms\n", f);
            }
            fprintf(f, "%d", pts[i].batch); /* plot_num puts the tab before each value */
            plot_num(f, pts[i].tput);
            for (int k = 0; k < 3; k++) plot_num(f, pts[i].p[k]);
            fputc('\n', f);
        }
    }
    for (int i = 0; i < n; i++) free(pts[i].spec), free(pts[i].decoder);
    free(pts);
    return rc;
}
