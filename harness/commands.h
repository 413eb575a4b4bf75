/* commands.h: the decbench subcommands. Each returns the process exit status and prints its
 * own errors as "decbench <command>: <message>" on stderr. */
#ifndef HARNESS_COMMANDS_H
#define HARNESS_COMMANDS_H

#include <stddef.h>

int cmd_generate(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_detokenize(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_cost(int argc, char **argv);
int cmd_counters(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_paper(int argc, char **argv);
int cmd_datastore(int argc, char **argv);
int cmd_sequoia(int argc, char **argv);

/* Exit statuses: 0 success, 1 error (bad input file, failed run, mismatch), 2 usage error
 * (unknown option, bad option value, missing argument), 130 interrupted. */

/* Prints "decbench <cmd>: <msg>" on stderr, without the library's function-name prefixes
 * (cmd_common.c), and returns 1. */
int cmd_fail(const char *cmd, const char *msg);
/* The same for a usage error: returns 2. */
int cmd_usage(const char *cmd, const char *msg);
/* msg without the library's "db_open: "-style prefixes, into out (size n). */
void cmd_clean_message(const char *msg, char *out, size_t n);
/* Prints the version (decbench --version) to stdout. */
void cmd_version(void);

/* --set NAME:KEY=V,... (tune, paper): parameters a command adds to decoder NAME's specs, such
 * as a head or a datastore. cmd_sets_check: each value names a registered decoder and has
 * parameters, and no decoder is named twice; -1 with a usage message naming the value.
 * cmd_set_of: the parameters given for decoder `name` (after "NAME:"), or NULL. */
int cmd_sets_check(const char *const *sets, int n, char *err);
const char *cmd_set_of(const char *const *sets, int n, const char *name);

#endif
