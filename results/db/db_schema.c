/* db_schema.c: the schema steps embedded from schema.sql, and running them.
 *
 * schema.sql is split at lines "-- @version N"; the text before the first marker is a comment
 * header. Steps must be numbered 1, 2, 3, ... in order: anything else is a build mistake, and
 * is reported rather than silently skipping a step. */
#include "results/db/db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/db/schema_sql.h" /* generated: db_schema_sql_text[] */
#include "util/err.h"

static const char MARK[] = "-- @version ";

/* Start of the marker line of step v, or NULL; *end gets the start of the next marker (or the
 * end of the text). *last gets the highest step number seen. */
static const char *find_step(int v, const char **end, int *last, char *err) {
    const char *p = db_schema_sql_text, *start = NULL;
    int expect = 1;
    *last = 0;
    *end = NULL;
    while ((p = strstr(p, MARK)) != NULL) {
        if (p != db_schema_sql_text && p[-1] != '\n') { /* not at a line start: ordinary text */
            p += sizeof MARK - 1;
            continue;
        }
        int n = atoi(p + sizeof MARK - 1);
        if (n != expect) {
            err_set(err, "db_schema: schema.sql step %d found where step %d was expected", n,
                    expect);
            return NULL;
        }
        if (start && !*end) *end = p;
        if (n == v) start = p;
        *last = n;
        expect++;
        p += sizeof MARK - 1;
    }
    if (start && !*end) *end = db_schema_sql_text + strlen(db_schema_sql_text);
    return start;
}

int db_schema_version(void) {
    const char *end;
    int last;
    char err[ERR_LEN];
    find_step(1, &end, &last, err);
    return last;
}

int db_schema_step(int v, char **sql, char *err) {
    const char *end;
    int last;
    err[0] = 0;
    const char *start = find_step(v, &end, &last, err);
    if (!start) {
        if (!err[0]) err_set(err, "db_schema: schema.sql has no step %d (last is %d)", v, last);
        return -1;
    }
    size_t n = (size_t)(end - start);
    *sql = malloc(n + 1);
    if (!*sql) return err_set(err, "db_schema: out of memory");
    memcpy(*sql, start, n);
    (*sql)[n] = 0;
    return 0;
}

int db_exec(sqlite3 *h, const char *sql, const char *what, char *err) {
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        err_set(err, "%s: %s", what, msg ? msg : db_errmsg(h));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int db_schema_apply(sqlite3 *h, int from, int to, char *err) {
    for (int v = from + 1; v <= to; v++) {
        char *sql, what[64];
        if (db_schema_step(v, &sql, err) != 0) return -1;
        snprintf(what, sizeof what, "db_open: schema step %d", v);
        int rc = db_exec(h, sql, what, err);
        free(sql);
        if (rc != 0) return -1;
    }
    /* Both pragmas write the file header inside the current transaction. */
    char pragmas[128];
    snprintf(pragmas, sizeof pragmas, "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             DB_APPLICATION_ID, to);
    return db_exec(h, pragmas, "db_open: setting the schema version", err);
}
