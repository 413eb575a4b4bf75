/* sampling_opts.h: the sampling options `generate`, `run` and `sweep` share (--temperature,
 * --top-k, --top-p, --seed, --sampling), parsed into the decoders' dec_sampling (decoder.h). */
#ifndef HARNESS_SAMPLING_OPTS_H
#define HARNESS_SAMPLING_OPTS_H

#include <stddef.h>

#include "decoders/decoder.h"
#include "harness/args.h"

#define SAMPLING_N_OPTS 5

/* Copies the option table entries into o[0..SAMPLING_N_OPTS). */
void sampling_options(args_opt *o);

/* Reads the options (after args_parse); without --temperature (or with 0) sampling is off and
 * the other options must not be given (a --top-k without a temperature would silently do
 * nothing). Messages name the option and quote the value. */
int sampling_opts_get(const args_opt *o, int n, dec_sampling *s, char *err);

/* "greedy" or e.g. "coupled sampling: temperature 0.8, top-k 40, top-p 0.95, seed 1", for
 * progress lines. */
void sampling_describe(const dec_sampling *s, char *buf, size_t n);

/* The --help paragraph: what each mode guarantees. */
extern const char sampling_help[];

#endif
