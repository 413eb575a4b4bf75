/* draft_head.c: an EAGLE head or Medusa heads behind draft_head.h, for measuring their passes. */
#include "decoders/draft_head.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoders/eagle_head.h"
#include "decoders/medusa_head.h"
#include "util/err.h"
#include "util/rng.h"

struct draft_head {
    draft_head_info info;
    char file[4200];
    eagle_head *eh;
    medusa_head *mh;
    tpool *pool;
    int max_rows, context;
    int *tok;
    float *feats, *hid, *logits, *scratch;
};

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int draft_head_kind(const char *dir, char *err) {
    char p[4200];
    snprintf(p, sizeof p, "%s/medusa_lm_head.safetensors", dir);
    if (is_file(p)) return DRAFT_HEAD_MEDUSA;
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    if (is_file(p)) return DRAFT_HEAD_EAGLE;
    return err_set(err,
                   "--head %s: neither model.safetensors (an EAGLE head) nor "
                   "medusa_lm_head.safetensors (Medusa heads) in it",
                   dir);
}

void draft_head_free(draft_head *h) {
    if (!h) return;
    eagle_head_free(h->eh);
    medusa_head_free(h->mh);
    free(h->tok), free(h->feats), free(h->hid), free(h->logits), free(h->scratch);
    free(h);
}

const draft_head_info *draft_head_info_of(const draft_head *h) {
    return &h->info;
}

int draft_head_open(draft_head **out, const char *dir, const model *target, tpool *pool,
                    int max_rows, char *err) {
    *out = NULL;
    int kind = draft_head_kind(dir, err);
    if (kind < 0) return -1;
    draft_head *h = calloc(1, sizeof *h);
    if (!h) return err_set(err, "--head: out of memory");
    h->pool = pool;
    h->max_rows = max_rows < 1 ? 1 : max_rows;
    draft_head_info *in = &h->info;
    in->kind = kind;
    in->file = h->file;
    snprintf(h->file, sizeof h->file, "%s/%s", dir,
             kind == DRAFT_HEAD_EAGLE ? "model.safetensors" : "medusa_lm_head.safetensors");
    const int D = target->cfg.dim, V = target->cfg.vocab_size, R = h->max_rows;
    rng_state r;
    rng_seed(&r, 1);
    if (kind == DRAFT_HEAD_EAGLE) {
        if (eagle_head_open(&h->eh, dir, target, pool, R, 1, err)) goto fail;
        const eagle_head_config *c = eagle_head_cfg(h->eh);
        in->heads = 1;
        in->bytes = (int64_t)eagle_head_weight_bytes(h->eh);
        /* per row: fc (2D x D), q, o, k, v, gate, up, down */
        in->macs_row = 2.0 * D * D + 2.0 * D * c->n_heads * c->head_size +
                       2.0 * D * c->n_kv_heads * c->head_size + 3.0 * D * c->hidden_dim;
        in->macs_logit = (double)D * V;
        in->bytes_read =
            (double)in->bytes + (double)target->wcls.rows *
                                    (double)wtype_row_bytes(target->wcls.type, target->wcls.cols);
        h->tok = malloc(sizeof(int) * (size_t)R);
        h->feats = malloc(sizeof(float) * (size_t)R * D);
        h->hid = malloc(sizeof(float) * (size_t)R * D);
        h->logits = malloc(sizeof(float) * (size_t)R * V);
        if (!h->tok || !h->feats || !h->hid || !h->logits) {
            err_set(err, "--head: out of memory for %d rows", R);
            goto fail;
        }
        for (int i = 0; i < R; i++) h->tok[i] = (int)rng_below(&r, (uint32_t)V);
        for (size_t i = 0; i < (size_t)R * D; i++) h->feats[i] = rng_unit(&r) * 2 - 1;
    } else {
        if (medusa_head_open(&h->mh, dir, err) || medusa_head_check(h->mh, target, err)) goto fail;
        const medusa_head *m = h->mh;
        int64_t per_head = (int64_t)m->vocab * (int64_t)wtype_row_bytes(m->cls[0].type, m->dim);
        for (int l = 0; l < m->n_layers; l++)
            per_head += (int64_t)m->dim * (int64_t)wtype_row_bytes(m->res_w[l].type, m->dim);
        in->heads = m->n_heads;
        in->bytes = per_head * m->n_heads;
        in->macs_row = (double)m->n_layers * m->dim * m->dim + (double)m->vocab * m->dim;
        in->bytes_read = (double)per_head;
        h->hid = malloc(sizeof(float) * (size_t)m->dim);
        h->logits = malloc(sizeof(float) * (size_t)m->vocab);
        h->scratch = malloc(sizeof(float) * 2 * (size_t)m->dim);
        if (!h->hid || !h->logits || !h->scratch) {
            err_set(err, "--head: out of memory");
            goto fail;
        }
        for (int i = 0; i < m->dim; i++) h->hid[i] = rng_unit(&r) * 2 - 1;
    }
    *out = h;
    return 0;
fail:
    draft_head_free(h);
    return -1;
}

int draft_head_reach(draft_head *h, int context, char *err) {
    h->context = context;
    if (!h->eh) return 0;
    eagle_head_reset(h->eh);
    for (int at = 0; at < context;) {
        int n = context - at < h->max_rows ? context - at : h->max_rows;
        if (eagle_head_append(h->eh, n, h->tok, h->feats, 0, NULL, NULL, err)) return -1;
        at += n;
    }
    return 0;
}

int draft_head_pass(draft_head *h, int rows, int logit_rows, char *err) {
    if (h->eh) {
        eagle_head_truncate(h->eh, h->context);
        return eagle_head_append(h->eh, rows, h->tok, h->feats, logit_rows, h->hid, h->logits, err);
    }
    if (rows < 1 || rows > h->mh->n_heads)
        return err_set(err, "%s: %d heads asked, it has %d", h->file, rows, h->mh->n_heads);
    for (int k = 0; k < rows; k++)
        medusa_head_logits(h->mh, k, h->hid, h->logits, h->scratch, h->pool);
    return 0;
}
