/* tune.h: what `decbench tune`'s phases (cmd_tune.c) hand to its output (tune_out.c). */
#ifndef HARNESS_TUNE_H
#define HARNESS_TUNE_H

#include <stdint.h>

#include <math.h>

#include "harness/runner.h"
#include "results/report/report.h"
#include "results/plot/plot.h"

/* A decoder must measure this much faster than greedy to be recommended over it: on the shared
 * 2-core development machine two greedy runs of a few prompts differed by up to a few percent
 * (and single samples by far more), so a smaller gain is not a finding. */
#define TUNE_MARGIN 0.05

/* One point of the grid. */
typedef struct {
    char *canon, *shown;
    int64_t run;         /* probe run, 0 if not run */
    char status;         /* 'c' complete, 'f' output differed from greedy, 's' skipped */
    double secs;         /* the probe's wall time */
    report_projection p; /* the probe's projection and measurement (p.run_id 0: none) */
    int finalist;
    double measured; /* end-to-end speed-up in the final run (NAN: not a finalist) */
} tune_cand;

typedef struct {
    runner r;
    db *d;
    char *cmd;
    double t0, budget; /* clock at the start, seconds allowed */
    int n_probe;       /* probe prompts */
    int n_final;       /* prompts of the final run (0: none) */
    int held_out;      /* 1: the final prompts are not the probe prompts */
    int64_t sweep_id, base_id, final_id, cost_run[2]; /* cost_run: target, draft (0: none) */
    char cost_src[2][4200];
    double greedy_secs; /* greedy's probe run */
    tune_cand *c;       /* sorted by prediction once predicted */
    int n;
    char skipped_decoders[1024]; /* "name (reason); ..." */
    const char *const *sets;     /* --set NAME:PARAMS, each added to every point of NAME */
    int n_sets;
    /* --batch B: the sequences served at once. Probes stay one sequence at a time (their pass
     * traces); the cost curves are of passes of B sequences, the final run is at --batch B and
     * a finalist's measured figure its throughput over greedy's there. */
    int batch, continuous;
    char batch_left_out[512]; /* "name; ..." the final at B could not run (state across prompts) */
    /* The learned drafters' heads (--set eagle:head=DIR, medusa:head=DIR): index 0 eagle's, 1
     * medusa's. head_run: the cost run of the head's pass (`cost --head`), the draft curve its
     * decoder's probes are priced on (0: none; the probes are then priced on their target passes
     * only, an upper bound); heads_unpriced: why not, when the heads have no curve at all. */
    int64_t head_run[2];
    char head_src[2][4200];
    char heads_unpriced[160];
} tune;

/* The projected end-to-end speed-up of c's probe (NAN: none). */
static inline double tune_pred(const tune_cand *c) {
    return c->p.run_id ? c->p.projected_e2e : NAN;
}

/* The ranked table and the "recommended:" lines (stdout). */
void tune_print(const tune *t);

/* tune_predicted and tune_frontier (.tsv; with render also .png and .svg by gnuplot) into
 * out_dir (created if absent). */
int tune_plots(const tune *t, const char *out_dir, int render, char *err);

#endif
