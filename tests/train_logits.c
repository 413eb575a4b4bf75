/* train_logits.c: prints decbench's logits for a token sequence, one line per position
 * ("pos v0 v1 ..."), so tests/train_reference.sh can compare train/llama2c.py's PyTorch forward
 * with the runtime's within float tolerance. Greedy continuations agreeing token for token (the
 * other half of that test) only show that the argmax agrees; the logits show the whole forward
 * (norms, RoPE, attention, classifier) agrees, which the heads trained on the reference's
 * features need. One causal pass of all tokens (exact kernels, one thread).
 * usage: train_logits MODEL "ID ID ..." */
#include <stdio.h>
#include <stdlib.h>

#include "model/forward.h"
#include "model/loader/model_file.h"
#include "util/err.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: train_logits MODEL \"ID ID ...\"\n");
        return 2;
    }
    char err[ERR_LEN];
    int cap = 16, n = 0, *ids = malloc(sizeof(int) * (size_t)cap);
    const char *s = argv[2];
    while (ids) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) break;
        if (n == cap) {
            int *bigger = realloc(ids, sizeof(int) * (size_t)(cap *= 2));
            if (!bigger) free(ids);
            ids = bigger;
            if (!ids) break;
        }
        ids[n++] = (int)v;
        s = end;
    }
    if (!ids || n == 0) {
        fprintf(stderr, "train_logits: no token ids in '%s'\n", argv[2]);
        free(ids);
        return 2;
    }
    model *m = NULL;
    fwd_ctx *f = NULL;
    float *logits = NULL;
    int rc = 1;
    if (model_open(&m, argv[1], err) || fwd_new(&f, m, NULL, n, KERN_EXACT, err)) goto done;
    int V = m->cfg.vocab_size, W = model_logits_width(m);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V) {
            err_set(err, "token id %d outside the vocabulary of %d", ids[i], V);
            goto done;
        }
    logits = malloc(sizeof(float) * (size_t)n * (size_t)W);
    if (!logits) {
        err_set(err, "out of memory");
        goto done;
    }
    if (fwd_eval(f, n, ids, NULL, NULL, NULL, n, logits, err)) goto done;
    for (int i = 0; i < n; i++) {
        printf("%d", i);
        for (int v = 0; v < V; v++) printf(" %.9g", logits[(size_t)i * W + v]);
        printf("\n");
    }
    rc = 0;
done:
    if (rc) fprintf(stderr, "train_logits: %s\n", err);
    free(logits);
    free(ids);
    fwd_free(f);
    if (m) model_close(m);
    return rc;
}
