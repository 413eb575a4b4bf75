/* test_compare.c: the regression gate (results/report/compare.h) on runs built by hand: identical runs
 * pass; an altered output hash, step count, accept histogram or deterministic decoder counter
 * fails naming the sample; a speed-up drop beyond the tolerance fails and one within it passes;
 * a drop within the noise the repeats measure, a slower machine (greedy slower too) and a
 * single repeat do not fail; lost samples fail, new ones do not; bad arguments are errors; the
 * Welch test and Holm's adjustment against known values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/report/compare.h"
#include "tests/testutil.h"
#include "util/err.h"

#define LA "lookahead:W=15,N=5,G=15"

static char err[ERR_LEN];

/* How a run differs from the reference one. */
typedef struct {
    double la_slowdown;     /* lookahead decode time multiplied by this */
    int repeats;            /* 0: 2 */
    double la_rep[8];       /* per repeat, lookahead's decode time also times this (0: 1) */
    double drift;           /* every decode time (greedy's too) times this (0: 1): the machine */
    int alter_hash;         /* math[1] lookahead repeat 0 gets another output hash */
    int alter_steps;        /* code[2] lookahead repeat 1 takes one more target step */
    int alter_hist;         /* code[0] lookahead repeat 0: one step moves from k=3 to k=2 */
    int drop_sample;        /* math[2] greedy repeat 1 is missing */
    int extra_sample;       /* an extra prompt code[3] (greedy, repeat 0) */
    const char *model_hash; /* NULL: "00000000000000aa" */
    int counters;           /* lookahead samples carry decoder counters (widgets, jitter) */
    int alter_counter;      /* code[1] lookahead repeat 0: one more widget; jitter differs */
} variant;

/* Decoder counters of the lookahead samples: a deterministic one and a measured one. */
static const stat_def LA_COUNTERS[2] = {
    {"widgets", STAT_INT, STAT_SUM, STAT_DET, "a deterministic count"},
    {"jitter", STAT_REAL, STAT_MEAN, STAT_VARIES, "a measured value: never compared"}};

static void add(db *d, int64_t run, const char *ds, int idx, int greedy, int rep,
                const variant *v) {
    dec_stats st;
    memset(&st, 0, sizeof st);
    st.prompt_tokens = 10;
    st.new_tokens = 64;
    st.t_prefill = 0.25;
    db_sample s = {0};
    s.dataset = ds;
    s.sample_index = idx;
    s.repeat = rep;
    s.match = 1;
    s.output_hash = 0xabc000u + (unsigned)idx * 16 + (ds[0] == 'm');
    if (greedy) {
        s.decoder = s.spec = "greedy";
        st.target_steps = 64;
        st.target_rows = 63;
        st.t_total = 0.25 + 1.0 * (v->drift ? v->drift : 1);
    } else {
        s.decoder = "lookahead";
        s.spec = LA;
        st.target_steps = 20;
        st.target_rows = 19 * 40;
        /* 19 verifications accepting 4 x 1 + 6 x 2 + 8 x 3 + 1 x 4 = 44 drafted tokens, plus
         * one bonus token per step and the prefill's: 44 + 20 = 64 tokens. */
        st.accepted = 44;
        st.drafted = 80;
        st.accept_hist[1] = 4;
        st.accept_hist[2] = 6;
        st.accept_hist[3] = 8;
        st.accept_hist[4] = 1;
        st.verify_steps = 19;
        st.t_total = 0.25 + 0.5 * v->la_slowdown * (v->drift ? v->drift : 1) *
                                (rep < 8 && v->la_rep[rep] ? v->la_rep[rep] : 1);
        if (v->alter_hash && ds[0] == 'm' && idx == 1 && rep == 0) s.output_hash ^= 1;
        if (v->alter_steps && ds[0] == 'c' && idx == 2 && rep == 1) st.target_steps++;
        if (v->alter_hist && ds[0] == 'c' && idx == 0 && rep == 0) {
            st.accept_hist[3]--;
            st.accept_hist[2]++;
        }
        if (v->counters) {
            st.counter_defs = LA_COUNTERS;
            st.n_counters = 2;
            st.counters[0] = 10 * idx + (v->alter_counter && ds[0] == 'c' && idx == 1 && !rep);
            st.counters[1] = v->alter_counter ? 0.7 : 0.3;
        }
    }
    CHECK_MSG(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
}

/* One complete run: datasets code and math, prompts 0..2, repeats 0..1 (v->repeats), greedy +
 * lookahead. Greedy decodes in 1.0 s, lookahead in 0.5 s x slowdown (x la_rep[repeat]). */
static int64_t make_run(db *d, const variant *v) {
    db_run r = {0};
    r.model_hash = v->model_hash ? v->model_hash : "00000000000000aa";
    r.datasets = "code,math";
    r.kernels = "exact";
    int64_t run = 0;
    CHECK_MSG(db_begin_run(d, &r, &run, err) == 0, "%s", err);
    const char *ds[2] = {"code", "math"};
    for (int k = 0; k < 2; k++)
        for (int idx = 0; idx < 3; idx++)
            for (int rep = 0; rep < (v->repeats ? v->repeats : 2); rep++)
                for (int g = 1; g >= 0; g--) {
                    if (v->drop_sample && k == 1 && idx == 2 && rep == 1 && g) continue;
                    add(d, run, ds[k], idx, g, rep, v);
                }
    if (v->extra_sample) add(d, run, "code", 3, 1, 0, v);
    CHECK(db_finish_run(d, run, DB_COMPLETE, err) == 0);
    return run;
}

static db *fresh_db(const char *name) {
    const char *path = test_tmp(name);
    char side[4200];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) exit(1);
    return d;
}

