/* sha256.h: SHA-256 of a whole file, as the 64 hex digits `sha256sum` prints, so a model's
 * fingerprint can be checked against the checksum its publisher lists (Hugging Face shows the
 * SHA-256 of every LFS file).
 *
 * Library: nettle (Debian nettle-dev), already the project's SHA-256 for tests/test_wtype.c.
 * Measured here: 0.62 GB/s (OpenSSL's SHA-NI path reaches 1.8 GB/s, but would be a second
 * crypto dependency); a 13 GB f16 7B model takes ~20 s, which is why results/ caches the
 * digest per file (results/db/db_files.c) instead of hashing at every run. */
#ifndef UTIL_SHA256_H
#define UTIL_SHA256_H

/* Reads all of path (a regular file: util/file.h) and writes its digest as 64 lower-case hex
 * digits plus NUL into hex. Returns 0, or -1 with "PATH: ..." in err. */
int sha256_file(const char *path, char hex[65], char *err);

/* The digest of n bytes in memory (tests). */
void sha256_hex(const void *data, unsigned long n, char hex[65]);

#endif
