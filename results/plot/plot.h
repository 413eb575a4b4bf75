/* plot.h: the figures of a results database: the tab-separated data each kind's gnuplot script
 * in plots/ reads (plot_data.c, plot_paper.c), and running gnuplot on it (plot_render.c). */
#ifndef RESULTS_PLOT_H
#define RESULTS_PLOT_H

#include "results/db/db.h"
#include "results/report/report.h"

typedef enum {
    REPORT_PLOT_SPEEDUP = 0,  /* speedup.tsv: dataset x decoder speed-up bars, error bars */
    REPORT_PLOT_SCALING = 1,  /* scaling.tsv: lookahead target steps vs W, one block per N */
    REPORT_PLOT_ACCEPT = 2,   /* accept.tsv: accepted-length histogram shares per decoder */
    REPORT_PLOT_COST = 3,     /* cost.tsv: forward latency vs rows, bandwidth-bound line */
    REPORT_PLOT_HISTORY = 4,  /* history.tsv: tok/s per decoder over the runs' commits */
    REPORT_PLOT_POSITION = 5, /* position.tsv: acceptance rate by draft position, per decoder */
    REPORT_PLOT_TRADEOFF = 6, /* tradeoff.tsv: tokens/step against rows/step, per decoder */
    REPORT_PLOT_HEATMAP = 7,  /* heatmap.tsv: lookahead W x N: tokens/step and speed-up */
    REPORT_PLOT_ABLATION = 8, /* ablation.tsv: one decoder's variants: speed-up and tokens/step */
    REPORT_PLOT_BATCH = 9     /* batch.tsv: throughput and per-token latency against run --batch */
} report_plot_kind;
#define REPORT_PLOT_KINDS 10

/* What the error bars of the speed-up and ablation bars show: the sample sd over repeats of
 * each repeat's speed-up (the measurement's noise), the sd over prompts of each prompt's (how
 * much the speed-up depends on the prompt), or nothing. */
typedef enum {
    REPORT_ERRORS_REPEATS = 0,
    REPORT_ERRORS_PROMPTS = 1,
    REPORT_ERRORS_NONE = 2
} report_errors;

typedef struct {
    const int64_t *run_ids; /* NULL or n_runs 0: the defaults of report_plot_data */
    int n_runs;
    /* given (the harness): legends as reports label decoders, the name and the parameters that
     * vary between the plotted specs ("lookahead:N=2"); NULL: the older "lookahead N=2" */
    const char *const *default_specs;
    int n_default_specs;
    report_errors errors;
    const char *decoder;   /* ABLATION: whose variants (NULL: the decoder with the most specs) */
    const char *llama_csv; /* COST: a `llama-bench -o csv` file drawn beside (llama_csv.h), or
                            * NULL */
} report_plot_opts;

/* The kind's name ("speedup", ...), its data file ("speedup.tsv") and the gnuplot script that
 * reads it ("speedup.gp", in plots/). */
const char *report_plot_name(report_plot_kind kind);
const char *report_plot_file(report_plot_kind kind);
const char *report_plot_script(report_plot_kind kind);

/* Writes the data file for kind into out_dir (which must exist). Runs: o->run_ids, or by
 * default the latest complete run with samples (all complete runs of its sweep if it belongs
 * to one); for COST the latest complete run with cost points (with run_ids: the first one
 * only); for HISTORY all complete runs with the same model, datasets and max_new as the
 * latest, in run order. plots/README.md describes each file's columns. */
int report_plot_data(db *d, report_plot_kind kind, const report_plot_opts *o, const char *out_dir,
                     char *err);

/* The runs report_plot_data draws for kind: o->run_ids, else the default above; what gets one
 * line saying which and why ("runs 2-5 (every complete run of the latest run's sweep)"), for
 * the command to print (a figure of one run among many must say so). *ids malloc'd. */
int report_plot_runs(db *d, report_plot_kind kind, const report_plot_opts *o, int64_t **ids, int *n,
                     char *what, size_t what_n, char *err);

/* Whether run is a part of a `decbench paper` recipe (its label "paper RECIPE/PART"): 1 with
 * the recipe's and the part's names and the ids of the latest complete run of each of the
 * recipe's parts ("5-7"), else 0. */
int report_plot_recipe_of(db *d, int64_t run, char *recipe, size_t recipe_n, char *part,
                          size_t part_n, char *parts, size_t parts_n);

/* A paper recipe's own figure (`decbench paper NAME --plot DIR`, results/plot/plot_recipe.c):
 * out_dir/paper.tsv, which plots/paper.gp draws: the table's rows as bars (greedy's as the
 * dashed line at 1), clustered by its groups, in the table's first speed-up figure of
 * bo->figures (else its first per-step one), with its sd over repeats as error bars. -1 with a
 * message when the table has no such figure or no row but greedy's. */
int report_plot_beside(db *d, const report_beside_opts *bo, const report_beside_row *rows,
                       int n_rows, const char *out_dir, char *err);

/* Runs gnuplot on plots/common.gp + plots/<script> with data_dir/<name>.tsv, writing
 * <name>.png and <name>.svg into out_dir (each replaced whole, never left half-written).
 * No path is passed to gnuplot as text (plot_render.c says why). plots_dir NULL = <source
 * dir>/plots. -1 (message names gnuplot's first error line) if gnuplot is missing or fails. */
int report_plot_render(report_plot_kind kind, const char *plots_dir, const char *data_dir,
                       const char *out_dir, char *err);
/* The same for any script: plots/<stem>.gp reads <stem>.tsv and writes <stem>.png and .svg
 * (`decbench tune` writes its figures' data itself). */
int report_plot_render_named(const char *stem, const char *plots_dir, const char *data_dir,
                             const char *out_dir, char *err);

#endif