/* Runs the comparison, returns its text (malloc'd) and fills res. */
static char *run_compare(db *a, int64_t ra, db *b, int64_t rb, double tol, compare_result *res,
                         int *rc) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    compare_opts o = {.tolerance = tol};
    *rc = compare_runs(a, ra, b, rb, &o, f, res, err);
    fclose(f);
    return buf;
}

/* The line of text holding all of a, b and c. */
static int has_line(const char *text, const char *a, const char *b, const char *c) {
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        if (strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c))) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static const variant SAME = {.la_slowdown = 1.0};

static void test_identical(void) {
    db *a = fresh_db("base.db"), *b = fresh_db("head.db");
    int64_t ra = make_run(a, &SAME), rb = make_run(b, &SAME);
    compare_result res;
    int rc;
    char *out = run_compare(a, ra, b, rb, 0.15, &res, &rc);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK_MSG(!res.regression, "%s", out);
    CHECK(res.n_common == 24 && res.n_det_diff == 0 && res.n_only_base == 0 &&
          res.n_only_head == 0 && res.n_speed_fail == 0 && res.n_specs == 2);
    CHECK(strstr(out, "result: PASS") != NULL);
    CHECK(strstr(out, "all 24 common samples equal") != NULL);
    /* speed-up over greedy on both sides; the label is the decoder's name (its only spec), the
     * full spec listed below the table */
    CHECK_MSG(has_line(out, "| lookahead ", "2.00x", "ok"), "%s", out);
    CHECK(has_line(out, "decoders: lookahead = " LA, NULL, NULL));
    free(out);
    /* Default runs (latest complete) and the FILE / FILE:RUN forms. */
    db_close(a);
    db_close(b);
    char base_arg[4200], head_arg[4200];
    snprintf(base_arg, sizeof base_arg, "%s:1", test_tmp("base.db"));
    snprintf(head_arg, sizeof head_arg, "%s", test_tmp("head.db"));
    FILE *null = fopen("/dev/null", "w");
    compare_opts o = {.tolerance = COMPARE_DEFAULT_TOLERANCE};
    CHECK_MSG(compare_sources(base_arg, head_arg, &o, null, &res, err) == 0, "%s", err);
    CHECK(!res.regression && res.n_common == 24);
    /* The same run against itself. */
    CHECK(compare_sources(base_arg, base_arg, NULL, null, &res, err) == 0 && !res.regression);
    fclose(null);
}

