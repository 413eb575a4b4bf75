/* cmd_synth.c: `decbench synth`: write a random-weight llama2.c checkpoint of a real shape. */
#include <stdio.h>
#include <stdlib.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "model/synth.h"
#include "util/err.h"

enum { S_CONFIG, S_SEED, S_OUT, S_VOCAB, S_VERSION, S_HELP, S_COUNT };

int cmd_synth(int argc, char **argv) {
    args_opt o[S_COUNT] = {
        [S_CONFIG] = {"--config", "-c", 1, "preset (260K, 15M, 42M, 110M, 1.1B) or dim,hidden,layers,heads,kv_heads,vocab,seq", "SHAPE"},
        [S_SEED] = {"--seed", "-s", 1, "random seed (default 1)", "N"},
        [S_OUT] = {"--output", "-o", 1, "output file (required)", "FILE"},
        [S_VOCAB] = {"--vocab", NULL, 1, "override the preset's vocabulary size (e.g. 512 to pair with tok512.bin)", "N"},
        [S_VERSION] = {"--version", NULL, 0, "print the synthetic format version (changes when the bytes for a config and seed do)"},
        [S_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, S_COUNT, pos, 0, &n_pos, err)) return cmd_usage("synth", err);
    if (args_flag(o, S_COUNT, "--help")) {
        args_usage("decbench synth --config NAME|dims --seed S -o FILE", o, S_COUNT);
        printf("presets: %s\n", synth_presets_help());
        return 0;
    }
    if (args_flag(o, S_COUNT, "--version")) {
        printf("%d\n", SYNTH_VERSION);
        return 0;
    }
    const char *cfg_s = args_str(o, S_COUNT, "--config", NULL), *out = args_str(o, S_COUNT, "--output", NULL);
    if (!cfg_s || !out) return cmd_usage("synth", "--config and -o FILE are required");
    long seed, vocab;
    model_config c;
    if (args_int(o, S_COUNT, "--seed", 1, 0, 0x7fffffffL, &seed, err) ||
        args_int(o, S_COUNT, "--vocab", 0, 0, 1 << 22, &vocab, err) || synth_config(cfg_s, &c, err))
        return cmd_usage("synth", err);
    if (vocab > 0) c.vocab_size = (int)vocab;
    if (model_config_check(&c, cfg_s, err) || synth_write(out, &c, (uint64_t)seed, err))
        return cmd_fail("synth", err);
    fprintf(stderr, "wrote %s: dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab %d, seq %d, seed %ld\n",
            out, c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len, seed);
    return 0;
}
