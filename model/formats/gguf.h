/* gguf.h: reading and writing GGUF files (versions 2 and 3, little-endian): the reader is
 * gguf_read.c, the writer gguf_write.c, the format's type tables gguf_format.c.
 *
 * Layout (ggml's docs/gguf.md): "GGUF", uint32 version, uint64 tensor count, uint64 metadata
 * count; then the metadata key/value pairs (key = uint64 length + bytes, uint32 value type,
 * value); then per tensor: name, uint32 n_dims, uint64 ne[n_dims] (ne[0] is the fastest
 * varying dimension, i.e. the columns of a row-major matrix), uint32 ggml type, uint64 offset
 * relative to the data section; then padding to general.alignment (default 32) and the data.
 *
 * The reader mmaps the file and validates all of it in gguf_open (every count, length, type,
 * dimension, offset and byte range against the file size) before a caller can touch anything,
 * so getters never fail on a structurally valid file except for a missing key or wrong type.
 * Allocations are bounded by the file size: a count is checked against the bytes remaining
 * before anything is allocated for it.
 *
 * What ggml's own reader (gguf_init_from_file) accepts is accepted here, read the same way:
 * version 0 (ggml refuses only 1 and versions past 3), empty keys and tensor names, names and
 * string values holding a NUL byte (read up to it: ggml's lookups and getters use C strings;
 * two keys equal up to their NUL are two keys, the first found), bool bytes other than 0 or 1
 * (true). What it refuses is refused, with a message naming the field: see model/GGUF.md. */
#ifndef MODEL_GGUF_H
#define MODEL_GGUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Metadata value types, with their on-disk ids. */
typedef enum {
    GGUF_U8 = 0,
    GGUF_I8 = 1,
    GGUF_U16 = 2,
    GGUF_I16 = 3,
    GGUF_U32 = 4,
    GGUF_I32 = 5,
    GGUF_F32 = 6,
    GGUF_BOOL = 7,
    GGUF_STRING = 8,
    GGUF_ARRAY = 9,
    GGUF_U64 = 10,
    GGUF_I64 = 11,
    GGUF_F64 = 12,
} gguf_vtype;

/* ggml tensor type ids this project reads; gguf_type_name() knows all of ggml's up to 41
 * (block sizes included, so that any file's byte ranges can be validated). */
enum {
    GGUF_TENSOR_F32 = 0,
    GGUF_TENSOR_F16 = 1,
    GGUF_TENSOR_Q8_0 = 8,
    GGUF_TENSOR_BF16 = 30,
};

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_DIMS 4

/* ---- reader ---------------------------------------------------------------------------- */

typedef struct gguf gguf;

/* A string inside the mapping: NOT NUL-terminated, may contain any bytes. */
typedef struct {
    const char *ptr;
    uint64_t len;
} gguf_str;

typedef struct {
    const char *name;           /* NUL-terminated copy, owned by the reader */
    uint32_t type;              /* ggml type id */
    uint32_t n_dims;            /* 1..4 (0 is read as a scalar) */
    uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] fastest; dimensions past n_dims are 1 */
    uint64_t n_elements;
    uint64_t offset; /* relative to the data section */
    uint64_t nbytes;
    const void *data; /* in the mapping, aligned to the file's alignment */
} gguf_tensor;

/* Maps and validates path. On success *out owns the mapping until gguf_close. */
int gguf_open(gguf **out, const char *path, char *err);
void gguf_close(gguf *g);

const char *gguf_path(const gguf *g);
/* The mapped file (owned by g) and its size. */
const void *gguf_mapping(const gguf *g, size_t *size);
uint32_t gguf_version(const gguf *g);
uint32_t gguf_alignment(const gguf *g);

/* Metadata. Keys are looked up in O(1). Index-based access walks all pairs. */
int gguf_kv_count(const gguf *g);
int gguf_find_key(const gguf *g, const char *key); /* index, or -1 if absent */
const char *gguf_kv_key(const gguf *g, int i);     /* NUL-terminated */
gguf_vtype gguf_kv_type(const gguf *g, int i);
/* For an array: element type and count (returns -1 if the value is not an array). */
int gguf_kv_array(const gguf *g, int i, gguf_vtype *elem_type, uint64_t *n);

/* The serialized value of pair i, as the file holds it: a scalar's bytes (a string's with its
 * 8-byte length), an array's elements (element type and count from gguf_kv_array). For copying
 * pairs verbatim (gguf_writer_add_raw). -1 for a bad index. */
int gguf_kv_raw(const gguf *g, int i, const void **data, uint64_t *nbytes);

/* Typed getters. Each fails (-1, "<file>: key '<key>' ...") if the key is absent or its value
 * does not convert exactly: the integer getters accept any integer type whose value fits, the
 * float getter accepts F32 and F64, bool accepts only BOOL. */
int gguf_get_u32(const gguf *g, const char *key, uint32_t *out, char *err);
int gguf_get_i32(const gguf *g, const char *key, int32_t *out, char *err);
int gguf_get_u64(const gguf *g, const char *key, uint64_t *out, char *err);
int gguf_get_f32(const gguf *g, const char *key, float *out, char *err);
int gguf_get_bool(const gguf *g, const char *key, int *out, char *err);
/* A NUL-terminated copy owned by the reader: a string holding a NUL byte reads up to it, as
 * ggml's gguf_get_val_str hands it out. */
