#include "harness/session.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/formats/gguf.h"
#include "model/convert/requant.h"
#include "model/loader/model_file.h"
#include "util/err.h"
#include "util/paths.h"

/* The CPUs this process may run on (its affinity mask), so that `taskset` and `numactl
 * --cpunodebind` choose the default thread count as they choose the CPUs; all online CPUs if
 * the mask cannot be read. More threads than allowed CPUs would only take turns on them. */
int session_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
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

/* 1 if path is a GGUF file holding a vocabulary (tokenizer.ggml.tokens). */
static int has_gguf_vocab(const char *path) {
    char err[ERR_LEN];
    gguf *g;
    if (gguf_open(&g, path, err)) return 0;
    int has = gguf_find_key(g, "tokenizer.ggml.tokens") >= 0;
    gguf_close(g);
    return has;
}

void session_print_warnings(const tok *t) {
    const char *w = tok_warnings(t);
    while (*w) {
        const char *end = strchr(w, '\n');
        int len = end ? (int)(end - w) : (int)strlen(w);
        fprintf(stderr, "decbench: warning: %.*s\n", len, w);
        w += len + (end != NULL);
    }
}

/* A draft must share the target's vocabulary. When both vocabularies are GGUF's, they are
 * compared as llama.cpp compares them (tok_compatible: sizes may differ by up to 128 padding
 * tokens, and the draft's logits are then padded to the target's width); otherwise the draft
 * runs on the session's tokenizer and must have its size. */
static int check_draft(session *s, const char *draft_path, char *err) {
    int tv = s->target->cfg.vocab_size, dv = s->draft->cfg.vocab_size;
    if (has_gguf_vocab(s->tokenizer_path) && has_gguf_vocab(draft_path)) {
        tok *dt = NULL;
        int rc = tok_load(&dt, draft_path, err);
        if (rc == 0) session_print_warnings(dt);
        rc = rc || tok_compatible(s->tokenizer, dt, draft_path, err);
        tok_free(dt);
        if (rc) return -1;
    } else if (dv != tv) {
        return err_set(err, "draft %s has a vocabulary of %d tokens, the target %s has %d: they "
                            "must share one", draft_path, dv, s->target->path, tv);
    }
    if (dv != tv) model_pad_logits(s->draft, tv);
    return 0;
}

const char *session_self_type(const char *draft_path) {
    return draft_path && strncmp(draft_path, "self:", 5) == 0 ? draft_path + 5 : NULL;
}

/* --draft self:TYPE: the target requantized in memory (model/convert/requant.h) as `decbench convert
 * --type TYPE` would store it (a type, or a llama-quantize mix; rows TYPE cannot hold in f16);
 * s->draft_note says what was built. */
static int open_self_draft(session *s, const char *type, char *err) {
    convert_opts o = {.fallback = CONVERT_FALLBACK_F16};
    if (convert_scheme_parse(type, &o)) {
        char list[256];
        convert_scheme_list(list, sizeof list);
        return err_set(err, "--draft self:%s: unknown weight type '%s'; self:TYPE takes %s", type,
                       type, list);
    }
    convert_report rep;
    if (model_requantize(&s->draft, s->target, &o, &rep, err)) return -1;
    int n = snprintf(s->draft_note, sizeof s->draft_note,
                     "draft self:%s: the target's %d weight matrices requantized in memory, %.2f MB",
                     type, rep.n_matrices, (double)rep.weight_bytes / 1e6);
    if (rep.n_fallback && n > 0 && (size_t)n < sizeof s->draft_note)
        snprintf(s->draft_note + n, sizeof s->draft_note - (size_t)n,
                 "; %d stored as %s (rows of %d values, not whole blocks of %s, e.g. %s)",
                 rep.n_fallback, wtype_name(rep.fallback_type), rep.first_fallback_cols, type,
                 rep.first_fallback);
    snprintf(s->draft_path, sizeof s->draft_path, "self:%s", type);
    return 0;
}

