/* db_check.c: a database is input like any file, so what decbench reads from one is checked
 * before it is trusted (db_internal.h):
 *
 *   - the connection (db_harden): SQLite's defensive mode, schema not trusted (functions in the
 *     schema must be innocuous), triggers and views disabled, no extensions; a watchdog stops
 *     a single query step that runs longer than DB_STEP_SECONDS (the last guard against a
 *     query that never ends; the checks below should leave none);
 *   - the schema (db_check_schema): exactly the objects schema.sql's steps make at the file's
 *     version, each of the same kind (a view or a virtual table where a table belongs is
 *     refused, and so is a trigger, view, table or index decbench does not make), each table
 *     with the same columns (a generated column is refused), each index on the same columns;
 *   - the values loops and arrays depend on (db_check_values): counters are integers of a
 *     size a run can store (a token count at most DB_MAX_TOKENS, the largest --max-new),
 *     times are finite, histogram entries lie in their arrays.
 * Each refusal is one line naming the file, the object or sample and what was expected. */
#include "results/db/db_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text_escape.h"
#include "util/clock.h"
#include "util/err.h"

/* ---- the connection --------------------------------------------------------------------- */

/* SQLite calls the progress handler every WATCH_OPS virtual-machine instructions. */
#define WATCH_OPS 10000

/* A row produced (or a statement started) means the step in progress is a new one. */
static int watch_trace(unsigned type, void *ctx, void *p, void *x) {
    (void)type, (void)p, (void)x;
    ((db_watch *)ctx)->fresh = 1;
    return 0;
}

static int watch_progress(void *ctx) {
    db_watch *w = ctx;
    double now = clock_now();
    if (w->fresh || w->since == 0) {
        w->fresh = 0;
        w->since = now;
        return 0;
    }
    return now - w->since > w->limit; /* non-zero: SQLite stops the step (SQLITE_INTERRUPT) */
}

void db_harden(sqlite3 *h, db_watch *w) {
    sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    if (!w) return;
    w->since = 0;
    w->fresh = 1;
    if (w->limit <= 0) w->limit = DB_STEP_SECONDS;
    sqlite3_trace_v2(h, SQLITE_TRACE_STMT | SQLITE_TRACE_ROW, watch_trace, w);
    sqlite3_progress_handler(h, WATCH_OPS, watch_progress, w);
}

/* ---- the schema ------------------------------------------------------------------------- */

typedef struct {
    char type[16], name[128], tbl[128];
    int is_virtual;
} object;

/* The objects of h (internal ones, sqlite_*, left out when a table or an index: SQLite makes
 * those, e.g. sqlite_autoindex_*, sqlite_stat1 after ANALYZE), in name order; *n = -1 when
 * there are more than max. */
static int objects(sqlite3 *h, object *o, int max, int *n, char *err) {
    sqlite3_stmt *st;
    *n = 0;
    if (sqlite3_prepare_v2(h,
                           "SELECT type, name, tbl_name, sql LIKE 'CREATE VIRTUAL%' FROM "
                           "sqlite_master WHERE NOT (type IN ('table', 'index') AND name LIKE "
                           "'sqlite\\_%' ESCAPE '\\') ORDER BY name",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "%s", db_errmsg(h));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == max) {
            *n = -1;
            break;
        }
        object *x = &o[(*n)++];
        const char *f[3] = {(const char *)sqlite3_column_text(st, 0),
                            (const char *)sqlite3_column_text(st, 1),
                            (const char *)sqlite3_column_text(st, 2)};
        txt_plain_buf(x->type, sizeof x->type, f[0] ? f[0] : "?");
        snprintf(x->name, sizeof x->name, "%s", f[1] ? f[1] : "");
        snprintf(x->tbl, sizeof x->tbl, "%s", f[2] ? f[2] : "");
        x->is_virtual = sqlite3_column_int(st, 3);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : err_set(err, "%s", db_errmsg(h));
}

/* One line per column of a table ("name TYPE", PRIMARY KEY, GENERATED) or index ("name"),
 * joined, into out (malloc'd). */
static int columns(sqlite3 *h, const object *o, char **out, char *err) {
    sqlite3_stmt *st;
    const char *sql = !strcmp(o->type, "table")
                          ? "SELECT name || CASE WHEN type <> '' THEN ' ' || type ELSE '' END "
                            "|| CASE WHEN pk THEN ' PRIMARY KEY' ELSE '' END || CASE hidden "
                            "WHEN 0 THEN '' WHEN 1 THEN ' HIDDEN' ELSE ' GENERATED' END FROM "
                            "pragma_table_xinfo(?) ORDER BY cid"
                          : "SELECT COALESCE(name, '(expression)') FROM pragma_index_xinfo(?) "
                            "WHERE key ORDER BY seqno";
    *out = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "%s", db_errmsg(h));
    sqlite3_bind_text(st, 1, o->name, -1, SQLITE_TRANSIENT);
    size_t len = 0, cap = 256;
    char *s = malloc(cap);
    int rc;
    if (s) s[0] = '\0';
    while (s && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        size_t k = strlen(c ? c : "") + 2;
        if (len + k >= cap) {
            char *g = realloc(s, cap = 2 * (len + k));
            if (!g) free(s);
            s = g;
            if (!s) break;
        }
        len += (size_t)snprintf(s + len, cap - len, "%s\n", c ? c : "");
    }
    sqlite3_finalize(st);
    if (!s) return err_set(err, "out of memory");
    *out = s;
    return 0;
}

