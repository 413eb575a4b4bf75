/* tok_common.c: what the loaders of every vocabulary type use (tok_internal.h): warnings kept
 * for the caller, the token types of a GGUF vocabulary, and UTF-8 sequence lengths. */
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tok_internal.h"
#include "util/err.h"

void tok_warn(tok *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int add = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t old = t->warn ? strlen(t->warn) : 0;
    char *w = add < 0 ? NULL : realloc(t->warn, old + (size_t)add + 2);
    if (!w) return;
    t->warn = w;
    if (old) w[old++] = '\n';
    va_start(ap, fmt);
    vsnprintf(w + old, (size_t)add + 1, fmt, ap);
    va_end(ap);
}

int tok_read_types(tok *t, const gguf *g, char *err) {
    const char *key = "tokenizer.ggml.token_type";
    uint64_t n = (uint64_t)t->n, len;
    if (!(t->type = malloc(n ? n : 1))) return err_set(err, "%s: out of memory", gguf_path(g));
    if (gguf_find_key(g, key) < 0) {
        memset(t->type, TT_NORMAL, n);
        return 0;
    }
    if (gguf_get_arr_len(g, key, GGUF_I32, &len, NULL) == 0 && len > n) {
        /* llama.cpp reads the first n and ignores the rest */
        tok_warn(t,
                 "%s: %s has %llu elements for %llu tokens: the rest are ignored, as llama.cpp "
                 "ignores them",
                 gguf_path(g), key, (unsigned long long)len, (unsigned long long)n);
    }
    int32_t *types = malloc(n * sizeof *types + 1);
    if (!types) return err_set(err, "%s: out of memory", gguf_path(g));
    if (gguf_get_arr_i32_prefix(g, key, types, n, err)) {
        free(types);
        return -1;
    }
    uint64_t odd = 0, first = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (types[i] < TT_UNDEFINED || types[i] > TT_BYTE) {
            if (!odd++) first = i;
            t->type[i] = TT_UNDEFINED; /* llama.cpp's reading of a type it does not know */
        } else {
            t->type[i] = (uint8_t)types[i];
        }
    }
    if (odd)
        tok_warn(t,
                 "%s: %s: %llu values are not token types 0..6 (first: [%llu] = %d): read as "
                 "undefined, as llama.cpp reads them",
                 gguf_path(g), key, (unsigned long long)odd, (unsigned long long)first,
                 types[first]);
    free(types);
    return 0;
}

size_t tok_utf8_valid_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (len <= 1) return len;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    /* Overlong forms, surrogates and values past U+10FFFF are not code points either. */
    if (len == 2 && c < 0xc2) return 0;
    if (len == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))) return 0;
    if (len == 4 && ((c == 0xf0 && s[1] < 0x90) || c > 0xf4 || (c == 0xf4 && s[1] >= 0x90)))
        return 0;
    return len;
}
