#include "harness/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/paths.h"

int session_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int default_tokenizer(const model *m, char *out, size_t n, char *err) {
    if (strcmp(m->format, "gguf") == 0) {
        snprintf(out, n, "%s", m->path); /* its own vocabulary */
        return 0;
    }
    char dir[1024];
    if (paths_models_dir(NULL, dir, sizeof dir) == 0) {
        snprintf(out, n, "%s/tok%d.bin", dir, m->cfg.vocab_size);
        if (access(out, R_OK) == 0) return 0;
    }
    return err_set(err, "%s: no --tokenizer given and no tok%d.bin found in the models folder "
                        "(%s); pass --tokenizer FILE", m->path, m->cfg.vocab_size, dir);
}

const char *session_find_model(const char *name, char *out, size_t n) {
    snprintf(out, n, "%s", name);
    if (strchr(name, '/') || access(name, F_OK) == 0) return out;
    char dir[2048], path[4096];
    if (paths_models_dir(NULL, dir, sizeof dir) == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (access(path, F_OK) == 0) snprintf(out, n, "%s", path);
    }
    return out;
}

/* Opens one model; a bare name found nowhere says where it was looked for. */
static int open_model(model **m, const char *name, char *path, size_t n, char *err) {
    session_find_model(name, path, n);
    if (model_open(m, path, err) == 0) return 0;
    char dir[2048];
    if (!strchr(name, '/') && access(name, F_OK) != 0 &&
        paths_models_dir(NULL, dir, sizeof dir) == 0) {
        size_t len = strlen(err);
        snprintf(err + len, ERR_LEN - len, " (nor in the models folder %s)", dir);
    }
    return -1;
}

int session_open(session *s, const char *model_path, const char *draft_path,
                 const char *tokenizer_path, const char *kernels, int threads, char *err) {
    memset(s, 0, sizeof *s);
    if (!model_path) return err_set(err, "--model FILE is required");
    if (kern_mode_parse(kernels ? kernels : "exact", &s->kernels))
        return err_set(err, "--kernels %s: expected exact or blas", kernels);
    s->threads = threads > 0 ? threads : session_cores();
    if (tpool_new(&s->pool, s->threads, err)) return -1;
    if (open_model(&s->target, model_path, s->model_path, sizeof s->model_path, err)) goto fail;
    if (draft_path &&
        open_model(&s->draft, draft_path, s->draft_path, sizeof s->draft_path, err))
        goto fail;
    if (s->draft && s->draft->cfg.vocab_size != s->target->cfg.vocab_size) {
        err_set(err, "draft %s has a vocabulary of %d tokens, the target %s has %d: they must "
                     "share one", draft_path, s->draft->cfg.vocab_size, model_path,
                s->target->cfg.vocab_size);
        goto fail;
    }
    if (tokenizer_path)
        session_find_model(tokenizer_path, s->tokenizer_path, sizeof s->tokenizer_path);
    else if (default_tokenizer(s->target, s->tokenizer_path, sizeof s->tokenizer_path, err)) goto fail;
    if (tok_load(&s->tokenizer, s->tokenizer_path, err)) goto fail;
    if (tok_vocab_size(s->tokenizer) != s->target->cfg.vocab_size) {
        err_set(err, "tokenizer %s has %d tokens but model %s has a vocabulary of %d: they do not "
                     "belong together", s->tokenizer_path, tok_vocab_size(s->tokenizer), model_path,
                s->target->cfg.vocab_size);
        goto fail;
    }
    return 0;
fail:
    session_close(s);
    return -1;
}

void session_close(session *s) {
    tok_free(s->tokenizer);
    model_close(s->draft);
    model_close(s->target);
    tpool_free(s->pool);
    memset(s, 0, sizeof *s);
}

int session_encode(const session *s, const char *text, int **ids, int *n, char *err) {
    return session_encode_flags(s, text, 0, ids, n, err);
}

int session_encode_flags(const session *s, const char *text, int flags, int **ids, int *n,
                         char *err) {
    *ids = malloc(sizeof(int) * (strlen(text) + 3));
    if (!*ids) return err_set(err, "out of memory encoding the prompt");
    if (tok_add_bos(s->tokenizer)) flags |= TOK_ADD_BOS;
    if (tok_encode_flags(s->tokenizer, text, flags, *ids, n, err)) {
        free(*ids);
        *ids = NULL;
        return -1;
    }
    return 0;
}

dec_env session_env(const session *s) {
    return (dec_env){.target = s->target, .draft = s->draft, .pool = s->pool,
                     .kernels = s->kernels, .sampling = s->sampling};
}