static void test_deterministic_changes(void) {
    db *d = fresh_db("det.db");
    int64_t base = make_run(d, &SAME);
    variant v = SAME;
    v.alter_hash = 1;
    int64_t h1 = make_run(d, &v);
    v = SAME;
    v.alter_steps = 1;
    int64_t h2 = make_run(d, &v);
    v = SAME;
    v.alter_hist = 1;
    int64_t h3 = make_run(d, &v);
    compare_result res;
    int rc;

    char *out = run_compare(d, base, d, h1, 0.15, &res, &rc);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK(res.regression && res.n_det_diff == 1 && res.n_speed_fail == 0);
    /* The row names the sample: dataset, index, decoder spec, repeat, field and both values. */
    CHECK_MSG(has_line(out, "| math", "| " LA, "output_hash"), "%s", out);
    CHECK(has_line(out, "| math", "|      1 |", "output_hash"));
    CHECK(has_line(out, "0000000000abc011", "0000000000abc010", NULL));
    CHECK(strstr(out, "result: REGRESSION (1 deterministic difference(s)") != NULL);
    free(out);

    out = run_compare(d, base, d, h2, 0.15, &res, &rc);
    CHECK(rc == 0 && res.regression && res.n_det_diff == 1);
    CHECK_MSG(has_line(out, "| code", "target_steps", "| 20   | 21"), "%s", out);
    CHECK(has_line(out, "| code", "|      2 |", "target_steps"));
    free(out);

    out = run_compare(d, base, d, h3, 0.15, &res, &rc);
    CHECK(rc == 0 && res.regression && res.n_det_diff == 1);
    CHECK_MSG(has_line(out, "| code", "accept_hist", "1:4 2:6 3:8 4:1"), "%s", out);
    CHECK(has_line(out, "accept_hist", "2:7 3:7", NULL));
    free(out);
    db_close(d);
}

/* The decoder's own counters: the STAT_DET ones must be equal, STAT_VARIES ones are never
 * compared; a counter only head has is new (passes), one head lost fails. */
static void test_decoder_counters(void) {
    db *d = fresh_db("counters.db");
    int64_t plain = make_run(d, &SAME);
    variant v = SAME;
    v.counters = 1;
    int64_t with = make_run(d, &v);
    v.alter_counter = 1;
    int64_t altered = make_run(d, &v);
    compare_result res;
    int rc;
    char *out = run_compare(d, with, d, with, 0.15, &res, &rc);
    CHECK_MSG(rc == 0 && !res.regression, "%s", out);
    free(out);
    out = run_compare(d, with, d, altered, 0.15, &res, &rc);
    CHECK(rc == 0 && res.regression && res.n_det_diff == 1);
    CHECK_MSG(has_line(out, "| code", "lookahead.widgets", "| 10   | 11"), "%s", out);
    CHECK(strstr(out, "jitter") == NULL);
    free(out);
    out = run_compare(d, plain, d, with, 0.15, &res, &rc);
    CHECK_MSG(rc == 0 && !res.regression, "%s", out);
    free(out);
    out = run_compare(d, with, d, plain, 0.15, &res, &rc);
    CHECK(rc == 0 && res.regression && res.n_det_diff == 12);
    CHECK_MSG(has_line(out, "lookahead.widgets", "(absent)", NULL), "%s", out);
    free(out);
    db_close(d);
}

/* Lookahead 0.5 s -> 0.5 x k s: its speed-up over greedy falls to 1/k of base, in every
 * repeat alike (no noise: p = 0 for any drop). Tolerance 15%. */
