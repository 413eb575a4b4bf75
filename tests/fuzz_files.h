/* fuzz_files.h: files for the fuzz targets, whose readers open paths: an input as a memfd, and a
 * per-process scratch file for what a target writes. A header, not a fuzz_*.c file:
 * tests/CMakeLists.txt makes every fuzz_*.c a target of its own. */
#ifndef DECBENCH_TESTS_FUZZ_FILES_H
#define DECBENCH_TESTS_FUZZ_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Replaces the content of memfd fd by data[0..size); 0, or -1 when it cannot be written in full
 * (the input is then skipped). */
static inline int fuzz_memfd_fill(int fd, const uint8_t *data, size_t size) {
    if (ftruncate(fd, 0) != 0) return -1;
    for (size_t done = 0; done < size;) {
        ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
        if (k <= 0) return -1;
        done += (size_t)k;
    }
    return 0;
}

/* Writes the input to a new memfd and its path (/proc/self/fd/N, opened exactly as a file on
 * disk would be) to path[n]. Returns the fd, to close after use, or -1 when the memfd cannot
 * be made or written in full (the input is then skipped). */
static inline int fuzz_memfd(const char *name, const uint8_t *data, size_t size, char *path,
                             size_t n) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (fuzz_memfd_fill(fd, data, size)) {
        close(fd);
        return -1;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

/* A per-process scratch file "<tmpfs or /tmp>/<stem>_<pid><ext>" for what a target writes
 * (path[n]); the same path on every call. */
static inline const char *fuzz_scratch_path(const char *stem, const char *ext, char *path,
                                            size_t n) {
    if (!path[0])
        snprintf(path, n, "%s/%s_%d%s", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", stem,
                 (int)getpid(), ext);
    return path;
}

/* Whether files a and b hold the same bytes (both readable). */
static inline int fuzz_same_files(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb, x = 0, y = 0;
    while (same && x != EOF) {
        x = fgetc(fa), y = fgetc(fb);
        same = x == y;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

#endif
