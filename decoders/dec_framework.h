/* dec_framework.h: what the framework's own files share (registry.c, dec_spec.c,
 * dec_sampling.c, dec_framework.c); not for decoder implementations (dec_impl.h) nor the
 * harness (decoder.h). */
#ifndef DECODERS_DEC_FRAMEWORK_H
#define DECODERS_DEC_FRAMEWORK_H

#include <stddef.h>

#include "decoders/dec_impl.h"

/* The decoder named name[0..len), or NULL; decoder i of the table, or NULL. */
const dec_vtable *dec_registry_find(const char *name, size_t len);
const dec_vtable *dec_registry_vtable(int i);
/* The decoder a spec names (its text up to ':'); NULL with an error listing the valid ones. */
const dec_vtable *dec_vtable_of_spec(const char *spec, char *err);

/* "greedy, jacobi, ..." and one decoder's parameters with their ranges and defaults. */
void dec_list_names(char *buf, size_t n);
void dec_list_params(const dec_vtable *vt, char *buf, size_t n);

/* Parses the parameter text s (after "name:") of d->vt's decoder into d->param, d->rparam and
 * d->list, defaults first, and writes the canonical spec into d->spec. */
int dec_params_parse(dec *d, const char *s, char *err);

/* The sampling memory (d->sp, sq, sr, sw) when d samples; nothing at temperature 0. */
int dec_sampling_alloc(dec *d, char *err);

#endif
