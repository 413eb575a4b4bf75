/* db_open.c: opening, creating, recognising and migrating a results database.
 *
 * Order of checks, so that a file that is not ours is never modified:
 *   1. our own read of the first 100 bytes: SQLite magic and application_id "DECB" (SQLite is
 *      not involved yet, so it cannot create journal/WAL side files next to a foreign file);
 *   2. a READ-ONLY SQLite connection: the meta marker and PRAGMA user_version;
 *   3. only then (DB_WRITE) a read-write connection, and inside BEGIN IMMEDIATE the same
 *      checks again (another process may have created or migrated the file meanwhile) before
 *      any schema step runs. */
#include "results/db/db_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/err.h"
#include "util/file.h"

/* How long a writer waits for another process's transaction before giving up. */
#define DB_BUSY_MS 10000

enum { HDR_EMPTY, HDR_OURS };

/* Step 1: 0-length file (HDR_EMPTY), decbench header (HDR_OURS), or an error. */
static int check_header(const char *path, int *kind, char *err) {
    char e[ERR_LEN];
    FILE *f = file_fopen_regular(path, "database", e); /* a FIFO would block fopen() */
    if (!f) return err_set(err, "db_open: %s", e);
    unsigned char h[100];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n == 0) {
        *kind = HDR_EMPTY;
        return 0;
    }
    if (n < sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        return err_set(err, "db_open: %s is not an SQLite database (no SQLite header)", path);
    /* application_id: big-endian 32-bit at offset 68 of the header. */
    unsigned long app =
        (unsigned long)h[68] << 24 | (unsigned long)h[69] << 16 | (unsigned long)h[70] << 8 | h[71];
    if (app != DB_APPLICATION_ID)
        return err_set(err,
                       "db_open: %s is an SQLite database but not a decbench one "
                       "(application_id 0x%08lx, expected 0x%08x); refusing to use it",
                       path, app, DB_APPLICATION_ID);
    *kind = HDR_OURS;
    return 0;
}

static int query_int(sqlite3 *h, const char *sql, int *out) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* A file whose header says it is ours that SQLite finds damaged: say so, rather than calling
 * it another program's database. */
static int damaged(sqlite3 *h, const char *path, char *err) {
    return err_set(err,
                   "db_open: %s is a decbench database, but damaged (%s): restore it from a copy, "
                   "or save what is left with `sqlite3 %s .recover | sqlite3 NEW.db`",
                   path, db_errmsg(h), path);
}

static int is_damage(sqlite3 *h) {
    int e = sqlite3_errcode(h);
    return e == SQLITE_CORRUPT || e == SQLITE_NOTADB;
}

/* Step 2 (and again inside the write transaction): *version = user_version of a database with
 * the meta marker; *version = 0 for a database with no schema objects at all (fresh file). */
static int check_marker(sqlite3 *h, const char *path, int *version, char *err) {
    int objects = 0;
    if (query_int(h, "SELECT count(*) FROM sqlite_master", &objects) != 0)
        return is_damage(h) ? damaged(h, path, err)
                            : err_set(err, "db_open: %s: %s", path, db_errmsg(h));
    if (objects == 0) {
        *version = 0;
        return 0;
    }
    sqlite3_stmt *st;
    /* meta must be a table before it is read (views are off on every connection: a view
     * would fail to read, and the message should say why) */
    if (sqlite3_prepare_v2(h, "SELECT type FROM sqlite_master WHERE name = 'meta'", -1, &st,
                           NULL) == SQLITE_OK) {
        char type[16] = "table";
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(type, sizeof type, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        if (strcmp(type, "table"))
            return err_set(err,
                           "db_open: %s: 'meta' is a %s, where a decbench database has a table: "
                           "refusing to use it",
                           path, type);
    }
    const char *sql = "SELECT value FROM meta WHERE key = 'application'";
    int ours = 0;
    int broken = 0;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *v = sqlite3_column_text(st, 0);
            ours = v && strcmp((const char *)v, "decbench") == 0;
        }
        broken = is_damage(h);
        sqlite3_finalize(st);
    } else {
        broken = is_damage(h);
    }
    if (broken) return damaged(h, path, err);
    if (!ours)
        return err_set(err,
                       "db_open: %s is an SQLite database without the decbench marker "
                       "(meta.application); refusing to use it",
                       path);
    if (query_int(h, "PRAGMA user_version", version) != 0)
        return err_set(err, "db_open: %s: %s", path, db_errmsg(h));
    if (*version < 1)
        return err_set(err,
                       "db_open: %s has schema version %d, which no decbench writes (1..%d): "
                       "its header was changed by another program",
                       path, *version, db_schema_version());
    /* a newer version is refused by the callers, with its own message */
    if (*version <= db_schema_version() && db_check_schema(h, path, *version, err)) return -1;
    return 0;
}

