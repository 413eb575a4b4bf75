/* eagle_head.h: an EAGLE / EAGLE-2 draft head (Li et al., arXiv 2401.15077 and 2406.16858):
 * its loader and its forward pass, for decoders/eagle.c.
 *
 * The head is SafeAILab/EAGLE's eagle/model/cnets1.py `Model`: a row takes a token t and a
 * feature f (the target's hidden state at the position before t, after the target's final
 * RMSNorm: the `outputs[0]` of the base LlamaModel that eagle/model/ea_model.py hands the head,
 * which modeling_llama_kv.py returns normed; the feature is therefore the normed one, not the
 * state before the norm), and computes
 *     h = fc(cat(embed(t), f))                      fc: Linear(2 dim, dim), bias per config "bias"
 *     h = h + o_proj(attention(q_proj h, k_proj h, v_proj h))   no input norm (layer 0 has none)
 *     h = h + down(silu(gate(n)) * up(n)),  n = RMSNorm(h) * post_attention_layernorm
 * and its next-token logits are the TARGET's classifier applied to h with no norm in between
 * (topK_genrate calls the base model's lm_head on the layer's output). Attention is Llama's:
 * RoPE as Hugging Face's rotate_half pairs (i, i + head_size / 2) at the row's position, grouped
 * queries, a softmax over the head's own keys and values. A row's position is that of its
 * feature's token (the head runs on input_ids[:, 1:], position_ids from 0): the row pairing the
 * feature of position p with the token at p + 1 sits at position p.
 *
 * Files (what SafeAILab publishes, converted to safetensors when it came as pytorch_model.bin):
 * DIR/config.json, a LlamaConfig (hidden_size, intermediate_size, num_attention_heads,
 * num_key_value_heads (default: the heads), num_hidden_layers (1), vocab_size, rms_norm_eps
 * (default 1e-6), rope_theta (default 10000), rope_scaling (none or linear), hidden_act (silu),
 * bias (default true), qkv_bias (default false)), and DIR/model.safetensors with cnets1.Model's
 * state-dict keys: fc.weight, fc.bias (when bias), layers.0.self_attn.{q,k,v,o}_proj.weight
 * (and q/k/v biases when qkv_bias), layers.0.mlp.{gate,up,down}_proj.weight,
 * layers.0.post_attention_layernorm.weight, and optionally embed_tokens.weight (absent: the
 * target's embedding, as the reference loads it from the base model). Tensors are f32, f16 or
 * bf16. The head must fit its target: hidden size, heads, kv heads and vocabulary equal the
 * target's. Every failure (a missing or misshapen field or tensor, a truncated file, a NaN or
 * infinite weight, a mismatch with the target) is one line naming the file and the field or
 * tensor.
 *
 * Arithmetic: f32 throughout, the products with the batch-invariant kernels (kernels.h) over
 * the weights in their stored type, RMSNorm, SiLU and attention in a fixed order. The head only
 * chooses drafts, which the target verifies exactly, so nothing here can change an output
 * token; the order is fixed so that runs repeat.
 *
 * The head keeps its own KV cache: committed rows (the text: eagle_head_append) and scratch rows
 * (a draft tree: eagle_head_tree), each tree row attending to the committed rows, its
 * ancestors in the scratch and itself (EAGLE-2's tree_mask). Appending drops the scratch, as the
 * reference keeps only stable_kv (the text's rows) from one step to the next. */
#ifndef DECODERS_EAGLE_HEAD_H
#define DECODERS_EAGLE_HEAD_H

#include "model/model.h"
#include "model/tpool.h"

typedef struct eagle_head eagle_head;

/* The head's configuration as read from config.json. */
typedef struct {
    int dim, hidden_dim, n_heads, n_kv_heads, head_size, vocab_size;
    float norm_eps, rope_theta, rope_factor;
    int fc_bias, qkv_bias, own_embedding;
} eagle_head_config;

/* Loads the head in dir for target (not owned: it must outlive the head) with room for
 * max_rows rows per call and max_scratch scratch rows, and a cache of the target's context
 * (cfg.seq_len) committed rows. pool may be NULL. */
int eagle_head_open(eagle_head **out, const char *dir, const model *target, tpool *pool,
                    int max_rows, int max_scratch, char *err);
void eagle_head_free(eagle_head *h);
const eagle_head_config *eagle_head_cfg(const eagle_head *h);

/* Empties the cache (a new prompt). */
void eagle_head_reset(eagle_head *h);
/* Keeps the first n committed rows (n <= eagle_head_n_past) and drops the scratch: `decbench
 * cost --head` measures passes at one context again and again. */
void eagle_head_truncate(eagle_head *h, int n);
/* Bytes of the head's own weights (the target's embedding and classifier not included). */
size_t eagle_head_weight_bytes(const eagle_head *h);

/* Committed rows, scratch rows. */
int eagle_head_n_past(const eagle_head *h);
int eagle_head_scratch_rows(const eagle_head *h);

/* Appends n rows (n <= max_rows) to the committed text after dropping the scratch: row i takes
 * token tokens[i] and feature feats[i * dim ..] at position n_past + i. The last n_out rows'
 * outputs go to hid (n_out x dim) and their logits, the target's classifier on the output, to
 * logits (n_out x vocab); either may be NULL. */
int eagle_head_append(eagle_head *h, int n, const int *tokens, const float *feats, int n_out,
                      float *hid, float *logits, char *err);

/* Evaluates n more scratch rows (a level of a draft tree): row i takes tokens[i], feats[i * dim
 * ..] and hangs below scratch row parent[i] (an earlier scratch row, -1: below the committed
 * text), at position n_past + its depth (0 below the text). Returns in hid (n x dim) the rows'
 * outputs and in logits (n x vocab) their logits. The scratch rows are numbered from 0 in the
 * order evaluated since the last append or reset. */
int eagle_head_tree(eagle_head *h, int n, const int *tokens, const float *feats, const int *parent,
                    float *hid, float *logits, char *err);

#endif
