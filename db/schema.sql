-- ktune database schema, version 1 (db/migrate_002_tuner.sql takes it to 2). Applied to an empty database; a later version
-- is a new db/migrate_NNN_<name>.sql, embedded by build/embed.sh (Makefile SQL_OBJS) and appended to db_migrations() in
-- db/db.c, and bumps PRAGMA user_version (KT_DB_SCHEMA_VERSION in db/db.h). Every write is in db/; libktrt's read-only
-- queries (runtime/ktrt_db.c, runtime/ktrt_dbfile.c) are the only SQL outside it.

CREATE TABLE toolchain (
    id          INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL UNIQUE,   -- sha256 of kind, path, version text and flags
    kind        TEXT NOT NULL,          -- 'hipcc' | 'clang' | 'nvcc'
    path        TEXT NOT NULL,
    version     TEXT NOT NULL,
    flags       TEXT NOT NULL,
    target      TEXT NOT NULL,
    first_seen  TEXT NOT NULL DEFAULT (datetime('now'))
);

CREATE TABLE kernel (
    id             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL,       -- extern "C" symbol, deterministic from params
    target         TEXT NOT NULL,       -- gfx1201 | gfx1100 | gfx942 | gfx90a | sm_90a
    template       TEXT NOT NULL,       -- e.g. gemm/dense.hip
    recipe         TEXT NOT NULL,
    ops            TEXT NOT NULL,       -- comma-separated ops the template serves
    params         TEXT NOT NULL,       -- JSON object, axis order
    status         TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'excluded')),
    reason         TEXT,                -- why failed/excluded (compiler message, 'spills', ...)
    threads        INTEGER,
    vgpr           INTEGER,             -- AMD arch VGPRs / NVIDIA registers per thread
    sgpr           INTEGER,
    agpr           INTEGER,
    regs           INTEGER,             -- registers that count for occupancy (vgpr+agpr on CDNA)
    lds_bytes      INTEGER,
    scratch_bytes  INTEGER,
    spills         INTEGER,
    waves_per_simd INTEGER,             -- AMD waves/SIMD, NVIDIA warps/SM
    occupancy_limit TEXT,               -- which resource binds
    isa            TEXT,                -- JSON instruction mix, whole kernel and hottest loop
    fingerprint    TEXT,                -- toolchain.fingerprint it was compiled with
    cache_key      TEXT NOT NULL,       -- sha256 of source closure, params, target, fingerprint
    code_hash      TEXT,                -- sha256 of the code object; measurements key on this
    code           BLOB,
    updated_at     TEXT NOT NULL DEFAULT (datetime('now')),
    UNIQUE (name, target)
);
CREATE INDEX kernel_by_target ON kernel (target, status);
CREATE INDEX kernel_by_code ON kernel (code_hash);
