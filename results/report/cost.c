/* cost.c: forward-cost curves: reading them (CSV versions 1 to 3, the cost table) and
 * interpolating t(rows, context, logit rows) (the model is in cost.h). */
#include "results/report/cost.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/db/db_internal.h"
#include "results/report/report.h"
#include "util/err.h"
#include "util/file.h"

#define MAX_POINTS 4096
/* The largest batch size a curve may state (`cost --batch` measures up to 256). */
#define COST_MAX_BATCH 4096

typedef struct {
    double rows, context, logit_rows, secs; /* context < 0: not recorded */
} point;

/* One measured context of the body B(r, c): its rows ascending. */
typedef struct {
    double context;
    int n;
    double *rows, *secs;
} level;

struct cost_curve {
    int grid;  /* 1: contexts and logit rows modelled (version 2) */
    level *lv; /* grid: contexts ascending; version 1: one level, context unknown */
    int n_lv;
    double *k_logits, *k_secs; /* K(L) at measured L, ascending, K(1) = 0 included */
    int n_k;
    int n_points;
    int batch;    /* sequences a pass (cost.h, batched curves) */
    double floor; /* the smallest measured seconds / 1000 */
    char source[4200];
};

static double lerp(const double *x, const double *y, int n, double at) {
    if (n == 1) return y[0];
    int i = 0;
    while (i < n - 2 && at > x[i + 1]) i++;
    return y[i] + (y[i + 1] - y[i]) * (at - x[i]) / (x[i + 1] - x[i]);
}

double cost_curve_t(const cost_curve *c, double rows, double context, double logit_rows) {
    double t;
    if (!c->grid) {
        t = lerp(c->lv[0].rows, c->lv[0].secs, c->lv[0].n, rows);
    } else {
        /* B at each bracketing context, then along the context; K by the logit rows. */
        int i = 0;
        while (i < c->n_lv - 2 && context > c->lv[i + 1].context) i++;
        const level *a = &c->lv[i];
        double ba = lerp(a->rows, a->secs, a->n, rows);
        if (c->n_lv == 1) {
            t = ba;
        } else {
            const level *b = &c->lv[i + 1];
            double bb = lerp(b->rows, b->secs, b->n, rows);
            t = ba + (bb - ba) * (context - a->context) / (b->context - a->context);
        }
        if (c->n_k > 1) t += lerp(c->k_logits, c->k_secs, c->n_k, logit_rows);
    }
    return t > c->floor ? t : c->floor;
}

/* sum over integer x in [x0, x1] of max(fl, a + b x) */
static double sum_clamped(double a, double b, double fl, double x0, double x1) {
    if (x1 < x0) return 0;
    double lin0 = x0, lin1 = x1; /* where a + b x >= floor */
    if (b == 0) {
        if (a < fl) lin1 = x0 - 1;
    } else {
        double cross = (fl - a) / b;
        if (b > 0 && cross > x0) lin0 = fmin(ceil(cross), x1 + 1);
        if (b < 0 && cross < x1) lin1 = fmax(floor(cross), x0 - 1);
    }
    double m = lin1 - lin0 + 1, sum = 0;
    if (m > 0) sum = m * a + b * (lin0 + lin1) * m / 2;
    return sum + fl * ((x1 - x0 + 1) - (m > 0 ? m : 0));
}

