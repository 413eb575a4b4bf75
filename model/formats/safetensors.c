/* safetensors.c: the safetensors reader: mmap, the JSON header parsed and every entry
 * validated up front, then lookups and conversions that cannot fail on layout. See
 * safetensors.h. */
#include "model/formats/safetensors.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/weights/wtype.h"
#include "util/err.h"
#include "util/file.h"

struct safetensors {
    char *path;
    const unsigned char *map;
    size_t size;
    const unsigned char *data; /* the data section: map + 8 + header length */
    uint64_t data_size;
    int n;
    st_tensor *t;
    char *names; /* every tensor's name, NUL-terminated, back to back */
};

static const struct {
    const char *name;
    int size;
} dtypes[ST_N_DTYPES] = {
    [ST_F32] = {"F32", 4},   [ST_F16] = {"F16", 2},         [ST_BF16] = {"BF16", 2},
    [ST_F64] = {"F64", 8},   [ST_I64] = {"I64", 8},         [ST_U64] = {"U64", 8},
    [ST_I32] = {"I32", 4},   [ST_U32] = {"U32", 4},         [ST_I16] = {"I16", 2},
    [ST_U16] = {"U16", 2},   [ST_I8] = {"I8", 1},           [ST_U8] = {"U8", 1},
    [ST_BOOL] = {"BOOL", 1}, [ST_F8_E4M3] = {"F8_E4M3", 1}, [ST_F8_E5M2] = {"F8_E5M2", 1},
};

const char *st_dtype_name(st_dtype d) {
    return (unsigned)d < ST_N_DTYPES ? dtypes[d].name : "?";
}
int st_dtype_size(st_dtype d) { return (unsigned)d < ST_N_DTYPES ? dtypes[d].size : 0; }

const char *st_path(const safetensors *s) { return s->path; }
int st_count(const safetensors *s) { return s->n; }
const st_tensor *st_tensor_at(const safetensors *s, int i) {
    return i >= 0 && i < s->n ? &s->t[i] : NULL;
}

const st_tensor *st_find(const safetensors *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->t[i].name, name) == 0) return &s->t[i];
    return NULL;
}

