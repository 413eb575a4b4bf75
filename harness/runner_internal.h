/* runner_internal.h: what the runner's files share (runner.c the loop, runner_open.c,
 * runner_plan.c, runner_record.c, runner_sample.c); not for the commands, which use runner.h. */
#ifndef HARNESS_RUNNER_INTERNAL_H
#define HARNESS_RUNNER_INTERNAL_H

#include "harness/runner.h"

/* Whether a canonical spec is greedy's, the reference every other decoder is checked against. */
int runner_is_greedy(const char *canon);

/* runner_open.c: cuts a prompt longer than the context to its last tokens (--cut-long); 1 when
 * it was cut. */
int runner_cut_prompt(const runner *r, runner_prompt *p);

/* runner_plan.c: whether this shard measures decoder canon's sample (rep, prompt); whether d
 * takes part in --state-load/--state-save; loading every such instance's state before a repeat
 * and saving the run's one after the last. */
int runner_in_shard(const runner *r, const char *canon, int rep, int prompt);
int runner_has_state(const runner *r, const dec *d);
int runner_load_states(runner *r, dec *const *decs, int n, char *err);
int runner_save_states(runner *r, dec *const *decs, char *const *canon, int n, char *err);

/* runner_record.c: the fingerprint of a --draft self:TYPE draft (its type and the target's). */
void runner_draft_fingerprint(const runner *r, int64_t *bytes, char hex[17]);

/* runner_sample.c: the environment of measured samples; whether the run samples in standard
 * mode; "prompt P (dataset, key), SPEC, repeat R" for messages; one measured, stored sample;
 * greedy's reference output of a prompt (unstored); the unstored warm-up passes. */
dec_env runner_measuring_env(runner *r);
int runner_standard_sampling(const runner *r);
void runner_where(const runner_prompt *p, const char *spec, int rep, char *buf, size_t n);
int runner_measure_one(runner *r, db *d, int64_t run_id, dec *dc, const char *canon,
                       const char *shown, runner_prompt *p, int rep, runner_result *res, char *err);
/* The storing half of runner_measure_one: the output r->out[0..n) and its statistics st,
 * checked against greedy's and stored (with batch's figures unless NULL). */
int runner_store_one(runner *r, db *d, int64_t run_id, dec *dc, const char *canon,
                     const char *shown, runner_prompt *p, int rep, int n, const dec_stats *st,
                     const db_batch *batch, runner_result *res, char *err);
int runner_reference(runner *r, runner_prompt *p, char *err);

/* runner.c: a decoder's rejection tests over the samples this command measured (standard
 * sampling), summed per sample; the check of each decoder's sums against their theoretical
 * rate, printed, returning how many failed. */
typedef struct {
    long tests, accepts;
    double expected, variance;
} samp_sums;
void runner_samp_add(samp_sums *c, const dec_stats *st);
long runner_sampling_check(runner *r, const samp_sums *c, char *const *shown, int n);

/* runner_batch.c: runner_measure's loop for --batch B > 1 (runner.h). */
int runner_measure_batch(runner *r, db *d, int64_t run_id, char *const *canon,
                         char *const *shown, int n, const char *title, runner_result *res,
                         char *err);
int runner_warm_up(runner *r, const char *canon, const char *shown, char *err);

#endif
