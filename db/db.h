/* db.h: the ktune database (.ktdb, SQLite): libkt's reads and every write. The schema and every
 * statement that writes are in db/; the only SQL elsewhere is libktrt's read-only queries
 * (runtime/ktrt_db.c reads the catalog, runtime/ktrt_dbfile.c checks a file before it is used),
 * because libktrt links no part of db/. Versioned with PRAGMA user_version: the migrations are
 * db/schema.sql and db/migrate_NNN_*.sql, embedded and listed in db_migrations() (db/db.c);
 * opening migrates forward, a newer file is refused. */
#ifndef KT_DB_H
#define KT_DB_H
#include <stddef.h>

#define KT_DB_SCHEMA_VERSION 3

typedef struct kt_db kt_db;

typedef struct db_toolchain_row {
    const char *fingerprint, *kind, *path, *version, *flags, *target;
} db_toolchain_row;

typedef struct db_kernel_row {
    const char *name, *target, *template_rel, *recipe, *ops, *params;
    const char *status;                 /* "ok" | "failed" | "excluded" */
    const char *reason;                 /* NULL when ok */
    int threads, vgpr, sgpr, agpr, regs, lds_bytes, scratch_bytes, spills, waves_per_simd;
    const char *occupancy_limit;
    const char *isa;                    /* JSON or NULL */
    const char *fingerprint, *cache_key, *code_hash;
    const void *code;
    size_t code_len;
    int has_resources;                  /* 0: resource columns are stored NULL */
} db_kernel_row;

/* Open (creating when `create` and the file is new) and migrate. On failure *out is NULL and err
 * names the file and the fault (not a database, truncated, newer schema, ...). */
int db_open(const char *path, int create, kt_db **out, char *err, size_t errlen);
void db_close(kt_db *db);

/* Batch writes in one transaction (one fsync per gen run instead of per kernel). */
int db_begin(kt_db *db, char *err, size_t errlen);
int db_commit(kt_db *db, char *err, size_t errlen);
void db_rollback(kt_db *db);   /* after a failed step inside db_begin; errors ignored */

int db_toolchain_put(kt_db *db, const db_toolchain_row *row, char *err, size_t errlen);
/* What a gen summary needs of a stored kernel. */
typedef struct db_kernel_brief {
    char status[16];
    char reason[256];
    int waves_per_simd;
    int threads;               /* what the row was analysed with */
    int lds_bytes;             /* static + launch-time LDS it was analysed with; -1 without resources */
    char params[1024];         /* the stored params JSON */
} db_kernel_brief;

/* 1 if kernel (name, target) is stored with this cache_key (brief filled when not NULL),
 * 0 if not, -1 on error. */
int db_kernel_is_current(kt_db *db, const char *name, const char *target, const char *cache_key,
                         db_kernel_brief *brief, char *err, size_t errlen);
/* Replace the params text of kernel (name, target): params that enter neither the source nor the
 * analysis (the law) change without a re-analysis. */
int db_kernel_set_params(kt_db *db, const char *name, const char *target, const char *params, char *err, size_t errlen);
/* Insert or replace kernel (name, target). */
int db_kernel_put(kt_db *db, const db_kernel_row *row, char *err, size_t errlen);
/* Kernels of target built from template_rel whose names start with prefix + "_" and are not in
 * names_json (a JSON array of the recipe's current variant names) are no longer in the recipe's
 * space: status 'excluded', reason saying so, cache key cleared (so a recipe that admits one again
 * re-stores it). Their measurements stay. *retired = how many changed. */
int db_kernel_retire_absent(kt_db *db, const char *target, const char *template_rel, const char *prefix,
                            const char *names_json, int *retired, char *err, size_t errlen);

#endif
