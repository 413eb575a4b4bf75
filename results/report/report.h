/* report.h: tables from a results database, as markdown, CSV or JSON.
 *
 * Every figure is defined once: the sums come from the counter list (stats/stats.h), the
 * figures made from them are the table of results/report/report_figures.c (report_figure_info), and
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

#include "results/db/db.h"

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
    REPORT_COUNTERS = 4,  /* every counter (framework and the decoder's own), raw, defined */
    REPORT_ACCEPT = 5,    /* acceptance rate by draft position, per dataset x decoder */
    REPORT_SAMPLES = 6,   /* one row per sample; JSONL: Spec-Bench's answer-file records */
    REPORT_BATCH = 7      /* batched runs (run --batch): throughput, speed-up, latency percentiles */
} report_layout;
#define REPORT_LAYOUTS 8

typedef struct {
    const int64_t *run_ids; /* runs to report; NULL or n_runs 0: latest complete run */
    int n_runs;
    report_format format;
    report_layout layout;
    /* REPORT_ABLATION: decoder name; NULL = "ouroboros". REPORT_SAMPLES: only the samples of
     * this decoder name or label (Spec-Bench's files hold one method each); NULL = all. */
    const char *ablation_decoder;
    /* REPORT_PROJECTED: the target's cost curve, a CSV file (`decbench cost --csv`; the older
     * "rows,seconds" too) or a decbench database FILE or FILE:RUN_ID whose cost table is used
     * (latest cost run): results/report/cost.h. */
    const char *cost_source;
    /* Each decoder's canonical spec with every parameter at its default (the harness passes
     * the registry's, dec_registry_default_spec). Given: labels are a decoder's name plus the
     * parameters whose value varies between the specs of that decoder in the table
     * (rep_label_among: "lookahead:N=2" beside "lookahead:N=3"; its only spec: "lookahead").
     * NULL: full specs everywhere. The samples layout still labels by the parameters that
     * differ from these defaults (its --decoder filter matches those labels). */
    const char *const *default_specs;
    int n_default_specs;
    /* REPORT_PROJECTED: the draft model's cost curve, for decoders with a draft (NULL: their
     * draft passes are not priced, the figure is an upper bound). */
    const char *draft_cost_source;
    /* 0: a table carries a one-line legend; 1: the definition of every figure shown and each
     * decoder label's full spec, one note line each (`report --explain`). */
    int explain;
    /* REPORT_SUMMARY: the figures shown, keys of report_figure_info comma-separated (an sd
     * joins its figure), "all", or "paper" (REPORT_PAPER_COLUMNS). NULL: all, except in LaTeX,
     * where 18 columns overflow a page: "paper". Labels, prompts and repeats always. */
    const char *columns;
} report_opts;

/* The summary's columns a paper's table has: end-to-end tok/s and speed-up (the papers and
 * Spec-Bench time the whole call), tokens per step and tau. */
#define REPORT_PAPER_COLUMNS "tps_e2e,speedup_e2e,tokens_per_step,tau"

/* Writes the report to out. Runs: o->run_ids, else the latest complete run with samples, or,
 * when it belongs to a sweep, every complete run of the sweep (a note says which and how to
 * report one). -1 with a message if a run does not exist or has no samples, a --columns key is
 * unknown, or the cost source cannot be read. */
int report_write(db *d, const report_opts *o, FILE *out, char *err);

/* The projection of the projected layout (results/report/report_cost.c) as data, one row per run x
 * dataset x decoder spec (dataset "all" over several datasets), then, over several runs, one
 * row per dataset x spec for the runs added up (run_id 0), for `decbench tune`. NAN where a
 * figure is not available (no greedy to measure against; no pass trace for e2e). */
typedef struct {
    int64_t run_id; /* 0: the runs added up */
    char dataset[64], spec[512];
    double measured_decode, measured_e2e; /* speed-up over greedy, as the summary layout's */
    double tokens_per_step, rows_per_step;
    double projected_decode, projected_e2e, projected_tps, ms_per_pass;
    int draft_priced; /* 0: draft passes ran but no draft curve was given (upper bound) */
    int extrapolated; /* some pass had more rows than its curve measured */
    long n_samples;
    char basis[64]; /* "passes", "steps", "mean rows", ... (report_cost.c) */
    int batch;      /* the curves' batch size (results/report/cost.h: batched curves) */
} report_projection;

