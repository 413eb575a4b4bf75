/* db_write.c: storing runs, samples (with histograms and trace), sweeps and cost points. */
#include "results/db/db_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Binds a number, or NULL when it is the "unknown" value. */
static void bind_int_or_null(sqlite3_stmt *st, int i, int64_t v, int64_t unknown) {
    if (v == unknown)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

static void bind_real_or_null(sqlite3_stmt *st, int i, double v) {
    if (v < 0)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

static int prepare(db *d, sqlite3_stmt **st, const char *sql, const char *fn, char *err) {
    if (sqlite3_prepare_v2(d->h, sql, -1, st, NULL) != SQLITE_OK)
        return err_set(err, "%s: %s", fn, db_errmsg(d->h));
    return 0;
}

static int need_write(db *d, const char *fn, char *err) {
    return d->writable ? 0 : err_set(err, "%s: %s was opened read-only", fn, d->path);
}

/* Steps a prepared statement expected to finish (no rows); resets it either way. */
static int step_done(db *d, sqlite3_stmt *st, const char *fn, const char *what, char *err) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return err_set(err, "%s: %s: %s", fn, what, db_errmsg(d->h));
    return 0;
}

uint64_t db_output_hash(const int *tokens, int n) {
    return hash_fnv1a(tokens, (size_t)(n > 0 ? n : 0) * sizeof *tokens);
}

void db_hash_hex(uint64_t h, char out[17]) {
    snprintf(out, 17, "%016" PRIx64, h);
}

int db_file_fingerprint(const char *path, int64_t *bytes, char hex[17], char *err) {
    enum { MIB = 1 << 20 };
    char e[ERR_LEN];
    FILE *f = file_fopen_regular(path, "model", e); /* a FIFO would block fopen() */
    if (!f) return err_set(err, "db_file_fingerprint: %s", e);
    if (fseeko(f, 0, SEEK_END) != 0) {
        fclose(f);
        return err_set(err, "db_file_fingerprint: %s: cannot seek", path);
    }
    int64_t size = (int64_t)ftello(f);
    /* Layout hashed: head (up to 1 MiB), tail (the last 1 MiB not already in the head), size
     * as 8 little-endian bytes. Cheap for multi-GB weights, still changes when a file is
     * replaced by a different model (header, first and last tensors differ). */
    size_t head = size < MIB ? (size_t)size : MIB;
    size_t tail = size - (int64_t)head < MIB ? (size_t)(size - (int64_t)head) : MIB;
    unsigned char *buf = malloc(head + tail + 8);
    if (!buf) {
        fclose(f);
        return err_set(err, "db_file_fingerprint: out of memory");
    }
    int ok = fseeko(f, 0, SEEK_SET) == 0 && fread(buf, 1, head, f) == head &&
             fseeko(f, (off_t)(size - (int64_t)tail), SEEK_SET) == 0 &&
             fread(buf + head, 1, tail, f) == tail;
    fclose(f);
    for (int i = 0; i < 8; i++) buf[head + tail + i] = (unsigned char)((uint64_t)size >> (8 * i));
    if (ok) db_hash_hex(hash_fnv1a(buf, head + tail + 8), hex);
    free(buf);
    if (!ok) return err_set(err, "db_file_fingerprint: %s: read error", path);
    if (bytes) *bytes = size;
    return 0;
}

/* Environments are deduplicated by a hash of every field, so a thousand runs on one machine
 * and commit share one row. */
static int env_id(db *d, const db_env *e, int64_t *id, char *err) {
    char key[4096], fp[17];
    snprintf(key, sizeof key,
             "%s\x1f%d\x1f%s\x1f%s\x1f%s\x1f%d\x1f%d\x1f%s\x1f%s\x1f%d\x1f%s\x1f%s", e->git_commit,
             e->git_dirty, e->compiler, e->cflags, e->cpu_model, e->cpu_cores, e->cpu_threads,
             e->openblas_config, e->openblas_core, e->openblas_threads, e->hostname, e->os);
    db_hash_hex(hash_fnv1a(key, strlen(key)), fp);
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "INSERT OR IGNORE INTO environments (fingerprint, git_commit, git_dirty, "
                "compiler, cflags, cpu_model, cpu_cores, cpu_threads, openblas_config, "
                "openblas_core, openblas_threads, hostname, os) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                "db_begin_run", err) != 0)
        return -1;
    int i = 1;
    bind_text(st, i++, fp);
    bind_text(st, i++, e->git_commit[0] ? e->git_commit : NULL);
    bind_int_or_null(st, i++, e->git_dirty, -1);
    const char *texts[] = {e->compiler, e->cflags, e->cpu_model};
    for (int k = 0; k < 3; k++) bind_text(st, i++, texts[k][0] ? texts[k] : NULL);
    bind_int_or_null(st, i++, e->cpu_cores, -1);
    bind_int_or_null(st, i++, e->cpu_threads, -1);
    bind_text(st, i++, e->openblas_config[0] ? e->openblas_config : NULL);
    bind_text(st, i++, e->openblas_core[0] ? e->openblas_core : NULL);
    bind_int_or_null(st, i++, e->openblas_threads, -1);
    bind_text(st, i++, e->hostname[0] ? e->hostname : NULL);
    bind_text(st, i++, e->os[0] ? e->os : NULL);
    int rc = step_done(d, st, "db_begin_run", "environment", err);
    sqlite3_finalize(st);
    if (rc != 0) return -1;
    if (prepare(d, &st, "SELECT id FROM environments WHERE fingerprint = ?", "db_begin_run", err) !=
        0)
        return -1;
    bind_text(st, 1, fp);
    rc = sqlite3_step(st) == SQLITE_ROW ? 0 : -1;
    if (rc == 0)
        *id = sqlite3_column_int64(st, 0);
    else
        err_set(err, "db_begin_run: environment: %s", db_errmsg(d->h));
    sqlite3_finalize(st);
    return rc;
}

int db_begin_run(db *d, const db_run *r, int64_t *run_id, char *err) {
    if (need_write(d, "db_begin_run", err) != 0) return -1;
    /* Fill in the content hashes the caller left out (the file was just loaded, so it is
     * readable; if not, the hash simply stays NULL). */
    char mhex[17], dhex[17];
    int64_t mbytes = r->model_bytes, dbytes = r->draft_bytes, fb;
    const char *mhash = r->model_hash, *dhash = r->draft_hash;
    if (!mhash && r->model_path && db_file_fingerprint(r->model_path, &fb, mhex, NULL) == 0) {
        mhash = mhex;
        if (!mbytes) mbytes = fb;
    }
    if (!dhash && r->draft_path && db_file_fingerprint(r->draft_path, &fb, dhex, NULL) == 0) {
        dhash = dhex;
        if (!dbytes) dbytes = fb;
    }
    if (db_exec(d->h, "BEGIN IMMEDIATE", "db_begin_run: begin", err) != 0) return -1;
    /* SHA-256 inside the transaction, so the cache row and the run land together. */
    char msha[65], dsha[65];
    const char *model_sha = r->model_sha256, *draft_sha = r->draft_sha256;
    if (!model_sha && r->model_path && db_file_sha256(d, r->model_path, msha, NULL) == 0)
        model_sha = msha;
    if (!draft_sha && r->draft_path && db_file_sha256(d, r->draft_path, dsha, NULL) == 0)
        draft_sha = dsha;
    int64_t env = 0;
    sqlite3_stmt *st = NULL;
    if (r->env && env_id(d, r->env, &env, err) != 0) goto fail;
    if (prepare(d, &st,
                "INSERT INTO runs (command, label, model_path, model_bytes, model_hash, "
                "draft_path, draft_bytes, draft_hash, tokenizer, datasets, template, max_new, "
                "repeats, warmup, threads, kernels, seed, env_id, sweep_id, baseline_run_id, "
                "model_sha256, draft_sha256, shard, decoders, sampling, temperature, top_k, "
                "top_p, sampling_seed, kv_type, batch, continuous) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                "db_begin_run", err) != 0)
        goto fail;
    int i = 1;
    bind_text(st, i++, r->command);
    bind_text(st, i++, r->label);
    bind_text(st, i++, r->model_path);
    bind_int_or_null(st, i++, mbytes, 0);
    bind_text(st, i++, mhash);
    bind_text(st, i++, r->draft_path);
    bind_int_or_null(st, i++, dbytes, 0);
    bind_text(st, i++, dhash);
    bind_text(st, i++, r->tokenizer);
    bind_text(st, i++, r->datasets);
    bind_text(st, i++, r->prompt_template);
    sqlite3_bind_int(st, i++, r->max_new);
    sqlite3_bind_int(st, i++, r->repeats);
    sqlite3_bind_int(st, i++, r->warmup);
    sqlite3_bind_int(st, i++, r->threads);
    bind_text(st, i++, r->kernels);
    sqlite3_bind_int64(st, i++, (int64_t)r->seed);
    bind_int_or_null(st, i++, env, 0);
    bind_int_or_null(st, i++, r->sweep_id, 0);
    bind_int_or_null(st, i++, r->baseline_run_id, 0);
    bind_text(st, i++, model_sha);
    bind_text(st, i++, draft_sha);
    bind_text(st, i++, r->shard);
    bind_text(st, i++, r->decoders);
    int samples = r->sampling && strcmp(r->sampling, "greedy") != 0;
    bind_text(st, i++, samples ? r->sampling : "greedy");
    sqlite3_bind_double(st, i++, samples ? r->temperature : 0);
    sqlite3_bind_int(st, i++, samples ? r->top_k : 0);
    sqlite3_bind_double(st, i++, samples && r->top_p > 0 ? r->top_p : 1);
    sqlite3_bind_int64(st, i++, samples ? (int64_t)r->sampling_seed : 0);
    bind_text(st, i++, r->kv_type ? r->kv_type : "f32");
    sqlite3_bind_int(st, i++, r->batch > 1 ? r->batch : 1);
    sqlite3_bind_int(st, i++, r->continuous != 0);
    if (step_done(d, st, "db_begin_run", "run", err) != 0) goto fail;
    sqlite3_finalize(st);
    st = NULL;
    *run_id = sqlite3_last_insert_rowid(d->h);
    /* claimed before anyone can see it: no --resume of it can start while this one runs */
    if (db_claim_run(d, *run_id, err) != 0) goto fail;
    if (db_exec(d->h, "COMMIT", "db_begin_run: commit", err) != 0) goto fail;
    return 0;
fail:
    sqlite3_finalize(st);
    sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

int db_finish_run(db *d, int64_t run_id, db_status status, char *err) {
    return db_stop_run(d, run_id, status, NULL, err);
}

int db_stop_run(db *d, int64_t run_id, db_status status, const char *reason, char *err) {
    if (need_write(d, "db_finish_run", err) != 0) return -1;
    if (status == DB_RUNNING)
        return err_set(err, "db_finish_run: the final status cannot be 'running'");
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "UPDATE runs SET status = ?, reason = ?, "
                "finished = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                "db_finish_run", err) != 0)
        return -1;
    bind_text(st, 1, db_status_name(status));
    bind_text(st, 2, status == DB_COMPLETE ? NULL : reason);
    sqlite3_bind_int64(st, 3, run_id);
    int rc = step_done(d, st, "db_finish_run", "update", err);
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_changes(d->h) == 0)
        return err_set(err, "db_finish_run: no run %" PRId64 " in %s", run_id, d->path);
    return rc;
}

int db_resume_run(db *d, int64_t run_id, char *err) {
    if (need_write(d, "db_resume_run", err) != 0) return -1;
    /* A 'running' run may be a live one (its process holds the claim) or a dead one (the
     * kernel dropped its claim): only the lock tells them apart. */
    if (db_claim_run(d, run_id, err) != 0) return -1;
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "UPDATE runs SET status = 'running', finished = NULL, reason = NULL "
                "WHERE id = ? AND status IN ('running', 'incomplete')",
                "db_resume_run", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = step_done(d, st, "db_resume_run", "update", err);
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_changes(d->h) == 0)
        return err_set(
            err, "db_resume_run: run %" PRId64 " in %s does not exist or is not incomplete/running",
            run_id, d->path);
    return rc;
}

int db_begin_sweep(db *d, const char *spec, const char *dataset, int64_t *sweep_id, char *err) {
    if (need_write(d, "db_begin_sweep", err) != 0) return -1;
    if (!spec) return err_set(err, "db_begin_sweep: no sweep spec");
    sqlite3_stmt *st;
    if (prepare(d, &st, "INSERT INTO sweeps (spec, dataset) VALUES (?, ?)", "db_begin_sweep",
                err) != 0)
        return -1;
    bind_text(st, 1, spec);
    bind_text(st, 2, dataset);
    int rc = step_done(d, st, "db_begin_sweep", "insert", err);
    sqlite3_finalize(st);
    if (rc == 0) *sweep_id = sqlite3_last_insert_rowid(d->h);
    return rc;
}

int db_latest_run(db *d, unsigned mask, int need_samples, int need_cost, int64_t *run_id,
                  char *err) {
    char sql[512];
    int n = snprintf(sql, sizeof sql, "SELECT id FROM runs WHERE status IN (''");
    for (int s = DB_RUNNING; s <= DB_FAILED; s++)
        if (mask & DB_STATUS_MASK(s))
            n += snprintf(sql + n, sizeof sql - (size_t)n, ",'%s'", db_status_name(s));
    snprintf(sql + n, sizeof sql - (size_t)n, ")%s%s ORDER BY id DESC LIMIT 1",
             need_samples ? " AND EXISTS (SELECT 1 FROM samples WHERE run_id = runs.id)" : "",
             need_cost ? " AND EXISTS (SELECT 1 FROM cost WHERE run_id = runs.id)" : "");
    sqlite3_stmt *st;
    if (prepare(d, &st, sql, "db_latest_run", err) != 0) return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *run_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) {
        char states[64] = "";
        for (int s = DB_RUNNING; s <= DB_FAILED; s++)
            if (mask & DB_STATUS_MASK(s))
                snprintf(states + strlen(states), sizeof states - strlen(states), "%s%s",
                         states[0] ? "/" : "", db_status_name(s));
        return err_set(err, "db_latest_run: no %s run%s in %s", states,
                       need_samples ? " with samples"
                       : need_cost  ? " with cost points"
                                    : "",
                       d->path);
    }
    return 0;
}

int db_sample_done(db *d, int64_t run_id, const char *dataset, int sample_index, const char *spec,
                   int repeat, int *done, char *err) {
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "SELECT 1 FROM samples WHERE run_id = ? AND dataset = ? AND sample_index = ? "
                "AND spec = ? AND repeat = ?",
                "db_sample_done", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, dataset);
    sqlite3_bind_int(st, 3, sample_index);
    bind_text(st, 4, spec);
    sqlite3_bind_int(st, 5, repeat);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return err_set(err, "db_sample_done: %s", db_errmsg(d->h));
    *done = rc == SQLITE_ROW;
    return 0;
}