double cost_curve_greedy(const cost_curve *c, int64_t prompt, int64_t n) {
    /* up to this many passes the terms are added one by one (every real sample: the figures
     * stay exactly what they were); beyond, per segment of the curve in closed form, so that
     * no count read from a database can make the sum take long */
    enum { EXACT_PASSES = 1 << 16 };
    double sum = 0;
    if (n - 1 <= EXACT_PASSES) {
        for (int64_t i = 0; i + 1 < n; i++) sum += cost_curve_t(c, 1, (double)(prompt + i), 1);
        return sum;
    }
    double x0 = (double)prompt, x1 = (double)(prompt + n - 2);
    if (!c->grid || c->n_lv == 1) /* constant in the context */
        return (x1 - x0 + 1) * cost_curve_t(c, 1, x0, 1);
    double k1 = c->n_k > 1 ? lerp(c->k_logits, c->k_secs, c->n_k, 1) : 0;
    for (int i = 0; i + 1 < c->n_lv; i++) { /* segment i: cost_curve_t's choice of levels */
        const level *a = &c->lv[i], *b = &c->lv[i + 1];
        double lo = i == 0 ? x0 : fmax(x0, floor(a->context) + 1);
        double hi = i + 2 == c->n_lv ? x1 : fmin(x1, floor(b->context));
        double ba = lerp(a->rows, a->secs, a->n, 1), bb = lerp(b->rows, b->secs, b->n, 1);
        double slope = (bb - ba) / (b->context - a->context);
        sum += sum_clamped(ba - slope * a->context + k1, slope, c->floor, lo, hi);
    }
    return sum;
}

const char *cost_curve_source(const cost_curve *c) {
    return c->source;
}
int cost_curve_batch(const cost_curve *c) {
    return c->batch;
}
int cost_curve_is_grid(const cost_curve *c) {
    return c->grid;
}
int cost_curve_points(const cost_curve *c) {
    return c->n_points;
}

void cost_curve_range(const cost_curve *c, double *rows_lo, double *rows_hi, double *ctx_lo,
                      double *ctx_hi) {
    *rows_lo = INFINITY, *rows_hi = 0;
    for (int i = 0; i < c->n_lv; i++) {
        *rows_lo = fmin(*rows_lo, c->lv[i].rows[0]);
        *rows_hi = fmax(*rows_hi, c->lv[i].rows[c->lv[i].n - 1]);
    }
    *ctx_lo = c->grid ? c->lv[0].context : 0;
    *ctx_hi = c->grid ? c->lv[c->n_lv - 1].context : 0;
}

void cost_curve_free(cost_curve *c) {
    if (!c) return;
    for (int i = 0; i < c->n_lv; i++) free(c->lv[i].rows), free(c->lv[i].secs);
    free(c->lv);
    free(c->k_logits);
    free(c->k_secs);
    free(c);
}

static int cmp_point(const void *a, const void *b) {
    const point *p = a, *q = b;
    if (p->context != q->context) return p->context < q->context ? -1 : 1;
    if (p->rows != q->rows) return p->rows < q->rows ? -1 : 1;
    return (p->logit_rows > q->logit_rows) - (p->logit_rows < q->logit_rows);
}

/* The body B(r, c) of a version 2 curve at a measured point, or NAN. */
static double body_at(const cost_curve *c, double rows, double context) {
    for (int i = 0; i < c->n_lv; i++)
        if (c->lv[i].context == context)
            for (int j = 0; j < c->lv[i].n; j++)
                if (c->lv[i].rows[j] == rows) return c->lv[i].secs[j];
    return NAN;
}

