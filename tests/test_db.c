/* test_db.c: the results database (results/db/db.h): creating, writing, reading back, refusing
 * files that are not ours without touching them, version checks, migration, atomic samples,
 * resume support, fingerprints and environment capture. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "results/db/db.h"
#include "results/db/db_internal.h" /* db_sqlite: the tests read the tables directly */
#include "tests/testutil.h"
#include "util/err.h"
#include "util/hash.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static const char *fresh(const char *name) {
    const char *p = test_tmp(name);
    char side[4200];
    unlink(p);
    snprintf(side, sizeof side, "%s-wal", p);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", p);
    unlink(side);
    snprintf(side, sizeof side, "%s-journal", p);
    unlink(side);
    return p;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* FNV-1a of a whole file, and its size: "byte-identical" checks. */
static uint64_t file_hash(const char *path, long *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (size) *size = (long)n;
    return hash_fnv1a(buf, n);
}

/* One integer (or -999 if no row / error) from a query on an open handle. */
static long long q_int(sqlite3 *h, const char *sql) {
    sqlite3_stmt *st;
    long long v = -999;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "query failed: %s: %s\n", sql, sqlite3_errmsg(h));
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static double q_real(sqlite3 *h, const char *sql) {
    sqlite3_stmt *st;
    double v = -999;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) return v;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

static char *q_text(sqlite3 *h, const char *sql) {
    static char out[1024];
    sqlite3_stmt *st;
    out[0] = 0;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) return out;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, sizeof out, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
}

static void raw_exec(const char *path, const char *sql) {
    sqlite3 *h;
    if (sqlite3_open(path, &h) != SQLITE_OK) {
        fprintf(stderr, "raw open %s failed\n", path);
        test_failures++;
    }
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "raw exec failed: %s\n", msg);
        test_failures++;
    }
    sqlite3_free(msg);
    sqlite3_close(h);
}

/* A plausible lookahead sample: 10 tokens in 5 target steps (prefill + 4 verifications). */
static void fill_stats(dec_stats *st) {
    memset(st, 0, sizeof *st);
    st->prompt_tokens = 12;
    st->new_tokens = 10;
    st->target_steps = 5;
    st->target_rows = 4 * 30;
    st->drafted = 12;
    /* 4 verification steps accepting 0, 0, 1 and 3 drafted tokens. */
    st->accept_hist[0] = 2;
    st->accept_hist[1] = 1;
    st->accept_hist[3] = 1;
    st->verify_steps = 4;
    st->accepted = 4;
    st->pos_tried[0] = 4;
    st->pos_tried[1] = 3;
    st->pos_tried[2] = 1;
    st->pos_accepted[0] = 2;
    st->pos_accepted[1] = 1;
    st->pos_accepted[2] = 1;
    st->t_target = 0.8;
    st->t_book = 0.1;
    st->t_prefill = 0.5;
    st->t_total = 2.5;
}

static db_sample make_sample(const char *spec, int index, int repeat) {
    db_sample s = {0};
    s.dataset = "mtbench";
    s.sample_index = index;
    s.sample_key = "q81";
    s.category = "writing";
    s.decoder = "lookahead";
    s.spec = spec;
    s.repeat = repeat;
    s.output_hash = 0x0123456789abcdefull;
    s.match = 1;
    return s;
}

