/* gguf_read.c: the GGUF reader: mmap + full validation up front, then O(1) getters. See gguf.h. */
#include "model/formats/gguf.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gguf_read.c reads little-endian files by memcpy and needs a little-endian host"
#endif

/* ---- reader state ---------------------------------------------------------------------- */

typedef struct {
    const char *key;          /* NUL-terminated (arena): the key up to its first NUL byte */
    gguf_str key_raw;         /* every byte of the key, in the map (duplicates compare these) */
    uint32_t type, elem;      /* elem: array element type */
    uint64_t n;               /* array length */
    const unsigned char *val; /* the value (for arrays: the first element) in the map */
    uint64_t first_str;       /* string arrays: index of element 0 in g->strs */
    const char *str;          /* string scalars: NUL-terminated copy (up to a NUL byte) */
    int64_t key_off, str_off; /* arena offsets of key and str (-1: none) while parsing */
} gguf_kv;

struct gguf {
    char *path;
    const unsigned char *map;
    size_t size;
    uint32_t version, alignment;
    int n_kv, n_tensors;
    gguf_kv *kv;
    gguf_tensor *tensors;
    gguf_str *strs; /* elements of all string arrays */
    uint64_t n_strs;
    char *arena; /* NUL-terminated copies of keys, names, string values */
    size_t arena_len, arena_cap;
    int64_t *name_off;         /* arena offsets of the tensor names while parsing */
    int32_t *kv_hash, *t_hash; /* open addressing, -1 = empty; capacity a power of two */
    uint32_t kv_hash_cap, t_hash_cap;
};

/* A cursor over the mapping that turns every overrun into a message naming the item. */
typedef struct {
    gguf *g;
    size_t pos;
    char where[160]; /* "metadata pair 3 ('general.name')" */
    char *err;
} cursor;

/* Copies at most 40 bytes of s into dst as printable ASCII, for messages. */
static void printable(char *dst, size_t n, const char *s, uint64_t len) {
    size_t j = 0;
    for (uint64_t i = 0; i < len && j + 4 < n; i++) {
        if (i == 40) {
            memcpy(dst + j, "...", 3);
            j += 3;
            break;
        }
        unsigned char c = (unsigned char)s[i];
        dst[j++] = (c >= 32 && c < 127 && c != '\'') ? (char)c : '?';
    }
    dst[j] = 0;
}

static int fail(cursor *c, const char *what) {
    return err_set(c->err, "%s: %s: %s", c->g->path, c->where, what);
}

static size_t left(const cursor *c) {
    return c->g->size - c->pos;
}

/* Ensures n more bytes exist; `what` names the field for the message. */
static int need(cursor *c, uint64_t n, const char *what) {
    if (n <= left(c)) return 0;
    char msg[200];
    snprintf(msg, sizeof msg, "truncated: %s needs %llu bytes at offset %zu, only %zu left", what,
             (unsigned long long)n, c->pos, left(c));
    return fail(c, msg);
}

static int get_u32(cursor *c, uint32_t *v, const char *what) {
    if (need(c, 4, what)) return -1;
    memcpy(v, c->g->map + c->pos, 4);
    c->pos += 4;
    return 0;
}

static int get_u64(cursor *c, uint64_t *v, const char *what) {
    if (need(c, 8, what)) return -1;
    memcpy(v, c->g->map + c->pos, 8);
    c->pos += 8;
    return 0;
}

static int get_str(cursor *c, gguf_str *s, const char *what) {
    if (get_u64(c, &s->len, what)) return -1;
    if (need(c, s->len, what)) return -1;
    s->ptr = (const char *)c->g->map + c->pos;
    c->pos += s->len;
    return 0;
}

/* Appends a NUL-terminated copy of s to the arena, growing it geometrically; returns its
 * offset (pointers are fixed up once the arena stops growing) or -1. */
