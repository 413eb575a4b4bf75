/* synth_head.c: random learned-drafter heads of a synthetic target's shape (synth.h,
 * synth_write_head), in the layout the published heads come in and decoders/eagle_head.h and
 * medusa_head.h load: DIR/config.json and a safetensors file of the reference's state-dict keys.
 *
 * Why: a head's pass costs what its shape costs (the weights read, the products), not what its
 * values are, so a random head of a 1.1B or 8B target's shape measures (`decbench cost --head`)
 * what a trained head of that target would. The values are seeded uniform noise as synth.c
 * draws them: matrices in +-1/sqrt(fan_in), biases in +-0.2, norm weights 1 +- 0.25. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/convert/synth.h"
#include "model/weights/wtype.h"
#include "util/err.h"
#include "util/file.h"
#include "util/rng.h"

typedef struct {
    char name[64];
    int rows, cols; /* cols 0: a vector of rows values */
    float lo, hi;   /* uniform in [lo, hi) */
} head_tensor;

static int dtype_size(synth_head_dtype t) {
    return t == SYNTH_HEAD_F32 ? 4 : 2;
}
static const char *dtype_name(synth_head_dtype t) {
    return t == SYNTH_HEAD_F32 ? "F32" : t == SYNTH_HEAD_F16 ? "F16" : "BF16";
}
static const char *torch_name(synth_head_dtype t) {
    return t == SYNTH_HEAD_F32 ? "float32" : t == SYNTH_HEAD_F16 ? "float16" : "bfloat16";
}

static uint64_t n_elems(const head_tensor *t) {
    return (uint64_t)t->rows * (uint64_t)(t->cols ? t->cols : 1);
}

/* Writes the tensors as a safetensors file: the JSON header (padded with spaces to 8 bytes),
 * then each tensor's values, generated from its own seed (seed and its index) a row at a time. */
static int write_safetensors(const char *path, const head_tensor *t, int n, synth_head_dtype dt,
                             uint64_t seed, char *err) {
    size_t cap = 256 + (size_t)n * 160, len = 0;
    char *hdr = malloc(cap);
    if (!hdr) return err_set(err, "synth: out of memory");
    uint64_t off = 0, es = (uint64_t)dtype_size(dt);
    len += (size_t)snprintf(hdr + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (int i = 0; i < n; i++) {
        uint64_t bytes = n_elems(&t[i]) * es;
        if (t[i].cols)
            len += (size_t)snprintf(hdr + len, cap - len,
                                    ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%d,%d],\"data_offsets\":"
                                    "[%llu,%llu]}",
                                    t[i].name, dtype_name(dt), t[i].rows, t[i].cols,
                                    (unsigned long long)off, (unsigned long long)(off + bytes));
        else
            len += (size_t)snprintf(hdr + len, cap - len,
                                    ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":"
                                    "[%llu,%llu]}",
                                    t[i].name, dtype_name(dt), t[i].rows, (unsigned long long)off,
                                    (unsigned long long)(off + bytes));
        off += bytes;
    }
    len += (size_t)snprintf(hdr + len, cap - len, "}");
    while (len % 8) hdr[len++] = ' ';
    file_out o;
    if (file_out_open(&o, path, "head", err)) {
        free(hdr);
        return -1;
    }
    if (file_out_check_space(&o, 8 + len + off, err)) {
        free(hdr);
        return -1;
    }
    unsigned char n8[8];
    for (int b = 0; b < 8; b++) n8[b] = (unsigned char)((uint64_t)len >> (8 * b));
    int bad = fwrite(n8, 1, 8, o.f) != 8 || fwrite(hdr, 1, len, o.f) != len;
    free(hdr);
    int max_cols = 1;
    for (int i = 0; i < n; i++)
        if (t[i].cols > max_cols) max_cols = t[i].cols;
    unsigned char *row = malloc((size_t)max_cols * 4);
    if (!row) bad = 1;
    for (int i = 0; i < n && !bad; i++) {
        rng_state r;
        rng_seed(&r, seed * 1000003u + (uint64_t)i + 1);
        const int rows = t[i].cols ? t[i].rows : 1, cols = t[i].cols ? t[i].cols : t[i].rows;
        for (int y = 0; y < rows && !bad; y++) {
            for (int x = 0; x < cols; x++) {
                float v = t[i].lo + (t[i].hi - t[i].lo) * rng_unit(&r);
                if (dt == SYNTH_HEAD_F32) {
                    memcpy(row + (size_t)x * 4, &v, 4);
                } else {
                    uint16_t h = dt == SYNTH_HEAD_F16 ? wtype_f32_to_f16(v) : wtype_f32_to_bf16(v);
                    row[(size_t)x * 2] = (unsigned char)(h & 0xff);
                    row[(size_t)x * 2 + 1] = (unsigned char)(h >> 8);
                }
            }
            bad = fwrite(row, (size_t)es, (size_t)cols, o.f) != (size_t)cols;
        }
    }
    free(row);
    if (bad) {
        file_out_abort(&o);
        return err_set(err, "%s: write failed", path);
    }
    return file_out_commit(&o, err);
}

static int write_text(const char *path, const char *text, char *err) {
    file_out o;
    if (file_out_open(&o, path, "config", err)) return -1;
    if (fputs(text, o.f) < 0) {
        file_out_abort(&o);
        return err_set(err, "%s: write failed", path);
    }
    return file_out_commit(&o, err);
}