/* tokens / seconds, NULL without time. tps_decode: the tokens and the time after the prompt
 * passes (stats/stats.h, STAT_DERIVED); tps_e2e: all of them over the whole call. */
static void bind_rate(sqlite3_stmt *st, int i, double tokens, double seconds) {
    if (seconds > 0)
        sqlite3_bind_double(st, i, tokens / seconds);
    else
        sqlite3_bind_null(st, i);
}

static int insert_hist(db *d, int64_t sid, const char *kind, const long *v, int n, const char *fn,
                       char *err) {
    for (int k = 0; k < n; k++) {
        if (v[k] == 0) continue;
        sqlite3_bind_int64(d->ins_hist, 1, sid);
        sqlite3_bind_text(d->ins_hist, 2, kind, -1, SQLITE_STATIC);
        sqlite3_bind_int(d->ins_hist, 3, k);
        sqlite3_bind_int64(d->ins_hist, 4, v[k]);
        char what[64];
        snprintf(what, sizeof what, "histogram %s[%d]", kind, k);
        if (step_done(d, d->ins_hist, fn, what, err) != 0) return -1;
    }
    return 0;
}

/* The samples INSERT: the sample's own columns, then one column per framework counter (the
 * list STAT_COUNTERS, stats/stats.h), then the derived rates and the match fields. */
