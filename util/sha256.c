/* sha256.c: see sha256.h. */
#include "util/sha256.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/file.h"

static void to_hex(const unsigned char d[SHA256_DIGEST_SIZE], char hex[65]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[64] = '\0';
}

void sha256_hex(const void *data, unsigned long n, char hex[65]) {
    struct sha256_ctx c;
    unsigned char d[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, n, data);
    sha256_digest(&c, sizeof d, d);
    to_hex(d, hex);
}

int sha256_file(const char *path, char hex[65], char *err) {
    int fd = file_open_regular(path, "file", err);
    if (fd < 0) return -1;
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf) {
        close(fd);
        return err_set(err, "%s: out of memory", path);
    }
    struct sha256_ctx c;
    sha256_init(&c);
    ssize_t got;
    while ((got = read(fd, buf, CHUNK)) != 0) {
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            int e = errno;
            free(buf);
            close(fd);
            return err_set(err, "%s: read error: %s", path, strerror(e));
        }
        sha256_update(&c, (size_t)got, buf);
    }
    free(buf);
    close(fd);
    unsigned char d[SHA256_DIGEST_SIZE];
    sha256_digest(&c, sizeof d, d);
    to_hex(d, hex);
    return 0;
}
