/* heap.h: a binary min-heap over an array of any element type, written once for the two
 * tokenizers' bigram queues (model/tokenizer/tok_spm.c, model/tokenizer/tok_bpe.c), whose element types and orders
 * differ. HEAP_DEFINE(T, BEFORE) defines, for elements of type T and BEFORE(const T *a,
 * const T *b) true when a must come out first:
 *   static void T##_heap_push(T *h, int *n, T x)   adds x (h has room for it);
 *   static T T##_heap_pop(T *h, int *n)            removes and returns the first (*n > 0).
 * A macro rather than a void* version with a comparator: the queues are on the tokenizers' hot
 * path, and the macro keeps the comparison inlined. */
#ifndef DECBENCH_UTIL_HEAP_H
#define DECBENCH_UTIL_HEAP_H

#define HEAP_DEFINE(T, BEFORE)                                                                     \
    static void T##_heap_push(T *h, int *n, T x) {                                                 \
        int i = (*n)++;                                                                            \
        while (i > 0 && BEFORE(&x, &h[(i - 1) / 2])) {                                             \
            h[i] = h[(i - 1) / 2];                                                                 \
            i = (i - 1) / 2;                                                                       \
        }                                                                                          \
        h[i] = x;                                                                                  \
    }                                                                                              \
    static T T##_heap_pop(T *h, int *n) {                                                          \
        T top = h[0], last = h[--*n];                                                              \
        int i = 0;                                                                                 \
        for (;;) {                                                                                 \
            int c = 2 * i + 1;                                                                     \
            if (c >= *n) break;                                                                    \
            if (c + 1 < *n && BEFORE(&h[c + 1], &h[c])) c++;                                       \
            if (!BEFORE(&h[c], &last)) break;                                                      \
            h[i] = h[c];                                                                           \
            i = c;                                                                                 \
        }                                                                                          \
        h[i] = last;                                                                               \
        return top;                                                                                \
    }

#endif
