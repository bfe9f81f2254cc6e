// The system's SQLite 3 (Debian: libsqlite3-dev), used by SignetVault.
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: these wrap the settings we use.
static inline int signet_sqlite3_set_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}
