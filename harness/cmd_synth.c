/* cmd_synth.c: `decbench synth`: write a random-weight model of a real shape: a llama2.c
 * checkpoint (plain Llama shapes, f32), or a GGUF file of any architecture in any weight type or
 * llama-quantize mix (--type; the Qwen, Qwen3, Llama 3.x and DeepSeek-Coder presets need it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/session.h"
#include "model/convert/synth.h"
#include "util/err.h"
#include "util/file.h"

enum {
    S_CONFIG,
    S_SEED,
    S_OUT,
    S_VOCAB,
    S_TYPE,
    S_TOK,
    S_VERSION,
    S_HEAD,
    S_HEADS,
    S_HELP,
    S_COUNT
};

/* `synth --head eagle|medusa`: a random draft head of the shape's target in directory out. */
static int write_head(const char *kind_s, const synth_shape *s, const char *type_s, long heads,
                      long seed, const char *out) {
    char err[ERR_LEN];
    synth_head_kind kind;
    if (!strcmp(kind_s, "eagle"))
        kind = SYNTH_HEAD_EAGLE;
    else if (!strcmp(kind_s, "medusa"))
        kind = SYNTH_HEAD_MEDUSA;
    else
        return cmd_usage("synth", "--head: expected eagle or medusa");
    synth_head_dtype dt = SYNTH_HEAD_F16;
    if (type_s && !strcmp(type_s, "bf16"))
        dt = SYNTH_HEAD_BF16;
    else if (type_s && !strcmp(type_s, "f32"))
        dt = SYNTH_HEAD_F32;
    else if (type_s && strcmp(type_s, "f16"))
        return cmd_usage("synth", "--type with --head: expected f16 (default), bf16 or f32");
    if (synth_write_head(out, kind, s, (int)heads, dt, (uint64_t)seed, err))
        return cmd_fail("synth", err);
    const model_config *c = &s->cfg;
    char what[64];
    if (kind == SYNTH_HEAD_EAGLE)
        snprintf(what, sizeof what, "an EAGLE head (1 layer)");
    else
        snprintf(what, sizeof what, "%ld Medusa head%s (1 ResBlock each)", heads,
                 heads == 1 ? "" : "s");
    fprintf(stderr, "wrote %s: %s for a %s target (dim %d, vocab %d), %s, seed %ld\n", out, what,
            s->what, c->dim, c->vocab_size,
            dt == SYNTH_HEAD_F16    ? "f16"
            : dt == SYNTH_HEAD_BF16 ? "bf16"
                                    : "f32",
            seed);
    return 0;
}

