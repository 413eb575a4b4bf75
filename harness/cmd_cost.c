/* cmd_cost.c: `decbench cost`: forward-pass latency versus rows per pass on this machine.
 *
 * This is the cost curve every decoder's speed-up depends on: a decoder that feeds R rows per
 * step and gains A tokens per step beats greedy only if t(R) / A < t(1). For each T in --rows
 * it prints the median latency of one pass of T rows (a chain after --context committed
 * tokens, logits of every row computed, as verification needs), the achieved GFLOP/s (matrix
 * products only: 2 x weights x T) and the weight traffic in GB/s (weight bytes / latency: at
 * T=1 a pass reads every weight once, so this is the bandwidth the pass achieves). It also
 * measures the machine's streaming-read bandwidth, the bound a T=1 pass cannot beat.
 * --csv writes "rows,seconds" for `report --project-cost`; --db stores the curve in a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/measure.h"
#include "harness/session.h"
#include "results/db.h"
#include "util/err.h"
#include "util/file.h"

enum { C_MODEL, C_ROWS, C_CONTEXT, C_THREADS, C_KERN, C_SECONDS, C_CSV, C_DB, C_NOBW, C_LABEL, C_HELP, C_COUNT };

static int parse_rows(const char *s, int *rows, int max, int *n, char *err) {
    *n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(p, &end, 10);
        if (*end || v < 1 || v > 4096) return err_set(err, "--rows: '%s' is not a count 1..4096", p);
        if (*n >= max) return err_set(err, "--rows: more than %d values", max);
        rows[(*n)++] = (int)v;
    }
    return *n ? 0 : err_set(err, "--rows: empty list");
}

int cmd_cost(int argc, char **argv) {
    args_opt o[C_COUNT] = {
        [C_MODEL] = {"--model", "-m", 1, "model file (real or synthetic weights; a bare name is looked up in the models folder)", "FILE"},
        [C_ROWS] = {"--rows", NULL, 1, "rows per pass (default 1,2,4,8,16,32,64,128,256)", "LIST"},
        [C_CONTEXT] = {"--context", NULL, 1, "committed tokens before the measured pass (default 128)", "N"},
        [C_THREADS] = {"--threads", "-t", 1, "threads (default: one per core)", "N"},
        [C_KERN] = {"--kernels", NULL, 1, "exact (default) or blas", "exact|blas"},
        [C_SECONDS] = {"--seconds", NULL, 1, "minimum measuring time per point, in seconds (default 0.3; units: 300ms, 0.3s, 1m)", "S"},
        [C_CSV] = {"--csv", NULL, 1, "also write rows,seconds to this file (for report --project-cost)", "FILE"},
        [C_DB] = {"--db", NULL, 1, "also store the curve as a run in this database", "FILE"},
        [C_NOBW] = {"--no-bandwidth", NULL, 0, "skip the memory-bandwidth measurement"},
        [C_LABEL] = {"--label", NULL, 1, "label of the stored run", "TEXT"},
        [C_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, C_COUNT, pos, 0, &n_pos, err)) return cmd_usage("cost", err);
    if (args_flag(o, C_COUNT, "--help")) {
        args_usage("decbench cost --model FILE [--rows 1,2,4,...] [--csv FILE] [--db FILE]", o, C_COUNT);
        return 0;
    }
    int rows[64], n_rows;
    long context, threads;
    double seconds;
    if (parse_rows(args_str(o, C_COUNT, "--rows", "1,2,4,8,16,32,64,128,256"), rows, 64, &n_rows, err) ||
        args_int(o, C_COUNT, "--context", 128, 0, 1 << 20, &context, err) ||
        args_int(o, C_COUNT, "--threads", 0, 0, 1024, &threads, err) ||
        args_seconds(o, C_COUNT, "--seconds", 0.3, 0.001, 600, &seconds, err))
        return cmd_usage("cost", err);
    /* Before 0.2 the value was milliseconds: a bare 300 now means 5 minutes per point. */
    const char *sec_s = args_str(o, C_COUNT, "--seconds", "");
    if (seconds >= 30 && strspn(sec_s, "0123456789.") == strlen(sec_s))
        fprintf(stderr, "decbench cost: note: --seconds %s is %s seconds per point (write %sms for "
                        "milliseconds)\n", sec_s, sec_s, sec_s);
    const char *model_arg = args_str(o, C_COUNT, "--model", NULL);
    if (!model_arg) return cmd_usage("cost", "--model FILE is required");
    char model_path[4096];
    session_find_model(model_arg, model_path, sizeof model_path);
    /* no tokenizer needed: open the model and pool directly */
    kern_mode km;
    if (kern_mode_parse(args_str(o, C_COUNT, "--kernels", "exact"), &km))
        return cmd_usage("cost", "--kernels: expected exact or blas");
    int nt = threads > 0 ? (int)threads : session_cores();
    int max_rows = 0;
    for (int i = 0; i < n_rows; i++) max_rows = rows[i] > max_rows ? rows[i] : max_rows;
    model *m = NULL;
    tpool *pool = NULL;
    fwd_ctx *f = NULL;
    db *d = NULL;
    file_out csv_out = {0};
    FILE *csv = NULL; /* csv_out.f: written through PATH.tmp, renamed when every point is in */
    int rc = 1;
    if (tpool_new(&pool, nt, err) || model_open(&m, model_path, err) ||
        fwd_new(&f, m, pool, max_rows, km, err))
        goto done;
    if (context + max_rows > m->cfg.seq_len) {
        err_set(err, "--context %ld + %d rows exceed %s's context length %d", context, max_rows,
                model_path, m->cfg.seq_len);
        goto done;
    }
    const char *csv_path = args_str(o, C_COUNT, "--csv", NULL), *db_path = args_str(o, C_COUNT, "--db", NULL);
    if (csv_path) {
        if (file_out_open(&csv_out, csv_path, "CSV", err)) goto done;
        csv = csv_out.f;
    }
    int64_t run_id = 0;
    if (db_path) {
        db_env env;
        db_env_capture(&env);
        char cmdline[2048] = "";
        for (int i = 0; i < argc; i++)
            snprintf(cmdline + strlen(cmdline), sizeof cmdline - strlen(cmdline), "%s%s", i ? " " : "", argv[i]);
        db_run r = {.command = cmdline, .label = args_str(o, C_COUNT, "--label", NULL), .model_path = model_path,
                    .threads = nt, .kernels = kern_mode_name(km), .env = &env};
        if (db_open(&d, db_path, DB_WRITE, err) || db_begin_run(d, &r, &run_id, err)) goto done;
    }
    double bw = -1;
    if (!args_flag(o, C_COUNT, "--no-bandwidth")) bw = measure_read_bandwidth(pool, (size_t)1 << 30, 5);
    const model_config *c = &m->cfg;
    printf("# model %s: dim %d, hidden %d, layers %d, heads %d/%d, vocab %d, %s weights, %.1f MB\n",
           model_path, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size,
           wtype_name(m->main_type), model_weight_bytes(m) / 1e6);
    printf("# %d threads, %s kernels, context %ld; memory read bandwidth %.1f GB/s", nt,
           kern_mode_name(km), context, bw);
    if (bw > 0) printf(" -> T=1 bound %.3f ms/pass", model_weight_bytes(m) / (bw * 1e9) * 1e3);
    printf("\n%6s %12s %12s %10s %10s %8s\n", "rows", "ms/pass", "ms/row", "GFLOP/s", "GB/s", "passes");
    if (csv) fprintf(csv, "rows,seconds\n");
    for (int i = 0; i < n_rows; i++) {
        measure_point p;
        if (measure_forward(f, rows[i], (int)context, seconds, &p, err)) goto done;
        printf("%6d %12.4f %12.4f %10.2f %10.2f %8d\n", p.rows, p.seconds * 1e3, p.seconds * 1e3 / p.rows,
               p.gflops, p.weight_gbps, p.repeats);
        fflush(stdout);
        if (csv) fprintf(csv, "%d,%.9g\n", p.rows, p.seconds);
        if (d) {
            db_cost dc = {p.rows, p.seconds, p.repeats, p.gflops, p.weight_gbps,
                          (int64_t)model_weight_bytes(m), bw};
            if (db_insert_cost(d, run_id, &dc, err)) goto done;
        }
    }
    if (csv && file_out_commit(&csv_out, err)) goto done;
    if (d && db_finish_run(d, run_id, DB_COMPLETE, err)) goto done;
    if (d) fprintf(stderr, "stored as run %lld in %s\n", (long long)run_id, db_path);
    rc = 0;
done:
    if (rc) cmd_fail("cost", err);
    file_out_abort(&csv_out); /* after a commit: nothing; after an error: removes PATH.tmp */
    db_close(d);
    fwd_free(f);
    model_close(m);
    tpool_free(pool);
    return rc;
}
