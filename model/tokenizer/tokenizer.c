/* tokenizer.c: the tokenizer's public API (tokenizer.h). Detects the file format, picks the
 * vocabulary type from one table (tokenizer.ggml.model, as llama.cpp's llama_vocab_type) and
 * does what is common to every type: token types, special ids (read as llama.cpp's
 * llama_vocab::impl::load reads them, with its leniency), the add-BOS flag, and matching
 * special tokens in the raw text before the type's encoder sees it (llama.cpp's
 * tokenizer_st_partition). The types live in tok_spm.c and tok_bpe.c. */
#include "model/tokenizer/tokenizer.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tok_internal.h"
#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"

/* The vocabulary types: a new one is a tok_kind row here plus its file. */
static const tok_kind *const kinds[] = {&tok_kind_spm, &tok_kind_bpe};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

int tok_vocab_size(const tok *t) {
    return t->n;
}
int tok_bos(const tok *t) {
    return t->bos;
}
int tok_eos(const tok *t) {
    return t->eos;
}
int tok_eot(const tok *t) {
    return t->eot;
}
int tok_pad(const tok *t) {
    return t->pad;
}
int tok_add_bos(const tok *t) {
    return t->add_bos;
}
int tok_add_eos(const tok *t) {
    return t->add_eos;
}
const char *tok_model_name(const tok *t) {
    return t->kind->model;
}
const char *tok_pre_name(const tok *t) {
    return t->pre ? t->pre : "";
}
const char *tok_chat_template(const tok *t) {
    return t->chat_template;
}

const char *tok_warnings(const tok *t) {
    return t->warn ? t->warn : "";
}

const char *tok_piece(const tok *t, int id) {
    return id >= 0 && id < t->n ? t->kind->piece(t, id) : NULL;
}

const char *tok_text(const tok *t, int prev, int id, size_t *len) {
    *len = 0;
    if (id < 0 || id >= t->n) return NULL;
    return t->kind->text(t, prev, id, len);
}

int tok_decode(const tok *t, int prev, int id, char *buf, size_t n) {
    size_t len;
    const char *s = tok_text(t, prev, id, &len);
    if (!s || len >= n || len > INT_MAX) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    return (int)len;
}

void tok_free(tok *t) {
    if (!t) return;
    if (t->kind && t->impl) t->kind->free_impl(t->impl);
    free(t->type);
    free(t->special);
    free(t->chat_template);
    free(t->warn);
    free(t);
}

/* ---- special tokens -------------------------------------------------------------------- */

static int by_length_desc(const void *a, const void *b, void *ctx) {
    int x = *(const int *)a, y = *(const int *)b;
    size_t lx = strlen(tok_piece(ctx, x)), ly = strlen(tok_piece(ctx, y));
    if (lx != ly) return lx > ly ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The tokens matched in raw text: control, user-defined and unknown ones, longest first as
 * llama.cpp's cache_special_tokens (its sort leaves equal lengths in no set order; ours is
 * by id). */
static int build_specials(tok *t, const char *path, char *err) {
    int count = 0;
    for (int i = 0; i < t->n; i++)
        count += t->type[i] == TT_CONTROL || t->type[i] == TT_USER || t->type[i] == TT_UNKNOWN;
    if (count == 0) return 0;
    t->special = malloc((size_t)count * sizeof *t->special);
    if (!t->special) return err_set(err, "%s: out of memory", path);
    for (int i = 0; i < t->n; i++)
        if ((t->type[i] == TT_CONTROL || t->type[i] == TT_USER || t->type[i] == TT_UNKNOWN) &&
            tok_piece(t, i)[0] != 0)
            t->special[t->n_special++] = i;
    qsort_r(t->special, (size_t)t->n_special, sizeof *t->special, by_length_desc, t);
    return 0;
}

/* ---- special ids (llama.cpp's llama_vocab::impl::load, "special tokens") ---------------- */

