/* cmd_sweep.c: `decbench sweep`: one run per point of a decoder-parameter grid.
 *
 *   decbench sweep --model FILE --dataset NAME[,NAME] --grid 'lookahead:W=1,2,4;N=3,5;G=W'
 *                  [--grid SPEC ...] [the options of `run`] [--resume SWEEP_ID]
 *
 * Decisions (also in --help):
 *   - Grammar of SPEC: harness/grid.h (lists, a..b ranges, ties such as G=W). Several --grid
 *     options are concatenated; points with the same canonical spec run once. Every point is
 *     validated (dec_create) before anything is measured or written.
 *   - Greedy is measured ONCE, as the sweep's first run; every point is its own run with
 *     baseline_run_id pointing at it and the shared sweep id (db_begin_sweep), so reports and
 *     plots compute each point's speed-up against the same greedy samples. Point runs hold
 *     no greedy samples; exactness is still checked against greedy's output, kept in memory.
 *   - A point whose outputs differ from greedy is marked 'failed' (see `run`), the sweep goes
 *     on and exits 1 at the end (unless --allow-mismatch); failed points are never "best".
 *   - Ctrl-C marks the current run 'incomplete' and exits 130; repeating the command with
 *     --resume SWEEP_ID skips finished runs, resumes the interrupted one and runs the rest
 *     (the grid must be the same: runs are matched to points in order).
 *   - At the end: the ablation table of each grid's decoder (report layout ablation over the
 *     point runs), then per dataset the best point by wall-clock speed-up (end-to-end,
 *     prefill included) and the best by tokens per target step.
 *   - A grid's key `batch` is `run --batch` (batch=1,2,4: every point at each batch size), not
 *     a decoder parameter: the points of each batch size run after a greedy baseline run of
 *     their own at that size (speed-ups are over greedy at the same batch size), the sizes in
 *     the order the grid first gives them. It cannot be combined with --batch. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/commands.h"
#include "harness/grid.h"
#include "harness/report_runs.h"
#include "harness/runner.h"
#include "util/num.h"
#include "results/report/report.h"
#include "util/err.h"

enum { S_GRID = RUNNER_N_OPTS, S_RESUME, S_HELP, S_COUNT };

#define MAX_BATCHES 16 /* batch sizes of a grid's `batch` key */

typedef struct {
    runner r;
    db *d;
    char **canon, **shown; /* the points */
    int n;
    int *batch_of;         /* each point's batch size (grid key `batch`, else --batch) */
    int batches[MAX_BATCHES], n_batches; /* the sizes, in the order the grid gives them */
    int64_t base_of[MAX_BATCHES];        /* the greedy baseline run of each size */
    char base_status[MAX_BATCHES];
    int64_t sweep_id, base_id;
    int64_t *run_of; /* run id of each point, 0 before it starts */
    char *status_of; /* 'c' complete, 'f' failed, 'r' resumable, 0 none */
    char *cmd;
    long mismatches;
    char noise[4096]; /* the best settings' noise warnings, printed under their table */
} sweep;

/* ---- the grid --------------------------------------------------------------------------- */

/* Expands every --grid into point specs (malloc'd strings) and the sweep's spec text. */
/* Takes the key `batch=B` out of point spec p (in place: the rest is shorter) into *batch
 * (untouched without it). */
static int take_batch(char *p, int *batch, char *err) {
    char *colon = strchr(p, ':');
    if (!colon) return 0;
    char rest[1024], *save = NULL;
    snprintf(rest, sizeof rest, "%s", colon + 1);
    size_t len = (size_t)(colon - p);
    p[len] = '\0';
    for (char *t = strtok_r(rest, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strncmp(t, "batch=", 6)) {
            long long b;
            if (num_parse(t + 6, 1, RUNNER_MAX_BATCH, &b, "--grid batch", err)) return -1;
            *batch = (int)b;
            continue;
        }
        len += (size_t)sprintf(p + len, "%c%s", strchr(p, ':') ? ',' : ':', t);
    }
    return 0;
}

