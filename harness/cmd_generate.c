/* cmd_generate.c: `decbench generate` (one prompt through one decoder, text streamed to stdout)
 * and `decbench tokenize` / `detokenize` (the tokenizer from the shell). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/args.h"
#include "harness/commands.h"
#include "harness/sampling_opts.h"
#include "harness/session.h"
#include "util/err.h"
#include "util/file.h"

typedef struct {
    const tok *t;
    int prev;
} stream;

static void print_piece(stream *s, int id) {
    size_t n;
    const char *text = tok_text(s->t, s->prev, id, &n);
    if (text && n > 0) fwrite(text, 1, n, stdout);
    s->prev = id;
}

static void on_tokens(void *user, const int *tokens, int n) {
    for (int i = 0; i < n; i++) print_piece(user, tokens[i]);
    fflush(stdout);
}

/* --stats: every framework counter (the list of stats/stats.h, so a counter added there is
 * printed without an edit here), the decoder's own counters, the derived quantities of the
 * same header, then the figures made from them for this one sample. */
static void print_stats(const char *name, const char *spec, const dec_stats *st) {
    fprintf(stderr, "decoder                       %s\n", spec);
    for (int k = 0; k < STAT_N_COUNTERS; k++) {
        const stat_def *c = &stat_counters[k];
        if (c->kind == STAT_INT)
            fprintf(stderr, "%-29s %.0f\n", c->name, stat_value(st, k));
        else
            fprintf(stderr, "%-29s %.6f\n", c->name, stat_value(st, k));
    }
    for (int i = 0; i < st->n_counters; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s.%s", name, st->counter_defs[i].name);
        fprintf(stderr, st->counter_defs[i].kind == STAT_INT ? "%-29s %.0f\n" : "%-29s %.6f\n",
                label, st->counters[i]);
    }
    for (int k = 0; k < STAT_N_DERIVED; k++)
        fprintf(stderr, "%-29s %.6g\n", stat_derived[k].name, stat_derived_value(st, k));
    double decode = stat_derived_value(st, STAT_D_t_decode);
    double decode_steps = stat_derived_value(st, STAT_D_decode_steps);
    fprintf(stderr, "tokens/step                   %.3f (target passes, prefill included)\n",
            st->target_steps ? (double)st->new_tokens / st->target_steps : 0);
    fprintf(stderr, "rows/step                     %.2f per decode pass\n",
            decode_steps ? st->target_rows / decode_steps : 0);
    fprintf(stderr, "acceptance                    %.1f%% of drafted tokens\n",
            st->drafted ? 100.0 * st->accepted / st->drafted : 0);
    fprintf(stderr, "mean accepted                 %.3f drafted tokens per verification step\n",
            st->verify_steps ? (double)st->accepted / st->verify_steps : 0);
    fprintf(stderr, "accepted length               ");
    for (int k = 0; k <= DEC_HIST_MAX; k++)
        if (st->accept_hist[k]) fprintf(stderr, "%d:%ld ", k, st->accept_hist[k]);
    fprintf(stderr, "\nacceptance by pos             ");
    for (int i = 0; i < DEC_HIST_MAX && st->pos_tried[i]; i++)
        fprintf(stderr, "%d:%.2f ", i, (double)st->pos_accepted[i] / st->pos_tried[i]);
    fprintf(
        stderr,
        "\ntime                          total %.4f s = target %.4f (prefill %.4f) + draft %.4f + "
        "bookkeeping %.4f (%.1f%%)\n",
        st->t_total, st->t_target, st->t_prefill, st->t_draft, st->t_book,
        st->t_total > 0 ? 100 * st->t_book / st->t_total : 0);
    fprintf(stderr, "speed                         %.1f tok/s decode, %.1f tok/s end-to-end\n",
            decode > 0 ? stat_derived_value(st, STAT_D_decode_tokens) / decode : 0,
            st->t_total > 0 ? st->new_tokens / st->t_total : 0);
}

enum {
    G_MODEL,
    G_TOK,
    G_PROMPT,
    G_N,
    G_DEC,
    G_DRAFT,
    G_THREADS,
    G_KERN,
    G_KV,
    G_STATS,
    G_CTX,
    G_HELP,
    G_COUNT
};

