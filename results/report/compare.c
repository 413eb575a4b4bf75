/* compare.c: matching two runs sample by sample and judging the differences (compare.h): the
 * deterministic figures exactly, speed as the speed-up over greedy per repeat against the noise
 * the repeats measure (Welch's t-test, Holm's adjustment; the distribution function of Student's
 * t from the regularized incomplete beta function, below). */
#include "results/report/compare.h"

#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "results/report/report.h"
#include "results/report/report_internal.h"
#include "util/text_escape.h"
#include "util/err.h"

/* The deterministic figures: every framework counter the list (stats/stats.h) marks STAT_DET,
 * then these three, then the accept histogram and the decoder's own STAT_DET counters. */
enum { DET_MATCHED = STAT_N_COUNTERS, DET_HASH, N_DET };

typedef struct {
    char *dataset, *spec, *decoder;
    int index, repeat;
    long long det[N_DET - 1]; /* the integer figures by counter index, then matched (NULL = -1) */
    char hash[17];
    char *hist;     /* accept histogram "k:count k:count", "" if none */
    char *counters; /* the decoder's deterministic counters "name=value name=value", by name */
    double decode_tokens, t_decode; /* after the prompt passes (stats/stats.h, STAT_DERIVED) */
    double greedy_t; /* greedy's decode time for this prompt and repeat in the same run (NAN:
                      * greedy did not run it) */
} rec;

typedef struct {
    rec *r;
    int n;
} recs;

static void recs_free(recs *s) {
    for (int i = 0; i < s->n; i++) {
        free(s->r[i].dataset);
        free(s->r[i].spec);
        free(s->r[i].decoder);
        free(s->r[i].hist);
        free(s->r[i].counters);
    }
    free(s->r);
    s->r = NULL;
    s->n = 0;
}

