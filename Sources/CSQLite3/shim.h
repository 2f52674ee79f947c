#ifndef BQ_CSQLITE3_SHIM_H
#define BQ_CSQLITE3_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy
// bound bytes before the bind call returns, so Swift buffers may die right after.
static inline sqlite3_destructor_type bq_sqlite_transient(void) { return SQLITE_TRANSIENT; }
#endif
