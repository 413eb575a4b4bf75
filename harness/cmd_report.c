/* cmd_report.c: `decbench report`: tables from the results database.
 *
 *   decbench report [--db FILE[:RUN]] [--run ID[,ID]...] [--sweep ID] [--format md|csv|json]
 *                   [--layout summary|paper|ablation|projected|counters] [--decoder NAME]
 *                   [--project-cost FILE[:RUN]] [--out FILE]
 *
 * Which runs: --run ids (repeatable, comma lists), the RUN of --db FILE:RUN, every run of
 * --sweep ID (its greedy baseline included); none given: the latest complete run with
 * samples. The figures and layouts are results/report.h's (defined once, results/README.md).
 * The database is opened read-only, so a report can be taken while a run is writing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/report_runs.h"
#include "results/report.h"
#include "util/err.h"
#include "util/file.h"

enum { P_DB, P_RUN, P_SWEEP, P_FORMAT, P_LAYOUT, P_DECODER, P_COST, P_OUT, P_HELP, P_COUNT };

int cmd_report(int argc, char **argv) {
    args_opt o[P_COUNT] = {
        [P_DB] = {"--db", NULL, 1, "database FILE or FILE:RUN_ID (default results/decbench.db)"},
        [P_RUN] = {"--run", NULL, 1, "run id(s) to report, repeatable or comma-separated"},
        [P_SWEEP] = {"--sweep", NULL, 1, "report every run of this sweep"},
        [P_FORMAT] = {"--format", "-f", 1, "md (default), csv or json"},
        [P_LAYOUT] = {"--layout", "-l", 1,
                      "summary (default), paper, ablation, projected or counters"},
        [P_DECODER] = {"--decoder", NULL, 1,
                       "ablation: the decoder whose variants to compare (default ouroboros)"},
        [P_COST] = {"--project-cost", NULL, 1,
                    "projected: cost curve, CSV rows,seconds or a database FILE[:RUN]"},
        [P_OUT] = {"--out", "-o", 1, "write to FILE instead of stdout"},
        [P_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, P_COUNT, pos, 0, &n_pos, err))
        return cmd_fail("report", err) + 1;
    if (args_flag(o, P_COUNT, "--help")) {
        args_usage("decbench report [--db FILE[:RUN]] [--run ID ...] [--format md|csv|json] "
                   "[--layout summary|paper|ablation|projected|counters]",
                   o, P_COUNT);
        fprintf(stderr,
                "Default run: the latest complete run with samples. Figures: results/README.md.\n");
        return 0;
    }
    report_opts ro = {.format = REPORT_MARKDOWN, .layout = REPORT_SUMMARY};
    const char *f = args_str(o, P_COUNT, "--format", "md"),
               *l = args_str(o, P_COUNT, "--layout", "summary");
    if (report_format_parse(f, &ro.format))
        return cmd_fail("report", "--format: expected md, csv or json") + 1;
    if (report_layout_parse(l, &ro.layout))
        return cmd_fail("report",
                        "--layout: expected summary, paper, ablation, projected or counters") +
               1;
    ro.ablation_decoder = args_str(o, P_COUNT, "--decoder", NULL);
    ro.cost_source = args_str(o, P_COUNT, "--project-cost", NULL);
    if (ro.layout == REPORT_PROJECTED && !ro.cost_source)
        return cmd_fail("report",
                        "--layout projected needs --project-cost FILE (a CSV of rows,seconds "
                        "or a database with a cost run)") +
               1;

    run_list runs;
    db *d = NULL;
    int opened = run_list_open(o, P_COUNT, &runs, &d, err);
    if (opened) return cmd_fail("report", err) + (opened == -2); /* usage errors exit 2 */
    ro.run_ids = runs.ids;
    ro.n_runs = runs.n;
    /* --out FILE is written through FILE.tmp and a rename (util/file.h): a failure (full disk)
     * leaves FILE as it was, never empty or cut short. */
    const char *out_path = args_str(o, P_COUNT, "--out", NULL);
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