enum {
    SP_BOS,
    SP_EOS,
    SP_EOT,
    SP_EOM,
    SP_UNK,
    SP_SEP,
    SP_PAD,
    SP_MASK,
    SP_FIM_PRE,
    SP_FIM_SUF,
    SP_FIM_MID,
    SP_FIM_PAD,
    SP_FIM_REP,
    SP_FIM_SEP,
    SP_COUNT
};

/* llama.cpp's keys in its order: a later key of a role (the deprecated prefix, suffix and
 * middle names) overrides an earlier one. ("seperator" is llama.cpp's spelling.) */
static const struct {
    const char *key;
    int role;
} special_keys[] = {
    {"tokenizer.ggml.bos_token_id", SP_BOS},
    {"tokenizer.ggml.eos_token_id", SP_EOS},
    {"tokenizer.ggml.eot_token_id", SP_EOT},
    {"tokenizer.ggml.eom_token_id", SP_EOM},
    {"tokenizer.ggml.unknown_token_id", SP_UNK},
    {"tokenizer.ggml.seperator_token_id", SP_SEP},
    {"tokenizer.ggml.padding_token_id", SP_PAD},
    {"tokenizer.ggml.mask_token_id", SP_MASK},
    {"tokenizer.ggml.fim_pre_token_id", SP_FIM_PRE},
    {"tokenizer.ggml.fim_suf_token_id", SP_FIM_SUF},
    {"tokenizer.ggml.fim_mid_token_id", SP_FIM_MID},
    {"tokenizer.ggml.fim_pad_token_id", SP_FIM_PAD},
    {"tokenizer.ggml.fim_rep_token_id", SP_FIM_REP},
    {"tokenizer.ggml.fim_sep_token_id", SP_FIM_SEP},
    {"tokenizer.ggml.prefix_token_id", SP_FIM_PRE},
    {"tokenizer.ggml.suffix_token_id", SP_FIM_SUF},
    {"tokenizer.ggml.middle_token_id", SP_FIM_MID},
};
#define N_SPECIAL_KEYS (sizeof special_keys / sizeof special_keys[0])

/* Reads every special-id key into id[] (which holds the defaults). A value that is no token
 * of the n keeps the default, as llama.cpp keeps it ("bad special token ... using default
 * id"): llama.cpp's own converters write 4294967295 (its "no token", -1 as u32) for a role the
 * model lacks. Those keys are listed in bad (for one warning line), "" when none. A value
 * that is not an unsigned 32-bit integer is refused, as llama.cpp refuses it. */
static int read_special_ids(const gguf *g, int n, int id[SP_COUNT], char *bad, size_t nbad,
                            char *err) {
    bad[0] = 0;
    for (size_t k = 0; k < N_SPECIAL_KEYS; k++) {
        uint32_t v;
        if (gguf_find_key(g, special_keys[k].key) < 0) continue;
        if (gguf_get_u32(g, special_keys[k].key, &v, err)) return -1;
        if (v < (uint32_t)n) {
            id[special_keys[k].role] = (int)v;
            continue;
        }
        size_t len = strlen(bad);
        snprintf(bad + len, nbad - len, "%s%s = %u", len ? ", " : "", special_keys[k].key, v);
    }
    return 0;
}

/* The type's default ids, or -1 where the default is no token of the n (llama.cpp would keep
 * an id it cannot index; nothing can use one). */
static void default_ids(const tok_kind *k, int n, int id[SP_COUNT]) {
    for (int r = 0; r < SP_COUNT; r++) id[r] = -1;
    id[SP_BOS] = k->def_bos < n ? k->def_bos : -1;
    id[SP_EOS] = k->def_eos < n ? k->def_eos : -1;
    id[SP_UNK] = k->def_unk < n ? k->def_unk : -1;
}

static const tok_kind *kind_named(const char *model) {
    for (size_t k = 0; k < N_KINDS; k++)
        if (strcmp(model, kinds[k]->model) == 0) return kinds[k];
    return NULL;
}

