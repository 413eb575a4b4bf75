/* huge.c: buffers in 2 MB pages (see huge.h). */
#include "util/huge.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *huge_alloc(size_t bytes) {
    if (bytes < HUGE_PAGE) return malloc(bytes ? bytes : 1);
    const size_t total = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, total);
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, total, MADV_HUGEPAGE); /* a refusal leaves 4 KB pages: the same memory */
#endif
    return p;
}
