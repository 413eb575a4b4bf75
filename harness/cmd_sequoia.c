/* cmd_sequoia.c: `decbench sequoia`: Sequoia's tree for an acceptance vector, and with a cost
 * curve the budget that maximises tokens per second (decoders/sequoia.h).
 *
 *   decbench sequoia --accept P0/P1/... [--nodes N] [--depth D]
 *                    [--cost SOURCE [--context C] [--draft-seconds S]]
 *
 * Without --cost: the best tree of at most N nodes and depth D, its expected accepted tokens per
 * step, and each depth's nodes as their paths of sibling ranks ("01": the second candidate below
 * the first). With --cost (a curve of `decbench cost`: CSV or DATABASE[:RUN], as report
 * --project-cost reads it): the budget n <= N and depth d <= D maximising (expected accepted + 1)
 * / (t(n + 1 rows at context C, every row's logits) + d S), S the drafter's seconds per depth
 * (0: a drafter without a model, as Token Recycling's matrix), and that tree. The last line is
 * the decoder parameters to pass: tree:mode=sequoia,<them> or recycle:tree=sequoia,<them>.
 *
 * The vector: run a one-level tree, which offers every rank at every drafting step (`decbench
 * run ... --decoder tree:shape=4`, recycle:tree=uniform,shape=4,
 * suffix:shape=sequoia,levels=1,budget=8,accept=... or the same for rest), then
 * p[r] = accept_rank<r> / drafting_steps (the last, accept_rank3up, stands for rank 3). --fit
 * DATABASE[:RUN] reads those sums from the run (the newest complete one by default) and takes
 * the vector from them: the one spec of the run that is not greedy, or the one --decoder names.
 * With the offered_rank counters (every tree decoder stores them) the run may be of any tree:
 * p[r] = accept_rank<r> / offered_rank<r>, the candidates of rank r the verifier compared below
 * a node it reached; runs stored without them need a one-level tree (drafting_steps then counts
 * the offers), and the fit refuses a deeper one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "decoders/sequoia.h"
#include "harness/args.h"
#include "harness/commands.h"
#include "results/db/db.h"
#include "results/report/cost.h"
#include "util/err.h"

enum { O_ACCEPT, O_FIT, O_DECODER, O_NODES, O_DEPTH, O_COST, O_CONTEXT, O_DRAFT, O_HELP, O_N };

/* The spec of run `run` that `want` names (a spec, compared in its canonical form, or a decoder
 * name that one spec of the run has), or without want the one spec that is not greedy; into
 * *spec (malloc'd). */
static int pick_spec(db *d, int64_t run, const char *want, char **spec, char *err) {
    char **specs;
    int n, exact = -1, named = -1, n_named = 0;
    dec_info info;
    if (want && strchr(want, ':')) {
        if (dec_describe(want, &info, err)) return -1;
        want = info.spec;
    }
    if (db_run_specs(d, run, &specs, &n, err)) return -1;
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(specs[i], ":");
        if (want && !strcmp(specs[i], want))
            exact = i;
        else if (want ? strlen(want) == len && !strncmp(specs[i], want, len)
                      : strcmp(specs[i], "greedy") != 0)
            named = named < 0 ? i : named, n_named++;
    }
    const int found = exact >= 0 ? exact : named, many = exact < 0 && n_named > 1;
    char list[1024] = "";
    for (int i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", specs[i]);
    int rc = 0;
    if (found < 0)
        rc = err_set(err, "--fit: run %lld has no %s (it holds: %s)", (long long)run,
                     want ? want : "decoder but greedy", n ? list : "no samples");
    else if (many)
        rc = err_set(err, "--fit: run %lld holds several %s (%s): name one with --decoder SPEC",
                     (long long)run, want ? want : "decoders", list);
    else if (!(*spec = strdup(specs[found])))
        rc = err_set(err, "out of memory");
    db_strings_free(specs, n);
    return rc;
}

/* --fit SOURCE: the acceptance vector of a run's spec into p/k and as text into acc (n_acc
 * bytes): p[r] = accept_rank<r> / offered_rank<r> (any tree), or, for runs stored without the
 * offered counters, accept_rank<r> / drafting_steps (a one-level tree only). */
