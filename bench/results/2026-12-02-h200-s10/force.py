#!/usr/bin/env python3
"""force.py SRC DST KERNEL KEY...: a copy of database SRC whose selections for KEY... (keys the
sweep did not tune: sinks, windows, soft-caps, bs 64, fp8) name KERNEL, so that bench_attn's
--check-only runs that kernel on them through libktrt (a test database, never shipped)."""
import shutil, sqlite3, sys
src, dst, kernel, keys = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
s = sqlite3.connect(src); d = sqlite3.connect(dst); s.backup(d); s.close()
k = d.execute("select target, code_hash from kernel where name = ? and status = 'ok'", (kernel,)).fetchone()
dev = d.execute("select device_key from selection where target = ? limit 1", (k[0],)).fetchone()[0]
for key in keys:
    op, dt = key.split()[0], key.split()[1]
    phase = 'decode' if op == 'attn_decode' else 'prefill'
    d.execute("insert or replace into problem (key, op, dtype, phase) values (?, ?, ?, ?)", (key, op, dt, phase))
    d.execute("""insert or replace into selection (device_key, target, problem_key, op, dtype, kernel, code_hash, source,
                 decided_by, time_us) values (?, ?, ?, ?, ?, ?, ?, 'measured', 'forced by bench force.py', 1.0)""",
              (dev, k[0], key, op, dt, kernel, k[1]))
d.commit()
print("force: %d keys -> %s" % (len(keys), kernel))