/* The first line of a that b lacks, into out (for the message). */
static void first_extra(const char *a, const char *b, char *out, size_t n) {
    out[0] = '\0';
    for (const char *p = a; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        for (const char *q = b; *q && !found;) {
            const char *f = strchr(q, '\n');
            size_t l2 = f ? (size_t)(f - q) : strlen(q);
            found = l2 == len && !strncmp(p, q, len);
            q = f ? f + 1 : q + l2;
        }
        if (!found) {
            char line[256];
            snprintf(line, sizeof line, "%.*s", (int)len, p);
            txt_plain_buf(out, n, line);
            return;
        }
        p = e ? e + 1 : p + len;
    }
}

#define MAX_OBJECTS 256

int db_check_schema(sqlite3 *h, const char *path, int version, char *err) {
    sqlite3 *ref = NULL;
    object *mine = malloc(sizeof *mine * MAX_OBJECTS), *want = malloc(sizeof *want * MAX_OBJECTS);
    int n_mine = 0, n_want = 0, rc = -1;
    char e[ERR_LEN], name[160];
    if (!mine || !want) {
        err_set(err, "db_open: %s: out of memory", path);
        goto done;
    }
    /* what the steps 1..version make: the same steps in an empty database in memory */
    if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        err_set(err, "db_open: %s: cannot open a database in memory", path);
        goto done;
    }
    db_harden(ref, NULL);
    if (db_schema_apply(ref, 0, version, e) || objects(ref, want, MAX_OBJECTS, &n_want, e)) {
        err_set(err, "%s", e);
        goto done;
    }
    if (objects(h, mine, MAX_OBJECTS, &n_mine, e)) {
        err_set(err, "db_open: %s: reading its schema: %s", path, e);
        goto done;
    }
    if (n_mine < 0) {
        err_set(err,
                "db_open: %s has more than %d schema objects, which no decbench database has: "
                "refusing to use it",
                path, MAX_OBJECTS);
        goto done;
    }
    /* first an object of the wrong kind (a view named samples says more than the table it
     * hides, renamed), then objects that should not be there */
    for (int i = 0; i < n_mine; i++)
        for (int j = 0; j < n_want; j++)
            if (!strcmp(want[j].name, mine[i].name) && strcmp(want[j].type, mine[i].type)) {
                err_set(err,
                        "db_open: %s: '%s' is a %s, where a decbench database has a %s: "
                        "refusing to use it",
                        path, txt_plain_buf(name, sizeof name, mine[i].name), mine[i].type,
                        want[j].type);
                goto done;
            }
    for (int i = 0; i < n_mine; i++) {
        const object *m = &mine[i], *w = NULL;
        for (int j = 0; j < n_want && !w; j++)
            if (!strcmp(want[j].name, m->name)) w = &want[j];
        txt_plain_buf(name, sizeof name, m->name);
        if (!w || strcmp(w->tbl, m->tbl)) {
            err_set(err,
                    "db_open: %s holds %s '%s', which a decbench database (schema version "
                    "%d) does not have: refusing to use it (if it is yours, remove it in "
                    "the sqlite3 shell: DROP %s \"%s\")",
                    path, m->type, name, version,
                    !strcmp(m->type, "trigger") ? "TRIGGER"
                    : !strcmp(m->type, "view")  ? "VIEW"
                    : !strcmp(m->type, "index") ? "INDEX"
                                                : "TABLE",
                    name);
            goto done;
        }
        if (m->is_virtual) {
            err_set(err,
                    "db_open: %s: '%s' is a virtual table, where a decbench database has a "
                    "table: refusing to use it",
                    path, name);
            goto done;
        }
        char *a = NULL, *b = NULL;
        if (columns(h, m, &a, e) || columns(ref, w, &b, e)) {
            free(a);
            err_set(err, "db_open: %s: %s '%s': %s", path, m->type, name, e);
            goto done;
        }
        int same = !strcmp(a, b);
        if (!same) {
            char extra[160], missing[160];
            first_extra(a, b, extra, sizeof extra);
            first_extra(b, a, missing, sizeof missing);
            err_set(err,
                    "db_open: %s: %s '%s' has other columns than a decbench database's at "
                    "schema version %d (%s%s%s%s%s): refusing to use it",
                    path, m->type, name, version, extra[0] ? "column " : "", extra,
                    extra[0] && missing[0] ? " instead of " : "", missing[0] ? "column " : "",
                    missing[0] ? missing : (extra[0] ? " is not one of its" : "another order"));
        }
        free(a);
        free(b);
        if (!same) goto done;
    }
    for (int j = 0; j < n_want; j++) {
        int found = 0;
        for (int i = 0; i < n_mine && !found; i++) found = !strcmp(want[j].name, mine[i].name);
        if (!found) {
            err_set(err,
                    "db_open: %s lacks %s '%s' of a decbench database at schema version %d: "
                    "refusing to use it",
                    path, want[j].type, want[j].name, version);
            goto done;
        }
    }
    rc = 0;
