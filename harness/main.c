/* main.c: the decbench command line: one subcommand per file in harness/. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "decoders/decoder.h"
#include "harness/args.h"
#include "harness/commands.h"
#include "util/err.h"

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} command;

static int cmd_decoders(int argc, char **argv) {
    args_opt o[1] = {{.name = "--help", .alias = "-h", .help = "this help"}};
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, 1, pos, 0, &n_pos, err)) return cmd_usage("decoders", err);
    if (args_flag(o, 1, "--help")) {
        args_usage("decbench decoders   (every decoder, its parameters with ranges and defaults)",
                   o, 1);
        return 0;
    }
    printf("%s", dec_help());
    return 0;
}

static const command commands[] = {
    {"generate", cmd_generate, "run one prompt through a decoder, text to stdout"},
    {"tokenize", cmd_tokenize, "print the token ids of a text"},
    {"detokenize", cmd_detokenize, "print the text of token ids"},
    {"synth", cmd_synth, "write a random-weight model of a real shape"},
    {"convert", cmd_convert, "write a model as GGUF in a weight type or llama-quantize mix"},
    {"cost", cmd_cost, "forward latency versus rows per pass (the cost curve)"},
    {"decoders", cmd_decoders, "list the decoders and their parameters"},
    {"counters", cmd_counters, "define every counter a sample stores and every report figure"},
    {"run", cmd_run, "benchmark decoders on datasets into the results database"},
    {"sweep", cmd_sweep, "run a grid of decoder parameters (one run per point)"},
    {"tune", cmd_tune, "the best decoder and settings for a model on this machine, in a budget"},
    {"report", cmd_report, "tables from the results database (md, csv, json)"},
    {"plot", cmd_plot, "figures from the results database (gnuplot: PNG + SVG)"},
    {"compare", cmd_compare, "CI regression gate: compare two runs, exit 1 on regression"},
    {"merge", cmd_merge, "put databases together: the shards of a run or sweep (--shard I/N)"},
    {"paper", cmd_paper, "a paper's experiment in one command, our figures beside the paper's"},
    {"datastore", cmd_datastore, "build REST's datastore (tokens + suffix array) from a corpus"},
    {"sequoia", cmd_sequoia, "Sequoia's tree for an acceptance vector, its budget on a cost curve"},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* --help goes to stdout (exit 0); the same text after a usage error goes to stderr (exit 2). */
static void usage(FILE *out) {
    fprintf(out, "usage: decbench <command> [options]   (decbench <command> --help for its "
                 "options)\n\n"
                 "Compares exact LLM decoding algorithms on the CPU: every decoder's output is "
                 "checked\ntoken for token against greedy's; steps, accepted lengths and tok/s go "
                 "to SQLite.\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-11s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "  %-11s %s\n", "help", "decbench help COMMAND = decbench COMMAND --help");
    fprintf(out, "\noptions:\n  -h, --help  this help\n  --version   the version, commit, "
                 "compiler and CPU\n\n"
                 "Exit status: 0 success, 1 error, 2 usage error, 130 interrupted (compare: 1 "
                 "regression,\n2 error). Data: $DECBENCH_SHARED (models/, datasets/), else "
                 "../shared; the results\ndatabase: results/decbench.db. Documentation: "
                 "README.md, man decbench.\n");
}

static const command *find(const char *name) {
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0) return &commands[i];
    return NULL;
}

int main(int argc, char **argv) {
    /* OpenBLAS starts its worker threads when the library loads, before main, and they spin
     * for a while: on a 2-core machine that steals a core from the exact kernels being
     * measured. Unless the user chose a value, restart once with OPENBLAS_NUM_THREADS=1;
     * --kernels blas raises it again with openblas_set_num_threads(). */
    if (!getenv("OPENBLAS_NUM_THREADS")) {
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        execv("/proc/self/exe", argv); /* on failure, carry on as we are */
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        cmd_version();
        return 0;
    }
    if (strcmp(argv[1], "help") == 0) { /* decbench help [COMMAND] */
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        const command *c = find(argv[2]);
        if (!c) {
            fprintf(stderr, "decbench: unknown command '%s'\n", argv[2]);
            return 2;
        }
        char *args[] = {argv[0], argv[2], "--help", NULL};
        return c->fn(3, args);
    }
    const command *c = find(argv[1]);
    if (c) return c->fn(argc, argv);
    fprintf(stderr, "decbench: unknown command '%s' (decbench --help lists them)\n", argv[1]);
    return 2;
}