int tok_gguf_bos_eos(const gguf *g, int n, int *bos, int *eos, char *err) {
    int id[SP_COUNT];
    for (int r = 0; r < SP_COUNT; r++) id[r] = -1;
    const char *model;
    const tok_kind *k = NULL;
    if (gguf_find_key(g, "tokenizer.ggml.model") >= 0 &&
        gguf_get_str(g, "tokenizer.ggml.model", &model, err) == 0)
        k = kind_named(model);
    if (k) {
        default_ids(k, n, id);
    } else {
        id[SP_BOS] = *bos, id[SP_EOS] = *eos;
    }
    char bad[N_SPECIAL_KEYS * 64];
    if (read_special_ids(g, n, id, bad, sizeof bad, err)) return -1;
    *bos = id[SP_BOS], *eos = id[SP_EOS];
    return 0;
}

/* Roles llama.cpp finds by their text when no key names them; it makes each such token, and
 * every end-of-generation text below, a control token (so it decodes to nothing and is not
 * matched in text unless parsing specials). */
static const struct {
    int role;
    const char *texts[8]; /* the texts searched, first present wins */
} text_roles[] = {
    {SP_EOT,
     {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>",
      "<\xef\xbd\x9c"
      "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"}},
    {SP_EOM, {"<|eom_id|>"}},
    {SP_FIM_PRE,
     {"<|fim_prefix|>", "<fim-prefix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "begin\xef\xbd\x9c>",
      "<PRE>"}},
    {SP_FIM_SUF,
     {"<|fim_suffix|>", "<fim-suffix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81hole\xef\xbd\x9c>",
      "<SUF>"}},
    {SP_FIM_MID,
     {"<|fim_middle|>", "<fim-middle>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "end\xef\xbd\x9c>",
      "<MID>"}},
    {SP_FIM_PAD, {"<|fim_pad|>", "<fim-pad>", "<PAD>"}},
    {SP_FIM_REP, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"}},
    {SP_FIM_SEP, {"<|file_sep|>"}},
};
/* End-of-generation texts: always control tokens in llama.cpp. */
static const char *const eog_texts[] = {"<|eot_id|>",    "<|im_end|>", "<|end|>", "<end_of_turn>",
                                        "<|endoftext|>", "<|eom_id|>", "<EOT>"};

static void find_text_roles(tok *t, int id[SP_COUNT]) {
    for (size_t r = 0; r < sizeof text_roles / sizeof text_roles[0]; r++) {
        int *at = &id[text_roles[r].role];
        for (int k = 0; k < 8 && text_roles[r].texts[k] && *at < 0; k++)
            if ((*at = t->kind->find(t, text_roles[r].texts[k], strlen(text_roles[r].texts[k]))) >=
                0)
                t->type[*at] = TT_CONTROL;
    }
    for (size_t k = 0; k < sizeof eog_texts / sizeof eog_texts[0]; k++) {
        int i = t->kind->find(t, eog_texts[k], strlen(eog_texts[k]));
        if (i >= 0) t->type[i] = TT_CONTROL;
    }
}

/* ---- loading --------------------------------------------------------------------------- */

static int load_gguf(tok *t, const char *path, char *err) {
    gguf *g;
    if (gguf_open(&g, path, err)) return -1;
    const char *model;
    int rc = -1;
    if (gguf_get_str(g, "tokenizer.ggml.model", &model, err)) goto done;
    if (!(t->kind = kind_named(model))) {
        err_set(err,
                "%s: tokenizer model '%.40s' is not supported (known: 'llama' SentencePiece, "
                "'gpt2' byte-level BPE)",
                path, model);
        goto done;
    }
    if (t->kind->load_gguf(t, g, err)) goto done;
    int id[SP_COUNT];
    char bad[N_SPECIAL_KEYS * 64];
    default_ids(t->kind, t->n, id);
    if (read_special_ids(g, t->n, id, bad, sizeof bad, err)) goto done;
    if (bad[0])
        tok_warn(t,
                 "%s: %s: not token ids of its %d tokens, read as absent (the %s defaults), as "
                 "llama.cpp reads them",
                 path, bad, t->n, t->kind->what);
    if (gguf_find_key(g, "tokenizer.ggml.add_bos_token") >= 0 &&
        gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err))
        goto done;
    if (gguf_find_key(g, "tokenizer.ggml.add_eos_token") >= 0 &&
        gguf_get_bool(g, "tokenizer.ggml.add_eos_token", &t->add_eos, err))
        goto done;
    find_text_roles(t, id);
    t->bos = id[SP_BOS], t->eos = id[SP_EOS], t->unk = id[SP_UNK];
    t->eot = id[SP_EOT], t->pad = id[SP_PAD];
    /* llama.cpp asserts on the first prompt there; refusing now says why */
    if (t->add_bos && t->bos < 0) {
        err_set(err,
                "%s: prompts start with BOS (tokenizer.ggml.add_bos_token) but the vocabulary "
                "has no BOS token (tokenizer.ggml.bos_token_id)",
                path);
        goto done;
    }
    if (t->kind->finish && t->kind->finish(t, path, err)) goto done;
    /* A model's <arch>.vocab_size only names the model's size class in llama.cpp, which takes
     * the vocabulary's size from the tokens: a different value is ignored there and here. */
    const char *arch;
    char key[96];
    uint32_t declared;
    if (gguf_find_key(g, "general.architecture") >= 0 &&
        gguf_get_str(g, "general.architecture", &arch, NULL) == 0 &&
        snprintf(key, sizeof key, "%.64s.vocab_size", arch) > 0 && gguf_find_key(g, key) >= 0 &&
        gguf_get_u32(g, key, &declared, NULL) == 0 && declared != (uint32_t)t->n)
        tok_warn(t, "%s: %s = %u differs from its %d tokens: ignored, as llama.cpp ignores it",
                 path, key, declared, t->n);
    if (gguf_find_key(g, "tokenizer.chat_template") >= 0) {
        const char *tpl;
        if (gguf_get_str(g, "tokenizer.chat_template", &tpl, err)) goto done;
        if (!(t->chat_template = strdup(tpl))) {
            err_set(err, "%s: out of memory", path);
            goto done;
        }
    }
    rc = 0;
done:
    gguf_close(g);
    return rc;
}

