/* db_merge.c: `decbench merge OUT IN...`: the runs and sweeps of one database added to another,
 * shards of one piece of work (run/sweep --shard I/N) put back together.
 *
 * What is "the same run": a sharded run (runs.shard "I/N") belongs with OUT's run of the same
 * work: same shard count N, decoders, datasets, templates, max_new, repeats, warm-up, kernels,
 * KV cache type and seed, and for a sweep the same grid and position in it (baseline first, then
 * the points in order). That run must also come from the same build and models (commit, model and
 * draft SHA-256): shards that differ there are refused, not merged side by side. A run without a
 * shard is the same run when its start time, command and model hash are equal (a database merged
 * twice). Anything else is new in OUT: it is copied with its samples.
 *
 * Samples are keyed as everywhere (dataset, sample_index, spec, repeat). A sample already in
 * OUT must have the same deterministic figures (output hash, match flag, every STAT_DET counter
 * of stats/stats.h, the histograms, the decoder's own counters its definitions call
 * deterministic), compared whole: then it is skipped, which is how greedy samples measured
 * by two shards (a prompt at a shard boundary) and a second merge of the same file change
 * nothing; if they differ the merge is refused. Everything happens in one transaction on OUT:
 * a refused merge leaves OUT as it was.
 *
 * What is copied: every table a run owns. Besides the tables merge handles itself (meta,
 * environments, sweeps, runs, samples, counter_defs, file_sha256: OWN_TABLES says how), each
 * table of the schema must hang off a run or a sample (one foreign key, to runs(id) or
 * samples(id): cost, histograms, trace, counters, passes); such a table is carried with its
 * run or sample whatever its name, so a table added to schema.sql is merged without a change
 * here, and a table that is neither makes merge refuse (naming it) instead of dropping it. A
 * run's rows are added to OUT's run when a shard joins it or it is merged again, each row once;
 * a sample already in OUT that lacks rows of a sample's table which IN has (e.g. a pass trace
 * that an older merge dropped) gets them.
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

#include "results/db/db_internal.h"
#include "util/text_escape.h"
#include "util/err.h"

/* ---- small SQL helpers ------------------------------------------------------------------------
 */

static int prep(sqlite3 *h, const char *sql, sqlite3_stmt **st, char *err) {
    if (sqlite3_prepare_v2(h, sql, -1, st, NULL) != SQLITE_OK)
        return err_set(err, "merge: %s", db_errmsg(h));
    return 0;
}

