/* ktrt_dbfile.h: opening a .ktdb read-only and refusing a file that is not a usable ktune database
 * of this schema, with a message naming the file. Shared by libktrt's loader (ktrt_db.c) and the
 * read-only queries of `kt explain` / `kt dump` (db/db_read.c), so both refuse the same files with
 * the same words. Nothing here writes: no migration, no journal-mode change. */
#ifndef KTRT_DBFILE_H
#define KTRT_DBFILE_H
#include <stddef.h>
#include <sqlite3.h>

/* The schema versions libktrt reads: db/db.h's KT_DB_SCHEMA_VERSION (libktrt cannot include db/)
 * and, back to MIN, the versions before it whose tables hold every column it reads (version 2
 * spelt a GEMM's dimensions in columns too; libktrt reads them from the key in both). */
#define KTRT_DB_SCHEMA_VERSION 3
#define KTRT_DB_SCHEMA_MIN_VERSION 2

/* Opens path read-only. Checks, in order: the file exists and is a regular file (else KT_ENODB);
 * it is a SQLite file (magic), no shorter than its header says (truncated), its user_version is
 * between KTRT_DB_SCHEMA_MIN_VERSION and KTRT_DB_SCHEMA_VERSION (0: not a ktune database; older:
 * migrate with kt; newer: use a newer libktrt), PRAGMA quick_check says ok, and the tables libktrt reads exist. Each failure is
 * KT_EBADDB with "<path>: <what>" in err, and *out is NULL.
 *
 * A WAL database is opened as it is (a concurrent writer's committed rows are visible). Where the
 * WAL index cannot be created (a read-only folder without the -shm file) and there is no WAL
 * content to miss, the file is reopened as immutable. */
int ktrt_dbfile_open(const char *path, sqlite3 **out, char *err, size_t errlen);

#endif
