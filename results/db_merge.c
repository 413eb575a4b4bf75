/* db_merge.c: `decbench merge OUT IN...`: the runs and sweeps of one database added to another,
 * shards of one piece of work (run/sweep --shard I/N) put back together.
 *
 * What is "the same run": a sharded run (runs.shard "I/N") belongs with OUT's run of the same
 * work: same shard count N, decoders, datasets, templates, max_new, repeats, warm-up, kernels
 * and seed, and for a sweep the same grid and position in it (baseline first, then the points
 * in order). That run must also come from the same build and models (commit, model and draft
 * SHA-256): shards that differ there are refused, not merged side by side. A run without a shard
 * is the same run when its start time, command and model hash are equal (a database merged
 * twice). Anything else is new in OUT: it is copied with its samples.
 *
 * Samples are keyed as everywhere (dataset, sample_index, spec, repeat). A sample already in
 * OUT must have the same deterministic figures (output hash, match flag, every STAT_DET counter
 * of stats/stats.h, the histograms): then it is skipped, which is how greedy samples measured
 * by two shards (a prompt at a shard boundary) and a second merge of the same file change
 * nothing; if they differ the merge is refused. Everything happens in one transaction on OUT:
 * a refused merge leaves OUT as it was.
 *
 * A merged run's status: failed when a shard failed (a decoder differed from greedy),
 * complete when all N shards are in and each was complete, otherwise incomplete (reports then
 * do not take a partial run for the latest result). A shard that is still running or was
 * interrupted is refused: finish it with --resume first. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "results/db_internal.h"
#include "util/err.h"

/* ---- small SQL helpers ------------------------------------------------------------------------
 */

static int prep(sqlite3 *h, const char *sql, sqlite3_stmt **st, char *err) {
    if (sqlite3_prepare_v2(h, sql, -1, st, NULL) != SQLITE_OK)
        return err_set(err, "merge: %s", sqlite3_errmsg(h));
    return 0;
}