static void set(head_tensor *t, const char *name, int rows, int cols, float lo, float hi) {
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rows = rows, t->cols = cols, t->lo = lo, t->hi = hi;
}

static float amp(int fan_in) {
    return 1.0f / sqrtf((float)fan_in);
}

int synth_write_head(const char *dir, synth_head_kind kind, const synth_shape *s, int n_heads,
                     synth_head_dtype dt, uint64_t seed, char *err) {
    const model_config *c = &s->cfg;
    const int D = c->dim, V = c->vocab_size;
    struct stat st;
    if (stat(dir, &st) == 0 ? !S_ISDIR(st.st_mode) : mkdir(dir, 0777) != 0)
        return err_set(err, "-o %s: not a directory and cannot be made one", dir);
    char cpath[FILE_PATH_MAX], wpath[FILE_PATH_MAX], json[2048];
    snprintf(cpath, sizeof cpath, "%s/config.json", dir);
    head_tensor t[4 * SYNTH_MAX_HEADS + 16];
    int n = 0;
    if (kind == SYNTH_HEAD_EAGLE) {
        if (c->head_size * c->n_heads != D)
            return err_set(err,
                           "--head eagle: %s has heads of %d over a width of %d; an EAGLE head's "
                           "attention (LlamaConfig) has hidden_size / num_attention_heads",
                           s->what, c->head_size, D);
        const int Q = c->n_heads * c->head_size, KV = c->n_kv_heads * c->head_size,
                  H = c->hidden_dim;
        const float a = amp(2 * D), b = amp(D), o = amp(Q), h = amp(H);
        set(&t[n++], "fc.weight", D, 2 * D, -a, a);
        set(&t[n++], "fc.bias", D, 0, -0.2f, 0.2f);
        set(&t[n++], "layers.0.self_attn.q_proj.weight", Q, D, -b, b);
        set(&t[n++], "layers.0.self_attn.k_proj.weight", KV, D, -b, b);
        set(&t[n++], "layers.0.self_attn.v_proj.weight", KV, D, -b, b);
        set(&t[n++], "layers.0.self_attn.o_proj.weight", D, Q, -o, o);
        set(&t[n++], "layers.0.mlp.gate_proj.weight", H, D, -b, b);
        set(&t[n++], "layers.0.mlp.up_proj.weight", H, D, -b, b);
        set(&t[n++], "layers.0.mlp.down_proj.weight", D, H, -h, h);
        set(&t[n++], "layers.0.post_attention_layernorm.weight", D, 0, 0.75f, 1.25f);
        char scaling[96] = "null";
        if (c->rope_factor > 1)
            snprintf(scaling, sizeof scaling, "{\"type\": \"linear\", \"factor\": %g}",
                     (double)c->rope_factor);
        snprintf(json, sizeof json,
                 "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n"
                 "  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n"
                 "  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n"
                 "  \"num_hidden_layers\": 1,\n  \"vocab_size\": %d,\n  \"rms_norm_eps\": %g,\n"
                 "  \"rope_theta\": %g,\n  \"rope_scaling\": %s,\n"
                 "  \"max_position_embeddings\": %d,\n  \"hidden_act\": \"silu\",\n"
                 "  \"bias\": true,\n  \"torch_dtype\": \"%s\",\n"
                 "  \"base_model_name_or_path\": \"synthetic %s shape, seed %llu\"\n}\n",
                 D, H, c->n_heads, c->n_kv_heads, V, (double)c->norm_eps, (double)c->rope_theta,
                 scaling, c->seq_len, torch_name(dt), s->what, (unsigned long long)seed);
        snprintf(wpath, sizeof wpath, "%s/model.safetensors", dir);
    } else {
        if (n_heads < 1 || n_heads > SYNTH_MAX_HEADS)
            return err_set(err, "--heads %d: expected 1..%d", n_heads, SYNTH_MAX_HEADS);
        const float b = amp(D);
        for (int k = 0; k < n_heads; k++) { /* nn.Sequential(ResBlock, Linear(hidden, vocab)) */
            char name[64];
            snprintf(name, sizeof name, "%d.0.linear.weight", k);
            set(&t[n++], name, D, D, -b, b);
            snprintf(name, sizeof name, "%d.0.linear.bias", k);
            set(&t[n++], name, D, 0, -0.2f, 0.2f);
            snprintf(name, sizeof name, "%d.1.weight", k);
            set(&t[n++], name, V, D, -b, b);
        }
        snprintf(json, sizeof json,
                 "{\n  \"medusa_num_heads\": %d,\n  \"medusa_num_layers\": 1,\n"
                 "  \"hidden_size\": %d,\n  \"vocab_size\": %d,\n"
                 "  \"base_model_name_or_path\": \"synthetic %s shape, seed %llu\",\n"
                 "  \"torch_dtype\": \"%s\"\n}\n",
                 n_heads, D, V, s->what, (unsigned long long)seed, torch_name(dt));
        snprintf(wpath, sizeof wpath, "%s/medusa_lm_head.safetensors", dir);
    }
    /* the weights first: a config.json never announces a file that is not there */
    if (write_safetensors(wpath, t, n, dt, seed, err)) return -1;
    return write_text(cpath, json, err);
}