static void test_speed(void) {
    db *d = fresh_db("speed.db");
    int64_t base = make_run(d, &SAME);
    variant v = SAME;
    v.la_slowdown = 1 / 0.75; /* 25% fewer tok/s */
    int64_t slow = make_run(d, &v);
    v.la_slowdown = 1 / 0.90; /* 10% fewer */
    int64_t bit = make_run(d, &v);
    v.la_slowdown = 1 / 0.86; /* 14%: inside */
    int64_t edge_in = make_run(d, &v);
    v.la_slowdown = 1 / 0.84; /* 16%: outside */
    int64_t edge_out = make_run(d, &v);
    v.la_slowdown = 0.5; /* twice as fast: never a regression */
    int64_t fast = make_run(d, &v);
    compare_result res;
    int rc;

    char *out = run_compare(d, base, d, slow, 0.15, &res, &rc);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK(res.regression && res.n_speed_fail == 1 && res.n_det_diff == 0);
    CHECK_MSG(has_line(out, "| lookahead ", "-25.0%", "REGRESSION, p = 0"), "%s", out);
    CHECK(has_line(out, "| greedy", "+0.0%", "reference"));
    /* speed-up 2.00x -> 1.50x; decode tok/s: the 63 tokens after the prompt pass / 0.5 s, vs
     * 63 x 0.75 / 0.5 (reported, not judged) */
    CHECK(has_line(out, "| lookahead ", "2.00x", "1.50x"));
    CHECK(has_line(out, "| lookahead ", "126.0", "94.5"));
    CHECK(strstr(out, "drops by more than 15%") != NULL);
    free(out);

    out = run_compare(d, base, d, bit, 0.15, &res, &rc);
    CHECK(rc == 0 && !res.regression && res.n_speed_fail == 0);
    CHECK_MSG(has_line(out, "| lookahead ", "-10.0%", "ok"), "%s", out);
    free(out);
    out = run_compare(d, base, d, edge_in, 0.15, &res, &rc);
    CHECK(rc == 0 && !res.regression);
    free(out);
    out = run_compare(d, base, d, edge_out, 0.15, &res, &rc);
    CHECK(rc == 0 && res.regression && res.n_speed_fail == 1);
    free(out);
    out = run_compare(d, base, d, fast, 0.15, &res, &rc);
    CHECK(rc == 0 && !res.regression);
    CHECK(has_line(out, "| lookahead ", "+100.0%", "ok"));
    free(out);
    /* The tolerance is a parameter: 30% lets the 25% drop through, 5% catches the 10% one. */
    out = run_compare(d, base, d, slow, 0.30, &res, &rc);
    CHECK(rc == 0 && !res.regression);
    free(out);
    out = run_compare(d, base, d, bit, 0.05, &res, &rc);
    CHECK(rc == 0 && res.regression);
    free(out);
    db_close(d);
}

/* What the gate must not cry wolf about, and what it still catches through noise. */
static void test_speed_noise(void) {
    db *d = fresh_db("noise.db");
    compare_result res;
    int rc;
    /* A slower machine: greedy and lookahead both 40% slower. tok/s drops by 29%, the
     * speed-up not at all: pass (the old rule on tok/s failed it); --gate-tps fails it. */
    variant v = SAME;
    int64_t base = make_run(d, &v);
    v.drift = 1.4;
    int64_t slow_machine = make_run(d, &v);
    char *out = run_compare(d, base, d, slow_machine, 0.15, &res, &rc);
    CHECK_MSG(rc == 0 && !res.regression && res.n_speed_fail == 0, "%s", out);
    CHECK_MSG(has_line(out, "| lookahead ", "2.00x", "-28.6%"), "%s", out);
    free(out);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    compare_opts o = {.tolerance = 0.15, .gate_tps = 1};
    rc = compare_runs(d, base, d, slow_machine, &o, f, &res, err);
    fclose(f);
    CHECK_MSG(rc == 0 && res.regression && res.n_speed_fail == 2, "%s", buf);
    CHECK_MSG(has_line(buf, "| lookahead ", "REGRESSION (tok/s)", NULL), "%s", buf);
    free(buf);

    /* Noisy repeats: base's speed-ups 2.0, 1.6, 2.5, 1.9 (mean 2.0); head's 20% lower on
     * average but spread as much: within noise, not a regression. */
    v = SAME;
    v.repeats = 4;
    double b_rep[4] = {1.0, 1.25, 0.8, 1.0 / 0.95};
    for (int r = 0; r < 4; r++) v.la_rep[r] = b_rep[r];
    int64_t noisy_base = make_run(d, &v);
    double h_rep[4] = {1.0 / 0.95, 1.0 / 0.6, 1.0, 1.0 / 0.65};
    for (int r = 0; r < 4; r++) v.la_rep[r] = h_rep[r];
    int64_t noisy_head = make_run(d, &v);
    out = run_compare(d, noisy_base, d, noisy_head, 0.10, &res, &rc);
    CHECK_MSG(rc == 0 && !res.regression && res.n_noise == 1 && res.n_judged == 1, "%s", out);
    CHECK_MSG(has_line(out, "| lookahead ", "within noise, p = ", NULL), "%s", out);
    CHECK(has_line(out, "| lookahead ", "4 / 4", NULL));
    free(out);
    /* The same spread around a speed-up halved: a regression. */
    for (int r = 0; r < 4; r++) v.la_rep[r] = 2 * b_rep[r];
    int64_t halved = make_run(d, &v);
    out = run_compare(d, noisy_base, d, halved, 0.10, &res, &rc);
    CHECK_MSG(rc == 0 && res.regression && res.n_speed_fail == 1, "%s", out);
    CHECK_MSG(has_line(out, "| lookahead ", "-50.0%", "REGRESSION, p = "), "%s", out);
    free(out);

    /* One repeat: no spread to judge by, so no verdict on speed, even for a halved speed-up. */
    v = SAME;
    v.repeats = 1;
    int64_t one = make_run(d, &v);
    v.la_slowdown = 2;
    int64_t one_slow = make_run(d, &v);
    out = run_compare(d, one, d, one_slow, 0.10, &res, &rc);
    CHECK_MSG(rc == 0 && !res.regression && res.n_unjudged == 1 && res.n_judged == 0, "%s", out);
    CHECK_MSG(has_line(out, "| lookahead ", "not enough repeats to judge speed", NULL), "%s", out);
    CHECK(strstr(out, "1 not judged") != NULL);
    free(out);
    db_close(d);
}