static int64_t arena_add(gguf *g, gguf_str s) {
    size_t off = g->arena_len, need_len = off + (size_t)s.len + 1;
    if (need_len > g->arena_cap) {
        size_t cap = g->arena_cap ? g->arena_cap : 1024;
        while (cap < need_len) cap *= 2;
        char *a = realloc(g->arena, cap);
        if (!a) return -1;
        g->arena = a;
        g->arena_cap = cap;
    }
    memcpy(g->arena + off, s.ptr, s.len);
    g->arena[off + s.len] = 0;
    g->arena_len = need_len;
    return (int64_t)off;
}

/* ---- hash tables (FNV-1a, linear probing) ---------------------------------------------- */

static uint32_t table_cap(int n) {
    uint32_t cap = 16;
    while (cap < 2u * (uint32_t)n) cap *= 2;
    return cap;
}

/* Inserts index i named names(i); returns the index already holding that name, or -1. */
static int table_insert(int32_t *tab, uint32_t cap, const char *name, int i,
                        const char *(*name_of)(const gguf *, int), const gguf *g) {
    uint32_t h = (uint32_t)hash_fnv1a(name, strlen(name)) & (cap - 1);
    while (tab[h] >= 0) {
        if (strcmp(name_of(g, tab[h]), name) == 0) return tab[h];
        h = (h + 1) & (cap - 1);
    }
    tab[h] = i;
    return -1;
}

static int table_find(const int32_t *tab, uint32_t cap, const char *name,
                      const char *(*name_of)(const gguf *, int), const gguf *g) {
    if (!tab) return -1;
    uint32_t h = (uint32_t)hash_fnv1a(name, strlen(name)) & (cap - 1);
    while (tab[h] >= 0) {
        if (strcmp(name_of(g, tab[h]), name) == 0) return tab[h];
        h = (h + 1) & (cap - 1);
    }
    return -1;
}

static const char *kv_name(const gguf *g, int i) {
    return g->kv[i].key;
}
static const char *tensor_name(const gguf *g, int i) {
    return g->tensors[i].name;
}

/* ---- parsing --------------------------------------------------------------------------- */

/* Reads a key or tensor name. Lookups use C strings, so a name is what precedes its first NUL
 * byte, as in ggml (whose lookups compare C strings too); an empty name is a name. */
static int get_name(cursor *c, gguf_str *s, const char *what) {
    return get_str(c, s, what);
}

static int parse_value(cursor *c, gguf_kv *kv) {
    gguf *g = c->g;
    char msg[160];
    int sz = gguf_vtype_size(kv->type);
    kv->str_off = -1;
    kv->val = g->map + c->pos;
    if (sz < 0) {
        snprintf(msg, sizeof msg, "unknown value type %u", kv->type);
        return fail(c, msg);
    }
    if (kv->type == GGUF_STRING) {
        gguf_str s;
        if (get_str(c, &s, "string value")) return -1;
        /* read up to a NUL byte, as ggml's gguf_get_val_str hands out a C string */
        if ((kv->str_off = arena_add(g, s)) < 0) return fail(c, "out of memory");
        return 0;
    }
    if (kv->type != GGUF_ARRAY) {
        if (need(c, (uint64_t)sz, "value")) return -1;
        /* a bool byte other than 0 or 1 is true, as ggml reads it */
        c->pos += (size_t)sz;
        return 0;
    }
    if (get_u32(c, &kv->elem, "array element type") || get_u64(c, &kv->n, "array length"))
        return -1;
    kv->val = g->map + c->pos;
    int esz = gguf_vtype_size(kv->elem);
    if (kv->elem == GGUF_ARRAY) return fail(c, "nested arrays are not supported");
    if (esz < 0) {
        snprintf(msg, sizeof msg, "unknown array element type %u", kv->elem);
        return fail(c, msg);
    }
    if (kv->elem != GGUF_STRING) {
        if (kv->n > left(c) / (uint64_t)esz) {
            snprintf(msg, sizeof msg,
                     "array of %llu %s needs more than the %zu bytes left (truncated or corrupt)",
                     (unsigned long long)kv->n, gguf_vtype_name(kv->elem), left(c));
            return fail(c, msg);
        }
        c->pos += (size_t)(kv->n * (uint64_t)esz);
        return 0;
    }
    /* Each string takes at least its 8-byte length: bounds the allocation below. */
    if (kv->n > left(c) / 8) {
        snprintf(msg, sizeof msg,
                 "array of %llu strings needs more than the %zu bytes left (truncated or corrupt)",
                 (unsigned long long)kv->n, left(c));
        return fail(c, msg);
    }
    gguf_str *strs = realloc(g->strs, (size_t)(g->n_strs + kv->n + 1) * sizeof *strs);
    if (!strs) return fail(c, "out of memory");
    g->strs = strs;
    kv->first_str = g->n_strs;
    for (uint64_t i = 0; i < kv->n; i++) {
        gguf_str *s = &g->strs[g->n_strs + i];
        /* the element's name is formatted only for a message: for each of llama-bpe's 408000
         * strings it was 60 ms of the vocabulary's 0.22 s load (Zen 5 VM) */
        if (left(c) >= 8) {
            memcpy(&s->len, c->g->map + c->pos, 8);
            if (s->len <= left(c) - 8) {
                s->ptr = (const char *)c->g->map + c->pos + 8;
                c->pos += 8 + (size_t)s->len;
                continue;
            }
        }
        snprintf(msg, sizeof msg, "string %llu of the array", (unsigned long long)i);
        if (get_str(c, s, msg)) return -1;
    }
    g->n_strs += kv->n;
    return 0;
}

