/* cmd_run.c: `decbench run`: datasets x decoders x repeats into the results database.
 *
 *   decbench run --model FILE [--draft FILE] --dataset NAME[,NAME] --decoder SPEC [...]
 *                [--limit N] [--offset N] [--shuffle SEED] [--max-new N] [--repeats N]
 *                [--warmup N] [--db FILE] [--trace] [--allow-mismatch] [--resume RUN_ID]
 *                [--state-load FILE] [--state-save FILE] ...
 *
 * Decisions (also in --help; the loop itself is described in runner.h):
 *   - Everything that can be refused is refused before the database is touched: options,
 *     every dataset record (ds_open reads whole files), models, tokenizer, prompt lengths and
 *     every decoder spec. So a bad input leaves no run row, and no database file is created.
 *   - Greedy is always measured (added first if not listed): it is the exactness reference and
 *     the speed-up baseline of the same run, under the same conditions.
 *   - A run whose decoder differs from greedy is marked 'failed' and exits 1: it must not
 *     become the "latest complete run" that reports, plots and `compare` pick by default.
 *     --allow-mismatch keeps it 'complete' (the report's exact % column shows the damage).
 *   - Any other fault stops the run as 'incomplete' with the message stored as its reason and
 *     printed with the --resume command, exit 1: a full disk, a failed --state-save, a model
 *     file changed under the run, non-finite logits. Stored samples are whole, so nothing is
 *     lost; 'failed' means only "its outputs are wrong" (runner_finish).
 *   - One process measures a run at a time: the run is claimed (a kernel lock dropped when the
 *     process ends, results/db/db.h), so a second --resume of a run being measured refuses at
 *     once, and one of a run whose process died (kill -9, power loss) goes ahead.
 *   - Warm starts across runs (Ouroboros' paper, section 3.4, and any decoder that keeps
 *     state through the decoder interface's state hooks): --state-save writes the state of the
 *     run's one decoder with state after the last sample, --state-load starts every repeat's
 *     instance of every decoder with state from a file (each repeat the same file, so repeats
 *     measure the same work). --pool-save/--pool-load are the same for Ouroboros' phrase pool
 *     only (the names from before the hooks were generic). The paths are in the recorded
 *     command line. With --resume the state is rebuilt (runner.h): every sample of the
 *     repeat stored before is generated again, unstored, from the loaded file, so the
 *     remaining samples and --state-save see what an uninterrupted run would have.
 *   - No output may replace an input (runner_check_files, util/file.h file_check_io):
 *     --state-save on the model, the tokenizer, a dataset or the database is refused before
 *     anything is written. The exception is a state file loaded and saved (accumulating warm
 *     starts across runs).
 *   - Sampling (--temperature T > 0, harness/sampling_opts.h): greedy is plain sampling and
 *     the reference. Coupled mode checks every output against it token by token, as at
 *     temperature 0; standard mode cannot (a decoder's draws differ from plain sampling's while
 *     keeping its distribution), so its samples are stored unchecked (matched NULL) and each
 *     decoder's rejection tests are checked against their expected acceptances after the run
 *     (a failure marks the run failed like a mismatch).
 *   - Exit status: 0 success, 1 error or mismatch, 2 usage error, 130 interrupted.
 *   - stdout gets the summary table only (markdown, `decbench report` layout summary);
 *     progress, notes and errors go to stderr. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/commands.h"
#include "harness/report_runs.h"
#include "harness/runner.h"
#include "results/report/report.h"
#include "util/err.h"

enum {
    R_DECODER = RUNNER_N_OPTS,
    R_RESUME,
    R_STATE_LOAD,
    R_STATE_SAVE,
    R_POOL_LOAD,
    R_POOL_SAVE,
    R_HELP,
    R_COUNT
};

static void usage(const args_opt *o) {
    args_usage("decbench run --model FILE --dataset NAME[,NAME] [--decoder SPEC ...] [options]", o,
               R_COUNT);
    runner_help();
    printf("decoders (--decoder NAME[:KEY=VALUE,...]):\n%s", dec_help());
}

/* Opens the database and creates (or resumes) the run. */
static int begin(runner *r, db **d, int64_t resume_id, char *const *canon, int n, const char *cmd,
                 int64_t *run_id, char *err) {
    if (runner_make_parent(r->o.db_path, err) || db_open(d, r->o.db_path, DB_WRITE, err)) return -1;
    if (resume_id) {
        *run_id = resume_id;
        return runner_resume(r, *d, resume_id, canon, n, err);
    }
    db_run run;
    db_env env;
    runner_fill_run(r, &run, &env, cmd);
    char *decoders = runner_join_specs(canon, n);
    run.decoders = decoders;
    int rc = decoders ? db_begin_run(*d, &run, run_id, err) : err_set(err, "out of memory");
    free(decoders);
    return rc;
}

