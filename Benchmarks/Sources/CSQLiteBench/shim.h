// The system's SQLite 3 (Debian: libsqlite3-dev), for signet-bench's plain-SQLite baseline.
#include <sqlite3.h>
