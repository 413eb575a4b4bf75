/* db_files.c: the SHA-256 fingerprints of model files, cached per file in the database.
 *
 * Hashing a 13 GB model takes ~20 s (util/sha256.h), once per run otherwise. The table
 * file_sha256 keeps the digest with the file's identity (size, modification time in ns,
 * inode, device); a file whose identity is unchanged is not read again. A file rewritten in
 * place gets a new mtime, a file replaced by another a new inode: both are hashed again. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "results/db/db_internal.h"
#include "util/err.h"
#include "util/sha256.h"

int db_file_sha256(db *d, const char *path, char hex[65], char *err) {
    char abs[PATH_MAX];
    struct stat st;
    if (!realpath(path, abs) || stat(abs, &st) != 0)
        return err_set(err, "%s: %s", path, strerror(errno));
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    sqlite3_stmt *q = NULL;
    int found = 0;
    if (sqlite3_prepare_v2(d->h,
                           "SELECT sha256 FROM file_sha256 WHERE path = ?1 AND size = ?2 AND "
                           "mtime_ns = ?3 AND inode = ?4 AND device = ?5",
                           -1, &q, NULL) == SQLITE_OK) {
        sqlite3_bind_text(q, 1, abs, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, (int64_t)st.st_size);
        sqlite3_bind_int64(q, 3, mtime);
        sqlite3_bind_int64(q, 4, (int64_t)st.st_ino);
        sqlite3_bind_int64(q, 5, (int64_t)st.st_dev);
        if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_bytes(q, 0) == 64) {
            memcpy(hex, sqlite3_column_text(q, 0), 65);
            found = 1;
        }
    }
    sqlite3_finalize(q);
    if (found) return 0;
    if (sha256_file(abs, hex, err)) return -1;
    if (!d->writable) return 0; /* a read-only handle only computes */
    if (sqlite3_prepare_v2(d->h,
                           "INSERT OR REPLACE INTO file_sha256 (path, size, mtime_ns, inode, "
                           "device, sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                           -1, &q, NULL) != SQLITE_OK)
        return err_set(err, "db_file_sha256: %s", db_errmsg(d->h));
    sqlite3_bind_text(q, 1, abs, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, (int64_t)st.st_size);
    sqlite3_bind_int64(q, 3, mtime);
    sqlite3_bind_int64(q, 4, (int64_t)st.st_ino);
    sqlite3_bind_int64(q, 5, (int64_t)st.st_dev);
    sqlite3_bind_text(q, 6, hex, 64, SQLITE_STATIC);
    int rc = sqlite3_step(q) == SQLITE_DONE ? 0 : -1;
    if (rc) err_set(err, "db_file_sha256: %s", db_errmsg(d->h));
    sqlite3_finalize(q);
    return rc;
}
