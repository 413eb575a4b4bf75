/* safetensors.h: reading safetensors files (Hugging Face's format for published weights; the
 * learned drafters' heads, EAGLE's model.safetensors and Medusa's medusa_lm_head.safetensors,
 * come in it).
 *
 * Layout (the format's specification, huggingface/safetensors README): a uint64 little-endian
 * header length N; N bytes of JSON (UTF-8, possibly padded with trailing spaces): an object
 * mapping each tensor name to {"dtype": "F16", "shape": [d0, d1, ...], "data_offsets":
 * [begin, end]}, plus an optional "__metadata__" object of strings (ignored here); then the data
 * section, in which tensor t occupies bytes [begin, end), row-major, little-endian, with
 * end - begin = the element count times the dtype's size. An empty shape is a scalar.
 *
 * st_open validates all of it before a caller can touch anything: the header length against
 * the file size, the JSON (parsed by jansson, duplicate names refused), each entry's fields and
 * their types, every dtype (known to the format; unknown names refused), shape and byte range
 * against the data section, and that no two tensors' bytes overlap; each refusal is one line
 * naming the file and the field. As lenient as the format's own reader where the bytes are
 * unambiguous: extra keys in an entry are ignored, and bytes the tensors do not cover (gaps,
 * trailing bytes) are allowed. Values are not looked at: NaN or infinite weights are the
 * business of the loaders that know what a tensor is for.
 *
 * Types: every dtype of the format is recognised (so that any valid file opens and its byte
 * ranges are checked); F32, F16 and BF16 can be read (st_read_f32 widens them exactly to
 * float), any other is refused when read, naming the file, the tensor and its dtype.
 *
 * The file is mapped (mmap), not read: a published head is a few gigabytes (Medusa's five
 * heads for a 7B target: 1.5 GB in f16), its loader converts each tensor once to f32, and the
 * mapping lets that conversion read the page cache directly, without a second copy of the whole
 * file in memory; the mapping's pages are dropped at st_close. */
#ifndef MODEL_SAFETENSORS_H
#define MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_DIMS 8

typedef enum {
    ST_F32 = 0,
    ST_F16,
    ST_BF16,
    ST_F64,
    ST_I64,
    ST_U64,
    ST_I32,
    ST_U32,
    ST_I16,
    ST_U16,
    ST_I8,
    ST_U8,
    ST_BOOL,
    ST_F8_E4M3,
    ST_F8_E5M2,
    ST_N_DTYPES
} st_dtype;

/* The format's name of a dtype ("F16"), and its size in bytes. */
const char *st_dtype_name(st_dtype d);
int st_dtype_size(st_dtype d);

typedef struct {
    const char *name; /* NUL-terminated, owned by the reader */
    st_dtype dtype;
    int n_dims;                  /* 0 (a scalar) .. ST_MAX_DIMS */
    uint64_t shape[ST_MAX_DIMS]; /* shape[n_dims - 1] varies fastest (row-major) */
    uint64_t n_elements;
    uint64_t begin, end; /* data_offsets: bytes relative to the data section */
    const void *data;    /* in the mapping; NOT aligned (any byte offset is valid) */
} st_tensor;

typedef struct safetensors safetensors;

/* Maps and validates path. On success *out owns the mapping until st_close. */
int st_open(safetensors **out, const char *path, char *err);
void st_close(safetensors *s);

const char *st_path(const safetensors *s);
/* Tensors in the header's order. */
int st_count(const safetensors *s);
const st_tensor *st_tensor_at(const safetensors *s, int i);
/* NULL when absent. */
const st_tensor *st_find(const safetensors *s, const char *name);

/* Writes tensor t's n_elements values to out as floats (F32 copied, F16 and BF16 widened
 * exactly). Other dtypes: an error naming the file, the tensor and the dtype. */
int st_read_f32(const safetensors *s, const st_tensor *t, float *out, char *err);

/* For loaders: the tensor called name, which must exist and have exactly the n_dims dimensions
 * of shape, read into out (its element count of floats) by st_read_f32. Errors name the file
 * and the tensor: missing, or its shape against the expected one. */
int st_load_f32(const safetensors *s, const char *name, int n_dims, const uint64_t *shape,
                float *out, char *err);

#endif
