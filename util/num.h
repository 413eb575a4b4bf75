/* num.h: integers a user typed (options, list items), parsed strictly.
 *
 * strtol() saturates on overflow (99999999999999999999 becomes 9223372036854775807, which a
 * message would then echo as if the user had typed it) and sscanf("%d") wraps (4294967360
 * reads as 64): both turn a typo into a different, plausible number. num_parse refuses both and
 * its message quotes what was typed, the name of the option or field, and the accepted range. */
#ifndef UTIL_NUM_H
#define UTIL_NUM_H

/* Parses all of s as a decimal integer in [min, max] (leading spaces and a sign allowed, as by
 * strtoll; nothing may follow). On failure returns -1 with one of
 *   WHAT: 'S' is not an integer
 *   WHAT: S is out of range MIN..MAX
 * (S shortened to 40 characters). */
int num_parse(const char *s, long long min, long long max, long long *out, const char *what,
              char *err);

#endif
