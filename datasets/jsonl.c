/* jsonl.c: reading record files with jansson, keeping line numbers for error messages.
 * Files are small (< 1 MB), so each is read whole and parsed line by line in place.
 *
 * Byte order marks: a UTF-8 BOM (EF BB BF) at the start of a file is skipped. Windows editors
 * and PowerShell write one, it carries no content, and RFC 8259 section 8.1 lets a parser
 * ignore it; refusing it would make a user hunt for an invisible character. A UTF-8 BOM at the
 * start of a later line (files joined with `cat`) and a UTF-16 BOM (the file is UTF-16, which
 * PowerShell's `>` writes) are refused with a message saying so: jansson alone reports "invalid
 * token" at column 1 of what looks like a valid line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/ds_internal.h"
#include "util/err.h"
#include "util/file.h"

void ds_where(char *buf, size_t n, const char *path, int line, int index) {
    if (line > 0)
        snprintf(buf, n, "%s:%d", path, line);
    else
        snprintf(buf, n, "%s: record %d", path, index);
}

#define UTF8_BOM "\xef\xbb\xbf"

/* Reads the whole file; a UTF-8 BOM at its start is dropped (*data still owns the block: free
 * *block), a UTF-16 one refused. */
static int read_all(const char *path, char **block, const char **data, size_t *len, char *err) {
    int fd = file_open_regular(path, "dataset", err); /* never blocks on a FIFO */
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (fd < 0) return -1;
    if (!f) {
        close(fd);
        return err_set(err, "%s: cannot open: %s", path, strerror(errno));
    }
    ds_buf b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (ds_buf_add(&b, chunk, got)) {
            fclose(f);
            ds_buf_free(&b);
            return err_set(err, "%s: out of memory reading the file", path);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        ds_buf_free(&b);
        return err_set(err, "%s: read error", path);
    }
    if (!b.p && ds_buf_add(&b, "", 0)) return err_set(err, "%s: out of memory", path);
    const unsigned char *u = (const unsigned char *)b.p;
    if (b.len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff))) {
        int le = u[0] == 0xff;
        ds_buf_free(&b);
        return err_set(err,
                       "%s: starts with a UTF-16 byte order mark (%s): the file is UTF-16, "
                       "expected UTF-8 (convert it: iconv -f UTF-16 -t UTF-8)",
                       path, le ? "FF FE" : "FE FF");
    }
    size_t skip = b.len >= 3 && memcmp(b.p, UTF8_BOM, 3) == 0 ? 3 : 0;
    *block = b.p;
    *data = b.p + skip;
    *len = b.len - skip;
    return 0;
}

const char *ds_json_type_name(const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int only_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

int ds_read_jsonl(const char *path, ds_record_fn fn, void *ctx, char *err) {
    char *block;
    const char *data;
    size_t len;
    if (read_all(path, &block, &data, &len, err)) return -1;
    int line = 0, index = 0, rc = 0;
    size_t pos = 0;
    while (pos < len) {
        line++;
        const char *start = data + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (only_space(start, n)) continue;
        if (n >= 3 && memcmp(start, UTF8_BOM, 3) == 0) {
            rc = err_set(err,
                         "%s:%d: a UTF-8 byte order mark (EF BB BF) starts this line: files "
                         "joined with their marks? (one is allowed at the start of the file)",
                         path, line);
            break;
        }
        json_error_t je;
        json_t *rec = json_loadb(start, n, JSON_DECODE_ANY, &je);
        if (!rec) {
            rc = err_set(err, "%s:%d: invalid JSON at column %d: %s", path, line, je.column,
                         je.text);
            break;
        }
        if (!json_is_object(rec)) {
            rc = err_set(err, "%s:%d: expected a JSON object, found %s", path, line,
                         ds_json_type_name(rec));
            json_decref(rec);
            break;
        }
        rc = fn(ctx, rec, line, index++, err);
        json_decref(rec);
        if (rc) break;
    }
    free(block);
    if (!rc && index == 0) rc = err_set(err, "%s: empty file (no JSON records)", path);
    return rc;
}

int ds_read_json_array(const char *path, ds_record_fn fn, void *ctx, char *err) {
    char *block;
    const char *data;
    size_t len;
    if (read_all(path, &block, &data, &len, err)) return -1;
    size_t k = 0;
    while (k < len && (data[k] == ' ' || data[k] == '\t' || data[k] == '\r' || data[k] == '\n'))
        k++;
    if (k == len) {
        free(block);
        return err_set(err, "%s: empty file (expected a JSON array of records)", path);
    }
    json_error_t je;
    json_t *root = json_loadb(data, len, JSON_DECODE_ANY, &je);
    free(block);
    if (!root)
        return err_set(err, "%s:%d: invalid JSON at column %d: %s", path, je.line, je.column,
                       je.text);
    int rc = 0;
    if (!json_is_array(root)) {
        rc = err_set(err, "%s: expected a JSON array of records, found %s", path,
                     ds_json_type_name(root));
    } else if (json_array_size(root) == 0) {
        rc = err_set(err, "%s: empty array (no records)", path);
    } else {
        for (size_t i = 0; i < json_array_size(root) && !rc; i++) {
            json_t *rec = json_array_get(root, i);
            if (!json_is_object(rec))
                rc = err_set(err, "%s: record %zu: expected a JSON object, found %s", path, i,
                             ds_json_type_name(rec));
            else
                rc = fn(ctx, rec, 0, (int)i, err);
        }
    }
    json_decref(root);
    return rc;
}
