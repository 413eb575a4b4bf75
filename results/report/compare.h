/* compare.h: the CI regression gate (`decbench compare BASE HEAD`).
 *
 * Two runs are matched sample by sample on (dataset, sample index, decoder spec, repeat).
 *   Deterministic figures must be EQUAL: every framework counter the list of stats/stats.h
 *   marks STAT_DET (tokens, target/draft steps and rows, drafted, accepted, verification
 *   steps), the output hash, the greedy match flag, the accept histogram, and the decoder's
 *   own STAT_DET counters (counter_defs.deterministic; one only head has is new and passes).
 *   With exact kernels these do not depend on timing or thread count, so any difference is a
 *   behaviour change (or a different model/prompt set, which the header warns about).
 *   Speed may vary within a tolerance: per decoder spec, decode-only tok/s as a ratio of
 *   totals over the common samples; the gate fails when head < base x (1 - tolerance).
 *   A sample present in base but missing in head also fails (coverage lost).
 *
 * The diff is written to `out` as markdown tables (readable as text). Errors: "compare_". */
#ifndef RESULTS_COMPARE_H
#define RESULTS_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "results/db/db.h"

/* Provisional: 15% slower fails. To be replaced by a figure justified from the measured
 * run-to-run spread of tok/s on the CI machines (see results/README.md). */
#define COMPARE_DEFAULT_TOLERANCE 0.15

/* Exit codes the CLI is meant to use. */
enum { COMPARE_EXIT_PASS = 0, COMPARE_EXIT_REGRESSION = 1, COMPARE_EXIT_ERROR = 2 };

typedef struct {
    double tolerance; /* fraction, 0 <= tolerance < 1; e.g. 0.15 */
    int max_listed;   /* differing samples listed in full (0: 20) */
} compare_opts;

typedef struct {
    long n_common;     /* samples in both runs */
    long n_only_base;  /* missing in head: a regression */
    long n_only_head;  /* new in head: reported only */
    long n_det_diff;   /* common samples with a differing deterministic figure */
    int n_speed_fail;  /* decoder specs slower than the tolerance allows */
    int n_specs;       /* decoder specs compared for speed */
    int models_differ; /* model hashes differ (the comparison then says little) */
    /* Thread counts or CPUs differ (speed then says little): how many, and the one-line
     * description ("different thread counts (2 vs 4); different CPUs (...)"). */
    int machine_differs;
    char warning[512];
    int regression; /* any of the failures above */
} compare_result;

/* Compares run base_run of base with head_run of head (0: each one's latest complete run with
 * samples). The two handles may be the same database. Returns 0 when the comparison ran (see
 * res->regression), -1 with a message otherwise (a run missing, no common sample). */
int compare_runs(db *base, int64_t base_run, db *head, int64_t head_run, const compare_opts *o,
                 FILE *out, compare_result *res, char *err);

/* The same from "FILE" or "FILE:RUN_ID" arguments; the files are opened read-only (DB_READ_ANY:
 * a database of an older schema version is read migrated, the file untouched). */
int compare_sources(const char *base_arg, const char *head_arg, const compare_opts *o, FILE *out,
                    compare_result *res, char *err);

#endif