/* The options of generate: the table above, then the sampling options (sampling_opts.h). */
#define G_ALL (G_COUNT + SAMPLING_N_OPTS)

int cmd_generate(int argc, char **argv) {
    args_opt o[G_ALL] = {
        [G_MODEL] = {"--model", "-m", 1,
                     "model file (llama2.c .bin or GGUF; a bare name is looked up in the models "
                     "folder)",
                     "FILE"},
        [G_TOK] =
            {"--tokenizer", "-z", 1,
             "tokenizer file (default: the GGUF's own, or tok<vocab>.bin in the models folder)",
             "FILE"},
        [G_PROMPT] = {"--prompt", "-i", 1, "prompt text (default: empty, i.e. just BOS)", "TEXT"},
        [G_N] = {"--max-new", "-n", 1,
                 "new tokens to generate (default 256; fewer when the context length ends first, "
                 "with a note)",
                 "N"},
        [G_DEC] = {"--decoder", "-d", 1, "decoder spec (default greedy); see `decbench decoders`",
                   "SPEC"},
        [G_DRAFT] = {"--draft", NULL, 1,
                     "draft model for spec / tree / ouroboros, or self:TYPE (the target "
                     "requantized in memory: self:q8_0, self:q4_0, self:Q4_K_M, ...)",
                     "FILE"},
        [G_THREADS] = {"--threads", "-t", 1, "threads (default: one per CPU of the affinity mask)",
                       "N"},
        [G_KERN] = {"--kernels", NULL, 1, KERNELS_HELP, KERNELS_METAVAR},
        [G_KV] = {"--kv-type", NULL, 1, KV_TYPE_HELP, KV_TYPE_METAVAR},
        [G_STATS] = {"--stats", NULL, 0, "print the decoder's statistics on stderr"},
        [G_CTX] = {"--ctx", NULL, 1, "context in tokens (default: the model's, at most 4096)", "N"},
        [G_HELP] = {"--help", "-h", 0, "this help"},
    };
    sampling_options(o + G_COUNT);
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, G_ALL, pos, 0, &n_pos, err))
        return cmd_usage("generate", err);
    if (args_flag(o, G_ALL, "--help")) {
        args_usage("decbench generate --model FILE [--prompt TEXT] [-n N] [--decoder SPEC] "
                   "[--temperature T [--top-k K] [--top-p P] [--seed S] [--sampling MODE]]",
                   o, G_ALL);
        fputs(sampling_help, stdout);
        printf("decoders:\n%s", dec_help());
        return 0;
    }
    long max_new, threads, ctx;
    dec_sampling sampling;
    if (args_int(o, G_ALL, "--max-new", 256, 0, 1 << 24, &max_new, err) ||
        args_int(o, G_ALL, "--threads", 0, 0, 1024, &threads, err) ||
        args_int(o, G_ALL, "--ctx", 0, 1, 1 << 20, &ctx, err) ||
        sampling_opts_get(o, G_ALL, &sampling, err))
        return cmd_usage("generate", err);
    const char *kernels = args_str(o, G_ALL, "--kernels", "auto");
    kern_mode km;
    kv_type kv;
    if (session_kernels(kernels, &km, err) ||
        session_kv_type(args_str(o, G_ALL, "--kv-type", NULL), &kv, err))
        return cmd_usage("generate", err);
    if (!args_str(o, G_ALL, "--model", NULL))
        return cmd_usage("generate", "--model FILE is required");
    session s;
    if (session_open(&s, args_str(o, G_ALL, "--model", NULL), args_str(o, G_ALL, "--draft", NULL),
                     args_str(o, G_ALL, "--tokenizer", NULL), kernels, (int)threads, err))
        return cmd_fail("generate", err);
    if (session_set_ctx(&s, (int)ctx, err) ||
        session_set_kv(&s, args_str(o, G_ALL, "--kv-type", NULL), err)) {
        session_close(&s);
        return cmd_fail("generate", err);
    }
    if (s.draft_note[0]) fprintf(stderr, "decbench generate: %s\n", s.draft_note);
    int rc = 1, *prompt = NULL, n_prompt = 0, *out = NULL, n_out = 0;
    dec *d = NULL;
    stream st = {s.tokenizer, -1};
    s.sampling = sampling;
    dec_env env = session_env(&s);
    env.on_tokens = on_tokens;
    env.user = &st;
    if (session_encode(&s, args_str(o, G_ALL, "--prompt", ""), &prompt, &n_prompt, err)) goto done;
    if (n_prompt > s.target->cfg.seq_len) {
        err_set(err, "prompt is %d tokens but the context length of %s is %d", n_prompt,
                s.target->path, s.target->cfg.seq_len);
        goto done;
    }
    if (dec_create(&d, args_str(o, G_ALL, "--decoder", "greedy"), &env, err)) goto done;
    out = malloc(sizeof(int) * (size_t)(max_new + 1));
    if (!out) {
        err_set(err, "out of memory");
        goto done;
    }
    for (int i = 0; i < n_prompt; i++) print_piece(&st, prompt[i]); /* as llama2.c prints it */
    fflush(stdout);
    dec_stats stats;
    if (dec_generate(d, prompt, n_prompt, (int)max_new, out, &n_out, &stats, err)) goto done;
    printf("\n");
    fflush(stdout);
    /* Stopped by the context length rather than by max_new or the end token: say so, or a
     * user asking 252 tokens of a 128-token model just sees a short answer. */
    if (n_out < max_new && n_prompt + n_out >= s.target->cfg.seq_len &&
        (n_out == 0 || out[n_out - 1] != s.target->cfg.end_id))
        fprintf(stderr,
                "decbench generate: note: stopped after %d of %ld new tokens: the prompt (%d "
                "tokens) and the output fill the context length of %s (%d)\n",
                n_out, max_new, n_prompt, s.target->path, s.target->cfg.seq_len);
    if (args_flag(o, G_ALL, "--stats")) {
        char how[160];
        sampling_describe(&sampling, how, sizeof how);
        fprintf(stderr, "%-29s %s\n", "tokens chosen by", how);
        print_stats(dec_name(d), dec_spec(d), &stats);
    }
    rc = 0;