static char *col_text(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

static int same_text(const char *a, const char *b) {
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Copies one row: every column of `sel`'s current row that `table` of OUT has, except `skip`
 * (its INTEGER PRIMARY KEY), with column `set_col` (may be NULL) replaced by set_val, and a
 * second override (set2_col, may be NULL). *new_id gets the new rowid. */
static int copy_row(sqlite3 *out, const char *table, sqlite3_stmt *sel, const char *skip,
                    const char *set_col, int64_t set_val, const char *set2_col, int64_t set2_val,
                    int set2_null, int64_t *new_id, char *err) {
    char cols[4096] = "", marks[1024] = "";
    size_t lc = 0, lm = 0;
    int n = sqlite3_column_count(sel), map[128], k = 0;
    for (int i = 0; i < n && k < 128; i++) {
        const char *name = sqlite3_column_name(sel, i);
        if (skip && !strcmp(name, skip)) continue;
        /* only columns OUT has (a newer input may have more; an older one fewer) */
        if (sqlite3_table_column_metadata(out, "main", table, name, NULL, NULL, NULL, NULL, NULL) !=
            SQLITE_OK)
            continue;
        lc += (size_t)snprintf(cols + lc, sizeof cols - lc, "%s\"%s\"", k ? ", " : "", name);
        lm += (size_t)snprintf(marks + lm, sizeof marks - lm, "%s?", k ? "," : "");
        map[k++] = i;
    }
    if (lc >= sizeof cols || lm >= sizeof marks)
        return err_set(err, "merge: %s: too many columns", table);
    char sql[6000];
    snprintf(sql, sizeof sql, "INSERT INTO %s (%s) VALUES (%s)", table, cols, marks);
    sqlite3_stmt *ins;
    if (prep(out, sql, &ins, err)) return -1;
    for (int j = 0; j < k; j++) {
        const char *name = sqlite3_column_name(sel, map[j]);
        if (set_col && !strcmp(name, set_col))
            sqlite3_bind_int64(ins, j + 1, set_val);
        else if (set2_col && !strcmp(name, set2_col) && set2_null)
            sqlite3_bind_null(ins, j + 1);
        else if (set2_col && !strcmp(name, set2_col))
            sqlite3_bind_int64(ins, j + 1, set2_val);
        else
            sqlite3_bind_value(ins, j + 1, sqlite3_column_value(sel, map[j]));
    }
    int rc = sqlite3_step(ins) == SQLITE_DONE
                 ? 0
                 : err_set(err, "merge: %s: %s", table, sqlite3_errmsg(out));
    sqlite3_finalize(ins);
    if (rc == 0 && new_id) *new_id = sqlite3_last_insert_rowid(out);
    return rc;
}

/* Copies every row of IN's `table` whose `key` column is `old` into OUT with key = new_id. */
static int copy_children(sqlite3 *in, sqlite3 *out, const char *table, const char *key, int64_t old,
                         int64_t new_id, char *err) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s = ?", table, key);
    sqlite3_stmt *sel;
    if (prep(in, sql, &sel, err)) return -1;
    sqlite3_bind_int64(sel, 1, old);
    int rc = 0;
    while (rc == 0 && sqlite3_step(sel) == SQLITE_ROW)
        rc = copy_row(out, table, sel, NULL, key, new_id, NULL, 0, 0, NULL, err);
    sqlite3_finalize(sel);
    return rc;
}

/* ---- runs --------------------------------------------------------------------------------- */

typedef struct {
    int64_t id, sweep_id, baseline, env_id;
    char *shard, *decoders, *datasets, *tpl, *kernels, *command, *started, *status, *model_hash,
        *model_sha, *draft_hash, *draft_sha, *commit, *cpu;
    int64_t max_new, repeats, warmup, seed, threads;
} mrun;

#define RUN_COLS                                                                                   \
    "r.id, COALESCE(r.sweep_id, 0), COALESCE(r.baseline_run_id, 0), COALESCE(r.env_id, 0), "       \
    "r.shard, r.decoders, r.datasets, r.template, r.kernels, r.command, r.started, r.status, "     \
    "r.model_hash, r.model_sha256, r.draft_hash, r.draft_sha256, "                                 \
    "e.git_commit || CASE WHEN e.git_dirty THEN '+dirty' ELSE '' END, e.cpu_model, "               \
    "COALESCE(r.max_new, 0), COALESCE(r.repeats, 0), COALESCE(r.warmup, 0), COALESCE(r.seed, 0), " \
    "COALESCE(r.threads, 0) FROM runs r LEFT JOIN environments e ON e.id = r.env_id "

static void mrun_read(sqlite3_stmt *st, mrun *r) {
    int c = 0;
    r->id = sqlite3_column_int64(st, c++);
    r->sweep_id = sqlite3_column_int64(st, c++);
    r->baseline = sqlite3_column_int64(st, c++);
    r->env_id = sqlite3_column_int64(st, c++);
    char **texts[] = {&r->shard,      &r->decoders,  &r->datasets, &r->tpl,        &r->kernels,
                      &r->command,    &r->started,   &r->status,   &r->model_hash, &r->model_sha,
                      &r->draft_hash, &r->draft_sha, &r->commit,   &r->cpu};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) *texts[i] = col_text(st, c++);
    r->max_new = sqlite3_column_int64(st, c++);
    r->repeats = sqlite3_column_int64(st, c++);
    r->warmup = sqlite3_column_int64(st, c++);
    r->seed = sqlite3_column_int64(st, c++);
    r->threads = sqlite3_column_int64(st, c++);
}

static void mrun_free(mrun *r) {
    char *texts[] = {r->shard,      r->decoders,  r->datasets, r->tpl,        r->kernels,
                     r->command,    r->started,   r->status,   r->model_hash, r->model_sha,
                     r->draft_hash, r->draft_sha, r->commit,   r->cpu};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) free(texts[i]);
    memset(r, 0, sizeof *r);
}

/* Runs of one database matching `where` (bound to a), in id order. */
static int load_runs(sqlite3 *h, const char *where, int64_t a, mrun **out, int *n, char *err) {
    char sql[2048];
    snprintf(sql, sizeof sql, "SELECT " RUN_COLS "WHERE %s ORDER BY r.id", where);
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    if (prep(h, sql, &st, err)) return -1;
    if (strchr(where, '?')) sqlite3_bind_int64(st, 1, a);
    while (sqlite3_step(st) == SQLITE_ROW) {
        mrun *g = realloc(*out, sizeof *g * (size_t)(*n + 1));
        if (!g) {
            sqlite3_finalize(st);
            return err_set(err, "merge: out of memory");
        }
        *out = g;
        memset(&g[*n], 0, sizeof g[*n]);
        mrun_read(st, &g[(*n)++]);
    }
    sqlite3_finalize(st);
    return 0;
}

