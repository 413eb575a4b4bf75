/* test_cost.c: forward-cost curves (results/report/cost.h) and the projection that prices a run's
 * passes on them (report_project, results/report/report_cost.c), with every expected figure computed
 * by hand.
 *
 * The version 2 curve of the tests is exact for a cost that is linear in rows at each context,
 * linear in the context, plus a classifier linear in the logit rows, in milliseconds:
 *   B(r, c) = 1 + 0.5 r + 0.01 c + 0.001 r c     K(L) = 0.2 (L - 1)
 * measured at rows 1, 2, 4, 8, contexts 0 and 100, logit rows 1 (both contexts) and r
 * (context 0). Interpolation reproduces t = B + K exactly inside the grid, and along the end
 * segments outside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "results/db/db_internal.h"
#include "results/report/cost.h"
#include "results/db/db.h"
#include "results/report/report.h"
#include "tests/testutil.h"
#include "util/err.h"

static char err[ERR_LEN];

static double B(double r, double c) {
    return 1e-3 * (1 + 0.5 * r + 0.01 * c + 0.001 * r * c);
}
static double K(double l) {
    return 1e-3 * 0.2 * (l - 1);
}
static const int ROWS[4] = {1, 2, 4, 8}, CTX[2] = {0, 100};

static int near(double a, double b) {
    return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)) + 1e-12;
}

static const char *write_file(const char *name, const char *text) {
    const char *path = test_tmp(name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* The test curve as a version 2 CSV (what `decbench cost --csv` writes). */
static const char *v2_csv(void) {
    static char text[4096];
    int n =
        snprintf(text, sizeof text,
                 "# decbench cost curve v2: test\n# model x\nrows,seconds,context,logit_rows\n");
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 4; i++) {
            int r = ROWS[i], c = CTX[j];
            n += snprintf(text + n, sizeof text - (size_t)n, "%d,%.12g,%d,1\n", r, B(r, c) + K(1),
                          c);
            if (j == 0 && r > 1)
                n += snprintf(text + n, sizeof text - (size_t)n, "%d,%.12g,%d,%d\n", r,
                              B(r, c) + K(r), c, r);
        }
    return write_file("v2.csv", text);
}

static void test_grid_curve(void) {
    cost_curve *c;
    CHECK_MSG(cost_curve_load(&c, v2_csv(), NULL, err) == 0, "%s", err);
    if (!c) return;
    CHECK(cost_curve_is_grid(c) && cost_curve_points(c) == 11);
    double rl, rh, cl, ch;
    cost_curve_range(c, &rl, &rh, &cl, &ch);
    CHECK(rl == 1 && rh == 8 && cl == 0 && ch == 100);
    /* measured points, points between them, and beyond them along the end segments */
    const double q[][3] = {{1, 0, 1},   {4, 100, 1}, {3, 50, 2},  {6, 30, 5},
                           {8, 100, 8}, {1, 250, 1}, {16, 40, 3}, {5, 0, 12}};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        double want = B(q[i][0], q[i][1]) + K(q[i][2]);
        CHECK_MSG(near(cost_curve_t(c, q[i][0], q[i][1], q[i][2]), want),
                  "t(%g, %g, %g) = %g, want %g", q[i][0], q[i][1], q[i][2],
                  cost_curve_t(c, q[i][0], q[i][1], q[i][2]), want);
    }
    /* never below a thousandth of the fastest point, however wild the extrapolation */
    CHECK(cost_curve_t(c, 1, -1e9, 1) == 1e-3 * 1e-3 * (1 + 0.5));
    cost_curve_free(c);
}

static void test_v1_curve(void) {
    cost_curve *c;
    /* the older format: header, rows,seconds; context and logit rows do not matter */
    const char *p = write_file("v1.csv", "rows,seconds\n1,0.001\n4,0.0012\n16,0.002\n");
    CHECK_MSG(cost_curve_load(&c, p, NULL, err) == 0, "%s", err);
    if (c) {
        CHECK(!cost_curve_is_grid(c));
        CHECK(near(cost_curve_t(c, 10, 5000, 1), 0.0016));
        CHECK(near(cost_curve_t(c, 10, 0, 10), 0.0016));
        CHECK(near(cost_curve_t(c, 32, 0, 32), 0.002 + 16 * 0.0008 / 12));
        cost_curve_free(c);
    }
    /* no header, a third column ignored (as older decbench read it) */
    p = write_file("v1b.csv", "# by hand\n2,0.5,x\n4,1\n");
    CHECK_MSG(cost_curve_load(&c, p, NULL, err) == 0, "%s", err);
    if (c) CHECK(near(cost_curve_t(c, 3, 0, 0), 0.75));
    cost_curve_free(c);
}

