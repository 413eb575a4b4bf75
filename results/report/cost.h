/* cost.h: a forward-cost curve t(rows, context, logit rows): the latency of one forward pass
 * of a model on a machine, as `decbench cost` measures it, interpolated between its points.
 *
 * Model (why this shape): a pass is the body (every layer's matrix products over `rows` rows,
 * plus attention over the `context` committed tokens, linear in it) followed by the classifier
 * over the rows whose logits are wanted, a matrix product whose cost depends only on their
 * number. So
 *
 *   t(r, c, L) = B(r, c) + K(L),   B(r, c) = t(r, c, 1),   K(L) = t(r, c0, L) - t(r, c0, 1)
 *
 * B is linear in r between measured rows at each measured context and linear in c between (and
 * beyond) the measured contexts; K is linear in L between measured logit rows (K(1) = 0), read
 * from the points that computed every row's logits. Outside the measured rows the end segment
 * is extended (callers flag it). Measured on the synthetic 110M q8_0 model
 * (docs/measurements/2026-11-24-projection.md): the classifier is a fifth of the weights, and
 * lookahead's passes read only some rows' logits, which a curve with every row's logits priced
 * 20-28% too high.
 *
 * Sources (cost_curve_load):
 *  - CSV, version 2 (`decbench cost --csv`): '#' comment lines, the header
 *    "rows,seconds,context,logit_rows", then one point per line. seconds stays the second
 *    column so that a decbench reading only "rows,seconds" refuses the file (its rows repeat)
 *    instead of misreading it.
 *    A grid measured with every row's logits only (`cost --logits all`) reads as B(r, c) with
 *    K = 0 (the logit rows are not modelled); one with the last row's only (`--logits last`)
 *    as B(r, c) with K = 0 too, which underprices passes that read more rows' logits.
 *  - CSV, version 1 (older `decbench cost`, or by hand): "rows,seconds" per line (header
 *    optional): a one-dimensional curve measured at one context with every row's logits, so
 *    t(r, c, L) = t(r) whatever c and L (as older decbench priced passes).
 *  - CSV, version 3 (`decbench cost --batch B --csv`, B > 1): the header
 *    "batch,rows,seconds,context,logit_rows", then one point per line, the same B on every line.
 *    A point is one pass in which each of B sequences feeds `rows` rows after `context` positions
 *    of its own cache, `logit_rows` rows' logits each; seconds are the whole pass's. The batch
 *    comes first so that an older decbench refuses the file: it reads the first two numbers as
 *    "rows,seconds", and the batch, its rows, repeats on every line (cost refuses to write a
 *    one-point batched CSV, the one file an older reader would take).
 *  - a decbench database FILE or FILE:RUN_ID: the cost points of that run (default: the latest
 *    complete run with cost points); points stored before schema version 5 have no context and
 *    read as a version 1 curve. The run's batch size (runs.batch, `cost --batch B --db`) is the
 *    curve's.
 * A curve mixes no kinds: every point has a context, or none has.
 *
 * Batched curves (why they price a batch-1 trace): t_B(r, c, L) is the time of one pass of B
 * sequences in lockstep, each at the trace's rows, context and logit rows. Priced on it, a
 * decoder's batch-1 pass trace gives the time per step of B copies of that sequence decoded
 * together, and greedy's one-row passes priced on the same curve give greedy's at batch B: their
 * ratio is the decoder's speed-up over greedy when serving B sequences (the copies stand for B
 * sequences with the same acceptance; real sequences accept differently and wait for the
 * slowest, which `run --batch B` measures). */
#ifndef RESULTS_COST_H
#define RESULTS_COST_H

#include <stdint.h>

#include "results/db/db.h"

typedef struct cost_curve cost_curve;

/* Loads a curve from a CSV file or a database (above). Errors name the file and line or run;
 * opt names the source in them ("--project-cost"; NULL: "cost source"). */
int cost_curve_load(cost_curve **out, const char *source, const char *opt, char *err);
void cost_curve_free(cost_curve *c);

/* Seconds of one pass (never below a thousandth of the smallest measured point: only a wild
 * extrapolation could go lower). */
double cost_curve_t(const cost_curve *c, double rows, double context, double logit_rows);

/* Greedy's decode passes for a prompt of `prompt` tokens and n new tokens: the sum of
 * t(1, prompt + i, 1) over i < n - 1 (its first token comes from the prompt pass). Added term
 * by term up to 65536 passes, in closed form per segment of the curve beyond (equal to a
 * rounding), so it takes no longer for a count read from a damaged database. */
double cost_curve_greedy(const cost_curve *c, int64_t prompt, int64_t n);

/* What was loaded ("FILE", "FILE run N"), whether it models the context and the logit rows
 * (version 2) and the measured ranges (contexts 0..0 for a version 1 curve). */
const char *cost_curve_source(const cost_curve *c);
/* The sequences each pass of the curve evaluates (1 unless measured with `cost --batch B`). */
int cost_curve_batch(const cost_curve *c);
int cost_curve_is_grid(const cost_curve *c);
void cost_curve_range(const cost_curve *c, double *rows_lo, double *rows_hi, double *ctx_lo,
                      double *ctx_hi);
int cost_curve_points(const cost_curve *c);

/* ---- for `decbench tune` -------------------------------------------------------------------- */

/* The newest complete cost run whose curve can stand for a new measurement in environment env
 * (db_env_capture): a version 2 curve of the same model file (content fingerprint), threads and
 * kernels, measured on the same machine (host, CPU) with the same build (commit, compiler,
 * flags), both from a clean tree (an uncommitted change could be a kernel change), whose body
 * reaches max_rows. *run = 0 when there is none. */
int cost_find_run(db *d, const char *model_path, int threads, const char *kernels, int max_rows,
                  const db_env *env, int64_t *run, char *err);
/* The same for a KV cache type other than f32 (kv_type_name(): the curves of runs that stored
 * keys and values that way; cost_find_run is this with "f32"). */
int cost_find_run_kv(db *d, const char *model_path, int threads, const char *kernels,
                     const char *kv_type, int max_rows, const db_env *env, int64_t *run, char *err);
/* The same for curves of passes of `batch` sequences (runs.batch; cost_find_run_kv is this with
 * batch 1, so a batched curve never stands for a batch-1 one, nor the reverse). */
int cost_find_run_batch(db *d, const char *model_path, int threads, const char *kernels,
                        const char *kv_type, int batch, int max_rows, const db_env *env,
                        int64_t *run, char *err);

/* What the pass traces of runs[0..n) used of one model (draft: 0 target, 1 draft model): the
 * largest rows and the contexts, and the mean seconds of a pass by rows (up to COST_USAGE_ROWS
 * rows values, ascending), for sizing and timing a cost curve that covers them. */
#define COST_USAGE_ROWS 256
typedef struct {
    int passes, max_rows, min_context, max_context;
    int n;
    double rows[COST_USAGE_ROWS], secs[COST_USAGE_ROWS];
} cost_usage;
int cost_usage_of(db *d, const int64_t *runs, int n, int draft, cost_usage *u, char *err);

#endif