/* Builds the curve from its points (sorted here). where names the source in messages. */
static int build(cost_curve *c, point *p, int n, const char *where, char *err) {
    if (n == 0) return err_set(err, "report: cost source %s has no points", where);
    qsort(p, (size_t)n, sizeof *p, cmp_point);
    c->n_points = n;
    c->grid = p[0].context >= 0;
    double lo = INFINITY;
    for (int i = 0; i < n; i++) {
        if ((p[i].context >= 0) != c->grid)
            return err_set(err,
                           "report: cost source %s mixes points with a context and points "
                           "without one (a version 1 and a version 2 curve?)",
                           where);
        if (i && cmp_point(&p[i - 1], &p[i]) == 0) {
            if (c->grid)
                return err_set(err,
                               "report: cost source %s: rows %g, context %g, logit rows %g given "
                               "twice",
                               where, p[i].rows, p[i].context, p[i].logit_rows);
            return err_set(err, "report: cost source %s: rows %g given twice", where, p[i].rows);
        }
        lo = fmin(lo, p[i].secs);
    }
    c->floor = lo * 1e-3;
    /* Levels: version 1 keeps every point; version 2 the body points (one row's logits, or none
     * measured otherwise at rows 1). */
    c->lv = calloc((size_t)n, sizeof *c->lv);
    c->k_logits = malloc(sizeof(double) * (size_t)(n + 1));
    c->k_secs = malloc(sizeof(double) * (size_t)(n + 1));
    if (!c->lv || !c->k_logits || !c->k_secs) return err_set(err, "report: out of memory");
    /* a grid of every row's logits only (`cost --logits all`): the body is every point, and
     * the logit rows are not modelled */
    int every_row = 1;
    for (int i = 0; i < n; i++) every_row &= p[i].logit_rows == p[i].rows;
    for (int i = 0; i < n; i++) {
        if (c->grid && !every_row && p[i].logit_rows != 1) continue;
        level *l = c->n_lv ? &c->lv[c->n_lv - 1] : NULL;
        if (!l || (c->grid && l->context != p[i].context)) {
            l = &c->lv[c->n_lv++];
            l->context = p[i].context;
            l->rows = malloc(sizeof(double) * (size_t)n);
            l->secs = malloc(sizeof(double) * (size_t)n);
            if (!l->rows || !l->secs) return err_set(err, "report: out of memory");
        }
        l->rows[l->n] = p[i].rows;
        l->secs[l->n++] = p[i].secs;
    }
    if (c->n_lv == 0)
        return err_set(err,
                       "report: cost source %s has no point with one row's logits (logit_rows 1), "
                       "which the curve's body is read from",
                       where);
    if (!c->grid || every_row) return 0;
    /* K(L): the mean over points with L logit rows of their excess over the body there. */
    c->k_logits[0] = 1, c->k_secs[0] = 0, c->n_k = 1;
    for (int i = 0; i < n; i++) {
        if (p[i].logit_rows == 1) continue;
        double b = body_at(c, p[i].rows, p[i].context);
        if (isnan(b))
            return err_set(err,
                           "report: cost source %s: rows %g, context %g, logit rows %g has no "
                           "point with logit rows 1 at the same rows and context",
                           where, p[i].rows, p[i].context, p[i].logit_rows);
        int k = 0;
        while (k < c->n_k && c->k_logits[k] < p[i].logit_rows) k++;
        if (k == c->n_k || c->k_logits[k] != p[i].logit_rows) {
            memmove(c->k_logits + k + 1, c->k_logits + k, sizeof(double) * (size_t)(c->n_k - k));
            memmove(c->k_secs + k + 1, c->k_secs + k, sizeof(double) * (size_t)(c->n_k - k));
            c->k_logits[k] = p[i].logit_rows, c->k_secs[k] = 0, c->n_k++;
        }
        /* a running mean: count the points of this L seen so far */
        int seen = 0;
        for (int j = 0; j < i; j++) seen += p[j].logit_rows == p[i].logit_rows;
        c->k_secs[k] += (p[i].secs - b - c->k_secs[k]) / (seen + 1);
    }
    return 0;
}

static int add(point *p, int *n, point x, const char *where, char *err) {
    if (!(x.rows >= 1) || !(x.secs > 0) || (x.context >= 0 && !(x.logit_rows >= 0)) ||
        x.logit_rows > x.rows)
        return err_set(err,
                       "report: %s: need rows >= 1, seconds > 0 and 0 <= logit rows <= rows, "
                       "got %g, %g, %g",
                       where, x.rows, x.secs, x.logit_rows);
    if (*n == MAX_POINTS) return err_set(err, "report: %s: more than %d points", where, MAX_POINTS);
    p[(*n)++] = x;
    return 0;
}