static void runs_free(mrun *r, int n) {
    for (int i = 0; i < n; i++) mrun_free(&r[i]);
    free(r);
}

/* Shards "I/N" or "1,3/4": the count N and the set of I (bit i-1 of *set, up to 64 shards
 * tracked; beyond, the set is not kept and the run stays incomplete until all are merged by
 * count). Returns 0 when s names shards. */
static int shard_parse(const char *s, int *n, unsigned char *set, int max) {
    if (!s) return -1;
    const char *slash = strrchr(s, '/');
    if (!slash) return -1;
    *n = atoi(slash + 1);
    if (*n < 1 || *n > max) return -1;
    memset(set, 0, (size_t)max);
    for (const char *p = s; p < slash;) {
        int i = atoi(p);
        if (i < 1 || i > *n) return -1;
        set[i - 1] = 1;
        p = strchr(p, ',');
        if (!p || p > slash) break;
        p++;
    }
    return 0;
}

#define MAX_SHARDS 100000

/* The same piece of work (for sharded runs), whatever the shard. */
static int same_work(const mrun *a, const mrun *b) {
    int na, nb;
    static unsigned char sa[MAX_SHARDS], sb[MAX_SHARDS];
    if (shard_parse(a->shard, &na, sa, MAX_SHARDS) || shard_parse(b->shard, &nb, sb, MAX_SHARDS))
        return 0;
    return na == nb && same_text(a->decoders, b->decoders) && same_text(a->datasets, b->datasets) &&
           same_text(a->tpl, b->tpl) && same_text(a->kernels, b->kernels) &&
           a->max_new == b->max_new && a->repeats == b->repeats && a->warmup == b->warmup &&
           a->seed == b->seed;
}

/* A run without shards merged before: same start, command and model. */
static int same_copy(const mrun *a, const mrun *b) {
    return !a->shard && !b->shard && same_text(a->started, b->started) &&
           same_text(a->command, b->command) && same_text(a->model_hash, b->model_hash);
}

/* Shards of one work must come from one build and the same models. */
static int check_same_build(const mrun *o, const mrun *i, const char *in_path, char *err) {
    struct {
        const char *what, *a, *b;
    } f[] = {{"commit", o->commit, i->commit},
             {"model SHA-256", o->model_sha ? o->model_sha : o->model_hash,
              i->model_sha ? i->model_sha : i->model_hash},
             {"draft SHA-256", o->draft_sha ? o->draft_sha : o->draft_hash,
              i->draft_sha ? i->draft_sha : i->draft_hash}};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        if (!same_text(f[k].a, f[k].b))
            return err_set(err,
                           "%s: run %" PRId64 " (shard %s) has %s %s, the shards already in the "
                           "output have %s: shards of one work must come from one build and the "
                           "same models (merge it into another file)",
                           in_path, i->id, i->shard, f[k].what, f[k].b ? f[k].b : "(none)",
                           f[k].a ? f[k].a : "(none)");
    return 0;
}

/* OUT's environment id for IN's environment row (copied when absent). */
static int map_env(sqlite3 *in, sqlite3 *out, int64_t env, int64_t *out_env, char *err) {
    *out_env = 0;
    if (!env) return 0;
    sqlite3_stmt *sel, *q;
    if (prep(in, "SELECT * FROM environments WHERE id = ?", &sel, err)) return -1;
    sqlite3_bind_int64(sel, 1, env);
    int rc = 0;
    if (sqlite3_step(sel) == SQLITE_ROW) {
        const char *fp = NULL;
        for (int i = 0; i < sqlite3_column_count(sel); i++)
            if (!strcmp(sqlite3_column_name(sel, i), "fingerprint"))
                fp = (const char *)sqlite3_column_text(sel, i);
        if (prep(out, "SELECT id FROM environments WHERE fingerprint = ?", &q, err) == 0) {
            sqlite3_bind_text(q, 1, fp, -1, SQLITE_TRANSIENT);
            if (sqlite3_step(q) == SQLITE_ROW)
                *out_env = sqlite3_column_int64(q, 0);
            else
                rc = copy_row(out, "environments", sel, "id", NULL, 0, NULL, 0, 0, out_env, err);
            sqlite3_finalize(q);
        } else {
            rc = -1;
        }
    }
    sqlite3_finalize(sel);
    return rc;
}

