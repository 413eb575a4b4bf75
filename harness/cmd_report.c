/* cmd_report.c: `decbench report`: tables from the results database.
 *
 *   decbench report [--db FILE[:RUN]] [--run ID[,ID]...] [--sweep ID] [--format md|csv|json]
 *                   [--layout summary|paper|ablation|projected|counters] [--decoder NAME]
 *                   [--project-cost FILE[:RUN]] [--project-draft-cost FILE[:RUN]] [--out FILE]
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

enum { P_DB, P_RUN, P_SWEEP, P_FORMAT, P_LAYOUT, P_DECODER, P_COST, P_DCOST, P_OUT, P_HELP, P_COUNT };

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
                    "projected: the target's cost curve, a CSV of decbench cost or a database "
                    "FILE[:RUN]"},
        [P_DCOST] = {"--project-draft-cost", NULL, 1,
                     "projected: the draft model's cost curve (spec, ouroboros), as above"},
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
    ro.draft_cost_source = args_str(o, P_COUNT, "--project-draft-cost", NULL);
    if (ro.layout == REPORT_PROJECTED && !ro.cost_source)
        return cmd_fail("report",
                        "--layout projected needs --project-cost FILE (a CSV of decbench cost "
                        "or a database with a cost run)") +
               1;

    run_list runs;
    db *d = NULL;
    int opened = run_list_open(o, P_COUNT, &runs, &d, err);
    if (opened) return cmd_fail("report", err) + (opened == -2); /* usage errors exit 2 */
    ro.run_ids = runs.ids;
    ro.n_runs = runs.n;
    const char *out_path = args_str(o, P_COUNT, "--out", NULL);
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    int rc = 1;
    if (!out)
        err_set(err, "--out %s: cannot write", out_path);
    else if (report_write(d, &ro, out, err) == 0)
        rc = 0;
    if (out && out != stdout && fclose(out) != 0 && rc == 0)
        rc = 1, err_set(err, "--out %s: write failed", out_path);
    if (rc) cmd_fail("report", err);
    fflush(stdout);
    run_list_free(&runs);
    db_close(d);
    return rc;
}
