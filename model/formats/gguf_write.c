/* gguf_write.c: the GGUF writer: metadata serialized in memory, tensors referenced, the file
 * written in one go through path.tmp + rename. See gguf.h. */
#include "model/formats/gguf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/file.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gguf_write.c writes little-endian files by memcpy and needs a little-endian host"
#endif

/* ---- writer ---------------------------------------------------------------------------- */

typedef struct {
    char *name;
    uint32_t type, n_dims;
    uint64_t ne[GGUF_MAX_DIMS];
    const void *data; /* or NULL: produced by fill(ctx) at write time */
    gguf_fill_fn fill;
    void *ctx;
    uint64_t nbytes, offset;
} wtensor;

struct gguf_writer {
    uint32_t alignment;
    unsigned char *meta; /* serialized key/value pairs */
    size_t meta_len, meta_cap;
    char **keys; /* for duplicate detection */
    uint64_t n_kv;
    wtensor *t;
    size_t n_t, cap_t;
    int failed;
    char err[ERR_LEN];
};

static int w_fail(gguf_writer *w, const char *fmt, const char *arg) {
    if (!w->failed) {
        snprintf(w->err, sizeof w->err, fmt, arg);
        w->failed = 1;
    }
    return -1;
}

static int w_bytes(gguf_writer *w, const void *p, size_t n) {
    if (n == 0) return 0; /* p may be NULL for an empty array */
    if (w->meta_len + n > w->meta_cap) {
        size_t cap = w->meta_cap ? w->meta_cap : 4096;
        while (cap < w->meta_len + n) cap *= 2;
        unsigned char *m = realloc(w->meta, cap);
        if (!m) return w_fail(w, "out of memory adding metadata%s", "");
        w->meta = m;
        w->meta_cap = cap;
    }
    memcpy(w->meta + w->meta_len, p, n);
    w->meta_len += n;
    return 0;
}

static int w_u32(gguf_writer *w, uint32_t v) {
    return w_bytes(w, &v, 4);
}
static int w_u64(gguf_writer *w, uint64_t v) {
    return w_bytes(w, &v, 8);
}
static int w_str(gguf_writer *w, const char *s, uint64_t n) {
    return w_u64(w, n) || w_bytes(w, s, (size_t)n) ? -1 : 0;
}

gguf_writer *gguf_writer_new(uint32_t alignment) {
    gguf_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->alignment = alignment ? alignment : GGUF_DEFAULT_ALIGNMENT;
    if (w->alignment & (w->alignment - 1)) {
        w_fail(w, "alignment must be a power of two%s", "");
    } else if (alignment && alignment != GGUF_DEFAULT_ALIGNMENT) {
        gguf_writer_add_u32(w, "general.alignment", alignment);
    }
    return w;
}

void gguf_writer_free(gguf_writer *w) {
    if (!w) return;
    for (uint64_t i = 0; i < w->n_kv; i++) free(w->keys[i]);
    for (size_t i = 0; i < w->n_t; i++) free(w->t[i].name);
    free(w->keys);
    free(w->t);
    free(w->meta);
    free(w);
}

/* Starts a pair: checks the key is new and writes it with the value type. */
static int w_key(gguf_writer *w, const char *key, gguf_vtype type) {
    if (w->failed) return -1;
    if (!key || !key[0]) return w_fail(w, "empty metadata key%s", "");
    for (uint64_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->keys[i], key) == 0) return w_fail(w, "metadata key '%s' added twice", key);
    if (gguf_vtype_size((uint32_t)type) < 0) return w_fail(w, "key '%s': unknown value type", key);
    char **keys = realloc(w->keys, (size_t)(w->n_kv + 1) * sizeof *keys);
    if (!keys) return w_fail(w, "out of memory adding '%s'", key);
    w->keys = keys;
    if (!(keys[w->n_kv] = strdup(key))) return w_fail(w, "out of memory adding '%s'", key);
    w->n_kv++;
    return w_str(w, key, strlen(key)) || w_u32(w, (uint32_t)type) ? -1 : 0;
}

int gguf_writer_add(gguf_writer *w, const char *key, gguf_vtype type, const void *value) {
    if (type == GGUF_ARRAY) return w_fail(w, "key '%s': use gguf_writer_add_array", key);
    if (w_key(w, key, type)) return -1;
    if (type == GGUF_STRING) {
        const char *s = *(const char *const *)value;
        return w_str(w, s, strlen(s));
    }
    return w_bytes(w, value, (size_t)gguf_vtype_size(type));
}

