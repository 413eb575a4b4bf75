/* compare.c: matching two runs sample by sample and judging the differences (compare.h). */
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
    double greedy_t; /* greedy's decode time for this prompt in the same run (repeat mean) */
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
 * gives every record its prompt's greedy time (NAN if greedy did not run it). */
static void fill_greedy(recs *s) {
    for (int i = 0, end; i < s->n; i = end) {
        double sum = 0;
        int k = 0;
        for (end = i; end < s->n && s->r[end].index == s->r[i].index &&
                      !strcmp(s->r[end].dataset, s->r[i].dataset);
             end++)
            if (!strcmp(s->r[end].decoder, "greedy")) {
                sum += s->r[end].t_decode;
                k++;
            }
        for (int q = i; q < end; q++) s->r[q].greedy_t = k ? sum / k : NAN;
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

/* Header facts of a run: commit, model hash, kernels, sampling (e.g. "greedy", "coupled T=0.8
 * top-k=40 top-p=0.95 seed=1"), and the machine its speed depends on (threads, CPU model,
 * logical CPUs). */
typedef struct {
    char commit[32], model[32], kernels[32], cpu[256], sampling[128];
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
    if (sqlite3_prepare_v2(db_sqlite(d),
                           "SELECT COALESCE(substr(e.git_commit, 1, 10) || CASE WHEN e.git_dirty "
                           "THEN '+dirty' ELSE '' END, '?'), COALESCE(r.model_hash, '?'), "
                           "COALESCE(r.kernels, '?'), COALESCE(r.threads, 0), "
                           "COALESCE(e.cpu_model, '?'), COALESCE(e.cpu_threads, 0), "
                           "r.sampling || CASE WHEN r.sampling = 'greedy' THEN '' ELSE ' T=' || "
                           "r.temperature || ' top-k=' || r.top_k || ' top-p=' || r.top_p || "
                           "' seed=' || r.sampling_seed END FROM runs r "
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
#undef TXT
    }
    sqlite3_finalize(st);
}

/* Speed is only comparable on the same machine setup: the warnings (one line each) for
 * differing thread counts and CPUs, into res->warning; the count is returned. */
static int machine_warnings(const run_fact *f, compare_result *res) {
    int n = 0;
    size_t len = 0;
    res->warning[0] = '\0';
    if (f[0].threads != f[1].threads) {
        len += (size_t)snprintf(res->warning + len, sizeof res->warning - len,
                                "different thread counts (%d vs %d)", f[0].threads, f[1].threads);
        n++;
    }
    if (strcmp(f[0].cpu, f[1].cpu) || f[0].cpu_threads != f[1].cpu_threads) {
        if (len < sizeof res->warning)
            len += (size_t)snprintf(res->warning + len, sizeof res->warning - len,
                                    "%sdifferent CPUs (%.100s, %d logical CPUs vs %.100s, %d)",
                                    n ? "; " : "", f[0].cpu, f[0].cpu_threads, f[1].cpu,
                                    f[1].cpu_threads);
        n++;
    }
    return n;
}

/* Per decoder spec speed over the common samples, plus the speed-up over greedy within each
 * side (greedy's time for the same prompt, averaged over its repeats). */
typedef struct {
    const char *spec;
    long n;
    double tok[2], time[2], greedy_time[2];
} spec_speed;

static void key_text(const rec *r, rtable *t, int row, int c0) {
    rt_set_text(t, row, c0, r->dataset);
    rt_set_num(t, row, c0 + 1, r->index);
    rt_set_text(t, row, c0 + 2, r->spec);
    rt_set_num(t, row, c0 + 3, r->repeat);
}

int compare_runs(db *base, int64_t base_run, db *head, int64_t head_run, const compare_opts *o,
                 FILE *out, compare_result *res, char *err) {
    memset(res, 0, sizeof *res);
    double tol = o ? o->tolerance : COMPARE_DEFAULT_TOLERANCE;
    int max_listed = o && o->max_listed > 0 ? o->max_listed : 20;
    if (!(tol >= 0 && tol < 1)) return err_set(err, "compare: tolerance %g outside [0, 1)", tol);
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
    res->machine_differs = machine_warnings(fact, res);
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

    spec_speed *sp = calloc((size_t)side[0].n + 1, sizeof *sp);
    int n_sp = 0, listed = 0, rc = 0;
    if (!sp) rc = err_set(err, "compare: out of memory");
    int i = 0, j = 0;
    while (rc == 0 && (i < side[0].n || j < side[1].n)) {
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
        int differs = 0;
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
        differs = n_fields > 0;
        for (int f = 0; f < n_fields && listed < max_listed; f++) {
            int row = rt_row_add(&det);
            key_text(a, &det, row, c_key);
            rt_set_text(&det, row, c_field, fields[f][0]);
            rt_set_text(&det, row, c_b, fields[f][1]);
            rt_set_text(&det, row, c_h, fields[f][2]);
        }
        if (differs) {
            res->n_det_diff++;
            listed++;
        }
        /* Speed accumulation per spec. */
        int k = 0;
        while (k < n_sp && strcmp(sp[k].spec, a->spec)) k++;
        if (k == n_sp) sp[n_sp++].spec = a->spec;
        sp[k].n++;
        const rec *pair[2] = {a, b};
        for (int s = 0; s < 2; s++) {
            sp[k].tok[s] += pair[s]->decode_tokens;
            sp[k].time[s] += pair[s]->t_decode;
            sp[k].greedy_time[s] += pair[s]->greedy_t;
        }
    }
    if (rc == 0 && res->n_common == 0)
        rc = err_set(err,
                     "compare: base run %" PRId64 " and head run %" PRId64
                     " share no sample (different datasets or decoders?)",
                     runs[0], runs[1]);

    rtable spd;
    rt_init(&spd, NULL);
    if (rc == 0) {
        char title[160];
        snprintf(title, sizeof title,
                 "Speed (decode-only tok/s over common samples; fails when head is more than "
                 "%.1f%% slower)",
                 100 * tol);
        free(spd.title);
        spd.title = strdup(title);
        int c_spec = rt_col_add(&spd, "decoder", "spec", RT_TEXT, NULL);
        int c_n = rt_col_add(&spd, "samples", "samples", RT_INT, NULL);
        int c_bt = rt_col_add(&spd, "base tok/s", "base_tps", RT_REAL, "%.1f");
        int c_ht = rt_col_add(&spd, "head tok/s", "head_tps", RT_REAL, "%.1f");
        int c_ch = rt_col_add(&spd, "change", "change_pct", RT_REAL, "%+.1f%%");
        int c_bs = rt_col_add(&spd, "base speed-up", "base_speedup", RT_REAL, "%.2fx");
        int c_hs = rt_col_add(&spd, "head speed-up", "head_speedup", RT_REAL, "%.2fx");
        int c_v = rt_col_add(&spd, "verdict", "verdict", RT_TEXT, NULL);
        res->n_specs = n_sp;
        for (int k = 0; k < n_sp; k++) {
            double bt = sp[k].time[0] > 0 ? sp[k].tok[0] / sp[k].time[0] : NAN;
            double ht = sp[k].time[1] > 0 ? sp[k].tok[1] / sp[k].time[1] : NAN;
            /* Compare in the multiplicative form so that exactly at the limit passes. */
            int fail = !(ht >= bt * (1 - tol)) && !isnan(bt);
            res->n_speed_fail += fail;
            int row = rt_row_add(&spd);
            rt_set_text(&spd, row, c_spec, sp[k].spec);
            rt_set_num(&spd, row, c_n, sp[k].n);
            rt_set_num(&spd, row, c_bt, bt);
            rt_set_num(&spd, row, c_ht, ht);
            rt_set_num(&spd, row, c_ch, 100 * (ht / bt - 1));
            rt_set_num(&spd, row, c_bs,
                       sp[k].time[0] > 0 ? sp[k].greedy_time[0] / sp[k].time[0] : NAN);
            rt_set_num(&spd, row, c_hs,
                       sp[k].time[1] > 0 ? sp[k].greedy_time[1] / sp[k].time[1] : NAN);
            rt_set_text(&spd, row, c_v, fail ? "REGRESSION" : "ok");
        }
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
        if (strcmp(fact[0].kernels, fact[1].kernels))
            fprintf(out, "WARNING: different kernels (%s vs %s)\n", fact[0].kernels,
                    fact[1].kernels);
        if (res->machine_differs)
            fprintf(out,
                    "WARNING: %s: the speed comparison measures the machines as much as the "
                    "code\n",
                    res->warning);
        if (strcmp(fact[0].sampling, fact[1].sampling))
            fprintf(out,
                    "WARNING: different sampling (%s vs %s): output differences are expected\n",
                    fact[0].sampling, fact[1].sampling);
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
        if (rc == 0)
            fprintf(out,
                    "result: %s (%ld deterministic difference(s), %ld missing sample(s), %d "
                    "speed regression(s) of %d decoder(s))\n",
                    res->regression ? "REGRESSION" : "PASS", res->n_det_diff, res->n_only_base,
                    res->n_speed_fail, res->n_specs);
    }
    rt_free(&det);
    rt_free(&miss);
    rt_free(&spd);
    free(sp);
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
    db_close(d[0]);
    db_close(d[1]);
    return rc;
}
