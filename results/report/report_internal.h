/* report_internal.h: what the report, plot-data and compare files share; not for other folders.
 *
 * Two pieces: rep_stat, the aggregated figures of one run x dataset x decoder spec (computed
 * in one place so that every layout, plot and comparison uses the same definitions), and
 * rtable, a plain table (columns + cells) that each layout fills and one writer prints as
 * markdown, CSV or JSON. */
#ifndef RESULTS_REPORT_INTERNAL_H
#define RESULTS_REPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "results/db/db_internal.h"
#include "results/report/report.h"

/* Dataset name used for a decoder's figures over all datasets of a run. */
#define REP_ALL "all"

/* A CTE "s": run ?1's samples plus ds = their dataset (?2 = 1) or REP_ALL (?2 = 0), so one
 * query serves both the per-dataset rows and the all-datasets rows. */
#define REP_SAMPLES_CTE                                                                            \
    "WITH s AS (SELECT *, CASE WHEN ?2 THEN dataset ELSE '" REP_ALL "' END AS ds "                 \
    "FROM samples WHERE run_id = ?1) "

typedef struct {
    int64_t run_id;
    char *dataset, *decoder, *spec; /* owned */
    char *label;                    /* owned: the short label (rep_labels), NULL before */
    long n_samples, n_prompts, n_repeats;
    /* Every framework counter (stats/stats.h, index STAT_<name>) aggregated over the samples
     * as its list line says (sum, mean or max). */
    double c[STAT_N_COUNTERS];
    /* Sums of the per-sample derived quantities (STAT_DERIVED, index STAT_D_<name>): decode
     * tokens, decode passes, decode time. */
    double d[STAT_N_DERIVED];
    long matched, checked;
    /* Per-repeat tok/s, mean and sample standard deviation (NAN with one repeat). */
    double tps_dec, tps_dec_sd, tps_e2e, tps_e2e_sd;
    /* Ratio of totals against greedy (NAN: no greedy to compare with). */
    double speedup_dec, speedup_e2e;
    /* Spec-Bench's speed-up: mean over the common prompts of the decoder's per-prompt
     * end-to-end tok/s over the same mean of greedy's. */
    double speedup_sb;
    /* Spread: sample sd over repeats of each repeat's speed-up (ratio of totals within the
     * repeat; NAN with one repeat), and sd over the common prompts of each prompt's
     * end-to-end speed-up (its mean times; NAN with one prompt). */
    double speedup_dec_sd, speedup_e2e_sd, speedup_prompt_sd;
    double speedup_prompt_sd_dec; /* the same spread over prompts, decode-only */
    long n_common;                /* prompts the speed-up is computed over */
    int64_t greedy_run;
} rep_stat;

/* Figures of one run: per dataset x spec, and (all_rows) per spec over all datasets with
 * dataset = REP_ALL when the run has more than one dataset. Ordered by dataset then spec in
 * the run's order, greedy first. *out is malloc'd: rep_stats_free(). */
int rep_collect(db *d, int64_t run_id, int all_rows, rep_stat **out, int *n, char *err);
/* rep_collect of every run of ids[0..n_ids), one array in that order (the report, the
 * projection, the figures and the table beside a paper's all read runs this way). On error *out
 * is NULL and *n 0. */
int rep_collect_runs(db *d, const int64_t *ids, int n_ids, int all_rows, rep_stat **out, int *n,
                     char *err);
void rep_stats_free(rep_stat *s, int n);

/* Derived ratios (NAN when the denominator is 0); results/report/report_figures.c defines them all. */
double rep_tokens_per_step(const rep_stat *s);
double rep_accepted_len(const rep_stat *s);
double rep_rows_per_step(const rep_stat *s);
double rep_exact_share(const rep_stat *s);
/* Shares of end-to-end time spent in draft passes and in the decoder's bookkeeping. */
double rep_draft_share(const rep_stat *s);
double rep_book_share(const rep_stat *s);

