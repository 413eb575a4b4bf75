/* state_file.h: the frame the decoders' state files share (ouroboros_pool.c's phrase pools,
 * suffix_tree.c's suffix trees, recycle.c's adjacency matrices): an 8-byte magic, u32 version 1 at byte 8, u32 vocabulary at
 * byte 12, the kind's own fields, then the FNV-1a hash of every byte before it (8 bytes). All
 * integers little-endian. Saving goes through file.h's PATH.tmp and rename, so a failed save
 * leaves an older file intact and nothing half-written. */
#ifndef DECBENCH_DECODERS_STATE_FILE_H
#define DECBENCH_DECODERS_STATE_FILE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"

static inline unsigned char *sf_put_u32(unsigned char *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
    return b + 4;
}

static inline uint32_t sf_get_u32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The magic, version 1 and the vocabulary: the first 16 bytes of buf. Returns buf + 16. */
static inline unsigned char *sf_put_head(unsigned char *buf, const char magic[8], int vocab) {
    memcpy(buf, magic, 8);
    return sf_put_u32(sf_put_u32(buf + 8, 1), (uint32_t)vocab);
}

/* Checks the frame of a file of `size` bytes whose header (magic to the kind's last field) has
 * header_bytes: its size, the magic, version 1 and the vocabulary. `what` names the kind in the
 * errors ("suffix tree"). */
static inline int sf_check_head(const unsigned char *buf, size_t size, const char magic[8],
                                size_t header_bytes, int vocab, const char *what,
                                const char *path, char *err) {
    if (size < header_bytes + 8)
        return err_set(err, "%s: truncated: %zu bytes, fewer than the %zu of an empty %s file",
                       path, size, header_bytes + 8, what);
    if (memcmp(buf, magic, 8) != 0)
        return err_set(err, "%s: byte 0: not a decbench %s file (magic %.8s)", path, what, magic);
    uint32_t version = sf_get_u32(buf + 8), fvocab = sf_get_u32(buf + 12);
    if (version != 1) return err_set(err, "%s: byte 8: version %u, expected 1", path, version);
    if (fvocab != (uint32_t)vocab)
        return err_set(err, "%s: byte 12: a vocabulary of %u tokens, the model has %d", path,
                       fvocab, vocab);
    return 0;
}

/* After the kind's records, read up to `at`: nothing may be left before the checksum (the last
 * 8 bytes, at `end`), and the checksum must hold. */
static inline int sf_check_end(const unsigned char *buf, size_t at, size_t end, const char *path,
                               char *err) {
    if (at != end)
        return err_set(err, "%s: byte %zu: %zu unexpected bytes before the checksum", path, at,
                       end - at);
    uint64_t want = hash_fnv1a(buf, end);
    uint64_t got = sf_get_u32(buf + end) | (uint64_t)sf_get_u32(buf + end + 4) << 32;
    if (want != got)
        return err_set(err, "%s: byte %zu: checksum mismatch (the file is corrupted)", path, end);
    return 0;
}

/* The largest state file read: a real Ouroboros pool (32000 keys x 64 phrases x 8 tokens) is
 * 65 MB; a bigger file is refused with its size rather than read into memory. */
#define SF_MAX_BYTES (4ull << 30)

/* Reads the whole state file at path into *buf (malloc'd, *size bytes); a directory, FIFO or
 * device is refused before a byte is read (util/file.h). `what` names the kind in errors. */
static inline int sf_read(const char *path, const char *what, unsigned char **buf, size_t *size,
                          char *err) {
    return file_read_all(path, what, SF_MAX_BYTES, buf, size, err);
}

/* Seals buf (its last 8 bytes are the checksum's) and writes it to path through PATH.tmp. */
static inline int sf_write(unsigned char *buf, size_t size, const char *what, const char *path,
                           char *err) {
    uint64_t h = hash_fnv1a(buf, size - 8);
    sf_put_u32(sf_put_u32(buf + size - 8, (uint32_t)h), (uint32_t)(h >> 32));
    file_out o;
    if (file_out_open(&o, path, what, err)) return -1;
    if (fwrite(buf, 1, size, o.f) != size) {
        int e = errno;
        file_out_abort(&o);
        return err_set(err, "%s: cannot write the %s: %s", path, what, strerror(e));
    }
    return file_out_commit(&o, err);
}

#endif
