/* sampling_opts.c: the sampling options of generate, run and sweep (sampling_opts.h). */
#include "harness/sampling_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/num.h"

static const args_opt table[SAMPLING_N_OPTS] = {
    {.name = "--temperature",
     .takes_value = 1,
     .metavar = "T",
     .help = "sample at this temperature (default 0: greedy decoding); see --sampling"},
    {.name = "--top-k", .takes_value = 1, .metavar = "K", .help = "sample among the K most likely tokens (0: all)"},
    {.name = "--top-p",
     .takes_value = 1,
     .metavar = "P",
     .help = "then among the most likely tokens of total probability >= P (1: all)"},
    {.name = "--seed",
     .takes_value = 1,
     .metavar = "S",
     .help = "sampling seed (uint64, default 0; recorded): each prompt starts from it"},
    {.name = "--sampling",
     .takes_value = 1,
     .metavar = "standard|coupled",
     .help = "standard (default: rejection sampling, same distribution as plain sampling) or "
             "coupled (noise fixed by seed and position: every decoder emits plain sampling's "
             "tokens)"},
};

const char sampling_help[] =
    "sampling (--temperature T > 0; README, \"Sampling\"):\n"
    "  the target's distribution is softmax(logits / T) cut to --top-k, then --top-p; greedy\n"
    "  (the one-pass-per-token decoder) draws from it: plain sampling, the reference\n"
    "  --sampling standard  every decoder verifies with the rejection rule (Leviathan et al.;\n"
    "                       several candidates: SpecInfer, as LADE): its output has plain\n"
    "                       sampling's distribution, not its tokens; `run` checks acceptances\n"
    "                       against their expected number instead of comparing tokens\n"
    "  --sampling coupled   the noise of position p is g(seed, p, token) (Gumbel-max): plain\n"
    "                       sampling is a function of the prefix, and every decoder emits\n"
    "                       exactly its tokens for the same seed (checked like greedy's)\n";

void sampling_options(args_opt *o) {
    memcpy(o, table, sizeof table);
}

/* A real option's value in [min, max], or def when absent. */
static int real_opt(const args_opt *o, int n, const char *name, double def, double min, double max,
                    double *out, char *err) {
    const char *v = args_str(o, n, name, NULL);
    *out = def;
    if (!v) return 0;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x))
        return err_set(err, "%s: '%.40s' is not a number", name, v);
    if (x < min || x > max)
        return err_set(err, "%s: %.40s is out of range %g..%g", name, v, min, max);
    *out = x;
    return 0;
}

int sampling_opts_get(const args_opt *o, int n, dec_sampling *s, char *err) {
    memset(s, 0, sizeof *s);
    long k;
    if (real_opt(o, n, "--temperature", 0, 0, 100, &s->temperature, err) ||
        real_opt(o, n, "--top-p", 1, 1e-9, 1, &s->top_p, err) ||
        args_int(o, n, "--top-k", 0, 0, 1 << 30, &k, err))
        return -1;
    s->top_k = (int)k;
    const char *seed = args_str(o, n, "--seed", NULL), *mode = args_str(o, n, "--sampling", NULL);
    if (args_seed(o, n, "--seed", 0, &s->seed, err)) return -1;
    if (mode && dec_sampling_parse_mode(mode, &s->mode))
        return err_set(err, "--sampling: '%.40s' is neither standard nor coupled", mode);
    if (s->temperature == 0) {
        const char *given = args_str(o, n, "--top-k", NULL)   ? "--top-k"
                            : args_str(o, n, "--top-p", NULL) ? "--top-p"
                            : seed                            ? "--seed"
                            : mode                            ? "--sampling"
                                                              : NULL;
        if (given)
            return err_set(err, "%s has no effect without --temperature T > 0 (greedy decoding)",
                           given);
    }
    return 0;
}

void sampling_describe(const dec_sampling *s, char *buf, size_t n) {
    if (!dec_sampling_on(s)) {
        snprintf(buf, n, "greedy");
        return;
    }
    snprintf(buf, n, "%s sampling: temperature %g, top-k %d, top-p %g, seed %llu",
             dec_sampling_name(s), s->temperature, s->top_k, s->top_p > 0 ? s->top_p : 1, s->seed);
}
