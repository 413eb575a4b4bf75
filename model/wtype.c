/* wtype.c: weight storage types (kept apart so the kernels need nothing else). */
#include "model/model.h"

size_t wtype_row_bytes(wtype t, int cols) {
    switch (t) {
    case WTYPE_F32: return 4 * (size_t)cols;
    case WTYPE_F16:
    case WTYPE_BF16: return 2 * (size_t)cols;
    case WTYPE_Q8_0: return 34 * (size_t)(cols / 32);
    }
    return 0;
}

const char *wtype_name(wtype t) {
    switch (t) {
    case WTYPE_F32: return "f32";
    case WTYPE_F16: return "f16";
    case WTYPE_BF16: return "bf16";
    case WTYPE_Q8_0: return "q8_0";
    }
    return "?";
}
