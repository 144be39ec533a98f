-- Migration 1 -> 2: the tuner's tables. Measurements key on the code object's hash, so a
-- recompile that yields the same binary keeps its measurements; selections key on the device.

-- A device is its arch, CU/SM count and PCI product id, never its marketing name (names drift
-- between drivers). key = '<arch>/<cus>/<pci id as 0x%04x>', e.g. 'sm_90/132/0x2335'. The row
-- '<target>/law' stands for "no device: picked by the law".
CREATE TABLE device (
    key            TEXT PRIMARY KEY,
    target         TEXT NOT NULL,
    arch           TEXT NOT NULL,
    compute_units  INTEGER NOT NULL,
    pci_device_id  INTEGER NOT NULL,
    name           TEXT NOT NULL,       -- informational only
    l2_bytes       INTEGER,
    first_seen     TEXT NOT NULL DEFAULT (datetime('now'))
);

-- One invocation of the sweep. mode 'sweep' measured on device_key; 'law' had no device.
CREATE TABLE run (
    id            INTEGER PRIMARY KEY,
    device_key    TEXT NOT NULL REFERENCES device (key),
    target        TEXT NOT NULL,
    mode          TEXT NOT NULL CHECK (mode IN ('sweep', 'law')),
    model         TEXT NOT NULL,        -- config.json path as given
    tp            INTEGER NOT NULL,
    args          TEXT NOT NULL,        -- the command line, for the record
    gpus          INTEGER NOT NULL DEFAULT 1,
    noise_floor   REAL,                 -- median of the controls' relative spreads, when measured
    status        TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
    note          TEXT,
    started_at    TEXT NOT NULL DEFAULT (datetime('now')),
    finished_at   TEXT
);

-- Canonical problem keys: 'gemm bf16 n=5120 k=8704 m<=16'. m is the bucket edge.
CREATE TABLE problem (
    key    TEXT PRIMARY KEY,
    op     TEXT NOT NULL,
    dtype  TEXT NOT NULL,
    n      INTEGER NOT NULL,
    k      INTEGER NOT NULL,
    m      INTEGER NOT NULL,
    phase  TEXT NOT NULL CHECK (phase IN ('decode', 'prefill'))
);

-- Which problems a run was asked to cover, and the model layers behind each (coverage report).
CREATE TABLE run_problem (
    run_id       INTEGER NOT NULL REFERENCES run (id),
    problem_key  TEXT NOT NULL REFERENCES problem (key),
    layers       TEXT NOT NULL,         -- 'qkv' | 'gate_up' | 'o,down' ...
    calls        INTEGER NOT NULL,      -- GEMM calls per forward pass
    PRIMARY KEY (run_id, problem_key)
);

-- A group of variants timed together, interleaved in rounds, with its identical-code control.
CREATE TABLE pass (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES run (id),
    device_key      TEXT NOT NULL REFERENCES device (key),
    problem_key     TEXT NOT NULL REFERENCES problem (key),
    kind            TEXT NOT NULL CHECK (kind IN ('coarse', 'fine', 'tiebreak')),
    variants        INTEGER NOT NULL,
    rounds          INTEGER NOT NULL,
    cold            INTEGER NOT NULL,   -- 1: buffers rotated past L2 (decode shapes)
    control_hash    TEXT,               -- code hash timed twice
    control_spread  REAL,               -- |t_a - t_b| / min(t_a, t_b) of the control's medians
    gpu             INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE INDEX pass_by_problem ON pass (device_key, problem_key, kind);

-- Verification ('verify' rows, one per code object and problem) and timings (one per pass).
-- status: ok | wrong (error over the dtype's bound or NaN) | crash (the worker died on it) |
-- timeout | error (a launch or load failed with a message).
CREATE TABLE measurement (
    id           INTEGER PRIMARY KEY,
    device_key   TEXT NOT NULL REFERENCES device (key),
    problem_key  TEXT NOT NULL REFERENCES problem (key),
    code_hash    TEXT NOT NULL,
    kernel       TEXT NOT NULL,         -- name at the time, informational (the hash is the key)
    pass_id      INTEGER REFERENCES pass (id),   -- NULL for verification
    kind         TEXT NOT NULL CHECK (kind IN ('verify', 'coarse', 'fine', 'tiebreak')),
    status       TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'crash', 'timeout', 'error')),
    error        REAL,                  -- ||out - ref|| / ||ref|| (verify)
    detail       TEXT,                  -- message for wrong/crash/timeout/error
    median_us    REAL,
    min_us       REAL,
    max_us       REAL,
    reps         INTEGER,               -- timed replays (rounds) behind median/min/max
    launches     INTEGER,               -- kernel launches per replay (buffer sets rotated)
    run_id       INTEGER NOT NULL REFERENCES run (id),
    created_at   TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE UNIQUE INDEX measurement_verify ON measurement (device_key, problem_key, code_hash) WHERE kind = 'verify';
CREATE INDEX measurement_by_pass ON measurement (pass_id);
CREATE INDEX measurement_by_key ON measurement (device_key, problem_key, kind);

-- The kernel serving each problem on each device. source 'measured': the fastest verified
-- variant; 'law': the law's pick, nothing measured. law_kernel/law_us/regret: the law's pick,
-- its measured time and law_us / best_us - 1.
CREATE TABLE selection (
    device_key   TEXT NOT NULL REFERENCES device (key),
    target       TEXT NOT NULL,
    problem_key  TEXT NOT NULL REFERENCES problem (key),
    op           TEXT NOT NULL,
    dtype        TEXT NOT NULL,
    n            INTEGER NOT NULL,
    k            INTEGER NOT NULL,
    m            INTEGER NOT NULL,
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
CREATE INDEX selection_by_shape ON selection (target, op, dtype, n, k);