done:
    if (rc) cmd_fail("generate", err);
    dec_free(d);
    free(out);
    free(prompt);
    session_close(&s);
    return rc;
}

enum { T_TOK, T_MODEL, T_TEXT, T_BOS, T_SPECIAL, T_HELP, T_COUNT };

/* Opens the tokenizer named by --tokenizer, or the one belonging to --model: a GGUF file's own
 * vocabulary (only its tokenizer.* keys are read, so a vocabulary-only file of any
 * architecture works), else the llama2.c model's tok<vocab>.bin. */
static int open_tokenizer(args_opt *o, tok **t, char *err) {
    const char *tp = args_str(o, T_COUNT, "--tokenizer", NULL),
               *mp = args_str(o, T_COUNT, "--model", NULL);
    char found[4096]; /* a bare file name is looked up in the models folder */
    if (tp) {
        if (tok_load(t, session_find_model(tp, found, sizeof found), err)) return -1;
        session_print_warnings(*t);
        return 0;
    }
    if (!mp) return err_set(err, "give --tokenizer FILE or --model FILE");
    mp = session_find_model(mp, found, sizeof found);
    char magic[4] = {0};
    FILE *f = file_fopen_regular(mp, "model", err); /* a FIFO would block fopen() */
    if (!f) return -1;
    size_t got = fread(magic, 1, 4, f);
    fclose(f);
    if (got == 4 && memcmp(magic, "GGUF", 4) == 0) {
        if (tok_load(t, mp, err)) return -1;
        session_print_warnings(*t);
        return 0;
    }
    session s;
    if (session_open(&s, mp, NULL, NULL, "exact", 1, err)) return -1;
    *t = s.tokenizer;
    s.tokenizer = NULL;
    session_close(&s);
    return 0;
}

