/* db_internal.h: what the results/ files share about a database handle; not for other folders
 * (tests excepted). */
#ifndef RESULTS_DB_INTERNAL_H
#define RESULTS_DB_INTERNAL_H

#include <sqlite3.h>

#include "results/db/db.h"

/* The watchdog of a connection (db_check.c): one query step running longer than `limit`
 * seconds is stopped. */
typedef struct {
    double limit; /* seconds; <= 0: DB_STEP_SECONDS */
    double since; /* when the step in progress began (0: not known yet) */
    int fresh;    /* a statement started or a row came since the last look */
} db_watch;

/* The longest one query step may run: far above any step on a real database (the largest
 * aggregation, the projection over every pass of a traced run, takes seconds), so only a
 * query that would never end meets it. */
#define DB_STEP_SECONDS 300.0

struct db {
    sqlite3 *h;
    char *path;
    int writable;
    /* DB_WRITE: a descriptor of the database file holding the open-file-description locks of
     * the runs this handle measures (db_claim_run); -1 when none. Closed only after SQLite's
     * connection: closing any descriptor of a file drops the process's POSIX locks on it,
     * SQLite's included. */
    int lock_fd;
    /* Read modes: SQLite's -wal and -shm files did not exist before this handle opened the
     * file, so db_close removes them as the last connection of a writer would (a read-only
     * connection cannot: reports, plots and compare left them beside every database read). */
    int tidy_side_files;
    db_watch watch;
    /* Prepared once, reused for every sample: inserting is the only per-sample work. */
    sqlite3_stmt *ins_sample, *ins_hist, *ins_trace, *ins_counter, *ins_counter_def;
};

/* The underlying connection, for the queries of results/ (reports, compare, plot data) and
 * tests; owned by d. Every SQL statement lives in results/: other folders call the named
 * functions of db.h, report.h and compare.h. */
sqlite3 *db_sqlite(db *d);

/* Schema steps of the embedded schema.sql: step v (1-based) as a NUL-terminated malloc'd copy
 * in *sql (caller frees). -1 with a message if the embedded file is malformed. */
int db_schema_step(int v, char **sql, char *err);

/* Runs steps from+1..to on h inside the caller's transaction, then sets application_id and
 * user_version = to. */
int db_schema_apply(sqlite3 *h, int from, int to, char *err);

/* Takes run_id for this handle: an exclusive open-file-description lock (F_OFD_SETLK) on byte
 * 2^62 + run_id of the database file, far from SQLite's own lock bytes, held until db_close.
 * The kernel drops it when the process ends however it ends (kill -9 included), so a lock
 * held means a live process is measuring the run. Fails naming the run when another process
 * (or handle) holds it. Where such locks are not supported (an old kernel, some network file
 * systems) it succeeds without a lock. */
int db_claim_run(db *d, int64_t run_id, char *err);

/* Every connection decbench opens (db_check.c): defensive mode, the schema not trusted,
 * triggers, views and extensions off, and the watchdog w (NULL: none) on its steps. */
void db_harden(sqlite3 *h, db_watch *w);

/* sqlite3_errmsg, except for a step the watchdog stopped: then a message saying so. Every
 * message of results/ about a failed statement takes its text from here. */
const char *db_errmsg(sqlite3 *h);

/* The schema of h is the one schema.sql's steps 1..version make: the same tables, each with
 * the same columns, the same indexes, and nothing else (no view, trigger, virtual table,
 * generated column). -1 with a message naming path and the object otherwise. */
int db_check_schema(sqlite3 *h, const char *path, int version, char *err);

/* The values of every sample that loops and arrays rely on: framework counters are integers
 * in range (token counts up to DB_MAX_TOKENS, target passes and verifications one more, other
 * counts up to DB_MAX_COUNT), times finite, histogram positions inside their arrays and counts
 * in 1..DB_MAX_TOKENS. -1 with a message naming path, the sample, the field and its value. */
int db_check_values(sqlite3 *h, const char *path, char *err);

/* merge (db_merge.c): the tables besides those merge handles itself that hang off a run or a
 * sample (one foreign key, to runs(id) or samples(id)), each with its key column. */
typedef struct {
    char table[64], key[64];
} db_merge_child;
typedef struct {
    db_merge_child run[16], sample[16];
    int n_run, n_sample;
} db_merge_plan_t;

/* Reads the plan from out's schema; -1 naming a table that is neither merge's own nor a run's
 * or a sample's child (merge refuses rather than drop its rows). */
int db_merge_plan(sqlite3 *out, db_merge_plan_t *p, char *err);

/* sqlite3_exec of a statement list; the error is "<what>: <SQLite message>", so `what` starts
 * with the function name (db_...). */
int db_exec(sqlite3 *h, const char *sql, const char *what, char *err);

#endif
