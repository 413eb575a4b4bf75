/* err.h: how every library function reports failure.
 *
 * Convention (after SQLite): a function that can fail returns int (0 = success, -1 = failure)
 * and, on failure, writes ONE line into the caller's buffer `err` (at least ERR_LEN bytes):
 * where (file, line, field) and what was expected versus found. Library code never prints and
 * never exits; only harness/ (the CLI) prints the message and picks the exit code. */
#ifndef UTIL_ERR_H
#define UTIL_ERR_H

#include <stddef.h>

#define ERR_LEN 512

/* Formats the message into err (if err is not NULL) and returns -1, so that a failing path
 * can read `return err_set(err, "%s: truncated", path);`. */
int err_set(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