static int parse_metadata(cursor *c, uint64_t n_kv) {
    gguf *g = c->g;
    /* Smallest pair: 8-byte key length, a 1-byte key, 4-byte type, 1-byte value. */
    if (n_kv > left(c) / 14 || n_kv > INT_MAX / 4) {
        snprintf(c->where, sizeof c->where, "header");
        char msg[160];
        snprintf(msg, sizeof msg,
                 "metadata count %llu needs more than the %zu bytes left (truncated or corrupt)",
                 (unsigned long long)n_kv, left(c));
        return fail(c, msg);
    }
    if (!(g->kv = calloc(n_kv + 1, sizeof *g->kv)))
        return err_set(c->err, "%s: out of memory", g->path);
    for (uint64_t i = 0; i < n_kv; i++) {
        gguf_kv *kv = &g->kv[i];
        gguf_str key;
        snprintf(c->where, sizeof c->where, "metadata pair %llu", (unsigned long long)i);
        if (get_name(c, &key, "key")) return -1;
        kv->key_raw = key;
        char shown[64];
        printable(shown, sizeof shown, key.ptr, key.len);
        snprintf(c->where, sizeof c->where, "metadata pair %llu ('%s')", (unsigned long long)i,
                 shown);
        if ((kv->key_off = arena_add(g, key)) < 0) return fail(c, "out of memory");
        if (get_u32(c, &kv->type, "value type") || parse_value(c, kv)) return -1;
        g->n_kv = (int)i + 1;
    }
    return 0;
}

/* Byte size of a tensor, with every product checked for overflow (ggml uses int64). */
static int tensor_size(cursor *c, gguf_tensor *t) {
    uint64_t be, bb;
    char msg[160];
    if (gguf_type_block(t->type, &be, &bb)) {
        snprintf(msg, sizeof msg, "unknown ggml type %u", t->type);
        return fail(c, msg);
    }
    uint64_t n = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        if (t->ne[d] > (uint64_t)INT64_MAX || (t->ne[d] && n > (uint64_t)INT64_MAX / t->ne[d]))
            return fail(c, "dimensions overflow 64 bits");
        n *= t->ne[d];
    }
    t->n_elements = n;
    if (t->ne[0] % be) {
        snprintf(msg, sizeof msg, "ne[0] = %llu is not a multiple of the %s block size %llu",
                 (unsigned long long)t->ne[0], gguf_type_name(t->type), (unsigned long long)be);
        return fail(c, msg);
    }
    if (n / be > UINT64_MAX / bb) return fail(c, "byte size overflows 64 bits");
    t->nbytes = n / be * bb;
    return 0;
}