static const char *const SAMPLE_HEAD[] = {"run_id",     "dataset",  "sample_index",
                                          "sample_key", "category", "decoder",
                                          "spec",       "repeat",   "output_hash"};
static const char *const SAMPLE_TAIL[] = {"tps_decode",    "tps_e2e",      "matched",
                                          "diverge_pos",   "greedy_token", "decoder_token",
                                          "greedy_margin", "turn"};
#define N_HEAD (int)(sizeof SAMPLE_HEAD / sizeof SAMPLE_HEAD[0])
#define N_TAIL (int)(sizeof SAMPLE_TAIL / sizeof SAMPLE_TAIL[0])

static int prepare_sample_statements(db *d, const char *fn, char *err) {
    if (d->ins_sample) return 0;
    char sql[2048];
    int n = snprintf(sql, sizeof sql, "INSERT INTO samples (");
    for (int i = 0; i < N_HEAD + STAT_N_COUNTERS + N_TAIL; i++) {
        const char *col = i < N_HEAD ? SAMPLE_HEAD[i]
                          : i < N_HEAD + STAT_N_COUNTERS
                              ? stat_counters[i - N_HEAD].name
                              : SAMPLE_TAIL[i - N_HEAD - STAT_N_COUNTERS];
        n += snprintf(sql + n, sizeof sql - (size_t)n, "%s%s", i ? ", " : "", col);
    }
    n += snprintf(sql + n, sizeof sql - (size_t)n, ") VALUES (");
    for (int i = 0; i < N_HEAD + STAT_N_COUNTERS + N_TAIL; i++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, "%s?", i ? "," : "");
    snprintf(sql + n, sizeof sql - (size_t)n, ")");
    if (prepare(d, &d->ins_sample, sql, fn, err) != 0 ||
        prepare(d, &d->ins_hist,
                "INSERT INTO histograms (sample_id, kind, k, count) VALUES (?,?,?,?)", fn,
                err) != 0 ||
        prepare(d, &d->ins_trace,
                "INSERT INTO trace (sample_id, step, rows, drafted, accepted, emitted, seconds) "
                "VALUES (?,?,?,?,?,?,?)",
                fn, err) != 0 ||
        prepare(d, &d->ins_counter, "INSERT INTO counters (sample_id, name, value) VALUES (?,?,?)",
                fn, err) != 0 ||
        prepare(d, &d->ins_counter_def,
                "INSERT OR REPLACE INTO counter_defs (decoder, name, position, kind, aggregation, "
                "deterministic, definition) VALUES (?,?,?,?,?,?,?)",
                fn, err) != 0)
        return -1;
    return 0;
}

