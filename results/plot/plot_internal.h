/* plot_internal.h: what the plot-data files (plot_data.c, plot_paper.c, plot_write.c) share. */
#ifndef RESULTS_PLOT_INTERNAL_H
#define RESULTS_PLOT_INTERNAL_H

#include <stdio.h>

#include "results/plot/plot.h"
#include "results/report/report_internal.h"

/* plot_write.c: a value of a data file: "\t%.6g", or "\t?" when missing. */
void plot_num(FILE *f, double v);

/* Text of a data file (a legend, dataset name, commit, or a comment line's note): through
 * txt_tsv (text_escape.h), so that no value from the database splits a row or a field, starts
 * a comment or a quoted field; "?" if out of memory. */
void plot_text(FILE *f, const char *s);

/* The legend of specs[i]: the decoder's name plus the parameters that vary between the plotted
 * specs of that decoder: as reports label it (rep_label_among, "lookahead:N=2") when o has
 * default specs (the harness), else in the older form "lookahead N=2". */
void plot_label(const report_plot_opts *o, char **specs, int n, int i, char *out, size_t len);

/* The legends of a header row: "\tLABEL" per spec, each followed by extra ("\terror" for a
 * column of error bars; "" for none), then the newline. */
void plot_header(FILE *f, const report_plot_opts *o, char **specs, int n, const char *extra);

/* What the error bars of o are, for the data files' comment lines. */
const char *plot_errors_what(const report_plot_opts *o);

/* Figures of the runs, one row per (run, spec): the run's all-datasets row when it has
 * several datasets, else its only dataset's row. *out malloc'd (rep_stats_free). */
int plot_per_spec(db *d, const int64_t *ids, int n_ids, rep_stat **out, int *n, char *err);

/* The error of a bar (o->errors): sd over repeats or over prompts of the speed-up, decode-only
 * or end-to-end; 0 when none is wanted or known. */
double plot_error(const report_plot_opts *o, const rep_stat *s, int e2e);

/* plot_paper.c: the kinds a paper's figures need. */
int plot_write_position(db *d, const report_plot_opts *o, const int64_t *ids, int n, FILE *f,
                        char *err);
int plot_write_tradeoff(db *d, const report_plot_opts *o, const int64_t *ids, int n, FILE *f,
                        char *err);
int plot_write_heatmap(db *d, const report_plot_opts *o, const int64_t *ids, int n, FILE *f,
                       char *err);
int plot_write_ablation(db *d, const report_plot_opts *o, const int64_t *ids, int n, FILE *f,
                        char *err);
/* plot_batch.c: throughput and per-token latency against the batch size, per decoder. */
int plot_write_batch(db *d, const report_plot_opts *o, const int64_t *ids, int n, FILE *f,
                     char *err);

#endif