int cmd_synth(int argc, char **argv) {
    char type_help[640], mixes[384];
    convert_scheme_list(mixes, sizeof mixes);
    snprintf(type_help, sizeof type_help,
             "write GGUF, the matrices stored as %s; default: a llama2.c "
             "checkpoint when the shape is one and no --tokenizer is given, else GGUF f32",
             mixes);
    args_opt o[S_COUNT] = {
        [S_CONFIG] = {"--config", "-c", 1,
                      "preset (see below) or [ARCH:]dim,hidden,layers,heads,kv_heads,vocab,seq[,"
                      "head_size]",
                      "SHAPE"},
        [S_SEED] = {"--seed", "-s", 1, "random seed (default 1)", "N"},
        [S_OUT] = {"--output", "-o", 1, "output file (required)", "FILE"},
        [S_VOCAB] = {"--vocab", NULL, 1,
                     "override the preset's vocabulary size (e.g. 512 to pair with tok512.bin)",
                     "N"},
        [S_TYPE] = {"--type", NULL, 1, type_help, "TYPE"},
        [S_TOK] = {"--tokenizer", "-z", 1,
                   "GGUF: the vocabulary to include (a GGUF or llama2.c tokenizer file with at "
                   "most vocab tokens, padded with unused tokens; default none)",
                   "FILE"},
        [S_VERSION] = {"--version", NULL, 0,
                       "print the synthetic format versions (llama2.c, GGUF; they change when the "
                       "bytes for a config and seed do)"},
        [S_HEAD] = {"--head", NULL, 1,
                    "write a random draft head for a target of the shape instead, in the "
                    "published layout into directory -o: eagle (config.json, model.safetensors) "
                    "or medusa (config.json, medusa_lm_head.safetensors); --type f16 (default), "
                    "bf16 or f32",
                    "eagle|medusa"},
        [S_HEADS] = {"--heads", NULL, 1, "Medusa heads (default 5, the reference's)", "N"},
        [S_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, S_COUNT, pos, 0, &n_pos, err)) return cmd_usage("synth", err);
    if (args_flag(o, S_COUNT, "--help")) {
        args_usage(
            "decbench synth --config NAME|dims [--type TYPE] [--tokenizer TOK] --seed S -o FILE\n"
            "       decbench synth --config NAME|dims --head eagle|medusa [--heads N] -o DIR",
            o, S_COUNT);
        printf("presets: %s\n", synth_presets_help());
        return 0;
    }
    if (args_flag(o, S_COUNT, "--version")) {
        printf("%d\n", SYNTH_VERSION);
        return 0;
    }
    const char *cfg_s = args_str(o, S_COUNT, "--config", NULL),
               *out = args_str(o, S_COUNT, "--output", NULL);
    const char *type_s = args_str(o, S_COUNT, "--type", NULL),
               *tok_s = args_str(o, S_COUNT, "--tokenizer", NULL);
    if (!cfg_s || !out) return cmd_usage("synth", "--config and -o FILE are required");
    char tok_path[4096]; /* a bare file name is looked up in the models folder, as run does */
    if (tok_s) tok_s = session_find_model(tok_s, tok_path, sizeof tok_path);
    long seed, vocab, heads;
    synth_shape s;
    if (args_int(o, S_COUNT, "--seed", 1, 0, 0x7fffffffL, &seed, err) ||
        args_int(o, S_COUNT, "--vocab", 0, 0, 1 << 22, &vocab, err) ||
        args_int(o, S_COUNT, "--heads", 5, 1, SYNTH_MAX_HEADS, &heads, err) ||
        synth_shape_parse(cfg_s, &s, err))
        return cmd_usage("synth", err);
    const char *head_s = args_str(o, S_COUNT, "--head", NULL);
    if (head_s) {
        if (tok_s) return cmd_usage("synth", "--head writes no vocabulary: no --tokenizer");
        if (vocab > 0) s.cfg.vocab_size = (int)vocab;
        return write_head(head_s, &s, type_s, heads, seed, out);
    }
    if (args_str(o, S_COUNT, "--heads", NULL))
        return cmd_usage("synth", "--heads needs --head medusa");
    file_io io[2] = {{"-o", out, FILE_IO_OUT, NULL}, {"--tokenizer", tok_s, FILE_IO_IN, NULL}};
    if (file_check_io(io, 2, err)) return cmd_fail("synth", err);
    model_config *c = &s.cfg;
    if (vocab > 0) c->vocab_size = (int)vocab;
    if (model_config_check(c, cfg_s, err)) return cmd_fail("synth", err);
    if (!type_s && !tok_s && !synth_needs_gguf(&s)) { /* a vocabulary needs GGUF */
        if (synth_write(out, c, (uint64_t)seed, err)) return cmd_fail("synth", err);
        fprintf(stderr,
                "wrote %s: dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab %d, seq %d, "
                "seed %ld\n",
                out, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size,
                c->seq_len, seed);
        return 0;
    }
    convert_opts opts = {.name = s.what};
    if (convert_scheme_parse(type_s ? type_s : "f32", &opts)) {
        char types[200];
        convert_scheme_list(types, sizeof types);
        snprintf(err, sizeof err, "--type %s: expected %s", type_s, types);
        return cmd_usage("synth", err);
    }
    convert_vocab *v = NULL;
    if (tok_s && convert_vocab_load(&v, tok_s, err)) return cmd_fail("synth", err);
    int rc = synth_write_gguf(out, &s, &opts, v, (uint64_t)seed, err);
    convert_vocab_free(v);
    if (rc) return cmd_fail("synth", err);
    fprintf(stderr,
            "wrote %s: %s shape (%s), %s, dim %d, hidden %d, %d layers, %d heads of %d, %d kv "
            "heads, vocab %d, context %d, %s classifier, seed %ld\n",
            out, s.what, s.arch, convert_scheme_name(&opts), c->dim, c->hidden_dim, c->n_layers,
            c->n_heads, c->head_size, c->n_kv_heads, c->vocab_size, c->seq_len,
            c->shared_classifier ? "tied" : "separate", seed);
    return 0;
}
