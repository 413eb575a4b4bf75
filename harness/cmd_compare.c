/* cmd_compare.c: `decbench compare BASE HEAD [--tolerance X]`, the CI regression gate.
 *
 * BASE and HEAD are each a database FILE (its latest complete run with samples) or FILE:RUN_ID.
 * The rules are results/report/compare.h's: deterministic figures (output hash, new tokens, steps,
 * rows, drafted, accepted, the match flag, the accept histogram) must be equal per sample;
 * decode tok/s per decoder spec may drop by at most the tolerance; a sample missing from HEAD
 * fails. The diff (markdown) goes to stdout, the verdict to stderr.
 * Exit status: 0 pass, 1 regression, 2 error (unreadable file, no such run, no common sample,
 * bad arguments), so a CI script can tell a regression from a broken setup. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "results/report/compare.h"
#include "util/err.h"

enum { C_TOL, C_LISTED, C_HELP, C_COUNT };

/* "0.15" or "15%". */
static int parse_tolerance(const char *s, double *out, char *err) {
    char *end;
    double v = strtod(s, &end);
    if (end != s && *end == '%' && end[1] == '\0') v /= 100, end++;
    if (end == s || *end || !isfinite(v) || v < 0 || v >= 1)
        return err_set(err, "--tolerance: '%s' is not a fraction in [0, 1) such as 0.15 (or 15%%)",
                       s);
    *out = v;
    return 0;
}

int cmd_compare(int argc, char **argv) {
    args_opt o[C_COUNT] = {
        [C_TOL] = {"--tolerance", NULL, 1,
                   "allowed tok/s drop per decoder, fraction or percent (default 0.15)", "X"},
        [C_LISTED] = {"--max-listed", NULL, 1, "differing samples listed in full (default 20)",
                      "N"},
        [C_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[2];
    int n_pos;
    if (args_parse(argc, argv, 2, o, C_COUNT, pos, 2, &n_pos, err))
        return cmd_usage("compare", err);
    if (args_flag(o, C_COUNT, "--help")) {
        args_usage("decbench compare BASE HEAD [--tolerance X]   (each FILE or FILE:RUN_ID)", o,
                   C_COUNT);
        printf(
            "Must be equal per sample (dataset, prompt, decoder spec, repeat): output hash, new\n"
            "tokens, target/draft steps and rows, drafted, accepted, verification steps, match\n"
            "flag, accept histogram. Speed: decode tok/s per decoder spec (ratio of totals over\n"
            "the common samples) fails below base x (1 - tolerance). A sample of BASE missing\n"
            "in HEAD fails. Exit 0 pass, 1 regression, 2 error.\n");
        return 0;
    }
    if (n_pos != 2) return cmd_usage("compare", "expected two arguments: BASE HEAD (see --help)");
    compare_opts co = {.tolerance = COMPARE_DEFAULT_TOLERANCE};
    long listed;
    const char *tol = args_str(o, C_COUNT, "--tolerance", NULL);
    if ((tol && parse_tolerance(tol, &co.tolerance, err)) ||
        args_int(o, C_COUNT, "--max-listed", 20, 1, 1000000, &listed, err))
        return cmd_usage("compare", err);
    co.max_listed = (int)listed;
    compare_result res;
    if (compare_sources(pos[0], pos[1], &co, stdout, &res, err)) {
        fflush(stdout);
        cmd_fail("compare", err);
        return COMPARE_EXIT_ERROR;
    }
    fflush(stdout);
    if (res.machine_differs)
        fprintf(stderr, "decbench compare: warning: %s: speed is not comparable\n", res.warning);
    if (!res.regression) {
        fprintf(stderr,
                "decbench compare: pass: %ld common sample(s), %d decoder spec(s) within "
                "%.0f%%\n",
                res.n_common, res.n_specs, 100 * co.tolerance);
        return COMPARE_EXIT_PASS;
    }
    fprintf(stderr,
            "decbench compare: REGRESSION: %ld sample(s) with a deterministic difference, %ld "
            "missing in HEAD, %d decoder spec(s) slower than %.0f%% allows (%ld common samples)\n",
            res.n_det_diff, res.n_only_base, res.n_speed_fail, 100 * co.tolerance, res.n_common);
    return COMPARE_EXIT_REGRESSION;
}