static int expand_grids(const args_opt *g, char ***points, int **batch_of, int batch, int *n,
                        char *spec, size_t spec_n, char *err) {
    *points = NULL;
    *batch_of = NULL;
    *n = 0;
    spec[0] = '\0';
    for (int i = 0; i < g->count; i++) {
        grid gr;
        if (grid_parse(&gr, g->values[i], err)) return -1;
        long np = grid_points(&gr);
        char **grown = realloc(*points, sizeof **points * (size_t)(*n + np));
        int *bgrown = grown ? realloc(*batch_of, sizeof **batch_of * (size_t)(*n + np)) : NULL;
        if (grown) *points = grown;
        if (!grown || !bgrown) {
            grid_free(&gr);
            return err_set(err, "out of memory");
        }
        *batch_of = bgrown;
        for (long k = 0; k < np; k++) {
            char p[1024];
            int b = batch;
            if (grid_point(&gr, k, p, sizeof p)) {
                grid_free(&gr);
                return err_set(err, "grid point %ld of %s: too long", k, g->values[i]);
            }
            if (take_batch(p, &b, err)) {
                grid_free(&gr);
                return -1;
            }
            if (b != batch && batch > 1) {
                grid_free(&gr);
                return err_set(err, "--grid %s: a grid's batch key cannot be combined with "
                                    "--batch (which sets every point's)",
                               g->values[i]);
            }
            (*batch_of)[*n] = b;
            if (!((*points)[(*n)++] = strdup(p))) {
                grid_free(&gr);
                return err_set(err, "out of memory");
            }
        }
        grid_free(&gr);
        size_t len = strlen(spec);
        snprintf(spec + len, spec_n - len, "%s%s", i ? " + " : "", g->values[i]);
    }
    if (*n == 0) return err_set(err, "--grid SPEC is required, e.g. --grid 'spec:gamma=1..8'");
    return 0;
}

/* ---- resume ------------------------------------------------------------------------------ */

/* Maps the sweep's existing runs to the baseline and the points, in id order. */
static int load_sweep(sweep *s, const char *spec, char *err) {
    char *stored = NULL, inner[ERR_LEN];
    db_sweep_run *runs = NULL;
    int n = 0, rc = -1;
    if (db_get_sweep(s->d, s->sweep_id, &stored, inner)) {
        err_set(err, "--resume: %s", strncmp(inner, "db_get_sweep: ", 14) ? inner : inner + 14);
        goto done;
    }
    if (strcmp(stored, spec)) {
        err_set(err, "--resume %" PRId64 ": the sweep's grid was '%s', this command's is '%s'",
                s->sweep_id, stored, spec);
        goto done;
    }
    if (db_sweep_runs(s->d, s->sweep_id, &runs, &n, err)) goto done;
    int k = 0, n_base = 0;
    for (int i = 0; i < n; i++) {
        char code = runs[i].status == DB_COMPLETE ? 'c' : runs[i].status == DB_FAILED ? 'f' : 'r';
        if (runs[i].is_baseline) {
            if (n_base == s->n_batches) {
                err_set(err, "--resume %" PRId64 ": the sweep has more baseline runs than the "
                             "grid has batch sizes", s->sweep_id);
                goto done;
            }
            s->base_of[n_base] = runs[i].id;
            s->base_status[n_base++] = code;
        } else if (k < s->n) {
            s->run_of[k] = runs[i].id;
            s->status_of[k++] = code;
        } else {
            err_set(err, "--resume %" PRId64 ": the sweep has more runs than the grid has points",
                    s->sweep_id);
            goto done;
        }
    }
    rc = 0;
done:
    free(stored);
    free(runs);
    return rc;
}

/* ---- measuring one run ------------------------------------------------------------------ */