static int fit_vector(const char *source, const char *want, double *p, int *k, char *acc,
                      size_t n_acc, char *err) {
    char path[4096], *spec = NULL;
    int64_t run;
    db *d;
    if (db_split_source(source, path, sizeof path, &run, err) || db_open(&d, path, DB_READ, err))
        return -1;
    static const char *const names[] = {
        "accept_rank0",  "accept_rank1",  "accept_rank2",  "accept_rank3up",        "offered_rank0",
        "offered_rank1", "offered_rank2", "offered_rank3up", "samples.drafting_steps"};
    double sum[9], *acc_r = sum, *off = sum + 4, steps;
    long samples;
    int rc = (run == 0 && db_latest_run(d, DB_STATUS_MASK(DB_COMPLETE), 1, 0, &run, err)) ||
             pick_spec(d, run, want, &spec, err) ||
             db_counter_sums(d, run, spec, names, 9, sum, &samples, err);
    db_close(d);
    steps = sum[8];
    double accepted = 0, offered = 0;
    for (int r = 0; rc == 0 && r < 4; r++) accepted += acc_r[r], offered += off[r];
    if (rc == 0 && accepted <= 0)
        rc = err_set(err,
                     "--fit: %s in run %lld accepted no token counted by rank (tree, recycle and "
                     "shape=sequoia's suffix and rest count them)",
                     spec, (long long)run);
    if (rc == 0 && offered <= 0 && accepted > steps)
        rc = err_set(err,
                     "--fit: %s in run %lld has no offered_rank counters (stored by an older "
                     "decbench) and accepted %.0f tokens in %.0f drafting steps: its tree is "
                     "deeper than one level; run a one-level tree (tree:shape=4, ...)",
                     spec, (long long)run, accepted, steps);
    if (rc == 0) {
        double total = 0;
        for (int r = 0; r < 4; r++) {
            const double den = offered > 0 ? off[r] : steps;
            p[r] = den > 0 ? acc_r[r] / den : 0;
            total += p[r];
        }
        *k = 4;
        while (*k > 1 && p[*k - 1] <= 0) (*k)--;
        acc[0] = '\0';
        for (int r = 0; r < *k; r++) /* rounded down so that the printed vector sums to <= 1 */
            snprintf(acc + strlen(acc), n_acc - strlen(acc), "%s%.3f", r ? "/" : "",
                     floor(p[r] / (total > 1 ? total : 1) * 1000) / 1000);
        printf("fitted from run %lld, %s (%ld samples): accept_rank %.0f %.0f %.0f %.0f over ",
               (long long)run, spec, samples, acc_r[0], acc_r[1], acc_r[2], acc_r[3]);
        if (offered > 0)
            printf("offered_rank %.0f %.0f %.0f %.0f", off[0], off[1], off[2], off[3]);
        else
            printf("%.0f drafting steps", steps);
        printf(": accept=%s%s\n", acc, total > 1 ? " (scaled to sum to 1)" : "");
        /* the tree below is the one these printed parameters give */
        rc = sequoia_parse_accept(acc, "--fit", p, k, err);
    }
    free(spec);
    return rc;
}

/* The path of sibling ranks from the root to node i ("01"), into buf. */
static void path_of(const sequoia_node *t, int i, char *buf) {
    int d = t[i].depth;
    buf[d] = '\0';
    for (; i >= 0; i = t[i].parent)
        buf[--d] = (char)(t[i].rank < 10 ? '0' + t[i].rank : 'a' + t[i].rank - 10);
}

static void print_tree(const sequoia_node *t, int n) {
    char path[SEQUOIA_MAX_DEPTH + 1];
    for (int d = 1, i = 0; i < n; d++) {
        int start = i;
        while (i < n && t[i].depth == d) i++;
        printf("depth %d (%d):", d, i - start);
        for (int j = start; j < i; j++) {
            path_of(t, j, path);
            printf(" %s", path);
        }
        printf("\n");
    }
}

