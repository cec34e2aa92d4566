#include <sqlite3.h>

/// Turns off SQLite's memory statistics, which take a global mutex on every allocation of
/// every connection; nothing reads them. SQLite accepts it only before it initialises
/// (SQLITE_MISUSE after), so it is called once before the first connection opens.
static inline int anonauth_sqlite_disable_memstatus(void) {
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