static char *dup_col(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

/* Records are sorted by prompt first, so each prompt's records are contiguous: one pass
 * gives every record greedy's time for the same prompt in the same repeat (NAN if greedy did
 * not run it): the pairs whose ratio is the speed-up (runner.h measures them back to back). */
static void fill_greedy(recs *s) {
    for (int i = 0, end; i < s->n; i = end) {
        for (end = i; end < s->n && s->r[end].index == s->r[i].index &&
                      !strcmp(s->r[end].dataset, s->r[i].dataset);
             end++)
            ;
        for (int q = i; q < end; q++) {
            s->r[q].greedy_t = NAN;
            for (int g = i; g < end; g++)
                if (!strcmp(s->r[g].decoder, "greedy") && s->r[g].repeat == s->r[q].repeat)
                    s->r[q].greedy_t = s->r[g].t_decode;
        }
    }
}

/* Samples ordered by the match key; SQLite's BINARY collation orders text like strcmp. The
 * counter columns come from the list, so a counter added there is compared without an edit. */
static const char LOAD_TAIL[] =
    ", COALESCE(matched, -1), output_hash, %s, %s, "
    "(SELECT group_concat(k || ':' || count, ' ') FROM (SELECT k, count FROM histograms h "
    "WHERE h.sample_id = samples.id AND h.kind = 'accept' ORDER BY k)), "
    "(SELECT group_concat(name || '=' || value, ' ') FROM (SELECT c.name, c.value FROM counters c "
    "JOIN counter_defs d ON d.decoder = samples.decoder AND d.name = c.name "
    "WHERE c.sample_id = samples.id AND d.deterministic ORDER BY c.name)) "
    "FROM samples WHERE run_id = ? ORDER BY dataset, sample_index, spec, repeat";

static int load(db *d, int64_t run, recs *out, char *err) {
    char sql[sizeof LOAD_TAIL + 256 + STAT_N_COUNTERS * 40];
    int len = snprintf(sql, sizeof sql, "SELECT dataset, sample_index, spec, repeat, decoder");
    for (int k = 0; k < STAT_N_COUNTERS; k++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, ", %s", stat_counters[k].name);
    snprintf(sql + len, sizeof sql - (size_t)len, LOAD_TAIL, stat_derived[STAT_D_t_decode].sql,
             stat_derived[STAT_D_decode_tokens].sql);
    sqlite3_stmt *st;
    out->r = NULL;
    out->n = 0;
    if (sqlite3_prepare_v2(db_sqlite(d), sql, -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "compare: %s: %s", db_path(d), db_errmsg(db_sqlite(d)));
    sqlite3_bind_int64(st, 1, run);
    int rc = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rec *g = realloc(out->r, (size_t)(out->n + 1) * sizeof *g);
        if (!g) {
            rc = err_set(err, "compare: out of memory");
            break;
        }
        out->r = g;
        rec *r = &out->r[out->n++];
        memset(r, 0, sizeof *r);
        int col = 0;
        r->dataset = dup_col(st, col++);
        r->index = sqlite3_column_int(st, col++);
        r->spec = dup_col(st, col++);
        r->repeat = sqlite3_column_int(st, col++);
        r->decoder = dup_col(st, col++);
        for (int k = 0; k < STAT_N_COUNTERS; k++) r->det[k] = sqlite3_column_int64(st, col++);
        r->det[DET_MATCHED] = sqlite3_column_int64(st, col++);
        const unsigned char *hash = sqlite3_column_text(st, col++);
        snprintf(r->hash, sizeof r->hash, "%s", hash ? (const char *)hash : "");
        r->t_decode = sqlite3_column_double(st, col++);
        r->decode_tokens = sqlite3_column_double(st, col++);
        r->hist = dup_col(st, col++);
        r->counters = dup_col(st, col++);
        if (!r->dataset || !r->spec || !r->decoder || !r->hist || !r->counters) {
            rc = err_set(err, "compare: out of memory");
            break;
        }
    }
    sqlite3_finalize(st);
    if (rc != 0)
        recs_free(out);
    else
        fill_greedy(out);
    return rc;
}

/* The value of "name=" in a "name=value name=value" list into out ("" if absent). */
static void counter_value(const char *list, const char *name, size_t name_len, char *out,
                          size_t n) {
    out[0] = 0;
    for (const char *p = list; p && *p; p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL)
        if (!strncmp(p, name, name_len) && p[name_len] == '=') {
            snprintf(out, n, "%.*s", (int)strcspn(p + name_len + 1, " "), p + name_len + 1);
            return;
        }
}

static int key_cmp(const rec *a, const rec *b) {
    int c = strcmp(a->dataset, b->dataset);
    if (c) return c;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    if ((c = strcmp(a->spec, b->spec))) return c;
    return a->repeat < b->repeat ? -1 : a->repeat > b->repeat;
}

/* Header facts of a run: commit, model hash, kernels, KV cache type, sampling (e.g. "greedy",
 * "coupled T=0.8 top-k=40 top-p=0.95 seed=1"), and the machine its speed depends on (threads, CPU
 * model, logical CPUs). */
typedef struct {
    char commit[32], model[32], kernels[32], cpu[256], sampling[128], kv[16];
    int threads, cpu_threads;
} run_fact;

static void run_facts(db *d, int64_t run, run_fact *f) {
    sqlite3_stmt *st;
    memset(f, 0, sizeof *f);
    strcpy(f->commit, "?");
    strcpy(f->model, "?");
    strcpy(f->kernels, "?");
    strcpy(f->cpu, "?");
    strcpy(f->sampling, "?");
    strcpy(f->kv, "?");
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT COALESCE(substr(e.git_commit, 1, 10) || CASE WHEN e.git_dirty "
                           "THEN '+dirty' ELSE '' END, '?'), COALESCE(r.model_hash, '?'), "
                           "COALESCE(r.kernels, '?'), COALESCE(r.threads, 0), "
                           "COALESCE(e.cpu_model, '?'), COALESCE(e.cpu_threads, 0), "
                           "r.sampling || CASE WHEN r.sampling = 'greedy' THEN '' ELSE ' T=' || "
                           "r.temperature || ' top-k=' || r.top_k || ' top-p=' || r.top_p || "
                           "' seed=' || r.sampling_seed END, r.kv_type FROM runs r "
                           "LEFT JOIN environments e ON e.id = r.env_id WHERE r.id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, run);
    if (sqlite3_step(st) == SQLITE_ROW) {
        /* kept as printed: these reach the terminal in the header lines and warnings */
#define TXT(i) ((const char *)sqlite3_column_text(st, i))
        txt_plain_buf(f->commit, sizeof f->commit, TXT(0));
        txt_plain_buf(f->model, sizeof f->model, TXT(1));
        txt_plain_buf(f->kernels, sizeof f->kernels, TXT(2));
        f->threads = sqlite3_column_int(st, 3);
        txt_plain_buf(f->cpu, sizeof f->cpu, TXT(4));
        f->cpu_threads = sqlite3_column_int(st, 5);
        txt_plain_buf(f->sampling, sizeof f->sampling, TXT(6) ? TXT(6) : "?");
        txt_plain_buf(f->kv, sizeof f->kv, TXT(7) ? TXT(7) : "?");
#undef TXT
    }
    sqlite3_finalize(st);
}

/* What differs between the runs besides the code, one clause each ("threads (2 vs 4)"), into
 * res->warning; the count of those that move speed (threads, CPU, kernels, KV cache type) is
 * returned. The
 * commit is named too: comparing two commits is the gate's job, but a noise check of one
 * commit against itself should see that it is one. */
static int run_differences(const run_fact *f, compare_result *res) {
    int n = 0;
    size_t len = 0;
    res->warning[0] = '\0';
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (len < sizeof res->warning)                                                             \
            len += (size_t)snprintf(res->warning + len, sizeof res->warning - len, __VA_ARGS__);   \
    } while (0)
    if (f[0].threads != f[1].threads) {
        ADD("different thread counts (%d vs %d)", f[0].threads, f[1].threads);
        n++;
    }
    if (strcmp(f[0].cpu, f[1].cpu) || f[0].cpu_threads != f[1].cpu_threads) {
        ADD("%sdifferent CPUs (%.100s, %d logical CPUs vs %.100s, %d)", n ? "; " : "", f[0].cpu,
            f[0].cpu_threads, f[1].cpu, f[1].cpu_threads);
        n++;
    }
    if (strcmp(f[0].kernels, f[1].kernels)) {
        ADD("%sdifferent kernels (%s vs %s)", n ? "; " : "", f[0].kernels, f[1].kernels);
        n++;
    }
    if (strcmp(f[0].kv, f[1].kv)) {
        ADD("%sdifferent KV cache types (%s vs %s)", n ? "; " : "", f[0].kv, f[1].kv);
        n++;
    }
#undef ADD
    return n;
}

/* ---- the statistics --------------------------------------------------------------------- */

static double mean_of(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    return n ? s / n : NAN;
}

/* Sample variance (n - 1). */
static double var_of(const double *x, int n, double m) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
    return n > 1 ? s / (n - 1) : NAN;
}

