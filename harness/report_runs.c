/* report_runs.c: see report_runs.h. */
#include "harness/report_runs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "results/report/report.h"
#include "util/err.h"

static int add(run_list *r, int64_t id, char *err) {
    for (int i = 0; i < r->n; i++)
        if (r->ids[i] == id) return 0;
    int64_t *g = realloc(r->ids, sizeof *g * (size_t)(r->n + 1));
    if (!g) return err_set(err, "out of memory");
    r->ids = g;
    r->ids[r->n++] = id;
    return 0;
}

static int parse_id(const char *s, const char *what, int64_t *out, char *err) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v <= 0) return err_set(err, "%s: '%s' is not a run id", what, s);
    *out = v;
    return 0;
}

static int add_sweep(run_list *r, db *d, int64_t sweep, char *err) {
    db_sweep_run *runs;
    int n, rc = 0;
    char inner[ERR_LEN];
    if (db_sweep_runs(d, sweep, &runs, &n, inner)) return err_set(err, "--sweep: %s", inner);
    for (int i = 0; i < n && rc == 0; i++) rc = add(r, runs[i].id, err);
    free(runs);
    if (rc == 0 && !n)
        return err_set(err, "--sweep %" PRId64 ": no such sweep (or it has no runs) in %s", sweep,
                       db_path(d));
    return rc;
}

int run_list_open(const args_opt *o, int n_opts, run_list *runs, db **d, char *err) {
    memset(runs, 0, sizeof *runs);
    *d = NULL;
    char path[4096];
    int64_t id, sweep = 0;
    /* The ids first: a typo is a usage error (-2), reported before any file is opened. */
    const args_opt *ro = args_get(o, n_opts, "--run");
    for (int i = 0; ro && i < ro->count; i++) {
        char copy[1024], *save = NULL;
        snprintf(copy, sizeof copy, "%s", ro->values[i]);
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (parse_id(t, "--run", &id, err) || add(runs, id, err)) goto usage;
    }
    const char *sw = args_str(o, n_opts, "--sweep", NULL);
    if (sw && parse_id(sw, "--sweep", &sweep, err)) goto usage;
    if (db_split_source(args_str(o, n_opts, "--db", "results/decbench.db"), path, sizeof path,
                            &id, err) ||
        db_open(d, path, DB_READ_ANY, err) || (id && add(runs, id, err)) ||
        (sweep && add_sweep(runs, *d, sweep, err)))
        goto fail;
    return 0;
usage:
    run_list_free(runs);
    return -2;
fail:
    run_list_free(runs);
    db_close(*d);
    *d = NULL;
    return -1;
}

const char *const *decoder_default_specs(int *n) {
    enum { MAX = 64 };
    static char specs[MAX][512];
    static const char *ptrs[MAX];
    int k = 0;
    for (int i = 0; i < dec_registry_size() && k < MAX; i++)
        if (dec_registry_default_spec(i, specs[k], sizeof specs[k]) == 0) {
            ptrs[k] = specs[k];
            k++;
        }
    *n = k;
    return ptrs;
}

void run_list_free(run_list *runs) {
    free(runs->ids);
    memset(runs, 0, sizeof *runs);
}
