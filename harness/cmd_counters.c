/* cmd_counters.c: `decbench counters`: every counter a sample stores and every figure a report
 * shows, with its definition.
 *
 * Prints four markdown tables: the framework counters (the list STAT_COUNTERS of
 * stats/stats.h: every decoder has them, one column of the samples table each), the quantities
 * derived from them per sample (STAT_DERIVED), each decoder's own counters (its vtable's
 * counter table: rows of the counters table) and the report's figures (results/
 * report_figures.c). All four are generated from those tables, and results/README.md holds this
 * exact output (tests/cli_counters.sh checks it), so the documented definitions cannot drift from
 * the code. */
#include <stdio.h>

#include "decoders/decoder.h"
#include "harness/args.h"
#include "harness/commands.h"
#include "results/report/report.h"
#include "util/err.h"

static void row(const char *decoder, const stat_def *c) {
    printf("| %s%s`%s` | %s | %s | %s | %s |\n", decoder ? decoder : "", decoder ? " | " : "",
           c->name, c->kind == STAT_INT ? "int" : "real", stat_agg_name(c->agg),
           c->det == STAT_DET ? "exact" : "no", c->definition);
}

int cmd_counters(int argc, char **argv) {
    args_opt o[1] = {{.name = "--help", .alias = "-h", .help = "this help"}};
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, 1, pos, 0, &n_pos, err)) return cmd_usage("counters", err);
    if (args_flag(o, 1, "--help")) {
        args_usage("decbench counters   (markdown tables: every counter a sample stores, every "
                   "report figure)",
                   o, 1);
        return 0;
    }
    printf("Framework counters (every decoder; one column of `samples` each):\n\n");
    printf("| counter | type | over samples | compare | definition |\n");
    printf("|---|---|---|---|---|\n");
    for (int k = 0; k < STAT_N_COUNTERS; k++) row(NULL, &stat_counters[k]);
    printf("\nDerived per sample (`STAT_DERIVED`, stats/stats.h; C and SQL from one line):\n\n");
    printf("| quantity | SQL | definition |\n");
    printf("|---|---|---|\n");
    for (int k = 0; k < STAT_N_DERIVED; k++)
        printf("| `%s` | `%s` | %s |\n", stat_derived[k].name, stat_derived[k].sql,
               stat_derived[k].definition);
    printf("\nDecoder counters (the decoder's own; rows of `counters`):\n\n");
    printf("| decoder | counter | type | over samples | compare | definition |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int i = 0; i < dec_registry_size(); i++) {
        int n;
        const stat_def *defs = dec_registry_counters(i, &n);
        for (int k = 0; k < n; k++) row(dec_registry_name(i), &defs[k]);
    }
    printf("\nReport figures (the summary layout's columns, results/report/report_figures.c):\n\n");
    printf("| figure | key | definition |\n");
    printf("|---|---|---|\n");
    for (int i = 0; i < report_figure_count(); i++) {
        const char *header, *key, *def;
        report_figure_info(i, &header, &key, &def);
        printf("| %s | `%s` | %s |\n", header, key, def);
    }
    printf("\nBatch figures (`report --layout batch`, runs made with `run --batch B`; "
           "results/report/report_batch.c):\n\n");
    printf("| figure | key | definition |\n");
    printf("|---|---|---|\n");
    for (int i = 0; i < report_batch_figure_count(); i++) {
        const char *header, *key, *def;
        report_batch_figure_info(i, &header, &key, &def);
        printf("| %s | `%s` | %s |\n", header, key, def);
    }
    return 0;
}
