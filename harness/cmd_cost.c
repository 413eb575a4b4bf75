/* cmd_cost.c: `decbench cost`: forward-pass latency on this machine, the cost curve
 * t(rows, context, logit rows) every decoder's speed-up depends on.
 *
 * A decoder that feeds R rows per step and gains A tokens per step beats greedy only if
 * t(R) / A < t(1). A pass's latency also grows with the committed context its rows attend to,
 * and with the rows whose logits it computes (the classifier is a fifth of a 110M model's
 * weights; lookahead and Ouroboros read only some rows' logits). So the curve is a grid
 * (harness/measure.h): for each context of --context, every rows value of --rows with the
 * logits of one row, and at the first context also with the logits of every row; results/report/cost.h
 * interpolates it. Each point is the mean latency of one pass (a chain after `context`
 * committed tokens), with the achieved GFLOP/s (matrix products only) and the weight traffic in
 * GB/s (weight bytes / latency: at T=1 a pass reads every weight once, so this is the
 * bandwidth the pass achieves), and its GFLOP/s as a share of the machine's int8 and f32 peaks
 * (harness/measure.h, measure_peak_of: the ISA's ops per cycle, the cores, the measured clock).
 * It also measures the machine's streaming-read bandwidth, the bound a T=1 pass cannot beat.
 * --csv writes the grid (format: results/report/cost.h) for `report --project-cost`; --db stores it in
 * a run (the model and machine are the run's). The model's context is raised to what the grid
 * needs, up to the length it was trained for. With --batch B > 1 a point is a pass of B
 * sequences: --csv writes the curve's version 3 (the batch on every line), --db stores it in a
 * run of batch B (runs.batch), and a projection priced on it is over greedy serving B
 * sequences (results/report/cost.h, batched curves). */
/* --bandwidth-rounds also gives the one-row pass against its whole bound: the weights and the keys
 * and values it reads at that context (--kv-type: f32 or f16) over the read rate. A context is
 * reached by computing its first 64 positions and repeating their keys and values
 * (harness/measure.c, reach_context): a pass's time does not depend on the values it reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/cost_head.h"
#include "harness/measure.h"
#include "harness/session.h"
#include "model/kernels/kernels.h"
#include "model/loader/model_file.h"
#include "results/db/db.h"
#include "util/err.h"
#include "util/file.h"

enum {
    C_MODEL,
    C_ROWS,
    C_CONTEXT,
    C_THREADS,
    C_KERN,
    C_KV,
    C_SECONDS,
    C_CSV,
    C_DB,
    C_NOBW,
    C_BWROUNDS,
    C_LABEL,
    C_LOGITS,
    C_BATCH,
    C_HEAD,
    C_HELP,
    C_COUNT
};

typedef struct {
    const model *m;
    FILE *csv;
    db *d;
    int64_t run_id;
    double bw;
    measure_peak peak;
    const cost_head_info *head; /* --head: its weights stand for the model's in the cost table */
} cost_out;

/* p's GFLOP/s as a percentage of a peak (0 when the peak is unknown). */
static double share_of(double gflops, double peak) {
    return peak > 0 ? 100 * gflops / peak : 0;
}

/* A point of passes of several sequences: its row, and in --csv the version 3 line (the batch
 * first: results/report/cost.h), in --db a point of the run whose batch size is the run's. */
static int on_batch_point(cost_out *o, const measure_point *p, char *err) {
    printf("%5d %6d %12.4f %12.4f %12.4f %10.2f %10.2f %8d %8d %7d %12.4f %7.1f %7.1f\n", p->batch,
           p->rows, p->seconds * 1e3, p->seconds * 1e3 / p->batch,
           p->seconds * 1e3 / ((double)p->rows * p->batch), p->gflops, p->weight_gbps, p->repeats,
           p->context, p->logit_rows, p->median * 1e3, share_of(p->gflops, o->peak.int8_gops),
           share_of(p->gflops, o->peak.f32_gflops));
    fflush(stdout);
    if (o->csv)
        fprintf(o->csv, "%d,%d,%.9g,%d,%d\n", p->batch, p->rows, p->seconds, p->context,
                p->logit_rows);
    if (!o->d) return 0;
    db_cost dc = measure_cost_row(p, (int64_t)model_weight_bytes(o->m), o->bw);
    return db_insert_cost(o->d, o->run_id, &dc, err);
}

