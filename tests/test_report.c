/* test_report.c: reports (results/report/report.h) from a database built by hand through db.h, with
 * every expected figure computed by hand in the comments; plus the plot data files and the
 * gnuplot scripts of plots/.
 *
 * The database (times in seconds; decode time = t_total - t_prefill, prefill 0.5 s):
 *   run 1 'main' (complete), datasets code and math, prompts 0 and 1, repeats 0 and 1:
 *     greedy                  100 tokens, 100 steps, 99 rows, decode 2.0 s everywhere
 *     lookahead:W=15,N=5,G=15 100 tokens, 25 steps (24 decode passes), accept hist {3:21, 4:3}
 *                             (75 accepted in 24 verifications);
 *                             code: 30 rows/pass, decode 0.9 s (repeat 0) / 1.1 s (repeat 1)
 *                             math: 64 rows/pass (trace 8,120,8,120,...), decode 0.5 s, and
 *                             prompt 1 repeat 1 does not match greedy
 *     ouroboros variants      repeat 0 only; decode 0.8 / 1.0 / 1.25 s
 *   run 2 'point' (complete): lookahead:W=7,N=5,G=7 on code, decode 1.6 s, greedy from run 1
 *   run 3 (incomplete), run 4 (cost curve: T 1, 8, 32, 64 -> 1, 2, 4, 8 ms)
 *   runs 5..12: a sweep W in {2,4,8,16} x N in {3,5} on code, baseline run 1
 *   run 13 (running): greedy and pld on two prompts of unequal length (Spec-Bench's speed-up)
 * Decode tok/s counts the tokens after the prompt pass (99 of 100). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/db/db.h"
#include "results/plot/plot.h"
#include "results/report/report.h"
#include "util/text_escape.h"
#include "tests/testutil.h"
#include "util/err.h"

#define LA "lookahead:W=15,N=5,G=15"
#define OURO_ALL "ouroboros:gamma=4,W=20,suffixes=3,inspire=1,refine=1"
#define OURO_NOINSP "ouroboros:gamma=4,W=20,suffixes=3,inspire=0,refine=1"
#define OURO_NOREF "ouroboros:gamma=4,W=20,suffixes=3,inspire=1,refine=0"

static char err[ERR_LEN];

/* ---- building the database ---------------------------------------------------------------- */

typedef struct {
    const char *ds, *decoder, *spec;
    int idx, rep, new_tokens;
    long steps, rows, accepted;
    double t_decode;
    int match;
    const long *hist; /* pairs k, count; ends with -1 */
    const dec_step *trace;
    int n_trace;
} sample_in;

static void add(db *d, int64_t run, const sample_in *in) {
    dec_stats st;
    memset(&st, 0, sizeof st);
    st.prompt_tokens = 20;
    st.new_tokens = in->new_tokens;
    st.target_steps = in->steps;
    st.target_rows = in->rows;
    st.accepted = in->accepted;
    st.drafted = in->accepted * 2;
    /* every verification drafts (below): vLLM's num_drafts is the steps' count */
    /* Every verification drafts 4 tokens: positions 0..3 are tried once per step and the
     * first k accepted (LA {3:21, 4:3}: 100, 100, 100, 12.5 %; ouroboros {1:4, 2:12}: 100,
     * 75, 0, 0 %). */
    for (const long *h = in->hist; h && h[0] >= 0; h += 2) {
        st.accept_hist[h[0]] = h[1];
        st.verify_steps += h[1];
        st.drafting_steps += h[1];
        for (int i = 0; i < 4; i++) {
            st.pos_tried[i] += h[1];
            if (i < h[0]) st.pos_accepted[i] += h[1];
        }
    }
    st.t_prefill = 0.5;
    st.t_total = 0.5 + in->t_decode;
    st.t_target = in->t_decode * 0.9;
    db_sample s = {0};
    s.dataset = in->ds;
    s.sample_index = in->idx;
    s.decoder = in->decoder;
    s.spec = in->spec;
    s.repeat = in->rep;
    s.output_hash = 0x1000u + (unsigned)in->idx;
    s.match = in->match;
    if (in->match == 0) {
        s.diverge_pos = 5;
        s.greedy_token = 1;
        s.decoder_token = 2;
    }
    CHECK_MSG(db_insert_sample(d, run, &s, &st, in->trace, in->n_trace, NULL, err) == 0, "%s", err);
}

static db_env env_with(const char *commit, int dirty) {
    db_env e;
    db_env_capture(&e);
    snprintf(e.git_commit, sizeof e.git_commit, "%s", commit);
    e.git_dirty = dirty;
    return e;
}

static int64_t new_run(db *d, const char *label, const char *datasets, const db_env *env,
                       int64_t sweep, int64_t baseline) {
    db_run r = {0};
    r.label = label;
    r.datasets = datasets;
    r.max_new = 100;
    r.repeats = 2;
    r.threads = 2;
    r.kernels = "exact";
    r.env = env;
    r.sweep_id = sweep;
    r.baseline_run_id = baseline;
    int64_t id = 0;
    CHECK_MSG(db_begin_run(d, &r, &id, err) == 0, "%s", err);
    return id;
}

static const long LA_HIST[] = {3, 21, 4, 3, -1};
static const long OURO_HIST[] = {1, 4, 2, 12, -1};

static db *build(const char *path) {
    unlink(path);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) exit(1);
    db_env e1 = env_with("1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0);
    db_env e2 = env_with("2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 1);
    int64_t r1 = new_run(d, "main", "code,math", &e1, 0, 0);
    /* The math samples' trace: prefill, then 24 passes alternating 8 and 120 rows (mean 64). */
    dec_step trace[25];
    trace[0] = (dec_step){0, 20, 0, 0, 1, 0.5};
    for (int i = 1; i < 25; i++) trace[i] = (dec_step){i, i % 2 ? 8 : 120, 4, 3, 4, 0.02};
    const char *ds[2] = {"code", "math"};
    for (int k = 0; k < 2; k++)
        for (int idx = 0; idx < 2; idx++)
            for (int rep = 0; rep < 2; rep++) {
                sample_in g = {ds[k], "greedy", "greedy", idx, rep,  100,  100,
                               99,    0,        2.0,      1,   NULL, NULL, 0};
                add(d, r1, &g);
                sample_in la = {ds[k],
                                "lookahead",
                                LA,
                                idx,
                                rep,
                                100,
                                25,
                                k ? 24 * 64 : 24 * 30,
                                75,
                                0,
                                1,
                                LA_HIST,
                                k ? trace : NULL,
                                k ? 25 : 0};
                la.t_decode = k ? 0.5 : (rep ? 1.1 : 0.9);
                la.match = k == 1 && idx == 1 && rep == 1 ? 0 : 1;
                add(d, r1, &la);
                if (rep) continue;
                const char *ouro[3] = {OURO_ALL, OURO_NOINSP, OURO_NOREF};
                const double t[3] = {0.8, 1.0, 1.25};
                for (int v = 0; v < 3; v++) {
                    sample_in o = {ds[k],   "ouroboros", ouro[v], idx, 0,         100,  40,
                                   39 * 50, 60,          t[v],    1,   OURO_HIST, NULL, 0};
                    add(d, r1, &o);
                }
            }
    CHECK(db_finish_run(d, r1, DB_COMPLETE, err) == 0);

    int64_t r2 = new_run(d, "point", "code,math", &e2, 0, r1);
    for (int idx = 0; idx < 2; idx++) {
        sample_in p = {"code",
                       "lookahead",
                       "lookahead:W=7,N=5,G=7",
                       idx,
                       0,
                       100,
                       30,
                       29 * 12,
                       70,
                       1.6,
                       1,
                       LA_HIST,
                       NULL,
                       0};
        add(d, r2, &p);
    }
    CHECK(db_finish_run(d, r2, DB_COMPLETE, err) == 0);

    int64_t r3 = new_run(d, "cut", "code", &e1, 0, 0);
    sample_in g = {"code", "greedy", "greedy", 0, 0, 100, 100, 99, 0, 2.0, 1, NULL, NULL, 0};
    add(d, r3, &g);
    CHECK(db_finish_run(d, r3, DB_INCOMPLETE, err) == 0);

    int64_t r4 = new_run(d, "cost", NULL, &e1, 0, 0);
    const int rows[4] = {1, 8, 32, 64};
    const double ms[4] = {1, 2, 4, 8};
    for (int i = 0; i < 4; i++) {
        /* 1 MB of weights at a measured 2 GB/s: the bandwidth bound is 0.5 ms. */
        db_cost c = {rows[i], ms[i] / 1e3, 20, 10.0 * rows[i], 1e6 / (ms[i] / 1e3) / 1e9,
                     1000000, 2.0,         -1, rows[i]};
        CHECK_MSG(db_insert_cost(d, r4, &c, err) == 0, "%s", err);
    }
    CHECK(db_finish_run(d, r4, DB_COMPLETE, err) == 0);

    /* The sweep: steps per prompt = 100 - 10 log2(W) - 4 (N - 3). */
    int64_t sweep;
    CHECK(db_begin_sweep(d, "lookahead:W=2,4,8,16;N=3,5", "code", &sweep, err) == 0);
    for (int n = 3; n <= 5; n += 2)
        for (int w = 2; w <= 16; w *= 2) {
            int64_t r = new_run(d, "sweep", "code", &e1, sweep, r1);
            char spec[64];
            snprintf(spec, sizeof spec, "lookahead:W=%d,N=%d,G=%d", w, n, w);
            long steps = 100 - 10 * (long)log2(w) - 4 * (n - 3);
            for (int idx = 0; idx < 2; idx++) {
                sample_in s = {
                    "code",      "lookahead", spec, idx,     0,    100, steps, (steps - 1) * w * n,
                    100 - steps, 1.0,         1,    LA_HIST, NULL, 0};
                add(d, r, &s);
            }
            CHECK(db_finish_run(d, r, DB_COMPLETE, err) == 0);
        }

    /* Run 13 (left running, so never the default run): two prompts of unequal length, where
     * Spec-Bench's mean of per-prompt tok/s and the ratio of totals differ. */
    int64_t r13 = new_run(d, "uneven", "code", &e1, 0, 0);
    for (int idx = 0; idx < 2; idx++) {
        sample_in g = {"code", "greedy", "greedy",        idx, 0,    100,  100,
                       99,     0,        idx ? 4.0 : 1.0, 1,   NULL, NULL, 0};
        sample_in p = {"code", "pld", "pld:ngram=3,k=10", idx, 0,    100,  50,
                       49 * 3, 50,    idx ? 3.5 : 0.5,    1,   NULL, NULL, 0};
        add(d, r13, &g);
        add(d, r13, &p);
    }
    return d;
}

/* ---- reading outputs ----------------------------------------------------------------------- */

static char *render(db *d, report_opts *o) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = report_write(d, o, f, err);
    fclose(f);
    CHECK_MSG(rc == 0, "%s", err);
    if (rc != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The markdown line holding all of a, b (and c if given). */
static const char *md_line(const char *text, const char *a, const char *b, const char *c) {
    static char line[4096];
    for (const char *p = text; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        if (strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c))) return line;
        p = e ? e + 1 : NULL;
    }
    return "";
}

