/* tune_out.c: what `decbench tune` prints and draws: the ranked table, the "recommended:"
 * lines and the two figures (plots/tune_predicted.gp, plots/tune_frontier.gp). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/tune.h"
#include "util/err.h"
#include "util/file.h"

static int same_decoder(const char *a, const char *b) {
    size_t n = strcspn(a, ":");
    return n == strcspn(b, ":") && !strncmp(a, b, n);
}

/* "1.23x", or "-" for a missing figure. */
static const char *fx(double v, char *buf) {
    if (isnan(v)) return "-";
    snprintf(buf, 16, "%.2fx", v);
    return buf;
}

/* The decoder's name of a spec, into buf. */
static const char *name_of(const char *spec, char *buf, size_t n) {
    snprintf(buf, n, "%.*s", (int)strcspn(spec, ":"), spec);
    return buf;
}

/* What one candidate's line says after the spec: its figures. */
static void figures(const tune_cand *c, char *out, size_t n) {
    char a[16], b[16];
    if (c->finalist && !isnan(c->measured))
        snprintf(out, n, "predicted %s, measured %s", fx(tune_pred(c), a), fx(c->measured, b));
    else
        snprintf(out, n, "predicted %s, probe measured %s; not in the final run",
                 fx(tune_pred(c), a), fx(c->p.measured_e2e, b));
}