/* A non-negative JSON integer; -1 when v is anything else. */
static int get_u64(const json_t *v, uint64_t *out) {
    if (!json_is_integer(v) || json_integer_value(v) < 0) return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* One header entry into t (name already set). */
static int parse_entry(const safetensors *s, const char *name, const json_t *e, st_tensor *t,
                       char *err) {
    const char *p = s->path;
    if (!json_is_object(e))
        return err_set(err, "%s: header: tensor \"%s\" is not a JSON object", p, name);
    const json_t *dt = json_object_get(e, "dtype"), *sh = json_object_get(e, "shape");
    const json_t *off = json_object_get(e, "data_offsets");
    if (!json_is_string(dt))
        return err_set(err, "%s: header: tensor \"%s\": \"dtype\" is %s, expected a string", p,
                       name, dt ? "not a string" : "missing");
    const char *dname = json_string_value(dt);
    t->dtype = ST_N_DTYPES;
    for (int d = 0; d < ST_N_DTYPES; d++)
        if (strcmp(dname, dtypes[d].name) == 0) t->dtype = (st_dtype)d;
    if (t->dtype == ST_N_DTYPES)
        return err_set(err, "%s: header: tensor \"%s\": unknown dtype \"%.40s\"", p, name, dname);
    if (!json_is_array(sh))
        return err_set(err, "%s: header: tensor \"%s\": \"shape\" is %s, expected an array", p,
                       name, sh ? "not an array" : "missing");
    if (json_array_size(sh) > ST_MAX_DIMS)
        return err_set(err, "%s: header: tensor \"%s\": %zu dimensions, at most %d", p, name,
                       json_array_size(sh), ST_MAX_DIMS);
    t->n_dims = (int)json_array_size(sh);
    t->n_elements = 1;
    int overflow = 0;
    for (int d = 0; d < t->n_dims; d++) {
        if (get_u64(json_array_get(sh, (size_t)d), &t->shape[d]))
            return err_set(err, "%s: header: tensor \"%s\": shape[%d] is not a non-negative integer",
                           p, name, d);
        if (t->shape[d] && t->n_elements > UINT64_MAX / t->shape[d]) overflow = 1;
        t->n_elements *= t->shape[d];
    }
    if (!json_is_array(off) || json_array_size(off) != 2 ||
        get_u64(json_array_get(off, 0), &t->begin) || get_u64(json_array_get(off, 1), &t->end))
        return err_set(err, "%s: header: tensor \"%s\": \"data_offsets\" is %s, expected [begin, "
                            "end] of non-negative integers",
                       p, name, off ? "malformed" : "missing");
    if (t->begin > t->end)
        return err_set(err, "%s: header: tensor \"%s\": data_offsets [%llu, %llu] end before they "
                            "begin",
                       p, name, (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end > s->data_size)
        return err_set(err, "%s: header: tensor \"%s\": data_offsets [%llu, %llu] past the end of "
                            "the data (%llu bytes: the file is truncated or the offsets wrong)",
                       p, name, (unsigned long long)t->begin, (unsigned long long)t->end,
                       (unsigned long long)s->data_size);
    uint64_t size = (uint64_t)dtypes[t->dtype].size;
    if (overflow || t->n_elements > UINT64_MAX / size)
        return err_set(err, "%s: header: tensor \"%s\": the shape's byte count overflows 64 bits",
                       p, name);
    if (t->n_elements * size != t->end - t->begin)
        return err_set(err, "%s: header: tensor \"%s\": shape holds %llu elements of %s (%llu "
                            "bytes each), data_offsets [%llu, %llu] span %llu bytes",
                       p, name, (unsigned long long)t->n_elements, dname,
                       (unsigned long long)size, (unsigned long long)t->begin,
                       (unsigned long long)t->end, (unsigned long long)(t->end - t->begin));
    t->data = s->data + t->begin;
    return 0;
}

static int by_begin(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* No two tensors' bytes overlap (empty tensors hold none). */
static int check_overlaps(const safetensors *s, char *err) {
    const st_tensor **order = malloc(sizeof *order * (size_t)(s->n ? s->n : 1));
    if (!order) return err_set(err, "%s: out of memory", s->path);
    int k = 0;
    for (int i = 0; i < s->n; i++)
        if (s->t[i].end > s->t[i].begin) order[k++] = &s->t[i];
    qsort(order, (size_t)k, sizeof *order, by_begin);
    int rc = 0;
    for (int i = 1; i < k && !rc; i++)
        if (order[i]->begin < order[i - 1]->end)
            rc = err_set(err, "%s: header: tensor \"%s\": data_offsets [%llu, %llu] overlap those "
                              "of \"%s\" [%llu, %llu]",
                         s->path, order[i]->name, (unsigned long long)order[i]->begin,
                         (unsigned long long)order[i]->end, order[i - 1]->name,
                         (unsigned long long)order[i - 1]->begin,
                         (unsigned long long)order[i - 1]->end);
    free(order);
    return rc;
}

static int parse(safetensors *s, char *err) {
    const char *p = s->path;
    if (s->size < 8)
        return err_set(err, "%s: %zu bytes, too short for a safetensors header length (8)", p,
                       s->size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | s->map[i];
    if (n > s->size - 8)
        return err_set(err, "%s: header length %llu past the end of the file (%zu bytes): not a "
                            "safetensors file, or truncated",
                       p, (unsigned long long)n, s->size);
    s->data = s->map + 8 + n;
    s->data_size = s->size - 8 - n;
    json_error_t je;
    json_t *h = json_loadb((const char *)s->map + 8, (size_t)n, JSON_REJECT_DUPLICATES, &je);
    if (!h)
        return err_set(err, "%s: header: %s (byte %d of the JSON header)", p, je.text,
                       je.position);
    int rc = -1;
    if (!json_is_object(h)) {
        err_set(err, "%s: header: not a JSON object", p);
        goto done;
    }
    size_t names = 0;
    const char *key;
    json_t *v;
    json_object_foreach(h, key, v) {
        if (strcmp(key, "__metadata__") == 0) continue;
        s->n++;
        names += strlen(key) + 1;
    }
    s->t = calloc((size_t)(s->n ? s->n : 1), sizeof *s->t);
    s->names = malloc(names ? names : 1);
    if (!s->t || !s->names) {
        err_set(err, "%s: out of memory (%d tensors)", p, s->n);
        goto done;
    }
    int i = 0;
    char *at = s->names;
    json_object_foreach(h, key, v) {
        if (strcmp(key, "__metadata__") == 0) continue;
        size_t len = strlen(key) + 1;
        memcpy(at, key, len);
        s->t[i].name = at;
        at += len;
        if (parse_entry(s, key, v, &s->t[i], err)) goto done;
        i++;
    }
    rc = check_overlaps(s, err);
done:
    json_decref(h);
    return rc;
}

int st_open(safetensors **out, const char *path, char *err) {
    *out = NULL;
    safetensors *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return err_set(err, "%s: out of memory", path);
    }
    void *map;
    if (file_map_regular(path, "safetensors", &map, &s->size, err)) goto fail;
    s->map = map;
    if (parse(s, err)) goto fail;
    *out = s;
    return 0;
fail:
    st_close(s);
    return -1;
}

void st_close(safetensors *s) {
    if (!s) return;
    if (s->map) munmap((void *)s->map, s->size);
    free(s->path);
    free(s->t);
    free(s->names);
    free(s);
}

int st_read_f32(const safetensors *s, const st_tensor *t, float *out, char *err) {
    const unsigned char *b = t->data;
    switch (t->dtype) {
    case ST_F32:
        memcpy(out, b, (size_t)t->n_elements * 4);
        return 0;
    case ST_F16:
    case ST_BF16:
        for (uint64_t i = 0; i < t->n_elements; i++) {
            uint16_t h = (uint16_t)(b[2 * i] | b[2 * i + 1] << 8);
            out[i] = t->dtype == ST_F16 ? wtype_f16_to_f32(h) : wtype_bf16_to_f32(h);
        }
        return 0;
    default:
        return err_set(err, "%s: tensor \"%s\" is %s; only F32, F16 and BF16 tensors can be read",
                       s->path, t->name, st_dtype_name(t->dtype));
    }
}

/* "[a, b, c]" of a shape, for messages. */
static void shape_str(char *buf, size_t n, int n_dims, const uint64_t *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < n_dims && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%llu", d ? ", " : "",
                              (unsigned long long)shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

int st_load_f32(const safetensors *s, const char *name, int n_dims, const uint64_t *shape,
                float *out, char *err) {
    const st_tensor *t = st_find(s, name);
    if (!t) return err_set(err, "%s: tensor \"%s\" is missing", s->path, name);
    int same = t->n_dims == n_dims;
    for (int d = 0; same && d < n_dims; d++) same = t->shape[d] == shape[d];
    if (!same) {
        char got[160], want[160];
        shape_str(got, sizeof got, t->n_dims, t->shape);
        shape_str(want, sizeof want, n_dims, shape);
        return err_set(err, "%s: tensor \"%s\" has shape %s, expected %s", s->path, name, got,
                       want);
    }
    return st_read_f32(s, t, out, err);
}