int gguf_get_str(const gguf *g, const char *key, const char **out, char *err);

/* Arrays: *n receives the element count. The copying getters fill out[0..n-1] where n must
 * equal the array's length (arrays in the file are not aligned, so no pointer is handed out).
 * The f32 getter accepts F32 arrays; the i32 getter any integer array whose values fit. */
int gguf_get_arr_len(const gguf *g, const char *key, gguf_vtype elem_type, uint64_t *n, char *err);
int gguf_get_arr_f32(const gguf *g, const char *key, float *out, uint64_t n, char *err);
int gguf_get_arr_i32(const gguf *g, const char *key, int32_t *out, uint64_t n, char *err);
/* The same for an array of at least n elements: the first n (llama.cpp reads per-token arrays
 * by index, so a longer one works there). */
int gguf_get_arr_f32_prefix(const gguf *g, const char *key, float *out, uint64_t n, char *err);
int gguf_get_arr_i32_prefix(const gguf *g, const char *key, int32_t *out, uint64_t n, char *err);
/* Element i of a string array, pointing into the mapping (valid until gguf_close). */
int gguf_get_arr_str(const gguf *g, const char *key, uint64_t i, gguf_str *out, char *err);

/* Tensors, in file order; lookup by name in O(1). */
int gguf_tensor_count(const gguf *g);
const gguf_tensor *gguf_tensor_at(const gguf *g, int i);
const gguf_tensor *gguf_find_tensor(const gguf *g, const char *name); /* NULL if absent */

/* ggml type name ("F32", "Q8_0", ...), or NULL for an id ggml does not define. */
const char *gguf_type_name(uint32_t type);
/* Elements per block and bytes per block of a ggml type; -1 if unknown. */
int gguf_type_block(uint32_t type, uint64_t *block_elems, uint64_t *block_bytes);
/* Byte size of a scalar metadata value type (0 for STRING and ARRAY, -1 for an unknown id),
 * and its name ("u32", "string", ...; "unknown"). */
int gguf_vtype_size(uint32_t t);
const char *gguf_vtype_name(uint32_t t);

/* ---- writer ---------------------------------------------------------------------------- */

/* Builds a GGUF version 3 file in memory (metadata) plus references to tensor data, then
 * writes it in one go. Tensor data is NOT copied: it must stay valid until
 * gguf_writer_write returns. The add functions return 0 or -1; the first failure is kept
 * and reported (with its message) by gguf_writer_write, so a sequence of adds needs only
 * one check. */
typedef struct gguf_writer gguf_writer;

/* alignment: a power of two (0 = the default 32; any other value also writes
 * general.alignment). Returns NULL only when out of memory. */
gguf_writer *gguf_writer_new(uint32_t alignment);
void gguf_writer_free(gguf_writer *w);

/* A scalar: value points to the C value of `type` (uint8_t for BOOL, const char * for
 * STRING, whose string is NUL-terminated). */
int gguf_writer_add(gguf_writer *w, const char *key, gguf_vtype type, const void *value);
/* An array of n elements of elem_type (not ARRAY): items points to n C values, or for
 * STRING to n `const char *` (lens may give their byte lengths, or be NULL for strlen). */
int gguf_writer_add_array(gguf_writer *w, const char *key, gguf_vtype elem_type, const void *items,
                          const uint64_t *lens, uint64_t n);
int gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v);
int gguf_writer_add_f32(gguf_writer *w, const char *key, float v);
int gguf_writer_add_bool(gguf_writer *w, const char *key, int v);
int gguf_writer_add_str(gguf_writer *w, const char *key, const char *v);

/* A pair copied from a reader (gguf_kv_raw): type, and for arrays elem_type and n. */
int gguf_writer_add_raw(gguf_writer *w, const char *key, gguf_vtype type, gguf_vtype elem_type,
                        uint64_t n, const void *data, uint64_t nbytes);
/* Pair i of reader g, copied as it is. */
int gguf_writer_copy_kv(gguf_writer *w, const gguf *g, int i);

/* A tensor of ggml type `type` with n_dims dims ne[] (ne[0] fastest); nbytes must equal
 * the size the type and dims imply. */
int gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                           const uint64_t *ne, const void *data, uint64_t nbytes);

/* The same with data produced at write time: fill(ctx, buf, err) writes the tensor's nbytes
 * into buf (a buffer of the writer's, reused from tensor to tensor) or returns -1 with a
 * message. Tensors are produced one at a time in file order, so a file far larger than memory
 * can be written (decbench synth's 8B shapes). */
typedef int (*gguf_fill_fn)(void *ctx, void *buf, char *err);
int gguf_writer_add_tensor_fill(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                const uint64_t *ne, uint64_t nbytes, gguf_fill_fn fill, void *ctx);

/* The size of the file gguf_writer_write would write now (for a free-space check). */
uint64_t gguf_writer_size(const gguf_writer *w);

/* Writes the file (replacing path). Fails with the first add error, if any. */
int gguf_writer_write(gguf_writer *w, const char *path, char *err);
/* The same into an open stream (at its start), for callers that manage the file themselves
 * (util/file.h's file_out). */
int gguf_writer_write_stream(gguf_writer *w, FILE *f, char *err);

#endif