/* The runs to report: o->run_ids, or the latest complete run with samples (need_cost: with
 * cost points). Checks each exists. *ids is malloc'd. */
int rep_resolve_runs(db *d, const int64_t *run_ids, int n_runs, int need_cost, int64_t **ids,
                     int *n, char *err);

/* The runs a report or plot takes when none is named: the latest complete run with samples,
 * or, when it belongs to a sweep, every complete run with samples of that sweep (*sweep its
 * id; 0 otherwise). *ids is malloc'd. */
int rep_default_runs(db *d, int64_t **ids, int *n, int64_t *sweep, char *err);

/* One-line description of a run for table notes: "run 3 'label': model (hash), commit ...,
 * kernels, threads, started". */
int rep_run_note(db *d, int64_t run_id, char *out, size_t n, char *err);

/* Splits a decoder spec "name:k=v,k=v" into its parameters: returns the count (at most max),
 * keys[i] / vals[i] point into buf (a copy of spec). */
int rep_spec_params(const char *spec, char *buf, size_t bufn, char **keys, char **vals, int max);

/* The short label of spec: its decoder's name plus the parameters whose value differs from
 * that decoder's default spec among defaults[0..n) ("lookahead:W=5,G=5"; "greedy"); the full
 * spec when the decoder has no default spec there. */
void rep_label(const char *spec, const char *const *defaults, int n, char *out, size_t len);
/* The label of spec among specs[0..n) (the specs a table or figure shows): its decoder's name
 * plus the parameters whose value varies between the specs of that decoder there, in spec
 * order ("lookahead:W=1,N=2" beside "lookahead:W=1,N=3" shows W too only if W varies; the
 * decoder's only spec is just "lookahead"). Distinct canonical specs get distinct labels; a
 * parameter left at its default is never dropped while it varies, so "lookahead:W=1,G=1" cannot
 * stand beside "lookahead:W=1,N=2,G=1". The full spec is in CSV/JSON and `report --explain`. */
void rep_label_among(const char *spec, const char *const *specs, int n, char *out, size_t len);
/* rep_label_among for a decoder the registry knows (one with a default spec among defaults:
 * the harness passes them all); the full spec for any other (a database from a build with
 * other decoders; a library caller without the registry, defaults NULL). */
void rep_label_known(const char *spec, const char *const *specs, int n, const char *const *defaults,
                     int n_defaults, char *out, size_t len);
/* Fills s[i].label for every stat: rep_label_known over the specs of s. -1 when out of
 * memory. */
int rep_labels(rep_stat *s, int n, const char *const *defaults, int n_defaults);

/* ---- rtable -------------------------------------------------------------------------------- */

/* RT_VALUE: text whose JSON form is a number when it is an integer (a decoder parameter). */
typedef enum { RT_TEXT, RT_INT, RT_REAL, RT_VALUE } rt_kind;

typedef struct {
    char *header; /* markdown column header */
    char *key;    /* CSV header and JSON key */
    rt_kind kind;
    char *md_fmt; /* printf format for RT_REAL in markdown, e.g. "%.2fx" */
    int sd;       /* column holding this one's standard deviation (-1: none), shown as
                   * "mean ± sd" in one cell in markdown and LaTeX, as llama-bench prints */
    int hidden;   /* 1: CSV and JSON only (the sd of a pair, machine columns) */
} rt_col;

typedef struct {
    char *text;
    double num; /* RT_INT / RT_REAL; NAN = missing */
} rt_cell;

typedef struct {
    char *title;
    char **notes;
    int n_notes;
    rt_col *cols;
    int n_cols;
    rt_cell *cells; /* n_rows x n_cols */
    int n_rows, cap_rows;
    int oom; /* set on allocation failure; rt_write reports it */
} rtable;