int session_kernels(const char *name, kern_mode *out, char *err) {
    if (kern_mode_parse(name ? name : "auto", out))
        return err_set(err, "--kernels %.64s: expected " KERN_MODE_NAMES, name);
    return 0;
}

int session_kv_type(const char *name, kv_type *out, char *err) {
    if (kv_type_parse(name ? name : "f32", out))
        return err_set(err, "--kv-type %.64s: expected " KV_TYPE_NAMES, name);
    return 0;
}

int session_set_kv(session *s, const char *name, char *err) {
    if (session_kv_type(name, &s->kv, err)) return -1;
    model_set_kv(s->target, s->kv);
    if (s->draft) model_set_kv(s->draft, s->kv);
    return 0;
}

int session_open(session *s, const char *model_path, const char *draft_path,
                 const char *tokenizer_path, const char *kernels, int threads, char *err) {
    memset(s, 0, sizeof *s);
    if (!model_path) return err_set(err, "--model FILE is required");
    if (session_kernels(kernels, &s->kernels, err)) return -1;
    s->threads = threads > 0 ? threads : session_cores();
    if (tpool_new(&s->pool, s->threads, err)) return -1;
    if (open_model(&s->target, model_path, s->model_path, sizeof s->model_path, err)) goto fail;
    if (session_self_type(draft_path)) {
        if (open_self_draft(s, session_self_type(draft_path), err)) goto fail;
    } else if (draft_path &&
               open_model(&s->draft, draft_path, s->draft_path, sizeof s->draft_path, err))
        goto fail;
    if (tokenizer_path)
        session_find_model(tokenizer_path, s->tokenizer_path, sizeof s->tokenizer_path);
    else if (default_tokenizer(s->target, s->tokenizer_path, sizeof s->tokenizer_path, err)) goto fail;
    if (tok_load(&s->tokenizer, s->tokenizer_path, err)) goto fail;
    session_print_warnings(s->tokenizer);
    if (tok_vocab_size(s->tokenizer) != s->target->cfg.vocab_size) {
        err_set(err, "tokenizer %s has %d tokens but model %s has a vocabulary of %d: they do not "
                     "belong together", s->tokenizer_path, tok_vocab_size(s->tokenizer), model_path,
                s->target->cfg.vocab_size);
        goto fail;
    }
    if (s->draft && !session_self_type(draft_path) && check_draft(s, draft_path, err)) goto fail;
    s->token_bytes = 4;
    for (int id = 0; id < tok_vocab_size(s->tokenizer); id++) {
        char buf[TOK_PIECE_MAX];
        const char *piece = tok_piece(s->tokenizer, id);
        int n = tok_decode(s->tokenizer, -1, id, buf, sizeof buf);
        size_t len = piece ? strlen(piece) : 0;
        if (len > s->token_bytes) s->token_bytes = len;
        if (n > 0 && (size_t)n > s->token_bytes) s->token_bytes = (size_t)n;
    }
    s->kernels = kern_mode_resolve(s->kernels, s->target, s->draft);
    s->vocab_fingerprint = tok_fingerprint(s->tokenizer);
    return 0;
fail:
    session_close(s);
    return -1;
}

int session_set_ctx(session *s, int n, char *err) {
    if (n == 0) return 0;
    if (model_set_context(s->target, n, err)) return -1;
    if (!s->draft) return 0;
    int dn = n < s->draft->cfg.ctx_train ? n : s->draft->cfg.ctx_train;
    return model_set_context(s->draft, dn, err);
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

int session_text_fits(const session *s, const char *text, long max_tokens, size_t *len) {
    *len = strlen(text);
    return *len <= SESSION_ENCODE_ALWAYS ||
           *len <= (size_t)max_tokens * (s->token_bytes ? s->token_bytes : 4);
}

dec_env session_env(const session *s) {
    return (dec_env){.target = s->target,
                     .draft = s->draft,
                     .pool = s->pool,
                     .kernels = s->kernels,
                     .allow_nonfinite = s->allow_nonfinite,
                     .sampling = s->sampling,
                     .vocab_fingerprint = s->vocab_fingerprint};
}