/* Runs (or resumes, or skips when finished) one run of the sweep. Returns RUNNER_DONE,
 * RUNNER_INTERRUPTED or -1; *run_id is set as soon as the run exists. */
static int one_run(sweep *s, char *const *canon, char *const *shown, int64_t *run_id, char *status,
                   int64_t baseline, const char *title, char *err) {
    if (*run_id && (*status == 'c' || *status == 'f'))
        return runner_check_run(&s->r, s->d, *run_id, canon, 1, err) ? -1 : RUNNER_DONE;
    if (*run_id) {
        if (runner_resume(&s->r, s->d, *run_id, canon, 1, err)) return -1;
    } else {
        db_run run;
        db_env env;
        runner_fill_run(&s->r, &run, &env, s->cmd);
        run.sweep_id = s->sweep_id;
        run.baseline_run_id = baseline;
        run.decoders = canon[0];
        if (db_begin_run(s->d, &run, run_id, err)) return -1;
    }
    runner_result res;
    int m = runner_measure(&s->r, s->d, *run_id, canon, shown, 1, title, &res, err);
    char e2[ERR_LEN];
    db_status fin;
    /* an error leaves the run 'incomplete' with the message as its reason (runner_finish) */
    if (runner_finish(s->d, *run_id, m, &res, s->r.o.allow_mismatch, err, &fin, e2)) {
        if (m < 0)
            cmd_fail("sweep", e2);
        else
            snprintf(err, ERR_LEN, "%s", e2);
        return -1;
    }
    if (m < 0) return -1;
    s->mismatches += res.mismatches + res.samp_suspect; /* a failed sampling check, too */
    *status = fin == DB_COMPLETE ? 'c' : fin == DB_FAILED ? 'f' : 'r';
    return m;
}

/* ---- the summary -------------------------------------------------------------------------- */

