-- Migration 2 -> 3: problems and selections of any op family (runtime/op.h). Version 2 spelt a
-- GEMM's dimensions in n, k and m columns; a family's dimensions are now only in the problem key
-- ('gemm bf16 n=5120 k=8704 m<=16', 'rmsnorm_add bf16 hidden=4096 rows<=64'), which the op's
-- descriptor parses, so a new family needs no column. Every row is kept as it was: a database
-- tuned before this change serves the same selections (libktrt reads both versions).

CREATE TABLE problem_v3 (
    key    TEXT PRIMARY KEY,            -- canonical key; its op's descriptor parses it
    op     TEXT NOT NULL,               -- the key's first word
    dtype  TEXT NOT NULL,
    phase  TEXT NOT NULL CHECK (phase IN ('decode', 'prefill'))
);
INSERT INTO problem_v3 (key, op, dtype, phase) SELECT key, op, dtype, phase FROM problem;
DROP TABLE problem;
ALTER TABLE problem_v3 RENAME TO problem;

CREATE TABLE selection_v3 (
    device_key   TEXT NOT NULL REFERENCES device (key),
    target       TEXT NOT NULL,
    problem_key  TEXT NOT NULL REFERENCES problem (key),
    op           TEXT NOT NULL,
    dtype        TEXT NOT NULL,
    kernel       TEXT NOT NULL,
    code_hash    TEXT NOT NULL,
    source       TEXT NOT NULL CHECK (source IN ('measured', 'law')),
    time_us      REAL,
    error        REAL,
    law_kernel   TEXT,
    law_us       REAL,
    regret       REAL,
    noise_floor  REAL,
    decided_by   TEXT,                  -- 'fastest' | 'tie->law' | 'tie->resources' | 'law'
    run_id       INTEGER REFERENCES run (id),
    updated_at   TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (device_key, problem_key)
);
INSERT INTO selection_v3 (device_key, target, problem_key, op, dtype, kernel, code_hash, source, time_us, error,
                          law_kernel, law_us, regret, noise_floor, decided_by, run_id, updated_at)
    SELECT device_key, target, problem_key, op, dtype, kernel, code_hash, source, time_us, error, law_kernel, law_us,
           regret, noise_floor, decided_by, run_id, updated_at FROM selection;
DROP TABLE selection;
ALTER TABLE selection_v3 RENAME TO selection;
CREATE INDEX selection_by_shape ON selection (target, op, dtype);
