/* num.c: see num.h. */
#include "util/num.h"

#include <errno.h>
#include <stdlib.h>

#include "util/err.h"

int num_parse(const char *s, long long min, long long max, long long *out, const char *what,
              char *err) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end)
        return err_set(err, "%s: '%.40s%s' is not an integer", what, s, end - s > 40 ? "..." : "");
    if (errno == ERANGE || v < min || v > max)
        return err_set(err, "%s: %.40s%s is out of range %lld..%lld", what, s,
                       (end - s) > 40 ? "..." : "", min, max);
    *out = v;
    return 0;
}
