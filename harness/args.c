/* args.c: the option tables of args.h parsed with glibc's getopt_long. */
#include "harness/args.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/num.h"

/* getopt_long's `val` for table row k (above every char, so it never collides with an alias). */
#define LONG_BASE 256

/* "--max" matching more than one name: the candidates, for the message. */
static int prefix_matches(const args_opt *opts, int n_opts, const char *arg, char *list, size_t n) {
    size_t len = strcspn(arg, "=");
    int count = 0;
    list[0] = '\0';
    for (int k = 0; k < n_opts; k++) {
        if (strncmp(opts[k].name, arg, len) != 0) continue;
        size_t used = strlen(list);
        snprintf(list + used, n - used, "%s%s", count ? ", " : "", opts[k].name);
        count++;
    }
    return count;
}

/* Edit distance of a and b (insertions, deletions, substitutions), at most 64 characters of b;
 * a larger value when longer. */
static int distance(const char *a, size_t na, const char *b) {
    size_t nb = strlen(b);
    if (na > 64 || nb > 64) return 99;
    int row[65];
    for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

/* The option an unknown "--name" most likely meant, or NULL: the same name with '_' for '-'
 * (`--max_new`, the spelling of Python's and llama.cpp's scripts), else the one name within
 * two edits (a typo), if just one is that close. */
static const char *suggest(const args_opt *opts, int n_opts, const char *arg) {
    size_t len = strcspn(arg, "=");
    const char *best = NULL;
    int best_d = 3, ties = 0;
    for (int k = 0; k < n_opts; k++) {
        const char *name = opts[k].name;
        if (strlen(name) == len) {
            size_t i = 0;
            while (i < len && (arg[i] == name[i] || (arg[i] == '_' && name[i] == '-'))) i++;
            if (i == len) return name;
        }
        int d = distance(arg, len, name);
        if (d < best_d)
            best = name, best_d = d, ties = 0;
        else if (d == best_d)
            ties++;
    }
    return len > 4 && !ties ? best : NULL;
}

/* The message for getopt_long's '?' (unknown, ambiguous, or a value given to a flag). */
static int refuse(const args_opt *opts, int n_opts, const char *arg, int optopt, char *err) {
    if (optopt >= LONG_BASE && optopt < LONG_BASE + n_opts)
        return err_set(err, "option %s takes no value", opts[optopt - LONG_BASE].name);
    if (optopt > 0) return err_set(err, "unknown option '-%c' (see --help)", optopt);
    char list[512];
    if (arg && arg[0] == '-' && arg[1] == '-' &&
        prefix_matches(opts, n_opts, arg, list, sizeof list) > 1)
        return err_set(err, "option '%.*s' is ambiguous: %s", (int)strcspn(arg, "="), arg, list);
    const char *maybe = arg && arg[0] == '-' && arg[1] == '-' ? suggest(opts, n_opts, arg) : NULL;
    if (maybe)
        return err_set(err, "unknown option '%.*s': did you mean %s? (see --help)",
                       (int)strcspn(arg, "="), arg, maybe);
    return err_set(err, "unknown option '%.*s' (see --help)", arg ? (int)strcspn(arg, "=") : 1,
                   arg ? arg : "?");
}

int args_parse(int argc, char **argv, int first, args_opt *opts, int n_opts, const char **pos,
               int max_pos, int *n_pos, char *err) {
    *n_pos = 0;
    int n = argc - first + 1, rc = -1;
    /* getopt_long permutes the array it is given: a copy keeps argv as typed. */
    char **av = calloc((size_t)n + 1, sizeof *av);
    struct option *lo = calloc((size_t)n_opts + 1, sizeof *lo);
    char *shorts = malloc(3 + 2 * (size_t)n_opts + 1);
    if (!av || !lo || !shorts) {
        err_set(err, "out of memory");
        goto done;
    }
    av[0] = argv[0];
    for (int i = first; i < argc; i++) av[i - first + 1] = argv[i];
    /* "-": arguments that are not options come back in order (code 1); ":": a missing value is
     * reported as ':' rather than printed by getopt. */
    size_t ns = 0;
    shorts[ns++] = '-';
    shorts[ns++] = ':';
    for (int k = 0; k < n_opts; k++) {
        lo[k] =
            (struct option){opts[k].name + 2, opts[k].takes_value ? required_argument : no_argument,
                            NULL, LONG_BASE + k};
        if (opts[k].alias && opts[k].alias[0] == '-' && opts[k].alias[1] && !opts[k].alias[2]) {
            shorts[ns++] = opts[k].alias[1];
            if (opts[k].takes_value) shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    opterr = 0;
    optind = 0; /* 0: glibc reinitialises its state (each command parses once, but tests may not) */
    int c;
    while ((c = getopt_long(n, av, shorts, lo, NULL)) != -1) {
        args_opt *o = NULL;
        if (c == 1) {
            if (*n_pos >= max_pos) {
                err_set(err, "unexpected argument '%s'", optarg);
                goto done;
            }
            pos[(*n_pos)++] = optarg;
            continue;
        }
        if (c == ':') {
            const char *name = "?";
            if (optopt >= LONG_BASE && optopt < LONG_BASE + n_opts)
                name = opts[optopt - LONG_BASE].name;
            for (int k = 0; k < n_opts && optopt < LONG_BASE; k++)
                if (opts[k].alias && opts[k].alias[1] == optopt) name = opts[k].name;
            err_set(err, "option %s needs a value", name);
            goto done;
        }
        if (c == '?') {
            refuse(opts, n_opts, optind > 0 && optind <= n ? av[optind - 1] : NULL, optopt, err);
            goto done;
        }
        if (c >= LONG_BASE && c < LONG_BASE + n_opts) {
            o = &opts[c - LONG_BASE];
        } else {
            for (int k = 0; k < n_opts && !o; k++)
                if (opts[k].alias && opts[k].alias[1] == c) o = &opts[k];
        }
        if (!o) {
            err_set(err, "unknown option '-%c' (see --help)", c);
            goto done;
        }
        if (o->count >= ARGS_MAX_VALUES) {
            err_set(err, "option %s given too often", o->name);
            goto done;
        }
        o->values[o->count++] = o->takes_value ? optarg : NULL;
    }
    for (int i = optind; i < n; i++) { /* after "--" */
        if (*n_pos >= max_pos) {
            err_set(err, "unexpected argument '%s'", av[i]);
            goto done;
        }
        pos[(*n_pos)++] = av[i];
    }
    rc = 0;
done:
    free(av);
    free(lo);
    free(shorts);
    return rc;
}

const args_opt *args_get(const args_opt *opts, int n_opts, const char *name) {
    for (int k = 0; k < n_opts; k++)
        if (strcmp(opts[k].name, name) == 0) return &opts[k];
    return NULL;
}

const char *args_str(const args_opt *opts, int n_opts, const char *name, const char *def) {
    const args_opt *o = args_get(opts, n_opts, name);
    return o && o->count ? o->values[o->count - 1] : def;
}

int args_flag(const args_opt *opts, int n_opts, const char *name) {
    const args_opt *o = args_get(opts, n_opts, name);
    return o && o->count > 0;
}

int args_seed(const args_opt *opts, int n_opts, const char *name, unsigned long long def,
              unsigned long long *out, char *err) {
    const char *s = args_str(opts, n_opts, name, NULL);
    *out = def;
    if (!s) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || s[0] == '-' || s[0] == ' ')
        return err_set(err, "%s: '%.40s' is not a seed (an unsigned integer)", name, s);
    *out = v;
    return 0;
}

int args_int(const args_opt *opts, int n_opts, const char *name, long def, long min, long max,
             long *out, char *err) {
    const char *s = args_str(opts, n_opts, name, NULL);
    if (!s) {
        *out = def;
        return 0;
    }
    long long v;
    if (num_parse(s, min, max, &v, name, err)) return -1;
    *out = (long)v;
    return 0;
}

int args_seconds(const args_opt *opts, int n_opts, const char *name, double def, double min,
                 double max, double *out, char *err) {
    const char *s = args_str(opts, n_opts, name, NULL);
    if (!s) {
        *out = def;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    double unit = !strcmp(end, "ms") ? 1e-3 : !strcmp(end, "m") ? 60 : 1;
    if (end == s || !isfinite(v) ||
        (*end && strcmp(end, "ms") && strcmp(end, "s") && strcmp(end, "m")))
        return err_set(err,
                       "%s: '%.40s' is not a duration (seconds, or with a unit: 0.5s, 300ms, 2m)",
                       name, s);
    v *= unit;
    if (v < min || v > max)
        return err_set(err, "%s: %.40s is out of range %g..%g seconds", name, s, min, max);
    *out = v;
    return 0;
}

/* Prints text wrapped to `width` columns, continuation lines indented by `indent`. */
static void wrapped(const char *text, int col, int indent, int width) {
    const char *p = text;
    while (*p) {
        size_t word = strcspn(p, " ");
        if (col > indent && col + 1 + (int)word > width) {
            printf("\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            putchar(' ');
            col++;
        }
        fwrite(p, 1, word, stdout);
        col += (int)word;
        p += word;
        while (*p == ' ') p++;
    }
    putchar('\n');
}

void args_usage(const char *usage, const args_opt *opts, int n_opts) {
    enum { LEFT = 30, WIDTH = 100 };
    printf("usage: %s\n\noptions:\n", usage);
    for (int k = 0; k < n_opts; k++) {
        char meta[64] = "", left[128];
        if (opts[k].takes_value) {
            if (opts[k].metavar) {
                snprintf(meta, sizeof meta, " %s", opts[k].metavar);
            } else { /* --ctx -> CTX */
                size_t m = 0;
                meta[m++] = ' ';
                for (const char *p = opts[k].name + 2; *p && m + 1 < sizeof meta; p++)
                    meta[m++] = (char)toupper((unsigned char)*p);
                meta[m] = '\0';
            }
        }
        snprintf(left, sizeof left, "  %s%s%s%s", opts[k].alias ? opts[k].alias : "    ",
                 opts[k].alias ? ", " : "", opts[k].name, meta);
        printf("%s", left);
        int col = (int)strlen(left);
        if (col >= LEFT) {
            printf("\n%*s", LEFT, "");
        } else {
            printf("%*s", LEFT - col, "");
        }
        wrapped(opts[k].help ? opts[k].help : "", LEFT, LEFT, WIDTH);
    }
}
