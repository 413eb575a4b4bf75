/* db_read.c: reading runs, their decoder specs and sweeps back, for --resume and run selection
 * (db.h). The harness asks these named questions instead of writing SQL itself. */
#include "results/db/db_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/err.h"

static char *text_dup(sqlite3_stmt *st, int i) {
    const unsigned char *t = sqlite3_column_text(st, i);
    return strdup(t ? (const char *)t : "");
}

static db_status status_of(const char *s) {
    for (int k = DB_RUNNING; k <= DB_FAILED; k++)
        if (s && !strcmp(s, db_status_name((db_status)k))) return (db_status)k;
    return DB_RUNNING;
}

static int prepare(db *d, sqlite3_stmt **st, const char *sql, const char *fn, char *err) {
    if (sqlite3_prepare_v2(d->h, sql, -1, st, NULL) != SQLITE_OK)
        return err_set(err, "%s: %s: %s", fn, d->path, db_errmsg(d->h));
    return 0;
}

int db_get_run(db *d, int64_t run_id, db_run_info *out, char *err) {
    memset(out, 0, sizeof *out);
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "SELECT model_hash, draft_hash, datasets, template, kernels, max_new, repeats, "
                "seed, status, COALESCE(shard, ''), sampling, temperature, top_k, top_p, "
                "sampling_seed, kv_type, batch, continuous FROM runs WHERE id = ?",
                "db_get_run", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->model_hash = text_dup(st, 0);
        out->draft_hash = text_dup(st, 1);
        out->datasets = text_dup(st, 2);
        out->prompt_template = text_dup(st, 3);
        out->kernels = text_dup(st, 4);
        out->max_new = sqlite3_column_int64(st, 5);
        out->repeats = sqlite3_column_int64(st, 6);
        out->seed = (uint64_t)sqlite3_column_int64(st, 7);
        out->status = status_of((const char *)sqlite3_column_text(st, 8));
        out->shard = text_dup(st, 9);
        out->sampling = text_dup(st, 10);
        out->temperature = sqlite3_column_double(st, 11);
        out->top_k = sqlite3_column_int64(st, 12);
        out->top_p = sqlite3_column_double(st, 13);
        out->sampling_seed = (uint64_t)sqlite3_column_int64(st, 14);
        out->kv_type = text_dup(st, 15);
        out->batch = sqlite3_column_int64(st, 16);
        out->continuous = sqlite3_column_int64(st, 17);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) {
        db_run_info_free(out);
        return rc == SQLITE_DONE
                   ? err_set(err, "db_get_run: no run %" PRId64 " in %s", run_id, d->path)
                   : err_set(err, "db_get_run: %s: %s", d->path, db_errmsg(d->h));
    }
    if (!out->model_hash || !out->draft_hash || !out->datasets || !out->prompt_template ||
        !out->kernels || !out->shard || !out->sampling || !out->kv_type) {
        db_run_info_free(out);
        return err_set(err, "db_get_run: out of memory");
    }
    return 0;
}

void db_run_info_free(db_run_info *r) {
    free(r->model_hash);
    free(r->draft_hash);
    free(r->datasets);
    free(r->prompt_template);
    free(r->kernels);
    free(r->shard);
    free(r->sampling);
    free(r->kv_type);
    memset(r, 0, sizeof *r);
}

void db_strings_free(char **s, int n) {
    for (int i = 0; s && i < n; i++) free(s[i]);
    free(s);
}