void rt_init(rtable *t, const char *title);
void rt_free(rtable *t);
void rt_note(rtable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a column; returns its index. md_fmt only matters for RT_REAL. */
int rt_col_add(rtable *t, const char *header, const char *key, rt_kind kind, const char *md_fmt);
/* Column sd holds column mean's standard deviation: markdown and LaTeX print "mean ± sd" in
 * mean's cell (just mean when sd is missing) and leave sd out; CSV and JSON keep both. */
void rt_col_pair(rtable *t, int mean, int sd);
/* A column for CSV and JSON only (the full spec, one per decoder parameter). */
void rt_col_hide(rtable *t, int col);
/* Appends an empty row (all missing); returns its index. */
int rt_row_add(rtable *t);
void rt_set_text(rtable *t, int row, int col, const char *s);
void rt_set_num(rtable *t, int row, int col, double v);

/* Prints the table. Markdown: title, notes, aligned table. CSV: RFC 4180, header of keys,
 * numbers with 10 significant digits, missing = empty. JSON: {title, notes, columns, rows}
 * with rows as objects keyed by column key, missing = null; `extra` (may be NULL, stolen) is
 * added as "runs". JSONL: one row object per line. LaTeX: a booktabs table, title as caption,
 * notes as % comments. */
struct json_t;
int rt_write(const rtable *t, report_format f, FILE *out, struct json_t *extra, char *err);

/* The figures of the summary layout, one row each (report_figures.c). */
typedef struct {
    const char *header, *key, *md_fmt;
    double (*value)(const rep_stat *s);
    const char *definition;
    const char *sd_of; /* the key of the figure this one is the sd of (markdown: "mean ± sd") */
} rep_figure;
extern const rep_figure rep_figures[];
extern const int rep_n_figures;

/* Acceptance by draft position (report_accept.c): per run x dataset (per_ds; else REP_ALL)
 * x spec that drafted, the tries and acceptances at each position 0..n_pos-1. */
typedef struct {
    int64_t run_id;
    char *dataset, *spec, *decoder, *label; /* owned; label NULL until set */
    double tried[DEC_HIST_MAX], accepted[DEC_HIST_MAX];
    int n_pos;
} rep_pos;
int rep_positions(db *d, int64_t run_id, int per_ds, rep_pos **out, int *n, char *err);
void rep_positions_free(rep_pos *p, int n);
/* accepted / tried at position k (0-based), NAN when never tried. */
double rep_position_rate(const rep_pos *p, int k);
/* The conditional rate at position k >= 1: accepted at k / accepted at k - 1, ik_llama.cpp's
 * conditional_acceptance_rate (report_accept.c); NAN at k = 0 or when nothing was accepted at
 * k - 1. */
double rep_position_cond(const rep_pos *p, int k);
/* The `accept` layout into t. */
int rep_accept_layout(db *d, const int64_t *ids, int n_ids, const report_opts *o, rtable *t,
                      char *err);
/* The `batch` layout (report_batch.c): per run made with --batch B and decoder, throughput,
 * its speed-up over greedy's in the run, rows per pass and the per-token latency percentiles;
 * rep_batched_runs: whether any of ids is such a run. */
int rep_batch_layout(db *d, const int64_t *ids, int n_ids, const report_opts *o, rtable *t,
                     char *err);
int rep_batched_runs(db *d, const int64_t *ids, int n_ids, int *any, char *err);

/* The `samples` layout (report_samples.c): one row per sample; with REPORT_JSONL, Spec-Bench's
 * answer-file records instead of a table. */
int rep_samples_layout(db *d, const int64_t *ids, int n_ids, const report_opts *o, rtable *t,
                       FILE *jsonl, char *err);

/* The projected layout (report_cost.c): the speed-up of each stat of the runs priced with the
 * cost curve of cost_source (the draft's passes with draft_cost_source's; NULL: as
 * report_project prices them), into t. */
int rep_projected(db *d, const int64_t *ids, int n_ids, const char *cost_source,
                  const char *draft_cost_source, rtable *t, char *err);

/* The counters layout (report_counters.c): one row per counter of each stat in s. */
int rep_counters(db *d, const rep_stat *s, int n, int multi_run, rtable *t, char *err);

#endif
