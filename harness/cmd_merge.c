/* cmd_merge.c: `decbench merge OUT.db IN.db [IN.db ...]`: puts databases together, above all
 * the shards of one run or sweep measured on several machines (run/sweep --shard I/N).
 *
 * Each input is merged in its own transaction (results/db/db_merge.c says what matches what and
 * what is refused); a refused input leaves the output as the inputs before it left it, and
 * since merging is idempotent the same command can simply be repeated once the input is
 * fixed. OUT is created when absent (its folder too). Exit 0, 1 when an input was refused or
 * unreadable, 2 for usage errors. */
#include <stdio.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/runner.h"
#include "results/db/db.h"
#include "util/err.h"

#define MAX_INPUTS 4096

int cmd_merge(int argc, char **argv) {
    args_opt o[1] = {{.name = "--help", .alias = "-h", .help = "this help"}};
    static const char *pos[MAX_INPUTS + 1];
    char err[ERR_LEN];
    int n_pos;
    if (args_parse(argc, argv, 2, o, 1, pos, MAX_INPUTS + 1, &n_pos, err))
        return cmd_usage("merge", err);
    if (args_flag(o, 1, "--help")) {
        args_usage("decbench merge OUT.db IN.db [IN.db ...]", o, 1);
        printf("\nAdds the runs and sweeps of each IN to OUT (created if absent). Shards of one\n"
               "work (run/sweep --shard I/N, possibly on different machines) become one run or\n"
               "sweep again: same shard count, decoders or grid, datasets, templates, max-new,\n"
               "repeats, warm-up, kernels and seed. They must come from one commit and the same\n"
               "models (SHA-256), and a sample two inputs share must have the same deterministic\n"
               "figures; otherwise the input is refused and OUT stays as it was. A merged run is\n"
               "complete once all N shards are in (incomplete before, failed if a shard failed).\n"
               "Merging the same file twice changes nothing. Every table a run owns is carried\n"
               "(pass traces included); a file whose schema is not decbench's (a view, trigger\n"
               "or table of its own) is refused. Recipes: cluster/README.md.\n");
        return 0;
    }
    if (n_pos < 2) return cmd_usage("merge", "expected OUT.db and at least one IN.db");
    db *d = NULL;
    if (runner_make_parent(pos[0], err) || db_open(&d, pos[0], DB_WRITE, err))
        return cmd_fail("merge", err);
    int rc = 0;
    for (int i = 1; i < n_pos; i++) {
        db_merge_result res = {0};
        if (db_merge(d, pos[i], &res, err)) {
            cmd_fail("merge", err);
            rc = 1;
            continue;
        }
        fprintf(stderr,
                "decbench merge: %s: %d run(s) added, %d shard(s) joined, %ld sample(s) added, "
                "%ld already in %s",
                pos[i], res.runs_added, res.shards_added, res.samples_added, res.samples_same,
                pos[0]);
        if (res.samples_filled)
            fprintf(stderr, " (%ld of them given rows they lacked: a trace or passes)",
                    res.samples_filled);
        fputc('\n', stderr);
        if (res.note[0]) fprintf(stderr, "decbench merge: note: %s\n", res.note);
    }
    db_close(d);
    return rc;
}
