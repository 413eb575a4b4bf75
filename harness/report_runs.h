/* report_runs.h: the run selection `report` and `plot` share: --db FILE[:RUN], --run ID[,ID]
 * (repeatable) and --sweep ID (every run of the sweep, in id order). */
#ifndef HARNESS_REPORT_RUNS_H
#define HARNESS_REPORT_RUNS_H

#include <stdint.h>

#include "harness/args.h"
#include "results/db/db.h"

typedef struct {
    int64_t *ids; /* malloc'd; NULL when no run was named (the library then picks its default) */
    int n;
} run_list;

/* Opens the database of --db (default results/decbench.db) read-only and collects the runs
 * named by --db FILE:RUN, --run and --sweep. Returns 0, -2 for a malformed id (a usage
 * error), -1 otherwise (message in err). */
int run_list_open(const args_opt *o, int n_opts, run_list *runs, db **d, char *err);
void run_list_free(run_list *runs);

/* Every decoder's canonical spec at its defaults (dec_registry_default_spec), for
 * report_opts.default_specs: reports label a decoder by the parameters that differ. The
 * array is static (the process runs one command); *n gets its length. */
const char *const *decoder_default_specs(int *n);

#endif
