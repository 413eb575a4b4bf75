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
 * drops the rest; fwd_truncate() shortens the committed prefix (draft rollback). The cache holds
 * the whole context and stores keys and values as the model's kv_type (model_set_kv: f32, or
 * f16 rounded to nearest even), which attention widens back exactly as it reads them: with f16
 * the invariance above holds as with f32 (a stored value is a function of the computed one
 * alone), with other bits. */
#ifndef MODEL_FORWARD_H
#define MODEL_FORWARD_H

#include "model/model.h"
#include "model/tpool.h"

/* KERN_EXACT_INT8 ("exact-int8"): batch-invariant like KERN_EXACT, with the int8 mode's
 * kernels (kernels.h) for the weight types that have one (every block type but q2_k): each input
 * row of a product is quantized to 8-bit blocks by itself, then multiplied in integers. Other
 * types run their exact kernels, so an f32/f16/bf16 model computes the exact mode's bits; a
 * quantized one computes other bits (close to the exact mode's, not equal), its own greedy. */
/* KERN_AUTO ("auto", the command line's default): no mode of its own but a choice made per run
 * by kern_mode_resolve once the models are open: exact-int8b when the target or the draft holds
 * a matrix of a type with int8 products (a quantized file), else exact. On float models they
 * compute the same bits, so the choice only changes quantized runs, where the int8b mode is the
 * fastest (docs/decisions.md: the int8 mode was 1.2-1.6x faster than exact at T=1; the int8b
 * mode ties it there and is 2-4x faster per token from 8 rows a pass). fwd_new resolves it for
 * its own model when handed one. */
/* KERN_EXACT_INT8B ("exact-int8b"): batch-invariant, the int8 mode's integers in another order
 * (kernels.h, "the int8b mode": a block's products summed in integers, one float multiply-add
 * per block and row), with tiles that reuse each weight for every row of a pass; the matrices
 * are copied once with 16 rows interleaved (wmat.r16). Its own bits on quantized models; on
 * float models the exact mode's. */
typedef enum {
    KERN_EXACT = 0,
    KERN_BLAS = 1,
    KERN_EXACT_INT8 = 2,
    KERN_AUTO = 3,
    KERN_EXACT_INT8B = 4
} kern_mode;
const char *kern_mode_name(kern_mode k);
/* "auto", "exact", "blas", "exact-int8" or "exact-int8b"; -1 otherwise. */
int kern_mode_parse(const char *s, kern_mode *out);
/* The accepted names, for messages. */
#define KERN_MODE_NAMES "auto, exact, exact-int8, exact-int8b or blas"
/* k itself unless it is KERN_AUTO; then exact-int8b when m or draft (may be NULL) has a matrix
 * of a type with int8 products (kern_int8_supported), else exact. */
kern_mode kern_mode_resolve(kern_mode k, const model *m, const model *draft);

typedef struct fwd_ctx fwd_ctx;

/* A context for evaluating batches of up to max_batch rows against m (not owned; it must
 * outlive the context). pool may be NULL (single thread). */
int fwd_new(fwd_ctx **out, const model *m, tpool *pool, int max_batch, kern_mode mode,
            char *err);
void fwd_free(fwd_ctx *c);

/* Whether c's KV cache asked the kernel for 2 MB pages and was granted them: a cache of 8192
 * positions or more, unless DECBENCH_KV_HUGE=0 (forward.c, kv_huge_pages; the bits are the
 * same either way). */
int fwd_kv_huge(const fwd_ctx *c);
/* Whether c maps its KV cache's pages ahead of the passes' writes (forward.c, kv_populate):
 * false once the kernel refused MADV_POPULATE_WRITE (before Linux 5.14), the pages then faulting
 * in as they are first written. */
int fwd_kv_maps_ahead(const fwd_ctx *c);

int fwd_max_batch(const fwd_ctx *c);
int fwd_n_past(const fwd_ctx *c);
const model *fwd_model(const fwd_ctx *c);
tpool *fwd_pool(const fwd_ctx *c);
/* The kernel mode the context runs (KERN_AUTO resolved). */
kern_mode fwd_kern_mode(const fwd_ctx *c);

/* Evaluates n rows. parent may be NULL (a chain: parent[r] = r - 1). pos may be NULL
 * (pos[r] = n_past + depth of r, which is what plain decoding of the path would use; only
 * then does the invariance guarantee hold). out_rows lists the rows whose logits are wanted
 * (NULL: all n rows, in order); logits receives n_out rows of model_logits_width(model) floats
 * (the vocabulary size unless the model is a padded draft). Rows' positions must stay below the
 * context length. A logit that is NaN or infinite fails the pass, naming the model, the row's
 * position and token (fwd_allow_nonfinite turns the check off); the pass then counts as not
 * evaluated (nothing to commit). */
