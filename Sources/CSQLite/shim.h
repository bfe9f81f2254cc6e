// The system's SQLite 3 (Debian: libsqlite3-dev): the one SQLite in the binary, used by
// SignetVault's SQLiteConnection for the vault and, through it, the server's SQLite driver.
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: these wrap the settings we use.
static inline int signet_sqlite3_set_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

// Double-quoted strings are identifiers only, in DML and in DDL (as SQLITE_DQS=0 builds do):
// a misspelt column name is an error, never a string literal.
static inline int signet_sqlite3_disable_dqs_dml(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
}

static inline int signet_sqlite3_disable_dqs_ddl(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
