/* forward.h: the batched tree forward pass and the KV cache it owns.
 *
 * One call evaluates T new tokens. Row r has a token id, a parent row (parent[r] < r, or -1
 * for a root) and a position. Row r attends to the committed KV prefix [0, n_past), then its
 * ancestors in the batch from the root down, then itself: a tree mask. Chains (plain decoding,
 * speculative drafts), Jacobi windows, lookahead's 2D window plus n-gram branches, Ouroboros'
 * draft plus suffixes and token trees are all trees in this sense.
 *
 * Batch invariance (the reason this file exists): every reduction (matrix rows, attention
 * scores, softmax, RMSNorm) has an order that depends only on its length, and each output
 * value is computed by one thread. So a row's logits and the K/V it writes are bit-identical
 * to computing the same path token by token, whatever T, the row's index, the tree around it
 * and the thread count. The default kernels (KERN_EXACT) guarantee this; KERN_BLAS uses
 * OpenBLAS sgemm for the matrix products, which is faster at large T on some shapes but NOT
 * row-invariant (measured: different bits for the same row at different T).
 *
 * KV cache: the batch's K/V are written to scratch slots after the committed prefix. After a
 * pass, fwd_commit() appends a chosen path of batch rows (in order) as the next positions and
 * drops the rest; fwd_truncate() shortens the committed prefix (draft rollback). */
#ifndef MODEL_FORWARD_H
#define MODEL_FORWARD_H

#include "model/model.h"
#include "model/tpool.h"

typedef enum { KERN_EXACT = 0, KERN_BLAS = 1 } kern_mode;
const char *kern_mode_name(kern_mode k);
int kern_mode_parse(const char *s, kern_mode *out);

typedef struct fwd_ctx fwd_ctx;

/* A context for evaluating batches of up to max_batch rows against m (not owned; it must
 * outlive the context). pool may be NULL (single thread). */
int fwd_new(fwd_ctx **out, const model *m, tpool *pool, int max_batch, kern_mode mode,
            char *err);
void fwd_free(fwd_ctx *c);

int fwd_max_batch(const fwd_ctx *c);
int fwd_n_past(const fwd_ctx *c);
const model *fwd_model(const fwd_ctx *c);

/* Evaluates n rows. parent may be NULL (a chain: parent[r] = r - 1). pos may be NULL
 * (pos[r] = n_past + depth of r, which is what plain decoding of the path would use; only
 * then does the invariance guarantee hold). out_rows lists the rows whose logits are wanted
 * (NULL: all n rows, in order); logits receives n_out rows of model_logits_width(model) floats
 * (the vocabulary size unless the model is a padded draft). Rows' positions must stay below the
 * context length. */
int fwd_eval(fwd_ctx *c, int n, const int *tokens, const int *parent, const int *pos,
             const int *out_rows, int n_out, float *logits, char *err);

/* Appends rows path[0..n) of the last evaluated batch to the committed prefix, in order.
 * The path must be increasing row indices (a root-to-node path of the tree is). */
int fwd_commit(fwd_ctx *c, const int *path, int n, char *err);

/* Shortens the committed prefix to len <= n_past. */
int fwd_truncate(fwd_ctx *c, int len, char *err);

/* Evaluates a chain of n tokens in chunks of max_batch, commits them all, and leaves the
 * last token's logits in logits (vocab floats). */
int fwd_prefill(fwd_ctx *c, const int *tokens, int n, float *logits, char *err);

/* Number of forward passes (fwd_eval calls) and rows evaluated since creation. */
long fwd_passes(const fwd_ctx *c);
long fwd_rows(const fwd_ctx *c);

/* Index of the largest logit; ties go to the lowest index. */
int fwd_argmax(const float *logits, int n);

#endif
