/* cmd_convert.c: `decbench convert`: a model (llama2.c checkpoint, or GGUF to change its weight
 * type) and its vocabulary to a GGUF file in f32, f16, bf16, q8_0, q4_0, q5_0, q4_k or q6_k, or
 * in llama-quantize's mix of Q4_0, Q4_K_M, Q6_K or Q8_0 (model/convert/convert.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/session.h"
#include "model/convert/convert.h"
#include "model/loader/model_file.h"
#include "util/err.h"
#include "util/file.h"
#include "util/paths.h"

enum { V_MODEL, V_TOK, V_TYPE, V_OUT, V_FALLBACK, V_NAME, V_HELP, V_COUNT };

/* The vocabulary to use when --tokenizer is absent: a GGUF's own, else tok<vocab>.bin in the
 * models folder (as generate/run do). */
static int default_tokenizer(const model *m, char *out, size_t n, char *err) {
    if (strcmp(m->format, "gguf") == 0) {
        snprintf(out, n, "%s", m->path);
        return 0;
    }
    char dir[1024];
    if (paths_models_dir(NULL, dir, sizeof dir) == 0) {
        snprintf(out, n, "%s/tok%d.bin", dir, m->cfg.vocab_size);
        if (access(out, R_OK) == 0) return 0;
    }
    return err_set(err, "%s: no --tokenizer given and no tok%d.bin in the models folder (%s)",
                   m->path, m->cfg.vocab_size, dir);
}

static int parse_fallback(const char *s, convert_fallback *out, char *err) {
    const char *names[] = {"f16", "f32", "none"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) return *out = (convert_fallback)i, 0;
    return err_set(err, "--fallback %s: expected f16, f32 or none", s);
}

/* general.name: the input's file name without folder and extension. */
static void base_name(const char *path, char *out, size_t n) {
    const char *s = strrchr(path, '/');
    snprintf(out, n, "%s", s ? s + 1 : path);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

int cmd_convert(int argc, char **argv) {
    char types_help[512], mixes[384];
    convert_scheme_list(mixes, sizeof mixes);
    snprintf(types_help, sizeof types_help,
             "the matrices' storage: %s (required; vectors stay f32)", mixes);
    args_opt o[V_COUNT] = {
        [V_MODEL] = {"--model", "-m", 1,
                     "input: llama2.c checkpoint (legacy or v1) or GGUF (required)", "FILE"},
        [V_TOK] = {"--tokenizer", "-z", 1,
                   "vocabulary: llama2.c tokenizer file or GGUF (default: the GGUF's own, or "
                   "tok<vocab>.bin in the models folder)",
                   "FILE"},
        [V_TYPE] = {"--type", NULL, 1, types_help, "TYPE"},
        [V_OUT] = {"--output", "-o", 1,
                   "output GGUF file (required; written to FILE.tmp, then renamed)", "FILE"},
        [V_FALLBACK] = {"--fallback", NULL, 1,
                        "block types: type of matrices whose rows are not whole blocks (32 values; "
                        "256 for q4_k, q6_k): f16 (default), f32, or none (refuse)",
                        "TYPE"},
        [V_NAME] = {"--name", NULL, 1, "general.name (default: the input's file name)", "TEXT"},
        [V_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, V_COUNT, pos, 0, &n_pos, err))
        return cmd_usage("convert", err);
    if (args_flag(o, V_COUNT, "--help")) {
        args_usage("decbench convert --model IN --type TYPE|MIX -o OUT.gguf [--tokenizer TOK]", o,
                   V_COUNT);
        return 0;
    }
    const char *in = args_str(o, V_COUNT, "--model", NULL),
               *out = args_str(o, V_COUNT, "--output", NULL);
    const char *type_s = args_str(o, V_COUNT, "--type", NULL);
    if (!in || !out || !type_s)
        return cmd_usage("convert", "--model IN, --type TYPE and -o OUT.gguf are required");
    char name[256];
    base_name(in, name, sizeof name);
    convert_opts opts = {.name = args_str(o, V_COUNT, "--name", name)};
    if (convert_scheme_parse(type_s, &opts)) {
        char types[200];
        convert_scheme_list(types, sizeof types);
        snprintf(err, sizeof err, "--type %s: expected %s", type_s, types);
        return cmd_usage("convert", err);
    }
    if (parse_fallback(args_str(o, V_COUNT, "--fallback", "f16"), &opts.fallback, err))
        return cmd_usage("convert", err);
    char in_path[4096]; /* a bare file name is looked up in the models folder */
    in = session_find_model(in, in_path, sizeof in_path);
    model *m = NULL;
    convert_vocab *v = NULL;
    char tok_path[2048];
    const char *tp = args_str(o, V_COUNT, "--tokenizer", NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    convert_report rep;
    int rc = 1;
    if (model_open(&m, in, err)) goto done;
    if (tp)
        session_find_model(tp, tok_path, sizeof tok_path);
    else if (default_tokenizer(m, tok_path, sizeof tok_path, err))
        goto done;
    /* neither input may be the output (nor its OUT.tmp, which the write truncates first) */
    file_io io[3] = {{"-o", out, FILE_IO_OUT, NULL},
                     {"--model", in, FILE_IO_IN, NULL},
                     {"--tokenizer", tok_path, FILE_IO_IN, NULL}};
    if (file_check_io(io, 3, err)) goto done;
    if (convert_vocab_load(&v, tok_path, err) || convert_gguf(m, v, &opts, out, &rep, err))
        goto done;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr,
            "wrote %s: %s weights (%d matrices, norms f32), vocab %d from %s, %.1f MB of "
            "tensors, %.1f s\n",
            out, convert_scheme_name(&opts), rep.n_matrices, m->cfg.vocab_size, tok_path,
            rep.weight_bytes / 1e6, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    if (rep.n_fallback && opts.mix)
        fprintf(stderr,
                "note: %d of %d matrices (first: %s, rows of %d values) are not whole blocks of "
                "their type and are stored as llama-quantize stores them (%s)\n",
                rep.n_fallback, rep.n_matrices, rep.first_fallback, rep.first_fallback_cols,
                wtype_name(rep.fallback_type));
    else if (rep.n_fallback)
        fprintf(stderr,
                "note: %d of %d matrices (first: %s, rows of %d values) are not whole "
                "%d-value blocks and are stored as %s instead of %s (--fallback f32 or "
                "none to change)\n",
                rep.n_fallback, rep.n_matrices, rep.first_fallback, rep.first_fallback_cols,
                wtype_get(opts.type)->block, wtype_name(rep.fallback_type), wtype_name(opts.type));
    rc = 0;
done:
    if (rc) cmd_fail("convert", err);
    convert_vocab_free(v);
    model_close(m);
    return rc;
}
