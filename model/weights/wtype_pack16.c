/* wtype_pack16.c: the int8b mode's copy of a matrix with 16 rows interleaved (kernels.h, "the
 * 16-row copy"): per group of 16 rows and per block, each field of the block (ggml's layout, in
 * its order) as the 16 rows' copies of it side by side: a 2-byte field (an f16 scale) as 16
 * halves, a field of 4k bytes as its k 32-bit words, each word of the 16 rows together (64
 * bytes, one register whose lane i is row i). A field at byte o of a block of BB bytes lands at
 * byte 16 o of the copy's block of 16 BB bytes, its word j of row i at 16 o + 64 j + 4 i, so a
 * tile finds every field of 16 rows at a fixed offset, one load per word. The bytes are the
 * rows' own, none changed: the tiles unpack them as the int8 mode's to_int8 does. */
#include <string.h>

#include "model/weights/wtype.h"
#include "model/weights/wtype_blocks.h"

typedef struct {
    unsigned char at, bytes;
} field;

/* The fields of each type's block (byte offset, size), in ggml's order; {0, 0} ends a list. */
static const field *fields_of(wtype t) {
    static const field q8_0[] = {{0, 2}, {2, 32}, {0, 0}};
    static const field q4_0[] = {{0, 2}, {2, 16}, {0, 0}};
    static const field q4_1[] = {{0, 2}, {2, 2}, {4, 16}, {0, 0}};
    static const field q5_0[] = {{0, 2}, {2, 4}, {6, 16}, {0, 0}};
    static const field q5_1[] = {{0, 2}, {2, 2}, {4, 4}, {8, 16}, {0, 0}};
    static const field q3_k[] = {{0, 32}, {32, 64}, {96, 12}, {108, 2}, {0, 0}};
    static const field q4_k[] = {{0, 2}, {2, 2}, {4, 12}, {16, 128}, {0, 0}};
    static const field q5_k[] = {{0, 2}, {2, 2}, {4, 12}, {16, 32}, {48, 128}, {0, 0}};
    static const field q6_k[] = {{0, 128}, {128, 64}, {192, 16}, {208, 2}, {0, 0}};
    switch (t) {
    case WTYPE_Q8_0:
        return q8_0;
    case WTYPE_Q4_0:
        return q4_0;
    case WTYPE_Q4_1:
        return q4_1;
    case WTYPE_Q5_0:
        return q5_0;
    case WTYPE_Q5_1:
        return q5_1;
    case WTYPE_Q3_K:
        return q3_k;
    case WTYPE_Q4_K:
        return q4_k;
    case WTYPE_Q5_K:
        return q5_k;
    case WTYPE_Q6_K:
        return q6_k;
    default:
        return NULL;
    }
}

int wtype_pack16_supported(wtype t) {
    return fields_of(t) != NULL;
}

void wtype_pack16(wtype t, const unsigned char *w, size_t ldw, int rows, int n,
                  unsigned char *dst) {
    const field *f = fields_of(t);
    const wtype_traits *tt = wtype_get(t);
    const size_t bb = (size_t)tt->block_bytes;
    for (int b = 0; b < n / tt->block; b++, dst += 16 * bb) {
        memset(dst, 0, 16 * bb); /* rows past `rows` stay zero: scale 0, no contribution */
        for (int i = 0; i < rows && i < 16; i++) {
            const unsigned char *src = w + (size_t)i * ldw + (size_t)b * bb;
            for (const field *p = f; p->bytes; p++) {
                if (p->bytes == 2) {
                    memcpy(dst + 16 * p->at + 2 * i, src + p->at, 2);
                    continue;
                }
                for (int j = 0; j < p->bytes / 4; j++)
                    memcpy(dst + 16 * p->at + 64 * j + 4 * i, src + p->at + 4 * j, 4);
            }
        }
    }
}