static void bind_value(sqlite3_stmt *st, int i, stat_kind kind, double v) {
    if (kind == STAT_INT)
        sqlite3_bind_int64(st, i, (int64_t)v);
    else
        sqlite3_bind_double(st, i, v);
}

/* The decoder's own counters (every one, zeros included) and their definitions. */
static int insert_counters(db *d, int64_t sid, const char *decoder, const dec_stats *t,
                           const char *fn, char *err) {
    for (int i = 0; i < t->n_counters; i++) {
        const stat_def *c = &t->counter_defs[i];
        char what[128];
        snprintf(what, sizeof what, "counter %s", c->name);
        sqlite3_stmt *st = d->ins_counter_def;
        bind_text(st, 1, decoder);
        bind_text(st, 2, c->name);
        sqlite3_bind_int(st, 3, i);
        bind_text(st, 4, c->kind == STAT_INT ? "int" : "real");
        bind_text(st, 5, stat_agg_name(c->agg));
        sqlite3_bind_int(st, 6, c->det == STAT_DET);
        bind_text(st, 7, c->definition);
        if (step_done(d, st, fn, what, err) != 0) return -1;
        st = d->ins_counter;
        sqlite3_bind_int64(st, 1, sid);
        bind_text(st, 2, c->name);
        bind_value(st, 3, c->kind, t->counters[i]);
        if (step_done(d, st, fn, what, err) != 0) return -1;
    }
    return 0;
}