static void summary(db *d, int64_t run_id) {
    report_opts ro = {
        .run_ids = &run_id, .n_runs = 1, .format = REPORT_MARKDOWN, .layout = REPORT_SUMMARY};
    ro.default_specs = decoder_default_specs(&ro.n_default_specs);
    char err[ERR_LEN];
    if (report_write(d, &ro, stdout, err)) cmd_fail("run", err);
    fflush(stdout);
}

int cmd_run(int argc, char **argv) {
    args_opt o[R_COUNT];
    runner_options(o);
    o[R_DECODER] = (args_opt){.name = "--decoder",
                              .alias = "-d",
                              .takes_value = 1,
                              .metavar = "SPEC",
                              .help = "decoder spec, repeatable (greedy is always added)"};
    o[R_RESUME] =
        (args_opt){.name = "--resume",
                   .alias = NULL,
                   .takes_value = 1,
                   .metavar = "RUN_ID",
                   .help = "continue run RUN_ID (same options; stored samples are skipped)"};
    o[R_STATE_LOAD] = (args_opt){.name = "--state-load",
                                 .takes_value = 1,
                                 .metavar = "FILE",
                                 .help = "decoders with state (ouroboros: its phrase pool; "
                                         "suffix: its tree of outputs; recycle: its matrix) "
                                         "start every repeat from this file (--state-save "
                                         "writes it)"};
    o[R_STATE_SAVE] = (args_opt){.name = "--state-save",
                                 .takes_value = 1,
                                 .metavar = "FILE",
                                 .help = "write the state of the run's decoder with state after "
                                         "its last sample (one such decoder)"};
    o[R_POOL_LOAD] = (args_opt){.name = "--pool-load",
                                .takes_value = 1,
                                .metavar = "FILE",
                                .help = "--state-load for ouroboros decoders only (its pool)"};
    o[R_POOL_SAVE] = (args_opt){.name = "--pool-save",
                                .takes_value = 1,
                                .metavar = "FILE",
                                .help = "--state-save for ouroboros decoders only (its pool)"};
    o[R_HELP] = (args_opt){.name = "--help", .alias = "-h", .help = "this help"};
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, R_COUNT, pos, 0, &n_pos, err)) return cmd_usage("run", err);
    if (args_flag(o, R_COUNT, "--help")) {
        usage(o);
        return 0;
    }
    runner_opts ro;
    long resume_id;
    if (runner_opts_get(o, R_COUNT, &ro, err) ||
        args_int(o, R_COUNT, "--resume", 0, 1, INT64_MAX, &resume_id, err))
        return cmd_usage("run", err);
    const char *state[2] = {args_str(o, R_COUNT, "--state-load", NULL),
                            args_str(o, R_COUNT, "--state-save", NULL)};
    const char *pool[2] = {args_str(o, R_COUNT, "--pool-load", NULL),
                           args_str(o, R_COUNT, "--pool-save", NULL)};
    if ((state[0] || state[1]) && (pool[0] || pool[1]))
        return cmd_usage("run", "give --state-load/--state-save or their ouroboros aliases "
                                "--pool-load/--pool-save, not both");
    if (ro.batch > 1 && (state[0] || state[1] || pool[0] || pool[1]))
        return cmd_usage("run", "--batch cannot be combined with --state-load/--state-save "
                                "(--pool-*): decoders with state across prompts do not run "
                                "batched");
    const args_opt *dspecs = args_get(o, R_COUNT, "--decoder");
    for (int i = 0; dspecs && i < dspecs->count; i++)
        if (runner_batch_spec(&ro, dspecs->values[i], err)) return cmd_usage("run", err);

    runner r;
    db *d = NULL;
    char **canon = NULL, **shown = NULL, *cmd = runner_command_line(argc, argv);
    int n = 0, rc = 1;
    int64_t run_id = 0;
    const args_opt *dopt = args_get(o, R_COUNT, "--decoder");
    int opened = runner_open(&r, &ro, err) == 0;
    if (opened) {
        int alias = pool[0] || pool[1];
        r.state_load = alias ? pool[0] : state[0];
        r.state_save = alias ? pool[1] : state[1];
        r.state_only = alias ? "pool" : NULL; /* the state these flags name */
        r.load_opt = alias ? "--pool-load" : "--state-load";
        r.save_opt = alias ? "--pool-save" : "--state-save";
    }
    if (!opened || runner_check_files(&r, NULL, 0, err) ||
        runner_specs(&r, dopt->values, dopt->count, 1, &canon, &shown, &n, err) ||
        runner_check_states(&r, canon, n, err) || runner_shard_plan(&r, canon, n, err) ||
        begin(&r, &d, resume_id, canon, n, cmd, &run_id, err)) {
        cmd_fail("run", err);
        goto out;
    }
    runner_catch_signals();
    char title[64];
    snprintf(title, sizeof title, "run %" PRId64, run_id);
    fprintf(stderr, "decbench run: %s %s in %s: %d prompt(s) x %d decoder(s) x %d repeat(s)\n",
            resume_id ? "resuming run" : "run", title + 4, ro.db_path, r.n_prompts, n, ro.repeats);
    if (r.shard.n)
        fprintf(stderr, "decbench run: shard %d/%d: %ld of the %ld samples (greedy included)\n",
                r.shard.i, r.shard.n, r.shard.samples, (long)r.n_prompts * n * ro.repeats);
    runner_result res;
    int m = runner_measure(&r, d, run_id, canon, shown, n, title, &res, err);
    if (m < 0) cmd_fail("run", err);
    db_status fin;
    char e2[ERR_LEN];
    int stored = runner_finish(d, run_id, m, &res, ro.allow_mismatch, err, &fin, e2) == 0;
    if (!stored) cmd_fail("run", e2); /* the run stays 'running': resumable all the same */
    if (fin == DB_INCOMPLETE) {
        fprintf(stderr,
                "decbench run: %s: run %" PRId64 " is incomplete (%ld sample(s) "
                "stored by this command); continue it with:\n  %s --resume %" PRId64 "\n",
                m < 0 ? "stopped by the error above" : "interrupted", run_id, res.measured,
                cmd ? cmd : "decbench run ...", run_id);
        rc = m < 0 ? 1 : 130;
        goto out;
    }
    if (!stored) goto out;
    int failed = fin == DB_FAILED;
    summary(d, run_id);
    if (res.mismatches)
        fprintf(stderr, "decbench run: %ld sample(s) DIFFER from greedy (see MISMATCH above)%s\n",
                res.mismatches, failed ? "; run marked failed (--allow-mismatch to accept)" : "");
    if (res.samp_suspect)
        fprintf(stderr, "decbench run: %ld decoder(s) FAILED the sampling check (see above)%s\n",
                res.samp_suspect, failed ? "; run marked failed (--allow-mismatch to accept)" : "");
    fprintf(stderr,
            "decbench run: run %" PRId64 " %s: %ld sample(s) measured, %ld already stored, in %s\n",
            run_id, failed ? "failed" : "complete", res.measured, res.skipped, ro.db_path);
    rc = failed;
out:
    runner_free_specs(canon, shown, n);
    db_close(d);
    runner_close(&r);
    free(cmd);
    return rc;
}
