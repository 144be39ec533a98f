#!/usr/bin/env python3
"""pick.py DB_IN DB_OUT BT BV NW PF: a copy of a ktune database whose gdn_prefill kernels are only
those of the given axes (both state layouts, every dtype), so that the law has one to take: the
device calls' A/B of one variant against another in the same run."""
import json
import shutil
import sqlite3
import sys

src, dst, bt, bv, nw, pf = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
drop = []
for kid, params in db.execute("SELECT id, params FROM kernel WHERE ops = 'gdn_prefill'"):
    p = json.loads(params)
    if (p["BT"], p["BV"], p["NW"], p["PF"]) != (bt, bv, nw, pf):
        drop.append((kid,))
db.executemany("DELETE FROM kernel WHERE id = ?", drop)
db.commit()
left = db.execute("SELECT count(*) FROM kernel WHERE ops = 'gdn_prefill' AND status = 'ok'").fetchone()[0]
print("pick bt%d bv%d nw%d pf%d: %d gdn_prefill kernels left" % (bt, bv, nw, pf, left))
sys.exit(0 if left else 1)