static int parse_tensors(cursor *c, uint64_t n_tensors) {
    gguf *g = c->g;
    char msg[200];
    /* Smallest info: 8-byte name length, 1-byte name, n_dims, type, offset. */
    if (n_tensors > left(c) / 25 || n_tensors > INT_MAX / 4) {
        snprintf(c->where, sizeof c->where, "header");
        snprintf(msg, sizeof msg,
                 "tensor count %llu needs more than the %zu bytes left (truncated or corrupt)",
                 (unsigned long long)n_tensors, left(c));
        return fail(c, msg);
    }
    g->tensors = calloc(n_tensors + 1, sizeof *g->tensors);
    g->name_off = calloc(n_tensors + 1, sizeof *g->name_off);
    if (!g->tensors || !g->name_off) return err_set(c->err, "%s: out of memory", g->path);
    for (uint64_t i = 0; i < n_tensors; i++) {
        gguf_tensor *t = &g->tensors[i];
        gguf_str name;
        snprintf(c->where, sizeof c->where, "tensor %llu", (unsigned long long)i);
        if (get_name(c, &name, "name")) return -1;
        char shown[64];
        printable(shown, sizeof shown, name.ptr, name.len);
        snprintf(c->where, sizeof c->where, "tensor %llu ('%s')", (unsigned long long)i, shown);
        if ((g->name_off[i] = arena_add(g, name)) < 0) return fail(c, "out of memory");
        if (get_u32(c, &t->n_dims, "n_dims")) return -1;
        if (t->n_dims > GGUF_MAX_DIMS) {
            snprintf(msg, sizeof msg, "n_dims %u is more than %d", t->n_dims, GGUF_MAX_DIMS);
            return fail(c, msg);
        }
        for (int d = 0; d < GGUF_MAX_DIMS; d++) t->ne[d] = 1;
        for (uint32_t d = 0; d < t->n_dims; d++)
            if (get_u64(c, &t->ne[d], "dimension")) return -1;
        if (get_u32(c, &t->type, "type") || get_u64(c, &t->offset, "offset")) return -1;
        if (tensor_size(c, t)) return -1;
        if (t->offset % g->alignment) {
            snprintf(msg, sizeof msg, "offset %llu is not a multiple of the alignment %u",
                     (unsigned long long)t->offset, g->alignment);
            return fail(c, msg);
        }
        g->n_tensors = (int)i + 1;
    }
    return 0;
}

/* Points keys, string values and names into the arena, once it has stopped growing (it is
 * realloc'ed while parsing, so only offsets are kept until then). */
static void fix_pointers(gguf *g) {
    for (int i = 0; i < g->n_kv; i++) {
        g->kv[i].key = g->arena + g->kv[i].key_off;
        g->kv[i].str = g->kv[i].str_off >= 0 ? g->arena + g->kv[i].str_off : NULL;
    }
    for (int i = 0; i < g->n_tensors; i++) g->tensors[i].name = g->arena + g->name_off[i];
}

/* Places every tensor in the data section, which starts at the first aligned offset after
 * the tensor infos; each [offset, offset + nbytes) must lie inside the file. */
static int place_tensors(cursor *c) {
    gguf *g = c->g;
    size_t data = c->pos + (g->alignment - c->pos % g->alignment) % g->alignment;
    for (int i = 0; i < g->n_tensors; i++) {
        gguf_tensor *t = &g->tensors[i];
        char shown[64];
        printable(shown, sizeof shown, t->name, strlen(t->name));
        snprintf(c->where, sizeof c->where, "tensor %d ('%s')", i, shown);
        size_t room = data <= g->size ? g->size - data : 0;
        if (t->offset > room || t->nbytes > room - t->offset) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "data [%llu, +%llu) runs past the end of the file (data section holds %zu "
                     "bytes)",
                     (unsigned long long)t->offset, (unsigned long long)t->nbytes, room);
            return fail(c, msg);
        }
        t->data = g->map + data + t->offset;
    }
    return 0;
}