/* CSV version 1, 2 or 3 (cost.h): version 2 or 3 iff its header says so; otherwise, as older
 * decbench read it, the first two numbers of each line (a first line that is not numbers is a
 * header). *batch: version 3's batch, else 1. */
static int load_csv(point *p, int *n, int *batch, const char *path, const char *opt, char *err) {
    char e[ERR_LEN];
    FILE *f = file_fopen_regular(path, "cost", e);
    if (!f) return err_set(err, "report: %s %s", opt, e);
    char line[1024], where[4200];
    int lineno = 0, rc = 0, v2 = 0, v3 = 0, content = 0;
    *batch = 1;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '#' || *s == '\n' || *s == '\r' || !*s) continue;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        double v[4];
        char tail;
        int got = sscanf(s, "%lf ,%lf ,%lf ,%lf %c", &v[0], &v[1], &v[2], &v[3], &tail);
        if (got == 0 && !content++) { /* the header */
            s[strcspn(s, "\r\n")] = 0;
            v2 = !strcmp(s, "rows,seconds,context,logit_rows");
            v3 = !strcmp(s, "batch,rows,seconds,context,logit_rows");
            continue;
        }
        content = 1;
        if (v3) { /* the batch first, then version 2's columns */
            double b, w[4];
            got = sscanf(s, "%lf ,%lf ,%lf ,%lf ,%lf %c", &b, &w[0], &w[1], &w[2], &w[3], &tail);
            if (got != 5) {
                rc = err_set(err, "report: %s: expected \"batch,rows,seconds,context,logit_rows\"",
                             where);
                break;
            }
            if (!(b >= 1 && b <= COST_MAX_BATCH) || b != floor(b)) {
                rc = err_set(err, "report: %s: batch %g, expected a count 1..%d", where, b,
                             COST_MAX_BATCH);
                break;
            }
            if (*n && b != *batch) {
                rc = err_set(err,
                             "report: %s: batch %g after batch %d: a curve is measured at one "
                             "batch size",
                             where, b, *batch);
                break;
            }
            *batch = (int)b;
            memcpy(v, w, sizeof w);
            got = 4, v2 = 1;
        }
        if (v2 ? got != 4 : got < 2) {
            rc = err_set(err, "report: %s: expected \"%s\"", where,
                         v2 ? "rows,seconds,context,logit_rows" : "rows,seconds");
            break;
        }
        point x = {v[0], v2 ? v[2] : -1, v2 ? v[3] : v[0], v[1]};
        if (v2 && !(x.context >= 0)) {
            rc = err_set(err, "report: %s: context %g is negative", where, x.context);
            break;
        }
        rc = add(p, n, x, where, err);
    }
    if (rc == 0 && ferror(f)) rc = err_set(err, "report: cost file %s: read error", path);
    fclose(f);
    return rc;
}

static int load_run(point *p, int *n, int *batch, db *d, int64_t run, char *err) {
    sqlite3_stmt *st = NULL;
    *batch = 1;
    if (sqlite3_prepare_v2(db_sqlite(d), "SELECT batch FROM runs WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return err_set(err, "report: %s: %s", db_path(d), db_errmsg(db_sqlite(d)));
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) == SQLITE_ROW) *batch = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT rows, seconds, COALESCE(context, -1), logit_rows FROM cost "
                           "WHERE run_id = ? ORDER BY rows",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report: %s: %s", db_path(d), db_errmsg(db_sqlite(d)));
    sqlite3_bind_int64(st, 1, run);
    char where[4200];
    snprintf(where, sizeof where, "%s run %" PRId64, db_path(d), run);
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        point x = {sqlite3_column_double(st, 0), sqlite3_column_double(st, 2),
                   sqlite3_column_double(st, 3), sqlite3_column_double(st, 1)};
        rc = add(p, n, x, where, err);
    }
    sqlite3_finalize(st);
    if (rc == 0 && *n == 0)
        rc = err_set(err, "report: %s: run %" PRId64 " has no cost points", db_path(d), run);
    return rc;
}

