#!/usr/bin/env python3
"""keep.py DB_IN DB_OUT OP AXIS=VALUE...: a copy of a ktune database whose kernels of op OP are only
those whose axes have the given values (every other op's kernels kept), so that the law has only
those to take: a device call's A/B of one variant against another in the same run. A kernel row
without an axis (an older recipe's) reads as its descriptor's fallback, passed as AXIS=VALUE/FALLBACK
(ST=1/1). Exits 1 if no ok kernel of OP is left."""
import json
import shutil
import sqlite3
import sys


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    src, dst, op = argv[1], argv[2], argv[3]
    want = {}
    for a in argv[4:]:
        name, _, val = a.partition("=")
        value, _, fallback = val.partition("/")
        if not name or not value:
            sys.exit("keep.py: '%s' is not AXIS=VALUE" % a)
        want[name] = (int(value), int(fallback) if fallback else None)
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    drop = []
    for kid, params in db.execute("SELECT id, params FROM kernel WHERE ops = ?", (op,)):
        p = json.loads(params)
        if any(p.get(k, fb) != v for k, (v, fb) in want.items()):
            drop.append((kid,))
    db.executemany("DELETE FROM kernel WHERE id = ?", drop)
    db.commit()
    left = db.execute("SELECT count(*) FROM kernel WHERE ops = ? AND status = 'ok'", (op,)).fetchone()[0]
    print("keep %s %s: %d kernels left" % (op, " ".join(argv[4:]), left))
    return 0 if left else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
