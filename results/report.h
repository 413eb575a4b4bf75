/* report.h: tables from a results database, as markdown, CSV or JSON.
 *
 * Every figure is defined once: the sums come from the counter list (stats/stats.h), the
 * figures made from them are the table of results/report_figures.c (report_figure_info), and
 * results/README.md holds both, generated (`decbench counters`). Layouts: summary (every
 * figure), paper and ablation (the papers' tables: end-to-end tok/s and speed-up, as the papers
 * and Spec-Bench time the whole generate call), projected, counters.
 *
 * Library code: writes only to the FILE given, never prints elsewhere; errors go to err with
 * the prefix "report_". */
#ifndef RESULTS_REPORT_H
#define RESULTS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "results/db.h"

/* LATEX: a booktabs tabular in a table environment (needs \usepackage{booktabs}); JSONL: one
 * JSON object per row (the samples layout: Spec-Bench's answer-file records). */
typedef enum {
    REPORT_MARKDOWN = 0,
    REPORT_CSV = 1,
    REPORT_JSON = 2,
    REPORT_LATEX = 3,
    REPORT_JSONL = 4
} report_format;

typedef enum {
    REPORT_SUMMARY = 0,   /* per dataset x decoder: every metric (plus an "all" row per decoder) */
    REPORT_PAPER = 1,     /* Ouroboros Table 2: rows algorithms, per task tok/s and speed-up */
    REPORT_ABLATION = 2,  /* variants of one decoder: the parameters that differ, tok/s, speed-up */
    REPORT_PROJECTED = 3, /* speed-up projected from a forward-cost curve (--project-cost) */
    REPORT_COUNTERS = 4   /* every counter (framework and the decoder's own), raw, defined */
} report_layout;

typedef struct {
    const int64_t *run_ids; /* runs to report; NULL or n_runs 0: latest complete run */
    int n_runs;
    report_format format;
    report_layout layout;
    const char *ablation_decoder; /* REPORT_ABLATION: decoder name; NULL = "ouroboros" */
    /* REPORT_PROJECTED: a CSV file "rows,seconds" (header line optional, # comments), or a
     * decbench database FILE or FILE:RUN_ID whose cost table is used (latest cost run). */
    const char *cost_source;
} report_opts;

/* Writes the report to out. -1 with a message if a run does not exist or has no samples, or
 * the cost source cannot be read. */
int report_write(db *d, const report_opts *o, FILE *out, char *err);

/* The figures of the summary layout (results/report_figures.c: the one place each is defined),
 * for listings: count, and figure i's column header, machine key (CSV/JSON) and definition. */
int report_figure_count(void);
void report_figure_info(int i, const char **header, const char **key, const char **definition);

/* Parses "FILE" or "FILE:RUN_ID" (the suffix is taken as a run id only when it is all digits
 * and FILE is non-empty). *run_id = 0 when absent. */
int report_split_source(const char *arg, char *path, size_t n, int64_t *run_id, char *err);

/* Names for command-line flags: "md"/"markdown", "csv", "json", "latex"/"tex", "jsonl";
 * "summary", "paper", "ablation", "projected", "counters". -1 if unknown. */
int report_format_parse(const char *s, report_format *out);
/* The format an output file's extension names: .md/.markdown/.txt, .csv, .json, .tex, .jsonl;
 * -1 for any other (or no) extension. */
int report_format_for_path(const char *path, report_format *out);
int report_layout_parse(const char *s, report_layout *out);

/* ---- plot data (results/plot_data.c; scripts in plots/) ---------------------------------- */

typedef enum {
    REPORT_PLOT_SPEEDUP = 0, /* speedup.tsv: dataset x decoder speed-up bars */
    REPORT_PLOT_SCALING = 1, /* scaling.tsv: lookahead target steps vs W, one block per N */
    REPORT_PLOT_ACCEPT = 2,  /* accept.tsv: accepted-length histogram shares per decoder */
    REPORT_PLOT_COST = 3,    /* cost.tsv: forward latency vs rows, bandwidth-bound line */
    REPORT_PLOT_HISTORY = 4  /* history.tsv: tok/s per decoder over the runs' commits */
} report_plot_kind;
#define REPORT_PLOT_KINDS 5

/* The data file's name for kind ("speedup.tsv", ...) and the gnuplot script that reads it
 * ("speedup.gp", in plots/). */
const char *report_plot_file(report_plot_kind kind);
const char *report_plot_script(report_plot_kind kind);

/* Writes the data file for kind into out_dir (which must exist). Runs: run_ids, or by default
 * the latest complete run with samples (all complete runs of its sweep if it belongs to one);
 * for COST the latest complete run with cost points (with run_ids: the first one only); for
 * HISTORY all complete runs with the same model, datasets and max_new as the latest, in run
 * order. plots/README.md describes each file's columns. */
int report_plot_data(db *d, report_plot_kind kind, const int64_t *run_ids, int n_runs,
                     const char *out_dir, char *err);

/* Runs gnuplot on plots/common.gp + plots/<script> with data_dir/<name>.tsv, writing
 * <name>.png and <name>.svg into out_dir (each replaced whole, never left half-written).
 * No path is passed to gnuplot as text (plot_render.c says why). plots_dir NULL = <source
 * dir>/plots. -1 (message names gnuplot's first error line) if gnuplot is missing or fails. */
int report_plot_render(report_plot_kind kind, const char *plots_dir, const char *data_dir,
                       const char *out_dir, char *err);

#endif