int cmd_sequoia(int argc, char **argv) {
    args_opt o[O_N] = {
        [O_ACCEPT] = {.name = "--accept",
                      .takes_value = 1,
                      .metavar = "P0/P1/...",
                      .help = "acceptance by sibling rank: p[r] = accept_rank<r> / "
                              "drafting_steps of a one-level tree's run (this or --fit)"},
        [O_FIT] = {.name = "--fit",
                   .takes_value = 1,
                   .metavar = "DATABASE[:RUN]",
                   .help = "take the vector from a stored tree's run: accept_rank<r> / "
                           "offered_rank<r> (default: the newest complete run)"},
        [O_DECODER] = {.name = "--decoder",
                       .takes_value = 1,
                       .metavar = "SPEC",
                       .help = "with --fit: the run's spec (or decoder name) to fit, when it "
                               "holds more than one besides greedy"},
        [O_NODES] = {.name = "--nodes",
                     .takes_value = 1,
                     .metavar = "N",
                     .help = "the tree's nodes at most; with --cost the largest budget tried "
                             "(default 16, with --cost 64)"},
        [O_DEPTH] = {.name = "--depth",
                     .takes_value = 1,
                     .metavar = "D",
                     .help = "the tree's depth at most (default 6)"},
        [O_COST] = {.name = "--cost",
                    .takes_value = 1,
                    .metavar = "SOURCE",
                    .help =
                        "the target's cost curve (`decbench cost --csv` file, or DATABASE[:RUN])"},
        [O_CONTEXT] = {.name = "--context",
                       .takes_value = 1,
                       .metavar = "C",
                       .help = "the context at which passes are priced (default 256)"},
        [O_DRAFT] = {.name = "--draft-seconds",
                     .takes_value = 1,
                     .metavar = "S",
                     .help = "the drafter's seconds per depth of the tree (default 0)"},
        [O_HELP] = {.name = "--help", .alias = "-h", .help = "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, O_N, pos, 0, &n_pos, err)) return cmd_usage("sequoia", err);
    if (args_flag(o, O_N, "--help")) {
        args_usage("decbench sequoia --accept P0/P1/... | --fit DATABASE[:RUN] [--decoder SPEC] "
                   "[--nodes N] [--depth D] [--cost SOURCE [--context C] [--draft-seconds S]]   "
                   "(Sequoia's tree and budget)",
                   o, O_N);
        return 0;
    }
    const char *acc = args_str(o, O_N, "--accept", NULL), *cost = args_str(o, O_N, "--cost", NULL);
    const char *fit = args_str(o, O_N, "--fit", NULL), *want = args_str(o, O_N, "--decoder", NULL);
    if (!acc == !fit) return cmd_usage("sequoia", "give --accept P0/P1/... or --fit DATABASE[:RUN]");
    if (want && !fit) return cmd_usage("sequoia", "--decoder picks the run's spec for --fit");
    double p[SEQUOIA_MAX_RANKS], draft_s;
    int k;
    long nodes, depth, context;
    char fitted[SEQUOIA_MAX_RANKS * 8];
    if (fit) {
        if (fit_vector(fit, want, p, &k, fitted, sizeof fitted, err))
            return cmd_fail("sequoia", err);
        acc = fitted;
    }
    if ((!fit && sequoia_parse_accept(acc, "--accept", p, &k, err)) ||
        args_int(o, O_N, "--nodes", cost ? 64 : 16, 1, SEQUOIA_MAX_NODES, &nodes, err) ||
        args_int(o, O_N, "--depth", 6, 1, SEQUOIA_MAX_DEPTH, &depth, err) ||
        args_int(o, O_N, "--context", 256, 0, 1 << 24, &context, err) ||
        args_seconds(o, O_N, "--draft-seconds", 0, 0, 3600, &draft_s, err))
        return cmd_usage("sequoia", err);
    if (!cost &&
        (args_get(o, O_N, "--context")->count || args_get(o, O_N, "--draft-seconds")->count))
        return cmd_usage("sequoia", "--context and --draft-seconds price passes: give --cost");
    int n = (int)nodes, d = (int)depth;
    if (cost) {
        cost_curve *c;
        if (cost_curve_load(&c, cost, "--cost", err)) return cmd_fail("sequoia", err);
        double *t = malloc(sizeof(double) * (size_t)(n + 1));
        if (!t) {
            cost_curve_free(c);
            return cmd_fail("sequoia", "out of memory");
        }
        for (int i = 0; i <= n; i++) t[i] = cost_curve_t(c, i + 1, (double)context, i + 1);
        double lo, hi, clo, chi;
        cost_curve_range(c, &lo, &hi, &clo, &chi);
        sequoia_pick best;
        int rc = sequoia_budget(p, k, n, d, t, n + 1, draft_s, &best, err);
        double t1 = t[0];
        free(t);
        cost_curve_free(c);
        if (rc) return cmd_fail("sequoia", err);
        printf("cost curve %s (rows %g..%g measured), context %ld, drafting %g s per depth\n", cost,
               lo, hi, context, draft_s);
        printf("best budget: %d nodes, depth %d: %.3f expected accepted tokens per step, "
               "%.1f tokens/s (greedy %.1f: %.2fx)\n",
               best.n, best.depth, best.expected, best.tokens_per_s, 1 / t1,
               best.tokens_per_s * t1);
        if (best.n + 1 > hi)
            printf("note: %d rows is beyond the curve's measured %g (extrapolated)\n", best.n + 1,
                   hi);
        n = best.n, d = best.depth;
    }
    sequoia_node *tree = malloc(sizeof *tree * (size_t)n);
    double e;
    int n_out;
    if (!tree) return cmd_fail("sequoia", "out of memory");
    if (sequoia_tree(p, k, n, d, tree, &n_out, &e, err)) {
        free(tree);
        return cmd_fail("sequoia", err);
    }
    printf("tree: %d nodes, %.4f expected accepted tokens per step (%.4f with the bonus)\n", n_out,
           e, e + 1);
    print_tree(tree, n_out);
    printf("parameters: nodes=%d,depth=%d,accept=%s\n", n, d, acc);
    free(tree);
    return 0;
}