/* The continued fraction of the regularized incomplete beta function I_x(a, b) (DLMF 8.17.22),
 * evaluated by the modified Lentz method; converges fast for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 500; m++) {
        /* the even step d_2m, then the odd step d_2m+1 */
        for (int odd = 0; odd < 2; odd++) {
            double num = odd ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                             : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
            d = 1 + num * d;
            c = 1 + num / c;
            d = 1 / (fabs(d) < tiny ? tiny : d);
            if (fabs(c) < tiny) c = tiny;
            h *= d * c;
            if (odd && fabs(d * c - 1) < 1e-15) return h;
        }
    }
    return h;
}

static double beta_regularized(double a, double b, double x) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

/* P(T <= t) for Student's t with df degrees of freedom: the lower tail is half of
 * I_{df/(df+t^2)}(df/2, 1/2). */
static double student_cdf(double t, double df) {
    double tail = 0.5 * beta_regularized(df / 2, 0.5, df / (df + t * t));
    return t < 0 ? tail : 1 - tail;
}

double compare_welch_p(const double *base, int nb, const double *head, int nh) {
    if (nb < 2 || nh < 2) return NAN;
    double mb = mean_of(base, nb), mh = mean_of(head, nh);
    double vb = var_of(base, nb, mb) / nb, vh = var_of(head, nh, mh) / nh, se2 = vb + vh;
    if (!(se2 > 0)) return mh < mb ? 0 : 1;
    double df = se2 * se2 / (vb * vb / (nb - 1) + vh * vh / (nh - 1));
    return student_cdf((mh - mb) / sqrt(se2), df);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double compare_speed_p(const double *base, int nb, const double *head, int nh, int n_prompts) {
    if (nb < 2 || nh < 2 || n_prompts < 1) return NAN;
    const double *x[2] = {base, head};
    int n[2] = {nb, nh};
    double *med[2] = {malloc(sizeof(double) * (size_t)nb), malloc(sizeof(double) * (size_t)nh)};
    double *col = malloc(sizeof(double) * (size_t)n_prompts), p = NAN;
    if (med[0] && med[1] && col) {
        for (int s = 0; s < 2; s++)
            for (int r = 0; r < n[s]; r++) {
                for (int q = 0; q < n_prompts; q++) col[q] = x[s][(size_t)q * (size_t)n[s] + r];
                qsort(col, (size_t)n_prompts, sizeof *col, cmp_double);
                med[s][r] = n_prompts % 2 ? col[n_prompts / 2]
                                          : (col[n_prompts / 2 - 1] + col[n_prompts / 2]) / 2;
            }
        p = compare_welch_p(med[0], nb, med[1], nh);
    }
    free(med[0]);
    free(med[1]);
    free(col);
    return p;
}

void compare_holm(double *p, int n) {
    int *order = malloc(sizeof *order * (size_t)(n ? n : 1)), m = 0;
    if (!order) { /* Bonferroni, the bound Holm improves on: never laxer */
        int k = 0;
        for (int i = 0; i < n; i++) k += !isnan(p[i]);
        for (int i = 0; i < n; i++)
            if (!isnan(p[i])) p[i] = fmin(1, p[i] * k);
        return;
    }
    for (int i = 0; i < n; i++)
        if (!isnan(p[i])) order[m++] = i;
    for (int i = 1; i < m; i++) /* ascending p (a few decoders: insertion sort) */
        for (int j = i; j > 0 && p[order[j - 1]] > p[order[j]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    double run = 0;
    for (int k = 0; k < m; k++) {
        double adj = fmin(1, p[order[k]] * (m - k));
        run = adj > run ? adj : run;
        p[order[k]] = run;
    }
    free(order);
}

/* ---- speed per decoder spec ------------------------------------------------------------- */

/* One side of one spec, over the prompts both sides ran with the spec (P of them, in the
 * records' order, which is the same on both sides). */
typedef struct {
    /* complete repeats (every common prompt measured; speed-up: greedy too): per repeat the
     * speed-up (greedy's sum / the decoder's) and tok/s, as the table shows them */
    double *speedup, *tps;
    int n_speedup, n_tps;
    /* per prompt (rows) and complete repeat: log(greedy's t / the decoder's) and log tok/s,
     * what the test reads (compare_speed_p) */
    double *log_speedup, *log_tps;
} side_speed;

typedef struct {
    const char *spec, *decoder;
    char label[256];
    long prompts; /* common prompts */
    side_speed side[2];
    double p, p_tps; /* Holm-adjusted one-sided p-values (NAN: not judged) */
} spec_speed;

static void side_free(side_speed *s) {
    free(s->speedup);
    free(s->tps);
    free(s->log_speedup);
    free(s->log_tps);
    memset(s, 0, sizeof *s);
}

/* Whether side holds a sample of spec for the prompt (dataset, index): binary search, the
 * records being sorted by dataset, index, spec. */
static int has_prompt(const recs *side, const char *dataset, int index, const char *spec) {
    int lo = 0, hi = side->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const rec *r = &side->r[mid];
        int c = strcmp(r->dataset, dataset);
        if (!c) c = r->index < index ? -1 : r->index > index;
        if (!c) c = strcmp(r->spec, spec);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < side->n && !strcmp(side->r[lo].dataset, dataset) && side->r[lo].index == index &&
           !strcmp(side->r[lo].spec, spec);
}

/* Fills out from the records of sp's spec on this side whose prompt the other side ran too;
 * *prompts gets their number. Returns -1 when out of memory. */
static int side_collect(spec_speed *sp, const recs *mine, const recs *other, side_speed *out,
                        long *prompts) {
    /* the common prompts and the repeats */
    int max_rep = -1;
    long n_p = 0;
    const rec *prev = NULL;
    for (int i = 0; i < mine->n; i++) {
        const rec *r = &mine->r[i];
        if (strcmp(r->spec, sp->spec) || r->repeat < 0 ||
            !has_prompt(other, r->dataset, r->index, r->spec))
            continue;
        if (!prev || prev->index != r->index || strcmp(prev->dataset, r->dataset)) n_p++;
        prev = r;
        if (r->repeat > max_rep) max_rep = r->repeat;
    }
    *prompts = n_p;
    int n_rep = max_rep + 1;
    if (n_p == 0 || n_rep <= 0 || n_rep > 100000 || n_p > 10000000 / n_rep) return 0;
    size_t cells = (size_t)n_p * (size_t)n_rep;
    double *t = malloc(cells * sizeof *t), *g = malloc(cells * sizeof *g),
           *tok = malloc(cells * sizeof *tok);
    out->speedup = calloc((size_t)n_rep, sizeof *out->speedup);
    out->tps = calloc((size_t)n_rep, sizeof *out->tps);
    out->log_speedup = calloc(cells, sizeof *out->log_speedup);
    out->log_tps = calloc(cells, sizeof *out->log_tps);
    int rc = 0;
    if (!t || !g || !tok || !out->speedup || !out->tps || !out->log_speedup || !out->log_tps)
        rc = -1;
    for (size_t c = 0; rc == 0 && c < cells; c++) t[c] = g[c] = tok[c] = NAN;
    long p = -1;
    prev = NULL;
    for (int i = 0; rc == 0 && i < mine->n; i++) {
        const rec *r = &mine->r[i];
        if (strcmp(r->spec, sp->spec) || r->repeat < 0 ||
            !has_prompt(other, r->dataset, r->index, r->spec))
            continue;
        if (!prev || prev->index != r->index || strcmp(prev->dataset, r->dataset)) p++;
        prev = r;
        size_t c = (size_t)p * (size_t)n_rep + (size_t)r->repeat;
        t[c] = r->t_decode;
        g[c] = r->greedy_t;
        tok[c] = r->decode_tokens;
    }
    /* A repeat counts when it measured every common prompt: a partial one would weigh another
     * mix of prompts. The log values are stored prompt-major, as compare_speed_p reads them. */
    int *tps_ok = rc == 0 ? calloc((size_t)n_rep, sizeof *tps_ok) : NULL,
        *su_ok = rc == 0 ? calloc((size_t)n_rep, sizeof *su_ok) : NULL;
    if (rc == 0 && (!tps_ok || !su_ok)) rc = -1;
    for (int r = 0; rc == 0 && r < n_rep; r++) {
        double st = 0, sg = 0, sk = 0;
        int timed = 1, greedy = 1;
        for (long q = 0; q < n_p; q++) {
            size_t c = (size_t)q * (size_t)n_rep + (size_t)r;
            timed &= t[c] > 0 && tok[c] > 0;
            greedy &= g[c] > 0;
            st += t[c], sg += g[c], sk += tok[c];
        }
        tps_ok[r] = timed;
        su_ok[r] = timed && greedy;
        if (timed) out->tps[out->n_tps++] = sk / st;
        if (timed && greedy) out->speedup[out->n_speedup++] = sg / st;
    }
    for (long q = 0; rc == 0 && q < n_p; q++) {
        int kt = 0, ks = 0;
        for (int r = 0; r < n_rep; r++) {
            size_t c = (size_t)q * (size_t)n_rep + (size_t)r;
            if (tps_ok[r])
                out->log_tps[(size_t)q * (size_t)out->n_tps + (size_t)kt++] = log(tok[c] / t[c]);
            if (su_ok[r])
                out->log_speedup[(size_t)q * (size_t)out->n_speedup + (size_t)ks++] =
                    log(g[c] / t[c]);
        }
    }
    free(tps_ok);
    free(su_ok);
    free(t);
    free(g);
    free(tok);
    return rc;
}

/* "0.45x ± 0.02" style cells come from rtable pairs; these are the means and sds. */
static double sd_of(const double *x, int n) {
    return n > 1 ? sqrt(var_of(x, n, mean_of(x, n))) : NAN;
}

/* The verdict of one spec into v (and whether it is a regression, within noise, unjudged). */
typedef enum { V_OK, V_REF, V_NOISE, V_FAIL, V_UNJUDGED } verdict;

static verdict judge(const spec_speed *sp, double tol, double alpha, int gate_tps, char *v,
                     size_t n) {
    const side_speed *b = &sp->side[0], *h = &sp->side[1];
    int greedy = !strcmp(sp->decoder, "greedy");
    /* each figure judged: the speed-up (not greedy's, 1 by definition), tok/s with gate_tps */
    struct {
        int on;
        const double *xb, *xh;
        int nb, nh;
        double p;
        const char *what;
    } fig[2] = {{!greedy, b->speedup, h->speedup, b->n_speedup, h->n_speedup, sp->p, ""},
                {gate_tps, b->tps, h->tps, b->n_tps, h->n_tps, sp->p_tps, " (tok/s)"}};
    verdict worst = greedy && !gate_tps ? V_REF : V_OK;
    v[0] = '\0';
    for (int k = 0; k < 2; k++) {
        if (!fig[k].on) continue;
        if (k == 0 && (b->n_tps >= 1 && h->n_tps >= 1) && (!b->n_speedup || !h->n_speedup)) {
            snprintf(v, n, "no greedy in the run to compare with: not judged");
            return V_UNJUDGED;
        }
        if (fig[k].nb < COMPARE_MIN_REPEATS || fig[k].nh < COMPARE_MIN_REPEATS) {
            snprintf(v, n, "not enough repeats to judge speed (%d and %d; --repeats 3 or more)",
                     fig[k].nb, fig[k].nh);
            return V_UNJUDGED;
        }
        double mb = mean_of(fig[k].xb, fig[k].nb), mh = mean_of(fig[k].xh, fig[k].nh);
        /* the multiplicative form, so that a drop of exactly the tolerance passes */
        if (mh >= mb * (1 - tol)) continue;
        verdict here = fig[k].p < alpha ? V_FAIL : V_NOISE;
        if (here > worst || (here == worst && !v[0])) {
            snprintf(v, n, "%s%s, p = %.2g", here == V_FAIL ? "REGRESSION" : "within noise",
                     fig[k].what, fig[k].p);
            worst = here;
        }
    }
    if (!v[0]) snprintf(v, n, "%s", worst == V_REF ? "reference" : "ok");
    return worst;
}

static void key_text(const rec *r, rtable *t, int row, int c0) {
    rt_set_text(t, row, c0, r->dataset);
    rt_set_num(t, row, c0 + 1, r->index);
    rt_set_text(t, row, c0 + 2, r->spec);
    rt_set_num(t, row, c0 + 3, r->repeat);
}

/* The specs both sides ran, greedy first, then in base's order of records, with their labels. */
static int speed_specs(const recs *side, spec_speed **out, int *n) {
    *out = calloc((size_t)side[0].n + 1, sizeof **out);
    *n = 0;
    if (!*out) return -1;
    for (int i = 0; i < side[0].n; i++) {
        const rec *r = &side[0].r[i];
        int seen = 0;
        for (int k = 0; k < *n && !seen; k++) seen = !strcmp((*out)[k].spec, r->spec);
        int other = 0;
        for (int j = 0; j < side[1].n && !other && !seen; j++)
            other = !strcmp(side[1].r[j].spec, r->spec);
        if (seen || !other) continue;
        (*out)[*n].spec = r->spec;
        (*out)[*n].decoder = r->decoder;
        (*out)[*n].p = (*out)[*n].p_tps = NAN;
        (*n)++;
    }
    /* greedy, the reference, first (the records come sorted by spec, not in the run's order) */
    for (int k = 1; k < *n; k++)
        if (!strcmp((*out)[k].decoder, "greedy")) {
            spec_speed g = (*out)[k];
            memmove(*out + 1, *out, sizeof **out * (size_t)k);
            (*out)[0] = g;
        }
    const char **specs = malloc(sizeof *specs * (size_t)(*n ? *n : 1));
    if (!specs) return -1;
    for (int k = 0; k < *n; k++) specs[k] = (*out)[k].spec;
    for (int k = 0; k < *n; k++)
        rep_label_among(specs[k], specs, *n, (*out)[k].label, sizeof(*out)[k].label);
    free(specs);
    return 0;
}

/* The speed table, its notes and the list of full specs; fills res's speed counts. */
static int speed_table(const recs *side, double tol, double alpha, int gate_tps, rtable *spd,
                       char *specs_line, size_t specs_n, compare_result *res, char *err) {
    spec_speed *sp;
    int n_sp;
    if (speed_specs(side, &sp, &n_sp)) {
        free(sp);
        return err_set(err, "compare: out of memory");
    }
    int rc = 0;
    double *p = calloc((size_t)n_sp + 1, sizeof *p), *pt = calloc((size_t)n_sp + 1, sizeof *pt);
    if (!p || !pt) rc = err_set(err, "compare: out of memory");
    for (int k = 0; rc == 0 && k < n_sp; k++) {
        long prompts[2] = {0, 0};
        for (int s = 0; s < 2 && rc == 0; s++)
            if (side_collect(&sp[k], &side[s], &side[1 - s], &sp[k].side[s], &prompts[s]))
                rc = err_set(err, "compare: out of memory");
        sp[k].prompts = prompts[0];
        const side_speed *b = &sp[k].side[0], *h = &sp[k].side[1];
        int n_p = (int)sp[k].prompts;
        p[k] = strcmp(sp[k].decoder, "greedy") ? compare_speed_p(b->log_speedup, b->n_speedup,
                                                                 h->log_speedup, h->n_speedup, n_p)
                                               : NAN;
        pt[k] = gate_tps ? compare_speed_p(b->log_tps, b->n_tps, h->log_tps, h->n_tps, n_p) : NAN;
    }
    if (rc == 0) {
        compare_holm(p, n_sp);
        compare_holm(pt, n_sp);
    }
    int judged = 0;
    for (int k = 0; rc == 0 && k < n_sp; k++) {
        sp[k].p = p[k], sp[k].p_tps = pt[k];
        judged += !isnan(p[k]);
    }
    if (rc == 0) {
        free(spd->title);
        spd->title =
            strdup("Speed: speed-up over greedy in the same run, per repeat (decode-only)");
        if (!spd->title) spd->oom = 1;
        rt_note(spd,
                "REGRESSION: the mean speed-up drops by more than %.0f%% (--tolerance) and a "
                "one-sided Welch t-test over the repeats (each repeat's median over the prompts "
                "of log(greedy's time / the decoder's)) gives p < %.2g (--alpha; p adjusted for "
                "the %d decoder(s) judged, Holm); a larger drop with p >= %.2g is within noise "
                "(more --repeats tell). tok/s: %s.",
                100 * tol, alpha, judged, alpha,
                gate_tps ? "judged the same way (--gate-tps)"
                         : "this machine's, reported, not judged (--gate-tps judges it)");
        int c_spec = rt_col_add(spd, "decoder", "label", RT_TEXT, NULL);
        int c_full = rt_col_add(spd, "spec", "spec", RT_TEXT, NULL);
        rt_col_hide(spd, c_full);
        int c_n = rt_col_add(spd, "repeats", "repeats", RT_TEXT, NULL);
        int c_bs = rt_col_add(spd, "base speed-up", "base_speedup", RT_REAL, "%.2fx");
        rt_col_pair(spd, c_bs, rt_col_add(spd, "sd", "base_speedup_sd", RT_REAL, "%.2f"));
        int c_hs = rt_col_add(spd, "head speed-up", "head_speedup", RT_REAL, "%.2fx");
        rt_col_pair(spd, c_hs, rt_col_add(spd, "sd", "head_speedup_sd", RT_REAL, "%.2f"));
        int c_ch = rt_col_add(spd, "change", "change_pct", RT_REAL, "%+.1f%%");
        int c_v = rt_col_add(spd, "verdict", "verdict", RT_TEXT, NULL);
        int c_bt = rt_col_add(spd, "base tok/s", "base_tps", RT_REAL, "%.1f");
        rt_col_pair(spd, c_bt, rt_col_add(spd, "sd", "base_tps_sd", RT_REAL, "%.1f"));
        int c_ht = rt_col_add(spd, "head tok/s", "head_tps", RT_REAL, "%.1f");
        rt_col_pair(spd, c_ht, rt_col_add(spd, "sd", "head_tps_sd", RT_REAL, "%.1f"));
        int c_tch = rt_col_add(spd, "tok/s change", "tps_change_pct", RT_REAL, "%+.1f%%");
        res->n_specs = n_sp;
        size_t len = 0;
        specs_line[0] = '\0';
        for (int k = 0; k < n_sp; k++) {
            const side_speed *b = &sp[k].side[0], *h = &sp[k].side[1];
            char v[160], reps[48];
            verdict vd = judge(&sp[k], tol, alpha, gate_tps, v, sizeof v);
            res->n_speed_fail += vd == V_FAIL;
            res->n_noise += vd == V_NOISE;
            res->n_unjudged += vd == V_UNJUDGED;
            res->n_judged += vd == V_OK || vd == V_NOISE || vd == V_FAIL;
            int row = rt_row_add(spd);
            double bs = mean_of(b->speedup, b->n_speedup), hs = mean_of(h->speedup, h->n_speedup);
            double bt = mean_of(b->tps, b->n_tps), ht = mean_of(h->tps, h->n_tps);
            snprintf(reps, sizeof reps, "%d / %d", b->n_tps, h->n_tps);
            rt_set_text(spd, row, c_spec, sp[k].label);
            rt_set_text(spd, row, c_full, sp[k].spec);
            rt_set_text(spd, row, c_n, reps);
            rt_set_num(spd, row, c_bs, bs);
            rt_set_num(spd, row, c_bs + 1, sd_of(b->speedup, b->n_speedup));
            rt_set_num(spd, row, c_hs, hs);
            rt_set_num(spd, row, c_hs + 1, sd_of(h->speedup, h->n_speedup));
            rt_set_num(spd, row, c_ch, 100 * (hs / bs - 1));
            rt_set_text(spd, row, c_v, v);
            rt_set_num(spd, row, c_bt, bt);
            rt_set_num(spd, row, c_bt + 1, sd_of(b->tps, b->n_tps));
            rt_set_num(spd, row, c_ht, ht);
            rt_set_num(spd, row, c_ht + 1, sd_of(h->tps, h->n_tps));
            rt_set_num(spd, row, c_tch, 100 * (ht / bt - 1));
            if (strcmp(sp[k].label, sp[k].spec) && len < specs_n)
                len += (size_t)snprintf(specs_line + len, specs_n - len, "%s%s = %s",
                                        len ? "; " : "", sp[k].label, sp[k].spec);
        }
    }
    for (int k = 0; k < n_sp; k++) side_free(&sp[k].side[0]), side_free(&sp[k].side[1]);
    free(sp);
    free(p);
    free(pt);
    return rc;
}

int compare_runs(db *base, int64_t base_run, db *head, int64_t head_run, const compare_opts *o,
                 FILE *out, compare_result *res, char *err) {
    memset(res, 0, sizeof *res);
    double tol = o ? o->tolerance : COMPARE_DEFAULT_TOLERANCE;
    double alpha = o && o->alpha != 0 ? o->alpha : COMPARE_DEFAULT_ALPHA;
    int gate_tps = o ? o->gate_tps : 0;
    int max_listed = o && o->max_listed > 0 ? o->max_listed : 20;
    if (!(tol >= 0 && tol < 1)) return err_set(err, "compare: tolerance %g outside [0, 1)", tol);
    if (!(alpha > 0 && alpha < 1)) return err_set(err, "compare: alpha %g outside (0, 1)", alpha);
    db *dbs[2] = {base, head};
    int64_t runs[2] = {base_run, head_run};
    for (int s = 0; s < 2; s++) {
        int64_t *ids;
        int n;
        char inner[ERR_LEN];
        int rc = runs[s] ? rep_resolve_runs(dbs[s], &runs[s], 1, 0, &ids, &n, inner)
                         : rep_resolve_runs(dbs[s], NULL, 0, 0, &ids, &n, inner);
        if (rc != 0)
            return err_set(err, "compare: %s: %s", s ? "head" : "base", inner + strlen("report: "));
        runs[s] = ids[0];
        free(ids);
    }
    recs side[2] = {{0}};
    if (load(base, runs[0], &side[0], err) != 0) return -1;
    if (load(head, runs[1], &side[1], err) != 0) {
        recs_free(&side[0]);
        return -1;
    }

    run_fact fact[2];
    for (int s = 0; s < 2; s++) run_facts(dbs[s], runs[s], &fact[s]);
    res->machine_differs = run_differences(fact, res);
    res->models_differ = strcmp(fact[0].model, fact[1].model) != 0;

    /* Deterministic table: one line per differing figure of a sample. */
    rtable det;
    rt_init(&det, "Deterministic figures (must be equal)");
    int c_key = rt_col_add(&det, "dataset", "dataset", RT_TEXT, NULL);
    rt_col_add(&det, "sample", "sample", RT_INT, NULL);
    rt_col_add(&det, "decoder", "spec", RT_TEXT, NULL);
    rt_col_add(&det, "repeat", "repeat", RT_INT, NULL);
    int c_field = rt_col_add(&det, "field", "field", RT_TEXT, NULL);
    int c_b = rt_col_add(&det, "base", "base", RT_TEXT, NULL);
    int c_h = rt_col_add(&det, "head", "head", RT_TEXT, NULL);
    rtable miss;
    rt_init(&miss, "Samples in base but missing in head");
    rt_col_add(&miss, "dataset", "dataset", RT_TEXT, NULL);
    rt_col_add(&miss, "sample", "sample", RT_INT, NULL);
    rt_col_add(&miss, "decoder", "spec", RT_TEXT, NULL);
    rt_col_add(&miss, "repeat", "repeat", RT_INT, NULL);

    int listed = 0, rc = 0;
    int i = 0, j = 0;
    while (i < side[0].n || j < side[1].n) {
        int c = i >= side[0].n ? 1 : j >= side[1].n ? -1 : key_cmp(&side[0].r[i], &side[1].r[j]);
        if (c < 0) {
            if (res->n_only_base < max_listed) key_text(&side[0].r[i], &miss, rt_row_add(&miss), 0);
            res->n_only_base++;
            i++;
            continue;
        }
        if (c > 0) {
            res->n_only_head++;
            j++;
            continue;
        }
        const rec *a = &side[0].r[i++], *b = &side[1].r[j++];
        res->n_common++;
        /* One line per differing figure: name, base value, head value. */
        char fields[N_DET + STAT_MAX_COUNTERS + 1][3][96];
        int n_fields = 0;
        for (int k = 0; k < N_DET; k++) {
            if (k < STAT_N_COUNTERS && stat_counters[k].det != STAT_DET) continue;
            char va[24], vb[24];
            const char *sa = va, *sb = vb;
            if (k == DET_HASH) {
                sa = a->hash;
                sb = b->hash;
            } else {
                snprintf(va, sizeof va, "%lld", a->det[k]);
                snprintf(vb, sizeof vb, "%lld", b->det[k]);
            }
            if (!strcmp(sa, sb)) continue;
            snprintf(fields[n_fields][0], 96, "%s",
                     k < STAT_N_COUNTERS ? stat_counters[k].name
                     : k == DET_MATCHED  ? "matched"
                                         : "output_hash");
            snprintf(fields[n_fields][1], 96, "%s", sa);
            snprintf(fields[n_fields++][2], 96, "%s", sb);
        }
        if (strcmp(a->hist, b->hist)) {
            snprintf(fields[n_fields][0], 96, "accept_hist");
            snprintf(fields[n_fields][1], 96, "%s", a->hist[0] ? a->hist : "(empty)");
            snprintf(fields[n_fields++][2], 96, "%s", b->hist[0] ? b->hist : "(empty)");
        }
        /* The decoder's own deterministic counters: each one base has must be equal in head (a
         * counter only head has is new, like a sample only head has). */
        for (const char *p = a->counters; *p && n_fields < N_DET + STAT_MAX_COUNTERS + 1;) {
            size_t name_len = strcspn(p, "=");
            char va[64], vb[64];
            counter_value(a->counters, p, name_len, va, sizeof va);
            counter_value(b->counters, p, name_len, vb, sizeof vb);
            if (strcmp(va, vb)) {
                snprintf(fields[n_fields][0], 96, "%s.%.*s", a->decoder, (int)name_len, p);
                snprintf(fields[n_fields][1], 96, "%s", va);
                snprintf(fields[n_fields++][2], 96, "%s", vb[0] ? vb : "(absent)");
            }
            p += strcspn(p, " ");
            p += *p == ' ';
        }
        for (int f = 0; f < n_fields && listed < max_listed; f++) {
            int row = rt_row_add(&det);
            key_text(a, &det, row, c_key);
            rt_set_text(&det, row, c_field, fields[f][0]);
            rt_set_text(&det, row, c_b, fields[f][1]);
            rt_set_text(&det, row, c_h, fields[f][2]);
        }
        if (n_fields > 0) {
            res->n_det_diff++;
            listed++;
        }
    }
    if (res->n_common == 0)
        rc = err_set(err,
                     "compare: base run %" PRId64 " and head run %" PRId64
                     " share no sample (different datasets or decoders?)",
                     runs[0], runs[1]);

    rtable spd;
    rt_init(&spd, NULL);
    char specs_line[4096];
    if (rc == 0)
        rc = speed_table(side, tol, alpha, gate_tps, &spd, specs_line, sizeof specs_line, res, err);
    if (rc == 0) {
        res->regression = res->n_det_diff > 0 || res->n_only_base > 0 || res->n_speed_fail > 0;
        fprintf(out,
                "# compare: base %s run %" PRId64 " (commit %s) vs head %s run %" PRId64
                " (commit %s)\n\n",
                db_path(base), runs[0], fact[0].commit, db_path(head), runs[1], fact[1].commit);
        fprintf(out, "samples: %ld compared, %ld only in base, %ld only in head\n", res->n_common,
                res->n_only_base, res->n_only_head);
        if (res->models_differ)
            fprintf(out,
                    "WARNING: the runs used different models (hash %s vs %s): output "
                    "differences are expected\n",
                    fact[0].model, fact[1].model);
        if (res->machine_differs)
            fprintf(out,
                    "WARNING: %s: the speed comparison measures the machines as much as the "
                    "code\n",
                    res->warning);
        if (strcmp(fact[0].commit, fact[1].commit))
            fprintf(out, "note: different commits (%s vs %s)\n", fact[0].commit, fact[1].commit);
        if (strcmp(fact[0].sampling, fact[1].sampling))
            fprintf(out,
                    "WARNING: different sampling (%s vs %s): output differences are expected\n",
                    fact[0].sampling, fact[1].sampling);
        if (strcmp(fact[0].kv, fact[1].kv))
            fprintf(out,
                    "WARNING: different KV cache types (%s vs %s): output differences are "
                    "expected\n",
                    fact[0].kv, fact[1].kv);
        fputc('\n', out);
        if (res->n_det_diff) {
            rt_note(&det, "%ld sample(s) differ%s.", res->n_det_diff,
                    res->n_det_diff > max_listed ? "; the first ones are listed" : "");
            rc = rt_write(&det, REPORT_MARKDOWN, out, NULL, err);
        } else {
            fprintf(out, "deterministic figures: all %ld common samples equal\n\n", res->n_common);
        }
        if (rc == 0 && res->n_only_base) rc = rt_write(&miss, REPORT_MARKDOWN, out, NULL, err);
        if (rc == 0) rc = rt_write(&spd, REPORT_MARKDOWN, out, NULL, err);
        if (rc == 0 && specs_line[0]) fprintf(out, "decoders: %s\n\n", specs_line);
        if (rc == 0)
            fprintf(out,
                    "result: %s (%ld deterministic difference(s), %ld missing sample(s), %d "
                    "speed regression(s) of %d decoder(s) judged; %d within noise, %d not "
                    "judged)\n",
                    res->regression ? "REGRESSION" : "PASS", res->n_det_diff, res->n_only_base,
                    res->n_speed_fail, res->n_judged, res->n_noise, res->n_unjudged);
    }
    rt_free(&det);
    rt_free(&miss);
    rt_free(&spd);
    recs_free(&side[0]);
    recs_free(&side[1]);
    return rc;
}

int compare_sources(const char *base_arg, const char *head_arg, const compare_opts *o, FILE *out,
                    compare_result *res, char *err) {
    char path[2][4096];
    int64_t run[2];
    const char *args[2] = {base_arg, head_arg};
    db *d[2] = {NULL, NULL};
    int rc = 0;
    for (int s = 0; s < 2 && rc == 0; s++) {
        char inner[ERR_LEN];
        if (db_split_source(args[s], path[s], sizeof path[s], &run[s], inner) != 0 ||
            db_open(&d[s], path[s], DB_READ_ANY, inner) != 0)
            rc = err_set(err, "compare: %s: %s", s ? "head" : "base", inner);
    }
    if (rc == 0) rc = compare_runs(d[0], run[0], d[1], run[1], o, out, res, err);
    /* head first: when both are one file, base's handle opened it first and removes the side
     * files SQLite made for the readers, which it can only do as the last connection */
    db_close(d[1]);
    db_close(d[0]);
    return rc;
}