/* The sample's pass trace (inside db_insert_sample's transaction). */
static int insert_passes(db *d, int64_t sid, const dec_pass *p, int n, const char *where,
                         char *err) {
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "INSERT INTO passes (sample_id, seq, model, prefill, rows, logit_rows, context, "
                "seconds) VALUES (?,?,?,?,?,?,?,?)",
                where, err) != 0)
        return -1;
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int(st, 2, k);
        bind_text(st, 3, p[k].draft ? "draft" : "target");
        sqlite3_bind_int(st, 4, p[k].prefill != 0);
        sqlite3_bind_int(st, 5, p[k].rows);
        sqlite3_bind_int(st, 6, p[k].logit_rows);
        sqlite3_bind_int(st, 7, p[k].context);
        sqlite3_bind_double(st, 8, p[k].seconds);
        char what[64];
        snprintf(what, sizeof what, "pass %d", k);
        rc = step_done(d, st, where, what, err);
    }
    sqlite3_finalize(st);
    return rc;
}

/* A batched sample's row of batch_samples (inside db_insert_sample's transaction). */
static int insert_batch(db *d, int64_t sid, const db_batch *b, const char *where, char *err) {
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "INSERT INTO batch_samples (sample_id, batch_index, batch_wall, rows_per_pass, "
                "t_per_token) VALUES (?,?,?,?,?)",
                where, err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int(st, 2, b->batch_index);
    sqlite3_bind_double(st, 3, b->batch_wall);
    bind_real_or_null(st, 4, isnan(b->rows_per_pass) ? -1 : b->rows_per_pass);
    bind_real_or_null(st, 5, isnan(b->t_per_token) ? -1 : b->t_per_token);
    int rc = step_done(d, st, where, "batch figures", err);
    sqlite3_finalize(st);
    return rc;
}

