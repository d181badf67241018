#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy bound bytes at once.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// SQLITE_STATIC likewise: the bound bytes stay where they are until the statement is stepped.
static inline sqlite3_destructor_type csqlite_static(void) {
    return SQLITE_STATIC;
}

// sqlite3_config is variadic, which Swift cannot call. Memory statistics (on by default) take a global
// mutex around every allocation SQLite makes; linkout never reads them (sqlite3_memory_used). Only takes
// effect before SQLite initialises, so call it before the first connection opens.
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
