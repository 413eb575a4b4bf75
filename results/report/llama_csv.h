/* llama_csv.h: llama.cpp's llama-bench results (`llama-bench -o csv`) as ms per forward pass,
 * to draw beside decbench's cost curve (`decbench plot --kind cost --llama-csv FILE`).
 *
 * A prompt test (pp: n_prompt = T > 0, n_gen = 0) is one pass of T rows: avg_ns / 1e6 ms. A
 * generation test (tg: n_prompt = 0, n_gen = N) is N passes of one row: avg_ns / N / 1e6 ms at
 * T = 1. Combined tests (pg: both set) are skipped. Rows of the same T are averaged. */
#ifndef RESULTS_LLAMA_CSV_H
#define RESULTS_LLAMA_CSV_H

#include <stddef.h>

#define LLAMA_CSV_MAX 64 /* distinct T values kept */

typedef struct {
    int n;
    int rows[LLAMA_CSV_MAX];  /* T, increasing */
    double ms[LLAMA_CSV_MAX]; /* ms per pass */
} llama_points;

/* Parses the text of a llama-bench CSV (len bytes, need not end in NUL; `name` labels messages).
 * Needs the header's n_prompt, n_gen and avg_ns columns; a data row with another number of
 * fields, or a value that is not a number, is an error naming its line. At least one pp or tg
 * row is required. */
int llama_csv_parse(const char *text, size_t len, const char *name, llama_points *out, char *err);

/* Reads and parses the file at path. */
int llama_csv_read(const char *path, llama_points *out, char *err);

#endif