/* Cells of a markdown line, trimmed, in cell[] (static). */
static int md_cells(const char *line, char cell[][256], int max) {
    int n = 0;
    const char *p = strchr(line, '|');
    while (p && n < max) {
        const char *q = strchr(p + 1, '|');
        if (!q) break;
        const char *a = p + 1, *b = q;
        while (a < b && *a == ' ') a++;
        while (b > a && b[-1] == ' ') b--;
        snprintf(cell[n++], 256, "%.*s", (int)(b - a), a);
        p = q;
    }
    return n;
}

/* Value of column `header` in the markdown row containing a and b. */
static const char *md_get(const char *text, const char *a, const char *b, const char *header) {
    static char cells[40][256], heads[40][256];
    const char *first = strchr(text, '|');
    if (!first) return "";
    /* The header row is the first table row of the (last) table: find the row containing
     * "| dataset" or "| Algorithm" or "| Variant" preceding our row. */
    const char *row = md_line(text, a, b, NULL);
    if (!row[0]) return "";
    char saved[4096];
    snprintf(saved, sizeof saved, "%s", row);
    const char *hdr = md_line(text, "| dataset", NULL, NULL);
    if (!hdr[0]) hdr = md_line(text, "| Algorithm", NULL, NULL);
    if (!hdr[0]) hdr = md_line(text, "| Variant", NULL, NULL);
    int nh = md_cells(hdr, heads, 40);
    int nc = md_cells(saved, cells, 40);
    for (int i = 0; i < nh && i < nc; i++)
        if (!strcmp(heads[i], header)) return cells[i];
    return "";
}

/* CSV: fields of one line (RFC 4180 quotes), into f[] (static). */
static int csv_fields(const char *line, char f[][256], int max) {
    int n = 0;
    const char *p = line;
    while (n < max) {
        char *o = f[n];
        int len = 0;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') p++;
                if (len < 255) o[len++] = *p;
                p++;
            }
            if (*p == '"') p++;
        } else {
            while (*p && *p != ',' && *p != '\n') {
                if (len < 255) o[len++] = *p;
                p++;
            }
        }
        o[len] = 0;
        n++;
        if (*p != ',') break;
        p++;
    }
    return n;
}

static const char *csv_get(const char *text, const char *col0, const char *col1, const char *key) {
    static char head[40][256], row[40][256];
    char line[4096];
    const char *p = text;
    const char *e = strchr(p, '\n');
    snprintf(line, sizeof line, "%.*s", (int)(e - p), p);
    int nh = csv_fields(line, head, 40);
    for (p = e + 1; *p; p = e + 1) {
        e = strchr(p, '\n');
        if (!e) break;
        snprintf(line, sizeof line, "%.*s", (int)(e - p), p);
        int nr = csv_fields(line, row, 40);
        if (nr < 2 || strcmp(row[0], col0) || strcmp(row[1], col1)) continue;
        for (int i = 0; i < nh && i < nr; i++)
            if (!strcmp(head[i], key)) return row[i];
    }
    return "(missing)";
}

static const char *jstr(json_t *v) {
    const char *s = json_string_value(v);
    return s ? s : "";
}