static double num(json_t *row, const char *key) {
    json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The point's spec as the user wrote it, for the run id. */
static const char *shown_of(const sweep *s, int64_t run) {
    for (int k = 0; k < s->n; k++)
        if (s->run_of[k] == run) return s->shown[k];
    return "?";
}

/* "0.89x ± 0.06" (just "0.89x" with one repeat). */
static const char *pm(json_t *row, const char *key, const char *sd_key, char *buf, size_t n) {
    double v = num(row, key), sd = num(row, sd_key);
    if (isnan(sd))
        snprintf(buf, n, "%.2fx", v);
    else
        snprintf(buf, n, "%.2fx ± %.2f", v, sd);
    return buf;
}

/* Whether the best wall-clock point stands out of the noise: the runner-up's speed-up must be
 * more than their combined standard deviation (over repeats) below it. Adds a line to
 * s->noise when it does not, or when one repeat gave no sd to judge by. */
static void noise_check(sweep *s, const char *ds, json_t *best, json_t *second) {
    size_t len = strlen(s->noise);
    const char *key = "speedup_e2e", *sd = "speedup_e2e_sd";
    char a[64], b[64];
    if (isnan(num(best, sd))) {
        if (!strstr(s->noise, "one repeat"))
            snprintf(s->noise + len, sizeof s->noise - len,
                     "- with one repeat there is no standard deviation to tell the best setting "
                     "from noise: use --repeats 3 or more\n");
        return;
    }
    if (!second) return;
    double gap = num(best, key) - num(second, key);
    double noise = sqrt(pow(num(best, sd), 2) + pow(num(second, sd), 2));
    if (gap >= noise) return;
    snprintf(s->noise + len, sizeof s->noise - len,
             "- %s: the best, %s (%s), is within the noise of %s (%s): the gap %.2f is below "
             "their combined sd %.2f; more --repeats or prompts would tell them apart\n",
             ds, json_string_value(json_object_get(best, "label")), pm(best, key, sd, a, sizeof a),
             json_string_value(json_object_get(second, "label")), pm(second, key, sd, b, sizeof b),
             gap, noise);
}

/* Best point per dataset by e2e speed-up (mean ± sd over repeats) and by tokens/step among
 * runs ids (one decoder's complete points), from the report's own figures (JSON of the
 * summary layout), so the numbers are the ones reports show. */
static void print_best(sweep *s, const char *name, const int64_t *ids, int n) {
    char *buf = NULL, err[ERR_LEN];
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    report_opts ro = {.run_ids = ids, .n_runs = n, .format = REPORT_JSON, .layout = REPORT_SUMMARY};
    ro.default_specs = decoder_default_specs(&ro.n_default_specs);
    int rc = m ? report_write(s->d, &ro, m, err) : err_set(err, "out of memory");
    if (m) fclose(m);
    json_t *root = rc == 0 ? json_loads(buf, 0, NULL) : NULL;
    free(buf);
    json_t *rows = json_object_get(root, "rows");
    if (!json_is_array(rows)) {
        cmd_fail("sweep", rc ? err : "best settings: unreadable report");
        json_decref(root);
        return;
    }
    size_t n_rows = json_array_size(rows);
    for (size_t i = 0; i < n_rows; i++) {
        const char *ds = json_string_value(json_object_get(json_array_get(rows, i), "dataset"));
        int seen = !ds;
        for (size_t j = 0; j < i && !seen; j++) {
            const char *d2 = json_string_value(json_object_get(json_array_get(rows, j), "dataset"));
            seen = d2 && !strcmp(d2, ds);
        }
        if (seen) continue; /* one pair of lines per dataset, at its first row */
        for (int by = 0; by < 2; by++) {
            const char *key = by ? "tokens_per_step" : "speedup_e2e";
            json_t *best = NULL, *second = NULL;
            for (size_t j = 0; j < n_rows; j++) {
                json_t *row = json_array_get(rows, j);
                const char *d2 = json_string_value(json_object_get(row, "dataset"));
                if (!d2 || strcmp(d2, ds) || isnan(num(row, key))) continue;
                if (!best || num(row, key) > num(best, key)) {
                    second = best;
                    best = row;
                } else if (!second || num(row, key) > num(second, key)) {
                    second = row;
                }
            }
            if (!best) continue;
            json_t *run = json_object_get(best, "run");
            int64_t id = json_is_integer(run) ? json_integer_value(run) : ids[0];
            char e2e[64], dec[64];
            printf("| %s | %s | %s | %s | %" PRId64 " | %s | %s | %.2f |\n", ds, name,
                   by ? "tokens/step" : "wall-clock speed-up", shown_of(s, id), id,
                   pm(best, "speedup_e2e", "speedup_e2e_sd", e2e, sizeof e2e),
                   pm(best, "speedup_decode", "speedup_decode_sd", dec, sizeof dec),
                   num(best, "tokens_per_step"));
            /* tokens/step is deterministic: only the wall-clock winner can be noise */
            if (!by) noise_check(s, ds, best, second);
        }
    }
    json_decref(root);
}

/* The complete point runs of decoder `name`. */
static int runs_of(const sweep *s, const char *name, int64_t *ids) {
    int n = 0;
    size_t len = strlen(name);
    for (int k = 0; k < s->n; k++)
        if (s->run_of[k] && s->status_of[k] == 'c' && !strncmp(s->canon[k], name, len) &&
            (s->canon[k][len] == ':' || s->canon[k][len] == '\0'))
            ids[n++] = s->run_of[k];
    return n;
}

/* Ablation table per decoder of the grid(s), then the best points. Failed points (outputs
 * differing from greedy) are left out: a wrong answer is never the best setting. */
static void summary(sweep *s) {
    int64_t *ids = malloc(sizeof *ids * (size_t)s->n);
    char names[16][GRID_NAME_LEN];
    int n_names = 0;
    for (int k = 0; ids && k < s->n && n_names < 16; k++) {
        snprintf(names[n_names], sizeof names[0], "%.*s", (int)strcspn(s->canon[k], ":"),
                 s->canon[k]);
        int seen = 0;
        for (int j = 0; j < n_names && !seen; j++) seen = !strcmp(names[j], names[n_names]);
        int n = seen ? 0 : runs_of(s, names[n_names], ids);
        if (n == 0) continue;
        report_opts ro = {.run_ids = ids,
                          .n_runs = n,
                          .format = REPORT_MARKDOWN,
                          .layout = REPORT_ABLATION,
                          .ablation_decoder = names[n_names++]};
        ro.default_specs = decoder_default_specs(&ro.n_default_specs);
        char err[ERR_LEN];
        if (report_write(s->d, &ro, stdout, err)) cmd_fail("sweep", err);
    }
    if (n_names == 0) {
        fprintf(stderr, "decbench sweep: no point completed without a mismatch: no best setting\n");
        free(ids);
        return;
    }
    printf("\n## Best settings (sweep %" PRId64 ", greedy baseline run %" PRId64 ")\n\n"
           "wall-clock speed-up = end-to-end (prefill included) over greedy; tokens/step = tokens "
           "per target forward pass.\n\n",
           s->sweep_id, s->base_id);
    printf("| dataset | decoder | best by | point | run | speed-up e2e | speed-up decode | "
           "tokens/step |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n_names; i++) print_best(s, names[i], ids, runs_of(s, names[i], ids));
    if (s->noise[0]) {
        printf("\nNoise (speed-up ± sample sd over repeats):\n\n%s", s->noise);
        fprintf(stderr, "decbench sweep: warning: a best setting is not clear of the noise (see "
                        "\"Noise\" under the best settings)\n");
    }
    fflush(stdout);
    free(ids);
}

/* ---- the command -------------------------------------------------------------------------- */

/* The batch sizes of the points, in the order the grid first gives them. */
static int batch_sizes(sweep *s, const int *batch_of, int n, int shard, char *err) {
    for (int k = 0; k < n; k++) {
        int seen = 0;
        for (int j = 0; j < s->n_batches && !seen; j++) seen = s->batches[j] == batch_of[k];
        if (seen) continue;
        if (s->n_batches == MAX_BATCHES)
            return err_set(err, "--grid: more than %d batch sizes", MAX_BATCHES);
        if (batch_of[k] > 1 && shard)
            return err_set(err, "--grid batch cannot be combined with --shard: a shard's units "
                                "are single samples, a batch decodes B prompts together");
        s->batches[s->n_batches++] = batch_of[k];
    }
    return 0;
}

/* The points' canonical specs (runner_specs: a point given twice at one batch size runs
 * once), grouped by batch size in the order of s->batches, with each one's size. */
static int group_points(sweep *s, char **points, const int *batch_of, int n, char *err) {
    const char **group = malloc(sizeof *group * (size_t)(n ? n : 1));
    s->batch_of = malloc(sizeof *s->batch_of * (size_t)(n ? n : 1));
    s->canon = calloc((size_t)(n ? n : 1), sizeof *s->canon);
    s->shown = calloc((size_t)(n ? n : 1), sizeof *s->shown);
    int rc = group && s->batch_of && s->canon && s->shown ? 0 : err_set(err, "out of memory");
    for (int j = 0; rc == 0 && j < s->n_batches; j++) {
        int m = 0, got = 0;
        for (int k = 0; k < n; k++)
            if (batch_of[k] == s->batches[j]) group[m++] = points[k];
        char **canon = NULL, **shown = NULL;
        s->r.o.batch = s->batches[j]; /* what runner_specs checks the specs against */
        rc = runner_specs(&s->r, group, m, 0, &canon, &shown, &got, err);
        for (int i = 0; rc == 0 && i < got; i++) {
            s->canon[s->n] = canon[i], s->shown[s->n] = shown[i];
            s->batch_of[s->n++] = s->batches[j];
        }
        free(canon), free(shown);
    }
    free(group);
    return rc;
}

static int run_sweep(sweep *s, int64_t resume, const char *spec, char *err) {
    char **gcanon = NULL, **gshown = NULL;
    int ng = 0, rc = -1;
    char title[96];
    if (runner_check_files(&s->r, NULL, 0, err) ||
        runner_specs(&s->r, (const char *const[]){"greedy"}, 1, 0, &gcanon, &gshown, &ng, err) ||
        runner_make_parent(s->r.o.db_path, err) || db_open(&s->d, s->r.o.db_path, DB_WRITE, err))
        goto done;
    if (resume) {
        s->sweep_id = resume;
        if (load_sweep(s, spec, err)) goto done;
    } else if (db_begin_sweep(s->d, spec, s->r.datasets, &s->sweep_id, err)) {
        goto done;
    }
    runner_catch_signals();
    fprintf(stderr,
            "decbench sweep: sweep %" PRId64
            " in %s: greedy baseline + %d point(s), %d prompt(s)\n",
            s->sweep_id, s->r.o.db_path, s->n, s->r.n_prompts);
    if (s->r.shard.n)
        fprintf(stderr, "decbench sweep: shard %d/%d: %ld of the %ld samples (greedy included)\n",
                s->r.shard.i, s->r.shard.n, s->r.shard.samples,
                (long)s->r.n_prompts * (s->n + 1) * s->r.o.repeats);
    int m = RUNNER_DONE;
    /* per batch size (one without a grid key `batch`): its greedy baseline, then its points */
    for (int j = 0; m == RUNNER_DONE && j < s->n_batches; j++) {
        s->r.o.batch = s->batches[j];
        if (s->n_batches > 1)
            snprintf(title, sizeof title, "sweep %" PRId64 " baseline (batch %d)", s->sweep_id,
                     s->batches[j]);
        else
            snprintf(title, sizeof title, "sweep %" PRId64 " baseline", s->sweep_id);
        m = one_run(s, gcanon, gshown, &s->base_of[j], &s->base_status[j], 0, title, err);
        for (int k = 0; m == RUNNER_DONE && k < s->n; k++) {
            if (s->batch_of[k] != s->batches[j]) continue;
            snprintf(title, sizeof title, "sweep %" PRId64 " point %d/%d", s->sweep_id, k + 1,
                     s->n);
            m = one_run(s, &s->canon[k], &s->shown[k], &s->run_of[k], &s->status_of[k],
                        s->base_of[j], title, err);
        }
    }
    s->base_id = s->base_of[0];
    rc = m;
done:
    runner_free_specs(gcanon, gshown, ng);
    return rc;
}

int cmd_sweep(int argc, char **argv) {
    args_opt o[S_COUNT];
    runner_options(o);
    o[S_GRID] =
        (args_opt){.name = "--grid",
                   .alias = "-g",
                   .takes_value = 1,
                   .metavar = "SPEC",
                   .help = "decoder grid NAME:KEY=VALUES;KEY=VALUES, repeatable (see below)"};
    o[S_RESUME] = (args_opt){.name = "--resume",
                             .alias = NULL,
                             .takes_value = 1,
                             .metavar = "SWEEP_ID",
                             .help = "continue sweep SWEEP_ID (same options and grid)"};
    o[S_HELP] = (args_opt){.name = "--help", .alias = "-h", .help = "this help"};
    char err[ERR_LEN], spec[4096];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, S_COUNT, pos, 0, &n_pos, err)) return cmd_usage("sweep", err);
    if (args_flag(o, S_COUNT, "--help")) {
        args_usage(
            "decbench sweep --model FILE --dataset NAME --grid SPEC [--grid SPEC ...] [options]", o,
            S_COUNT);
        printf(
            "grid SPEC: NAME:KEY=VALUES;KEY=VALUES...  VALUES: 1,2,4 | 1..8 | a word | another "
            "KEY\n"
            "  (a tie), e.g. 'lookahead:W=1,2,4,8,16;N=2,3,5,7;G=W'  'spec:gamma=1..8'\n"
            "  'ouroboros:K=0,1,3,5'. Quote it: ';' ends a shell command. First key varies "
            "slowest.\n"
            "greedy runs once as the baseline run; each point is its own run (baseline_run_id,\n"
            "sweep id). At the end: ablation tables and the best point per dataset by wall-clock\n"
            "(end-to-end) speed-up and by tokens per step.\n"
            "The key batch is run's --batch ('pld:k=5;batch=1,2,4'): each batch size's points run\n"
            "after a greedy baseline run at that size (not with --batch).\n");
        runner_help();
        printf("decoders:\n%s", dec_help());
        return 0;
    }
    sweep s;
    memset(&s, 0, sizeof s);
    runner_opts ro;
    long resume;
    char **points = NULL;
    int *point_batch = NULL;
    int n_points = 0, rc = 1;
    if (runner_opts_get(o, S_COUNT, &ro, err) ||
        args_int(o, S_COUNT, "--resume", 0, 1, INT64_MAX, &resume, err) ||
        expand_grids(args_get(o, S_COUNT, "--grid"), &points, &point_batch, ro.batch, &n_points,
                     spec, sizeof spec, err) ||
        batch_sizes(&s, point_batch, n_points, ro.shard_n, err)) {
        cmd_fail("sweep", err);
        runner_free_specs(points, NULL, n_points);
        free(point_batch);
        return 2;
    }
    for (int k = 0; k < n_points; k++) {
        runner_opts at = ro;
        at.batch = point_batch[k];
        if (runner_batch_spec(&at, points[k], err)) {
            cmd_fail("sweep", err);
            runner_free_specs(points, NULL, n_points);
            free(point_batch);
            return 2;
        }
    }
    s.cmd = runner_command_line(argc, argv);
    if (runner_open(&s.r, &ro, err) || group_points(&s, points, point_batch, n_points, err) ||
        runner_shard_plan(&s.r, s.canon, s.n, err)) {
        cmd_fail("sweep", err);
        goto out;
    }
    s.run_of = calloc((size_t)s.n, sizeof *s.run_of);
    s.status_of = calloc((size_t)s.n, 1);
    if (!s.run_of || !s.status_of) {
        cmd_fail("sweep", "out of memory");
        goto out;
    }
    int m = run_sweep(&s, resume, spec, err);
    if (m < 0) {
        cmd_fail("sweep", err);
    } else if (m == RUNNER_INTERRUPTED) {
        fprintf(stderr,
                "decbench sweep: interrupted: sweep %" PRId64 " is incomplete; continue it "
                "with:\n  %s --resume %" PRId64 "\n",
                s.sweep_id, s.cmd ? s.cmd : "decbench sweep ...", s.sweep_id);
        rc = 130;
    } else {
        summary(&s);
        if (s.mismatches)
            fprintf(stderr,
                    "decbench sweep: %ld sample(s) DIFFER from greedy (see MISMATCH above)%s\n",
                    s.mismatches, ro.allow_mismatch ? "" : "; those points are marked failed");
        fprintf(stderr,
                "decbench sweep: sweep %" PRId64 " done: baseline run %" PRId64
                ", %d point run(s)\n",
                s.sweep_id, s.base_id, s.n);
        int failed = 0;
        for (int k = 0; k < s.n; k++) failed += s.status_of[k] == 'f';
        if (failed) fprintf(stderr, "decbench sweep: %d point run(s) failed\n", failed);
        rc = failed > 0;
    }
out:
    runner_free_specs(points, NULL, n_points);
    free(point_batch);
    free(s.batch_of);
    runner_free_specs(s.canon, s.shown, s.n);
    free(s.run_of);
    free(s.status_of);
    free(s.cmd);
    db_close(s.d);
    runner_close(&s.r);
    return rc;
}
