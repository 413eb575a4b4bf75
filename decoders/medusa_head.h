/* medusa_head.h: Medusa-1 heads (Cai et al., arXiv 2401.10774), loaded from the directory the
 * reference code (FasterDecoding/Medusa, medusa/model/medusa_model.py) publishes, and their
 * forward pass.
 *
 * A directory holds config.json (MedusaConfig: medusa_num_heads, medusa_num_layers, and
 * optionally hidden_size and vocab_size, base_model_name_or_path: read as the reference
 * reads it, MedusaConfig's defaults 5 and 1 when a key is absent) and
 * medusa_lm_head.safetensors, the state dict of the reference's `medusa_head` ModuleList: head
 * k (0-based) is nn.Sequential(ResBlock x L, Linear(hidden, vocab, bias=False)), so its keys
 * are "k.l.linear.weight" [hidden, hidden] and "k.l.linear.bias" [hidden] for the L ResBlocks
 * and "k.L.weight" [vocab, hidden] for the classifier. A ResBlock computes x + SiLU(W x + b).
 * Tensors may be F32, F16 or BF16; the matrices keep their type (the kernels multiply all
 * three), the biases are widened to f32. Published checkpoints that come as
 * medusa_lm_head.pt (a PyTorch pickle) must be converted to safetensors first (README).
 *
 * Head k reads the target's hidden state at position t after the final RMSNorm (the base
 * model's output, what medusa_model.py passes to the heads) and predicts the token at t + k + 2:
 * the target's own classifier predicts t + 1.
 *
 * Errors are one line naming the file and the field or tensor: a missing or malformed
 * config.json, a missing tensor, a shape that disagrees with the config or with the other
 * heads, an unreadable dtype, a truncated file (safetensors.h), a NaN or infinite weight. */
#ifndef DECODERS_MEDUSA_HEAD_H
#define DECODERS_MEDUSA_HEAD_H

#include "model/model.h"
#include "model/tpool.h"
#include "model/weights/wtype.h"

typedef struct {
    int n_heads, n_layers, dim, vocab;
    /* head k's ResBlock l: res_w[k * n_layers + l] (dim x dim), res_b the same (dim floats);
     * head k's classifier: cls[k] (vocab x dim) */
    wmat *res_w, *cls;
    float **res_b;
    void **blocks; /* every matrix's own allocation, to free */
    int n_blocks;
    char dir[512];
} medusa_head;

/* Loads DIR (config.json + medusa_lm_head.safetensors). */
int medusa_head_open(medusa_head **out, const char *dir, char *err);
void medusa_head_free(medusa_head *h);

/* Refuses a head that does not fit the target: another hidden size or vocabulary size, naming
 * both. */
int medusa_head_check(const medusa_head *h, const model *target, char *err);

/* Head k's logits (vocab floats) for one hidden state (dim floats, after the target's final
 * norm). scratch: 2 dim floats. pool may be NULL; the classifier's rows are split over it, each
 * value computed by one thread, so the bits do not depend on the thread count. */
void medusa_head_logits(const medusa_head *h, int k, const float *hidden, float *logits,
                        float *scratch, tpool *pool);

#endif