int db_counter_sums(db *d, int64_t run_id, const char *spec, const char *const *names, int n,
                    double *sums, long *samples, char *err) {
    sqlite3_stmt *st;
    *samples = 0;
    for (int i = 0; i < n; i++) sums[i] = 0;
    if (prepare(d, &st, "SELECT COUNT(*) FROM samples WHERE run_id = ? AND spec = ?",
                "db_counter_sums", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, spec, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *samples = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return err_set(err, "db_counter_sums: %s: %s", d->path, db_errmsg(d->h));
    for (int i = 0; i < n; i++) {
        char sql[256];
        const char *col = strncmp(names[i], "samples.", 8) ? NULL : names[i] + 8;
        if (col && (!*col || strspn(col, "abcdefghijklmnopqrstuvwxyz_") != strlen(col) ||
                    strlen(col) > 64))
            return err_set(err, "db_counter_sums: \"%s\" is not a samples column", names[i]);
        if (col)
            snprintf(sql, sizeof sql,
                     "SELECT TOTAL(%s) FROM samples WHERE run_id = ? AND spec = ?", col);
        else
            snprintf(sql, sizeof sql,
                     "SELECT TOTAL(c.value) FROM counters c JOIN samples s ON s.id = c.sample_id "
                     "WHERE s.run_id = ? AND s.spec = ? AND c.name = ?");
        if (prepare(d, &st, sql, "db_counter_sums", err) != 0) return -1;
        sqlite3_bind_int64(st, 1, run_id);
        sqlite3_bind_text(st, 2, spec, -1, SQLITE_STATIC);
        if (!col) sqlite3_bind_text(st, 3, names[i], -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) sums[i] = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW)
            return err_set(err, "db_counter_sums: %s: %s", d->path, db_errmsg(d->h));
    }
    return 0;
}

int db_run_specs(db *d, int64_t run_id, char ***specs, int *n, char *err) {
    *specs = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prepare(d, &st, "SELECT spec FROM samples WHERE run_id = ? GROUP BY spec ORDER BY MIN(id)",
                "db_run_specs", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char **grown = realloc(*specs, sizeof **specs * (size_t)(*n + 1));
        char *spec = text_dup(st, 0);
        if (!grown || !spec) {
            free(spec);
            if (grown) *specs = grown;
            rc = SQLITE_NOMEM;
            break;
        }
        *specs = grown;
        (*specs)[(*n)++] = spec;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        db_strings_free(*specs, *n);
        *specs = NULL;
        *n = 0;
        return err_set(err, "db_run_specs: %s: %s", d->path,
                       rc == SQLITE_NOMEM ? "out of memory" : db_errmsg(d->h));
    }
    return 0;
}

int db_get_sweep(db *d, int64_t sweep_id, char **spec, char *err) {
    *spec = NULL;
    sqlite3_stmt *st;
    if (prepare(d, &st, "SELECT spec FROM sweeps WHERE id = ?", "db_get_sweep", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, sweep_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *spec = text_dup(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return rc == SQLITE_DONE
                   ? err_set(err, "db_get_sweep: no sweep %" PRId64 " in %s", sweep_id, d->path)
                   : err_set(err, "db_get_sweep: %s: %s", d->path, db_errmsg(d->h));
    return *spec ? 0 : err_set(err, "db_get_sweep: out of memory");
}

int db_sweep_runs(db *d, int64_t sweep_id, db_sweep_run **runs, int *n, char *err) {
    *runs = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (prepare(d, &st,
                "SELECT id, status, baseline_run_id IS NULL FROM runs WHERE sweep_id = ? "
                "ORDER BY id",
                "db_sweep_runs", err) != 0)
        return -1;
    sqlite3_bind_int64(st, 1, sweep_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_sweep_run *grown = realloc(*runs, sizeof **runs * (size_t)(*n + 1));
        if (!grown) {
            rc = SQLITE_NOMEM;
            break;
        }
        *runs = grown;
        (*runs)[*n] = (db_sweep_run){sqlite3_column_int64(st, 0),
                                     status_of((const char *)sqlite3_column_text(st, 1)),
                                     sqlite3_column_int(st, 2)};
        (*n)++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(*runs);
        *runs = NULL;
        *n = 0;
        return err_set(err, "db_sweep_runs: %s: %s", d->path,
                       rc == SQLITE_NOMEM ? "out of memory" : db_errmsg(d->h));
    }
    return 0;
}

int db_find_run(db *d, const char *command, unsigned mask, int64_t *run_id, db_status *status,
                char *err) {
    sqlite3_stmt *st;
    if (prepare(d, &st, "SELECT id, status FROM runs WHERE command = ? ORDER BY id DESC",
                "db_find_run", err) != 0)
        return -1;
    sqlite3_bind_text(st, 1, command, -1, SQLITE_STATIC);
    int rc, found = 0;
    while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_status s = status_of((const char *)sqlite3_column_text(st, 1));
        if (!(mask & DB_STATUS_MASK(s))) continue;
        *run_id = sqlite3_column_int64(st, 0);
        *status = s;
        found = 1;
    }
    if (!found && rc != SQLITE_DONE) {
        err_set(err, "db_find_run: %s: %s", d->path, db_errmsg(d->h));
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return found;
}

int db_split_source(const char *arg, char *path, size_t n, int64_t *run_id, char *err) {
    *run_id = 0;
    struct stat st;
    const char *colon = strrchr(arg, ':');
    int digits = colon && colon != arg && colon[1];
    for (const char *p = colon ? colon + 1 : ""; digits && *p; p++)
        digits = isdigit((unsigned char)*p);
    /* A file really named "x:12" wins over the FILE:RUN reading. */
    if (!digits || stat(arg, &st) == 0) {
        if (strlen(arg) >= n) return err_set(err, "path too long: %s", arg);
        snprintf(path, n, "%s", arg);
        return 0;
    }
    if ((size_t)(colon - arg) >= n) return err_set(err, "path too long: %s", arg);
    snprintf(path, n, "%.*s", (int)(colon - arg), arg);
    *run_id = strtoll(colon + 1, NULL, 10);
    if (*run_id <= 0) return err_set(err, "bad run id in %s", arg);
    return 0;
}