static void expect_fail(const char *name, const char *text, const char *want) {
    cost_curve *c = NULL;
    const char *p = write_file(name, text);
    CHECK_MSG(cost_curve_load(&c, p, NULL, err) == -1 && strstr(err, want), "%s: %s", name, err);
    CHECK(c == NULL);
}

static void test_bad_sources(void) {
    expect_fail("dup.csv", "rows,seconds,context,logit_rows\n1,1,0,1\n1,2,0,1\n", "given twice");
    expect_fail("dup1.csv", "rows,seconds\n1,1\n1,2\n", "rows 1 given twice");
    expect_fail("short.csv", "rows,seconds,context,logit_rows\n1,1\n", "short.csv:2: expected");
    expect_fail("neg.csv", "rows,seconds,context,logit_rows\n1,1,-5,1\n", "neg.csv:2: context");
    expect_fail("zero.csv", "rows,seconds\n1,0\n", "seconds > 0");
    expect_fail("logits.csv", "rows,seconds,context,logit_rows\n2,1,0,3\n", "logit rows <= rows");
    /* a grid of every row's logits (`cost --logits all`) is a body of its own; a grid that mixes
     * logit rows needs its one-logit-row points */
    expect_fail("nobody.csv", "rows,seconds,context,logit_rows\n4,1,0,2\n",
                "no point with one row's logits");
    expect_fail("orphan.csv", "rows,seconds,context,logit_rows\n1,1,0,1\n4,2,0,2\n",
                "rows 4, context 0, logit rows 2 has no point with logit rows 1");
    cost_curve *all = NULL;
    const char *pa = write_file("all.csv", "rows,seconds,context,logit_rows\n1,1,0,1\n4,2,0,4\n");
    CHECK_MSG(cost_curve_load(&all, pa, NULL, err) == 0, "%s", err);
    if (all) CHECK(near(cost_curve_t(all, 4, 0, 4), 2));
    cost_curve_free(all);
    expect_fail("empty.csv", "# nothing\n", "has no points");
    expect_fail("text.csv", "rows,seconds\n1,1\nabc\n", "text.csv:3");
    cost_curve *c = NULL;
    CHECK(cost_curve_load(&c, test_tmpdir(), NULL, err) == -1 && strstr(err, "directory"));
    CHECK(cost_curve_load(&c, "/nonexistent/x.csv", "--project-cost", err) == -1 &&
          strstr(err, "--project-cost /nonexistent/x.csv: cannot open cost"));
    const char *v2 = v2_csv();
    char withrun[4200];
    snprintf(withrun, sizeof withrun, "%s:3", v2);
    CHECK(cost_curve_load(&c, withrun, NULL, err) == -1 && strstr(err, "not a database"));
}

/* ---- a database: cost runs and a run with the pass trace ----------------------------------- */

static int64_t begin(db *d, const char *label, const char *model, const db_env *env) {
    db_run r = {0};
    r.label = label;
    r.model_path = model;
    r.threads = 2;
    r.kernels = "exact";
    r.env = env;
    r.datasets = "code";
    int64_t id = 0;
    CHECK_MSG(db_begin_run(d, &r, &id, err) == 0, "%s", err);
    return id;
}

/* The test curve scaled by f, as a cost run. */
static int64_t cost_run(db *d, const char *model, const db_env *env, double f) {
    int64_t run = begin(d, "cost", model, env);
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 4; i++)
            for (int all = 0; all <= (j == 0 && ROWS[i] > 1); all++) {
                int r = ROWS[i], c = CTX[j], l = all ? r : 1;
                db_cost p = {r, f * (B(r, c) + K(l)), 3, -1, -1, 0, -1, c, l};
                CHECK_MSG(db_insert_cost(d, run, &p, err) == 0, "%s", err);
            }
    CHECK(db_finish_run(d, run, DB_COMPLETE, err) == 0);
    return run;
}