void tune_print(const tune *t) {
    const model_config *mc = &t->r.s.target->cfg;
    char at[48] = "";
    if (t->batch > 1) snprintf(at, sizeof at, ", batch %d", t->batch);
    printf("## decbench tune: %s%s%s on %s (%d threads, %s kernels%s%s%s)\n\n", t->r.o.model,
           t->r.o.draft ? " with draft " : "", t->r.o.draft ? t->r.o.draft : "", t->r.datasets,
           t->r.s.threads, kern_mode_name(t->r.s.kernels), t->r.s.kv != KV_F32 ? ", KV cache " : "",
           t->r.s.kv != KV_F32 ? kv_type_name(t->r.s.kv) : "", at);
    printf("Target: %d layers, dim %d, vocabulary %d. Probes: sweep %" PRId64 ", %d prompt(s); ",
           mc->n_layers, mc->dim, mc->vocab_size, t->sweep_id, t->n_probe);
    if (t->final_id)
        printf("final: run %" PRId64 ", %d %s prompt(s)", t->final_id, t->n_final,
               t->held_out ? "held-out" : "probe");
    else
        printf("no final run (the budget)");
    printf("; cost curves: target run %" PRId64, t->cost_run[0]);
    if (t->cost_run[1]) printf(", draft run %" PRId64, t->cost_run[1]);
    static const char *const heads[2] = {"eagle", "medusa"};
    for (int k = 0; k < 2; k++) /* the draft curve of that decoder's probes */
        if (t->head_run[k]) printf(", %s's head run %" PRId64, heads[k], t->head_run[k]);
    printf(" (%s).\n\n", t->r.o.db_path);
    if (t->heads_unpriced[0]) printf("Note: %s.\n\n", t->heads_unpriced);
    if (t->batch > 1)
        printf("Serving batch %d: predicted = the probe's forward passes (one sequence's) priced "
               "on cost curves of passes of %d sequences, each as the probe's, greedy's too, "
               "end-to-end (report --layout projected); measured = throughput (tokens over the "
               "batches' wall time) over greedy's in the final run at --batch %d (report --layout "
               "batch); probe = the probe's own measurement, one sequence at a time (few prompts, "
               "noisy).\n\n",
               t->batch, t->batch, t->batch);
    else
        printf("predicted = the probe's forward passes priced on the cost curves, end-to-end "
               "(report --layout projected); measured = end-to-end speed-up over greedy in the "
               "final run; probe = the probe's own measurement (few prompts, noisy).\n\n");
    printf("| rank | decoder | predicted | measured | probe | tokens/step | rows/step |\n");
    printf("|---:|:---|---:|---:|---:|---:|---:|\n");
    int rank = 0;
    for (int i = 0; i < t->n; i++) {
        const tune_cand *c = &t->c[i];
        if (!c->p.run_id) continue;
        char a[16], b[16], d[16];
        printf("| %d | %s | %s | %s | %s | %.2f | %.1f |\n", ++rank, c->shown, fx(tune_pred(c), a),
               fx(c->measured, b), fx(c->p.measured_e2e, d), c->p.tokens_per_step,
               c->p.rows_per_step);
    }
    int failed = 0, skipped = 0;
    for (int i = 0; i < t->n; i++)
        failed += t->c[i].status == 'f', skipped += t->c[i].status == 's';
    if (failed) {
        printf("\nOutput differed from greedy's (not ranked; see the run's MISMATCH lines):");
        for (int i = 0; i < t->n; i++)
            if (t->c[i].status == 'f') printf(" %s", t->c[i].shown);
        printf("\n");
    }
    if (skipped) {
        printf("\nNot probed (budget):");
        for (int i = 0; i < t->n; i++)
            if (t->c[i].status == 's') printf(" %s", t->c[i].shown);
        printf("\n");
    }
    if (t->skipped_decoders[0]) printf("\nLeft out: %s.\n", t->skipped_decoders);
    printf("\n");

    /* One line per decoder: its finalist, else its best prediction (the list is sorted); the
     * overall answer compares their measurements: the final run's, else the probes'. */
    const tune_cand *best = NULL;
    double best_v = NAN;
    int best_final = 0, best_ok = 0;
    for (int i = 0; i < t->n; i++) {
        const tune_cand *c = &t->c[i];
        if (!c->p.run_id) continue;
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = !(t->c[j].p.run_id && same_decoder(t->c[j].canon, c->canon));
        if (!first) continue;
        const tune_cand *pick = c;
        for (int j = i; j < t->n; j++)
            if (t->c[j].finalist && same_decoder(t->c[j].canon, c->canon)) pick = &t->c[j];
        char name[64], fig[128];
        figures(pick, fig, sizeof fig);
        printf("recommended: %s: %s (%s)\n", name_of(pick->canon, name, sizeof name), pick->shown,
               fig);
        /* the best measurement, the final run's before the probes', and one its projection
         * agrees is faster than greedy before any other */
        int fin = pick->finalist && !isnan(pick->measured), ok = tune_pred(pick) > 1;
        double v = fin ? pick->measured : pick->p.measured_e2e;
        if (!isnan(v) && (!best || fin > best_final ||
                          (fin == best_final && (ok > best_ok || (ok == best_ok && v > best_v)))))
            best = pick, best_v = v, best_final = fin, best_ok = ok;
    }
    char a[16], b[16];
    const char *where = best_final ? "in the final run" : "on the probe prompts";
    if (!best) {
        printf("recommended: overall: greedy (no setting was measured within the budget)\n");
    } else if (best_v > 1 + TUNE_MARGIN && !(tune_pred(best) > 1 + TUNE_MARGIN)) {
        /* a projection within the margin cannot back a measured gain beyond it (a decoder that
         * seldom drafts, as sam at threshold 5, projects at 1.01-1.02x) */
        printf("recommended: overall: greedy. The setting measured fastest, %s (%s %s), "
               "projects at %s from its passes: a measurement this far from its projection says "
               "the machine was busy while it ran; run tune again with a larger --budget\n",
               best->shown, fx(best_v, a), where, fx(tune_pred(best), b));
    } else if (best_v > 1 + TUNE_MARGIN) {
        printf("recommended: overall: %s: measured %s over greedy end-to-end %s, predicted %s\n",
               best->shown, fx(best_v, a), where, fx(tune_pred(best), b));
    } else {
        printf("recommended: overall: greedy. Nothing beats greedy here: the best, %s, measured "
               "%s %s (predicted %s), %s. On this machine, for this model, a pass over more rows "
               "costs more than the steps it saves.\n",
               best->shown, fx(best_v, a), where, fx(tune_pred(best), b),
               best_v > 1 ? "within the noise of greedy" : "slower than greedy");
    }
    fflush(stdout);
}

/* ---- figures ----------------------------------------------------------------------------- */

static void put(FILE *f, double v) {
    if (isnan(v))
        fprintf(f, "\t?");
    else
        fprintf(f, "\t%.6g", v);
}

/* tune_predicted.tsv: block 0 the probes (predicted, the probe's measurement), block 1 (when
 * there was a final run) the final run (predicted, measured there). */
