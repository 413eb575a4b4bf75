/* gguf_format.c: the tables of the GGUF format shared by the reader (gguf_read.c) and the
 * writer (gguf_write.c): ggml's tensor types with their block geometry, and the metadata value
 * types. See gguf.h. */
#include "model/formats/gguf.h"

/* ---- ggml types ------------------------------------------------------------------------ */

/* Block geometry of every ggml type a GGUF file may hold (ggml.h / ggml.c type traits);
 * ids 4, 5, 31-33 and 36-38 were removed from ggml and are rejected as unknown. */
static const struct {
    const char *name;
    uint16_t block_elems, block_bytes;
} ggml_types[] = {
    [0] = {"F32", 1, 4},         [1] = {"F16", 1, 2},         [2] = {"Q4_0", 32, 18},
    [3] = {"Q4_1", 32, 20},      [6] = {"Q5_0", 32, 22},      [7] = {"Q5_1", 32, 24},
    [8] = {"Q8_0", 32, 34},      [9] = {"Q8_1", 32, 36},      [10] = {"Q2_K", 256, 84},
    [11] = {"Q3_K", 256, 110},   [12] = {"Q4_K", 256, 144},   [13] = {"Q5_K", 256, 176},
    [14] = {"Q6_K", 256, 210},   [15] = {"Q8_K", 256, 292},   [16] = {"IQ2_XXS", 256, 66},
    [17] = {"IQ2_XS", 256, 74},  [18] = {"IQ3_XXS", 256, 98}, [19] = {"IQ1_S", 256, 50},
    [20] = {"IQ4_NL", 32, 18},   [21] = {"IQ3_S", 256, 110},  [22] = {"IQ2_S", 256, 82},
    [23] = {"IQ4_XS", 256, 136}, [24] = {"I8", 1, 1},         [25] = {"I16", 1, 2},
    [26] = {"I32", 1, 4},        [27] = {"I64", 1, 8},        [28] = {"F64", 1, 8},
    [29] = {"IQ1_M", 256, 56},   [30] = {"BF16", 1, 2},       [34] = {"TQ1_0", 256, 54},
    [35] = {"TQ2_0", 256, 66},   [39] = {"MXFP4", 32, 17},    [40] = {"NVFP4", 64, 36},
    [41] = {"Q1_0", 128, 18},
};
#define N_TYPES (sizeof ggml_types / sizeof ggml_types[0])

const char *gguf_type_name(uint32_t type) {
    return type < N_TYPES ? ggml_types[type].name : NULL;
}

int gguf_type_block(uint32_t type, uint64_t *block_elems, uint64_t *block_bytes) {
    if (!gguf_type_name(type)) return -1;
    *block_elems = ggml_types[type].block_elems;
    *block_bytes = ggml_types[type].block_bytes;
    return 0;
}

/* Byte size of a scalar metadata value type, 0 for STRING/ARRAY, -1 for an unknown id. */
int gguf_vtype_size(uint32_t t) {
    static const int sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < sizeof sizes / sizeof sizes[0] ? sizes[t] : -1;
}

const char *gguf_vtype_name(uint32_t t) {
    static const char *names[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                  "bool", "string", "array", "u64", "i64", "f64"};
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}
