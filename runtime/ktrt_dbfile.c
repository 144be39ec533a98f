/* ktrt_dbfile.c: read-only open of a .ktdb with the refusals of ktrt_dbfile.h. The header checks
 * run before SQLite sees the file so that a truncated copy (a half-finished download or scp) is
 * named as truncated rather than as "malformed". */
#include "ktrt_dbfile.h"
#include "ktrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DBFILE_HEADER 100

static int dbfile_fail(char *err, size_t errlen, int code, const char *path, const char *what, const char *detail)
{
    if (err && errlen)
        snprintf(err, errlen, "%s: %s%s%s", path, what, detail && detail[0] ? ": " : "", detail ? detail : "");
    return code;
}

static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}

/* Size of path's -wal file; 0 when there is none. */
static long long wal_bytes(const char *path)
{
    char wal[4096];
    struct stat st;
    if (snprintf(wal, sizeof wal, "%s-wal", path) >= (int)sizeof wal) return 0;
    return stat(wal, &st) == 0 ? (long long)st.st_size : 0;
}

/* The file as SQLite's header describes it: magic, and no shorter than page size x page count. */
static int check_header(const char *path, long long size, char *err, size_t errlen)
{
    unsigned char h[DBFILE_HEADER];
    if (size == 0) return dbfile_fail(err, errlen, KT_EBADDB, path, "not a ktune database", "empty file");
    FILE *f = fopen(path, "rb");
    if (!f) return dbfile_fail(err, errlen, KT_ENODB, path, "cannot read", NULL);
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got < sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        return dbfile_fail(err, errlen, KT_EBADDB, path, "not a ktune database", "not an SQLite file");
    unsigned page = be16(h + 16);
    long long page_size = page == 1 ? 65536 : page;
    unsigned long pages = be32(h + 28);
    /* The header's page count is only meaningful when its version stamp matches (SQLite's rule),
     * and with WAL content the main file may be mid-checkpoint: then quick_check judges. */
    int count_valid = pages != 0 && be32(h + 24) == be32(h + 92);
    if (count_valid && wal_bytes(path) == 0 && size < page_size * (long long)pages) {
        char detail[128];
        snprintf(detail, sizeof detail, "the header says %lld bytes, the file has %lld",
                 page_size * (long long)pages, size);
        return dbfile_fail(err, errlen, KT_EBADDB, path, "truncated", detail);
    }
    return KT_OK;
}

/* "file:<percent-encoded path>?immutable=1" */
static int immutable_uri(const char *path, char *uri, size_t len)
{
    size_t o = (size_t)snprintf(uri, len, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                    strchr("/-_.~", *p) != NULL;
        if (o + 4 >= len) return -1;
        o += (size_t)(plain ? snprintf(uri + o, len - o, "%c", *p) : snprintf(uri + o, len - o, "%%%02X", *p));
    }
    return o + 13 < len ? (snprintf(uri + o, len - o, "?immutable=1"), 0) : -1;
}

/* One integer from a one-row query; SQLite's result code. */
static int query_int(sqlite3 *h, const char *sql, long long *v)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *v = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

static int open_ro(const char *name, int uri, sqlite3 **h)
{
    int rc = sqlite3_open_v2(name, h, SQLITE_OPEN_READONLY | (uri ? SQLITE_OPEN_URI : 0), NULL);
    if (rc == SQLITE_OK) sqlite3_busy_timeout(*h, 5000);   /* a writer checkpointing: wait, do not fail */
    return rc;
}

static int check_contents(sqlite3 *h, const char *path, long long version, char *err, size_t errlen)
{
    char detail[256];
    if (version < KTRT_DB_SCHEMA_MIN_VERSION || version > KTRT_DB_SCHEMA_VERSION) {
        if (version == 0)
            return dbfile_fail(err, errlen, KT_EBADDB, path, "not a ktune database", "SQLite file without a ktune schema version");
        snprintf(detail, sizeof detail, "schema version %lld, this libktrt reads %d to %d (%s)", version, KTRT_DB_SCHEMA_MIN_VERSION,
                 KTRT_DB_SCHEMA_VERSION, version > KTRT_DB_SCHEMA_VERSION ? "use a newer ktune" :
                 "open it once with kt or tune to migrate it");
        return dbfile_fail(err, errlen, KT_EBADDB, path, version > KTRT_DB_SCHEMA_VERSION ?
                           "newer schema" : "older schema", detail);
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK)
        return dbfile_fail(err, errlen, KT_EBADDB, path, "corrupt", sqlite3_errmsg(h));
    int rc = sqlite3_step(st);
    const char *res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int ok = res && strcmp(res, "ok") == 0;
    if (!ok) snprintf(detail, sizeof detail, "%s", res ? res : sqlite3_errmsg(h));
    sqlite3_finalize(st);
    if (!ok) return dbfile_fail(err, errlen, KT_EBADDB, path, "corrupt", detail);
    long long tables = 0;
    if (query_int(h, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                     "('kernel', 'device', 'selection', 'measurement', 'problem')", &tables) != SQLITE_OK ||
        tables != 5)
        return dbfile_fail(err, errlen, KT_EBADDB, path, "not a ktune database", "tables kernel, device, problem, "
                           "measurement or selection are missing");
    return KT_OK;
}

int ktrt_dbfile_open(const char *path, sqlite3 **out, char *err, size_t errlen)
{
    if (!out) return dbfile_fail(err, errlen, KT_EINVAL, "ktrt_dbfile_open", "NULL out pointer", NULL);
    *out = NULL;
    if (!path || !path[0]) return dbfile_fail(err, errlen, KT_EINVAL, "ktrt_dbfile_open", "no path given", NULL);
    struct stat st;
    if (stat(path, &st) != 0) return dbfile_fail(err, errlen, KT_ENODB, path, "no such file", NULL);
    if (!S_ISREG(st.st_mode)) return dbfile_fail(err, errlen, KT_EBADDB, path, "not a regular file", NULL);
    int code = check_header(path, (long long)st.st_size, err, errlen);
    if (code != KT_OK) return code;

    sqlite3 *h = NULL;
    long long version = -1;
    int rc = open_ro(path, 0, &h);
    if (rc == SQLITE_OK) rc = query_int(h, "PRAGMA user_version", &version);
    if ((rc == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) && wal_bytes(path) == 0) {
        /* WAL index cannot be made here (read-only folder) and there is no WAL to miss. */
        char uri[8192];
        sqlite3_close(h);
        h = NULL;
        rc = immutable_uri(path, uri, sizeof uri) ? SQLITE_CANTOPEN : open_ro(uri, 1, &h);
        if (rc == SQLITE_OK) rc = query_int(h, "PRAGMA user_version", &version);
    }
    if (rc != SQLITE_OK) {
        char detail[256];
        if ((rc == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY) && wal_bytes(path) > 0)
            snprintf(detail, sizeof detail, "it has uncheckpointed WAL content and its -shm index cannot be "
                                            "made here (read-only folder?): checkpoint it where it was written");
        else
            snprintf(detail, sizeof detail, "%s", h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
        sqlite3_close(h);
        const char *what = (rc & 0xff) == SQLITE_NOTADB ? "not a ktune database" :
                           (rc & 0xff) == SQLITE_CORRUPT ? "corrupt" : "cannot read";
        return dbfile_fail(err, errlen, KT_EBADDB, path, what, detail);
    }
    code = check_contents(h, path, version, err, errlen);
    if (code != KT_OK) {
        sqlite3_close(h);
        return code;
    }
    *out = h;
    return KT_OK;
}