static int starts(const char *s, const char *prefix) {
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static json_t *json_row(json_t *root, const char *k0, const char *v0, const char *k1,
                        const char *v1) {
    json_t *rows = json_object_get(root, "rows"), *r;
    size_t i;
    json_array_foreach(rows, i, r) {
        if (!strcmp(jstr(json_object_get(r, k0)), v0) &&
            (!k1 || !strcmp(jstr(json_object_get(r, k1)), v1)))
            return r;
    }
    return NULL;
}

static double jnum(json_t *row, const char *key) {
    json_t *v = row ? json_object_get(row, key) : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int near(double a, double b) {
    return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

/* ---- tests -------------------------------------------------------------------------------- */

/* Hand figures for run 1:
 *   code / LA: per-prompt decode (0.9 + 1.1) / 2 = 1.0 s vs greedy 2.0 s  -> 2.00x
 *              e2e: (1.4 + 1.6) / 2 = 1.5 vs 2.5                          -> 1.67x
 *              Spec-Bench: per repeat, mean tok/s over mean greedy tok/s: repeat 0
 *              (100 / 1.4) / (100 / 2.5), repeat 1 (100 / 1.6) / (100 / 2.5); their mean
 *              (2.5 / 1.4 + 2.5 / 1.6) / 2 = 1.674                          -> 1.67x
 *              decode tok/s counts the 99 tokens after the prompt pass:
 *              repeat 0: 198 / 1.8 = 110.0, repeat 1: 198 / 2.2 = 90.0,
 *              mean 100.0, sd |110.0 - 90.0| / sqrt 2 = 14.14
 *              tau 1 + 75 / 24 = 4.125; acceptance 75 / 150 = 50 %
 *   math / LA: 0.5 s                                                      -> 4.00x
 *   all  / LA: (4 x 2.0) / (2 x 1.0 + 2 x 0.5)                            -> 2.67x
 *   tokens/step 100 / 25 = 4.00; accepted/step 75 / 24 = 3.125 (3.12 or 3.13 printed);
 *   rows/step: code 30.0, math 64.0; exact: code 100%, math 3 / 4 = 75.0%. */
static void test_summary(db *d) {
    int64_t run1 = 1;
    report_opts o = {.run_ids = &run1,
                     .n_runs = 1,
                     .format = REPORT_MARKDOWN,
                     .layout = REPORT_SUMMARY,
                     .ablation_decoder = NULL,
                     .cost_source = NULL};
    char *md = render(d, &o);
    if (!md) return;
    double rep0 = 198 / 1.8, rep1 = 198 / 2.2, mean = (rep0 + rep1) / 2;
    double sd = fabs(rep0 - rep1) / sqrt(2);
    char want[64];
    /* mean ± sd in one cell, as llama-bench prints it. The speed-up's sd is over repeats of
     * each repeat's ratio: code decode 2.0 / 0.9 and 2.0 / 1.1 (sd 0.29), e2e 2.5 / 1.4 and
     * 2.5 / 1.6 (0.16); all 8 / 2.8 and 8 / 3.2 (0.25); math equal in both repeats. */
    CHECK_MSG(!strcmp(md_get(md, "| code", LA, "speed-up"), "2.00x ± 0.29"), "%s", md);
    CHECK(!strcmp(md_get(md, "| code", LA, "speed-up e2e"), "1.67x ± 0.16"));
    CHECK(!strcmp(md_get(md, "| math", LA, "speed-up"), "4.00x ± 0.00"));
    CHECK(!strcmp(md_get(md, "| all", LA, "speed-up"), "2.67x ± 0.25"));
    CHECK(!strcmp(md_get(md, "| code", "| greedy", "speed-up"), "1.00x ± 0.00"));
    snprintf(want, sizeof want, "%.1f ± %.1f", mean, sd);
    CHECK(!strcmp(md_get(md, "| code", LA, "tok/s"), want));
    CHECK(!strcmp(md_get(md, "| code", LA, "sd"), "")); /* the sd column joined its mean */
    CHECK(!strcmp(md_get(md, "| code", LA, "tokens/step"), "4.00"));
    CHECK(!strcmp(md_get(md, "| code", "| greedy", "tokens/step"), "1.00"));
    CHECK(!strcmp(md_get(md, "| code", "| greedy", "rows/step"), "1.0"));
    CHECK(!strcmp(md_get(md, "| code", LA, "rows/step"), "30.0"));
    CHECK(!strcmp(md_get(md, "| math", LA, "rows/step"), "64.0"));
    CHECK(!strcmp(md_get(md, "| math", LA, "exact %"), "75.0"));
    CHECK(!strcmp(md_get(md, "| code", LA, "exact %"), "100.0"));
    CHECK(!strcmp(md_get(md, "| code", "| greedy", "accepted/step"), "-"));
    CHECK(!strchr(md_get(md, "| code", OURO_ALL, "tok/s"), '+')); /* one repeat: no sd */
    CHECK(!strcmp(md_get(md, "| code", OURO_ALL, "speed-up"), "2.50x"));
    CHECK(!strcmp(md_get(md, "| code", LA, "speed-up SB"), "1.67x"));
    CHECK(!strcmp(md_get(md, "| code", LA, "accept %"), "50.0"));
    CHECK(!strcmp(md_get(md, "| code", "| greedy", "speed-up SB"), "1.00x"));
    CHECK(strstr(md, "Run 1 (complete, 'main')") != NULL);
    CHECK(strstr(md, "commit 1111111aaa") != NULL);
    free(md);

    o.format = REPORT_CSV;
    char *csv = render(d, &o);
    if (!csv) return;
    CHECK_MSG(!strcmp(csv_get(csv, "code", LA, "speedup_decode"), "2"), "%s", csv);
    CHECK(atof(csv_get(csv, "all", LA, "speedup_decode")) == 8.0 / 3.0 ||
          near(atof(csv_get(csv, "all", LA, "speedup_decode")), 8.0 / 3.0));
    CHECK(near(atof(csv_get(csv, "code", LA, "tps_decode")), mean));
    CHECK(!strcmp(csv_get(csv, "code", LA, "accepted_per_step"), "3.125"));
    CHECK(!strcmp(csv_get(csv, "code", LA, "tau"), "4.125"));
    CHECK(!strcmp(csv_get(csv, "code", LA, "acceptance_pct"), "50"));
    CHECK(near(atof(csv_get(csv, "code", LA, "speedup_specbench")), (2.5 / 1.4 + 2.5 / 1.6) / 2));
    CHECK(!strcmp(csv_get(csv, "math", LA, "exact_pct"), "75"));
    CHECK(!strcmp(csv_get(csv, "code", OURO_ALL, "tps_decode_sd"), "")); /* missing = empty */
    CHECK(strstr(csv, "\"" LA "\"") != NULL);                            /* quoted: commas */
    free(csv);

    o.format = REPORT_JSON;
    char *js = render(d, &o);
    if (!js) return;
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    CHECK_MSG(root != NULL, "%s", je.text);
    json_t *r = json_row(root, "dataset", "code", "spec", LA);
    CHECK(near(jnum(r, "speedup_decode"), 2.0));
    CHECK(near(jnum(r, "speedup_e2e"), 2.5 / 1.5));
    CHECK(near(jnum(r, "tps_decode"), mean));
    CHECK(near(jnum(r, "tps_decode_sd"), sd));
    CHECK(near(jnum(r, "accepted_per_step"), 75.0 / 24.0));
    CHECK(near(jnum(json_row(root, "dataset", "all", "spec", LA), "speedup_decode"), 8.0 / 3));
    CHECK(json_is_null(
        json_object_get(json_row(root, "dataset", "code", "spec", "greedy"), "accepted_per_step")));
    json_t *runs = json_object_get(root, "runs");
    CHECK(json_array_size(runs) == 1);
    CHECK(!strcmp(jstr(json_object_get(json_array_get(runs, 0), "label")), "main"));
    CHECK(!strcmp(jstr(json_object_get(json_object_get(json_array_get(runs, 0), "environment"),
                                       "git_commit")),
                  "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    json_decref(root);
    free(js);
}

/* Run 13: greedy decodes 1.0 s and 4.0 s, pld 0.5 s and 3.5 s (100 tokens each, prefill
 * 0.5 s). Ratios of totals: decode 5.0 / 4.0 = 1.25x, e2e 6.0 / 5.0 = 1.20x. Spec-Bench's:
 * pld's mean tok/s (100 / 1.0 + 100 / 4.0) / 2 = 62.5 over greedy's (100 / 1.5 + 100 / 4.5) / 2
 * = 44.44: 1.40625x (the short prompt weighs as much as the long one). */
static void test_specbench_speedup(db *d) {
    int64_t run13 = 13;
    report_opts o = {.run_ids = &run13,
                     .n_runs = 1,
                     .format = REPORT_CSV,
                     .layout = REPORT_SUMMARY,
                     .ablation_decoder = NULL,
                     .cost_source = NULL};
    char *csv = render(d, &o);
    if (!csv) return;
    CHECK_MSG(near(atof(csv_get(csv, "code", "pld:ngram=3,k=10", "speedup_decode")), 1.25), "%s",
              csv);
    CHECK(near(atof(csv_get(csv, "code", "pld:ngram=3,k=10", "speedup_e2e")), 1.2));
    CHECK(near(atof(csv_get(csv, "code", "pld:ngram=3,k=10", "speedup_specbench")), 1.40625));
    CHECK(!strcmp(csv_get(csv, "code", "greedy", "speedup_specbench"), "1"));
    free(csv);
}

/* Each name means what it means at its source, in a database of its own (report_names.db):
 * dataset mt, one run, repeats 0 and 1; question 0 with two turns (sample_index 0 and 10^6),
 * question 1 with one (index 1); 100 tokens each; prefill 0.5 s.
 *   greedy      t_total 1.5, 3.5, 2.5 s in both repeats
 *   lookahead   t_total 1.0, 3.0, 1.5 s (repeat 0), twice that in repeat 1; each sample 71
 *               target steps (70 decode passes), 50 accepted, 50 of the 70 steps drafted
 * Spec-Bench's speed-up (a question's turns together, per repeat, then the mean):
 *   repeat 0: lookahead (200 / 4.0 + 100 / 1.5) / 2 = 58.333 over greedy (200 / 5.0 + 100 /
 *   2.5) / 2 = 40: 1.458333; repeat 1: (200 / 8.0 + 100 / 3.0) / 2 = 29.1667 / 40 = 0.729167;
 *   the figure (1.458333 + 0.729167) / 2 = 1.09375 (each turn as its own sample would give
 *   1.4789 in repeat 0);
 * vLLM's tau: 1 + 300 / 300 = 2.00 (1 + accepted over every verification: 1.71);
 * Spec-Bench's mean accepted tokens: decode tokens / decode steps = 99 / 70 = 1.414;
 * greedy: 1.00 and tau blank (it never drafted). */
static void test_names(void) {
    const char *path = test_tmp("report_names.db");
    unlink(path);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    db_env e = env_with("3333333ccccccccccccccccccccccccccccccccc", 0);
    int64_t run = new_run(d, "names", "mt", &e, 0, 0);
    const int idx[3] = {0, 1000000, 1};
    const double g_t[3] = {1.5, 3.5, 2.5}, l_t[3] = {1.0, 3.0, 1.5};
    for (int rep = 0; rep < 2; rep++)
        for (int q = 0; q < 3; q++)
            for (int la = 0; la < 2; la++) {
                dec_stats st;
                memset(&st, 0, sizeof st);
                st.prompt_tokens = 20, st.new_tokens = 100;
                st.target_steps = la ? 71 : 100, st.target_rows = la ? 70 * 8 : 99;
                if (la) {
                    st.verify_steps = 70, st.drafting_steps = 50, st.accepted = 50;
                    st.drafted = 150, st.accept_hist[0] = 20, st.accept_hist[1] = 50;
                }
                st.t_prefill = 0.5;
                st.t_total = la ? l_t[q] * (rep + 1) : g_t[q];
                db_sample s = {0};
                s.dataset = "mt";
                s.sample_index = idx[q];
                s.turn = idx[q] >= 1000000 ? 2 : 1;
                s.decoder = la ? "lookahead" : "greedy";
                s.spec = la ? LA : "greedy";
                s.repeat = rep;
                s.output_hash = 0x2000u + (unsigned)q;
                s.match = 1;
                CHECK_MSG(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
            }
    CHECK(db_finish_run(d, run, DB_COMPLETE, err) == 0);
    report_opts o = {.run_ids = &run, .n_runs = 1, .format = REPORT_CSV, .layout = REPORT_SUMMARY};
    char *csv = render(d, &o);
    if (csv) {
        CHECK_MSG(near(atof(csv_get(csv, "mt", LA, "speedup_specbench")), 1.09375), "%s", csv);
        CHECK(!strcmp(csv_get(csv, "mt", "greedy", "speedup_specbench"), "1"));
        CHECK(near(atof(csv_get(csv, "mt", LA, "tau")), 2.0));
        CHECK(near(atof(csv_get(csv, "mt", LA, "mean_accepted_tokens")), 99.0 / 70));
        CHECK(near(atof(csv_get(csv, "mt", LA, "accepted_per_step")), 50.0 / 70));
        CHECK(near(atof(csv_get(csv, "mt", LA, "tokens_per_step")), 100.0 / 71));
        CHECK(!strcmp(csv_get(csv, "mt", "greedy", "mean_accepted_tokens"), "1"));
        CHECK(!strcmp(csv_get(csv, "mt", "greedy", "tau"), ""));
        free(csv);
    }
    /* per sample (the samples layout): the same two figures under the same names */
    o.layout = REPORT_SAMPLES;
    char *sc = render(d, &o);
    if (sc) {
        /* run, dataset, index, id, turn, label, spec, repeat, new tokens, steps, tokens/step,
         * tau (vLLM) 2, wall, tok/s, exact, mean acc. tokens (SB) 99 / 70 */
        CHECK_MSG(strstr(sc, "\n1,mt,0,,1,\"" LA "\",\"" LA "\",0,100,70,1.408450704,2,1,100,1,"
                             "1.414285714\n") != NULL,
                  "%s", sc);
        CHECK(strstr(sc, "\n1,mt,0,,1,greedy,greedy,0,100,99,1,,1.5,66.66666667,1,1\n") != NULL);
        free(sc);
    }
    o.layout = REPORT_SUMMARY;
    o.format = REPORT_MARKDOWN;
    char *md = render(d, &o);
    if (md) {
        CHECK_MSG(strstr(md, "| tau (vLLM) |") || strstr(md, " tau (vLLM) "), "%s", md);
        CHECK(strstr(md, "mean acc. tokens (SB)") != NULL);
        free(md);
    }
    /* the definitions are one command away: report --explain names both sources */
    o.explain = 1;
    md = render(d, &o);
    if (md) {
        CHECK(strstr(md, "vLLM's mean acceptance length") && strstr(md, "#Mean Accepted Tokens"));
        free(md);
    }
    o.explain = 0;
    db_close(d);
}

/* Run 2 has no greedy: its speed-up comes from its baseline run 1 (2.0 / 1.6 = 1.25x). */
static void test_baseline_and_runs(db *d) {
    int64_t run2 = 2;
    report_opts o = {.run_ids = &run2,
                     .n_runs = 1,
                     .format = REPORT_MARKDOWN,
                     .layout = REPORT_SUMMARY,
                     .ablation_decoder = NULL,
                     .cost_source = NULL};
    char *md = render(d, &o);
    if (!md) return;
    CHECK_MSG(!strcmp(md_get(md, "| code", "W=7", "speed-up"), "1.25x"), "%s", md);
    CHECK(strstr(md, "greedy baseline from run 1") != NULL);
    CHECK(strstr(md, "+dirty") != NULL);
    free(md);

    /* Two runs: a run column. */
    int64_t both[2] = {1, 2};
    o.run_ids = both;
    o.n_runs = 2;
    o.format = REPORT_CSV;
    char *csv = render(d, &o);
    CHECK(starts(csv, "run,dataset,label,decoder,spec,param_W,param_N,param_G,"));
    free(csv);

    /* Default: the latest COMPLETE run with samples (the last sweep point, run 12; the
     * incomplete run 3 and the cost run 4 are never picked), and since it is a sweep's point,
     * every complete run of its sweep, said so (one point alone once hid the rest). */
    o.run_ids = NULL;
    o.n_runs = 0;
    o.format = REPORT_MARKDOWN;
    md = render(d, &o);
    if (md) {
        CHECK_MSG(strstr(md, "Runs ") && strstr(md, "-12 (") && strstr(md, "complete, 'sweep'"),
                  "%s", md);
        CHECK_MSG(strstr(md, "`--run ID` reports one") != NULL, "%s", md);
        CHECK_MSG(!strstr(md, "Run 3 ") && !strstr(md, "Run 4 "), "%s", md);
    }
    free(md);

    /* Errors. */
    int64_t bad = 99, cost_run = 4;
    o.run_ids = &bad;
    o.n_runs = 1;
    FILE *f = fopen("/dev/null", "w");
    CHECK(report_write(d, &o, f, err) == -1 && strstr(err, "run 99 does not exist"));
    o.run_ids = &cost_run;
    CHECK(report_write(d, &o, f, err) == -1 && strstr(err, "run 4 has no samples"));
    fclose(f);
}

/* Ouroboros Table 2 layout: per task tok/s and speed-up, end-to-end as the papers time them
 * (the whole generate call): code / LA 2.5 / 1.5 = 1.67x, math / LA 2.5 / 1.0 = 2.50x, code /
 * no-refine 2.5 / 1.75 = 1.43x; and the ablation layout, likewise end-to-end. */
static void test_paper_and_ablation(db *d) {
    int64_t run1 = 1;
    report_opts o = {.run_ids = &run1,
                     .n_runs = 1,
                     .format = REPORT_MARKDOWN,
                     .layout = REPORT_PAPER,
                     .ablation_decoder = NULL,
                     .cost_source = NULL};
    char *md = render(d, &o);
    if (!md) return;
    CHECK_MSG(!strcmp(md_get(md, "| " LA, NULL, "code speed-up"), "1.67x ± 0.16"), "%s", md);
    CHECK(!strcmp(md_get(md, "| " LA, NULL, "math speed-up"), "2.50x ± 0.00"));
    CHECK(!strcmp(md_get(md, "| greedy", NULL, "math speed-up"), "1.00x ± 0.00"));
    CHECK(!strcmp(md_get(md, "| " OURO_NOREF, NULL, "code speed-up"), "1.43x"));
    /* tok/s e2e per repeat: 200 / 2.8 and 200 / 3.2, mean 66.96, sd 6.31 */
    CHECK(!strcmp(md_get(md, "| " LA, NULL, "code tok/s"), "67.0 ± 6.3"));
    CHECK(strstr(md, "end-to-end tok/s") != NULL);
    CHECK(strstr(md, "Ouroboros") != NULL);
    free(md);
    o.format = REPORT_CSV;
    char *csv = render(d, &o);
    if (csv) {
        CHECK_MSG(starts(csv, "algorithm,code_tps,code_tps_sd,code_speedup,code_speedup_sd,"
                              "math_tps,math_tps_sd,math_speedup,math_speedup_sd\n"),
                  "%s", csv);
        CHECK(strstr(csv, "\n\"" LA "\",") != NULL);
    }
    free(csv);
    o.format = REPORT_JSON;
    char *js = render(d, &o);
    json_t *root = js ? json_loads(js, 0, NULL) : NULL;
    CHECK(near(jnum(json_row(root, "algorithm", OURO_NOINSP, NULL, NULL), "math_speedup"),
               2.5 / 1.5));
    json_decref(root);
    free(js);

    /* Ablation: inspire and refine vary, gamma/W/suffixes are fixed (named in a note). */
    o.layout = REPORT_ABLATION;
    o.format = REPORT_MARKDOWN;
    md = render(d, &o);
    if (!md) return;
    CHECK_MSG(!strcmp(md_get(md, "| " OURO_NOINSP, NULL, "inspire"), "0"), "%s", md);
    CHECK(!strcmp(md_get(md, "| " OURO_NOINSP, NULL, "refine"), "1"));
    CHECK(!strcmp(md_get(md, "| " OURO_NOINSP, NULL, "code speed-up"), "1.67x")); /* 2.5 / 1.5 */
    CHECK(!strcmp(md_get(md, "| " OURO_ALL, NULL, "code tok/s"), "76.9"));        /* 100 / 1.3 */
    CHECK(strstr(md, "fixed: gamma=4,W=20,suffixes=3") != NULL);
    CHECK(strstr(md, "| gamma") == NULL);
    CHECK(md_line(md, "| " LA, NULL, NULL)[0] == 0); /* other decoders are not variants */
    free(md);
    o.format = REPORT_CSV;
    csv = render(d, &o);
    CHECK_MSG(starts(csv, "variant,inspire,refine,code_tps,"), "%s", csv);
    free(csv);
    o.ablation_decoder = "jacobi";
    FILE *f = fopen("/dev/null", "w");
    CHECK(report_write(d, &o, f, err) == -1 && strstr(err, "no 'jacobi' samples"));
    fclose(f);
}

/* Projection from the cost curve T 1, 8, 32, 64 -> 1, 2, 4, 8 ms:
 *   code / LA (no trace, mean 30 rows): t(30) = 2 + 22 x 2 / 24 = 3.8333 ms;
 *        greedy cost 99 x 1 ms, decoder 24 x 3.8333 = 92 ms  -> 99 / 92 = 1.076 -> "1.08x"
 *   math / LA (trace 8, 120 alternating; 120 is beyond 64: t(120) = 8 + 56 x 4 / 32 = 15 ms):
 *        12 x 2 + 12 x 15 = 204 ms                             -> 99 / 204 = 0.485 -> "0.49x"
 *   greedy: 1.00x. */
static void test_projected(db *d, const char *db_path_) {
    int64_t run1 = 1;
    const char *csv_path = test_tmp("cost.csv");
    FILE *f = fopen(csv_path, "w");
    fputs("rows,seconds\n# measured by hand\n1,0.001\n32,0.004\n8,0.002\n64,0.008\n", f);
    fclose(f);
    char src[4200];
    snprintf(src, sizeof src, "%s:4", db_path_);
    const char *sources[3] = {csv_path, src, db_path_};
    for (int s = 0; s < 3; s++) {
        report_opts o = {.run_ids = &run1,
                         .n_runs = 1,
                         .format = REPORT_MARKDOWN,
                         .layout = REPORT_PROJECTED,
                         .ablation_decoder = NULL,
                         .cost_source = sources[s]};
        char *md = render(d, &o);
        if (!md) continue;
        CHECK_MSG(!strcmp(md_get(md, "| code", LA, "projected speed-up"), "1.08x"), "%s", md);
        CHECK(!strcmp(md_get(md, "| math", LA, "projected speed-up"), "0.49x"));
        CHECK(!strcmp(md_get(md, "| code", "| greedy", "projected speed-up"), "1.00x"));
        CHECK(!strcmp(md_get(md, "| code", LA, "basis"), "mean rows"));
        CHECK(!strcmp(md_get(md, "| math", LA, "basis"), "steps, extrapolated"));
        CHECK(!strcmp(md_get(md, "| code", LA, "measured speed-up"), "2.00x"));
        CHECK(strstr(md, "PROJECTED") != NULL);
        free(md);
    }
    report_opts o = {.run_ids = &run1,
                     .n_runs = 1,
                     .format = REPORT_JSON,
                     .layout = REPORT_PROJECTED,
                     .ablation_decoder = NULL,
                     .cost_source = csv_path};
    char *js = render(d, &o);
    json_t *root = js ? json_loads(js, 0, NULL) : NULL;
    CHECK(near(jnum(json_row(root, "dataset", "code", "spec", LA), "projected_speedup"),
               99.0 / (24 * (2 + 22 * 2.0 / 24))));
    CHECK(
        near(jnum(json_row(root, "dataset", "math", "spec", LA), "projected_speedup"), 99.0 / 204));
    CHECK(near(jnum(json_row(root, "dataset", "code", "spec", "greedy"), "projected_ms_per_pass"),
               1.0));
    json_decref(root);
    free(js);

    /* Bad cost sources. */
    FILE *null = fopen("/dev/null", "w");
    const char *bad = test_tmp("bad_cost.csv");
    f = fopen(bad, "w");
    fputs("rows,seconds\n1,0.001\n4,abc\n", f);
    fclose(f);
    o.cost_source = bad;
    CHECK(report_write(d, &o, null, err) == -1 && strstr(err, "bad_cost.csv:3"));
    o.cost_source = "/nonexistent/cost.csv";
    CHECK_MSG(report_write(d, &o, null, err) == -1 &&
                  strstr(err, "--project-cost /nonexistent/cost.csv: cannot open cost"),
              "%s", err);
    snprintf(src, sizeof src, "%s:1", db_path_);
    o.cost_source = src;
    CHECK(report_write(d, &o, null, err) == -1 && strstr(err, "run 1 has no cost points"));
    o.cost_source = NULL;
    CHECK(report_write(d, &o, null, err) == -1 && strstr(err, "cost source"));
    fclose(null);
}

static void test_parsers(void) {
    char path[256];
    int64_t run;
    CHECK(db_split_source("a/b.db:12", path, sizeof path, &run, err) == 0 && run == 12 &&
          !strcmp(path, "a/b.db"));
    CHECK(db_split_source("a/b.db", path, sizeof path, &run, err) == 0 && run == 0);
    CHECK(db_split_source("c:/x.db", path, sizeof path, &run, err) == 0 && run == 0 &&
          !strcmp(path, "c:/x.db"));
    report_format f;
    report_layout l;
    CHECK(report_format_parse("md", &f) == 0 && f == REPORT_MARKDOWN);
    CHECK(report_format_parse("json", &f) == 0 && f == REPORT_JSON);
    CHECK(report_format_parse("xml", &f) == -1);
    CHECK(report_layout_parse("paper", &l) == 0 && l == REPORT_PAPER);
    CHECK(report_layout_parse("nope", &l) == -1);
}

/* ---- plots --------------------------------------------------------------------------------- */

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return strdup("");
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return strdup(buf);
}

static long fsize(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_plot_data(db *d, const char *dir) {
    char path[4400];
    int64_t run1 = 1;
    /* (a) speed-up bars: rows datasets, columns non-greedy decoders with short labels. */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_SPEEDUP,
                               &(report_plot_opts){.run_ids = &run1, .n_runs = 1}, dir, err) == 0,
              "%s", err);
    snprintf(path, sizeof path, "%s/speedup.tsv", dir);
    char *t = slurp(path);
    CHECK_MSG(
        strstr(t, "\ndataset\tlookahead\terror\touroboros inspire=1,refine=1\terror\t"
                  "ouroboros inspire=0,refine=1\terror\touroboros inspire=1,refine=0\terror\n") !=
            NULL,
        "%s", t);
    /* error bars: LA's sd over repeats of each repeat's speed-up, code 2.0 / 0.9 and 2.0 / 1.1
     * -> sd 0.2857; ouroboros ran one repeat: 0 */
    CHECK_MSG(strstr(t, "\ncode\t2\t0.2857\t2.5\t0\t2\t0\t1.6\t0\n") != NULL, "%s", t);
    CHECK(strstr(t, "\nmath\t4\t0\t2.5\t0\t2\t0\t1.6\t0\n") != NULL);
    free(t);
    /* --errors prompts: LA on code, prompts 0 and 1 alike (mean decode 1.0 s): sd 0 */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_SPEEDUP,
                               &(report_plot_opts){
                                   .run_ids = &run1, .n_runs = 1, .errors = REPORT_ERRORS_PROMPTS},
                               dir, err) == 0,
              "%s", err);
    t = slurp(path);
    CHECK_MSG(strstr(t, "\ncode\t2\t0\t2.5\t0\t2\t0\t1.6\t0\n") != NULL, "%s", t);
    free(t);

    /* (b) scaling: default runs = the latest run's whole sweep; one block per N. */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_SCALING, NULL, dir, err) == 0, "%s", err);
    snprintf(path, sizeof path, "%s/scaling.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "W\tN=3\n2\t90\n4\t80\n8\t70\n16\t60\n\n\n") != NULL, "%s", t);
    CHECK(strstr(t, "W\tN=5\n2\t82\n4\t72\n8\t62\n16\t52\n\n\n") != NULL);
    CHECK(strstr(t, "W\tgreedy\n2\t100\n16\t100\n") != NULL); /* from baseline run 1 */
    free(t);

    /* (c) accept histogram shares: LA {3:21, 4:3} of 24 -> 87.5 %, 12.5 %. */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_ACCEPT,
                               &(report_plot_opts){.run_ids = &run1, .n_runs = 1}, dir, err) == 0,
              "%s", err);
    snprintf(path, sizeof path, "%s/accept.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "\n3\t87.5\t0\t0\t0\n") != NULL, "%s", t);
    CHECK(strstr(t, "\n2\t0\t75\t75\t75\n") != NULL); /* ouroboros {1:4, 2:12}: 12/16 */
    CHECK(strstr(t, "\n4\t12.5\t0\t0\t0\n") != NULL);
    free(t);

    /* (d) cost: default = latest run with cost points (run 4); bound 1 MB / 2 GB/s = 0.5 ms. */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_COST, NULL, dir, err) == 0, "%s", err);
    snprintf(path, sizeof path, "%s/cost.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "\n8\t2\t80\t0.5\t0.5\t8\t?\n") != NULL, "%s", t);
    CHECK(strstr(t, "\n64\t8\t640\t0.125\t0.5\t64\t?\n") != NULL);
    free(t);
    /* with llama-bench's CSV (pp 4 and 64, tg 128 at 100 ms per token): its column 7, and a row
     * of its own at T = 4, which the run lacks */
    char csv[4400];
    snprintf(csv, sizeof csv, "%s/llama.csv", dir);
    FILE *cf = fopen(csv, "w");
    fputs("build_commit,n_prompt,n_gen,avg_ns,avg_ts\n\"c392e5094\",\"64\",\"0\",\"320000000\","
          "\"200\"\n\"c392e5094\",\"4\",\"0\",\"40000000\",\"100\"\n\"c392e5094\",\"0\",\"128\","
          "\"12800000000\",\"10\"\n",
          cf);
    fclose(cf);
    CHECK_MSG(
        report_plot_data(d, REPORT_PLOT_COST, &(report_plot_opts){.llama_csv = csv}, dir, err) == 0,
        "%s", err);
    t = slurp(path);
    CHECK_MSG(strstr(t, "\n4\t?\t?\t?\t?\t?\t40\n8\t2\t80\t0.5\t0.5\t8\t?\n") != NULL, "%s", t);
    CHECK(strstr(t, "\n64\t8\t640\t0.125\t0.5\t64\t320\n") != NULL);
    CHECK(strstr(t, "\n1\t1\t10\t1\t0.5\t1\t100\n") != NULL); /* tg: 1 row, 100 ms */
    free(t);
    snprintf(csv, sizeof csv, "%s/missing.csv", dir);
    CHECK(report_plot_data(d, REPORT_PLOT_COST, &(report_plot_opts){.llama_csv = csv}, dir, err) ==
          -1);

    /* (e) history over explicit runs 1 and 2: commits and tok/s per decoder. Run 1 has two
     * datasets, so its figures are over all of them (400 / (2 x 1.8 + ...) etc.). */
    int64_t hist_runs[2] = {1, 2};
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_HISTORY,
                               &(report_plot_opts){.run_ids = hist_runs, .n_runs = 2}, dir,
                               err) == 0,
              "%s", err);
    snprintf(path, sizeof path, "%s/history.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "\n1\t1111111\t49.5\t") != NULL, "%s", t); /* greedy: 99 / 2.0 */
    CHECK(strstr(t, "\n2\t2222222+\t?\t?\t") != NULL);
    CHECK(strstr(t, "\t61.875\n") != NULL); /* run 2's W=7 point: 99 / 1.6, last column */
    free(t);

    /* (f) acceptance by draft position over both datasets (the add() comment's rates). */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_POSITION,
                               &(report_plot_opts){.run_ids = &run1, .n_runs = 1}, dir, err) == 0,
              "%s", err);
    snprintf(path, sizeof path, "%s/position.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "\n1\t100\t100\t100\t100\n2\t100\t75\t75\t75\n3\t100\t0\t0\t0\n"
                        "4\t12.5\t0\t0\t0\n") != NULL,
              "%s", t);
    /* block 1, the conditional rate: LA accepted 24, 24, 24, 3 per position -> 100, 100,
     * 12.5; ouroboros 16, 12, 0, 0 -> 75, 0, none (nothing accepted at 3) */
    CHECK_MSG(strstr(t, "\n\n\n# conditional") &&
                  strstr(t, "\n2\t100\t75\t75\t75\n3\t100\t0\t0\t0\n4\t12.5\t?\t?\t?\n"),
              "%s", t);
    free(t);
    /* the accept layout: rates, conditional rates, and the counts behind them (CSV) */
    report_opts ao = {.run_ids = &run1, .n_runs = 1, .format = REPORT_CSV, .layout = REPORT_ACCEPT};
    char *acsv = render(d, &ao);
    if (acsv) {
        CHECK_MSG(!strcmp(csv_get(acsv, "code", LA, "pos4_pct"), "12.5"), "%s", acsv);
        CHECK(!strcmp(csv_get(acsv, "code", LA, "cond4_pct"), "12.5"));
        CHECK(!strcmp(csv_get(acsv, "code", LA, "cond2_pct"), "100"));
        CHECK(!strcmp(csv_get(acsv, "code", OURO_ALL, "cond2_pct"), "75"));
        CHECK(!strcmp(csv_get(acsv, "code", OURO_ALL, "cond4_pct"), ""));
        /* code: 2 prompts x 2 repeats x 24 steps drafted at 1; 3 x 4 accepted at 4 */
        CHECK(!strcmp(csv_get(acsv, "code", LA, "drafted_pos1"), "96"));
        CHECK(!strcmp(csv_get(acsv, "code", LA, "accepted_pos4"), "12"));
        free(acsv);
    }
    ao.format = REPORT_MARKDOWN;
    char *amd = render(d, &ao);
    if (amd) {
        CHECK(strstr(amd, "| cond 2 % |") && !strstr(amd, "drafted 1") &&
              strstr(amd, "ik_llama.cpp"));
        free(amd);
    }

    /* (g) trade-off: per spec over both datasets: greedy (99 rows / 99 passes, 1 token per
     * step); LA rows (8 x 720 + ... ) / passes: code 30 and math 64 per pass -> 47, 4 tokens
     * per step; ouroboros 39 x 50 rows / 39 passes = 50, 100 / 40 = 2.5. Labels: the defaults
     * given (lookahead's are W=15,N=5,G=15: LA is "lookahead"). */
    const char *defaults[] = {"lookahead:W=15,N=5,G=15", "greedy"};
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_TRADEOFF,
                               &(report_plot_opts){.run_ids = &run1,
                                                   .n_runs = 1,
                                                   .default_specs = defaults,
                                                   .n_default_specs = 2},
                               dir, err) == 0,
              "%s", err);
    snprintf(path, sizeof path, "%s/tradeoff.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "rows_per_step\tgreedy\tlabel\n1\t1\tgreedy\n\n\nrows_per_step\tlookahead\t"
                        "label\n47\t4\tlookahead\n") != NULL,
              "%s", t);
    CHECK(strstr(t, "\n50\t2.5\t" OURO_ALL "\n") != NULL); /* no default spec: full spec */
    free(t);

    /* (h) W x N heatmap of the sweep (its runs by default): tokens/step = 100 / steps per
     * prompt, steps = 100 - 10 log2(W) - 4 (N - 3); cells indexed by sorted W and N. */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_HEATMAP, NULL, dir, err) == 0, "%s", err);
    snprintf(path, sizeof path, "%s/heatmap.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "\n0\t0\t1.11111\t2\t3\n") != NULL, "%s", t); /* 100 / 90 */
    CHECK(strstr(t, "\n3\t1\t1.92308\t16\t5\n") != NULL);             /* 100 / 52 */
    CHECK(strstr(t, "\n\n\nx\ty\tspeed-up over greedy (end-to-end)\tW\tN\n0\t0\t") != NULL);
    free(t);
    CHECK(report_plot_data(d, REPORT_PLOT_HEATMAP,
                           &(report_plot_opts){.run_ids = &run1, .n_runs = 1}, dir, err) == -1 &&
          strstr(err, "needs two or more lookahead specs"));

    /* (i) ablation bars of the decoder with the most variants (ouroboros): end-to-end
     * speed-up over both datasets, greedy 2.5 s per prompt over 1.3 / 1.5 / 1.75 s; one
     * repeat, so no error; tokens/step 2.5. */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_ABLATION,
                               &(report_plot_opts){.run_ids = &run1, .n_runs = 1}, dir, err) == 0,
              "%s", err);
    snprintf(path, sizeof path, "%s/ablation.tsv", dir);
    t = slurp(path);
    CHECK_MSG(strstr(t, "variant\tspeedup_e2e\terror\ttokens_per_step\n"
                        "ouroboros inspire=1,refine=1\t1.92308\t0\t2.5\n") != NULL,
              "%s", t);
    CHECK(strstr(t, "\nouroboros inspire=1,refine=0\t1.42857\t0\t2.5\n") != NULL);
    free(t);

    /* Errors: a directory that does not exist; a run with no cost points. */
    CHECK(report_plot_data(d, REPORT_PLOT_SPEEDUP,
                           &(report_plot_opts){.run_ids = &run1, .n_runs = 1}, "/nonexistent-dir",
                           err) == -1 &&
          strstr(err, "/nonexistent-dir/speedup.tsv.tmp: cannot create"));
    CHECK(report_plot_data(d, REPORT_PLOT_COST, &(report_plot_opts){.run_ids = &run1, .n_runs = 1},
                           dir, err) == -1 &&
          strstr(err, "no cost points"));
}

