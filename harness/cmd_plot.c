/* cmd_plot.c: `decbench plot`: figures from the results database.
 *
 *   decbench plot [--kind speedup|scaling|accept|cost|history|all[,...]] [--db FILE[:RUN]]
 *                 [--run ID ...] [--sweep ID] [--out DIR] [--plots-dir DIR] [--data-only]
 *
 * For each kind: the data file (report_plot_data: <out>/<kind>.tsv) and then gnuplot on
 * plots/<kind>.gp (report_plot_render: <out>/<kind>.png and .svg). Which runs each figure
 * reads by default is plots/README.md's rule (latest complete run, the whole sweep when it
 * belongs to one; cost: latest cost run; history: every comparable run).
 * Decisions: the default kind is `all`, which skips (with a note) figures the database has
 * no data for, e.g. no cost run yet, and fails only if none can be drawn; a kind named
 * explicitly must succeed. --data-only writes the .tsv files without gnuplot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/report_runs.h"
#include "harness/runner.h"
#include "results/report.h"
#include "util/err.h"

enum { L_KIND, L_DB, L_RUN, L_SWEEP, L_OUT, L_PLOTS, L_DATA, L_HELP, L_COUNT };

static const char *kind_names[REPORT_PLOT_KINDS] = {"speedup", "scaling", "accept", "cost",
                                                    "history"};

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
            if (!strcmp(t, kind_names[i])) k = i;
        if (!strcmp(t, "all")) {
            *all = 1;
            for (int i = 0; i < REPORT_PLOT_KINDS; i++) want[i] = 1;
            continue;
        }
        if (k < 0)
            return err_set(err,
                           "--kind %s: expected speedup, scaling, accept, cost, history or all", t);
        want[k] = 1;
    }
    for (int i = 0; i < REPORT_PLOT_KINDS; i++) n += want[i];
    return n ? n : err_set(err, "--kind: no kind given");
}

int cmd_plot(int argc, char **argv) {
    args_opt o[L_COUNT] = {
        [L_KIND] = {"--kind", "-k", 1,
                    "speedup, scaling, accept, cost, history or all (default; comma list ok)",
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
        [L_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, L_COUNT, pos, 0, &n_pos, err)) return cmd_usage("plot", err);
    if (args_flag(o, L_COUNT, "--help")) {
        args_usage("decbench plot [--kind KIND] [--db FILE[:RUN]] [--run ID ...] [--out DIR]", o,
                   L_COUNT);
        printf("Figures and their data files: plots/README.md.\n");
        return 0;
    }
    int want[REPORT_PLOT_KINDS], all;
    if (parse_kinds(args_str(o, L_COUNT, "--kind", "all"), want, &all, err) < 0)
        return cmd_usage("plot", err);
    const char *out = args_str(o, L_COUNT, "--out", "results/plots");
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/x", out); /* make_parent creates every folder above x */
    run_list runs;
    db *d = NULL;
    int opened = run_list_open(o, L_COUNT, &runs, &d, err);
    if (opened) return cmd_fail("plot", err) + (opened == -2); /* usage errors exit 2 */
    if (runner_make_parent(probe, err)) {
        run_list_free(&runs);
        db_close(d);
        return cmd_fail("plot", err);
    }
    int made = 0, failed = 0;
    for (int k = 0; k < REPORT_PLOT_KINDS; k++) {
        if (!want[k]) continue;
        int rc = report_plot_data(d, (report_plot_kind)k, runs.ids, runs.n, out, err);
        if (rc == 0 && !args_flag(o, L_COUNT, "--data-only"))
            rc = report_plot_render((report_plot_kind)k, args_str(o, L_COUNT, "--plots-dir", NULL),
                                    out, out, err);
        if (rc == 0) {
            made++;
            fprintf(stderr, "decbench plot: %s: %s/%s%s\n", kind_names[k], out,
                    report_plot_file((report_plot_kind)k),
                    args_flag(o, L_COUNT, "--data-only") ? "" : " (+ .png, .svg)");
        } else if (all) {
            char clean[2 * ERR_LEN];
            cmd_clean_message(err, clean, sizeof clean);
            fprintf(stderr, "decbench plot: %s skipped: %s\n", kind_names[k], clean);
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
