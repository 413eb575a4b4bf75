/* commands.h: the decbench subcommands. Each returns the process exit status and prints its
 * own errors as "decbench <command>: <message>" on stderr. */
#ifndef HARNESS_COMMANDS_H
#define HARNESS_COMMANDS_H

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

/* Prints "decbench <cmd>: <msg>" and returns 1 (or 2 for usage errors). */
int cmd_fail(const char *cmd, const char *msg);

#endif