/* The batch figure: throughput and per-token latency against the batch size, over a run without
 * --batch (greedy: 2 samples of 11 tokens, 1 s each, 0.1 s of prompt: 22 / 2 = 11 tok/s, 90 ms
 * per token after the first) and a run at batch 2 (one batch of 1.5 s wall: 22 / 1.5 tok/s;
 * 1.2 s, 0.2 s of prompt: 100 ms). Only runs without --batch: refused. */
static void test_plot_batch(const char *dir) {
    char path[4400];
    snprintf(path, sizeof path, "%s/batch_fig.db", dir);
    unlink(path);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    int64_t runs[2];
    for (int b = 1; b <= 2; b++) {
        db_run r = {.datasets = "code", .max_new = 11, .repeats = 1, .threads = 1,
                    .kernels = "exact", .batch = b};
        CHECK_MSG(db_begin_run(d, &r, &runs[b - 1], err) == 0, "%s", err);
        for (int i = 0; i < 2; i++) {
            db_batch bt = {.batch_index = 0, .batch_wall = 1.5, .rows_per_pass = 2,
                           .t_per_token = 0.1};
            db_sample s = {.dataset = "code", .sample_index = i, .decoder = "greedy",
                           .spec = "greedy", .output_hash = 1, .match = 1,
                           .batch = b > 1 ? &bt : NULL};
            dec_stats st = {0};
            st.prompt_tokens = 5, st.new_tokens = 11, st.target_steps = 11;
            st.t_total = b > 1 ? 1.2 : 1.0, st.t_prefill = b > 1 ? 0.2 : 0.1;
            CHECK_MSG(db_insert_sample(d, runs[b - 1], &s, &st, NULL, 0, NULL, err) == 0, "%s",
                      err);
        }
        CHECK(db_finish_run(d, runs[b - 1], DB_COMPLETE, err) == 0);
    }
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_BATCH,
                               &(report_plot_opts){.run_ids = runs, .n_runs = 2}, dir, err) == 0,
              "%s", err);
    snprintf(path, sizeof path, "%s/batch.tsv", dir);
    char *t = slurp(path);
    CHECK_MSG(t && strstr(t, "batch\tgreedy\tp50_ms\tp90_ms\tp99_ms\n1\t11\t90\t90\t90\n"
                             "2\t14.6667\t100\t100\t100\n"),
              "%s", t ? t : "(none)");
    free(t);
    CHECK(report_plot_data(d, REPORT_PLOT_BATCH, &(report_plot_opts){.run_ids = runs, .n_runs = 1},
                           dir, err) == -1 &&
          strstr(err, "no batched run"));
    db_close(d);
}

