/* cmd_compare.c: `decbench compare BASE HEAD [--tolerance X] [--alpha P] [--gate-tps]`, the CI
 * regression gate.
 *
 * BASE and HEAD are each a database FILE (its latest complete run with samples) or FILE:RUN_ID.
 * The rules are results/report/compare.h's: deterministic figures (output hash, new tokens, steps,
 * rows, drafted, accepted, the match flag, the accept histogram) must be equal per sample; a
 * decoder's speed-up over greedy in the same run fails only when its mean drops by more than the
 * tolerance AND a one-sided Welch t-test over the repeats gives p < alpha; absolute tok/s is
 * reported, judged only with --gate-tps; a sample missing from HEAD fails. The diff (markdown)
 * goes to stdout, the verdict to stderr.
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

enum { C_TOL, C_ALPHA, C_TPS, C_LISTED, C_HELP, C_COUNT };

/* "0.10" or "10%": a fraction in [0, 1) (alpha: in (0, 1)). */
static int parse_fraction(const char *name, const char *s, int open_low, double *out, char *err) {
    char *end;
    double v = strtod(s, &end);
    if (end != s && *end == '%' && end[1] == '\0') v /= 100, end++;
    if (end == s || *end || !isfinite(v) || v < 0 || v >= 1 || (open_low && v == 0))
        return err_set(err, "%s: '%s' is not a fraction in %s1) such as %s", name, s,
                       open_low ? "(0, " : "[0, ", open_low ? "0.05 (or 5%)" : "0.10 (or 10%)");
    *out = v;
    return 0;
}

int cmd_compare(int argc, char **argv) {
    args_opt o[C_COUNT] = {
        [C_TOL] = {"--tolerance", NULL, 1,
                   "the drop of a decoder's mean speed-up over greedy that fails the gate when it "
                   "is also beyond the noise, fraction or percent (default 0.10)",
                   "X"},
        [C_ALPHA] = {"--alpha", NULL, 1,
                     "significance of the speed test: a drop fails only when the one-sided "
                     "Welch t-test over the repeats gives p below this, adjusted for the "
                     "decoders judged (default 0.05)",
                     "P"},
        [C_TPS] = {"--gate-tps", NULL, 0,
                   "judge absolute decode tok/s too, by the same rule (default: reported only; "
                   "it moves with the machine's load)"},
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
        args_usage("decbench compare BASE HEAD [--tolerance X] [--alpha P] [--gate-tps]   (each "
                   "FILE or FILE:RUN_ID)",
                   o, C_COUNT);
        printf(
            "Must be equal per sample (dataset, prompt, decoder spec, repeat): output hash, new\n"
            "tokens, target/draft steps and rows, drafted, accepted, verification steps, match\n"
            "flag, accept histogram. A sample of BASE missing in HEAD fails.\n"
            "Speed: per repeat, each decoder's speed-up over greedy in the same run (greedy's\n"
            "decode time over the common prompts / the decoder's), so the machine's drift\n"
            "cancels. A decoder fails when its mean speed-up drops by more than --tolerance AND\n"
            "a one-sided Welch t-test of head's repeats against base's gives p < --alpha (Holm-\n"
            "adjusted over the decoders); otherwise a drop is \"within noise\". Fewer than %d\n"
            "repeats on a side: not judged (run with --repeats 3 or more). Absolute tok/s is\n"
            "reported, judged only with --gate-tps. Exit 0 pass, 1 regression, 2 error.\n",
            COMPARE_MIN_REPEATS);
        return 0;
    }
    if (n_pos != 2) return cmd_usage("compare", "expected two arguments: BASE HEAD (see --help)");
    compare_opts co = {.tolerance = COMPARE_DEFAULT_TOLERANCE,
                       .alpha = COMPARE_DEFAULT_ALPHA,
                       .gate_tps = args_flag(o, C_COUNT, "--gate-tps")};
    long listed;
    const char *tol = args_str(o, C_COUNT, "--tolerance", NULL),
               *alpha = args_str(o, C_COUNT, "--alpha", NULL);
    if ((tol && parse_fraction("--tolerance", tol, 0, &co.tolerance, err)) ||
        (alpha && parse_fraction("--alpha", alpha, 1, &co.alpha, err)) ||
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
    char speed[256];
    if (res.n_unjudged && !res.n_judged)
        snprintf(speed, sizeof speed,
                 "speed not judged (not enough repeats or no greedy: see the "
                 "table)");
    else
        snprintf(speed, sizeof speed,
                 "%d decoder spec(s) judged for speed (drop > %.0f%% with p < %.2g fails)%s",
                 res.n_judged, 100 * co.tolerance, co.alpha,
                 res.n_unjudged ? ", some not judged (see the table)" : "");
    if (!res.regression) {
        fprintf(stderr, "decbench compare: pass: %ld common sample(s) equal, %s\n", res.n_common,
                speed);
        return COMPARE_EXIT_PASS;
    }
    fprintf(stderr,
            "decbench compare: REGRESSION: %ld sample(s) with a deterministic difference, %ld "
            "missing in HEAD, %d decoder spec(s) slower (a drop > %.0f%% with p < %.2g; %ld "
            "common samples)\n",
            res.n_det_diff, res.n_only_base, res.n_speed_fail, 100 * co.tolerance, co.alpha,
            res.n_common);
    return COMPARE_EXIT_REGRESSION;
}