static int64_t begin_run(db *d, const char *label) {
    char err[ERR_LEN];
    db_run r = {0};
    r.command = "decbench run --test";
    r.label = label;
    r.model_path = "/nonexistent/model.bin"; /* unreadable: hash stays NULL */
    r.datasets = "mtbench";
    r.max_new = 10;
    r.repeats = 1;
    r.threads = 2;
    r.kernels = "exact";
    r.seed = 0xfedcba9876543210ull; /* above 2^63: stored as its bit pattern */
    int64_t id = -1;
    CHECK_MSG(db_begin_run(d, &r, &id, err) == 0, "%s", err);
    return id;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_create_insert_read(void) {
    char err[ERR_LEN];
    const char *path = fresh("basic.db");
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    sqlite3 *h = db_sqlite(d);
    CHECK(strcmp(q_text(h, "PRAGMA journal_mode"), "wal") == 0);
    CHECK(q_int(h, "PRAGMA foreign_keys") == 1);
    CHECK(q_int(h, "PRAGMA user_version") == db_schema_version());
    CHECK(db_schema_version() == 11);
    CHECK(q_int(h, "PRAGMA application_id") == DB_APPLICATION_ID);
    CHECK(strcmp(q_text(h, "SELECT value FROM meta WHERE key='application'"), "decbench") == 0);

    db_env env;
    db_env_capture(&env);
    db_run r = {0};
    r.command = "decbench run";
    r.model_path = path; /* any readable file: its fingerprint gets stored */
    r.env = &env;
    r.max_new = 10;
    r.seed = 0xfedcba9876543210ull;
    int64_t run = 0, run2 = 0, sid = 0;
    CHECK_MSG(db_begin_run(d, &r, &run, err) == 0, "%s", err);
    r.kv_type = "f16";
    CHECK_MSG(db_begin_run(d, &r, &run2, err) == 0, "%s", err);
    r.kv_type = NULL;
    CHECK(run2 == run + 1);
    /* the KV cache type: f32 unless named (db_run.kv_type NULL), read back for --resume */
    CHECK(strcmp(q_text(h, "SELECT kv_type FROM runs WHERE id=1"), "f32") == 0);
    CHECK(strcmp(q_text(h, "SELECT kv_type FROM runs WHERE id=2"), "f16") == 0);
    db_run_info info;
    CHECK_MSG(db_get_run(d, run2, &info, err) == 0, "%s", err);
    CHECK(info.kv_type && strcmp(info.kv_type, "f16") == 0);
    db_run_info_free(&info);
    CHECK(q_int(h, "SELECT count(*) FROM environments") == 1); /* deduplicated */
    CHECK(strcmp(q_text(h, "SELECT status FROM runs WHERE id=1"), "running") == 0);
    CHECK(strlen(q_text(h, "SELECT model_hash FROM runs WHERE id=1")) == 16);
    CHECK(q_int(h, "SELECT model_bytes > 0 FROM runs WHERE id=1") == 1);
    CHECK((uint64_t)q_int(h, "SELECT seed FROM runs WHERE id=1") == 0xfedcba9876543210ull);

    dec_stats st;
    fill_stats(&st);
    dec_step trace[5];
    for (int i = 0; i < 5; i++)
        trace[i] = (dec_step){.step = i,
                              .rows = i ? 30 : 12,
                              .drafted = i ? 3 : 0,
                              .accepted = i == 4 ? 3 : 0,
                              .emitted = i == 4 ? 4 : 1,
                              .seconds = 0.1 * (i + 1)};
    db_sample s = make_sample("lookahead:W=15,N=5,G=15", 7, 0);
    /* The pass trace: a target prompt chunk, a draft pass, a target decode pass. */
    const dec_pass passes[3] = {
        {0, 1, 12, 1, 0, 0.05}, {1, 0, 1, 1, 12, 0.001}, {0, 0, 30, 4, 12, 0.09}};
    s.passes = passes, s.n_passes = 3;
    CHECK_MSG(db_insert_sample(d, run, &s, &st, trace, 5, &sid, err) == 0, "%s", err);
    CHECK(sid > 0);
    /* A pass the schema refuses (more logit rows than rows) leaves nothing of its sample. */
    db_sample wrong = make_sample("lookahead:W=15,N=5,G=15", 9, 0);
    const dec_pass bad_pass = {0, 0, 2, 3, 12, 0.01};
    wrong.passes = &bad_pass, wrong.n_passes = 1;
    CHECK(db_insert_sample(d, run, &wrong, &st, NULL, 0, NULL, err) == -1 && strstr(err, "pass 0"));
    CHECK(q_int(h, "SELECT count(*) FROM samples WHERE sample_index = 9") == 0);
    /* A mismatching one, with the divergence details. */
    db_sample bad = make_sample("lookahead:W=15,N=5,G=15", 8, 0);
    bad.match = 0;
    bad.diverge_pos = 3;
    bad.greedy_token = 42;
    bad.decoder_token = 43;
    bad.greedy_margin = 0.125;
    CHECK_MSG(db_insert_sample(d, run, &bad, &st, NULL, 0, NULL, err) == 0, "%s", err);
    CHECK_MSG(db_finish_run(d, run, DB_COMPLETE, err) == 0, "%s", err);
    CHECK(db_finish_run(d, 999, DB_COMPLETE, err) == -1 && strstr(err, "no run 999"));
    CHECK(db_finish_run(d, run, DB_RUNNING, err) == -1);
    db_close(d);

    /* Reopen read-only and read everything back. */
    CHECK_MSG(db_open(&d, path, DB_READ, err) == 0, "%s", err);
    if (!d) return;
    h = db_sqlite(d);
    CHECK(q_int(h, "PRAGMA foreign_keys") == 1);
    CHECK(strcmp(q_text(h, "SELECT status FROM runs WHERE id=1"), "complete") == 0);
    CHECK(strlen(q_text(h, "SELECT finished FROM runs WHERE id=1")) > 10);
    CHECK(strcmp(q_text(h, "SELECT output_hash FROM samples WHERE sample_index=7"),
                 "0123456789abcdef") == 0);
    CHECK(strcmp(q_text(h, "SELECT spec FROM samples WHERE sample_index=7"),
                 "lookahead:W=15,N=5,G=15") == 0);
    CHECK(q_int(h, "SELECT new_tokens FROM samples WHERE sample_index=7") == 10);
    CHECK(q_int(h, "SELECT target_steps FROM samples WHERE sample_index=7") == 5);
    CHECK(q_int(h, "SELECT target_rows FROM samples WHERE sample_index=7") == 120);
    CHECK(q_int(h, "SELECT accepted FROM samples WHERE sample_index=7") == 4);
    CHECK(q_int(h, "SELECT verify_steps FROM samples WHERE sample_index=7") == 4);
    CHECK(q_int(h, "SELECT matched FROM samples WHERE sample_index=7") == 1);
    CHECK(q_int(h, "SELECT diverge_pos IS NULL FROM samples WHERE sample_index=7") == 1);
    /* tok/s: decode-only = the 9 tokens after the prompt pass / (2.5 - 0.5) = 4.5 (the prompt
     * pass's token is not decode output: decoding starts after it); end-to-end 10 / 2.5 = 4. */
    CHECK(q_real(h, "SELECT tps_decode FROM samples WHERE sample_index=7") == 4.5);
    CHECK(q_real(h, "SELECT tps_e2e FROM samples WHERE sample_index=7") == 4.0);
    CHECK(q_real(h, "SELECT t_target FROM samples WHERE sample_index=7") == 0.8);
    CHECK(q_int(h, "SELECT count(*) FROM histograms WHERE kind='accept'") == 2 * 3);
    CHECK(q_int(h, "SELECT count FROM histograms WHERE sample_id=1 AND kind='accept' AND k=0") ==
          2);
    CHECK(q_int(h, "SELECT count FROM histograms WHERE sample_id=1 AND kind='pos_tried' AND "
                   "k=2") == 1);
    CHECK(q_int(h, "SELECT count(*) FROM trace WHERE sample_id=1") == 5);
    CHECK(q_int(h, "SELECT rows FROM trace WHERE sample_id=1 AND step=3") == 30);
    CHECK(q_real(h, "SELECT seconds FROM trace WHERE sample_id=1 AND step=4") == 0.5);
    CHECK(q_int(h, "SELECT count(*) FROM passes WHERE sample_id=1") == 3);
    CHECK(!strcmp(q_text(h, "SELECT group_concat(model || prefill || '/' || rows || '/' || "
                            "logit_rows || '/' || context, ' ') FROM (SELECT * FROM passes "
                            "WHERE sample_id=1 ORDER BY seq)"),
                  "target1/12/1/0 draft0/1/1/12 target0/30/4/12"));
    CHECK(q_real(h, "SELECT seconds FROM passes WHERE sample_id=1 AND seq=2") == 0.09);
    CHECK(q_int(h, "SELECT matched FROM samples WHERE sample_index=8") == 0);
    CHECK(q_int(h, "SELECT diverge_pos FROM samples WHERE sample_index=8") == 3);
    CHECK(q_int(h, "SELECT greedy_token FROM samples WHERE sample_index=8") == 42);
    CHECK(q_int(h, "SELECT decoder_token FROM samples WHERE sample_index=8") == 43);
    CHECK(q_real(h, "SELECT greedy_margin FROM samples WHERE sample_index=8") == 0.125);
    /* Writing through a read handle is refused by us, not by SQLite. */
    int64_t x;
    CHECK(db_begin_run(d, &r, &x, err) == -1 && strstr(err, "read-only"));
    db_close(d);
}

/* A foreign SQLite database: refused in both modes, byte-identical afterwards, no side files. */
static void test_foreign_sqlite(void) {
    char err[ERR_LEN];
    const char *path = fresh("foreign.db");
    raw_exec(path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
                   "INSERT INTO notes (body) VALUES ('keep me');");
    long size0, size1;
    uint64_t h0 = file_hash(path, &size0);
    db *d = NULL;
    CHECK(db_open(&d, path, DB_WRITE, err) == -1 && d == NULL);
    CHECK_MSG(strstr(err, "not a decbench") && strstr(err, "refusing"), "%s", err);
    CHECK(db_open(&d, path, DB_READ, err) == -1);
    uint64_t h1 = file_hash(path, &size1);
    CHECK(h0 == h1 && size0 == size1);
    char side[4200];
    snprintf(side, sizeof side, "%s-wal", path);
    CHECK(!exists(side));
    snprintf(side, sizeof side, "%s-journal", path);
    CHECK(!exists(side));

    /* Same application_id as ours but no meta marker: the second check catches it. */
    const char *path2 = fresh("foreign_appid.db");
    char sql[256];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; CREATE TABLE t (x);", DB_APPLICATION_ID);
    raw_exec(path2, sql);
    h0 = file_hash(path2, &size0);
    CHECK(db_open(&d, path2, DB_WRITE, err) == -1);
    CHECK_MSG(strstr(err, "without the decbench marker"), "%s", err);
    CHECK(file_hash(path2, &size1) == h0 && size0 == size1);
}

static void test_text_file(void) {
    char err[ERR_LEN];
    const char *path = fresh("notes.txt");
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 20; i++) fprintf(f, "line %d of someone's notes\n", i);
    fclose(f);
    long s0, s1;
    uint64_t h0 = file_hash(path, &s0);
    db *d = NULL;
    CHECK(db_open(&d, path, DB_WRITE, err) == -1);
    CHECK_MSG(strstr(err, "not an SQLite database") && strstr(err, path), "%s", err);
    CHECK(db_open(&d, path, DB_READ, err) == -1);
    CHECK(file_hash(path, &s1) == h0 && s0 == s1);

    /* A short file (less than a header) is not SQLite either. */
    const char *tiny = fresh("tiny.db");
    f = fopen(tiny, "w");
    fputs("SQLite", f);
    fclose(f);
    CHECK(db_open(&d, tiny, DB_WRITE, err) == -1 && strstr(err, "not an SQLite database"));
}