done:
    sqlite3_close(ref);
    free(mine);
    free(want);
    return rc;
}

/* ---- the values ------------------------------------------------------------------------- */

/* One check: a query returning (sample id, run id, the column's name, its value as text) of
 * the first row breaking the rule, and what the rule is. */
static int first_bad(sqlite3 *h, const char *path, const char *sql, const char *rule, char *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "db_check: %s: %s", path, db_errmsg(h));
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        char what[64], value[64];
        txt_plain_buf(what, sizeof what, (const char *)sqlite3_column_text(st, 2));
        txt_plain_buf(value, sizeof value,
                      sqlite3_column_type(st, 3) == SQLITE_NULL
                          ? "NULL"
                          : (const char *)sqlite3_column_text(st, 3));
        err_set(err,
                "%s: sample %" PRId64 " of run %" PRId64 ": %s = %s, %s: the database is damaged "
                "or was altered; refusing to read it",
                path, (int64_t)sqlite3_column_int64(st, 0), (int64_t)sqlite3_column_int64(st, 1),
                what, value, rule);
    } else if (rc != SQLITE_DONE) {
        err_set(err, "db_check: %s: %s", path, db_errmsg(h));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int db_check_values(sqlite3 *h, const char *path, char *err) {
    /* the framework counters: integers of a size a run stores, finite numbers */
    char sql[8192], rule[128];
    for (int k = 0; k < STAT_N_COUNTERS; k++) {
        const stat_def *c = &stat_counters[k];
        /* token counts: at most the largest --max-new (or prompt); target passes and
         * verifications: each yields a token, the prompt pass counted once */
        int tokens = !strcmp(c->name, "prompt_tokens") || !strcmp(c->name, "new_tokens");
        int steps = !strcmp(c->name, "target_steps") || !strcmp(c->name, "verify_steps");
        if (c->kind == STAT_INT) {
            long long max = tokens ? DB_MAX_TOKENS : steps ? DB_MAX_TOKENS + 1 : DB_MAX_COUNT;
            snprintf(sql, sizeof sql,
                     "SELECT id, run_id, '%s', %s FROM samples WHERE NOT (typeof(%s) = "
                     "'integer' AND %s BETWEEN 0 AND %lld) LIMIT 1",
                     c->name, c->name, c->name, c->name, max);
            snprintf(rule, sizeof rule, "not an integer in 0..%lld", max);
        } else {
            snprintf(sql, sizeof sql,
                     "SELECT id, run_id, '%s', %s FROM samples WHERE NOT (typeof(%s) IN "
                     "('integer', 'real') AND abs(%s) <= 1e300) LIMIT 1",
                     c->name, c->name, c->name, c->name);
            snprintf(rule, sizeof rule, "not a finite number");
        }
        if (first_bad(h, path, sql, rule, err)) return -1;
    }
    /* histograms: positions inside dec_stats' arrays, counts of a size a run stores */
    snprintf(sql, sizeof sql,
             "SELECT h.sample_id, s.run_id, 'histogram ' || h.kind || ' k', h.k FROM histograms h "
             "JOIN samples s ON s.id = h.sample_id WHERE NOT (typeof(h.k) = 'integer' AND h.k "
             "BETWEEN 0 AND CASE h.kind WHEN 'accept' THEN %d ELSE %d END) LIMIT 1",
             DEC_HIST_MAX, DEC_HIST_MAX - 1);
    snprintf(rule, sizeof rule, "not a position of its histogram (accept 0..%d, pos_* 0..%d)",
             DEC_HIST_MAX, DEC_HIST_MAX - 1);
    if (first_bad(h, path, sql, rule, err)) return -1;
    snprintf(sql, sizeof sql,
             "SELECT h.sample_id, s.run_id, 'histogram ' || h.kind || ' count', h.count FROM "
             "histograms h JOIN samples s ON s.id = h.sample_id WHERE NOT (typeof(h.count) = "
             "'integer' AND h.count BETWEEN 1 AND %lld) LIMIT 1",
             (long long)DB_MAX_TOKENS);
    snprintf(rule, sizeof rule, "not a count in 1..%lld", (long long)DB_MAX_TOKENS);
    return first_bad(h, path, sql, rule, err);
}
