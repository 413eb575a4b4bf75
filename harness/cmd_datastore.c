/* cmd_datastore.c: `decbench datastore build`: REST's datastore (util/token_store.h) from a
 * corpus tokenized with a model's tokenizer, for the rest decoder (rest:ds=FILE).
 *
 *   decbench datastore build --model M [--tokenizer T] --from SOURCE [--from SOURCE...]
 *                            [--field reference|prompt] [--offset N] [--limit N] -o FILE
 *
 * A SOURCE that names a file is text: one document, or several separated by TinyStories'
 * "<|endoftext|>" marker. Any other SOURCE is a dataset (`decbench run --dataset`'s names)
 * whose records' reference answers (--field reference, the default: HumanEval's and MBPP's
 * solutions, TinyStories' paragraphs) or prompts become the documents, records
 * [--offset, --offset + --limit) of each. Each document is encoded as the tokenizer encodes a
 * prompt (BOS first when the vocabulary adds it), and the documents are concatenated, as
 * REST's get_datastore_*.py feed DraftRetriever's Writer. A datastore must not hold the
 * answers of the prompts it will be measured on: build it from a training split
 * (`mbpp/train`), or skip the records measured (`--from tinystories --offset 100` for runs
 * with --limit 100 or less). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datasets/dataset.h"
#include "harness/args.h"
#include "harness/commands.h"
#include "harness/session.h"
#include "util/err.h"
#include "util/file.h"
#include "util/token_store.h"

enum { D_MODEL, D_TOK, D_FROM, D_FIELD, D_OFFSET, D_LIMIT, D_DATA, D_OUT, D_HELP, D_COUNT };

#define END_MARK "<|endoftext|>"

typedef struct {
    uint32_t *tok;
    size_t n, cap;
    int docs;
    const tok *t;
    int *ids; /* one document's encoding */
    size_t ids_cap;
} corpus;

/* Appends the document text[0..len) (not NUL-terminated), skipping one of whitespace only. */
static int add_doc(corpus *c, const char *text, size_t len, char *err) {
    while (len && strchr(" \t\r\n", *text)) text++, len--;
    while (len && strchr(" \t\r\n", text[len - 1])) len--;
    if (!len) return 0;
    char *s = malloc(len + 1);
    if (!s) return err_set(err, "out of memory");
    memcpy(s, text, len);
    s[len] = '\0';
    if (len + 3 > c->ids_cap) {
        free(c->ids);
        c->ids_cap = len + 3;
        c->ids = malloc(sizeof(int) * c->ids_cap);
    }
    int n = 0;
    int rc = !c->ids ? err_set(err, "out of memory")
                     : tok_encode(c->t, s, tok_add_bos(c->t), c->ids, &n, err);
    free(s);
    if (rc) return -1;
    if (c->n + (size_t)n > TSTORE_MAX_TOKENS)
        return err_set(err, "the corpus passes %d tokens, more than a datastore holds",
                       TSTORE_MAX_TOKENS);
    if (c->n + (size_t)n > c->cap) {
        size_t cap = c->cap ? c->cap : 1 << 16;
        while (cap < c->n + (size_t)n) cap *= 2;
        uint32_t *p = realloc(c->tok, sizeof(uint32_t) * cap);
        if (!p) return err_set(err, "out of memory for %zu tokens", cap);
        c->tok = p, c->cap = cap;
    }
    for (int i = 0; i < n; i++) c->tok[c->n++] = (uint32_t)c->ids[i];
    c->docs++;
    return 0;
}

/* A text file: its documents split at END_MARK. */
static int add_file(corpus *c, const char *path, char *err) {
    unsigned char *buf;
    size_t size;
    if (file_read_all(path, "corpus", 1ull << 34, &buf, &size, err)) return -1;
    if (memchr(buf, '\0', size)) {
        free(buf);
        return err_set(err, "%s: a NUL byte: not a text file", path);
    }
    const char *p = (const char *)buf, *end = p + size;
    int rc = 0;
    while (rc == 0 && p < end) {
        const char *m = strstr(p, END_MARK);
        const char *stop = m ? m : end;
        rc = add_doc(c, p, (size_t)(stop - p), err);
        p = m ? m + strlen(END_MARK) : end;
    }
    free(buf);
    return rc;
}

static int add_dataset(corpus *c, const char *spec, int reference, long offset, long limit,
                       const char *data_dir, char *err) {
    ds_set *set;
    if (ds_open(&set, spec, NULL, data_dir, err)) return -1;
    int rc = ds_select(set, (int)offset, (int)limit, 0, 0, err), used = 0;
    for (int i = 0; rc == 0 && i < ds_count(set); i++) {
        const ds_sample *x = ds_get(set, i);
        const char *text = reference ? x->reference : x->prompt;
        if (!text) continue;
        rc = add_doc(c, text, strlen(text), err);
        used++;
    }
    if (rc == 0 && !used)
        rc = err_set(err, "%s: no record of the selection has a %s (try --field %s)", spec,
                     reference ? "reference answer" : "prompt", reference ? "prompt" : "reference");
    ds_free(set);
    return rc;
}

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

