/* cmd_plot.c: `decbench plot`: figures from the results database.
 *
 *   decbench plot [--kind speedup|scaling|accept|cost|history|batch|all[,...]] [--db FILE[:RUN]]
 *                 [--run ID ...] [--sweep ID] [--out DIR] [--plots-dir DIR] [--data-only]
 *
 * For each kind: the data file (report_plot_data: <out>/<kind>.tsv) and then gnuplot on
 * plots/<kind>.gp (report_plot_render: <out>/<kind>.png and .svg). Which runs each figure
 * reads by default is plots/README.md's rule (latest complete run, the whole sweep when it
 * belongs to one; cost: latest cost run; history and batch: every comparable run).
 * Decisions: the default kind is `all`, which skips (with a note) figures the database has
 * no data for, e.g. no cost run yet, and fails only if none can be drawn; a kind named
 * explicitly must succeed. --data-only writes the .tsv files without gnuplot. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/report_runs.h"
#include "harness/runner.h"
#include "results/plot/plot.h"
#include "results/report/report.h"
#include "util/err.h"
#include "util/file.h"
#include "util/text_escape.h"

enum {
    L_KIND,
    L_DB,
    L_RUN,
    L_SWEEP,
    L_OUT,
    L_PLOTS,
    L_DATA,
    L_ERRORS,
    L_DECODER,
    L_LLAMA,
    L_HELP,
    L_COUNT
};

/* "speedup, scaling, ... or all" for messages and --help. */
static const char *kind_list(void) {
    static char buf[512];
    size_t len = 0;
    for (int i = 0; i < REPORT_PLOT_KINDS; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : "",
                                report_plot_name((report_plot_kind)i));
    return buf;
}

/* "--kind a,b" into want[]; returns the number chosen, -1 on an unknown name. */
static int parse_kinds(const char *s, int want[REPORT_PLOT_KINDS], int *all, char *err) {
    char copy[256], *save = NULL;
    int n = 0;
    snprintf(copy, sizeof copy, "%s", s);
    memset(want, 0, sizeof(int) * REPORT_PLOT_KINDS);
    *all = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int k = -1;
        for (int i = 0; i < REPORT_PLOT_KINDS; i++)
            if (!strcmp(t, report_plot_name((report_plot_kind)i))) k = i;
        if (!strcmp(t, "all")) {
            *all = 1;
            for (int i = 0; i < REPORT_PLOT_KINDS; i++) want[i] = 1;
            continue;
        }
        if (k < 0) return err_set(err, "--kind %s: expected %s or all", t, kind_list());
        want[k] = 1;
    }
    for (int i = 0; i < REPORT_PLOT_KINDS; i++) n += want[i];
    return n ? n : err_set(err, "--kind: no kind given");
}