int fwd_eval(fwd_ctx *c, int n, const int *tokens, const int *parent, const int *pos,
             const int *out_rows, int n_out, float *logits, char *err);

/* allow != 0: fwd_eval and fwd_eval_more return non-finite logits instead of failing (default:
 * they fail). */
void fwd_allow_nonfinite(fwd_ctx *c, int allow);

/* Layer skipping, for self-speculative drafting (decoders/skip.c: Draft & Verify, SWIFT):
 * skip[l] (l < n_layers) holds FWD_SKIP_ATTN and/or FWD_SKIP_MLP, and the passes after this
 * call run layer l without that sublayer: its residual update (x += Wo attention, x += W2 MLP)
 * is left out, so the residual stream passes through unchanged, and a row whose attention is
 * skipped at layer l writes no K/V there. NULL (the default) runs every layer: the same code
 * path and bits as a context that never called this. skip is read at each pass, not copied:
 * it must outlive its use. Rows evaluated with a mask have incomplete K/V: fwd_commit refuses
 * a scratch holding any (fwd_eval with no mask starts a new scratch, e.g. a verification pass
 * over the same tokens), and fwd_prefill refuses to run with a mask. Rows added by
 * fwd_eval_more after masked rows read the K/V those rows left: use the same mask. */
#define FWD_SKIP_ATTN 1u
#define FWD_SKIP_MLP 2u
void fwd_set_skip(fwd_ctx *c, const unsigned char *skip);

/* Hidden states, what learned drafters read (EAGLE-1/2 and Medusa take the target's last
 * hidden state after the final RMSNorm as their feature: the base model's output in their
 * reference code): after this call, every pass that returns logits rows (fwd_eval,
 * fwd_eval_more, this context's part of fwd_group_eval, and so fwd_prefill's last row) also
 * writes, for each of those rows in the same order, dim floats (model_config.dim) per row:
 * into normed the final RMSNorm's output (the very row the classifier multiplies), into raw the
 * residual stream before that norm. Either may be NULL; both NULL (the default) writes
 * nothing. Each buffer must hold as many rows as the logits the passes return. The rows are
 * copies of values the pass computes anyway: logits, K/V and every other result are the same
 * bits with and without them, and a row's hidden states are batch-invariant as its logits are
 * (the same bits whatever T, tree, thread count). A pass that fails may have written them.
 * The pointers are read at each pass, not copied: the buffers must outlive their use. */
void fwd_set_hidden_out(fwd_ctx *c, float *normed, float *raw);

/* Evaluates n MORE rows after the rows still in scratch (the batches evaluated since the last
 * commit or truncate, fwd_scratch_rows() of them), so a tree can be evaluated level by level,
 * one pass per level (a draft model expanding a token tree): the new rows are scratch rows
 * fwd_scratch_rows() .. +n-1, and parent[r] (for this call's row r) names any earlier scratch
 * row, or -1 for a root (NULL: a chain continuing the last scratch row). Positions are always
 * n_past + depth. Each row's logits and K/V are bit-identical to evaluating the whole tree in
 * one pass (batch invariance). out_rows lists rows of THIS call (0..n-1), NULL: all n. All
 * scratch rows together must fit max_batch. fwd_commit() then takes a path over all of them. */
int fwd_eval_more(fwd_ctx *c, int n, const int *tokens, const int *parent, const int *out_rows,
                  int n_out, float *logits, char *err);

/* Several contexts in one pass (serving B sequences at once): a group evaluates, in one pass,
 * rows of up to max_seqs contexts of one model, each context's rows exactly what fwd_eval takes
 * for it (its tokens, tree parents, positions, logits rows). The matrix products run once over
 * all the rows stacked (one read of every weight for the whole pass); RoPE, the KV cache writes
 * and attention run per context, against its own committed prefix and its own tree (a
 * block-diagonal mask: no row sees another context's rows). Each context's logits and scratch
 * K/V are then bit-identical to a fwd_eval of its rows alone, whatever else shares the pass, the
 * order of the contexts and the thread count (batch invariance, as above; not in the blas mode),
 * and it is left as that fwd_eval leaves it: fwd_commit, fwd_eval_more and the rest work on it
 * unchanged, and its pass and row counts grow by one pass and its rows.
 * The contexts must all be of the group's model (the same model object), its kernel mode (as
 * resolved: fwd_new resolves KERN_AUTO per model) and its thread pool (the pool the pass runs
 * on); none may have skipped layers (fwd_set_skip); a context appears at most once; together
 * they give at most max_rows rows, and each at most its own max_batch. A group holds only the
 * stacked activations, not a cache: make it once per model and reuse it (the contexts may change
 * from pass to pass). pool may be NULL (single thread) as for fwd_new. */
