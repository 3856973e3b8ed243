#ifndef FETCHCAST_CSQLITE_SHIM_H
#define FETCHCAST_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type fetchcast_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type fetchcast_sqlite_static(void) { return SQLITE_STATIC; }
#endif