static int newer_error(const char *path, int version, char *err) {
    return err_set(err,
                   "db_open: %s has schema version %d, newer than version %d that this decbench "
                   "knows; use a newer decbench",
                   path, version, db_schema_version());
}

static int configure(sqlite3 *h, const char *path, char *err) {
    int fk = 0;
    if (db_exec(h, "PRAGMA foreign_keys = ON", "db_open: foreign keys", err) != 0 ||
        query_int(h, "PRAGMA foreign_keys", &fk) != 0 || fk != 1)
        return err_set(err, "db_open: %s: cannot enable foreign keys", path);
    return 0;
}

/* Step 3: brings a writable connection to schema version `target` (0 = empty file). */
static int migrate(sqlite3 *h, const char *path, int target, char *err) {
    if (db_exec(h, "BEGIN IMMEDIATE", "db_open: locking for migration", err) != 0) return -1;
    int version;
    if (check_marker(h, path, &version, err) != 0) goto fail;
    if (version > db_schema_version()) {
        newer_error(path, version, err);
        goto fail;
    }
    if (version < target && db_schema_apply(h, version, target, err) != 0) goto fail;
    if (db_exec(h, "COMMIT", "db_open: committing the schema", err) != 0) goto fail;
    return 0;
fail:
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* WAL lets readers (reports) run while a benchmark writes. Set after the schema exists, so a
 * file is only ever switched once it is known to be ours. The switch needs the file to itself,
 * and SQLite answers "database is locked" at once, without the busy timeout, when another
 * process holds it: 4 runs started together on a new file failed this way about once in 400
 * (tests/cli_db_concurrent.sh, on a loaded 2-core machine). So the switch is retried every 10
 * ms for as long as the busy timeout. */
static int set_wal(sqlite3 *h, const char *path, char *err) {
    const double give_up = clock_now() + DB_BUSY_MS / 1000.0;
    for (;;) {
        sqlite3_stmt *st;
        int ok = 0, busy = 0;
        if (sqlite3_prepare_v2(h, "PRAGMA journal_mode = WAL", -1, &st, NULL) == SQLITE_OK) {
            int rc = sqlite3_step(st);
            if (rc == SQLITE_ROW) {
                const unsigned char *m = sqlite3_column_text(st, 0);
                ok = m && strcmp((const char *)m, "wal") == 0;
            }
            busy = rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
            sqlite3_finalize(st);
        }
        if (ok) return 0;
        if (!busy || clock_now() > give_up)
            return err_set(err, "db_open: %s: cannot switch to WAL mode: %s", path, db_errmsg(h));
        sqlite3_sleep(10);
    }
}

/* A new file can be created only in an existing, writable directory: say which one is wrong
 * rather than SQLite's "unable to open database file". */
static int check_parent(const char *path, char *err) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return err_set(err, "db_open: cannot create %s: directory %s does not exist", path, dir);
    if (access(dir, W_OK) != 0)
        return err_set(err, "db_open: cannot create %s: directory %s is not writable (%s)", path,
                       dir, strerror(errno));
    return 0;
}