static int build_tables(cursor *c) {
    gguf *g = c->g;
    g->kv_hash_cap = table_cap(g->n_kv);
    g->t_hash_cap = table_cap(g->n_tensors);
    g->kv_hash = malloc(g->kv_hash_cap * sizeof *g->kv_hash);
    g->t_hash = malloc(g->t_hash_cap * sizeof *g->t_hash);
    if (!g->kv_hash || !g->t_hash) return err_set(c->err, "%s: out of memory", g->path);
    memset(g->kv_hash, 0xff, g->kv_hash_cap * sizeof *g->kv_hash);
    memset(g->t_hash, 0xff, g->t_hash_cap * sizeof *g->t_hash);
    char shown[64];
    for (int i = 0; i < g->n_kv; i++) {
        int dup = table_insert(g->kv_hash, g->kv_hash_cap, g->kv[i].key, i, kv_name, g);
        if (dup < 0) continue;
        /* Keys equal up to a NUL byte but not after it are two keys for ggml (which compares
         * whole keys for duplicates) and the first is the one a lookup finds. */
        const gguf_str *a = &g->kv[dup].key_raw, *b = &g->kv[i].key_raw;
        if (a->len != b->len || memcmp(a->ptr, b->ptr, (size_t)a->len) != 0) continue;
        printable(shown, sizeof shown, g->kv[i].key, strlen(g->kv[i].key));
        return err_set(c->err, "%s: metadata pair %d: key '%s' repeats pair %d", g->path, i, shown,
                       dup);
    }
    for (int i = 0; i < g->n_tensors; i++) {
        int dup = table_insert(g->t_hash, g->t_hash_cap, g->tensors[i].name, i, tensor_name, g);
        if (dup < 0) continue;
        printable(shown, sizeof shown, g->tensors[i].name, strlen(g->tensors[i].name));
        return err_set(c->err, "%s: tensor %d: name '%s' repeats tensor %d", g->path, i, shown,
                       dup);
    }
    return 0;
}

/* general.alignment, if present, must be a u32 power of two (the data offsets depend on it).
 * Looked up linearly because the hash tables are built after the tensor infos. */
static int read_alignment(cursor *c) {
    gguf *g = c->g;
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    for (int i = 0; i < g->n_kv; i++) {
        if (strcmp(g->arena + g->kv[i].key_off, "general.alignment")) continue;
        uint32_t a = 0;
        if (g->kv[i].type == GGUF_U32) memcpy(&a, g->kv[i].val, 4);
        if (g->kv[i].type != GGUF_U32 || a == 0 || (a & (a - 1)))
            return err_set(c->err, "%s: general.alignment must be a u32 power of two (found %s %u)",
                           g->path, gguf_vtype_name(g->kv[i].type), a);
        g->alignment = a;
    }
    return 0;
}

static int parse(gguf *g, char *err) {
    cursor c = {.g = g, .pos = 0, .err = err};
    snprintf(c.where, sizeof c.where, "header");
    if (g->size < 4 || memcmp(g->map, "GGUF", 4) != 0)
        return err_set(err, "%s: not a GGUF file (no \"GGUF\" magic)", g->path);
    c.pos = 4;
    uint64_t n_tensors, n_kv;
    if (get_u32(&c, &g->version, "version")) return -1;
    /* ggml refuses only version 1 and versions past 3: a 0 reads as 2 and 3 do */
    if (g->version != 0 && g->version != 2 && g->version != 3) {
        if ((g->version & 0xffff) == 0 && (g->version >> 24) >= 1 && (g->version >> 24) <= 3)
            return err_set(err, "%s: big-endian GGUF files are not supported", g->path);
        return err_set(err, "%s: GGUF version %u is not supported (only 2 and 3)", g->path,
                       g->version);
    }
    if (get_u64(&c, &n_tensors, "tensor count") || get_u64(&c, &n_kv, "metadata count")) return -1;
    if (parse_metadata(&c, n_kv) || read_alignment(&c) || parse_tensors(&c, n_tensors)) return -1;
    fix_pointers(g);
    return place_tensors(&c) || build_tables(&c) ? -1 : 0;
}

