/* cmd_report.c: `decbench report`: tables from the results database.
 *
 *   decbench report [--db FILE[:RUN]] [--run ID[,ID]...] [--sweep ID] [--format md|csv|json]
 *                   [--layout summary|paper|ablation|projected|counters|batch] [--decoder NAME]
 *                   [--project-cost FILE[:RUN]] [--project-draft-cost FILE[:RUN]] [--out FILE]
 *                   [--explain] [--columns KEYS|all|paper]
 *
 * Which runs: --run ids (repeatable, comma lists), the RUN of --db FILE:RUN, every run of
 * --sweep ID (its greedy baseline included); none given: the latest complete run with
 * samples, or the whole sweep it belongs to (report_write). A table carries a one-line legend;
 * --explain gives every definition and the decoders' full specs instead. The figures and layouts
 * are results/report/report.h's (defined once, results/README.md). The database is opened
 * read-only, so a report can be taken while a run is writing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/report_runs.h"
#include "results/report/report.h"
#include "util/err.h"
#include "util/file.h"

enum {
    P_DB,
    P_RUN,
    P_SWEEP,
    P_FORMAT,
    P_LAYOUT,
    P_DECODER,
    P_COST,
    P_DCOST,
    P_OUT,
    P_EXPLAIN,
    P_COLUMNS,
    P_HELP,
    P_COUNT
};

/* The format of --out FILE: its extension's, which must agree with --format when both are
 * given; a file named like a format ("csv") or without a known extension needs --format. */
static int output_format(const char *path, const char *format_opt, report_format *fmt, char *err) {
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    report_format by_name, by_ext;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return 0; /* a directory, a FIFO...: the output check says what it is (util/file.h) */
    int named = report_format_parse(base, &by_name) == 0,
        has_ext = report_format_for_path(path, &by_ext) == 0;
    if (named && !format_opt)
        return err_set(err,
                       "--out %s: a file named like a format; for that format write --format %s "
                       "(with or without -o FILE.%s)",
                       path, base, base);
    if (!format_opt && !has_ext)
        return err_set(err,
                       "--out %s: cannot tell the format from the name: give --format "
                       "md|csv|json|latex|jsonl or a .md, .csv, .json, .tex or .jsonl name",
                       path);
    if (format_opt && has_ext && by_ext != *fmt)
        return err_set(err, "--out %s: the extension disagrees with --format %s", path, format_opt);
    if (!format_opt) *fmt = by_ext;
    return 0;
}