static int open_handle(sqlite3 **h, const char *path, int flags, char *err) {
    if (sqlite3_open_v2(path, h, flags, NULL) != SQLITE_OK) {
        /* The OS error says more than SQLite's "unable to open database file". */
        int sys = *h ? sqlite3_system_errno(*h) : 0;
        err_set(err, "db_open: cannot %s %s: %s%s%s%s",
                flags & SQLITE_OPEN_CREATE ? "create" : "open", path, sys ? strerror(sys) : "",
                sys ? " (" : "", *h ? db_errmsg(*h) : "out of memory", sys ? ")" : "");
        sqlite3_close(*h);
        *h = NULL;
        return -1;
    }
    sqlite3_extended_result_codes(*h, 1);
    db_harden(*h, NULL);
    /* Every connection waits for another process's lock, the read-only probe of step 2
     * included: without it, 4 runs creating one database together failed 6 times in 60 with
     * "database is locked" (the probe met the creator's write lock). */
    sqlite3_busy_timeout(*h, DB_BUSY_MS);
    return 0;
}

/* A read-only connection that can read. A WAL database (ours are) needs its -shm index: SQLite
 * creates it (and an empty -wal) beside the file, which a read-only folder or mount refuses
 * ("attempt to write a readonly database", or "unable to open"), and a full disk may too
 * ("disk I/O error"). Then, if no -wal file holds
 * data the database file lacks, the file alone is the whole database and is opened with
 * immutable=1 (no side files, no locks). A non-empty -wal that cannot be indexed is refused:
 * reading the file alone would silently drop its newest transactions. Not for a database
 * another user is writing at the same time: an immutable reader does not see their writes. */
static int open_read(sqlite3 **h, const char *path, char *err) {
    if (open_handle(h, path, SQLITE_OPEN_READONLY, err) != 0) return -1;
    int objects;
    if (query_int(*h, "SELECT count(*) FROM sqlite_master", &objects) == 0) return 0;
    int code = sqlite3_errcode(*h) & 0xff; /* READONLY_CANTINIT, IOERR_SHMOPEN/SHMSIZE, FULL */
    if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN && code != SQLITE_IOERR &&
        code != SQLITE_FULL) {
        if (is_damage(*h)) /* the header says it is ours: damaged, not foreign */
            damaged(*h, path, err);
        else
            err_set(err, "db_open: %s: %s", path, db_errmsg(*h));
        sqlite3_close(*h);
        *h = NULL;
        return -1;
    }
    sqlite3_close(*h);
    *h = NULL;
    char wal[4200];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", path);
    if (stat(wal, &st) == 0 && st.st_size > 0)
        return err_set(err,
                       "db_open: %s: its write-ahead log %s holds transactions not yet in the "
                       "file, and SQLite cannot create the index it needs to read it (a "
                       "read-only folder?): open it once where its folder is writable",
                       path, wal);
    /* file:PATH?immutable=1 with the URI's special characters of PATH escaped; an absolute
     * PATH after an empty authority ("file://" + "/x"), so that "//x" is not a host name */
    char uri[3 * 4096 + 32], *u = uri + sprintf(uri, path[0] == '/' ? "file://" : "file:");
    for (const char *p = path; *p && u < uri + sizeof uri - 16; p++)
        u += strchr("%?#", *p) ? sprintf(u, "%%%02X", (unsigned char)*p) : (*u = *p, 1);
    snprintf(u, (size_t)(uri + sizeof uri - u), "?immutable=1");
    if (open_handle(h, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err) != 0) return -1;
    if (query_int(*h, "SELECT count(*) FROM sqlite_master", &objects) != 0) {
        err_set(err, "db_open: %s: %s", path, db_errmsg(*h));
        sqlite3_close(*h);
        *h = NULL;
        return -1;
    }
    return 0;
}