static int write_predicted(const tune *t, FILE *f) {
    fprintf(f, "# decbench tune sweep %" PRId64 ": projected versus measured end-to-end speed-up\n",
            t->sweep_id);
    const char *titles[2] = {"probes (few prompts)", "final run (held-out prompts)"};
    int n[2] = {0, 0};
    for (int blk = 0; blk < 2; blk++)
        for (int i = 0; i < t->n; i++) {
            const tune_cand *c = &t->c[i];
            double y = blk ? c->measured : c->p.measured_e2e;
            if (!c->p.run_id || isnan(tune_pred(c)) || isnan(y)) continue;
            if (!n[blk]++) fprintf(f, "%spredicted\t%s\tdecoder\n", blk ? "\n\n" : "", titles[blk]);
            fprintf(f, "%.6g", tune_pred(c));
            put(f, y);
            fprintf(f, "\t%s\n", c->shown);
        }
    return n[0] ? 0 : -1;
}

/* tune_frontier.tsv: one block per decoder (rows/step, predicted, measured or ?), then the
 * frontier: greedy (1 row, 1x) and the settings no other (greedy included) beats with fewer
 * rows per step. */
static int write_frontier(const tune *t, FILE *f) {
    fprintf(f,
            "# decbench tune sweep %" PRId64 ": predicted end-to-end speed-up versus target "
            "rows per decode step\n",
            t->sweep_id);
    char done[64][64];
    int n_done = 0, blocks = 0;
    for (int i = 0; i < t->n; i++) {
        char name[64];
        if (!t->c[i].p.run_id || isnan(tune_pred(&t->c[i]))) continue;
        name_of(t->c[i].canon, name, sizeof name);
        int seen = 0;
        for (int k = 0; k < n_done && !seen; k++) seen = !strcmp(done[k], name);
        if (seen || n_done == 64) continue;
        snprintf(done[n_done++], sizeof done[0], "%s", name);
        fprintf(f, "%srows_per_step\t%s\tmeasured\tspec\n", blocks++ ? "\n\n" : "", name);
        for (int j = i; j < t->n; j++) {
            const tune_cand *c = &t->c[j];
            if (!c->p.run_id || isnan(tune_pred(c)) || !same_decoder(c->canon, name)) continue;
            fprintf(f, "%.6g", c->p.rows_per_step);
            put(f, tune_pred(c));
            put(f, c->finalist ? c->measured : NAN);
            fprintf(f, "\t%s\n", c->shown);
        }
    }
    if (!blocks) return -1;
    /* the frontier: by rows ascending, each point better than every cheaper one */
    int *idx = malloc(sizeof(int) * (size_t)t->n), n = 0;
    if (!idx) return -1;
    for (int i = 0; i < t->n; i++)
        if (t->c[i].p.run_id && !isnan(tune_pred(&t->c[i]))) idx[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->c[idx[j - 1]].p.rows_per_step > t->c[idx[j]].p.rows_per_step;
             j--) {
            int x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    /* greedy opens it: one row per step, speed-up 1 */
    fprintf(f, "\n\nrows_per_step\tfrontier\tmeasured\tspec\n1\t1\t?\tgreedy\n");
    double top = 1;
    for (int i = 0; i < n; i++) {
        const tune_cand *c = &t->c[idx[i]];
        if (tune_pred(c) <= top) continue;
        top = tune_pred(c);
        fprintf(f, "%.6g\t%.6g\t?\t%s\n", c->p.rows_per_step, top, c->shown);
    }
    free(idx);
    return 0;
}

int tune_plots(const tune *t, const char *out_dir, int render, char *err) {
    char what[FILE_PATH_MAX + 32];
    snprintf(what, sizeof what, "the figures folder %s", out_dir);
    if (runner_make_dir(out_dir, what, err)) return -1; /* --out a/b: folders made as needed */
    static const char *const stems[2] = {"tune_predicted", "tune_frontier"};
    int rc = 0;
    char e[ERR_LEN];
    for (int k = 0; k < 2; k++) { /* both figures are tried; the first failure is reported */
        char path[FILE_PATH_MAX];
        snprintf(path, sizeof path, "%s/%s.tsv", out_dir, stems[k]);
        file_out o;
        int bad = file_out_open(&o, path, "plot data", e);
        if (!bad && (k ? write_frontier(t, o.f) : write_predicted(t, o.f)) != 0) {
            file_out_abort(&o);
            bad = err_set(e, "no probe has a prediction: nothing to draw");
        }
        if (!bad) bad = file_out_commit(&o, e);
        if (!bad && render) bad = report_plot_render_named(stems[k], NULL, out_dir, out_dir, e);
        if (bad && rc == 0) rc = err_set(err, "%s", e);
    }
    return rc;
}
