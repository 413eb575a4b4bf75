/* huge.h: large buffers in 2 MB pages where the kernel gives them (transparent huge pages in
 * "madvise" mode, Debian's default): one fault per 2 MB instead of 512 while a buffer is first
 * written, and fewer TLB misses while it is read. On a VM whose page tables the host shadows a
 * 4 KB fault costs about 10 us (the Zen 5 VM), which made the first write of a large table
 * slower than everything done with it after. Used for the weights' packed copies
 * (model/forward.c), the read probe's buffer (harness/measure.c) and the byte-level BPE
 * vocabulary's tables (model/tokenizer/tok_bpe.c). */
#ifndef UTIL_HUGE_H
#define UTIL_HUGE_H

#include <stddef.h>

/* bytes of memory (uninitialised; free() it), 2 MB aligned and advised into huge pages when
 * bytes is 2 MB or more (the allocation is then rounded up to 2 MB), else plain malloc; NULL
 * when out of memory. */
void *huge_alloc(size_t bytes);

#endif