int gguf_writer_add_array(gguf_writer *w, const char *key, gguf_vtype elem_type, const void *items,
                          const uint64_t *lens, uint64_t n) {
    if (elem_type == GGUF_ARRAY || gguf_vtype_size((uint32_t)elem_type) < 0)
        return w_fail(w, "key '%s': bad array element type", key);
    if (w_key(w, key, GGUF_ARRAY) || w_u32(w, (uint32_t)elem_type) || w_u64(w, n)) return -1;
    if (elem_type != GGUF_STRING)
        return w_bytes(w, items, (size_t)(n * (uint64_t)gguf_vtype_size((uint32_t)elem_type)));
    const char *const *strs = items;
    for (uint64_t i = 0; i < n; i++)
        if (w_str(w, strs[i], lens ? lens[i] : strlen(strs[i]))) return -1;
    return 0;
}

int gguf_writer_add_raw(gguf_writer *w, const char *key, gguf_vtype type, gguf_vtype elem_type,
                        uint64_t n, const void *data, uint64_t nbytes) {
    if (w_key(w, key, type)) return -1;
    if (type == GGUF_ARRAY && (w_u32(w, (uint32_t)elem_type) || w_u64(w, n))) return -1;
    return w_bytes(w, data, (size_t)nbytes);
}

int gguf_writer_copy_kv(gguf_writer *w, const gguf *g, int i) {
    gguf_vtype et = GGUF_U8;
    uint64_t n = 0, nbytes;
    const void *data;
    if (gguf_kv_raw(g, i, &data, &nbytes)) return w_fail(w, "no metadata pair %s", "to copy");
    gguf_kv_array(g, i, &et, &n);
    return gguf_writer_add_raw(w, gguf_kv_key(g, i), gguf_kv_type(g, i), et, n, data, nbytes);
}

int gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v) {
    return gguf_writer_add(w, key, GGUF_U32, &v);
}
int gguf_writer_add_f32(gguf_writer *w, const char *key, float v) {
    return gguf_writer_add(w, key, GGUF_F32, &v);
}
int gguf_writer_add_bool(gguf_writer *w, const char *key, int v) {
    uint8_t b = v != 0;
    return gguf_writer_add(w, key, GGUF_BOOL, &b);
}
int gguf_writer_add_str(gguf_writer *w, const char *key, const char *v) {
    return gguf_writer_add(w, key, GGUF_STRING, &v);
}

int gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                           const uint64_t *ne, const void *data, uint64_t nbytes) {
    return gguf_writer_add_tensor_fill(w, name, type, n_dims, ne, nbytes, NULL, (void *)data);
}

int gguf_writer_add_tensor_fill(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                const uint64_t *ne, uint64_t nbytes, gguf_fill_fn fill, void *ctx) {
    if (w->failed) return -1;
    if (!name || !name[0]) return w_fail(w, "empty tensor name%s", "");
    for (size_t i = 0; i < w->n_t; i++)
        if (strcmp(w->t[i].name, name) == 0) return w_fail(w, "tensor '%s' added twice", name);
    uint64_t be, bb, n = 1;
    if (gguf_type_block(type, &be, &bb)) return w_fail(w, "tensor '%s': unknown type", name);
    if (n_dims > GGUF_MAX_DIMS) return w_fail(w, "tensor '%s': more than 4 dims", name);
    for (uint32_t d = 0; d < n_dims; d++) {
        if (ne[d] && n > (uint64_t)INT64_MAX / ne[d])
            return w_fail(w, "tensor '%s': dims overflow", name);
        n *= ne[d];
    }
    if ((n_dims && ne[0] % be) || n / be * bb != nbytes)
        return w_fail(w, "tensor '%s': byte size does not match its type and dims", name);
    if (w->n_t == w->cap_t) {
        size_t cap = w->cap_t ? 2 * w->cap_t : 64;
        wtensor *t = realloc(w->t, cap * sizeof *t);
        if (!t) return w_fail(w, "out of memory adding tensor '%s'", name);
        w->t = t;
        w->cap_t = cap;
    }
    wtensor *t = &w->t[w->n_t];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name))) return w_fail(w, "out of memory adding tensor '%s'", name);
    t->type = type;
    t->n_dims = n_dims;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) t->ne[d] = (uint32_t)d < n_dims ? ne[d] : 1;
    if (fill)
        t->fill = fill, t->ctx = ctx;
    else
        t->data = ctx;
    t->nbytes = nbytes;
    w->n_t++;
    return 0;
}