static void test_newer_version(void) {
    char err[ERR_LEN];
    const char *path = fresh("newer.db");
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    db_close(d);
    raw_exec(path, "PRAGMA user_version = 99");
    raw_exec(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    long s0, s1;
    uint64_t h0 = file_hash(path, &s0);
    char want[128];
    snprintf(want, sizeof want, "schema version 99, newer than version %d", db_schema_version());
    d = NULL;
    CHECK(db_open(&d, path, DB_WRITE, err) == -1 && d == NULL);
    CHECK_MSG(strstr(err, want), "%s", err);
    CHECK(db_open(&d, path, DB_READ, err) == -1);
    CHECK_MSG(strstr(err, want), "%s", err);
    CHECK(file_hash(path, &s1) == h0 && s0 == s1);
}

/* A version-1 database with data, migrated to the current version by opening it for writing. */
static void test_migration(void) {
    char err[ERR_LEN];
    const char *path = fresh("v1.db");
    CHECK_MSG(db_create_version(path, 1, err) == 0, "%s", err);
    CHECK(db_create_version(path, 1, err) == -1 && strstr(err, "already exists"));
    char beyond[32];
    snprintf(beyond, sizeof beyond, "v%d.db", db_schema_version() + 1);
    CHECK(db_create_version(fresh(beyond), db_schema_version() + 1, err) == -1);
    /* Data as version 1 stored it (no verify_steps column yet). */
    raw_exec(path,
             "INSERT INTO runs (id, status) VALUES (1, 'complete');"
             "INSERT INTO samples (id, run_id, dataset, sample_index, decoder, spec, repeat, "
             "prompt_tokens, new_tokens, output_hash, target_steps, target_rows, draft_steps, "
             "draft_rows, drafted, accepted, t_target, t_draft, t_book, t_prefill, t_total) "
             "VALUES (1, 1, 'gsm8k', 0, 'lookahead', 'lookahead:W=5', 0, 10, 20, "
             "'00000000000000aa', 8, 70, 0, 0, 30, 13, 1, 0, 0.1, 0.2, 1.5),"
             "(2, 1, 'gsm8k', 1, 'greedy', 'greedy', 0, 10, 20, '00000000000000bb', 20, 19, 0, "
             "0, 0, 0, 1, 0, 0.1, 0.2, 3.0);"
             "INSERT INTO histograms VALUES (1, 'accept', 0, 3), (1, 'accept', 2, 2), "
             "(1, 'accept', 3, 2), (1, 'pos_tried', 0, 7);"
             "INSERT INTO cost (run_id, rows, seconds, repeats) VALUES (1, 1, 0.01, 5), "
             "(1, 8, 0.03, 5);");
    sqlite3 *raw;
    sqlite3_open(path, &raw);
    CHECK(q_int(raw, "PRAGMA user_version") == 1);
    CHECK(q_int(raw, "SELECT count(*) FROM pragma_table_info('samples') WHERE "
                     "name='verify_steps'") == 0);
    sqlite3_close(raw);

    db *d = NULL;
    CHECK(db_open(&d, path, DB_READ, err) == -1);
    CHECK_MSG(strstr(err, "older than version") && strstr(err, "to migrate"), "%s", err);
    /* DB_READ_ANY reads it through a copy migrated in memory; the file is not touched. */
    long size_before, size_after;
    uint64_t hash_before = file_hash(path, &size_before);
    CHECK_MSG(db_open(&d, path, DB_READ_ANY, err) == 0, "%s", err);
    if (d) {
        CHECK(q_int(db_sqlite(d), "PRAGMA user_version") == db_schema_version());
        CHECK(q_int(db_sqlite(d), "SELECT verify_steps FROM samples WHERE id=1") == 7);
        CHECK(q_int(db_sqlite(d), "SELECT count(*) FROM counters") == 0);
        db_run r = {0};
        int64_t id;
        CHECK(db_begin_run(d, &r, &id, err) == -1 && strstr(err, "read-only"));
        db_close(d);
    }
    CHECK(file_hash(path, &size_after) == hash_before && size_after == size_before);
    sqlite3_open(path, &raw);
    CHECK(q_int(raw, "PRAGMA user_version") == 1);
    sqlite3_close(raw);
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    sqlite3 *h = db_sqlite(d);
    CHECK(q_int(h, "PRAGMA user_version") == db_schema_version());
    CHECK(q_int(h, "SELECT verify_steps FROM samples WHERE id=1") == 7); /* 3+2+2 back-filled */
    /* step 4: tps_decode from the tokens after the prompt pass, (20 - 1) / (1.5 - 0.2) */
    CHECK(fabs(q_real(h, "SELECT tps_decode FROM samples WHERE id=1") - 19 / 1.3) < 1e-12);
    CHECK(q_int(h, "SELECT verify_steps FROM samples WHERE id=2") == 0);
    /* step 10: runs stored before kept their keys and values in float32 */
    CHECK(strcmp(q_text(h, "SELECT kv_type FROM runs WHERE id=1"), "f32") == 0);
    /* step 9: drafting_steps from the histogram's position 1 (pos_tried k = 0) */
    CHECK(q_int(h, "SELECT drafting_steps FROM samples WHERE id=1") == 7);
    CHECK(q_int(h, "SELECT drafting_steps FROM samples WHERE id=2") == 0);
    /* step 5: cost points keep rows and seconds, context unknown, every row's logits */
    CHECK(!strcmp(q_text(h, "SELECT group_concat(rows || '/' || seconds || '/' || "
                            "COALESCE(context, 'null') || '/' || logit_rows, ' ') FROM "
                            "(SELECT * FROM cost ORDER BY rows)"),
                  "1/0.01/null/1 8/0.03/null/8"));
    CHECK(q_int(h, "SELECT count(*) FROM samples") == 2);
    CHECK(strcmp(q_text(h, "PRAGMA journal_mode"), "wal") == 0);
    db_close(d);
    /* Opening again changes nothing; read mode now works. */
    CHECK_MSG(db_open(&d, path, DB_READ, err) == 0, "%s", err);
    db_close(d);
}

/* A decoder's own counters: every one stored per sample (zeros too) with its definition. */
static void test_decoder_counters(void) {
    char err[ERR_LEN];
    const char *path = fresh("counters.db");
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    sqlite3 *h = db_sqlite(d);
    int64_t run = begin_run(d, "counters");
    stat_def defs[3] = {{"tree_nodes", STAT_INT, STAT_SUM, STAT_DET, "rows of the token tree"},
                        {"branch_hits", STAT_INT, STAT_MAX, STAT_DET, "deepest branch hit"},
                        {"theory", STAT_REAL, STAT_MEAN, STAT_VARIES, "expected acceptance"}};
    dec_stats st;
    fill_stats(&st);
    st.counter_defs = defs;
    st.n_counters = 3;
    st.counters[0] = 1234, st.counters[1] = 0, st.counters[2] = 0.625;
    db_sample s = make_sample("tree:width=4", 0, 0);
    s.decoder = "tree";
    CHECK_MSG(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
    CHECK(q_int(h, "SELECT count(*) FROM counters") == 3);
    CHECK(q_int(h, "SELECT value FROM counters WHERE name = 'tree_nodes'") == 1234);
    CHECK(q_int(h, "SELECT typeof(value) = 'integer' FROM counters WHERE name = 'branch_hits'"));
    CHECK(q_real(h, "SELECT value FROM counters WHERE name = 'theory'") == 0.625);
    CHECK(!strcmp(q_text(h, "SELECT aggregation || kind || deterministic FROM counter_defs "
                            "WHERE decoder = 'tree' AND name = 'branch_hits'"),
                  "maxint1"));
    /* The newest definition wins; each sample keeps its own values. */
    defs[0].definition = "rows of the token tree, root included";
    st.counters[0] = 10;
    s.sample_index = 1;
    CHECK_MSG(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
    CHECK(q_int(h, "SELECT count(*) FROM counter_defs") == 3);
    CHECK(!strcmp(q_text(h, "SELECT definition FROM counter_defs WHERE name = 'tree_nodes'"),
                  "rows of the token tree, root included"));
    CHECK(q_int(h, "SELECT SUM(value) FROM counters WHERE name = 'tree_nodes'") == 1244);
    /* Counters without their table are refused before anything is written. */
    st.counter_defs = NULL;
    s.sample_index = 2;
    CHECK(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == -1 &&
          strstr(err, "without definitions"));
    CHECK(q_int(h, "SELECT count(*) FROM samples") == 2);
    db_close(d);
}

/* A failure in the middle of a sample's transaction leaves none of that sample behind. */
static void test_atomic_sample(void) {
    char err[ERR_LEN];
    const char *path = fresh("atomic.db");
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    sqlite3 *h = db_sqlite(d);
    int64_t run = begin_run(d, "atomic");
    dec_stats st;
    fill_stats(&st);
    db_sample s = make_sample("lookahead:W=15,N=5,G=15", 0, 0);
    CHECK_MSG(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
    long long n_s = q_int(h, "SELECT count(*) FROM samples");
    long long n_h = q_int(h, "SELECT count(*) FROM histograms");

    /* The sample row and its histograms go in before the trace; trace step 2 violates
     * CHECK (rows >= 0), so everything of sample 1 must be rolled back. */
    dec_step trace[3] = {{0, 12, 0, 0, 1, 0.1}, {1, 30, 3, 1, 2, 0.1}, {2, -1, 3, 0, 1, 0.1}};
    s.sample_index = 1;
    CHECK(db_insert_sample(d, run, &s, &st, trace, 3, NULL, err) == -1);
    CHECK_MSG(strstr(err, "trace step 2") && strstr(err, "mtbench[1]"), "%s", err);
    CHECK(q_int(h, "SELECT count(*) FROM samples") == n_s);
    CHECK(q_int(h, "SELECT count(*) FROM histograms") == n_h);
    CHECK(q_int(h, "SELECT count(*) FROM trace") == 0);

    /* The same (dataset, index, spec, repeat) twice: refused, nothing added. */
    s.sample_index = 0;
    CHECK(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == -1);
    CHECK_MSG(strstr(err, "UNIQUE"), "%s", err);
    CHECK(q_int(h, "SELECT count(*) FROM samples") == n_s);
    CHECK(q_int(h, "SELECT count(*) FROM histograms") == n_h);

    /* A sample for a run that does not exist: the foreign key refuses it. */
    s.sample_index = 5;
    CHECK(db_insert_sample(d, 12345, &s, &st, NULL, 0, NULL, err) == -1);
    CHECK_MSG(strstr(err, "FOREIGN KEY"), "%s", err);
    CHECK(q_int(h, "SELECT count(*) FROM samples") == n_s);

    /* verify_steps must be the accept histogram's total (each step is counted in both). */
    s.sample_index = 6;
    st.verify_steps++;
    CHECK(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == -1);
    CHECK_MSG(strstr(err, "verify_steps 5 but the accept histogram counts 4 steps"), "%s", err);
    st.verify_steps--;
    CHECK(q_int(h, "SELECT count(*) FROM samples") == n_s);

    /* Missing required fields are caught before SQLite. */
    s.spec = NULL;
    CHECK(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == -1 && strstr(err, "spec"));
    /* And the connection is still usable afterwards. */
    s = make_sample("greedy", 0, 0);
    CHECK_MSG(db_insert_sample(d, run, &s, &st, trace, 2, NULL, err) == 0, "%s", err);
    CHECK(q_int(h, "SELECT count(*) FROM trace") == 2);
    db_close(d);
}

static void test_bad_paths(void) {
    char err[ERR_LEN];
    db *d = NULL;
    CHECK(db_open(&d, "/nonexistent-dir-decbench/x/results.db", DB_WRITE, err) == -1);
    CHECK_MSG(strstr(err, "directory /nonexistent-dir-decbench/x does not exist"), "%s", err);
    CHECK(db_open(&d, test_tmp("missing.db"), DB_READ, err) == -1 && strstr(err, "no such file"));
    CHECK(db_open(&d, test_tmpdir(), DB_WRITE, err) == -1 && strstr(err, "is a directory"));
    /* A location nobody can create files in (procfs refuses even root). */
    CHECK(db_open(&d, "/proc/decbench-results.db", DB_WRITE, err) == -1);
    CHECK_MSG(strncmp(err, "db_open: cannot create /proc/decbench-results.db: ", 50) == 0, "%s",
              err);
    if (geteuid() != 0) {
        /* A read-only directory (root ignores permissions, so only as a normal user). */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/ro_dir", test_tmpdir());
        mkdir(dir, 0755);
        chmod(dir, 0555);
        char p[4300];
        snprintf(p, sizeof p, "%s/r.db", dir);
        CHECK(db_open(&d, p, DB_WRITE, err) == -1 && strstr(err, "not writable"));
        chmod(dir, 0755);
    } else {
        fprintf(stderr, "test_db: running as root: read-only directory check skipped\n");
    }
    /* A zero-length file (e.g. from mktemp) is accepted as a new database. */
    const char *empty = fresh("empty.db");
    fclose(fopen(empty, "w"));
    CHECK(db_open(&d, empty, DB_READ, err) == -1 && strstr(err, "empty"));
    CHECK_MSG(db_open(&d, empty, DB_WRITE, err) == 0, "%s", err);
    db_close(d);
}

static void test_resume(void) {
    char err[ERR_LEN];
    const char *path = fresh("resume.db");
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    int64_t latest = 0;
    CHECK(db_latest_run(d, DB_STATUS_MASK(DB_COMPLETE), 1, 0, &latest, err) == -1);
    CHECK_MSG(strstr(err, "no complete run with samples"), "%s", err);
    int64_t done_run = begin_run(d, "a");
    int64_t cut_run = begin_run(d, "b");
    dec_stats st;
    fill_stats(&st);
    db_sample s = make_sample("greedy", 0, 0);
    CHECK(db_insert_sample(d, done_run, &s, &st, NULL, 0, NULL, err) == 0);
    CHECK(db_insert_sample(d, cut_run, &s, &st, NULL, 0, NULL, err) == 0);
    s.repeat = 1;
    CHECK(db_insert_sample(d, cut_run, &s, &st, NULL, 0, NULL, err) == 0);
    CHECK(db_finish_run(d, done_run, DB_COMPLETE, err) == 0);
    CHECK(db_finish_run(d, cut_run, DB_INCOMPLETE, err) == 0);

    CHECK(db_latest_run(d, DB_STATUS_MASK(DB_COMPLETE), 1, 0, &latest, err) == 0 &&
          latest == done_run);
    CHECK(db_latest_run(d, DB_STATUS_MASK(DB_INCOMPLETE) | DB_STATUS_MASK(DB_RUNNING), 0, 0,
                        &latest, err) == 0 &&
          latest == cut_run);
    int done = -1;
    CHECK(db_sample_done(d, cut_run, "mtbench", 0, "greedy", 1, &done, err) == 0 && done == 1);
    CHECK(db_sample_done(d, cut_run, "mtbench", 0, "greedy", 2, &done, err) == 0 && done == 0);
    CHECK(db_sample_done(d, cut_run, "mtbench", 1, "greedy", 0, &done, err) == 0 && done == 0);
    CHECK(db_sample_done(d, cut_run, "other", 0, "greedy", 0, &done, err) == 0 && done == 0);
    CHECK_MSG(db_resume_run(d, cut_run, err) == 0, "%s", err);
    CHECK(strcmp(q_text(db_sqlite(d), "SELECT status FROM runs WHERE id=2"), "running") == 0);
    CHECK(db_resume_run(d, done_run, err) == -1 && strstr(err, "not incomplete"));

    /* Sweeps and baseline links. */
    int64_t sweep = 0, point = 0;
    CHECK_MSG(db_begin_sweep(d, "lookahead:W=5|10,N=3|5", "mtbench", &sweep, err) == 0, "%s", err);
    db_run r = {0};
    r.sweep_id = sweep;
    r.baseline_run_id = done_run;
    CHECK_MSG(db_begin_run(d, &r, &point, err) == 0, "%s", err);
    CHECK(q_int(db_sqlite(d), "SELECT baseline_run_id FROM runs WHERE sweep_id=1") == done_run);
    r.baseline_run_id = 777; /* no such run: the foreign key refuses it */
    CHECK(db_begin_run(d, &r, &point, err) == -1 && strstr(err, "FOREIGN KEY"));

    /* Reading back: a run's record and specs, a sweep's grid and runs (db_read.c). */
    db_run_info info;
    CHECK_MSG(db_get_run(d, cut_run, &info, err) == 0, "%s", err);
    CHECK(!strcmp(info.datasets, "mtbench") && !strcmp(info.kernels, "exact") &&
          !strcmp(info.model_hash, "") && !strcmp(info.draft_hash, "") && info.max_new == 10 &&
          info.repeats == 1 && info.seed == 0xfedcba9876543210ull && info.status == DB_RUNNING);
    db_run_info_free(&info);
    CHECK(db_get_run(d, 99, &info, err) == -1);
    CHECK_MSG(strstr(err, "db_get_run: no run 99 in") && strstr(err, "resume.db"), "%s", err);
    s = make_sample("lookahead:W=15,N=5,G=15", 0, 0);
    CHECK(db_insert_sample(d, cut_run, &s, &st, NULL, 0, NULL, err) == 0);
    char **specs;
    int n_specs;
    CHECK(db_run_specs(d, cut_run, &specs, &n_specs, err) == 0 && n_specs == 2 &&
          !strcmp(specs[0], "greedy") && !strcmp(specs[1], "lookahead:W=15,N=5,G=15"));
    db_strings_free(specs, n_specs);
    CHECK(db_run_specs(d, 99, &specs, &n_specs, err) == 0 && n_specs == 0 && !specs);
    char *grid;
    CHECK(db_get_sweep(d, sweep, &grid, err) == 0 && !strcmp(grid, "lookahead:W=5|10,N=3|5"));
    free(grid);
    CHECK(db_get_sweep(d, 5, &grid, err) == -1 && strstr(err, "no sweep 5 in"));
    int64_t base_of_sweep = 0;
    db_run b = {.sweep_id = sweep};
    CHECK(db_begin_run(d, &b, &base_of_sweep, err) == 0);
    CHECK(db_finish_run(d, base_of_sweep, DB_FAILED, err) == 0);
    db_sweep_run *runs;
    int n_runs;
    CHECK(db_sweep_runs(d, sweep, &runs, &n_runs, err) == 0 && n_runs == 2);
    if (n_runs == 2)
        CHECK(runs[0].id == point && !runs[0].is_baseline && runs[0].status == DB_RUNNING &&
              runs[1].id == base_of_sweep && runs[1].is_baseline && runs[1].status == DB_FAILED);
    free(runs);
    CHECK(db_sweep_runs(d, 5, &runs, &n_runs, err) == 0 && n_runs == 0);

    /* Cost points. */
    int64_t cost_run = begin_run(d, "cost");
    for (int t = 1; t <= 64; t *= 4) {
        db_cost c = {t, 0.001 * (1 + t / 16.0), 10, 12.5, -1, 1 << 20, -1, 128, t};
        CHECK_MSG(db_insert_cost(d, cost_run, &c, err) == 0, "%s", err);
    }
    db_cost dup = {4, 0.1, 1, -1, -1, 0, -1, 128, 4};
    CHECK(db_insert_cost(d, cost_run, &dup, err) == -1 && strstr(err, "rows 4"));
    /* the same rows at another context or with other logit rows is another point */
    db_cost other = {4, 0.1, 1, -1, -1, 0, -1, 512, 4}, one = {4, 0.1, 1, -1, -1, 0, -1, 128, 1};
    CHECK_MSG(db_insert_cost(d, cost_run, &other, err) == 0, "%s", err);
    CHECK_MSG(db_insert_cost(d, cost_run, &one, err) == 0, "%s", err);
    CHECK(db_latest_run(d, DB_STATUS_MASK(DB_RUNNING), 0, 1, &latest, err) == 0 &&
          latest == cost_run);
    CHECK(q_int(db_sqlite(d), "SELECT count(*) FROM cost WHERE gbps IS NULL") == 6);
    db_close(d);
}

/* Two connections writing the same file (several engineers, one results database). */
static void test_two_writers(void) {
    char err[ERR_LEN];
    const char *path = fresh("shared.db");
    db *a = NULL, *b = NULL;
    CHECK_MSG(db_open(&a, path, DB_WRITE, err) == 0, "%s", err);
    CHECK_MSG(db_open(&b, path, DB_WRITE, err) == 0, "%s", err);
    if (!a || !b) return;
    int64_t ra = begin_run(a, "a"), rb = begin_run(b, "b");
    dec_stats st;
    fill_stats(&st);
    for (int i = 0; i < 20; i++) {
        db_sample s = make_sample("greedy", i, 0);
        CHECK_MSG(db_insert_sample(i % 2 ? a : b, i % 2 ? ra : rb, &s, &st, NULL, 0, NULL, err) ==
                      0,
                  "%s", err);
    }
    CHECK(q_int(db_sqlite(a), "SELECT count(*) FROM samples") == 20);

    /* Claims: a run begun by a is a's until a closes; b's --resume of it is
     * refused and changes nothing; a stop keeps its reason until a resume clears it. */
    CHECK(db_resume_run(b, ra, err) == -1);
    CHECK_MSG(strstr(err, "run 1 of") && strstr(err, "is being measured by another process"), "%s",
              err);
    CHECK(strcmp(q_text(db_sqlite(b), "SELECT status FROM runs WHERE id=1"), "running") == 0);
    CHECK_MSG(db_resume_run(a, ra, err) == 0, "%s", err); /* its own claim: fine */
    CHECK(db_stop_run(a, ra, DB_INCOMPLETE, "disk full", err) == 0);
    CHECK(strcmp(q_text(db_sqlite(b), "SELECT status || ':' || reason FROM runs WHERE id=1"),
                 "incomplete:disk full") == 0);
    CHECK(db_resume_run(b, ra, err) == -1); /* a still holds it */
    db_close(a);
    CHECK_MSG(db_resume_run(b, ra, err) == 0, "%s", err); /* a is gone */
    CHECK(q_int(db_sqlite(b), "SELECT reason IS NULL FROM runs WHERE id=1") == 1);
    CHECK(db_stop_run(b, ra, DB_COMPLETE, "ignored", err) == 0);
    CHECK(q_int(db_sqlite(b), "SELECT reason IS NULL FROM runs WHERE id=1") == 1);
    db_close(b);
}

static void test_fingerprint_and_env(void) {
    char err[ERR_LEN], hex[17];
    int64_t bytes = 0;
    /* Small file: FNV-1a of the content followed by the size as 8 little-endian bytes. */
    const char *small = fresh("small.bin");
    FILE *f = fopen(small, "wb");
    fputs("abc", f);
    fclose(f);
    CHECK_MSG(db_file_fingerprint(small, &bytes, hex, err) == 0, "%s", err);
    unsigned char buf[11] = {'a', 'b', 'c', 3, 0, 0, 0, 0, 0, 0, 0};
    char want[17];
    db_hash_hex(hash_fnv1a(buf, sizeof buf), want);
    CHECK(bytes == 3 && strcmp(hex, want) == 0);
    CHECK(db_file_fingerprint("/nonexistent/f", &bytes, hex, err) == -1 && strstr(err, "db_"));

    /* 3 MiB: a change in the middle MiB is (by design) not seen; head or tail changes are. */
    const char *big = fresh("big.bin");
    size_t n = 3u << 20;
    unsigned char *data = calloc(n, 1);
    for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(i * 7);
    char h0[17], h1[17], h2[17];
    f = fopen(big, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
    db_file_fingerprint(big, &bytes, h0, err);
    CHECK(bytes == (int64_t)n);
    data[n / 2] ^= 1;
    f = fopen(big, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
    db_file_fingerprint(big, &bytes, h1, err);
    CHECK(strcmp(h0, h1) == 0);
    data[n - 1] ^= 1;
    f = fopen(big, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
    db_file_fingerprint(big, &bytes, h2, err);
    CHECK(strcmp(h0, h2) != 0);
    free(data);

    int toks[3] = {1, 2, 3};
    CHECK(db_output_hash(toks, 3) == hash_fnv1a(toks, sizeof toks));
    CHECK(db_output_hash(toks, 2) != db_output_hash(toks, 3));
    db_hash_hex(0xabcull, hex);
    CHECK(strcmp(hex, "0000000000000abc") == 0);

    db_env e;
    db_env_capture(&e);
    CHECK(e.cpu_threads > 0);
    CHECK(e.openblas_threads > 0);
    CHECK(strstr(e.openblas_config, "OpenBLAS") != NULL);
    CHECK(e.os[0] != 0);
    CHECK(e.compiler[0] != 0);
    /* The source dir is a git checkout in this project's setup. */
    CHECK_MSG(strlen(e.git_commit) == 40 && e.git_dirty >= 0, "commit '%s' dirty %d", e.git_commit,
              e.git_dirty);
    fprintf(stderr, "env: %s dirty=%d | %s | %d cores / %d threads | %s | %s\n", e.git_commit,
            e.git_dirty, e.cpu_model, e.cpu_cores, e.cpu_threads, e.openblas_config, e.os);
}

/* ---- hostile databases -------------------------------------------------------------------- */

/* A database with one run and sample, then `sql` run on it by plain SQLite (no decbench). */
static const char *crafted(const char *name, const char *sql) {
    char err[ERR_LEN];
    const char *path = fresh(name);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return path;
    int64_t run = begin_run(d, "hostile");
    dec_stats st;
    fill_stats(&st);
    db_sample s = make_sample("lookahead:W=5", 0, 0);
    CHECK_MSG(db_insert_sample(d, run, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
    db_close(d);
    if (sql) raw_exec(path, sql);
    return path;
}

/* Every mode refuses, naming what is wrong; the file is not changed. */
static void expect_refused(const char *name, const char *sql, const char *want) {
    char err[ERR_LEN];
    const char *path = crafted(name, sql);
    long s0, s1;
    uint64_t h0 = file_hash(path, &s0);
    const db_mode modes[] = {DB_READ, DB_READ_ANY, DB_WRITE};
    for (int m = 0; m < 3; m++) {
        db *d = NULL;
        CHECK_MSG(db_open(&d, path, modes[m], err) == -1 && strstr(err, want) && strstr(err, path),
                  "%s, mode %d: %s", name, (int)modes[m], d ? "opened" : err);
        db_close(d);
    }
    CHECK_MSG(file_hash(path, &s1) == h0 && s0 == s1, "%s changed", name);
}

/* The schema is exactly the one the steps make: views in place of tables, triggers, extra
 * objects, changed columns are refused, by name, before anything is read; a database of every
 * older version passes (checked against its own version's schema) and migrates. */
static void test_hostile_schema(void) {
    expect_refused("h_view.db",
                   "ALTER TABLE samples RENAME TO s0; CREATE VIEW samples AS WITH RECURSIVE "
                   "r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT s0.* FROM s0, r;",
                   "'samples' is a view, where a decbench database has a table");
    expect_refused("h_meta.db",
                   "ALTER TABLE meta RENAME TO m0; CREATE VIEW meta AS SELECT * FROM m0;",
                   "'meta' is a view");
    expect_refused("h_trigger.db",
                   "CREATE TRIGGER evil AFTER INSERT ON samples BEGIN DELETE FROM runs; END;",
                   "holds trigger 'evil'");
    expect_refused("h_table.db", "CREATE TABLE extra (x);", "holds table 'extra'");
    expect_refused("h_index.db", "CREATE INDEX ix ON samples (dataset);", "holds index 'ix'");
    expect_refused("h_gen.db", "ALTER TABLE samples ADD COLUMN g AS (zeroblob(100000000)) VIRTUAL;",
                   "table 'samples' has other columns than a decbench database's at schema "
                   "version");
    expect_refused("h_drop.db", "DROP TABLE passes;", "lacks table 'passes'");
    expect_refused("h_runs_index.db",
                   "DROP INDEX runs_sweep; CREATE INDEX runs_sweep ON runs (label);",
                   "index 'runs_sweep' has other columns");
    /* every older version: its own schema, accepted, read and migrated */
    char err[ERR_LEN];
    for (int v = 1; v <= db_schema_version(); v++) {
        char name[32];
        snprintf(name, sizeof name, "h_v%d.db", v);
        const char *path = fresh(name);
        CHECK_MSG(db_create_version(path, v, err) == 0, "%s", err);
        db *d = NULL;
        CHECK_MSG(db_open(&d, path, DB_READ_ANY, err) == 0, "version %d: %s", v, err);
        db_close(d);
        CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "version %d: %s", v, err);
        db_close(d);
        CHECK_MSG(db_open(&d, path, DB_READ, err) == 0, "version %d: %s", v, err);
        db_close(d);
    }
}

/* Values that loops and arrays rely on are checked when a database is read. */
static void test_hostile_values(void) {
    char err[ERR_LEN];
    static const struct {
        const char *sql, *want;
    } cases[] = {
        {"UPDATE samples SET new_tokens = 4000000000000000000;",
         "sample 1 of run 1: new_tokens = 4000000000000000000, not an integer in 0..16777216"},
        {"UPDATE samples SET prompt_tokens = 'many';", "prompt_tokens = many, not an integer"},
        {"UPDATE samples SET target_steps = 16777218;", "target_steps = 16777218"},
        {"UPDATE samples SET drafted = -1;", "drafted = -1"},
        {"UPDATE samples SET t_total = 1e999;", "t_total = Inf, not a finite number"},
        {"UPDATE histograms SET count = 4000000000000000000 WHERE kind = 'accept' AND k = 0;",
         "histogram accept count = 4000000000000000000"},
        {"UPDATE histograms SET k = 64 WHERE kind = 'pos_tried' AND k = 2;",
         "histogram pos_tried k = 64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "h_value%zu.db", i);
        const char *path = crafted(name, cases[i].sql);
        db *d = NULL;
        CHECK_MSG(db_open(&d, path, DB_READ_ANY, err) == -1 && strstr(err, cases[i].want), "%s: %s",
                  cases[i].sql, d ? "opened" : err);
        db_close(d);
    }
    /* the largest values a run stores are fine */
    const char *path = crafted(
        "h_value_max.db", "UPDATE samples SET new_tokens = 16777216, target_steps = 16777217;");
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_READ_ANY, err) == 0, "%s", err);
    db_close(d);
}

/* A trigger added after decbench opened the file (another program) does not run on decbench's
 * connection; a query step that never ends is stopped by the watchdog with a message saying
 * so, while a long query that keeps producing rows is not. */
static void test_connection_guards(void) {
    char err[ERR_LEN];
    const char *path = crafted("h_guard.db", NULL);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    raw_exec(path, "CREATE TABLE seen (x); CREATE TRIGGER t AFTER INSERT ON samples BEGIN "
                   "INSERT INTO seen VALUES (1); END;");
    dec_stats st;
    fill_stats(&st);
    db_sample s = make_sample("lookahead:W=5", 1, 0);
    CHECK_MSG(db_insert_sample(d, 1, &s, &st, NULL, 0, NULL, err) == 0, "%s", err);
    CHECK(q_int(db_sqlite(d), "SELECT count(*) FROM samples") == 2);
    CHECK_MSG(q_int(db_sqlite(d), "SELECT count(*) FROM seen") == 0, "the trigger ran");
    db_close(d);

    path = crafted("h_watch.db", NULL);
    CHECK_MSG(db_open(&d, path, DB_READ, err) == 0, "%s", err);
    if (!d) return;
    d->watch.limit = 0.2;
    sqlite3 *h = db_sqlite(d);
    sqlite3_stmt *q;
    CHECK(sqlite3_prepare_v2(h,
                             "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
                             "SELECT count(*) FROM r",
                             -1, &q, NULL) == SQLITE_OK);
    double t0 = (double)clock() / CLOCKS_PER_SEC;
    int rc = sqlite3_step(q);
    double took = (double)clock() / CLOCKS_PER_SEC - t0;
    CHECK_MSG((rc & 0xff) == SQLITE_INTERRUPT && took < 5, "rc %d after %.2f s", rc, took);
    CHECK_MSG(strstr(db_errmsg(h), "ran longer than the time limit"), "%s", db_errmsg(h));
    sqlite3_finalize(q);
    /* rows keep coming for longer than the limit: not a step that hangs */
    CHECK(sqlite3_prepare_v2(h,
                             "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
                             "WHERE i < 3000000) SELECT i FROM r",
                             -1, &q, NULL) == SQLITE_OK);
    long rows = 0;
    t0 = (double)clock() / CLOCKS_PER_SEC;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) rows++;
    CHECK_MSG(rc == SQLITE_DONE && rows == 3000000, "rc %d after %ld rows in %.2f s", rc, rows,
              (double)clock() / CLOCKS_PER_SEC - t0);
    sqlite3_finalize(q);
    db_close(d);
}

/* merge carries every table of the schema: each is merge's own or hangs off a run or a sample
 * (the plan names them), and a table that is neither is refused, by name. */
static void test_merge_plan(void) {
    char err[ERR_LEN];
    const char *path = crafted("h_plan.db", NULL);
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, DB_WRITE, err) == 0, "%s", err);
    if (!d) return;
    sqlite3 *h = db_sqlite(d);
    db_merge_plan_t p;
    CHECK_MSG(db_merge_plan(h, &p, err) == 0, "%s", err);
    char got[512] = "";
    for (int i = 0; i < p.n_run; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "run:%s.%s ", p.run[i].table,
                 p.run[i].key);
    for (int i = 0; i < p.n_sample; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "sample:%s.%s ", p.sample[i].table,
                 p.sample[i].key);
    CHECK_MSG(!strcmp(got, "run:cost.run_id sample:batch_samples.sample_id "
                           "sample:counters.sample_id sample:histograms.sample_id "
                           "sample:passes.sample_id sample:trace.sample_id "),
              "%s", got);
    /* every table that refers to runs or samples is in the plan or merge's own */
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(h,
                             "SELECT m.name FROM sqlite_master m, pragma_foreign_key_list(m.name) "
                             "f WHERE m.type = 'table' AND f.\"table\" IN ('runs', 'samples')",
                             -1, &st, NULL) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        int found = !strcmp(t, "runs") || !strcmp(t, "samples");
        for (int i = 0; i < p.n_run; i++) found |= !strcmp(p.run[i].table, t);
        for (int i = 0; i < p.n_sample; i++) found |= !strcmp(p.sample[i].table, t);
        CHECK_MSG(found, "table %s refers to runs or samples but merge does not carry it", t);
    }
    sqlite3_finalize(st);
    /* a table merge cannot place: refused, named */
    CHECK(sqlite3_exec(h, "CREATE TABLE notes (body TEXT)", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_MSG(db_merge_plan(h, &p, err) == -1 && strstr(err, "table 'notes' is neither"), "%s",
              err);
    CHECK(sqlite3_exec(h,
                       "DROP TABLE notes; CREATE TABLE notes (sample_id INTEGER REFERENCES "
                       "samples(id), body TEXT)",
                       NULL, NULL, NULL) == SQLITE_OK);
    CHECK_MSG(db_merge_plan(h, &p, err) == 0 && p.n_sample == 6 &&
                  !strcmp(p.sample[3].table, "notes"),
              "%s", err);
    db_close(d);
}

int main(void) {
    test_hostile_schema();
    test_hostile_values();
    test_connection_guards();
    test_merge_plan();
    test_create_insert_read();
    test_foreign_sqlite();
    test_text_file();
    test_newer_version();
    test_migration();
    test_atomic_sample();
    test_decoder_counters();
    test_bad_paths();
    test_resume();
    test_two_writers();
    test_fingerprint_and_env();
    return test_finish("test_db");
}