/* A sample of prompt 10 tokens, 5 new tokens, with its passes (or none). */
static void sample(db *d, int64_t run, const char *decoder, const char *spec, int idx,
                   const dec_pass *p, int n, double t_book, long draft_steps) {
    dec_stats st;
    memset(&st, 0, sizeof st);
    st.prompt_tokens = 10;
    st.new_tokens = 5;
    st.t_prefill = 0.01;
    st.t_book = t_book;
    st.t_total = 0.1;
    st.draft_steps = draft_steps;
    for (int i = 0; i < n; i++) {
        if (p[i].draft) continue;
        st.target_steps++;
        if (!p[i].prefill) st.target_rows += p[i].rows;
    }
    db_sample s = {0};
    s.dataset = "code";
    s.sample_index = idx;
    s.decoder = decoder;
    s.spec = spec;
    s.output_hash = 7;
    s.match = 1;
    s.passes = p;
    s.n_passes = n;
    CHECK_MSG(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
}

static const report_projection *row(const report_projection *p, int n, const char *spec) {
    for (int i = 0; i < n; i++)
        if (!strcmp(p[i].spec, spec)) return &p[i];
    return NULL;
}

static void test_projection(void) {
    const char *path = test_tmp("cost.db");
    unlink(path);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    db_env env;
    db_env_capture(&env);
    const char *model = v2_csv(); /* any file: the runs fingerprint it */
    int64_t target = cost_run(d, model, &env, 1), draft = cost_run(d, model, &env, 0.1);
    int64_t run = begin(d, "pairs", model, &env);
    /* greedy: its prompt pass (10 rows at context 0), then 4 one-row passes at contexts 10..13 */
    dec_pass g[5] = {{0, 1, 10, 1, 0, 0.01}};
    for (int i = 1; i < 5; i++) g[i] = (dec_pass){0, 0, 1, 1, 9 + i, 0.02};
    sample(d, run, "greedy", "greedy", 0, g, 5, 0.001, 0);
    /* spec: both prompt passes, then 2 steps of (2 draft passes of 1 row, a target pass of 3
     * rows with 3 logit rows) */
    const dec_pass sp[8] = {{0, 1, 10, 1, 0, 0.01},  {1, 1, 10, 1, 0, 0.001},
                            {1, 0, 1, 1, 10, 0.001}, {1, 0, 1, 1, 11, 0.001},
                            {0, 0, 3, 3, 10, 0.03},  {1, 0, 1, 1, 13, 0.001},
                            {1, 0, 1, 1, 14, 0.001}, {0, 0, 3, 3, 13, 0.03}};
    sample(d, run, "spec", "spec:gamma=2", 0, sp, 8, 0.002, 5);
    /* a lookahead-like sample with 8 rows and 2 logit rows per pass, and one without passes */
    const dec_pass la[3] = {{0, 1, 10, 1, 0, 0.01}, {0, 0, 8, 2, 10, 0.05}, {0, 0, 8, 2, 12, 0.05}};
    sample(d, run, "lookahead", "lookahead:W=4", 0, la, 3, 0, 0);
    sample(d, run, "lookahead", "lookahead:W=4", 1, NULL, 0, 0, 0);
    CHECK(db_finish_run(d, run, DB_COMPLETE, err) == 0);

    char tsrc[4200], dsrc[4200];
    snprintf(tsrc, sizeof tsrc, "%s:%lld", path, (long long)target);
    snprintf(dsrc, sizeof dsrc, "%s:%lld", path, (long long)draft);
    report_projection *p = NULL;
    int n = 0;
    CHECK_MSG(report_project(d, &run, 1, tsrc, dsrc, &p, &n, err) == 0, "%s", err);
    /* greedy per sample: 4 passes t(1, 10..13, 1); its bookkeeping per decode token: 0.001 / 4 */
    double gdec = 0;
    for (int i = 0; i < 4; i++) gdec += B(1, 10 + i);
    double gbook = 0.001 / 4, gpre = B(10, 0);
    const report_projection *r = row(p, n, "greedy");
    CHECK_MSG(r && near(r->projected_decode, 1) && near(r->projected_e2e, 1) &&
                  !strcmp(r->basis, "passes, extrapolated"),
              "%g %g '%s'", r ? r->projected_decode : 0, r ? r->projected_e2e : 0,
              r ? r->basis : "");
    /* spec: target passes t(3, 10, 3) and t(3, 13, 3); draft passes on the draft curve (x0.1) */
    double sdec = B(3, 10) + K(3) + B(3, 13) + K(3) +
                  0.1 * (B(1, 10) + B(1, 11) + B(1, 13) + B(1, 14)) + 0.002;
    double sg = gdec + gbook * 4;
    r = row(p, n, "spec:gamma=2");
    CHECK(r && r->draft_priced && r->extrapolated); /* the prompt pass: 10 rows, the curve 8 */
    CHECK_MSG(r && near(r->projected_decode, sg / sdec), "%g vs %g", r ? r->projected_decode : 0,
              sg / sdec);
    CHECK(r && near(r->projected_e2e, (sg + gpre) / (sdec + gpre + 0.1 * B(10, 0))));
    CHECK(r && near(r->projected_tps, 4 / sdec));
    /* lookahead: one sample priced by its passes, one (without a trace) at its mean rows */
    r = row(p, n, "lookahead:W=4");
    CHECK_MSG(r && !strcmp(r->basis, "passes+mean rows, extrapolated"), "%s", r ? r->basis : "");
    CHECK(r && near(r->projected_decode, 2 * sg / (B(8, 10) + K(2) + B(8, 12) + K(2))));
    CHECK(r && isnan(r->projected_e2e)); /* a sample without passes: no prompt cost */
    free(p);

    /* without the draft curve: spec's draft passes are not priced (an upper bound) */
    CHECK_MSG(report_project(d, &run, 1, tsrc, NULL, &p, &n, err) == 0, "%s", err);
    r = row(p, n, "spec:gamma=2");
    CHECK(r && !r->draft_priced && strstr(r->basis, "draft not priced"));
    CHECK(r && near(r->projected_decode, sg / (B(3, 10) + K(3) + B(3, 13) + K(3) + 0.002)));
    free(p);

    /* two runs added up: a second run of the same greedy and spec samples; the 'all' row has
     * the same projection (every sum doubled) and measures greedy's total over spec's */
    int64_t run2 = begin(d, "pairs 2", model, &env);
    sample(d, run2, "greedy", "greedy", 0, g, 5, 0.001, 0);
    sample(d, run2, "spec", "spec:gamma=2", 0, sp, 8, 0.002, 5);
    CHECK(db_finish_run(d, run2, DB_COMPLETE, err) == 0);
    int64_t both[2] = {run, run2};
    CHECK_MSG(report_project(d, both, 2, tsrc, dsrc, &p, &n, err) == 0, "%s", err);
    const report_projection *agg = NULL;
    for (int i = 0; i < n; i++)
        if (p[i].run_id == 0 && !strcmp(p[i].spec, "spec:gamma=2")) agg = &p[i];
    CHECK(n == 3 + 2 + 2 && agg && near(agg->projected_decode, sg / sdec) &&
          near(agg->measured_decode, 1) && agg->n_samples == 2);
    free(p);

    /* the report layout shows both */
    report_opts o = {.run_ids = &run,
                     .n_runs = 1,
                     .format = REPORT_CSV,
                     .layout = REPORT_PROJECTED,
                     .cost_source = tsrc,
                     .draft_cost_source = dsrc};
    FILE *out = fopen(test_tmp("proj.csv"), "w");
    CHECK_MSG(report_write(d, &o, out, err) == 0, "%s", err);
    fclose(out);

    /* what the pass traces used, per model */
    cost_usage u;
    CHECK_MSG(cost_usage_of(d, &run, 1, 0, &u, err) == 0, "%s", err);
    CHECK(u.passes == 5 + 3 + 3 && u.max_rows == 10 && u.min_context == 0 && u.max_context == 13);
    CHECK(u.n == 4 && u.rows[0] == 1 && near(u.secs[0], 0.02) && u.rows[1] == 3 &&
          near(u.secs[3], 0.01));
    CHECK_MSG(cost_usage_of(d, &run, 1, 1, &u, err) == 0, "%s", err);
    CHECK(u.passes == 5 && u.max_rows == 10 && u.max_context == 14);

    /* reuse: only for a pinned-down build (a commit, clean trees), the same threads and kernels,
     * and a curve that reaches the rows asked for */
    db_env clean = env;
    snprintf(clean.git_commit, sizeof clean.git_commit, "%s",
             "3333333ccccccccccccccccccccccccccccccccc");
    clean.git_dirty = 0;
    db_env dirty = clean;
    dirty.git_dirty = 1;
    int64_t pinned = cost_run(d, model, &clean, 1), found = -1;
    CHECK(cost_find_run(d, model, 2, "exact", 8, &clean, &found, err) == 0 && found == pinned);
    CHECK(cost_find_run(d, model, 2, "exact", 9, &clean, &found, err) == 0 && found == 0);
    CHECK(cost_find_run(d, model, 1, "exact", 8, &clean, &found, err) == 0 && found == 0);
    CHECK(cost_find_run(d, model, 2, "blas", 8, &clean, &found, err) == 0 && found == 0);
    /* and the same KV cache type: a curve measured with an f16 cache stands for f16 only */
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE runs SET kv_type = 'f16' WHERE id = %lld", (long long)pinned);
    CHECK(sqlite3_exec(db_sqlite(d), sql, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(cost_find_run(d, model, 2, "exact", 8, &clean, &found, err) == 0 && found == 0);
    CHECK(cost_find_run_kv(d, model, 2, "exact", "f16", 8, &clean, &found, err) == 0 &&
          found == pinned);
    snprintf(sql, sizeof sql, "UPDATE runs SET kv_type = 'f32' WHERE id = %lld", (long long)pinned);
    CHECK(sqlite3_exec(db_sqlite(d), sql, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(cost_find_run_kv(d, model, 2, "exact", "f16", 8, &clean, &found, err) == 0 && found == 0);
    CHECK(cost_find_run(d, model, 2, "exact", 8, &dirty, &found, err) == 0 && found == 0);
    db_env other = clean;
    other.git_commit[0] = '4';
    CHECK(cost_find_run(d, model, 2, "exact", 8, &other, &found, err) == 0 && found == 0);
    CHECK(cost_find_run(d, test_tmp("v1.csv"), 2, "exact", 8, &clean, &found, err) == 0 &&
          found == 0);
    CHECK(cost_find_run(d, "/nonexistent", 2, "exact", 8, &clean, &found, err) == -1);

    /* a database curve by FILE (the latest cost run) and FILE:RUN */
    cost_curve *c;
    CHECK_MSG(cost_curve_load(&c, dsrc, NULL, err) == 0, "%s", err);
    if (c) CHECK(near(cost_curve_t(c, 2, 50, 1), 0.1 * B(2, 50)));
    cost_curve_free(c);
    db_close(d);
    CHECK_MSG(cost_curve_load(&c, path, NULL, err) == 0, "%s", err);
    if (c)
        CHECK(near(cost_curve_t(c, 2, 50, 2), B(2, 50) + K(2)) &&
              strstr(cost_curve_source(c), "run"));
    cost_curve_free(c);
}

/* Greedy's decode passes priced in one call: term by term up to 65536 passes (the same bits
 * as adding cost_curve_t's), in closed form beyond, equal to the term-by-term sum to rounding
 * on every kind of curve (rising and falling with the context, clamped at the floor, three
 * levels, one level, version 1), and fast for any count a database may hold. */
static void test_greedy_sum(void) {
    static const char *const curves[] = {
        "rows,seconds,context,logit_rows\n1,0.001,0,1\n2,0.0015,0,1\n1,0.002,1000,1\n"
        "2,0.003,1000,1\n1,0.0025,50000,1\n2,0.004,50000,1\n2,0.0035,0,2\n",
        /* falling with the context: the end segment crosses the floor (1e-6 s) at ~2000 */
        "rows,seconds,context,logit_rows\n1,0.001,0,1\n2,0.0015,0,1\n1,0.0005,1000,1\n"
        "2,0.001,1000,1\n",
        "rows,seconds,context,logit_rows\n1,0.001,64,1\n4,0.002,64,1\n",
        "rows,seconds\n1,0.001\n4,0.0012\n16,0.002\n"};
    for (size_t k = 0; k < sizeof curves / sizeof curves[0]; k++) {
        cost_curve *c;
        CHECK_MSG(cost_curve_load(&c, write_file("greedy.csv", curves[k]), NULL, err) == 0, "%s",
                  err);
        if (!c) continue;
        const int64_t cases[][2] = {{0, 0},     {0, 1},     {20, 2},       {100, 1000},
                                    {7, 65537}, {0, 65538}, {123, 200001}, {999, 300000}};
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            int64_t p = cases[i][0], n = cases[i][1];
            double loop = 0;
            for (int64_t j = 0; j + 1 < n; j++) loop += cost_curve_t(c, 1, (double)(p + j), 1);
            double got = cost_curve_greedy(c, p, n);
            if (n - 1 <= 65536)
                CHECK_MSG(got == loop, "curve %zu, %lld + %lld: %.17g vs %.17g", k, (long long)p,
                          (long long)n, got, loop);
            else
                CHECK_MSG(fabs(got - loop) <= 1e-9 * loop, "curve %zu, %lld + %lld: %.17g vs %.17g",
                          k, (long long)p, (long long)n, got, loop);
        }
        /* the largest counts a database may hold: at once, and finite */
        double t0 = (double)clock() / CLOCKS_PER_SEC;
        double big = cost_curve_greedy(c, 1 << 24, 1 << 24);
        for (int r = 0; r < 1000; r++) big += 0 * cost_curve_greedy(c, r, (1 << 24) - r);
        CHECK_MSG(isfinite(big) && big > 0 && (double)clock() / CLOCKS_PER_SEC - t0 < 1.0,
                  "curve %zu: %g in %.2f s", k, big, (double)clock() / CLOCKS_PER_SEC - t0);
        cost_curve_free(c);
    }
}

/* ---- batched curves (`cost --batch B`): version 3 CSV, runs.batch, the projection at B ------ */

/* The batch-4 test curve: t4(r, c, L) = B4(r, c) + K4(L), linear like the batch-1 one but not a
 * multiple of it (ms): B4 = 2 + 2 r + 0.04 c + 0.004 r c, K4 = 0.8 (L - 1). */
static double B4(double r, double c) {
    return 1e-3 * (2 + 2 * r + 0.04 * c + 0.004 * r * c);
}
static double K4(double l) {
    return 1e-3 * 0.8 * (l - 1);
}

/* The batch-4 curve as `cost --batch 4 --csv` writes it (header or not: with_header 0 gives the
 * lines an older decbench, which knows no version 3 header, reads as "rows,seconds"). f scales
 * it (a draft's). */
static const char *v3_csv(const char *name, double f, int with_header) {
    static char text[4096];
    int n = snprintf(text, sizeof text, "# decbench cost curve v3: test\n%s",
                     with_header ? "batch,rows,seconds,context,logit_rows\n" : "");
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 4; i++)
            for (int all = 0; all <= (j == 0 && ROWS[i] > 1); all++) {
                int r = ROWS[i], c = CTX[j], l = all ? r : 1;
                n += snprintf(text + n, sizeof text - (size_t)n, "4,%d,%.12g,%d,%d\n", r,
                              f * (B4(r, c) + K4(l)), c, l);
            }
    return write_file(name, text);
}

static void test_batched_curves(void) {
    cost_curve *c = NULL;
    CHECK_MSG(cost_curve_load(&c, v3_csv("b4.csv", 1, 1), NULL, err) == 0, "%s", err);
    if (c) {
        CHECK(cost_curve_batch(c) == 4 && cost_curve_is_grid(c) && cost_curve_points(c) == 11);
        CHECK_MSG(strstr(cost_curve_source(c), "b4.csv (batch 4)"), "%s", cost_curve_source(c));
        CHECK(near(cost_curve_t(c, 3, 50, 2), B4(3, 50) + K4(2)));
        cost_curve_free(c);
    }
    /* a version 2 curve is of batch 1, and says nothing of it */
    CHECK_MSG(cost_curve_load(&c, v2_csv(), NULL, err) == 0, "%s", err);
    if (c) CHECK(cost_curve_batch(c) == 1 && !strstr(cost_curve_source(c), "(batch"));
    cost_curve_free(c);
    /* what an older decbench reads of it: the batch as rows, repeated: refused, not misread */
    {
        FILE *f = fopen(test_tmp("b4old.csv"), "w");
        FILE *g = fopen(v3_csv("b4noheader.csv", 1, 0), "r");
        char line[256];
        fputs("rows,seconds\n", f);
        while (fgets(line, sizeof line, g))
            if (line[0] != '#') fputs(line, f);
        fclose(g), fclose(f);
        CHECK_MSG(cost_curve_load(&c, test_tmp("b4old.csv"), NULL, err) == -1 &&
                      strstr(err, "rows 4 given twice"),
                  "%s", err);
    }
    const char *h3 = "batch,rows,seconds,context,logit_rows\n";
    char text[512];
    snprintf(text, sizeof text, "%s4,1,0.001,0,1\n2,2,0.002,0,1\n", h3);
    expect_fail("b_mix.csv", text, "b_mix.csv:3: batch 2 after batch 4");
    snprintf(text, sizeof text, "%s0,1,0.001,0,1\n", h3);
    expect_fail("b_zero.csv", text, "b_zero.csv:2: batch 0, expected a count");
    snprintf(text, sizeof text, "%s2.5,1,0.001,0,1\n", h3);
    expect_fail("b_frac.csv", text, "batch 2.5");
    snprintf(text, sizeof text, "%s4,1,0.001,0\n", h3);
    expect_fail("b_short.csv", text, "b_short.csv:2: expected \"batch,rows,seconds,context");

    /* a database curve: runs.batch is the curve's, and tune's reuse keeps batch sizes apart */
    const char *path = test_tmp("cost_batch.db");
    unlink(path);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    db_env clean;
    db_env_capture(&clean);
    snprintf(clean.git_commit, sizeof clean.git_commit, "%s",
             "3333333ccccccccccccccccccccccccccccccccc");
    clean.git_dirty = 0;
    const char *model = v2_csv();
    int64_t one = cost_run(d, model, &clean, 1), four = 0, found = -1;
    {
        db_run r = {.label = "cost b4",
                    .model_path = model,
                    .threads = 2,
                    .kernels = "exact",
                    .env = &clean,
                    .batch = 4};
        CHECK_MSG(db_begin_run(d, &r, &four, err) == 0, "%s", err);
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 4; i++)
                for (int all = 0; all <= (j == 0 && ROWS[i] > 1); all++) {
                    int rr = ROWS[i], cc = CTX[j], l = all ? rr : 1;
                    db_cost p = {rr, B4(rr, cc) + K4(l), 3, -1, -1, 0, -1, cc, l};
                    CHECK_MSG(db_insert_cost(d, four, &p, err) == 0, "%s", err);
                }
        CHECK(db_finish_run(d, four, DB_COMPLETE, err) == 0);
    }
    CHECK(cost_find_run(d, model, 2, "exact", 8, &clean, &found, err) == 0 && found == one);
    CHECK(cost_find_run_batch(d, model, 2, "exact", "f32", 4, 8, &clean, &found, err) == 0 &&
          found == four);
    CHECK(cost_find_run_batch(d, model, 2, "exact", "f32", 8, 8, &clean, &found, err) == 0 &&
          found == 0);
    char src4[4200], srcd[4200];
    snprintf(src4, sizeof src4, "%s:%lld", path, (long long)four);
    CHECK_MSG(cost_curve_load(&c, src4, NULL, err) == 0, "%s", err);
    if (c)
        CHECK_MSG(cost_curve_batch(c) == 4 && strstr(cost_curve_source(c), "(batch 4)") &&
                      near(cost_curve_t(c, 2, 50, 2), B4(2, 50) + K4(2)),
                  "%s", cost_curve_source(c));
    cost_curve_free(c);
    snprintf(srcd, sizeof srcd, "%s:%lld", path, (long long)one);

    /* a batch-1 trace priced at batch 4: greedy's one-row passes and spec's passes, each as four
     * sequences' in lockstep, on the batch-4 curves (the draft's is the target's x0.1) */
    int64_t run = begin(d, "pairs", model, &clean);
    dec_pass g[5] = {{0, 1, 10, 1, 0, 0.01}};
    for (int i = 1; i < 5; i++) g[i] = (dec_pass){0, 0, 1, 1, 9 + i, 0.02};
    sample(d, run, "greedy", "greedy", 0, g, 5, 0, 0);
    const dec_pass sp[6] = {{0, 1, 10, 1, 0, 0.01},  {1, 1, 10, 1, 0, 0.001},
                            {1, 0, 1, 1, 10, 0.001}, {0, 0, 2, 2, 10, 0.03},
                            {1, 0, 1, 1, 12, 0.001}, {0, 0, 2, 2, 12, 0.03}};
    sample(d, run, "spec", "spec:gamma=1", 0, sp, 6, 0, 4);
    CHECK(db_finish_run(d, run, DB_COMPLETE, err) == 0);
    const char *t4 = v3_csv("t4.csv", 1, 1);
    char d4[4200];
    snprintf(d4, sizeof d4, "%s", v3_csv("d4.csv", 0.1, 1));
    report_projection *p = NULL;
    int n = 0;
    CHECK_MSG(report_project(d, &run, 1, t4, d4, &p, &n, err) == 0, "%s", err);
    double gdec = 0;
    for (int i = 0; i < 4; i++) gdec += B4(1, 10 + i);
    double sdec = B4(2, 10) + K4(2) + B4(2, 12) + K4(2) + 0.1 * (B4(1, 10) + B4(1, 12));
    const report_projection *r = row(p, n, "spec:gamma=1");
    CHECK_MSG(r && r->batch == 4 && near(r->projected_decode, gdec / sdec), "%g vs %g (batch %d)",
              r ? r->projected_decode : 0, gdec / sdec, r ? r->batch : 0);
    /* by hand, in ms: greedy 4.44 + 4.484 + 4.528 + 4.572 = 18.024; spec 6.48 + 0.8 + 6.576 +
     * 0.8 + 0.1 (4.44 + 4.528) = 15.5528; 18.024 / 15.5528 = 1.15889 */
    CHECK_MSG(r && fabs(r->projected_decode - 1.15889) < 5e-6, "%.6f", r ? r->projected_decode : 0);
    r = row(p, n, "greedy");
    CHECK(r && r->batch == 4 && near(r->projected_decode, 1));
    free(p);
    /* a batch-4 target with a batch-1 draft (and the reverse): refused, naming both */
    CHECK(report_project(d, &run, 1, t4, srcd, &p, &n, err) == -1 &&
          strstr(err, "is a curve of batch 1") && strstr(err, "one of batch 4"));
    CHECK(report_project(d, &run, 1, srcd, d4, &p, &n, err) == -1 &&
          strstr(err, "is a curve of batch 4") && strstr(err, "one of batch 1"));
    /* the layout says the batch size it priced at: a column and a note */
    report_opts o = {.run_ids = &run,
                     .n_runs = 1,
                     .format = REPORT_MARKDOWN,
                     .layout = REPORT_PROJECTED,
                     .cost_source = t4,
                     .draft_cost_source = d4};
    FILE *out = fopen(test_tmp("proj4.md"), "w");
    CHECK_MSG(report_write(d, &o, out, err) == 0, "%s", err);
    fclose(out);
    char buf[16384] = "";
    FILE *in = fopen(test_tmp("proj4.md"), "r");
    size_t got = fread(buf, 1, sizeof buf - 1, in);
    buf[got] = 0;
    fclose(in);
    CHECK_MSG(strstr(buf, "Priced at batch 4") && strstr(buf, "t4.csv (batch 4)") &&
                  strstr(buf, "| batch |"),
              "%s", buf);
    db_close(d);
}

int main(void) {
    test_grid_curve();
    test_batched_curves();
    test_v1_curve();
    test_greedy_sum();
    test_bad_sources();
    test_projection();
    return test_finish("test_cost");
}