/* Welch's one-sided p against values worked by hand, and Holm's adjustment. */
static void test_statistics(void) {
    /* df = 2 (two values a side, equal spread): P(T <= t) = 1/2 + t / (2 sqrt(2 + t^2)). Base
     * {1, 3}, head {-1, 1}: t = -2 / sqrt(1 + 1) = -sqrt(2), so p = 1/2 - sqrt(2) / (2 sqrt(4))
     * = 0.5 - 0.353553 = 0.146447. */
    double b2[2] = {1, 3}, h2[2] = {-1, 1};
    double p = compare_welch_p(b2, 2, h2, 2);
    CHECK_MSG(fabs(p - 0.1464466) < 1e-6, "p = %.9f", p);
    /* df = 1 would be Cauchy; here a larger sample: base {10, 12, 11, 13, 9}, head {8, 9, 7,
     * 10, 6}: means 11 and 8, variances 2.5 each, t = -3 / 1 = -3, df = 8; P(T_8 <= -3) =
     * 0.008536 (tables: t_8 one-sided 0.01 at 2.896, 0.005 at 3.355). */
    double b5[5] = {10, 12, 11, 13, 9}, h5[5] = {8, 9, 7, 10, 6};
    p = compare_welch_p(b5, 5, h5, 5);
    CHECK_MSG(fabs(p - 0.0085357) < 2e-6, "p = %.9f", p);
    /* the other direction: head higher, p near 1 */
    p = compare_welch_p(h5, 5, b5, 5);
    CHECK_MSG(fabs(p - (1 - 0.0085357)) < 2e-6, "p = %.9f", p);
    /* too few values; no spread */
    CHECK(isnan(compare_welch_p(b5, 1, h5, 5)) && isnan(compare_welch_p(b5, 5, h5, 1)));
    double c[2] = {2, 2}, lower[2] = {1, 1};
    CHECK(compare_welch_p(c, 2, lower, 2) == 0 && compare_welch_p(c, 2, c, 2) == 1);
    /* Per repeat the median over prompts: three prompts, four repeats a side; base's third prompt
     * is disturbed in repeat 0 (10 where 1 belongs). Head is base lowered by 0.5 everywhere, that
     * disturbance included: the medians 1, 1.1, 0.9, 1.0 against 0.5, 0.6, 0.4, 0.5 are far
     * apart (p tiny), where the repeats' means, 4 against 3.5 in repeat 0, would spread base's
     * repeats over 3 units and hide the drop. */
    double sb[12] = {1, 1.1, 0.9, 1.0, /* prompt 1, repeats 0..3 */
                     0.8, 1.1, 0.9, 1.0, 10, 1.1, 0.9, 1.0};
    double sh[12];
    for (int k = 0; k < 12; k++) sh[k] = sb[k] - 0.5;
    p = compare_speed_p(sb, 4, sh, 4, 3);
    CHECK_MSG(p < 1e-3, "p = %g", p);
    double mb[4], mh[4];
    for (int r = 0; r < 4; r++) mb[r] = (sb[r] + sb[4 + r] + sb[8 + r]) / 3, mh[r] = mb[r] - 0.5;
    CHECK_MSG(compare_welch_p(mb, 4, mh, 4) > 0.1, "means: p = %g", compare_welch_p(mb, 4, mh, 4));
    /* one prompt: the plain Welch test of the values */
    CHECK(fabs(compare_speed_p(b5, 5, h5, 5, 1) - compare_welch_p(b5, 5, h5, 5)) < 1e-15);
    CHECK(isnan(compare_speed_p(sb, 1, sh, 4, 3)));
    /* Holm: sorted 0.01, 0.02, 0.04 (and a NAN not counted) -> 0.03, 0.04, 0.04 */
    double hp[4] = {0.04, NAN, 0.01, 0.02};
    compare_holm(hp, 4);
    CHECK_MSG(fabs(hp[2] - 0.03) < 1e-12 && fabs(hp[3] - 0.04) < 1e-12 &&
                  fabs(hp[0] - 0.04) < 1e-12 && isnan(hp[1]),
              "%g %g %g", hp[0], hp[2], hp[3]);
}

