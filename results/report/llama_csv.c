/* llama_csv.c: llama-bench's CSV as ms per forward pass (llama_csv.h).
 *
 * The format, as llama-bench's csv_printer writes it: a header line of bare field names, then
 * one line per test with every field in double quotes ("a","b",...), a quote inside a field
 * doubled. Parsed from a buffer so that the fuzz target (tests/fuzz_llama_csv.c) can feed it
 * anything; nothing is assumed about the bytes beyond what is checked. */
#include "results/report/llama_csv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/file.h"

#define MAX_FIELDS 128
#define MAX_FIELD 256

/* One CSV line [p, end) into fields (quoted or bare, quotes doubled inside quotes), each cut to
 * MAX_FIELD - 1 bytes. Returns the field count, -1 on an unterminated quote or too many fields. */
static int split_line(const char *p, const char *end, char (*f)[MAX_FIELD]) {
    int n = 0;
    for (;;) {
        if (n == MAX_FIELDS) return -1;
        size_t k = 0;
        if (p < end && *p == '"') {
            p++;
            for (;;) {
                if (p == end) return -1;
                if (*p == '"') {
                    if (p + 1 < end && p[1] == '"')
                        p++;
                    else
                        break;
                }
                if (k + 1 < MAX_FIELD) f[n][k++] = *p;
                p++;
            }
            p++; /* the closing quote */
        } else {
            while (p < end && *p != ',') {
                if (k + 1 < MAX_FIELD) f[n][k++] = *p;
                p++;
            }
        }
        f[n++][k] = 0;
        if (p == end) return n;
        if (*p != ',') return -1; /* text after a closing quote */
        p++;
    }
}

static int column(char (*f)[MAX_FIELD], int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(f[i], name) == 0) return i;
    return -1;
}

/* A non-negative finite number filling the whole field. */
static int number(const char *s, double *out) {
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || *e || errno || !isfinite(v) || v < 0) return -1;
    *out = v;
    return 0;
}

int llama_csv_parse(const char *text, size_t len, const char *name, llama_points *out, char *err) {
    static char f[MAX_FIELDS][MAX_FIELD]; /* 32 KB: not on the stack */
    double sum[LLAMA_CSV_MAX] = {0};
    int count[LLAMA_CSV_MAX] = {0};
    memset(out, 0, sizeof *out);
    const char *p = text, *end = text + len;
    int line = 0, c_prompt = -1, c_gen = -1, c_ns = -1, n_fields = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        line++;
        if (le > p && le[-1] == '\r') le--;
        if (le == p) { /* a blank line */
            p = next;
            continue;
        }
        int n = split_line(p, le, f);
        if (n < 0) return err_set(err, "%s: line %d: not a CSV line", name, line);
        if (c_ns < 0) { /* the header */
            c_prompt = column(f, n, "n_prompt"), c_gen = column(f, n, "n_gen");
            c_ns = column(f, n, "avg_ns");
            if (c_prompt < 0 || c_gen < 0 || c_ns < 0)
                return err_set(err,
                               "%s: line %d: no n_prompt, n_gen and avg_ns columns (not a "
                               "llama-bench -o csv file?)",
                               name, line);
            n_fields = n;
            p = next;
            continue;
        }
        if (n != n_fields)
            return err_set(err, "%s: line %d: %d fields, the header has %d", name, line, n,
                           n_fields);
        double np, ng, ns;
        if (number(f[c_prompt], &np) || number(f[c_gen], &ng) || number(f[c_ns], &ns) || np > 1e6 ||
            ng > 1e6)
            return err_set(err,
                           "%s: line %d: n_prompt '%.32s', n_gen '%.32s', avg_ns '%.32s': "
                           "expected counts and a time in ns",
                           name, line, f[c_prompt], f[c_gen], f[c_ns]);
        int rows = 0;
        double ms = 0;
        if (np > 0 && ng == 0)
            rows = (int)np, ms = ns / 1e6; /* pp: one pass of T */
        else if (np == 0 && ng > 0)
            rows = 1, ms = ns / ng / 1e6; /* tg: N passes of one */
        if (rows > 0) {
            int i = 0;
            while (i < out->n && out->rows[i] < rows) i++;
            if (i == out->n || out->rows[i] != rows) {
                if (out->n == LLAMA_CSV_MAX)
                    return err_set(err, "%s: line %d: more than %d prompt sizes", name, line,
                                   LLAMA_CSV_MAX);
                memmove(out->rows + i + 1, out->rows + i, sizeof(int) * (size_t)(out->n - i));
                memmove(sum + i + 1, sum + i, sizeof(double) * (size_t)(out->n - i));
                memmove(count + i + 1, count + i, sizeof(int) * (size_t)(out->n - i));
                out->rows[i] = rows, sum[i] = 0, count[i] = 0;
                out->n++;
            }
            sum[i] += ms, count[i]++;
        }
        p = next;
    }
    if (c_ns < 0) return err_set(err, "%s: empty (no llama-bench header)", name);
    if (out->n == 0) return err_set(err, "%s: no pp or tg test in the file", name);
    for (int i = 0; i < out->n; i++) out->ms[i] = sum[i] / count[i];
    return 0;
}

int llama_csv_read(const char *path, llama_points *out, char *err) {
    unsigned char *buf;
    size_t size;
    if (file_read_all(path, "llama-bench CSV", (uint64_t)16 << 20, &buf, &size, err)) return -1;
    int rc = llama_csv_parse((const char *)buf, size, path, out, err);
    free(buf);
    return rc;
}
