/* render.c: building prompt text: a growable buffer, {field} substitution into the template
 * strings of templates.c, and Python's repr() for MBPP's test_list (Ouroboros formats the
 * list with an f-string, i.e. str(list) = "[" + ", ".join(repr(x)) + "]"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/ds_internal.h"
#include "util/err.h"

int ds_buf_add(ds_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int ds_buf_adds(ds_buf *b, const char *s) {
    return ds_buf_add(b, s, strlen(s));
}

void ds_buf_free(ds_buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static int is_ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int ds_render(const char *tpl, const ds_def *d, const ds_fields *f, const char *shots, ds_buf *out,
              char *err) {
    const char *p = tpl;
    while (*p) {
        const char *open = strchr(p, '{');
        if (!open) return ds_buf_adds(out, p) ? err_set(err, "out of memory rendering") : 0;
        const char *q = open + 1;
        while (is_ident(*q)) q++;
        if (*q != '}' || q == open + 1) { /* not a placeholder: a literal '{' */
            if (ds_buf_add(out, p, (size_t)(open + 1 - p))) return err_set(err, "out of memory");
            p = open + 1;
            continue;
        }
        if (ds_buf_add(out, p, (size_t)(open - p))) return err_set(err, "out of memory");
        size_t len = (size_t)(q - open - 1);
        const char *val = NULL;
        int known = 0;
        if (len == 5 && !memcmp(open + 1, "shots", 5)) {
            known = 1;
            val = shots;
        } else if (len == 3 && !memcmp(open + 1, "raw", 3)) {
            known = 1;
            val = f->val[0];
        } else {
            for (int i = 0; i < DS_MAX_FIELDS && d->fields[i].name; i++) {
                if (strlen(d->fields[i].name) == len && !memcmp(open + 1, d->fields[i].name, len)) {
                    known = 1;
                    val = f->val[i];
                    break;
                }
            }
        }
        if (!known || !val)
            return err_set(err, "dataset %s: template placeholder {%.*s} has no value", d->name,
                           (int)len, open + 1);
        if (ds_buf_adds(out, val)) return err_set(err, "out of memory rendering");
        p = q + 1;
    }
    return 0;
}

/* Decodes one UTF-8 sequence at s (jansson has validated the text). Returns its length. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80 || n < 2) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xE0) == 0xC0) {
        *cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
        return 2;
    }
    if ((s[0] & 0xF0) == 0xE0 && n >= 3) {
        *cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
        return 3;
    }
    if (n >= 4) {
        *cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
              ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
        return 4;
    }
    *cp = s[0];
    return 1;
}

/* CPython escapes non-ASCII characters that are not printable: categories Cc, Cf, Cs, Co, Cn,
 * Zl, Zp and Zs other than the space. This covers Cc, Zs, Zl, Zp, Co and the common Cf code
 * points; unassigned code points (Cn) would need the Unicode tables and are kept verbatim.
 * Every character in the MBPP files is printable (checked), so this never matters there. */
static int py_nonprintable(uint32_t c) {
    if (c >= 0x80 && c <= 0xA0) return 1; /* C1 controls, no-break space */
    if (c == 0xAD || (c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F ||
        c == 0x8E2 || c == 0x180E || c == 0x1680)
        return 1;
    if ((c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
        (c >= 0x205F && c <= 0x2064) || (c >= 0x2066 && c <= 0x206F) || c == 0x3000)
        return 1;
    if ((c >= 0xD800 && c <= 0xF8FF) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB)) return 1;
    if (c >= 0xF0000 || (c >= 0xE0000 && c <= 0xE007F)) return 1;
    return 0;
}

int ds_py_repr(const char *s, size_t n, ds_buf *out) {
    int has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
    char quote = (has_sq && !has_dq) ? '"' : '\'';
    char esc[16];
    if (ds_buf_add(out, &quote, 1)) return -1;
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t c;
        size_t k = utf8_next(u + i, n - i, &c);
        const char *piece = NULL;
        size_t plen = 0;
        if (c == (uint32_t)quote || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            piece = esc;
            plen = 2;
        } else if (c == '\t' || c == '\n' || c == '\r') {
            esc[0] = '\\';
            esc[1] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
            piece = esc;
            plen = 2;
        } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && py_nonprintable(c))) {
            if (c <= 0xFF)
                plen = (size_t)snprintf(esc, sizeof esc, "\\x%02x", (unsigned)c);
            else if (c <= 0xFFFF)
                plen = (size_t)snprintf(esc, sizeof esc, "\\u%04x", (unsigned)c);
            else
                plen = (size_t)snprintf(esc, sizeof esc, "\\U%08x", (unsigned)c);
            piece = esc;
        } else {
            piece = s + i;
            plen = k;
        }
        if (ds_buf_add(out, piece, plen)) return -1;
        i += k;
    }
    return ds_buf_add(out, &quote, 1);
}
