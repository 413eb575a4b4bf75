/* fuzz_memfd.h: a fuzz input as a file, for the fuzz targets whose readers open paths. A header,
 * not a fuzz_*.c file: tests/CMakeLists.txt makes every fuzz_*.c a target of its own. */
#ifndef DECBENCH_TESTS_FUZZ_MEMFD_H
#define DECBENCH_TESTS_FUZZ_MEMFD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes the input to a new memfd and its path (/proc/self/fd/N, opened exactly as a file on
 * disk would be) to path[n]. Returns the fd, to close after use, or -1 when the memfd cannot
 * be made or written in full (the input is then skipped). */
static inline int fuzz_memfd(const char *name, const uint8_t *data, size_t size, char *path,
                             size_t n) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    for (size_t done = 0; done < size;) {
        ssize_t k = write(fd, data + done, size - done);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)k;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