/* DB_READ_ANY of an older database: *h (read-only, on the file) is replaced by a copy of the
 * file in memory, migrated to `target` there. The file is only read (SQLite's backup API), so
 * a baseline kept as a CI artifact, or a file on read-only storage, reads like a current one. */
static int migrate_in_memory(sqlite3 **h, const char *path, int target, char *err) {
    sqlite3 *m = NULL;
    if (open_handle(&m, ":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err) != 0)
        return -1;
    sqlite3_backup *b = sqlite3_backup_init(m, "main", *h, "main");
    int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
    if (b) sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        err_set(err, "db_open: %s: cannot copy it into memory to read it migrated: %s", path,
                db_errmsg(m));
        sqlite3_close(m);
        return -1;
    }
    if (configure(m, path, err) != 0 || migrate(m, path, target, err) != 0) {
        sqlite3_close(m);
        return -1;
    }
    sqlite3_close(*h);
    *h = m;
    return 0;
}

/* Opens an existing decbench file or creates one, at schema version `target`. */
static int open_impl(db **out, const char *path, db_mode mode, int target, int must_be_new,
                     char *err) {
    *out = NULL;
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT) return err_set(err, "db_open: %s: %s", path, strerror(errno));
    /* A directory, FIFO (fopen would block) or device (`--db /dev/null`: SQLite would create
     * /dev/null-journal) is refused before SQLite is involved. */
    char e[ERR_LEN];
    if (exists && !S_ISREG(st.st_mode) && file_check_output(path, "database", e))
        return err_set(err, "db_open: %s", e);
    if (!exists && mode != DB_WRITE) return err_set(err, "db_open: %s: no such file", path);
    if (exists && must_be_new && st.st_size > 0)
        return err_set(err, "db_open: %s already exists", path);
    if (!exists && check_parent(path, err) != 0) return -1;

    sqlite3 *h = NULL;
    char side[2][4200];
    int had_side = 0;
    for (int k = 0; k < 2; k++) {
        snprintf(side[k], sizeof side[k], "%s-%s", path, k ? "shm" : "wal");
        had_side |= access(side[k], F_OK) == 0;
    }
    if (exists) {
        int kind = HDR_EMPTY, version = 0;
        if (check_header(path, &kind, err) != 0) return -1;
        if (kind == HDR_OURS) {
            if (open_read(&h, path, err) != 0) return -1;
            int rc = check_marker(h, path, &version, err);
            if (rc == 0 && version > db_schema_version()) rc = newer_error(path, version, err);
            if (rc == 0 && mode == DB_READ && version < target)
                rc = err_set(err,
                             "db_open: %s has schema version %d, older than version %d; open it "
                             "once for writing (any decbench command that writes) to migrate it",
                             path, version, target);
            if (rc == 0 && mode == DB_READ_ANY && version < target)
                rc = migrate_in_memory(&h, path, target, err);
            if (rc != 0 || mode == DB_WRITE) {
                sqlite3_close(h);
                h = NULL;
            }
            if (rc != 0) return -1;
        } else if (mode != DB_WRITE) {
            return err_set(err, "db_open: %s is empty (0 bytes), not a decbench database", path);
        }
    }
    if (mode == DB_WRITE) {
        int flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
        if (open_handle(&h, path, flags, err) != 0) return -1;
        if (sqlite3_db_readonly(h, "main") == 1) {
            sqlite3_close(h);
            return err_set(err, "db_open: %s is read-only; cannot write results to it", path);
        }
        if (configure(h, path, err) != 0 || migrate(h, path, target, err) != 0 ||
            set_wal(h, path, err) != 0) {
            sqlite3_close(h);
            return -1;
        }
    } else if (configure(h, path, err) != 0) {
        sqlite3_close(h);
        return -1;
    }

    db *d = calloc(1, sizeof *d);
    if (d) d->path = strdup(path);
    if (!d || !d->path) {
        if (d) free(d);
        sqlite3_close(h);
        return err_set(err, "db_open: out of memory");
    }
    d->h = h;
    d->writable = mode == DB_WRITE;
    d->tidy_side_files =
        mode != DB_WRITE && !had_side && (access(side[0], F_OK) == 0 || access(side[1], F_OK) == 0);
    db_harden(h, &d->watch);
    /* For db_claim_run (an OFD write lock needs a descriptor open for writing). A failure only
     * means no run locks: the runs still work, as on a file system without them. */
    d->lock_fd = mode == DB_WRITE ? open(path, O_RDWR | O_CLOEXEC) : -1;
    /* what is read is checked first: reports, plots, compare and merge's inputs loop over
     * these values (a writer checks the samples it compares itself) */
    if (mode != DB_WRITE && db_check_values(h, path, err)) {
        db_close(d);
        return -1;
    }
    *out = d;
    return 0;
}