/* ---- samples ------------------------------------------------------------------------------ */

/* The deterministic fingerprint of a sample: output hash, match, turn, every STAT_DET counter
 * and the histograms, as one text. */
static int sample_det(sqlite3 *h, int64_t sid, char *buf, size_t n, char *err) {
    char sql[2048];
    int len = snprintf(sql, sizeof sql, "SELECT output_hash || '|' || COALESCE(matched, '-')");
    for (int k = 0; k < STAT_N_COUNTERS; k++)
        if (stat_counters[k].det == STAT_DET)
            len += snprintf(sql + len, sizeof sql - (size_t)len, " || '|' || %s",
                            stat_counters[k].name);
    snprintf(sql + len, sizeof sql - (size_t)len,
             " || '|' || COALESCE((SELECT group_concat(kind || ':' || k || '=' || count) FROM "
             "(SELECT * FROM histograms WHERE sample_id = ?1 ORDER BY kind, k)), '') "
             "FROM samples WHERE id = ?1");
    sqlite3_stmt *st;
    if (prep(h, sql, &st, err)) return -1;
    sqlite3_bind_int64(st, 1, sid);
    buf[0] = '\0';
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return 0;
}

/* Adds IN run in_run's samples to OUT run out_run; counts in res. */
static int merge_samples(sqlite3 *in, sqlite3 *out, const char *in_path, int64_t in_run,
                         int64_t out_run, db_merge_result *res, char *err) {
    sqlite3_stmt *sel, *find;
    if (prep(in, "SELECT * FROM samples WHERE run_id = ? ORDER BY id", &sel, err)) return -1;
    if (prep(out,
             "SELECT id FROM samples WHERE run_id = ? AND dataset = ? AND sample_index = ? AND "
             "spec = ? AND repeat = ?",
             &find, err)) {
        sqlite3_finalize(sel);
        return -1;
    }
    sqlite3_bind_int64(sel, 1, in_run);
    int rc = 0, c_id = -1, c_ds = -1, c_ix = -1, c_spec = -1, c_rep = -1;
    for (int i = 0; i < sqlite3_column_count(sel); i++) {
        const char *nm = sqlite3_column_name(sel, i);
        c_id = !strcmp(nm, "id") ? i : c_id;
        c_ds = !strcmp(nm, "dataset") ? i : c_ds;
        c_ix = !strcmp(nm, "sample_index") ? i : c_ix;
        c_spec = !strcmp(nm, "spec") ? i : c_spec;
        c_rep = !strcmp(nm, "repeat") ? i : c_rep;
    }
    while (rc == 0 && sqlite3_step(sel) == SQLITE_ROW) {
        int64_t old = sqlite3_column_int64(sel, c_id), have = 0;
        sqlite3_reset(find);
        sqlite3_bind_int64(find, 1, out_run);
        sqlite3_bind_value(find, 2, sqlite3_column_value(sel, c_ds));
        sqlite3_bind_value(find, 3, sqlite3_column_value(sel, c_ix));
        sqlite3_bind_value(find, 4, sqlite3_column_value(sel, c_spec));
        sqlite3_bind_value(find, 5, sqlite3_column_value(sel, c_rep));
        if (sqlite3_step(find) == SQLITE_ROW) have = sqlite3_column_int64(find, 0);
        if (have) {
            char a[4096], b[4096];
            if (sample_det(out, have, a, sizeof a, err) || sample_det(in, old, b, sizeof b, err)) {
                rc = -1;
                break;
            }
            if (strcmp(a, b)) {
                rc = err_set(err,
                             "%s: run %" PRId64 ": sample %s[%d] %s repeat %d differs from the "
                             "same sample already in the output (deterministic figures %s vs "
                             "%s): refusing to merge",
                             in_path, in_run, (const char *)sqlite3_column_text(sel, c_ds),
                             sqlite3_column_int(sel, c_ix),
                             (const char *)sqlite3_column_text(sel, c_spec),
                             sqlite3_column_int(sel, c_rep), b, a);
                break;
            }
            res->samples_same++;
            continue;
        }
        int64_t sid;
        rc = copy_row(out, "samples", sel, "id", "run_id", out_run, NULL, 0, 0, &sid, err) ||
             copy_children(in, out, "histograms", "sample_id", old, sid, err) ||
             copy_children(in, out, "trace", "sample_id", old, sid, err) ||
             copy_children(in, out, "counters", "sample_id", old, sid, err);
        res->samples_added += rc == 0;
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(find);
    return rc ? -1 : 0;
}

/* ---- one run ------------------------------------------------------------------------------ */

static const char *status_worst(const char *a, const char *b) {
    return !strcmp(a, "failed") || !strcmp(b, "failed") ? "failed" : a;
}

/* Merges IN run `ir` into OUT run o (existing: *o_id != 0) or a new copy; sweep and baseline
 * ids are OUT's. */
static int merge_run(sqlite3 *in, sqlite3 *out, const char *in_path, const mrun *ir,
                     const mrun *or_, int64_t out_sweep, int64_t out_base, int64_t *o_id,
                     db_merge_result *res, char *err) {
    if (ir->shard && strcmp(ir->status, "complete") && strcmp(ir->status, "failed"))
        return err_set(err,
                       "%s: run %" PRId64 " (shard %s) is '%s': finish it first (repeat its "
                       "command with --resume %" PRId64 "), then merge",
                       in_path, ir->id, ir->shard, ir->status, ir->id);
    if (or_) {
        if (ir->shard && check_same_build(or_, ir, in_path, err)) return -1;
        *o_id = or_->id;
        if (or_->cpu && ir->cpu && (strcmp(or_->cpu, ir->cpu) || or_->threads != ir->threads))
            snprintf(res->note, sizeof res->note,
                     "shards ran on different machines (%.80s, %" PRId64 " threads vs %.80s, "
                     "%" PRId64 "): each speed-up pairs a decoder with greedy on one machine, "
                     "but tok/s mix machines",
                     or_->cpu, or_->threads, ir->cpu, ir->threads);
    } else {
        int64_t env;
        sqlite3_stmt *sel;
        if (map_env(in, out, ir->env_id, &env, err) ||
            prep(in, "SELECT * FROM runs WHERE id = ?", &sel, err))
            return -1;
        sqlite3_bind_int64(sel, 1, ir->id);
        int rc = sqlite3_step(sel) == SQLITE_ROW ? 0 : err_set(err, "merge: run vanished");
        if (rc == 0)
            rc = copy_row(out, "runs", sel, "id", "env_id", env, out_sweep ? "sweep_id" : NULL,
                          out_sweep, 0, o_id, err);
        sqlite3_finalize(sel);
        if (rc) return -1;
        /* OUT's sweep and baseline ids, no env when there was none */
        sqlite3_stmt *up;
        if (prep(out,
                 "UPDATE runs SET sweep_id = NULLIF(?2, 0), baseline_run_id = NULLIF(?3, 0), "
                 "env_id = NULLIF(?4, 0) WHERE id = ?1",
                 &up, err))
            return -1;
        sqlite3_bind_int64(up, 1, *o_id);
        sqlite3_bind_int64(up, 2, out_sweep);
        sqlite3_bind_int64(up, 3, out_base);
        sqlite3_bind_int64(up, 4, env);
        rc = sqlite3_step(up) == SQLITE_DONE ? 0 : err_set(err, "merge: %s", sqlite3_errmsg(out));
        sqlite3_finalize(up);
        if (rc || copy_children(in, out, "cost", "run_id", ir->id, *o_id, err)) return -1;
        res->runs_added++;
    }
    if (merge_samples(in, out, in_path, ir->id, *o_id, res, err)) return -1;
    if (!or_ && !ir->shard) return 0; /* a plain copy keeps its status and shard */
    /* the shard set and the status of the merged run */
    int n, ni;
    static unsigned char set[MAX_SHARDS], add[MAX_SHARDS];
    const char *status = or_ ? status_worst(or_->status, ir->status) : ir->status;
    if (or_ && !ir->shard) { /* the same unsharded run: the input may have been resumed since */
        status = ir->status;
    } else {
        if (shard_parse(or_ ? or_->shard : ir->shard, &n, set, MAX_SHARDS) ||
            shard_parse(ir->shard, &ni, add, MAX_SHARDS))
            return err_set(err, "%s: run %" PRId64 ": unreadable shard '%s'", in_path, ir->id,
                           ir->shard);
        int all = 1, added = 0;
        char text[4096] = "";
        size_t len = 0;
        for (int i = 0; i < n; i++) {
            if (add[i] && !set[i]) added = 1;
            set[i] |= add[i];
            all &= set[i];
            if (set[i] && len < sizeof text - 16)
                len +=
                    (size_t)snprintf(text + len, sizeof text - len, "%s%d", len ? "," : "", i + 1);
        }
        snprintf(text + len, sizeof text - len, "/%d", n);
        res->shards_added += added;
        if (strcmp(status, "failed")) status = all ? "complete" : "incomplete";
        sqlite3_stmt *up;
        if (prep(out, "UPDATE runs SET shard = ?2 WHERE id = ?1", &up, err)) return -1;
        sqlite3_bind_int64(up, 1, *o_id);
        sqlite3_bind_text(up, 2, text, -1, SQLITE_TRANSIENT);
        int rc =
            sqlite3_step(up) == SQLITE_DONE ? 0 : err_set(err, "merge: %s", sqlite3_errmsg(out));
        sqlite3_finalize(up);
        if (rc) return -1;
    }
    sqlite3_stmt *up;
    if (prep(out, "UPDATE runs SET status = ?2 WHERE id = ?1 AND status <> ?2", &up, err))
        return -1;
    sqlite3_bind_int64(up, 1, *o_id);
    sqlite3_bind_text(up, 2, status, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(up) == SQLITE_DONE ? 0 : err_set(err, "merge: %s", sqlite3_errmsg(out));
    sqlite3_finalize(up);
    return rc;
}

/* The OUT run matching IN run r among cand[0..n). */
static const mrun *match(const mrun *r, const mrun *cand, int n) {
    for (int i = 0; i < n; i++)
        if (r->shard ? same_work(r, &cand[i]) : same_copy(r, &cand[i])) return &cand[i];
    return NULL;
}

/* ---- sweeps and the whole file ------------------------------------------------------------ */

static int merge_sweep(sqlite3 *in, sqlite3 *out, const char *in_path, int64_t in_sweep,
                       db_merge_result *res, char *err) {
    mrun *ir = NULL, *orr = NULL;
    int ni = 0, no = 0, rc = -1;
    char *spec = NULL, *dataset = NULL;
    sqlite3_stmt *st = NULL;
    int64_t out_sweep = 0;
    if (load_runs(in, "r.sweep_id = ?", in_sweep, &ir, &ni, err) ||
        prep(in, "SELECT spec, dataset FROM sweeps WHERE id = ?", &st, err))
        goto done;
    sqlite3_bind_int64(st, 1, in_sweep);
    if (sqlite3_step(st) == SQLITE_ROW) {
        spec = col_text(st, 0);
        dataset = col_text(st, 1);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (!spec || ni == 0) { /* a sweep without runs: nothing to merge */
        rc = 0;
        goto done;
    }
    /* OUT's sweep of the same grid whose runs match these, position by position */
    if (prep(out, "SELECT id FROM sweeps WHERE spec = ? ORDER BY id", &st, err)) goto done;
    sqlite3_bind_text(st, 1, spec, -1, SQLITE_TRANSIENT);
    while (!out_sweep && sqlite3_step(st) == SQLITE_ROW) {
        int64_t cand = sqlite3_column_int64(st, 0);
        runs_free(orr, no);
        orr = NULL;
        if (load_runs(out, "r.sweep_id = ?", cand, &orr, &no, err)) goto done;
        int ok = no == ni;
        for (int k = 0; ok && k < ni; k++) ok = match(&ir[k], &orr[k], 1) != NULL;
        if (ok) out_sweep = cand;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (!out_sweep) {
        runs_free(orr, no);
        orr = NULL;
        no = 0;
        if (prep(out, "INSERT INTO sweeps (spec, dataset) VALUES (?, ?)", &st, err)) goto done;
        sqlite3_bind_text(st, 1, spec, -1, SQLITE_TRANSIENT);
        if (dataset)
            sqlite3_bind_text(st, 2, dataset, -1, SQLITE_TRANSIENT);
        else
            sqlite3_bind_null(st, 2);
        if (sqlite3_step(st) != SQLITE_DONE) {
            err_set(err, "merge: %s", sqlite3_errmsg(out));
            goto done;
        }
        out_sweep = sqlite3_last_insert_rowid(out);
        sqlite3_finalize(st);
        st = NULL;
    }
    /* the baseline first (its id is every point's baseline), then the points */
    int64_t base = 0;
    for (int k = 0; k < ni; k++) {
        int64_t id;
        if (merge_run(in, out, in_path, &ir[k], no ? &orr[k] : NULL, out_sweep,
                      ir[k].baseline ? base : 0, &id, res, err))
            goto done;
        if (!ir[k].baseline && !base) base = id;
    }
    rc = 0;
done:
    sqlite3_finalize(st);
    runs_free(ir, ni);
    runs_free(orr, no);
    free(spec);
    free(dataset);
    return rc;
}

int db_merge(db *d, const char *in_path, db_merge_result *res, char *err) {
    if (!d->writable) return err_set(err, "merge: %s was opened read-only", d->path);
    struct stat a, b;
    if (stat(in_path, &a) == 0 && stat(d->path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return err_set(err, "%s is the output database itself", in_path);
    db *src;
    if (db_open(&src, in_path, DB_READ_ANY, err)) return -1;
    sqlite3 *in = src->h, *out = d->h;
    int rc = -1;
    mrun *plain = NULL, *cand = NULL;
    int n_plain = 0, n_cand = 0;
    sqlite3_stmt *sw = NULL;
    if (db_exec(out, "BEGIN IMMEDIATE", "merge: locking the output", err)) goto done;
    if (prep(in, "SELECT id FROM sweeps ORDER BY id", &sw, err)) goto fail;
    while (sqlite3_step(sw) == SQLITE_ROW)
        if (merge_sweep(in, out, in_path, sqlite3_column_int64(sw, 0), res, err)) goto fail;
    sqlite3_finalize(sw);
    sw = NULL;
    if (load_runs(in, "r.sweep_id IS NULL", 0, &plain, &n_plain, err) ||
        load_runs(out, "r.sweep_id IS NULL", 0, &cand, &n_cand, err))
        goto fail;
    for (int k = 0; k < n_plain; k++) {
        int64_t id;
        if (merge_run(in, out, in_path, &plain[k], match(&plain[k], cand, n_cand), 0, 0, &id, res,
                      err))
            goto fail;
    }
    /* counter definitions: OUT keeps its own for decoders it knows */
    sqlite3_stmt *defs;
    if (prep(in, "SELECT * FROM counter_defs", &defs, err)) goto fail;
    while (sqlite3_step(defs) == SQLITE_ROW) {
        sqlite3_stmt *q;
        if (prep(out, "SELECT 1 FROM counter_defs WHERE decoder = ? AND name = ?", &q, err)) {
            sqlite3_finalize(defs);
            goto fail;
        }
        sqlite3_bind_value(q, 1, sqlite3_column_value(defs, 0));
        sqlite3_bind_value(q, 2, sqlite3_column_value(defs, 1));
        int have = sqlite3_step(q) == SQLITE_ROW;
        sqlite3_finalize(q);
        if (!have && copy_row(out, "counter_defs", defs, NULL, NULL, 0, NULL, 0, 0, NULL, err)) {
            sqlite3_finalize(defs);
            goto fail;
        }
    }
    sqlite3_finalize(defs);
    if (db_exec(out, "COMMIT", "merge: commit", err)) goto fail;
    rc = 0;
    goto done;
fail:
    sqlite3_exec(out, "ROLLBACK", NULL, NULL, NULL);
done:
    sqlite3_finalize(sw);
    runs_free(plain, n_plain);
    runs_free(cand, n_cand);
    db_close(src);
    return rc;
}