typedef struct fwd_group fwd_group;
int fwd_group_new(fwd_group **out, const model *m, tpool *pool, int max_rows, int max_seqs,
                  kern_mode mode, char *err);
void fwd_group_free(fwd_group *g);

/* One context's part of a group pass: fwd_eval's arguments for it (n rows; parent, pos and
 * out_rows may be NULL as there; logits: n_out rows of model_logits_width floats). */
typedef struct {
    fwd_ctx *ctx;
    int n;
    const int *tokens, *parent, *pos, *out_rows;
    int n_out;
    float *logits;
} fwd_part;

/* Evaluates parts[0..n_parts) in one pass. Errors: a call that breaks the group's terms above
 * (another model, kernel mode or pool, skipped layers, a context twice, too many rows or parts)
 * is refused before anything is touched: no context changes. A part whose rows fwd_eval would
 * refuse (token, parent, position, logits rows), and non-finite logits in any part (unless that
 * context allows them), fail the whole pass, naming the part: then every context of the call is
 * left as after a failed fwd_eval (its scratch emptied, fwd_scratch_rows() 0, no pass counted;
 * the committed prefix and its K/V never change), and logits buffers may have been written. */
int fwd_group_eval(fwd_group *g, const fwd_part *parts, int n_parts, char *err);

/* ---- a pass hook: several sequences decoded by threads (model/rendezvous.h) ----------------
 * A context with a hook hands each of its passes (fwd_eval, fwd_eval_more, and so fwd_prefill's
 * chunks) to hook->eval instead of running it; the hook runs it later, alone with
 * fwd_eval_direct or with other contexts' passes in one fwd_group_eval, and returns its status.
 * The pass's arguments stay valid until then (the caller waits). No hook (the default): the
 * code path and bits of a context that never had one. flags: FWD_HOOK_MORE, the pass is
 * fwd_eval_more's (part->pos is then unused); FWD_HOOK_PROMPT, one of fwd_prefill's. */
#define FWD_HOOK_MORE 1
#define FWD_HOOK_PROMPT 2
typedef struct fwd_hook {
    int (*eval)(struct fwd_hook *h, fwd_ctx *c, int flags, const fwd_part *part, char *err);
} fwd_hook;
void fwd_set_hook(fwd_ctx *c, fwd_hook *h);
/* The pass as fwd_eval (more = 0) or fwd_eval_more (more != 0) runs it, ignoring the hook. */
int fwd_eval_direct(fwd_ctx *c, int more, const fwd_part *part, char *err);
/* Whether fwd_group_eval can take c's next pass: no skipped layers, not the blas mode. */
int fwd_groupable(const fwd_ctx *c);

/* Rows in scratch: evaluated since the last commit/truncate (0 right after either). */
int fwd_scratch_rows(const fwd_ctx *c);

/* Appends rows path[0..n) of the scratch (the last evaluated batch, or batches when
 * fwd_eval_more added rows) to the committed prefix, in order. The path must be increasing
 * row indices (a root-to-node path of the tree is). */
int fwd_commit(fwd_ctx *c, const int *path, int n, char *err);

/* Shortens the committed prefix to len <= n_past. */
int fwd_truncate(fwd_ctx *c, int len, char *err);

/* Evaluates a chain of n tokens in chunks of max_batch, commits them all, and leaves the
 * last token's logits in logits (vocab floats). */
int fwd_prefill(fwd_ctx *c, const int *tokens, int n, float *logits, char *err);

/* Extends the committed prefix to n positions (n <= the context; at least one committed) by
 * repeating its K/V rows in order: the positions a measured pass attends to, without computing
 * them. For timing only (decbench cost): a pass's time does not depend on the values it reads,
 * and a real prefill of 32768 positions of a 1B model takes most of an hour on two cores. The
 * rows are real keys and values, but at the wrong positions: the logits of a later pass are not
 * the model's answer to any prompt. n <= n_past: nothing changes. */
int fwd_repeat_prefix(fwd_ctx *c, int n, char *err);

/* Bytes of the keys and values of n positions of c's cache, all layers, as stored: what a
 * one-row pass after n - 1 committed positions reads of it (decbench cost's bound). */
size_t fwd_kv_bytes(const fwd_ctx *c, int n);

/* Number of forward passes (fwd_eval calls, and group passes the context took part in) and rows
 * evaluated since creation. */
long fwd_passes(const fwd_ctx *c);
long fwd_rows(const fwd_ctx *c);

/* Index of the largest logit; ties go to the lowest index. */
int fwd_argmax(const float *logits, int n);

#endif