int cmd_plot(int argc, char **argv) {
    args_opt o[L_COUNT] = {
        [L_KIND] = {"--kind", "-k", 1,
                    "the figure(s), a comma list (kinds below; default all: every figure the "
                    "runs have data for)",
                    "KIND"},
        [L_DB] = {"--db", NULL, 1, "database FILE or FILE:RUN_ID (default results/decbench.db)",
                  "FILE"},
        [L_RUN] = {"--run", NULL, 1,
                   "run id(s), repeatable or comma-separated (default: see plots/README.md)", "ID"},
        [L_SWEEP] = {"--sweep", NULL, 1, "plot every run of this sweep", "ID"},
        [L_OUT] = {"--out", "-o", 1,
                   "output folder for .tsv, .png, .svg (default results/plots; created)", "DIR"},
        [L_PLOTS] = {"--plots-dir", NULL, 1,
                     "folder of the gnuplot scripts (default: <prefix>/share/decbench/plots "
                     "beside the binary, else the source tree's plots/)",
                     "DIR"},
        [L_DATA] = {"--data-only", NULL, 0, "write the data files only (no gnuplot)"},
        [L_ERRORS] = {"--errors", NULL, 1,
                      "error bars of the speedup and ablation bars: repeats (default: sd over "
                      "repeats), prompts (sd over prompts) or none",
                      "repeats|prompts|none"},
        [L_DECODER] = {"--decoder", NULL, 1,
                       "ablation: the decoder whose variants to draw (default: the one with the "
                       "most specs)",
                       "NAME"},
        [L_LLAMA] = {"--llama-csv", NULL, 1,
                     "cost: draw llama.cpp's speeds from this `llama-bench -o csv` file beside the "
                     "curve (pp T as one pass of T rows, tg as passes of one)",
                     "FILE"},
        [L_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, L_COUNT, pos, 0, &n_pos, err)) return cmd_usage("plot", err);
    if (args_flag(o, L_COUNT, "--help")) {
        args_usage("decbench plot [--kind KIND] [--db FILE[:RUN]] [--run ID ...] [--out DIR]", o,
                   L_COUNT);
        printf("\nkinds: %s\n"
               "Figures and their data files: plots/README.md. Legends label decoders by name\n"
               "and the parameters that vary between the plotted specs (lookahead:N=2 beside\n"
               "lookahead:N=3). Each figure says which runs it drew. A `decbench paper` recipe\n"
               "draws its own figure: its command with --plot DIR.\n",
               kind_list());
        return 0;
    }
    int want[REPORT_PLOT_KINDS], all;
    if (parse_kinds(args_str(o, L_COUNT, "--kind", "all"), want, &all, err) < 0)
        return cmd_usage("plot", err);
    const char *out = args_str(o, L_COUNT, "--out", "results/plots"),
               *errors_s = args_str(o, L_COUNT, "--errors", "repeats");
    report_errors errors = !strcmp(errors_s, "repeats")   ? REPORT_ERRORS_REPEATS
                           : !strcmp(errors_s, "prompts") ? REPORT_ERRORS_PROMPTS
                           : !strcmp(errors_s, "none")    ? REPORT_ERRORS_NONE
                                                          : (report_errors)-1;
    if ((int)errors < 0) return cmd_usage("plot", "--errors: expected repeats, prompts or none");
    char what[4200];
    snprintf(what, sizeof what, "the plots folder %s", out);
    /* The files read (the database, --llama-csv, the scripts) and the figures written, before
     * any is: a figure must not replace an input, and a missing input must not cut a
     * `--kind all` short after some figures were replaced. */
    char db_file[4096], files[3 * REPORT_PLOT_KINDS][4200];
    int64_t ignored;
    const char *db_arg = args_str(o, L_COUNT, "--db", "results/decbench.db");
    if (db_split_source(db_arg, db_file, sizeof db_file, &ignored, err))
        snprintf(db_file, sizeof db_file, "%s", db_arg);
    file_io io[3 + 3 * REPORT_PLOT_KINDS] = {
        {"--db", db_file, FILE_IO_IN, NULL},
        {"--llama-csv", args_str(o, L_COUNT, "--llama-csv", NULL), FILE_IO_IN, "llama-bench CSV"},
        {"--plots-dir", args_str(o, L_COUNT, "--plots-dir", NULL), FILE_IO_IN_DIR,
         "gnuplot scripts"}};
    int n_io = 3;
    static const char *const ext[3] = {"tsv", "png", "svg"};
    for (int k = 0; k < REPORT_PLOT_KINDS; k++)
        for (int e = 0; want[k] && e < 3; e++, n_io++) {
            char *f = files[n_io - 3];
            snprintf(f, sizeof files[0], "%s/%s.%s", out, report_plot_name((report_plot_kind)k),
                     ext[e]);
            io[n_io] = (file_io){"--out", f, FILE_IO_OUT, NULL};
        }
    if (file_check_io(io, n_io, err)) return cmd_fail("plot", err);
    run_list runs;
    db *d = NULL;
    int opened = run_list_open(o, L_COUNT, &runs, &d, err);
    if (opened) return opened == -2 ? cmd_usage("plot", err) : cmd_fail("plot", err);
    if (runner_make_dir(out, what, err)) {
        run_list_free(&runs);
        db_close(d);
        return cmd_fail("plot", err);
    }
    report_plot_opts po = {.run_ids = runs.ids,
                           .n_runs = runs.n,
                           .errors = errors,
                           .decoder = args_str(o, L_COUNT, "--decoder", NULL),
                           .llama_csv = args_str(o, L_COUNT, "--llama-csv", NULL)};
    po.default_specs = decoder_default_specs(&po.n_default_specs);
    int made = 0, failed = 0;
    /* A run of `decbench paper` is one part of a recipe: drawn alone it is one task of the
     * paper's table, so say so, and where the recipe's own figure comes from. */
    int64_t *sel = NULL;
    int n_sel = 0;
    char recipe[128], part[128], parts[256], ignore[ERR_LEN];
    if (report_plot_runs(d, REPORT_PLOT_SPEEDUP, &po, &sel, &n_sel, NULL, 0, ignore) == 0 &&
        n_sel == 1 &&
        report_plot_recipe_of(d, sel[0], recipe, sizeof recipe, part, sizeof part, parts,
                              sizeof parts))
        fprintf(stderr,
                "decbench plot: note: run %" PRId64 " is part '%s' of `decbench paper %s` (its "
                "parts: runs %s): these figures draw that part alone. The recipe's own figure, "
                "grouped as its table, in its table's figure: repeat the paper command with "
                "--plot DIR (its runs are reused, not measured again).\n",
                sel[0], part, recipe, parts);
    free(sel);
    for (int k = 0; k < REPORT_PLOT_KINDS; k++) {
        if (!want[k]) continue;
        char what[512] = "";
        int64_t *ids = NULL;
        int n_ids = 0;
        if (report_plot_runs(d, (report_plot_kind)k, &po, &ids, &n_ids, what, sizeof what,
                             ignore) != 0)
            what[0] = '\0';
        free(ids);
        int rc = report_plot_data(d, (report_plot_kind)k, &po, out, err);
        if (rc == 0 && !args_flag(o, L_COUNT, "--data-only"))
            rc = report_plot_render((report_plot_kind)k, args_str(o, L_COUNT, "--plots-dir", NULL),
                                    out, out, err);
        if (rc == 0) {
            made++;
            char shown[600];
            txt_plain_buf(shown, sizeof shown, what);
            fprintf(stderr, "decbench plot: %s: %s/%s%s: %s\n",
                    report_plot_name((report_plot_kind)k), out,
                    report_plot_file((report_plot_kind)k),
                    args_flag(o, L_COUNT, "--data-only") ? "" : " (+ .png, .svg)", shown);
        } else if (all) {
            char clean[2 * ERR_LEN];
            cmd_clean_message(err, clean, sizeof clean);
            fprintf(stderr, "decbench plot: %s skipped: %s\n",
                    report_plot_name((report_plot_kind)k), clean);
        } else {
            cmd_fail("plot", err);
            failed++;
        }
    }
    run_list_free(&runs);
    db_close(d);
    if (made == 0 && !failed) return cmd_fail("plot", "no figure could be made (see above)");
    return failed ? 1 : 0;
}