static char *col_text(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

static int same_text(const char *a, const char *b) {
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Text from a database as a message shows it (txt_plain), "(none)" for NULL. */
static const char *vis(char *buf, size_t n, const char *s) {
    return txt_plain_buf(buf, n, s ? s : "(none)");
}

/* Copies one row: every column of `sel`'s current row that `table` of OUT has, except `skip`
 * (its INTEGER PRIMARY KEY), with column `set_col` (may be NULL) replaced by set_val, and a
 * second override (set2_col, may be NULL). *new_id gets the new rowid. */
static int copy_row(sqlite3 *out, const char *table, sqlite3_stmt *sel, const char *skip,
                    const char *set_col, int64_t set_val, const char *set2_col, int64_t set2_val,
                    int set2_null, int64_t *new_id, char *err) {
    int n = sqlite3_column_count(sel), k = 0;
    int *map = malloc(sizeof *map * (size_t)(n + 1));
    size_t cap = 64 + (size_t)n * 72; /* a quoted name (at most 64 bytes, below) and "?," each */
    char *sql = malloc(cap), *marks = malloc((size_t)n * 2 + 2);
    if (!map || !sql || !marks) {
        free(map), free(sql), free(marks);
        return err_set(err, "merge: out of memory");
    }
    size_t lc = (size_t)snprintf(sql, cap, "INSERT INTO \"%s\" (", table), lm = 0;
    marks[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *name = sqlite3_column_name(sel, i);
        if (skip && !strcmp(name, skip)) continue;
        /* only columns OUT has (a newer input may have more; an older one fewer); OUT's column
         * names are its schema's, checked at open, so each fits and needs no quoting */
        if (strlen(name) > 64 || strchr(name, '"') ||
            sqlite3_table_column_metadata(out, "main", table, name, NULL, NULL, NULL, NULL, NULL) !=
                SQLITE_OK)
            continue;
        lc += (size_t)snprintf(sql + lc, cap - lc, "%s\"%s\"", k ? ", " : "", name);
        lm += (size_t)snprintf(marks + lm, (size_t)n * 2 + 2 - lm, "%s?", k ? "," : "");
        map[k++] = i;
    }
    snprintf(sql + lc, cap - lc, ") VALUES (%s)", marks);
    free(marks);
    sqlite3_stmt *ins;
    if (prep(out, sql, &ins, err)) {
        free(map), free(sql);
        return -1;
    }
    free(sql);
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
    free(map);
    int rc =
        sqlite3_step(ins) == SQLITE_DONE ? 0 : err_set(err, "merge: %s: %s", table, db_errmsg(out));
    sqlite3_finalize(ins);
    if (rc == 0 && new_id) *new_id = sqlite3_last_insert_rowid(out);
    return rc;
}

/* Whether OUT's `table` already has a row equal to sel's current row (key column `key` taken
 * as new_id; columns OUT lacks ignored). */
static int has_row(sqlite3 *out, const char *table, sqlite3_stmt *sel, const char *key,
                   int64_t new_id, int *found, char *err) {
    int n = sqlite3_column_count(sel), k = 0;
    size_t cap = 64 + (size_t)n * 80;
    char *sql = malloc(cap);
    int *map = malloc(sizeof *map * (size_t)(n + 1));
    if (!sql || !map) {
        free(sql), free(map);
        return err_set(err, "merge: out of memory");
    }
    size_t len = (size_t)snprintf(sql, cap, "SELECT EXISTS (SELECT 1 FROM \"%s\" WHERE 1", table);
    for (int i = 0; i < n; i++) {
        const char *name = sqlite3_column_name(sel, i);
        if (strlen(name) > 64 || strchr(name, '"') ||
            sqlite3_table_column_metadata(out, "main", table, name, NULL, NULL, NULL, NULL, NULL) !=
                SQLITE_OK)
            continue;
        len += (size_t)snprintf(sql + len, cap - len, " AND \"%s\" IS ?%d", name, k + 1);
        map[k++] = i;
    }
    snprintf(sql + len, cap - len, ")");
    sqlite3_stmt *q;
    int rc = prep(out, sql, &q, err);
    free(sql);
    for (int j = 0; rc == 0 && j < k; j++) {
        if (!strcmp(sqlite3_column_name(sel, map[j]), key))
            sqlite3_bind_int64(q, j + 1, new_id);
        else
            sqlite3_bind_value(q, j + 1, sqlite3_column_value(sel, map[j]));
    }
    free(map);
    if (rc) return -1;
    rc = sqlite3_step(q);
    *found = rc == SQLITE_ROW && sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    return rc == SQLITE_ROW ? 0 : err_set(err, "merge: %s: %s", table, db_errmsg(out));
}

/* Copies every row of IN's `table` whose `key` column is `old` into OUT with key = new_id;
 * *copied (may be NULL) gets how many. only_new: rows OUT already has (equal in every column)
 * are skipped, so that a run merged again, or joined by another shard, gets each row once. */
static int copy_children(sqlite3 *in, sqlite3 *out, const char *table, const char *key, int64_t old,
                         int64_t new_id, int only_new, long *copied, char *err) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT * FROM \"%s\" WHERE \"%s\" = ?", table, key);
    sqlite3_stmt *sel;
    if (prep(in, sql, &sel, err)) return -1;
    sqlite3_bind_int64(sel, 1, old);
    int rc = 0, step, found = 0;
    long n = 0;
    while (rc == 0 && (step = sqlite3_step(sel)) == SQLITE_ROW) {
        if (only_new && (rc = has_row(out, table, sel, key, new_id, &found, err)) == 0 && found)
            continue;
        if (rc == 0) rc = copy_row(out, table, sel, NULL, key, new_id, NULL, 0, 0, NULL, err);
        n += rc == 0;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = err_set(err, "merge: %s: %s", table, db_errmsg(in));
    sqlite3_finalize(sel);
    if (copied) *copied = n;
    return rc;
}

/* ---- which tables merge carries ------------------------------------------------------------ */

/* The tables merge handles itself, and how (everything else must be a child, below). */
static const char *const OWN_TABLES[] = {
    "meta",         /* OUT's own: its marker and creation time */
    "environments", /* copied with the first run that uses one (map_env), by fingerprint */
    "sweeps",       /* copied with their runs (merge_sweep) */
    "runs",         /* merge_run */
    "samples",      /* merge_samples */
    "counter_defs", /* definitions OUT lacks (db_merge): OUT keeps its own */
    "file_sha256",  /* a cache of the files on this machine: another machine's paths and inodes
                     * mean nothing here, so it stays each file's own */
};

int db_merge_plan(sqlite3 *out, db_merge_plan_t *p, char *err) {
    memset(p, 0, sizeof *p);
    sqlite3_stmt *st, *fk;
    if (prep(out,
             "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
             "ESCAPE '\\' ORDER BY name",
             &st, err))
        return -1;
    if (prep(out,
             "SELECT \"table\", \"from\", COALESCE(\"to\", 'id') FROM pragma_foreign_key_list(?)",
             &fk, err)) {
        sqlite3_finalize(st);
        return -1;
    }
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int own = 0;
        for (size_t i = 0; i < sizeof OWN_TABLES / sizeof OWN_TABLES[0]; i++)
            own |= !strcmp(name, OWN_TABLES[i]);
        if (own) continue;
        sqlite3_reset(fk);
        sqlite3_bind_text(fk, 1, name, -1, SQLITE_TRANSIENT);
        int n_fk = 0, of_sample = -1;
        char key[64] = "";
        while (sqlite3_step(fk) == SQLITE_ROW) {
            const char *to_table = (const char *)sqlite3_column_text(fk, 0);
            const char *from = (const char *)sqlite3_column_text(fk, 1);
            const char *to = (const char *)sqlite3_column_text(fk, 2);
            n_fk++;
            if (to_table && to && !strcmp(to, "id") && from && strlen(from) < sizeof key &&
                (!strcmp(to_table, "runs") || !strcmp(to_table, "samples"))) {
                of_sample = !strcmp(to_table, "samples");
                snprintf(key, sizeof key, "%s", from);
            }
        }
        db_merge_child *c = NULL;
        if (n_fk == 1 && of_sample == 1 && p->n_sample < 16) c = &p->sample[p->n_sample++];
        if (n_fk == 1 && of_sample == 0 && p->n_run < 16) c = &p->run[p->n_run++];
        if (c && strlen(name) < sizeof c->table) {
            snprintf(c->table, sizeof c->table, "%s", name);
            snprintf(c->key, sizeof c->key, "%s", key);
        } else {
            char shown[128];
            rc = err_set(err,
                         "merge: table '%s' is neither one merge handles itself nor a run's or a "
                         "sample's (one foreign key, to runs(id) or samples(id)): merge does not "
                         "know where its rows belong, and refuses rather than drop them "
                         "(results/db/db_merge.c, db_merge_plan)",
                         txt_plain_buf(shown, sizeof shown, name));
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(fk);
    return rc;
}

/* ---- runs --------------------------------------------------------------------------------- */

typedef struct {
    int64_t id, sweep_id, baseline, env_id;
    char *shard, *decoders, *datasets, *tpl, *kernels, *command, *started, *status, *model_hash,
        *model_sha, *draft_hash, *draft_sha, *commit, *cpu, *kv_type;
    int64_t max_new, repeats, warmup, seed, threads;
} mrun;

#define RUN_COLS                                                                                   \
    "r.id, COALESCE(r.sweep_id, 0), COALESCE(r.baseline_run_id, 0), COALESCE(r.env_id, 0), "       \
    "r.shard, r.decoders, r.datasets, r.template, r.kernels, r.command, r.started, r.status, "     \
    "r.model_hash, r.model_sha256, r.draft_hash, r.draft_sha256, "                                 \
    "e.git_commit || CASE WHEN e.git_dirty THEN '+dirty' ELSE '' END, e.cpu_model, r.kv_type, "    \
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
                      &r->draft_hash, &r->draft_sha, &r->commit,   &r->cpu,        &r->kv_type};
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
                     r->draft_hash, r->draft_sha, r->commit,   r->cpu,        r->kv_type};
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
    char *end;
    long v = strtol(slash + 1, &end, 10);
    if (*end || v < 1 || v > max) return -1;
    *n = (int)v;
    memset(set, 0, (size_t)max);
    for (const char *p = s; p < slash;) {
        long i = strtol(p, &end, 10);
        if (end == p || i < 1 || i > *n || (*end != ',' && *end != '/')) return -1;
        set[i - 1] = 1;
        p = end + 1;
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
           same_text(a->kv_type, b->kv_type) && a->max_new == b->max_new &&
           a->repeats == b->repeats && a->warmup == b->warmup && a->seed == b->seed;
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
    char v1[96], v2[96], v3[96];
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
        if (!same_text(f[k].a, f[k].b))
            return err_set(err,
                           "%s: run %" PRId64 " (shard %s) has %s %s, the shards already in the "
                           "output have %s: shards of one work must come from one build and the "
                           "same models (merge it into another file)",
                           in_path, i->id, vis(v1, sizeof v1, i->shard), f[k].what,
                           vis(v2, sizeof v2, f[k].b), vis(v3, sizeof v3, f[k].a));
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

/* The deterministic fingerprint of a sample: output hash, match, every STAT_DET counter, the
 * histograms and the decoder's own counters its counter_defs call deterministic, as one text,
 * whole (*out malloc'd). */
static int sample_det(sqlite3 *h, int64_t sid, char **out, char *err) {
    char sql[4096];
    int len = snprintf(sql, sizeof sql, "SELECT output_hash || '|' || COALESCE(matched, '-')");
    for (int k = 0; k < STAT_N_COUNTERS; k++)
        if (stat_counters[k].det == STAT_DET)
            len += snprintf(sql + len, sizeof sql - (size_t)len, " || '|' || %s",
                            stat_counters[k].name);
    snprintf(sql + len, sizeof sql - (size_t)len,
             " || '|' || COALESCE((SELECT group_concat(kind || ':' || k || '=' || count) FROM "
             "(SELECT * FROM histograms WHERE sample_id = ?1 ORDER BY kind, k)), '') "
             " || '|' || COALESCE((SELECT group_concat(name || '=' || value) FROM "
             "(SELECT c.name, c.value FROM counters c JOIN counter_defs d ON d.name = c.name AND "
             "d.decoder = (SELECT decoder FROM samples WHERE id = ?1) WHERE c.sample_id = ?1 AND "
             "d.deterministic = 1 ORDER BY c.name)), '') "
             "FROM samples WHERE id = ?1");
    sqlite3_stmt *st;
    *out = NULL;
    if (prep(h, sql, &st, err)) return -1;
    sqlite3_bind_int64(st, 1, sid);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = strdup(sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return err_set(err, "merge: %s", db_errmsg(h));
    if (rc == SQLITE_DONE) *out = strdup("");
    return *out ? 0 : err_set(err, "merge: out of memory");
}

/* Where two fingerprints part: "... <a's text from there> vs ... <b's>", shortened, for the
 * message. */
static void det_diff(const char *a, const char *b, char *out, size_t n) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    size_t from = i > 40 ? i - 40 : 0;
    char x[120], y[120], ea[130], eb[130];
    snprintf(x, sizeof x, "%s%.80s%s", from ? "..." : "", a + from,
             strlen(a + from) > 80 ? "..." : "");
    snprintf(y, sizeof y, "%s%.80s%s", from ? "..." : "", b + from,
             strlen(b + from) > 80 ? "..." : "");
    snprintf(out, n, "%s vs %s", txt_plain_buf(ea, sizeof ea, x), txt_plain_buf(eb, sizeof eb, y));
}

/* A sample OUT already has: the rows of a child table it lacks entirely and IN has (a trace an
 * older merge dropped) are added; *filled = 1 when any were. */
static int fill_children(sqlite3 *in, sqlite3 *out, const db_merge_plan_t *plan, int64_t old,
                         int64_t have, int *filled, char *err) {
    *filled = 0;
    for (int c = 0; c < plan->n_sample; c++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT EXISTS (SELECT 1 FROM \"%s\" WHERE \"%s\" = ?)",
                 plan->sample[c].table, plan->sample[c].key);
        sqlite3_stmt *st;
        if (prep(out, sql, &st, err)) return -1;
        sqlite3_bind_int64(st, 1, have);
        int has = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (has) continue;
        long n = 0;
        if (copy_children(in, out, plan->sample[c].table, plan->sample[c].key, old, have, 0, &n,
                          err))
            return -1;
        *filled |= n > 0;
    }
    return 0;
}

/* Adds IN run in_run's samples, with every child table's rows, to OUT run out_run; counts in
 * res. */
static int merge_samples(sqlite3 *in, sqlite3 *out, const db_merge_plan_t *plan,
                         const char *in_path, int64_t in_run, int64_t out_run, db_merge_result *res,
                         char *err) {
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
    int rc = 0, c_id = -1, c_ds = -1, c_ix = -1, c_spec = -1, c_rep = -1, step;
    for (int i = 0; i < sqlite3_column_count(sel); i++) {
        const char *nm = sqlite3_column_name(sel, i);
        c_id = !strcmp(nm, "id") ? i : c_id;
        c_ds = !strcmp(nm, "dataset") ? i : c_ds;
        c_ix = !strcmp(nm, "sample_index") ? i : c_ix;
        c_spec = !strcmp(nm, "spec") ? i : c_spec;
        c_rep = !strcmp(nm, "repeat") ? i : c_rep;
    }
    while (rc == 0 && (step = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t old = sqlite3_column_int64(sel, c_id), have = 0;
        sqlite3_reset(find);
        sqlite3_bind_int64(find, 1, out_run);
        sqlite3_bind_value(find, 2, sqlite3_column_value(sel, c_ds));
        sqlite3_bind_value(find, 3, sqlite3_column_value(sel, c_ix));
        sqlite3_bind_value(find, 4, sqlite3_column_value(sel, c_spec));
        sqlite3_bind_value(find, 5, sqlite3_column_value(sel, c_rep));
        if (sqlite3_step(find) == SQLITE_ROW) have = sqlite3_column_int64(find, 0);
        if (have) {
            char *a = NULL, *b = NULL;
            if (sample_det(out, have, &a, err) || sample_det(in, old, &b, err)) {
                free(a);
                rc = -1;
                break;
            }
            if (strcmp(a, b)) {
                char ds[96], spec[160], diff[300];
                det_diff(b, a, diff, sizeof diff);
                rc = err_set(
                    err,
                    "%s: run %" PRId64 ": sample %s[%d] %s repeat %d differs from the "
                    "same sample already in the output (deterministic figures %s): "
                    "refusing to merge",
                    in_path, in_run,
                    txt_plain_buf(ds, sizeof ds, (const char *)sqlite3_column_text(sel, c_ds)),
                    sqlite3_column_int(sel, c_ix),
                    txt_plain_buf(spec, sizeof spec,
                                  (const char *)sqlite3_column_text(sel, c_spec)),
                    sqlite3_column_int(sel, c_rep), diff);
            }
            free(a);
            free(b);
            if (rc) break;
            int filled;
            if (fill_children(in, out, plan, old, have, &filled, err)) {
                rc = -1;
                break;
            }
            res->samples_same++;
            res->samples_filled += filled;
            continue;
        }
        int64_t sid;
        rc = copy_row(out, "samples", sel, "id", "run_id", out_run, NULL, 0, 0, &sid, err);
        for (int c = 0; rc == 0 && c < plan->n_sample; c++)
            rc = copy_children(in, out, plan->sample[c].table, plan->sample[c].key, old, sid, 0,
                               NULL, err);
        res->samples_added += rc == 0;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = err_set(err, "merge: %s", db_errmsg(in));
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
static int merge_run(sqlite3 *in, sqlite3 *out, const db_merge_plan_t *plan, const char *in_path,
                     const mrun *ir, const mrun *or_, int64_t out_sweep, int64_t out_base,
                     int64_t *o_id, db_merge_result *res, char *err) {
    char v1[96], v2[96];
    if (ir->shard && strcmp(ir->status, "complete") && strcmp(ir->status, "failed"))
        return err_set(err,
                       "%s: run %" PRId64 " (shard %s) is '%s': finish it first (repeat its "
                       "command with --resume %" PRId64 "), then merge",
                       in_path, ir->id, vis(v1, sizeof v1, ir->shard),
                       vis(v2, sizeof v2, ir->status), ir->id);
    if (or_) {
        if (ir->shard && check_same_build(or_, ir, in_path, err)) return -1;
        *o_id = or_->id;
        if (or_->cpu && ir->cpu && (strcmp(or_->cpu, ir->cpu) || or_->threads != ir->threads))
            snprintf(res->note, sizeof res->note,
                     "shards ran on different machines (%s, %" PRId64 " threads vs %s, "
                     "%" PRId64 "): each speed-up pairs a decoder with greedy on one machine, "
                     "but tok/s mix machines",
                     vis(v1, 81, or_->cpu), or_->threads, vis(v2, 81, ir->cpu), ir->threads);
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
        rc = sqlite3_step(up) == SQLITE_DONE ? 0 : err_set(err, "merge: %s", db_errmsg(out));
        sqlite3_finalize(up);
        if (rc) return -1;
        res->runs_added++;
    }
    /* the run's own rows (cost points, ...): a shard joining a run, or a run merged again,
     * adds the rows the run lacks */
    for (int c = 0; c < plan->n_run; c++)
        if (copy_children(in, out, plan->run[c].table, plan->run[c].key, ir->id, *o_id, or_ != NULL,
                          NULL, err))
            return -1;
    if (merge_samples(in, out, plan, in_path, ir->id, *o_id, res, err)) return -1;
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
                           vis(v1, sizeof v1, ir->shard));
        int all = 1, added = 0;
        /* the whole list, however many shards: "1,2,...,N/N" (a fixed buffer once cut it, and
         * a later merge then took the shards it lost for missing) */
        size_t cap = (size_t)n * 7 + 16, len = 0;
        char *text = malloc(cap);
        if (!text) return err_set(err, "merge: out of memory");
        text[0] = '\0';
        for (int i = 0; i < n; i++) {
            if (add[i] && !set[i]) added = 1;
            set[i] |= add[i];
            all &= set[i];
            if (set[i])
                len += (size_t)snprintf(text + len, cap - len, "%s%d", len ? "," : "", i + 1);
        }
        snprintf(text + len, cap - len, "/%d", n);
        res->shards_added += added;
        if (strcmp(status, "failed")) status = all ? "complete" : "incomplete";
        sqlite3_stmt *up;
        if (prep(out, "UPDATE runs SET shard = ?2 WHERE id = ?1", &up, err)) return -1;
        sqlite3_bind_int64(up, 1, *o_id);
        sqlite3_bind_text(up, 2, text, -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(up) == SQLITE_DONE ? 0 : err_set(err, "merge: %s", db_errmsg(out));
        sqlite3_finalize(up);
        free(text);
        if (rc) return -1;
    }
    sqlite3_stmt *up;
    if (prep(out, "UPDATE runs SET status = ?2 WHERE id = ?1 AND status <> ?2", &up, err))
        return -1;
    sqlite3_bind_int64(up, 1, *o_id);
    sqlite3_bind_text(up, 2, status, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(up) == SQLITE_DONE ? 0 : err_set(err, "merge: %s", db_errmsg(out));
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

static int merge_sweep(sqlite3 *in, sqlite3 *out, const db_merge_plan_t *plan, const char *in_path,
                       int64_t in_sweep, db_merge_result *res, char *err) {
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
        /* the whole row but its id (its creation time included) */
        if (prep(in, "SELECT * FROM sweeps WHERE id = ?", &st, err)) goto done;
        sqlite3_bind_int64(st, 1, in_sweep);
        if (sqlite3_step(st) != SQLITE_ROW) {
            err_set(err, "merge: %s: sweep %" PRId64 " vanished", in_path, in_sweep);
            goto done;
        }
        if (copy_row(out, "sweeps", st, "id", NULL, 0, NULL, 0, 0, &out_sweep, err)) goto done;
        sqlite3_finalize(st);
        st = NULL;
    }
    /* the baseline first (its id is every point's baseline), then the points */
    int64_t base = 0;
    for (int k = 0; k < ni; k++) {
        int64_t id;
        if (merge_run(in, out, plan, in_path, &ir[k], no ? &orr[k] : NULL, out_sweep,
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
    db_merge_plan_t plan;
    if (db_exec(out, "BEGIN IMMEDIATE", "merge: locking the output", err)) goto done;
    /* OUT again, now that it is locked: nothing was added to its schema since it was opened
     * (a trigger would run on the rows merged in) */
    if (db_check_schema(out, d->path, db_schema_version(), err) || db_merge_plan(out, &plan, err))
        goto fail;
    if (prep(in, "SELECT id FROM sweeps ORDER BY id", &sw, err)) goto fail;
    int step;
    while ((step = sqlite3_step(sw)) == SQLITE_ROW)
        if (merge_sweep(in, out, &plan, in_path, sqlite3_column_int64(sw, 0), res, err)) goto fail;
    if (step != SQLITE_DONE) {
        err_set(err, "merge: %s: %s", in_path, db_errmsg(in));
        goto fail;
    }
    sqlite3_finalize(sw);
    sw = NULL;
    if (load_runs(in, "r.sweep_id IS NULL", 0, &plain, &n_plain, err) ||
        load_runs(out, "r.sweep_id IS NULL", 0, &cand, &n_cand, err))
        goto fail;
    for (int k = 0; k < n_plain; k++) {
        int64_t id;
        if (merge_run(in, out, &plan, in_path, &plain[k], match(&plain[k], cand, n_cand), 0, 0, &id,
                      res, err))
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
