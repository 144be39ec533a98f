/* db_internal.h: shared by the files of db/ only (db.c owns the handle). */
#ifndef KT_DB_INTERNAL_H
#define KT_DB_INTERNAL_H
#include <stddef.h>
#include <sqlite3.h>
#include "db.h"

sqlite3 *db_handle(kt_db *db);
const char *db_path(kt_db *db);
/* "<path>: <what>: <sqlite message>" into err; returns 1. */
int db_error(kt_db *db, char *err, size_t errlen, const char *what);

#endif