int db_insert_sample(db *d, int64_t run_id, const db_sample *s, const dec_stats *t,
                     const dec_step *trace, int n_trace, int64_t *sample_id, char *err) {
    static const char fn[] = "db_insert_sample";
    if (need_write(d, fn, err) != 0) return -1;
    if (!s->dataset || !s->decoder || !s->spec)
        return err_set(err, "%s: dataset, decoder and spec are required", fn);
    if (t->n_counters < 0 || t->n_counters > STAT_MAX_COUNTERS ||
        (t->n_counters && !t->counter_defs))
        return err_set(err, "%s: %d decoder counters without definitions", fn, t->n_counters);
    if (prepare_sample_statements(d, fn, err) != 0) return -1;
    /* Prefix every message with the sample, so a failure in a long run can be located. */
    char where[ERR_LEN / 2];
    snprintf(where, sizeof where, "%s: run %" PRId64 " %s[%d] %s repeat %d", fn, run_id, s->dataset,
             s->sample_index, s->spec, s->repeat);

    /* Every verification step is counted once in the accept histogram. */
    long hist_total = 0;
    for (int k = 0; k <= DEC_HIST_MAX; k++) hist_total += t->accept_hist[k];
    if (hist_total != t->verify_steps)
        return err_set(err, "%s: verify_steps %ld but the accept histogram counts %ld steps", where,
                       t->verify_steps, hist_total);
    char hex[17];
    db_hash_hex(s->output_hash, hex);

    if (db_exec(d->h, "BEGIN IMMEDIATE", where, err) != 0) return -1;
    sqlite3_stmt *st = d->ins_sample;
    int i = 1;
    sqlite3_bind_int64(st, i++, run_id);
    bind_text(st, i++, s->dataset);
    sqlite3_bind_int(st, i++, s->sample_index);
    bind_text(st, i++, s->sample_key);
    bind_text(st, i++, s->category);
    bind_text(st, i++, s->decoder);
    bind_text(st, i++, s->spec);
    sqlite3_bind_int(st, i++, s->repeat);
    bind_text(st, i++, hex);
    for (int k = 0; k < STAT_N_COUNTERS; k++)
        bind_value(st, i++, stat_counters[k].kind, stat_value(t, k));
    bind_rate(st, i++, stat_derived_value(t, STAT_D_decode_tokens),
              stat_derived_value(t, STAT_D_t_decode));
    bind_rate(st, i++, t->new_tokens, t->t_total);
    bind_int_or_null(st, i++, s->match, -1);
    if (s->match == 0) {
        sqlite3_bind_int(st, i++, s->diverge_pos);
        sqlite3_bind_int(st, i++, s->greedy_token);
        sqlite3_bind_int(st, i++, s->decoder_token);
        sqlite3_bind_double(st, i++, s->greedy_margin);
    } else {
        for (int k = 0; k < 4; k++) sqlite3_bind_null(st, i++);
    }
    sqlite3_bind_int(st, i++, s->turn > 0 ? s->turn : 1);
    if (step_done(d, st, where, "sample", err) != 0) goto fail;
    int64_t sid = sqlite3_last_insert_rowid(d->h);

    if (insert_hist(d, sid, "accept", t->accept_hist, DEC_HIST_MAX + 1, where, err) != 0 ||
        insert_hist(d, sid, "pos_tried", t->pos_tried, DEC_HIST_MAX, where, err) != 0 ||
        insert_hist(d, sid, "pos_accepted", t->pos_accepted, DEC_HIST_MAX, where, err) != 0 ||
        insert_counters(d, sid, s->decoder, t, where, err) != 0)
        goto fail;
    for (int k = 0; trace && k < n_trace; k++) {
        const dec_step *p = &trace[k];
        sqlite3_stmt *tr = d->ins_trace;
        sqlite3_bind_int64(tr, 1, sid);
        sqlite3_bind_int(tr, 2, p->step);
        sqlite3_bind_int(tr, 3, p->rows);
        sqlite3_bind_int(tr, 4, p->drafted);
        sqlite3_bind_int(tr, 5, p->accepted);
        sqlite3_bind_int(tr, 6, p->emitted);
        sqlite3_bind_double(tr, 7, p->seconds);
        char what[64];
        snprintf(what, sizeof what, "trace step %d", p->step);
        if (step_done(d, tr, where, what, err) != 0) goto fail;
    }
    if (s->n_passes > 0 && insert_passes(d, sid, s->passes, s->n_passes, where, err) != 0)
        goto fail;
    if (s->batch && insert_batch(d, sid, s->batch, where, err) != 0) goto fail;
    if (db_exec(d->h, "COMMIT", where, err) != 0) goto fail;
    if (sample_id) *sample_id = sid;
    return 0;
fail:
    sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

int db_insert_cost(db *d, int64_t run_id, const db_cost *c, char *err) {
    if (need_write(d, "db_insert_cost", err) != 0) return -1;
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "INSERT INTO cost (run_id, rows, seconds, repeats, gflops, gbps, weight_bytes, "
                "mem_gbps, context, logit_rows) VALUES (?,?,?,?,?,?,?,?,?,?)",
                "db_insert_cost", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, c->rows);
    sqlite3_bind_double(st, 3, c->seconds);
    sqlite3_bind_int(st, 4, c->repeats);
    bind_real_or_null(st, 5, c->gflops);
    bind_real_or_null(st, 6, c->gbps);
    bind_int_or_null(st, 7, c->weight_bytes, 0);
    bind_real_or_null(st, 8, c->mem_gbps);
    if (c->context >= 0)
        sqlite3_bind_int(st, 9, c->context);
    else
        sqlite3_bind_null(st, 9);
    sqlite3_bind_int(st, 10, c->logit_rows);
    char what[96];
    snprintf(what, sizeof what, "rows %d context %d logit rows %d", c->rows, c->context,
             c->logit_rows);
    int rc = step_done(d, st, "db_insert_cost", what, err);
    sqlite3_finalize(st);
    return rc;
}