static int write_pad(FILE *f, uint64_t pos, uint32_t alignment) {
    static const char zeros[256];
    uint64_t pad = (alignment - pos % alignment) % alignment;
    while (pad > 0) {
        size_t k = pad < sizeof zeros ? (size_t)pad : sizeof zeros;
        if (fwrite(zeros, 1, k, f) != k) return -1;
        pad -= k;
    }
    return 0;
}

/* The tensor infos, with packed aligned offsets, appended to the metadata buffer (the caller
 * truncates them again); returns the size of the data section. */
static uint64_t add_tensor_infos(gguf_writer *w) {
    uint64_t off = 0;
    for (size_t i = 0; i < w->n_t; i++) {
        wtensor *t = &w->t[i];
        t->offset = off;
        w_str(w, t->name, strlen(t->name));
        w_u32(w, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++) w_u64(w, t->ne[d]);
        w_u32(w, t->type);
        w_u64(w, t->offset);
        off += t->nbytes;
        off += (w->alignment - off % w->alignment) % w->alignment;
    }
    return off;
}

uint64_t gguf_writer_size(const gguf_writer *w) {
    uint64_t pos = 24 + w->meta_len;
    for (size_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        uint64_t info = 8 + strlen(t->name) + 4 + 8 * (uint64_t)t->n_dims + 4 + 8;
        pos += info;
    }
    for (size_t i = 0; i < w->n_t; i++)
        pos += (w->alignment - pos % w->alignment) % w->alignment + w->t[i].nbytes;
    return pos;
}

/* Writes the data of tensor t (its bytes, or what its fill produces into *buf). */
static int write_tensor(const wtensor *t, FILE *f, void **buf, uint64_t *cap, char *err) {
    const void *data = t->data;
    if (t->fill) {
        if (t->nbytes > *cap) {
            free(*buf);
            if (!(*buf = malloc((size_t)t->nbytes)))
                return *cap = 0, err_set(err, "out of memory for tensor '%s' (%llu bytes)", t->name,
                                         (unsigned long long)t->nbytes);
            *cap = t->nbytes;
        }
        if (t->fill(t->ctx, *buf, err)) return -1;
        data = *buf;
    }
    return fwrite(data, 1, (size_t)t->nbytes, f) == t->nbytes ? 0 : 1;
}

/* 0, -1 with err set (a fill failed), or 1 for a failed write (errno says why). */
static int write_all(gguf_writer *w, FILE *f, char *err) {
    size_t meta_len = w->meta_len;
    add_tensor_infos(w);
    if (w->failed) {
        w->meta_len = meta_len;
        return err_set(err, "%s", w->err);
    }
    uint32_t version = 3;
    uint64_t counts[2] = {w->n_t, w->n_kv};
    int rc = fwrite("GGUF", 1, 4, f) != 4 || fwrite(&version, 4, 1, f) != 1 ||
             fwrite(counts, 8, 2, f) != 2 || fwrite(w->meta, 1, w->meta_len, f) != w->meta_len;
    uint64_t pos = 24 + w->meta_len, cap = 0;
    void *buf = NULL;
    for (size_t i = 0; i < w->n_t && !rc; i++) {
        rc = write_pad(f, pos, w->alignment) ? 1 : write_tensor(&w->t[i], f, &buf, &cap, err);
        pos += (w->alignment - pos % w->alignment) % w->alignment + w->t[i].nbytes;
    }
    free(buf);
    w->meta_len = meta_len; /* drop the tensor infos so that write can be called again */
    return rc;
}

int gguf_writer_write_stream(gguf_writer *w, FILE *f, char *err) {
    int rc = write_all(w, f, err);
    if (rc > 0) return err_set(err, "write failed: %s", strerror(errno));
    return rc;
}

int gguf_writer_write(gguf_writer *w, const char *path, char *err) {
    if (w->failed) return err_set(err, "%s: %s", path, w->err);
    /* through PATH.tmp and a rename (util/file.h): a failure leaves no partial file at PATH */
    file_out o;
    if (file_out_open(&o, path, "GGUF", err)) return -1;
    /* the whole size, known before a byte is written: refused at once on a full disk */
    if (file_out_check_space(&o, gguf_writer_size(w), err)) return -1;
    char why[ERR_LEN];
    int rc = write_all(w, o.f, why);
    if (rc == 0) return file_out_commit(&o, err);
    int saved = errno;
    file_out_abort(&o);
    if (rc < 0) return err_set(err, "%s: %s", path, why);
    return err_set(err, "%s: write failed: %s", path, strerror(saved));
}