static void test_plot_render(const char *dir) {
    if (system("gnuplot --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_report: gnuplot not found in PATH: rendering checks skipped\n");
        return;
    }
    for (int k = 0; k < REPORT_PLOT_KINDS; k++) {
        CHECK_MSG(report_plot_render((report_plot_kind)k, NULL, dir, dir, err) == 0, "%s", err);
        char base[64];
        snprintf(base, sizeof base, "%s", report_plot_file((report_plot_kind)k));
        *strchr(base, '.') = 0;
        for (int i = 0; i < 2; i++) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s.%s", dir, base, i ? "svg" : "png");
            CHECK_MSG(fsize(path) > 1000, "%s is %ld bytes", path, fsize(path));
        }
    }
    CHECK(report_plot_render(REPORT_PLOT_COST, "/nonexistent", dir, dir, err) == -1 &&
          strstr(err, "/nonexistent/cost.gp: cannot open gnuplot script"));
    fprintf(stderr, "test_report: plots written to %s\n", dir);
}

/* ---- text from the database in every format --------------------------------------------- */

static int count_char(const char *s, char c) {
    int n = 0;
    for (; *s; s++) n += *s == c;
    return n;
}

/* No control character but the line feeds between lines (and the tabs between fields when
 * tabs), and valid UTF-8 throughout. */
