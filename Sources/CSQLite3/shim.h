#ifndef BQ_CSQLITE3_SHIM_H
#define BQ_CSQLITE3_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy
// bound bytes before the bind call returns, so Swift buffers may die right after.
static inline sqlite3_destructor_type bq_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// Extended result codes are macros over an expression, which Swift does not import.
static inline int bq_sqlite_ioerr_write(void) { return SQLITE_IOERR_WRITE; }
static inline int bq_sqlite_ioerr_fsync(void) { return SQLITE_IOERR_FSYNC; }
// sqlite3_db_config is variadic, which Swift cannot call. With `on` 0, closing the last
// connection leaves the WAL as it is instead of copying it into the main file and deleting it.
static inline int bq_sqlite_checkpoint_on_close(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on ? 0 : 1, (int *)0);
}
#endif
