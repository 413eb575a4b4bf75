#include "harness/args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/num.h"

int args_parse(int argc, char **argv, int first, args_opt *opts, int n_opts, const char **pos,
               int max_pos, int *n_pos, char *err) {
    *n_pos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (*n_pos >= max_pos) return err_set(err, "unexpected argument '%s'", a);
            pos[(*n_pos)++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        args_opt *o = NULL;
        for (int k = 0; k < n_opts; k++)
            if ((strlen(opts[k].name) == len && strncmp(opts[k].name, a, len) == 0) ||
                (opts[k].alias && strlen(opts[k].alias) == len && strncmp(opts[k].alias, a, len) == 0))
                o = &opts[k];
        if (!o) return err_set(err, "unknown option '%.*s' (see --help)", (int)len, a);
        const char *v = NULL;
        if (o->takes_value) {
            if (eq) v = eq + 1;
            else if (i + 1 < argc) v = argv[++i];
            else return err_set(err, "option %s needs a value", o->name);
        } else if (eq) {
            return err_set(err, "option %s takes no value", o->name);
        }
        if (o->count >= ARGS_MAX_VALUES) return err_set(err, "option %s given too often", o->name);
        o->values[o->count++] = v;
    }
    return 0;
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

void args_usage(const char *usage, const args_opt *opts, int n_opts) {
    fprintf(stderr, "usage: %s\n", usage);
    for (int k = 0; k < n_opts; k++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s", opts[k].alias ? opts[k].alias : "",
                 opts[k].alias ? ", " : "", opts[k].name, opts[k].takes_value ? " V" : "");
        fprintf(stderr, "  %-24s %s\n", left, opts[k].help);
    }
}
