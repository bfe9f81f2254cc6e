// The system's SQLite 3 (Debian: libsqlite3-dev), used by SignetVault.
#include <sqlite3.h>