static int clean_text(const char *s, int tabs) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p < 0x20 && *p != '\n' && !(tabs && *p == '\t')) || *p == 0x7F) return 0;
        if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) return 0; /* C1 */
        if (*p >= 0x80) {
            int len = *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC2 ? 2 : 0;
            if (!len) return 0;
            for (int i = 1; i < len; i++)
                if ((p[i] & 0xC0) != 0x80) return 0;
            p += len - 1;
        }
    }
    return 1;
}

/* The escaping functions themselves, one per format (text_escape.h). */
static void test_text_escape(void) {
    /* CR LF tab, ESC, a C1 control (CSI, U+009B), an invalid byte, and each format's specials */
    const char *s = "a\rb\nc\td\x1b[2J|e,\"f\"#_\xC2\x9B\xFF~^\\{} ±";
    char *t = txt_plain(s);
    CHECK_MSG(!strcmp(t, "a\\rb\\nc\\td\\x1B[2J|e,\"f\"#_\\u009b\\xFF~^\\{} ±"), "%s", t);
    free(t);
    t = txt_md(s);
    CHECK_MSG(!strcmp(t, "a\\rb\\nc\\td\\x1B[2J\\|e,\"f\"#_\\u009b\\xFF~^\\{} ±"), "%s", t);
    free(t);
    t = txt_csv(s);
    CHECK_MSG(!strcmp(t, "\"a\\rb\\nc\\td\\x1B[2J|e,\"\"f\"\"#_\\u009b\\xFF~^\\{} ±\""), "%s", t);
    free(t);
    t = txt_csv("plain");
    CHECK(!strcmp(t, "plain"));
    free(t);
    t = txt_tsv("#x\t\"y\"#");
    CHECK_MSG(!strcmp(t, "\\x23x\\t\\x22y\\x22#"), "%s", t);
    free(t);
    t = txt_tex(s);
    CHECK_MSG(!strcmp(t,
                      "a\\textbackslash{}rb\\textbackslash{}nc\\textbackslash{}td\\textbackslash{}"
                      "x1B[2J|e,\"f\"\\#\\_\\textbackslash{}u009b\\textbackslash{}xFF"
                      "\\textasciitilde{}\\textasciicircum{}\\textbackslash{}\\{\\} $\\pm$"),
              "%s", t);
    free(t);
    /* JSON: valid UTF-8 as is (jansson escapes the controls), a stray byte as U+00XX; UTF-8
     * that only looks valid (overlong, surrogate, beyond U+10FFFF) counts as stray bytes */
    json_t *j = txt_json("caf\xFF\r\xC3\xA9\xC0\xAF\xED\xA0\x80\xF4\x90\x80\x80");
    CHECK_MSG(j && !strcmp(json_string_value(j),
                           "caf\xC3\xBF\r\xC3\xA9\xC3\x80\xC2\xAF\xC3\xAD\xC2\xA0\xC2\x80"
                           "\xC3\xB4\xC2\x90\xC2\x80\xC2\x80"),
              "%s", j ? json_string_value(j) : "(null)");
    json_decref(j);
    char buf[12];
    CHECK_MSG(!strcmp(txt_plain_buf(buf, sizeof buf, "abcdefg\x1b[2J"), "abcdefg"), "%s", buf);
}

