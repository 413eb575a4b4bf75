/* args.h: command-line options for the decbench subcommands.
 *
 * Each subcommand declares a table of options; args_parse() fills it from argv with glibc's
 * getopt_long, so the GNU conventions hold everywhere: `--name VALUE`, `--name=VALUE`, short
 * aliases with attached values (`-n128`), bundled flags, `--` ending the options, and
 * unambiguous prefixes of long names (`--max` for `--max-new`). Unknown options, missing
 * values, values given to flags, ambiguous prefixes and stray arguments are refused with a
 * one-line message; the caller exits 2 (a usage error). Repeatable options (--decoder)
 * collect every value in order. argv itself is left untouched (getopt_long permutes a copy),
 * so the command line recorded with a run is the one typed. */
#ifndef HARNESS_ARGS_H
#define HARNESS_ARGS_H

#define ARGS_MAX_VALUES 64

typedef struct {
    const char *name;  /* "--model" */
    const char *alias; /* "-m" (one letter), or NULL */
    int takes_value;   /* 0: a flag */
    const char *help;
    /* The placeholder --help shows for the value: "FILE", "N", "SPEC"... NULL: the option's
     * name in capitals ("--ctx" shows CTX). */
    const char *metavar;
    /* filled by args_parse */
    int count;
    const char *values[ARGS_MAX_VALUES];
} args_opt;

/* Parses argv[first..argc). Positional arguments go to pos (up to max_pos). Returns 0, or -1
 * with the message in err (a usage error: exit 2). */
int args_parse(int argc, char **argv, int first, args_opt *opts, int n_opts, const char **pos,
               int max_pos, int *n_pos, char *err);

/* The last value of an option, or def. */
const char *args_str(const args_opt *opts, int n_opts, const char *name, const char *def);
int args_flag(const args_opt *opts, int n_opts, const char *name);
/* Parses an integer option in [min, max]; err names the option, quotes the value as typed and
 * gives the range (util/num.h: no saturated or wrapped number is ever echoed). */
int args_int(const args_opt *opts, int n_opts, const char *name, long def, long min, long max,
             long *out, char *err);
/* Parses a number of seconds: "0.5", "0.5s", "300ms", "2m"; in [min, max] seconds. */
int args_seconds(const args_opt *opts, int n_opts, const char *name, double def, double min,
                 double max, double *out, char *err);
const args_opt *args_get(const args_opt *opts, int n_opts, const char *name);
/* A seed option (--shuffle, --seed): an unsigned 64-bit integer, all of the value; *out = def
 * when absent. "NAME: 'V' is not a seed (an unsigned integer)" otherwise. */
int args_seed(const args_opt *opts, int n_opts, const char *name, unsigned long long def,
              unsigned long long *out, char *err);

/* Prints "usage: ..." and the option table to stdout (for --help, which exits 0 so that
 * `decbench run --help | less` works). */
void args_usage(const char *usage, const args_opt *opts, int n_opts);

#endif