/* Byte 2^62 + run_id: SQLite's lock bytes are at 2^30 (rollback journal) or in the -shm file
 * (WAL), so the ranges never meet. */
#define DB_RUN_LOCK_BASE ((off_t)1 << 62)

int db_claim_run(db *d, int64_t run_id, char *err) {
#ifdef F_OFD_SETLK
    if (d->lock_fd < 0 || run_id <= 0) return 0;
    struct flock l = {
        .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = DB_RUN_LOCK_BASE + run_id, .l_len = 1};
    if (fcntl(d->lock_fd, F_OFD_SETLK, &l) == 0) return 0;
    if (errno == EAGAIN || errno == EACCES)
        return err_set(err,
                       "run %" PRId64 " of %s is being measured by another process (it holds the "
                       "run's lock); resume it once that process has ended",
                       run_id, d->path);
    return 0; /* EINVAL, ENOLCK, EOPNOTSUPP: no such locks here; run without */
#else
    (void)d, (void)run_id, (void)err;
    return 0;
#endif
}

int db_open(db **out, const char *path, db_mode mode, char *err) {
    return open_impl(out, path, mode, db_schema_version(), 0, err);
}

int db_create_version(const char *path, int version, char *err) {
    if (version < 1 || version > db_schema_version())
        return err_set(err, "db_create_version: version %d outside 1..%d", version,
                       db_schema_version());
    db *d;
    if (open_impl(&d, path, DB_WRITE, version, 1, err) != 0) return -1;
    db_close(d);
    return 0;
}

/* Removes the -wal and -shm files a read-only connection left beside path, the way SQLite
 * removes them: a read-write connection that reads and closes checkpoints (the log holds nothing
 * a reader wrote, so the file does not change) and deletes both when it is the last connection;
 * when a writer has the file open, it is not, and nothing is removed. A file that cannot be
 * opened for writing (read-only storage) is left as it is. */
static void tidy_side_files(const char *path) {
    sqlite3 *h = NULL;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_db_readonly(h, "main") == 0) {
        db_harden(h, NULL);
        sqlite3_exec(h, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
    }
    sqlite3_close(h);
}

void db_close(db *d) {
    if (!d) return;
    sqlite3_finalize(d->ins_sample);
    sqlite3_finalize(d->ins_hist);
    sqlite3_finalize(d->ins_trace);
    sqlite3_finalize(d->ins_counter);
    sqlite3_finalize(d->ins_counter_def);
    sqlite3_close(d->h);
    if (d->tidy_side_files) tidy_side_files(d->path);
    if (d->lock_fd >= 0) close(d->lock_fd); /* after SQLite's: see db_internal.h */
    free(d->path);
    free(d);
}

sqlite3 *db_sqlite(db *d) {
    return d->h;
}
const char *db_path(const db *d) {
    return d->path;
}

const char *db_status_name(db_status s) {
    switch (s) {
    case DB_RUNNING:
        return "running";
    case DB_COMPLETE:
        return "complete";
    case DB_INCOMPLETE:
        return "incomplete";
    case DB_FAILED:
        return "failed";
    }
    return "?";
}
