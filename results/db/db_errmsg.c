/* db_errmsg.c: the message of a connection's last error (db_internal.h), which every file that
 * runs SQL reports: SQLite's own, or what the watchdog's interrupt means. */
#include <sqlite3.h>

#include "results/db/db_internal.h"

const char *db_errmsg(sqlite3 *h) {
    /* decbench never calls sqlite3_interrupt: an interrupt is the watchdog's */
    if ((sqlite3_errcode(h) & 0xff) == SQLITE_INTERRUPT)
        return "one step of a query ran longer than the time limit and was stopped (is the "
               "database damaged, or made to hang its readers?)";
    return sqlite3_errmsg(h);
}
