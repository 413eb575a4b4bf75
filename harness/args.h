/* args.h: command-line options for the decbench subcommands.
 *
 * Each subcommand declares a table of options; args_parse() fills it from argv and refuses
 * unknown options, missing values and stray arguments with a one-line message. Repeatable
 * options (--decoder) collect every value. */
#ifndef HARNESS_ARGS_H
#define HARNESS_ARGS_H

#define ARGS_MAX_VALUES 64

typedef struct {
    const char *name;  /* "--model" */
    const char *alias; /* "-n", or NULL */
    int takes_value;   /* 0: a flag */
    const char *help;
    /* filled by args_parse */
    int count;
    const char *values[ARGS_MAX_VALUES];
} args_opt;

/* Parses argv[first..argc). Positional arguments go to pos (up to max_pos). */
int args_parse(int argc, char **argv, int first, args_opt *opts, int n_opts, const char **pos,
               int max_pos, int *n_pos, char *err);

/* The last value of an option, or def. */
const char *args_str(const args_opt *opts, int n_opts, const char *name, const char *def);
int args_flag(const args_opt *opts, int n_opts, const char *name);
/* Parses an integer option in [min, max]; err names the option, quotes the value as typed and
 * gives the range (util/num.h: no saturated or wrapped number is ever echoed). */
int args_int(const args_opt *opts, int n_opts, const char *name, long def, long min, long max,
             long *out, char *err);
const args_opt *args_get(const args_opt *opts, int n_opts, const char *name);

/* Prints the option table (for --help). */
void args_usage(const char *usage, const args_opt *opts, int n_opts);

#endif