static int finish(cost_curve **out, cost_curve *c, point *p, int n, int rc, char *err) {
    if (rc == 0) rc = build(c, p, n, c->source, err);
    free(p);
    if (rc) {
        cost_curve_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

/* A batched curve's source says its batch size, so that every note naming it does. */
static void name_batch(cost_curve *c) {
    size_t len = strlen(c->source);
    if (c->batch > 1) snprintf(c->source + len, sizeof c->source - len, " (batch %d)", c->batch);
}

/* The cost points of run_id in an open database. */
static int cost_curve_from_db(cost_curve **out, db *d, int64_t run_id, char *err) {
    *out = NULL;
    cost_curve *c = calloc(1, sizeof *c);
    point *p = malloc(sizeof *p * MAX_POINTS);
    if (!c || !p) {
        free(c), free(p);
        return err_set(err, "report: out of memory");
    }
    int n = 0, rc = load_run(p, &n, &c->batch, d, run_id, err);
    snprintf(c->source, sizeof c->source, "%s run %" PRId64, db_path(d), run_id);
    name_batch(c);
    return finish(out, c, p, n, rc, err);
}

int cost_curve_load(cost_curve **out, const char *arg, const char *opt, char *err) {
    *out = NULL;
    if (!arg) return err_set(err, "report: the projected layout needs a cost source");
    char path[4096];
    int64_t run;
    if (db_split_source(arg, path, sizeof path, &run, err) != 0) return -1;
    /* By content, not by name: an SQLite header means a decbench database. */
    if (!opt) opt = "cost source";
    char magic[16] = {0}, e[ERR_LEN];
    FILE *f = file_fopen_regular(path, "cost", e); /* a directory or FIFO is refused here */
    if (!f) return err_set(err, "report: %s %s", opt, e);
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (!(got == 16 && memcmp(magic, "SQLite format 3", 16) == 0)) {
        if (run)
            return err_set(err,
                           "report: %s is not a database, so a run id (:%" PRId64 ") means nothing",
                           path, run);
        cost_curve *c = calloc(1, sizeof *c);
        point *p = malloc(sizeof *p * MAX_POINTS);
        if (!c || !p) {
            free(c), free(p);
            return err_set(err, "report: out of memory");
        }
        int n = 0, rc = load_csv(p, &n, &c->batch, path, opt, err);
        snprintf(c->source, sizeof c->source, "%s", path);
        name_batch(c);
        return finish(out, c, p, n, rc, err);
    }
    db *d;
    if (db_open(&d, path, DB_READ_ANY, err) != 0) return -1;
    int rc = 0;
    if (!run) {
        char inner[ERR_LEN];
        if (db_latest_run(d, DB_STATUS_MASK(DB_COMPLETE), 0, 1, &run, inner) != 0)
            rc = err_set(err, "report: %s %s: %s", opt, path, inner);
    }
    if (rc == 0) rc = cost_curve_from_db(out, d, run, err);
    db_close(d);
    return rc;
}

int cost_find_run(db *d, const char *model_path, int threads, const char *kernels, int max_rows,
                  const db_env *env, int64_t *run, char *err) {
    return cost_find_run_kv(d, model_path, threads, kernels, "f32", max_rows, env, run, err);
}

int cost_find_run_kv(db *d, const char *model_path, int threads, const char *kernels,
                     const char *kv_type, int max_rows, const db_env *env, int64_t *run,
                     char *err) {
    return cost_find_run_batch(d, model_path, threads, kernels, kv_type, 1, max_rows, env, run,
                               err);
}

int cost_find_run_batch(db *d, const char *model_path, int threads, const char *kernels,
                        const char *kv_type, int batch, int max_rows, const db_env *env,
                        int64_t *run, char *err) {
    *run = 0;
    char hash[17];
    int64_t bytes;
    if (db_file_fingerprint(model_path, &bytes, hash, err)) return -1;
    if (env->git_dirty != 0 || !env->git_commit[0]) return 0; /* the build is not pinned down */
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT r.id FROM runs r JOIN environments e ON e.id = r.env_id "
                           "WHERE r.status = 'complete' AND r.model_hash = ?1 AND r.threads = ?2 "
                           "AND r.kernels = ?3 AND r.kv_type = ?10 AND r.batch = ?11 "
                           "AND e.git_commit = ?4 "
                           "AND e.git_dirty = 0 "
                           "AND e.hostname IS ?5 AND e.cpu_model IS ?6 AND e.compiler IS ?7 "
                           "AND e.cflags IS ?8 AND (SELECT MAX(rows) FROM cost c WHERE c.run_id "
                           "= r.id AND c.context IS NOT NULL AND c.logit_rows = 1) >= ?9 "
                           "ORDER BY r.id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "cost: %s", db_errmsg(db_sqlite(d)));
    const char *text[] = {hash,           kernels,       env->git_commit, env->hostname,
                          env->cpu_model, env->compiler, env->cflags};
    const int at[] = {1, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < 7; i++)
        if (text[i][0] || at[i] < 5)
            sqlite3_bind_text(st, at[i], text[i], -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(st, at[i]);
    sqlite3_bind_int(st, 2, threads);
    sqlite3_bind_int(st, 9, max_rows);
    sqlite3_bind_text(st, 10, kv_type, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 11, batch);
    if (sqlite3_step(st) == SQLITE_ROW) *run = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return 0;
}

int cost_usage_of(db *d, const int64_t *runs, int n, int draft, cost_usage *u, char *err) {
    memset(u, 0, sizeof *u);
    u->min_context = -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT p.rows, AVG(p.seconds), COUNT(*), MIN(p.context), "
                           "MAX(p.context) FROM passes p JOIN samples s ON s.id = p.sample_id "
                           "WHERE s.run_id = ?1 AND p.model = ?2 GROUP BY p.rows ORDER BY p.rows",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "cost: %s", db_errmsg(db_sqlite(d)));
    /* per rows value: the passes' total seconds and count, over all runs */
    double tot[COST_USAGE_ROWS];
    for (int i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, runs[i]);
        sqlite3_bind_text(st, 2, draft ? "draft" : "target", -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) {
            int rows = sqlite3_column_int(st, 0), cnt = sqlite3_column_int(st, 2);
            int lo = sqlite3_column_int(st, 3), hi = sqlite3_column_int(st, 4);
            double mean = sqlite3_column_double(st, 1);
            u->passes += cnt;
            u->max_rows = rows > u->max_rows ? rows : u->max_rows;
            u->min_context = u->min_context < 0 || lo < u->min_context ? lo : u->min_context;
            u->max_context = hi > u->max_context ? hi : u->max_context;
            int k = 0;
            while (k < u->n && u->rows[k] < rows) k++;
            if (k < u->n && u->rows[k] == rows) {
                tot[k] += mean * cnt;
                u->secs[k] += cnt; /* a count until the division below */
                continue;
            }
            if (u->n == COST_USAGE_ROWS) continue; /* only the timing estimate loses it */
            memmove(u->rows + k + 1, u->rows + k, sizeof(double) * (size_t)(u->n - k));
            memmove(u->secs + k + 1, u->secs + k, sizeof(double) * (size_t)(u->n - k));
            memmove(tot + k + 1, tot + k, sizeof(double) * (size_t)(u->n - k));
            u->rows[k] = rows, u->secs[k] = cnt, tot[k] = mean * cnt, u->n++;
        }
    }
    sqlite3_finalize(st);
    for (int k = 0; k < u->n; k++) u->secs[k] = tot[k] / u->secs[k];
    if (u->min_context < 0) u->min_context = 0;
    return 0;
}