/* Projects runs ids[0..n_ids) onto the target curve cost_source and the draft curve
 * draft_source (may be NULL). *out is malloc'd (free()). A draft curve of another batch size
 * than the target's is refused (the two models of a batch run in the same lockstep). */
int report_project(db *d, const int64_t *ids, int n_ids, const char *cost_source,
                   const char *draft_source, report_projection **out, int *n, char *err);

/* The figures of the summary layout (results/report/report_figures.c: the one place each is defined),
 * for listings: count, and figure i's column header, machine key (CSV/JSON) and definition. */
int report_figure_count(void);
void report_figure_info(int i, const char **header, const char **key, const char **definition);
/* A batched run's speed-up of decoder spec (samples.spec) over greedy at the same batch size,
 * as the batch layout computes it (throughput over greedy's, in the run or its baseline run):
 * *out NAN when the run or spec has no batched samples, or no greedy to compare with. */
int report_batch_speedup(db *d, int64_t run_id, const char *spec, double *out, char *err);

/* The same for the figures of the batch layout (runs made with `run --batch B`). */
int report_batch_figure_count(void);
void report_batch_figure_info(int i, const char **header, const char **key,
                              const char **definition);

/* Names for command-line flags: "md"/"markdown", "csv", "json", "latex"/"tex", "jsonl";
 * "summary", "paper", "ablation", "projected", "counters", "accept", "samples", "batch". -1 if
 * unknown. report_layout_name gives the name of a layout. */
const char *report_layout_name(report_layout l);
int report_format_parse(const char *s, report_format *out);
/* The format an output file's extension names: .md/.markdown/.txt, .csv, .json, .tex, .jsonl;
 * -1 for any other (or no) extension. */
int report_format_for_path(const char *path, report_format *out);
int report_layout_parse(const char *s, report_layout *out);

/* ---- our figures beside a paper's (results/report/report_beside.c; `decbench paper`) ------------- */

#define REPORT_BESIDE_COLS 3

/* One row: our figures for one decoder spec of one run over one dataset, beside the figures a
 * paper printed for the same experiment. */
typedef struct {
    const char *group, *row; /* the paper's task or setting and its row ("GSM8K", "Ouroboros") */
    int64_t run_id;
    const char *dataset; /* a dataset of the run; NULL: all of them (its "all" row, or its one) */
    const char *spec;    /* the canonical decoder spec */
    double paper[REPORT_BESIDE_COLS]; /* the paper's values (NAN: it prints none) */
    const char *paper_text; /* what the paper gives instead of a number ("figure only"), or NULL */
    const char *cite;       /* where: "Table 2" */
} report_beside_row;

typedef struct {
    const char *title;
    const char *group_header, *row_header;
    /* Our figures, by key of the summary's figures (report_figure_info: "tokens_per_step",
     * "tps_e2e", ...); a figure's sd joins it (markdown "mean ± sd"). */
    const char *const *figures;
    int n_figures;
    /* The paper's columns: header, key, markdown format; NULL header: unused. */
    const char *paper_header[REPORT_BESIDE_COLS], *paper_key[REPORT_BESIDE_COLS],
        *paper_fmt[REPORT_BESIDE_COLS];
    /* Projected tok/s and speed-up columns from this cost curve (the projected layout's
     * figures, report_opts.cost_source); NULL: none. */
    const char *cost_source;
    const char *const *notes; /* first notes of the table */
    int n_notes;
} report_beside_opts;

/* Writes the table: one line per row, our figures (measured on this machine, from the runs'
 * samples), the projected ones, then the paper's, each with its source; the runs' notes and
 * the definitions of the figures shown. -1 with a message if a run does not exist or the cost
 * source cannot be read; a row whose decoder has no samples is left blank. */
int report_beside(db *d, const report_beside_opts *o, const report_beside_row *rows, int n_rows,
                  report_format format, FILE *out, char *err);

#endif
