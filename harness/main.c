/* main.c: the decbench command line: one subcommand per file in harness/. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "decoders/decoder.h"
#include "harness/commands.h"

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} command;

static int cmd_decoders(int argc, char **argv) {
    (void)argc, (void)argv;
    printf("%s", dec_help());
    return 0;
}

static const command commands[] = {
    {"generate", cmd_generate, "run one prompt through a decoder, text to stdout"},
    {"tokenize", cmd_tokenize, "print the token ids of a text"},
    {"detokenize", cmd_detokenize, "print the text of token ids"},
    {"synth", cmd_synth, "write a random-weight model of a real shape"},
    {"convert", cmd_convert, "write a model as GGUF (f32, f16, bf16, q8_0)"},
    {"cost", cmd_cost, "forward latency versus rows per pass (the cost curve)"},
    {"decoders", cmd_decoders, "list the decoders and their parameters"},
    {"counters", cmd_counters, "define every counter a sample stores and every report figure"},
    {"run", cmd_run, "benchmark decoders on datasets into the results database"},
    {"sweep", cmd_sweep, "run a grid of decoder parameters (one run per point)"},
    {"tune", cmd_tune, "the best decoder and settings for a model on this machine, in a budget"},
    {"report", cmd_report, "tables from the results database (md, csv, json)"},
    {"plot", cmd_plot, "figures from the results database (gnuplot: PNG + SVG)"},
    {"compare", cmd_compare, "CI regression gate: compare two runs, exit 1 on regression"},
};

static void usage(void) {
    fprintf(stderr,
            "usage: decbench <command> [options]   (decbench <command> --help for its options)\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(stderr, "  %-11s %s\n", commands[i].name, commands[i].help);
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
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].fn(argc, argv);
    fprintf(stderr, "decbench: unknown command '%s'\n", argv[1]);
    usage();
    return 2;
}
