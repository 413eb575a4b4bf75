/* db_internal.h: what the results/ files share about a database handle; not for other folders
 * (tests excepted). */
#ifndef RESULTS_DB_INTERNAL_H
#define RESULTS_DB_INTERNAL_H

#include <sqlite3.h>

#include "results/db.h"

struct db {
    sqlite3 *h;
    char *path;
    int writable;
    /* DB_WRITE: a descriptor of the database file holding the open-file-description locks of
     * the runs this handle measures (db_claim_run); -1 when none. Closed only after SQLite's
     * connection: closing any descriptor of a file drops the process's POSIX locks on it,
     * SQLite's included. */
    int lock_fd;
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

/* sqlite3_exec of a statement list; the error is "<what>: <SQLite message>", so `what` starts
 * with the function name (db_...). */
int db_exec(sqlite3 *h, const char *sql, const char *what, char *err);

#endif