int gguf_open(gguf **out, const char *path, char *err) {
    *out = NULL;
    gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(path))) {
        free(g);
        return err_set(err, "%s: out of memory", path);
    }
    void *map; /* a FIFO or directory is refused here */
    if (file_map_regular(path, "GGUF", &map, &g->size, err)) goto fail;
    g->map = map;
    if (parse(g, err)) goto fail;
    *out = g;
    return 0;
fail:
    gguf_close(g);
    return -1;
}

const void *gguf_mapping(const gguf *g, size_t *size) {
    *size = g->size;
    return g->map;
}

void gguf_close(gguf *g) {
    if (!g) return;
    if (g->map) munmap((void *)g->map, g->size);
    free(g->path);
    free(g->kv);
    free(g->tensors);
    free(g->name_off);
    free(g->strs);
    free(g->arena);
    free(g->kv_hash);
    free(g->t_hash);
    free(g);
}

/* ---- reader queries -------------------------------------------------------------------- */

const char *gguf_path(const gguf *g) {
    return g->path;
}
uint32_t gguf_version(const gguf *g) {
    return g->version;
}
uint32_t gguf_alignment(const gguf *g) {
    return g->alignment;
}
int gguf_kv_count(const gguf *g) {
    return g->n_kv;
}
int gguf_tensor_count(const gguf *g) {
    return g->n_tensors;
}

int gguf_find_key(const gguf *g, const char *key) {
    return table_find(g->kv_hash, g->kv_hash_cap, key, kv_name, g);
}

const char *gguf_kv_key(const gguf *g, int i) {
    return i >= 0 && i < g->n_kv ? g->kv[i].key : NULL;
}

gguf_vtype gguf_kv_type(const gguf *g, int i) {
    return i >= 0 && i < g->n_kv ? (gguf_vtype)g->kv[i].type : (gguf_vtype)-1;
}

int gguf_kv_array(const gguf *g, int i, gguf_vtype *elem_type, uint64_t *n) {
    if (i < 0 || i >= g->n_kv || g->kv[i].type != GGUF_ARRAY) return -1;
    *elem_type = (gguf_vtype)g->kv[i].elem;
    *n = g->kv[i].n;
    return 0;
}

int gguf_kv_raw(const gguf *g, int i, const void **data, uint64_t *nbytes) {
    if (i < 0 || i >= g->n_kv) return -1;
    const gguf_kv *kv = &g->kv[i];
    *data = kv->val;
    if (kv->type == GGUF_STRING) {
        uint64_t len;
        memcpy(&len, kv->val, 8);
        *nbytes = 8 + len;
    } else if (kv->type != GGUF_ARRAY) {
        *nbytes = (uint64_t)gguf_vtype_size(kv->type);
    } else if (kv->elem != GGUF_STRING) {
        *nbytes = kv->n * (uint64_t)gguf_vtype_size(kv->elem);
    } else if (kv->n == 0) {
        *nbytes = 0;
    } else { /* the strings lie back to back: from the first length to the last byte */
        const gguf_str *last = &g->strs[kv->first_str + kv->n - 1];
        *nbytes = (uint64_t)((const unsigned char *)last->ptr + last->len - kv->val);
    }
    return 0;
}

const gguf_tensor *gguf_tensor_at(const gguf *g, int i) {
    return i >= 0 && i < g->n_tensors ? &g->tensors[i] : NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf *g, const char *name) {
    int i = table_find(g->t_hash, g->t_hash_cap, name, tensor_name, g);
    return i >= 0 ? &g->tensors[i] : NULL;
}

static const gguf_kv *lookup(const gguf *g, const char *key, char *err) {
    int i = gguf_find_key(g, key);
    if (i < 0) {
        err_set(err, "%s: key '%s' is missing", g->path, key);
        return NULL;
    }
    return &g->kv[i];
}