static int on_point(void *user, const measure_point *p, char *err) {
    cost_out *o = user;
    if (p->batch > 1) return on_batch_point(o, p, err);
    printf("%6d %12.4f %12.4f %10.2f %10.2f %8d %8d %7d %12.4f %7.1f %7.1f\n", p->rows,
           p->seconds * 1e3, p->seconds * 1e3 / p->rows, p->gflops, p->weight_gbps, p->repeats,
           p->context, p->logit_rows, p->median * 1e3, share_of(p->gflops, o->peak.int8_gops),
           share_of(p->gflops, o->peak.f32_gflops));
    fflush(stdout);
    if (o->csv) fprintf(o->csv, "%d,%.9g,%d,%d\n", p->rows, p->seconds, p->context, p->logit_rows);
    if (!o->d) return 0;
    db_cost dc = measure_cost_row(
        p, o->head ? o->head->head_bytes : (int64_t)model_weight_bytes(o->m), o->bw);
    return db_insert_cost(o->d, o->run_id, &dc, err);
}

int cmd_cost(int argc, char **argv) {
    args_opt o[C_COUNT] = {
        [C_MODEL] = {"--model", "-m", 1,
                     "model file (real or synthetic weights; a bare name is looked up in the "
                     "models folder)",
                     "FILE"},
        [C_ROWS] = {"--rows", NULL, 1, "rows per pass (default " MEASURE_DEFAULT_ROWS ")", "LIST"},
        [C_CONTEXT] =
            {"--context", NULL, 1,
             "committed tokens before the measured pass, a list (default " MEASURE_DEFAULT_CONTEXTS
             "; lowered to fit the model)",
             "LIST"},
        [C_THREADS] = {"--threads", "-t", 1, "threads (default: one per CPU of the affinity mask)",
                       "N"},
        [C_KERN] = {"--kernels", NULL, 1, KERNELS_HELP, KERNELS_METAVAR},
        [C_KV] = {"--kv-type", NULL, 1, KV_TYPE_HELP, KV_TYPE_METAVAR},
        [C_SECONDS] = {"--seconds", NULL, 1,
                       "minimum measuring time per point, in seconds (default 0.3; units: 300ms, "
                       "0.3s, 1m)",
                       "S"},
        [C_CSV] = {"--csv", NULL, 1, "also write the grid to this file (for report --project-cost)",
                   "FILE"},
        [C_DB] = {"--db", NULL, 1, "also store the curve as a run in this database", "FILE"},
        [C_NOBW] = {"--no-bandwidth", NULL, 0, "skip the memory-bandwidth measurement"},
        [C_BWROUNDS] = {"--bandwidth-rounds", NULL, 1,
                        "after the grid, also N rounds of (one bandwidth read, one-row passes as "
                        "long) at the first context: the one-row pass's share of the bandwidth "
                        "measured interleaved, their median (default 0: not measured)",
                        "N"},
        [C_LABEL] = {"--label", NULL, 1, "label of the stored run", "TEXT"},
        [C_LOGITS] = {"--logits", NULL, 1,
                      "both (default: one row's logits at every context, every row's at the "
                      "first: the classifier's share), last (the last row's only, as a prompt "
                      "pass and llama-bench's pp) or all (every row's, as verification needs)",
                      "both|last|all"},
        [C_BATCH] = {"--batch", NULL, 1,
                     "sequences a pass (default 1): each of B sequences, every one at the context "
                     "with a KV cache of its own, feeds the rows of --rows in one pass that reads "
                     "the weights once (1.." MEASURE_MAX_BATCH_S "; --csv writes it in the "
                     "curve's version 3, --db as the run's batch)",
                     "B"},
        [C_HEAD] = {"--head", NULL, 1,
                    "measure a learned drafter's head pass with the model as its target instead "
                    "(an EAGLE head: fc, its layer and the target's classifier at rows x context x "
                    "logit rows; Medusa heads: rows = logit rows = the heads run, context 0): "
                    "the draft curve of eagle and medusa for report --project-draft-cost",
                    "DIR"},
        [C_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN], note[512];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, C_COUNT, pos, 0, &n_pos, err)) return cmd_usage("cost", err);
    if (args_flag(o, C_COUNT, "--help")) {
        args_usage("decbench cost --model FILE [--rows 1,2,4,...] [--context 32,512] [--csv FILE] "
                   "[--db FILE]",
                   o, C_COUNT);
        printf(
            "measures, per context, t(rows) with the logits of one row, and at the first context\n"
            "also with the logits of every row (the classifier's share); report --project-cost\n"
            "interpolates t(rows, context, logit rows) from these points.\n");
        return 0;
    }
    measure_grid g = {.n_rows = 0};
    long threads, bw_rounds, batch;
    if (measure_parse_list(args_str(o, C_COUNT, "--rows", MEASURE_DEFAULT_ROWS), "--rows", 1, 4096,
                           g.rows, MEASURE_MAX_ROWS, &g.n_rows, err) ||
        measure_parse_list(args_str(o, C_COUNT, "--context", MEASURE_DEFAULT_CONTEXTS), "--context",
                           0, 1 << 20, g.contexts, MEASURE_MAX_CONTEXTS, &g.n_contexts, err) ||
        args_int(o, C_COUNT, "--threads", 0, 0, 1024, &threads, err) ||
        args_int(o, C_COUNT, "--bandwidth-rounds", 0, 0, 1000, &bw_rounds, err) ||
        args_int(o, C_COUNT, "--batch", 1, 1, MEASURE_MAX_BATCH, &batch, err) ||
        args_seconds(o, C_COUNT, "--seconds", 0.3, 0.001, 600, &g.min_seconds, err))
        return cmd_usage("cost", err);
    /* Before 0.2 the value was milliseconds: a bare 300 now means 5 minutes per point. */
    const char *sec_s = args_str(o, C_COUNT, "--seconds", "");
    if (g.min_seconds >= 30 && strspn(sec_s, "0123456789.") == strlen(sec_s))
        fprintf(stderr,
                "decbench cost: note: --seconds %s is %s seconds per point (write %sms for "
                "milliseconds)\n",
                sec_s, sec_s, sec_s);
    static const char *const logit_modes[] = {"both", "last", "all"};
    const char *lm = args_str(o, C_COUNT, "--logits", "both");
    int mode = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(lm, logit_modes[i])) mode = i;
    if (mode < 0) return cmd_usage("cost", "--logits: expected both, last or all");
    g.logits = (measure_logits)mode;
    const char *model_arg = args_str(o, C_COUNT, "--model", NULL);
    if (!model_arg) return cmd_usage("cost", "--model FILE is required");
    /* one point read by an older decbench as "rows,seconds" would be taken, not refused
     * (results/report/cost.h, version 3) */
    if (batch > 1 && args_str(o, C_COUNT, "--csv", NULL) && measure_grid_points(&g) < 2)
        return cmd_usage("cost", "--batch above 1 with --csv: the grid has one point; give two "
                                 "rows or contexts (a batched curve of one point prices every "
                                 "pass alike)");
    char model_path[4096];
    session_find_model(model_arg, model_path, sizeof model_path);
    const char *head_dir = args_str(o, C_COUNT, "--head", NULL);
    if (head_dir && batch > 1) return cmd_usage("cost", "--head measures one sequence: no --batch");
    char head_file[4200] = "";
    if (head_dir) { /* the stored run is the head file's curve, never the target's */
        int kind = draft_head_kind(head_dir, err);
        if (kind < 0) return cmd_fail("cost", err);
        snprintf(head_file, sizeof head_file, "%s/%s", head_dir,
                 kind == DRAFT_HEAD_EAGLE ? "model.safetensors" : "medusa_lm_head.safetensors");
    }
    /* no tokenizer needed: open the model and pool directly */
    kern_mode km;
    kv_type kv;
    if (session_kernels(args_str(o, C_COUNT, "--kernels", NULL), &km, err) ||
        session_kv_type(args_str(o, C_COUNT, "--kv-type", NULL), &kv, err))
        return cmd_usage("cost", err);
    int nt = threads > 0 ? (int)threads : session_cores();
    model *m = NULL;
    tpool *pool = NULL;
    fwd_ctx *f = NULL;
    cost_out out = {.bw = -1};
    file_out csv;
    int rc = 1, csv_open = 0;
    const char *csv_path = args_str(o, C_COUNT, "--csv", NULL),
               *db_path = args_str(o, C_COUNT, "--db", NULL);
    /* the outputs, checked before anything is measured: not the model, not each other */
    file_io io[3] = {{"--csv", csv_path, FILE_IO_OUT, "CSV"},
                     {"--db", db_path, FILE_IO_DB, NULL},
                     {"--model", model_path, FILE_IO_IN, NULL}};
    if (tpool_new(&pool, nt, err) || model_open(&m, model_path, err) || file_check_io(io, 3, err))
        goto done;
    /* the context the grid needs, within what the model was trained for (its default is capped
     * at MODEL_DEFAULT_CTX); beyond that, measure_grid_fit lowers the contexts */
    int need = g.contexts[g.n_contexts - 1] + g.rows[g.n_rows - 1];
    if (need > m->cfg.seq_len &&
        model_set_context(m, need < m->cfg.ctx_train ? need : m->cfg.ctx_train, err))
        goto done;
    km = kern_mode_resolve(km, m, NULL);
    model_set_kv(m, kv);
    if (measure_grid_fit(&g, m->cfg.seq_len, note, sizeof note, err) ||
        fwd_new(&f, m, pool, g.rows[g.n_rows - 1], km, err))
        goto done;
    out.m = m;
    if (note[0]) fprintf(stderr, "decbench cost: %s\n", note);
    if (csv_path) {
        if (file_out_open(&csv, csv_path, "CSV", err)) goto done;
        csv_open = 1;
        out.csv = csv.f;
    }
    if (db_path) {
        db_env env;
        db_env_capture(&env);
        char cmdline[2048] = "";
        for (int i = 0; i < argc; i++)
            snprintf(cmdline + strlen(cmdline), sizeof cmdline - strlen(cmdline), "%s%s",
                     i ? " " : "", argv[i]);
        db_run r = {.command = cmdline,
                    .label = args_str(o, C_COUNT, "--label", NULL),
                    .model_path = head_dir ? head_file : model_path,
                    /* a head's curve holds its target's classifier: tune reuses it only for that target */
                    .draft_path = head_dir ? model_path : NULL,
                    .threads = nt,
                    .kernels = kern_mode_name(km),
                    .kv_type = kv_type_name(kv),
                    .env = &env,
                    .batch = (int)batch};
        if (db_open(&out.d, db_path, DB_WRITE, err) || db_begin_run(out.d, &r, &out.run_id, err))
            goto done;
    }
    if (!args_flag(o, C_COUNT, "--no-bandwidth"))
        out.bw = measure_read_bandwidth(pool, (size_t)1 << 30, 5);
    measure_peak_of(nt, &out.peak);
    const model_config *c = &m->cfg;
    printf("# model %s: dim %d, hidden %d, layers %d, heads %d/%d, vocab %d, %s weights, %.1f MB\n",
           model_path, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size,
           wtype_name(m->main_type), model_weight_bytes(m) / 1e6);
    /* whether the int8b tiles' far prefetches ran (kernels.h): a CPU model's default */
    const int far = km == KERN_EXACT_INT8B && kern_far_prefetch_issued();
    printf("# %d threads, %s kernels,%s %d points; memory read bandwidth %.1f GB/s", nt,
           kern_mode_name(km), far ? " far L2 prefetches," : "", measure_grid_points(&g), out.bw);
    if (out.bw > 0)
        printf(" -> T=1 bound %.3f ms/pass", model_weight_bytes(m) / (out.bw * 1e9) * 1e3);
    printf("\n# KV cache %s: %zu bytes a position (keys and values, all layers)%s", kv_type_name(kv),
           fwd_kv_bytes(f, 1), fwd_kv_huge(f) ? ", in 2 MB pages" : "");
    printf("\n# peak: %.0f GOPS int8, %.0f GFLOP/s f32 (%s: %.0f and %.0f per cycle and core, %d "
           "cores at %.2f GHz measured); int8%% and f32%%: each point's GFLOP/s of them\n",
           out.peak.int8_gops, out.peak.f32_gflops, out.peak.what, out.peak.int8_per_cycle,
           out.peak.f32_per_cycle, out.peak.cores, out.peak.ghz);
    if (batch > 1) {
        printf("# batch %ld: each pass evaluates %ld sequences of `rows` rows, each after `context` "
               "positions of its own KV cache, computing `logits` rows' logits each; ms/seq is "
               "ms/pass / %ld, ms/row per row of all of them\n",
               batch, batch, batch);
        printf("%5s %6s %12s %12s %12s %10s %10s %8s %8s %7s %12s %7s %7s\n", "batch", "rows",
               "ms/pass", "ms/seq", "ms/row", "GFLOP/s", "GB/s", "passes", "context", "logits",
               "median ms", "int8%", "f32%");
    } else
        printf("%6s %12s %12s %10s %10s %8s %8s %7s %12s %7s %7s\n", "rows", "ms/pass", "ms/row",
               "GFLOP/s", "GB/s", "passes", "context", "logits", "median ms", "int8%", "f32%");
    if (out.csv && batch > 1)
        fprintf(out.csv,
                "# decbench cost curve v3: seconds per forward pass of `batch` sequences, each "
                "feeding `rows` rows after `context` committed tokens of its own cache and "
                "computing `logit_rows` rows' logits\n# model %s, %d threads, %s kernels\n"
                "batch,rows,seconds,context,logit_rows\n",
                model_path, nt, kern_mode_name(km));
    else if (out.csv)
        fprintf(out.csv,
                "# decbench cost curve v2: seconds per forward pass of `rows` rows after `context` "
                "committed "
                "tokens, computing `logit_rows` rows' logits\n# model %s, %d threads, %s kernels\n"
                "rows,seconds,context,logit_rows\n",
                model_path, nt, kern_mode_name(km));
    if (head_dir) {
        cost_head_info hi; /* filled before the first point (cost_head.h) */
        out.head = &hi;
        printf("# head %s (the draft curve of eagle and medusa; the model is its target)\n",
               head_dir);
        if (out.csv) fprintf(out.csv, "# head %s\n", head_dir);
        if (cost_head_grid(head_dir, m, pool, &g, on_point, &out, &hi, err)) goto done;
    } else if (measure_cost_grid_batch(f, (int)batch, &g, on_point, &out, err))
        goto done;
    if (bw_rounds > 0) {
        measure_share sh;
        if (measure_bandwidth_share(f, pool, (size_t)1 << 30, (int)bw_rounds, g.contexts[0], &sh,
                                    err))
            goto done;
        printf("# one-row pass against the read bandwidth, interleaved, %d rounds at context %d: "
               "%.1f%% (rounds %.1f-%.1f%%); read %.1f GB/s, pass %.1f GB/s of weights "
               "(medians)\n",
               sh.rounds, g.contexts[0], 100 * sh.share, 100 * sh.share_lo, 100 * sh.share_hi,
               sh.probe_gbps, sh.pass_gbps);
        printf("# the same passes against their bound, the weights and the %s KV cache's %.1f MB "
               "(context %d + 1) read at the probe's rate: pass %.3f ms, bound %.3f ms, ratio "
               "%.3f (rounds %.3f-%.3f)\n",
               kv_type_name(kv), sh.kv_bytes / 1e6, g.contexts[0], sh.pass_s * 1e3,
               sh.bound_s * 1e3, sh.ratio, sh.ratio_lo, sh.ratio_hi);
    }
    if (out.d && db_finish_run(out.d, out.run_id, DB_COMPLETE, err)) goto done;
    if (csv_open) {
        csv_open = 0;
        if (file_out_commit(&csv, err)) goto done;
    }
    if (out.d) fprintf(stderr, "stored as run %lld in %s\n", (long long)out.run_id, db_path);
    rc = 0;
done:
    if (csv_open) file_out_abort(&csv);
    if (rc) cmd_fail("cost", err);
    if (rc && out.d && out.run_id) db_finish_run(out.d, out.run_id, DB_FAILED, note);
    db_close(out.d);
    fwd_free(f);
    model_close(m);
    tpool_free(pool);
    return rc;
}
