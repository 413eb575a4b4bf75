/* compare.h: the CI regression gate (`decbench compare BASE HEAD`).
 *
 * Two runs are matched sample by sample on (dataset, sample index, decoder spec, repeat).
 *   Deterministic figures must be EQUAL: every framework counter the list of stats/stats.h
 *   marks STAT_DET (tokens, target/draft steps and rows, drafted, accepted, verification
 *   steps), the output hash, the greedy match flag, the accept histogram, and the decoder's
 *   own STAT_DET counters (counter_defs.deterministic; one only head has is new and passes).
 *   With exact kernels these do not depend on timing or thread count, so any difference is a
 *   behaviour change (or a different model/prompt set, which the header warns about).
 *   A sample present in base but missing in head also fails (coverage lost).
 *
 *   Speed is judged as what users gate on: each decoder's speed-up over greedy measured in the
 *   same run, so that the machine's drift (load, clocks) cancels, as greedy ran each prompt
 *   right before the decoder did (runner.h). The table shows, per repeat r over the prompts
 *   both sides ran, speed-up_r = greedy's total t_decode in r / the decoder's (mean ± sd over
 *   repeats). A decoder is a REGRESSION only when both
 *     - its mean speed-up drops by more than the tolerance (head < base x (1 - tolerance)), a
 *       drop worth a failed build, and
 *     - the test says the drop is more than noise: p < alpha, p one-sided from a Welch t-test
 *       of head's repeats against base's, each repeat summarised by the median over the prompts
 *       of log(greedy's t_decode / the decoder's) (compare_speed_p), p Holm-adjusted over the
 *       decoders judged, so that a run of an unchanged build fails with probability at most
 *       alpha however many decoders it has.
 *   Why the median over prompts, not the repeat's ratio of sums the table shows: on a busy
 *   2-core machine one disturbed greedy sample (a few ms on a 2 ms sample) moved a whole
 *   repeat's speed-up of every decoder by half, and the test then called even a 3x slow-down
 *   noise (1 CI gate run in 6); the median of 3 or more prompts ignores one such sample. Why
 *   repeats and not every sample as a value of its own: a disturbance can last a repeat (a
 *   neighbour taking memory bandwidth slows wide passes more than greedy's), and the repeats
 *   are what measure it. The logarithm makes a slow-down by a factor the same shift on every
 *   prompt, whatever its speed-up.
 *   A drop beyond the tolerance with p >= alpha is "within noise". Fewer than
 *   COMPARE_MIN_REPEATS complete repeats on a side: "not enough repeats to judge speed", never
 *   a guess. Absolute decode tok/s is reported for both sides but judged (by the same rule, on
 *   log tok/s) only with gate_tps: it moves with the machine.
 *
 * The diff is written to `out` as markdown tables (readable as text). Tables label decoders as
 * reports do (rep_label_among: the name plus the parameters that vary between the specs of that
 * decoder), and the full specs are listed under the speed table. Errors: "compare_". */
#ifndef RESULTS_COMPARE_H
#define RESULTS_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "results/db/db.h"

/* A drop of the mean speed-up that matters: 10%. Below it a change is not worth failing a
 * build even when it is real; above it, the test decides whether it is more than noise. */
#define COMPARE_DEFAULT_TOLERANCE 0.10
/* The false-alarm rate the gate accepts for a whole comparison (after Holm's adjustment). */
#define COMPARE_DEFAULT_ALPHA 0.05
/* Per side: the t-test needs a variance, so at least two repeats with every common prompt. */
#define COMPARE_MIN_REPEATS 2

/* Exit codes the CLI is meant to use. */
enum { COMPARE_EXIT_PASS = 0, COMPARE_EXIT_REGRESSION = 1, COMPARE_EXIT_ERROR = 2 };

typedef struct {
    double tolerance; /* fraction, 0 <= tolerance < 1; e.g. 0.10 */
    int max_listed;   /* differing samples listed in full (0: 20) */
    double alpha;     /* 0 < alpha < 1 (0: COMPARE_DEFAULT_ALPHA) */
    int gate_tps;     /* 1: absolute decode tok/s is judged too (by the same rule) */
} compare_opts;

typedef struct {
    long n_common;     /* samples in both runs */
    long n_only_base;  /* missing in head: a regression */
    long n_only_head;  /* new in head: reported only */
    long n_det_diff;   /* common samples with a differing deterministic figure */
    int n_speed_fail;  /* decoder specs judged slower (drop beyond the tolerance, p < alpha) */
    int n_specs;       /* decoder specs in the speed table (greedy included) */
    int n_judged;      /* specs whose speed was judged (enough repeats, greedy in the run) */
    int n_noise;       /* specs slower beyond the tolerance but within the noise */
    int n_unjudged;    /* specs left unjudged: too few repeats, or no greedy to compare with */
    int models_differ; /* model hashes differ (the comparison then says little) */
    /* Thread counts, CPUs, kernels or KV cache types differ (speed then says little): how many, and
     * the one-line description ("different thread counts (2 vs 4); different CPUs (...)"). */
    int machine_differs;
    char warning[512];
    int regression; /* any of the failures above */
} compare_result;

/* Compares run base_run of base with head_run of head (0: each one's latest complete run with
 * samples). The two handles may be the same database. Returns 0 when the comparison ran (see
 * res->regression), -1 with a message otherwise (a run missing, no common sample). o NULL:
 * the defaults. */
int compare_runs(db *base, int64_t base_run, db *head, int64_t head_run, const compare_opts *o,
                 FILE *out, compare_result *res, char *err);

/* The same from "FILE" or "FILE:RUN_ID" arguments; the files are opened read-only (DB_READ_ANY:
 * a database of an older schema version is read migrated, the file untouched). */
int compare_sources(const char *base_arg, const char *head_arg, const compare_opts *o, FILE *out,
                    compare_result *res, char *err);

/* The test of the speed rule: the one-sided p-value that head's values are lower than base's.
 * base holds n_prompts rows of nb values (prompt-major: a prompt's repeats together), head
 * n_prompts rows of nh. Each repeat is summarised by its median over the prompts (the same
 * prompts on both sides), then the two sides' repeats are compared by Welch's t-test
 * (compare_welch_p). NAN when a side has fewer than 2 repeats. */
double compare_speed_p(const double *base, int nb, const double *head, int nh, int n_prompts);
/* Welch's two-sample t-test, one-sided: p that the mean of head[0..nh) is below the mean of
 * base[0..nb) (sample variances, Welch-Satterthwaite degrees of freedom). NAN when a side has
 * fewer than 2 values; with no spread on either side, 0 when head's mean is lower and 1
 * otherwise. */
double compare_welch_p(const double *base, int nb, const double *head, int nh);

/* Holm's step-down adjustment of p[0..n) in place (each p times the number of hypotheses not
 * yet rejected, kept monotone, at most 1); NAN entries are left out of the count. */
void compare_holm(double *p, int n);

#endif