static int wrong_type(const gguf *g, const gguf_kv *kv, const char *want, char *err) {
    if (kv->type == GGUF_ARRAY)
        return err_set(err, "%s: key '%s' should be %s but is an array of %s", g->path, kv->key,
                       want, gguf_vtype_name(kv->elem));
    return err_set(err, "%s: key '%s' should be %s but is %s", g->path, kv->key, want,
                   gguf_vtype_name(kv->type));
}

/* An integer value of type t at p, as sign + magnitude (so any type compares exactly). */
static int read_int(uint32_t t, const unsigned char *p, int *neg, uint64_t *mag) {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    int64_t s = 0;
    *neg = 0;
    switch (t) {
    case GGUF_U8:
        memcpy(&u8, p, 1);
        *mag = u8;
        return 0;
    case GGUF_U16:
        memcpy(&u16, p, 2);
        *mag = u16;
        return 0;
    case GGUF_U32:
        memcpy(&u32, p, 4);
        *mag = u32;
        return 0;
    case GGUF_U64:
        memcpy(mag, p, 8);
        return 0;
    case GGUF_I8: {
        int8_t v;
        memcpy(&v, p, 1);
        s = v;
        break;
    }
    case GGUF_I16: {
        int16_t v;
        memcpy(&v, p, 2);
        s = v;
        break;
    }
    case GGUF_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        s = v;
        break;
    }
    case GGUF_I64:
        memcpy(&s, p, 8);
        break;
    default:
        return -1;
    }
    *neg = s < 0;
    *mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    return 0;
}

static int get_int(const gguf *g, const char *key, uint64_t max_pos, uint64_t max_neg,
                   const char *want, uint64_t *mag, int *neg, char *err) {
    const gguf_kv *kv = lookup(g, key, err);
    if (!kv) return -1;
    if (read_int(kv->type, kv->val, neg, mag)) return wrong_type(g, kv, want, err);
    if (*neg ? *mag > max_neg : *mag > max_pos)
        return err_set(err, "%s: key '%s' = %s%llu does not fit %s", g->path, key, *neg ? "-" : "",
                       (unsigned long long)*mag, want);
    return 0;
}

int gguf_get_u32(const gguf *g, const char *key, uint32_t *out, char *err) {
    uint64_t m;
    int neg;
    if (get_int(g, key, UINT32_MAX, 0, "a u32", &m, &neg, err)) return -1;
    *out = (uint32_t)m;
    return 0;
}

int gguf_get_i32(const gguf *g, const char *key, int32_t *out, char *err) {
    uint64_t m;
    int neg;
    if (get_int(g, key, INT32_MAX, (uint64_t)INT32_MAX + 1, "an i32", &m, &neg, err)) return -1;
    *out = neg ? (int32_t)(-(int64_t)m) : (int32_t)m;
    return 0;
}

int gguf_get_u64(const gguf *g, const char *key, uint64_t *out, char *err) {
    int neg;
    return get_int(g, key, UINT64_MAX, 0, "a u64", out, &neg, err);
}

int gguf_get_f32(const gguf *g, const char *key, float *out, char *err) {
    const gguf_kv *kv = lookup(g, key, err);
    if (!kv) return -1;
    if (kv->type == GGUF_F32) {
        memcpy(out, kv->val, 4);
    } else if (kv->type == GGUF_F64) {
        double d;
        memcpy(&d, kv->val, 8);
        *out = (float)d;
    } else {
        return wrong_type(g, kv, "a float", err);
    }
    return 0;
}

int gguf_get_bool(const gguf *g, const char *key, int *out, char *err) {
    const gguf_kv *kv = lookup(g, key, err);
    if (!kv) return -1;
    if (kv->type != GGUF_BOOL) return wrong_type(g, kv, "a bool", err);
    *out = kv->val[0] != 0;
    return 0;
}

int gguf_get_str(const gguf *g, const char *key, const char **out, char *err) {
    const gguf_kv *kv = lookup(g, key, err);
    if (!kv) return -1;
    if (kv->type != GGUF_STRING) return wrong_type(g, kv, "a string", err);
    *out = kv->str;
    return 0;
}