int tok_file_chat_template(const char *path, char **out, char *err) {
    *out = NULL;
    FILE *f = file_fopen_regular(path, "tokenizer", err); /* a FIFO would block fopen() */
    if (!f) return -1;
    char magic[4];
    int gguf_file = fread(magic, 1, 4, f) == 4 && memcmp(magic, "GGUF", 4) == 0;
    fclose(f);
    if (!gguf_file) return 0;
    gguf *g;
    if (gguf_open(&g, path, err)) return -1;
    const char *tpl;
    int rc = 0;
    if (gguf_find_key(g, "tokenizer.chat_template") >= 0) {
        if (gguf_get_str(g, "tokenizer.chat_template", &tpl, err))
            rc = -1;
        else if (!(*out = strdup(tpl)))
            rc = err_set(err, "%s: out of memory", path);
    }
    gguf_close(g);
    return rc;
}

int tok_load(tok **out, const char *path, char *err) {
    *out = NULL;
    void *map; /* a FIFO would block open(): file_map_regular refuses it */
    size_t size;
    if (file_map_regular(path, "tokenizer", &map, &size, err)) return -1;
    tok *t = calloc(1, sizeof *t);
    int rc;
    if (!t) {
        rc = err_set(err, "%s: out of memory", path);
    } else {
        t->bos = t->eos = t->eot = t->pad = t->unk = -1;
        if (size >= 4 && memcmp(map, "GGUF", 4) == 0) {
            rc = load_gguf(t, path, err);
        } else {
            t->kind = &tok_kind_spm;
            rc = tok_spm_load_llama2c(t, map, size, path, err);
        }
        if (rc == 0) rc = build_specials(t, path, err);
    }
    munmap(map, size);
    if (rc) {
        tok_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

/* ---- drafts ----------------------------------------------------------------------------- */

/* llama.cpp's common_speculative_are_compatible (common/speculative.cpp): the limits it uses. */
#define COMPAT_MAX_SIZE_DIFF 128 /* SPEC_VOCAB_MAX_SIZE_DIFFERENCE */
#define COMPAT_FIRST_ID 5        /* SPEC_VOCAB_CHECK_START_TOKEN_ID */

/* At most n - 1 bytes of s for a message, control bytes as '?'. */
static void shown(char *out, size_t n, const char *s) {
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) out[i] = (unsigned char)s[i] < 32 ? '?' : s[i];
    out[i] = 0;
}

int tok_compatible(const tok *target, const tok *draft, const char *draft_path, char *err) {
    /* llama.cpp compares llama_vocab_type through a bool, so SentencePiece against byte-level
     * BPE slips through there; here the types themselves must match. */
    if (target->kind != draft->kind)
        return err_set(err,
                       "draft %s: its vocabulary is %s (tokenizer.ggml.model '%s'), the target's "
                       "%s ('%s'): a draft must share the target's vocabulary",
                       draft_path, draft->kind->what, draft->kind->model, target->kind->what,
                       target->kind->model);
    if (target->add_bos != draft->add_bos || target->add_eos != draft->add_eos ||
        target->bos != draft->bos || target->eos != draft->eos)
        return err_set(err,
                       "draft %s: special tokens differ from the target's: BOS %d (add %d), EOS "
                       "%d (add %d) against the target's BOS %d (add %d), EOS %d (add %d)",
                       draft_path, draft->bos, draft->add_bos, draft->eos, draft->add_eos,
                       target->bos, target->add_bos, target->eos, target->add_eos);
    int diff = target->n > draft->n ? target->n - draft->n : draft->n - target->n;
    if (diff > COMPAT_MAX_SIZE_DIFF)
        return err_set(err,
                       "draft %s: %d tokens against the target's %d: they differ by %d, more "
                       "than the %d padding tokens allowed",
                       draft_path, draft->n, target->n, diff, COMPAT_MAX_SIZE_DIFF);
    int n = target->n < draft->n ? target->n : draft->n;
    for (int i = COMPAT_FIRST_ID; i < n; i++) {
        const char *a = tok_piece(target, i), *b = tok_piece(draft, i);
        if (strcmp(a, b) != 0) {
            char ta[64], tb[64];
            shown(ta, sizeof ta, a);
            shown(tb, sizeof tb, b);
            return err_set(err,
                           "draft %s: token %d is '%s' in the draft and '%s' in the target: a "
                           "draft must share the target's vocabulary",
                           draft_path, i, tb, ta);
        }
    }
    return 0;
}

/* ---- encoding -------------------------------------------------------------------------- */

/* A stretch of the text: raw bytes to encode (id < 0) or one special token. */
typedef struct {
    size_t start, len;
    int id;
} fragment;

/* Splits the text at every occurrence of each special token in turn, longest token first,
 * as llama.cpp's tokenizer_st_partition does (so with overlapping candidates the longer
 * token wins even when the shorter one starts earlier). frag and tmp hold 2 * len + 1
 * fragments each. Returns the count. */
static size_t partition(const tok *t, const char *text, size_t len, int parse_special,
                        fragment *frag, fragment *tmp, uint64_t *pairs) {
    /* Which byte pairs occur in the text: a token can only occur if all of its pairs do.
     * This skips almost every candidate without searching for it (DeepSeek-LLM has 2385
     * user-defined "[PAD...]" tokens: searching the text for each took 90% of the time). */
    const unsigned char *u = (const unsigned char *)text;
    memset(pairs, 0, 65536 / 8);
    for (size_t i = 0; i + 1 < len; i++)
        pairs[(u[i] << 8 | u[i + 1]) >> 6] |= 1ull << (u[i + 1] & 63);
    size_t n = 1;
    frag[0] = (fragment){0, len, -1};
    for (int k = 0; k < t->n_special; k++) {
        int id = t->special[k];
        if (!parse_special && t->type[id] != TT_USER) continue;
        const unsigned char *s = (const unsigned char *)tok_piece(t, id);
        size_t slen = strlen((const char *)s), m = 0, j = 1;
        while (j < slen && (pairs[(s[j - 1] << 8 | s[j]) >> 6] >> (s[j] & 63) & 1)) j++;
        if (j < slen || !memmem(text, len, s, slen)) continue; /* the usual case: no copy */
        for (size_t i = 0; i < n; i++) {
            if (frag[i].id >= 0) {
                tmp[m++] = frag[i];
                continue;
            }
            size_t pos = frag[i].start, end = frag[i].start + frag[i].len;
            const char *hit;
            while (pos < end && (hit = memmem(text + pos, end - pos, s, slen))) {
                size_t at = (size_t)(hit - text);
                if (at > pos) tmp[m++] = (fragment){pos, at - pos, -1};
                tmp[m++] = (fragment){at, slen, id};
                pos = at + slen;
            }
            if (pos < end) tmp[m++] = (fragment){pos, end - pos, -1};
        }
        memcpy(frag, tmp, m * sizeof *frag);
        n = m;
    }
    return n;
}

int tok_encode_flags(const tok *t, const char *text, int flags, int *ids, int *n, char *err) {
    *n = 0;
    size_t len = strlen(text);
    if (len > INT_MAX / 4) return err_set(err, "tok_encode: text of %zu bytes is too long", len);
    size_t cap = len + 3;
    int count = 0;
    if (flags & TOK_ADD_BOS) {
        if (t->bos < 0) return err_set(err, "tok_encode: the vocabulary has no BOS token");
        ids[count++] = t->bos;
    }
    int parse_special = (flags & TOK_PARSE_SPECIAL) != 0, any = 0;
    for (int k = 0; k < t->n_special && !any; k++)
        any = parse_special || t->type[t->special[k]] == TT_USER;
    if (!any || len == 0) {
        if (t->kind->encode(t, text, len, ids, &count, cap, err)) return -1;
        *n = count;
        return 0;
    }
    fragment *frag = malloc(2 * (2 * len + 1) * sizeof *frag);
    uint64_t *pairs = malloc(65536 / 8);
    if (!frag || !pairs) {
        free(frag), free(pairs);
        return err_set(err, "tok_encode: out of memory for %zu bytes of text", len);
    }
    size_t nf = partition(t, text, len, parse_special, frag, frag + 2 * len + 1, pairs);
    free(pairs);
    int rc = 0;
    for (size_t i = 0; i < nf && rc == 0; i++) {
        if (frag[i].id < 0)
            rc = t->kind->encode(t, text + frag[i].start, frag[i].len, ids, &count, cap, err);
        else if ((size_t)count < cap)
            ids[count++] = frag[i].id;
        else
            rc = err_set(err, "tok_encode: more than strlen + 3 = %zu tokens", cap);
    }
    free(frag);
    if (rc) return -1;
    *n = count;
    return 0;
}

int tok_encode(const tok *t, const char *text, int add_bos, int *ids, int *n, char *err) {
    return tok_encode_flags(t, text, add_bos ? TOK_ADD_BOS : 0, ids, n, err);
}

uint64_t tok_fingerprint(const tok *t) {
    char head[96];
    int n = snprintf(head, sizeof head, "%s %d %d %d", tok_model_name(t), t->n, tok_bos(t),
                     tok_eos(t));
    uint64_t h = hash_fnv1a(head, (size_t)n + 1);
    for (int id = 0; id < t->n; id++) {
        const char *p = tok_piece(t, id);
        for (size_t i = 0, len = p ? strlen(p) + 1 : 1; i < len; i++) /* with the NUL */
            h = (h ^ (unsigned char)(p ? p[i] : 0)) * 0x100000001b3ull;
    }
    return h ? h : 1;
}