/* A run whose label, model path and dataset name hold line breaks, a carriage return before
 * TeX, an escape sequence, a '|' and a byte that is not UTF-8: every format keeps one line per
 * row and runs nothing; JSON keeps every byte. */
static void test_hostile_text(const char *dir) {
    const char *path = test_tmp("hostile_text.db");
    unlink(path);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    static const char evil[] = "x\r\\input{evil}\n| fake | row |\n# head\x1b[2J\xFF";
    db_run r = {0};
    r.label = evil;
    r.model_path = evil;
    r.datasets = "ds";
    r.max_new = 100;
    r.repeats = 1;
    r.kernels = "exact";
    int64_t run = 0;
    CHECK_MSG(db_begin_run(d, &r, &run, err) == 0, "%s", err);
    const char *ds = "tiny\nstories\t#\"\xFF";
    add(d, run,
        &(sample_in){.ds = ds,
                     .decoder = "greedy",
                     .spec = "greedy",
                     .new_tokens = 100,
                     .steps = 100,
                     .rows = 99,
                     .t_decode = 2.0,
                     .match = -1});
    add(d, run,
        &(sample_in){.ds = ds,
                     .decoder = "lookahead",
                     .spec = LA,
                     .new_tokens = 100,
                     .steps = 25,
                     .rows = 720,
                     .accepted = 75,
                     .t_decode = 1.0,
                     .match = 1,
                     .hist = LA_HIST});
    CHECK_MSG(db_finish_run(d, run, DB_COMPLETE, err) == 0, "%s", err);
    report_opts o = {.run_ids = &run, .n_runs = 1};
    for (int f = REPORT_MARKDOWN; f <= REPORT_LATEX; f++) {
        o.format = (report_format)f;
        char *t = render(d, &o);
        if (!t) continue;
        if (f != REPORT_JSON) CHECK_MSG(clean_text(t, 0), "format %d: %s", f, t);
        if (f == REPORT_MARKDOWN) { /* every table row has the header's cells */
            int cells = -1;
            for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
                CHECK_MSG(strncmp(line, "# ", 2), "a heading from the label: %s", line);
                if (line[0] != '|') continue;
                int n = count_char(line, '|');
                for (char *p = strstr(line, "\\|"); p; p = strstr(p + 2, "\\|")) n--;
                if (cells < 0) cells = n;
                CHECK_MSG(n == cells, "%d cells, %d in the header: %s", n, cells, line);
            }
        } else if (f == REPORT_CSV) { /* header + 2 rows, one line each */
            CHECK_MSG(count_char(t, '\n') == 3, "%s", t);
            CHECK_MSG(strstr(t, "\"tiny\\nstories\\t#\"\"\\xFF\"") != NULL, "%s", t);
        } else if (f == REPORT_LATEX) { /* the label stays inside its comment line */
            for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n"))
                CHECK_MSG(line[0] == '%' || !strstr(line, "input{evil"), "%s", line);
            CHECK(!strstr(t, "\\input"));
        } else if (f == REPORT_JSON) {
            json_error_t je;
            json_t *root = json_loads(t, 0, &je);
            CHECK_MSG(root, "%s: %s", je.text, t);
            json_t *run0 = json_array_get(json_object_get(root, "runs"), 0);
            const char *label = json_string_value(json_object_get(run0, "label"));
            CHECK_MSG(label &&
                          !strcmp(label, "x\r\\input{evil}\n| fake | row |\n# head\x1b[2J\xC3\xBF"),
                      "%s", label ? label : "(no label)");
            CHECK(json_string_value(json_object_get(run0, "model_path")) != NULL);
            const char *note = json_string_value(json_array_get(json_object_get(root, "notes"), 0));
            CHECK_MSG(note && strstr(note, "\xC3\xBF"), "%s", note ? note : "(no note)");
            json_t *row = json_array_get(json_object_get(root, "rows"), 0);
            const char *dsv = json_string_value(json_object_get(row, "dataset"));
            CHECK_MSG(dsv && !strcmp(dsv, "tiny\nstories\t#\"\xC3\xBF"), "%s", dsv ? dsv : "-");
            json_decref(root);
        }
        free(t);
    }
    /* paper layout: the dataset is part of JSON keys ("<dataset>_tps") */
    o.format = REPORT_JSON;
    o.layout = REPORT_PAPER;
    char *t = render(d, &o);
    json_t *root = t ? json_loads(t, 0, NULL) : NULL;
    json_t *row = json_array_get(json_object_get(root, "rows"), 0);
    CHECK_MSG(json_object_get(row, "tiny\nstories\t#\"\xC3\xBF_tps") != NULL, "%s", t ? t : "");
    json_decref(root);
    free(t);
    /* Spec-Bench records (JSONL): one line per record, every text kept */
    o.format = REPORT_JSONL;
    o.layout = REPORT_SAMPLES;
    t = render(d, &o);
    CHECK_MSG(t && count_char(t, '\n') == 2, "%s", t ? t : "");
    for (char *line = t ? strtok(t, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, 0, NULL);
        CHECK_MSG(rec && json_string_value(json_object_get(rec, "dataset")) &&
                      json_string_value(json_object_get(rec, "model_id")),
                  "%s", line);
        json_decref(rec);
    }
    free(t);
    /* plot data: a header and one row per dataset, each with the header's fields */
    CHECK_MSG(report_plot_data(d, REPORT_PLOT_SPEEDUP,
                               &(report_plot_opts){.run_ids = &run, .n_runs = 1}, dir, err) == 0,
              "%s", err);
    char file[4400];
    snprintf(file, sizeof file, "%s/speedup.tsv", dir);
    t = slurp(file);
    CHECK_MSG(t && clean_text(t, 1), "%s", t ? t : "");
    int data_lines = 0;
    for (char *line = t ? strtok(t, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        data_lines++;
        CHECK_MSG(count_char(line, '\t') == 2 && line[0] != '"', "%s", line);
    }
    CHECK_MSG(data_lines == 2, "%d data lines", data_lines);
    free(t);
    db_close(d);
}