static const gguf_kv *lookup_array(const gguf *g, const char *key, int (*elem_ok)(uint32_t),
                                   const char *want, char *err) {
    const gguf_kv *kv = lookup(g, key, err);
    if (!kv) return NULL;
    if (kv->type != GGUF_ARRAY || !elem_ok(kv->elem)) {
        wrong_type(g, kv, want, err);
        return NULL;
    }
    return kv;
}

static int is_f32(uint32_t t) {
    return t == GGUF_F32;
}
static int is_int(uint32_t t) {
    return t <= GGUF_I32 || t == GGUF_U64 || t == GGUF_I64;
}
static int is_string(uint32_t t) {
    return t == GGUF_STRING;
}
static int is_any(uint32_t t) {
    (void)t;
    return 1;
}

/* exact: the array holds n elements; else at least n (the first n are read). */
static int check_len(const gguf *g, const gguf_kv *kv, uint64_t n, int exact, char *err) {
    if (kv->n == n || (!exact && kv->n > n)) return 0;
    return err_set(err, "%s: key '%s' has %llu elements, expected %s%llu", g->path, kv->key,
                   (unsigned long long)kv->n, exact ? "" : "at least ", (unsigned long long)n);
}

int gguf_get_arr_len(const gguf *g, const char *key, gguf_vtype elem_type, uint64_t *n, char *err) {
    const gguf_kv *kv = lookup_array(g, key, is_any, "an array", err);
    if (!kv) return -1;
    if (kv->elem != (uint32_t)elem_type)
        return err_set(err, "%s: key '%s' should be an array of %s but holds %s", g->path, key,
                       gguf_vtype_name(elem_type), gguf_vtype_name(kv->elem));
    *n = kv->n;
    return 0;
}

static int arr_f32(const gguf *g, const char *key, float *out, uint64_t n, int exact, char *err) {
    const gguf_kv *kv = lookup_array(g, key, is_f32, "an array of f32", err);
    if (!kv || check_len(g, kv, n, exact, err)) return -1;
    memcpy(out, kv->val, (size_t)n * 4);
    return 0;
}

static int arr_i32(const gguf *g, const char *key, int32_t *out, uint64_t n, int exact, char *err) {
    const gguf_kv *kv = lookup_array(g, key, is_int, "an array of integers", err);
    if (!kv || check_len(g, kv, n, exact, err)) return -1;
    int esz = gguf_vtype_size(kv->elem);
    for (uint64_t i = 0; i < n; i++) {
        int neg = 0;
        uint64_t m = 0;
        read_int(kv->elem, kv->val + i * (uint64_t)esz, &neg, &m);
        if (neg ? m > (uint64_t)INT32_MAX + 1 : m > INT32_MAX)
            return err_set(err, "%s: key '%s': element %llu does not fit an i32", g->path, key,
                           (unsigned long long)i);
        out[i] = neg ? (int32_t)(-(int64_t)m) : (int32_t)m;
    }
    return 0;
}

int gguf_get_arr_f32(const gguf *g, const char *key, float *out, uint64_t n, char *err) {
    return arr_f32(g, key, out, n, 1, err);
}
int gguf_get_arr_i32(const gguf *g, const char *key, int32_t *out, uint64_t n, char *err) {
    return arr_i32(g, key, out, n, 1, err);
}
int gguf_get_arr_f32_prefix(const gguf *g, const char *key, float *out, uint64_t n, char *err) {
    return arr_f32(g, key, out, n, 0, err);
}
int gguf_get_arr_i32_prefix(const gguf *g, const char *key, int32_t *out, uint64_t n, char *err) {
    return arr_i32(g, key, out, n, 0, err);
}

int gguf_get_arr_str(const gguf *g, const char *key, uint64_t i, gguf_str *out, char *err) {
    const gguf_kv *kv = lookup_array(g, key, is_string, "an array of strings", err);
    if (!kv) return -1;
    if (i >= kv->n)
        return err_set(err, "%s: key '%s': index %llu past its %llu elements", g->path, key,
                       (unsigned long long)i, (unsigned long long)kv->n);
    *out = g->strs[kv->first_str + i];
    return 0;
}
