/* text_escape.c: the escaping of text from a database per output format (text_escape.h says
 * the rules and why). */
#include "util/text_escape.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* A growing string; oom set on allocation failure (the functions then return NULL). */
typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t len) {
    if (b->oom) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + len + 1) cap *= 2;
        char *g = realloc(b->p, cap);
        if (!g) {
            b->oom = 1;
            return;
        }
        b->p = g, b->cap = cap;
    }
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void puts_(sbuf *b, const char *s) {
    put(b, s, strlen(s));
}

static char *done(sbuf *b) {
    if (!b->oom && !b->p) puts_(b, "");
    if (b->oom) {
        free(b->p);
        return NULL;
    }
    return b->p;
}

/* The length of the valid UTF-8 sequence at p (1..4; RFC 3629: no overlong forms, surrogates
 * or code points above U+10FFFF), or 0 when the byte at p starts none. *cp gets its code
 * point. */
static int utf8_seq(const unsigned char *p, unsigned *cp) {
    unsigned c = p[0];
    if (c < 0x80) return *cp = c, 1;
    int len = c >= 0xC2 && c <= 0xDF   ? 2
              : c >= 0xE0 && c <= 0xEF ? 3
              : c >= 0xF0 && c <= 0xF4 ? 4
                                       : 0;
    if (!len) return 0;
    unsigned lo = 0x80, hi = 0xBF; /* the second byte's range, narrower after E0 ED F0 F4 */
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    unsigned v = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (int i = 1; i < len; i++) v = v << 6 | (p[i] & 0x3F);
    *cp = v;
    return len;
}

/* Appends s by the visible-text rule; `special` (may be NULL) escapes one more character of
 * the format: returns 1 when it wrote c itself. `at` is the position of c in s. */
typedef int (*special_fn)(sbuf *b, unsigned char c, size_t at);

static void visible(sbuf *b, const char *s, special_fn special) {
    const unsigned char *p = (const unsigned char *)s;
    char esc[16];
    while (*p) {
        unsigned cp;
        int len = utf8_seq(p, &cp);
        if (len == 0) { /* not UTF-8 */
            snprintf(esc, sizeof esc, "\\x%02X", *p);
            puts_(b, esc);
            p++;
            continue;
        }
        if (cp == '\t' || cp == '\n' || cp == '\r') {
            puts_(b, cp == '\t' ? "\\t" : cp == '\n' ? "\\n" : "\\r");
        } else if (cp < 0x20 || cp == 0x7F) {
            snprintf(esc, sizeof esc, "\\x%02X", cp);
            puts_(b, esc);
        } else if (cp >= 0x80 && cp <= 0x9F) {
            snprintf(esc, sizeof esc, "\\u%04x", cp);
            puts_(b, esc);
        } else if (len > 1 || !special || !special(b, *p, (size_t)(p - (const unsigned char *)s))) {
            put(b, (const char *)p, (size_t)len);
        }
        p += len;
    }
}

char *txt_plain(const char *s) {
    sbuf b = {0};
    visible(&b, s ? s : "", NULL);
    return done(&b);
}

static int md_special(sbuf *b, unsigned char c, size_t at) {
    (void)at;
    if (c != '|') return 0;
    puts_(b, "\\|");
    return 1;
}

char *txt_md(const char *s) {
    sbuf b = {0};
    visible(&b, s ? s : "", md_special);
    return done(&b);
}

char *txt_csv(const char *s) {
    sbuf v = {0};
    visible(&v, s ? s : "", NULL);
    char *t = done(&v);
    if (!t || !strpbrk(t, ",\"")) return t;
    sbuf b = {0};
    puts_(&b, "\"");
    for (const char *p = t; *p; p++) put(&b, *p == '"' ? "\"\"" : p, *p == '"' ? 2 : 1);
    puts_(&b, "\"");
    free(t);
    return done(&b);
}

static int tsv_special(sbuf *b, unsigned char c, size_t at) {
    if (c == '"') return puts_(b, "\\x22"), 1;
    if (c == '#' && at == 0) return puts_(b, "\\x23"), 1;
    return 0;
}

char *txt_tsv(const char *s) {
    sbuf b = {0};
    visible(&b, s ? s : "", tsv_special);
    return done(&b);
}

char *txt_tex(const char *s) {
    sbuf v = {0};
    visible(&v, s ? s : "", NULL);
    char *t = done(&v);
    if (!t) return NULL;
    sbuf b = {0};
    static const char pm[] = "\xC2\xB1"; /* ± */
    for (const char *p = t; *p; p++) {
        if (!strncmp(p, pm, 2)) {
            puts_(&b, "$\\pm$");
            p++;
        } else if (strchr("&%$#_{}", *p)) {
            char e[3] = {'\\', *p, 0};
            puts_(&b, e);
        } else if (*p == '~') {
            puts_(&b, "\\textasciitilde{}");
        } else if (*p == '^') {
            puts_(&b, "\\textasciicircum{}");
        } else if (*p == '\\') {
            puts_(&b, "\\textbackslash{}");
        } else {
            put(&b, p, 1);
        }
    }
    free(t);
    return done(&b);
}

char *txt_utf8(const char *s) {
    sbuf b = {0};
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned cp;
        int len = utf8_seq(p, &cp);
        if (len) {
            put(&b, (const char *)p, (size_t)len);
            p += len;
        } else { /* byte 0x80..0xFF as U+0080..U+00FF: two bytes of UTF-8 */
            char two[2] = {(char)(0xC0 | *p >> 6), (char)(0x80 | (*p & 0x3F))};
            put(&b, two, 2);
            p++;
        }
    }
    return done(&b);
}

json_t *txt_json(const char *s) {
    if (!s) return json_null();
    char *u = txt_utf8(s);
    json_t *j = u ? json_string(u) : NULL;
    free(u);
    return j;
}

int txt_put(FILE *out, char *(*fn)(const char *), const char *s) {
    char *t = fn(s);
    if (!t) return -1;
    fputs(t, out);
    free(t);
    return 0;
}

const char *txt_plain_buf(char *out, size_t n, const char *s) {
    if (!n) return out;
    out[0] = '\0';
    char *t = txt_plain(s);
    if (!t) return out;
    size_t len = strlen(t);
    if (len >= n) { /* cut before a UTF-8 sequence or an escape that would not fit whole */
        len = n - 1;
        while (len > 0 && ((unsigned char)t[len] & 0xC0) == 0x80) len--;
        for (size_t k = len; k > 0 && k + 6 > len; k--)
            if (t[k - 1] == '\\') {
                len = k - 1;
                break;
            }
    }
    memcpy(out, t, len);
    out[len] = '\0';
    free(t);
    return out;
}