int cmd_datastore(int argc, char **argv) {
    args_opt o[D_COUNT] = {
        [D_MODEL] = {"--model", "-m", 1, "the model whose tokenizer encodes the corpus (required)",
                     "FILE"},
        [D_TOK] = {"--tokenizer", "-z", 1,
                   "its tokenizer, when not the model's own (as `run --tokenizer`)", "FILE"},
        [D_FROM] = {"--from", NULL, 1,
                    "a text file (documents split at <|endoftext|>) or a dataset (`run "
                    "--dataset` names); repeatable",
                    "SOURCE"},
        [D_FIELD] = {"--field", NULL, 1, "a dataset's reference answers (default) or its prompts",
                     "reference|prompt"},
        [D_OFFSET] = {"--offset", NULL, 1,
                      "skip a dataset's first N records (those a run measures)", "N"},
        [D_LIMIT] = {"--limit", NULL, 1, "at most N records of each dataset (default 0 = all)",
                     "N"},
        [D_DATA] = {"--data-dir", NULL, 1, "the datasets folder (as `run --data-dir`)", "DIR"},
        [D_OUT] = {"--output", "-o", 1, "the datastore file to write (required)", "FILE"},
        [D_HELP] = {"--help", "-h", 0, "this help"},
    };
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    const char *usage_line = "decbench datastore build --model FILE --from SOURCE [--from ...] "
                             "[--field reference|prompt] [--offset N] [--limit N] -o FILE";
    int build = argc > 2 && !strcmp(argv[2], "build");
    if (args_parse(argc, argv, build ? 3 : 2, o, D_COUNT, pos, 0, &n_pos, err))
        return cmd_usage("datastore", err);
    if (args_flag(o, D_COUNT, "--help")) {
        args_usage(usage_line, o, D_COUNT);
        return 0;
    }
    if (!build) return cmd_usage("datastore", "say what to do: `datastore build` (see --help)");
    const char *model = args_str(o, D_COUNT, "--model", NULL),
               *out = args_str(o, D_COUNT, "--output", NULL),
               *field = args_str(o, D_COUNT, "--field", "reference");
    const args_opt *from = args_get(o, D_COUNT, "--from");
    if (!model || !out || !from || !from->count)
        return cmd_usage("datastore", "--model FILE, --from SOURCE and -o FILE are required");
    if (strcmp(field, "reference") && strcmp(field, "prompt"))
        return cmd_usage("datastore", "--field: 'reference' or 'prompt'");
    long offset, limit;
    if (args_int(o, D_COUNT, "--offset", 0, 0, 1 << 30, &offset, err) ||
        args_int(o, D_COUNT, "--limit", 0, 0, 1 << 30, &limit, err))
        return cmd_usage("datastore", err);
    /* the output must not replace an input */
    file_io io[ARGS_MAX_VALUES + 3];
    int n_io = 0;
    io[n_io++] = (file_io){"--model", model, FILE_IO_IN, NULL};
    io[n_io++] =
        (file_io){"--tokenizer", args_str(o, D_COUNT, "--tokenizer", NULL), FILE_IO_IN, NULL};
    for (int i = 0; i < from->count; i++)
        if (is_file(from->values[i]))
            io[n_io++] = (file_io){"--from", from->values[i], FILE_IO_IN, NULL};
    io[n_io++] = (file_io){"--output", out, FILE_IO_OUT, "datastore"};
    if (file_check_io(io, n_io, err)) return cmd_fail("datastore", err);
    session s;
    if (session_open(&s, model, NULL, args_str(o, D_COUNT, "--tokenizer", NULL), "exact", 1, err))
        return cmd_fail("datastore", err);
    corpus c = {.t = s.tokenizer};
    int rc = 0;
    for (int i = 0; rc == 0 && i < from->count; i++) {
        const char *src = from->values[i];
        rc = is_file(src) ? add_file(&c, src, err)
                          : add_dataset(&c, src, !strcmp(field, "reference"), offset, limit,
                                        args_str(o, D_COUNT, "--data-dir", NULL), err);
    }
    if (rc == 0 && c.n == 0) rc = err_set(err, "the sources hold no text: nothing to index");
    if (rc == 0)
        rc = tstore_write(out, c.tok, (int)c.n, c.docs, s.target->cfg.vocab_size,
                          s.vocab_fingerprint, err);
    if (rc == 0)
        printf("%s: %zu tokens of %d documents, vocabulary of %d (fingerprint %016llx)\n", out, c.n,
               c.docs, s.target->cfg.vocab_size, (unsigned long long)s.vocab_fingerprint);
    free(c.tok), free(c.ids);
    session_close(&s);
    return rc ? cmd_fail("datastore", err) : 0;
}