/* Nothing left out by a fixed size: Spec-Bench records of samples whose dataset name is longer
 * than a kilobyte stay one per repeat, and a table with a column per dataset refuses more
 * datasets than it has columns for instead of dropping some. */
static void test_no_silent_limits(void) {
    const char *path = test_tmp("limits.db");
    unlink(path);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    int64_t run = new_run(d, "limits", "long", NULL, 0, 0);
    static char ds[1200];
    memset(ds, 'a', sizeof ds - 1);
    for (int rep = 0; rep < 2; rep++)
        add(d, run,
            &(sample_in){.ds = ds,
                         .decoder = "greedy",
                         .spec = "greedy",
                         .rep = rep,
                         .new_tokens = 10,
                         .steps = 10,
                         .rows = 9,
                         .t_decode = 1,
                         .match = -1});
    report_opts o = {
        .run_ids = &run, .n_runs = 1, .format = REPORT_JSONL, .layout = REPORT_SAMPLES};
    char *t = render(d, &o);
    CHECK_MSG(t && count_char(t, '\n') == 2, "%s", t ? t : "");
    free(t);
    int64_t run2 = new_run(d, "many", "many", NULL, 0, 0);
    for (int k = 0; k < 65; k++) {
        char name[16];
        snprintf(name, sizeof name, "ds%d", k);
        add(d, run2,
            &(sample_in){.ds = name,
                         .decoder = "greedy",
                         .spec = "greedy",
                         .new_tokens = 10,
                         .steps = 10,
                         .rows = 9,
                         .t_decode = 1,
                         .match = -1});
    }
    o = (report_opts){.run_ids = &run2, .n_runs = 1, .layout = REPORT_PAPER};
    FILE *null = fopen("/dev/null", "w");
    CHECK_MSG(report_write(d, &o, null, err) == -1 && strstr(err, "more than 64 datasets"), "%s",
              err);
    fclose(null);
    db_close(d);
}

int main(void) {
    test_text_escape();
    test_no_silent_limits();
    const char *path = test_tmp("report.db");
    db *d = build(path);
    test_summary(d);
    test_baseline_and_runs(d);
    test_specbench_speedup(d);
    test_names();
    test_paper_and_ablation(d);
    test_projected(d, path);
    test_parsers();
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/plots", test_tmpdir());
    mkdir(dir, 0755);
    test_plot_data(d, dir);
    test_plot_batch(dir);
    test_plot_render(dir);
    test_hostile_text(dir);
    db_close(d);
    return test_finish("test_report");
}