int cmd_tokenize(int argc, char **argv) {
    args_opt o[T_COUNT] = {
        [T_TOK] = {"--tokenizer", "-z", 1, "tokenizer file (llama2.c .bin or GGUF)", "FILE"},
        [T_MODEL] = {"--model", "-m", 1, "or: the model whose tokenizer to use", "FILE"},
        [T_TEXT] = {"--text", NULL, 1, "text to encode (required)", "TEXT"},
        [T_BOS] = {"--bos", NULL, 0, "prepend BOS"},
        [T_SPECIAL] = {"--special", NULL, 0,
                       "control tokens written in the text (<|im_start|>) are those tokens"},
        [T_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, T_COUNT, pos, 0, &n_pos, err))
        return cmd_usage("tokenize", err);
    if (args_flag(o, T_COUNT, "--help")) {
        args_usage(
            "decbench tokenize (--tokenizer FILE | --model FILE) --text STR [--bos] [--special]", o,
            T_COUNT);
        return 0;
    }
    const char *text = args_str(o, T_COUNT, "--text", NULL);
    if (!text) return cmd_usage("tokenize", "--text TEXT is required");
    if (!args_str(o, T_COUNT, "--tokenizer", NULL) && !args_str(o, T_COUNT, "--model", NULL))
        return cmd_usage("tokenize", "give --tokenizer FILE or --model FILE");
    tok *t;
    if (open_tokenizer(o, &t, err)) return cmd_fail("tokenize", err);
    int *ids = malloc(sizeof(int) * (strlen(text) + 3)), n = 0;
    int flags = (args_flag(o, T_COUNT, "--bos") ? TOK_ADD_BOS : 0) |
                (args_flag(o, T_COUNT, "--special") ? TOK_PARSE_SPECIAL : 0);
    int rc = !ids || tok_encode_flags(t, text, flags, ids, &n, err);
    if (rc)
        cmd_fail("tokenize", ids ? err : "out of memory");
    else {
        for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
        printf("\n");
    }
    free(ids);
    tok_free(t);
    return rc;
}

int cmd_detokenize(int argc, char **argv) {
    args_opt o[T_COUNT] = {
        [T_TOK] = {"--tokenizer", "-z", 1, "tokenizer file (llama2.c .bin or GGUF)", "FILE"},
        [T_MODEL] = {"--model", "-m", 1, "or: the model whose tokenizer to use", "FILE"},
        [T_TEXT] = {"--ids", NULL, 1, "space- or comma-separated token ids (default: read stdin)",
                    "IDS"},
        [T_BOS] = {"--bos", NULL, 0, "(unused; accepted for symmetry)"},
        [T_SPECIAL] = {"--special", NULL, 0, "(unused; accepted for symmetry)"},
        [T_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, T_COUNT, pos, 0, &n_pos, err))
        return cmd_usage("detokenize", err);
    if (args_flag(o, T_COUNT, "--help")) {
        args_usage("decbench detokenize (--tokenizer FILE | --model FILE) [--ids \"1 2 3\"]", o,
                   T_COUNT);
        return 0;
    }
    if (!args_str(o, T_COUNT, "--tokenizer", NULL) && !args_str(o, T_COUNT, "--model", NULL))
        return cmd_usage("detokenize", "give --tokenizer FILE or --model FILE");
    tok *t;
    if (open_tokenizer(o, &t, err)) return cmd_fail("detokenize", err);
    const char *ids = args_str(o, T_COUNT, "--ids", NULL);
    char *buf = NULL;
    size_t cap = 0;
    if (!ids) { /* read all of stdin */
        FILE *m = open_memstream(&buf, &cap);
        char chunk[4096];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, stdin)) > 0) fwrite(chunk, 1, k, m);
        fclose(m);
        ids = buf;
    }
    int prev = -1, rc = 0, index = 0;
    const char *p = ids;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\n' || *p == '\t') p++;
        if (!*p) break;
        char *end;
        errno = 0;
        long id = strtol(p, &end, 10);
        if (end == p || (*end && *end != ' ' && *end != ',' && *end != '\n' && *end != '\t')) {
            snprintf(err, sizeof err, "id %d: '%.20s' is not an integer", index, p);
            rc = 1;
            break;
        }
        size_t n = 0;
        const char *piece = errno || id < 0 || id > 1 << 30 ? NULL : tok_text(t, prev, (int)id, &n);
        if (!piece) { /* the id as typed: strtol saturates what overflows */
            snprintf(err, sizeof err, "id %d: %.*s is outside the vocabulary 0..%d", index,
                     (int)(end - p < 40 ? end - p : 40), p, tok_vocab_size(t) - 1);
            rc = 1;
            break;
        }
        fwrite(piece, 1, n, stdout);
        prev = (int)id;
        p = end;
        index++;
    }
    if (rc)
        cmd_fail("detokenize", err);
    else
        printf("\n");
    free(buf);
    tok_free(t);
    return rc;
}
