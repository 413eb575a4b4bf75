/* hash.h: FNV-1a 64-bit, used for output hashes (token sequences) stored with results. */
#ifndef UTIL_HASH_H
#define UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* hash_fnv1a of a string that continues one whose hash is h: hash_fnv1a(AB) ==
 * hash_fnv1a_more(hash_fnv1a(A), B). */
static inline uint64_t hash_fnv1a_more(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static inline uint64_t hash_fnv1a(const void *data, size_t n) {
    return hash_fnv1a_more(0xcbf29ce484222325ull, data, n);
}

#endif