int cmd_report(int argc, char **argv) {
    args_opt o[P_COUNT] = {
        [P_DB] = {"--db", NULL, 1, "database FILE or FILE:RUN_ID (default results/decbench.db)",
                  "FILE"},
        [P_RUN] = {"--run", NULL, 1, "run id(s) to report, repeatable or comma-separated", "ID"},
        [P_SWEEP] = {"--sweep", NULL, 1, "report every run of this sweep", "ID"},
        [P_FORMAT] = {"--format", "-f", 1,
                      "md (default on stdout), csv, json, latex or jsonl; with --out the file's "
                      "extension decides when this is absent",
                      "FORMAT"},
        [P_LAYOUT] = {"--layout", "-l", 1,
                      "summary (default), paper, ablation, projected, counters, accept "
                      "(acceptance rate by draft position), samples (one row per sample; with "
                      "--format jsonl: Spec-Bench answer-file records) or batch (runs made with "
                      "run --batch: throughput, speed-up, latency percentiles)",
                      "LAYOUT"},
        [P_DECODER] = {"--decoder", NULL, 1,
                       "ablation: the decoder whose variants to compare (default ouroboros); "
                       "samples: only this decoder (name or label)",
                       "NAME"},
        [P_COST] = {"--project-cost", NULL, 1,
                    "projected: the target's cost curve, a CSV of decbench cost or a database "
                    "FILE[:RUN]",
                    "FILE"},
        [P_DCOST] = {"--project-draft-cost", NULL, 1,
                     "projected: the draft model's cost curve (spec, ouroboros), as above", "FILE"},
        [P_OUT] = {"--out", "-o", 1,
                   "write to FILE (through FILE.tmp and a rename) instead of stdout; its "
                   "extension (.md, .txt, .csv, .json, .tex, .jsonl) gives the format",
                   "FILE"},
        [P_EXPLAIN] = {"--explain", NULL, 0,
                       "the definition of every figure shown and each decoder's full spec, "
                       "instead of the one-line legend"},
        [P_COLUMNS] = {"--columns", NULL, 1,
                       "summary: the figures shown, keys comma-separated (tps_e2e,speedup_e2e,...: "
                       "`decbench counters` lists them), all, or paper (" REPORT_PAPER_COLUMNS
                       "); default all, LaTeX paper",
                       "KEYS"},
        [P_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, P_COUNT, pos, 0, &n_pos, err)) return cmd_usage("report", err);
    if (args_flag(o, P_COUNT, "--help")) {
        args_usage("decbench report [--db FILE[:RUN]] [--run ID ...] [--format FORMAT] "
                   "[--layout LAYOUT] [-o FILE]",
                   o, P_COUNT);
        printf("\nlayouts: summary, paper, ablation, projected, counters, accept, samples, batch\n"
               "(batch: runs made with `run --batch B`, which the markdown summary also shows)\n"
               "Default runs: the latest complete run with samples, or every complete run of its\n"
               "sweep when it is a sweep's (the note says so). Figures: results/README.md.\n"
               "Decoders are labelled by name and the parameters that vary between the specs of\n"
               "that decoder in the table (lookahead:W=1 beside lookahead:W=2; a decoder's only\n"
               "spec: just its name); --explain lists each label's full spec, CSV and JSON give\n"
               "it and one column per parameter (param_W, ...). Markdown and LaTeX print\n"
               "mean ± sd in one cell.\n"
               "Format: --format, else the extension of --out, else markdown on stdout. A name "
               "such as\n`-o csv` (a format's name, no extension) or an extension that disagrees "
               "with --format\nis refused rather than guessed.\n");
        return 0;
    }
    report_opts ro = {.format = REPORT_MARKDOWN, .layout = REPORT_SUMMARY};
    ro.default_specs = decoder_default_specs(&ro.n_default_specs);
    const char *f = args_str(o, P_COUNT, "--format", NULL),
               *l = args_str(o, P_COUNT, "--layout", "summary"),
               *out_path = args_str(o, P_COUNT, "--out", NULL);
    if (f && report_format_parse(f, &ro.format))
        return cmd_usage("report", "--format: expected md, csv, json, latex or jsonl");
    if (out_path && output_format(out_path, f, &ro.format, err)) return cmd_usage("report", err);
    if (report_layout_parse(l, &ro.layout))
        return cmd_usage("report", "--layout: expected summary, paper, ablation, projected, "
                                   "counters, accept, samples or batch");
    ro.ablation_decoder = args_str(o, P_COUNT, "--decoder", NULL);
    ro.explain = args_flag(o, P_COUNT, "--explain");
    ro.columns = args_str(o, P_COUNT, "--columns", NULL);
    if (ro.columns && ro.layout != REPORT_SUMMARY)
        return cmd_usage("report", "--columns: only the summary layout has a choice of columns");
    ro.cost_source = args_str(o, P_COUNT, "--project-cost", NULL);
    ro.draft_cost_source = args_str(o, P_COUNT, "--project-draft-cost", NULL);
    if (ro.layout == REPORT_PROJECTED && !ro.cost_source)
        return cmd_usage("report", "--layout projected needs --project-cost FILE (a CSV of "
                                   "decbench cost or a database with a cost run)");

    /* -o must not land on a file the report reads (the database, a cost curve), and must be
     * writable before the database is opened (reading one may leave SQLite's -shm beside it) */
    char paths[3][4096];
    int64_t id;
    const char *sources[3] = {args_str(o, P_COUNT, "--db", "results/decbench.db"), ro.cost_source,
                              ro.draft_cost_source};
    for (int i = 0; i < 3; i++)
        if (!sources[i] || db_split_source(sources[i], paths[i], sizeof paths[i], &id, err))
            snprintf(paths[i], sizeof paths[i], "%s", sources[i] ? sources[i] : "");
    file_io io[4] = {{"--out", out_path, FILE_IO_OUT, "report"},
                     {"--db", paths[0], FILE_IO_IN, NULL},
                     {"--project-cost", paths[1], FILE_IO_IN, NULL},
                     {"--project-draft-cost", paths[2], FILE_IO_IN, NULL}};
    if (file_check_io(io, 4, err)) return cmd_fail("report", err);
    run_list runs;
    db *d = NULL;
    int opened = run_list_open(o, P_COUNT, &runs, &d, err);
    if (opened) return opened == -2 ? cmd_usage("report", err) : cmd_fail("report", err);
    ro.run_ids = runs.ids;
    ro.n_runs = runs.n;
    /* --out FILE is written through FILE.tmp and a rename (util/file.h): a failure (full disk)
     * leaves FILE as it was, never empty or cut short. */
    file_out fo;
    int rc = out_path && file_out_open(&fo, out_path, "report", err) ? 1 : 0;
    if (rc == 0 && report_write(d, &ro, out_path ? fo.f : stdout, err) != 0) {
        rc = 1;
        if (out_path && ferror(fo.f)) { /* name the file the write failed on */
            char e[ERR_LEN];
            snprintf(e, sizeof e, "%s", err);
            err_set(err, "--out %s: %s", out_path, e);
        }
    }
    if (out_path && rc == 0 && file_out_commit(&fo, err) != 0) rc = 1;
    if (out_path && rc) file_out_abort(&fo);
    if (!out_path && (fflush(stdout) != 0 || ferror(stdout)) && rc == 0)
        rc = 1, err_set(err, "cannot write the report to stdout");
    if (rc) cmd_fail("report", err);
    run_list_free(&runs);
    db_close(d);
    return rc;
}