static void test_coverage_and_errors(void) {
    db *d = fresh_db("cover.db");
    int64_t base = make_run(d, &SAME);
    variant v = SAME;
    v.drop_sample = 1;
    int64_t dropped = make_run(d, &v);
    v = SAME;
    v.extra_sample = 1;
    int64_t extra = make_run(d, &v);
    v = SAME;
    v.model_hash = "00000000000000bb";
    int64_t other_model = make_run(d, &v);
    compare_result res;
    int rc;

    char *out = run_compare(d, base, d, dropped, 0.15, &res, &rc);
    CHECK(rc == 0 && res.regression && res.n_only_base == 1 && res.n_det_diff == 0);
    CHECK_MSG(strstr(out, "Samples in base but missing in head") != NULL, "%s", out);
    CHECK(has_line(out, "| math", "| greedy", "|      1 |"));
    free(out);

    out = run_compare(d, base, d, extra, 0.15, &res, &rc);
    CHECK(rc == 0 && !res.regression && res.n_only_head == 1);
    CHECK(strstr(out, "1 only in head") != NULL);
    free(out);

    out = run_compare(d, base, d, other_model, 0.15, &res, &rc);
    CHECK(rc == 0 && res.models_differ && !res.regression);
    CHECK(strstr(out, "WARNING: the runs used different models") != NULL);
    free(out);

    /* Errors: no such run, no common sample, bad tolerance, bad files. */
    FILE *null = fopen("/dev/null", "w");
    compare_opts o = {.tolerance = 0.15};
    CHECK(compare_runs(d, base, d, 99, &o, null, &res, err) == -1 && strstr(err, "head") &&
          strstr(err, "run 99 does not exist"));
    db_run r = {0};
    int64_t lonely;
    db_begin_run(d, &r, &lonely, err);
    dec_stats st;
    memset(&st, 0, sizeof st);
    db_sample s = {0};
    s.dataset = "other";
    s.decoder = s.spec = "greedy";
    s.match = -1;
    db_insert_sample(d, lonely, &s, &st, NULL, 0, NULL, err);
    CHECK(compare_runs(d, base, d, lonely, &o, null, &res, err) == -1 &&
          strstr(err, "share no sample"));
    o.tolerance = 1.5;
    CHECK(compare_runs(d, base, d, base, &o, null, &res, err) == -1 && strstr(err, "tolerance"));
    o.tolerance = 0.15;
    CHECK(compare_sources("/nonexistent.db", test_tmp("cover.db"), &o, null, &res, err) == -1 &&
          strstr(err, "compare: base:") && strstr(err, "no such file"));
    const char *txt = test_tmp("not_a_db.txt");
    FILE *f = fopen(txt, "w");
    fputs("hello\n", f);
    fclose(f);
    CHECK(compare_sources(test_tmp("cover.db"), txt, &o, null, &res, err) == -1 &&
          strstr(err, "compare: head:") && strstr(err, "not an SQLite database"));
    fclose(null);
    db_close(d);
}

int main(void) {
    test_identical();
    test_deterministic_changes();
    test_decoder_counters();
    test_speed();
    test_speed_noise();
    test_statistics();
    test_coverage_and_errors();
    return test_finish("test_compare");
}
