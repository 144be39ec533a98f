#!/usr/bin/env python3
"""keep_bv.py DB_IN DB_OUT BV: a copy of a ktune database whose gdn_decode kernels are only those
of the given BV (every other op's kernels kept), so that the law has only those to take: the device
calls' A/B of one column split against another in the same run."""
import shutil
import sqlite3
import sys

src, dst, bv = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
db.execute("DELETE FROM kernel WHERE name LIKE 'kt_gdn_decode%' AND name NOT LIKE ? ESCAPE '\\'",
           ("%%\\_bv%d\\_%%" % bv,))
db.commit()
left = db.execute("SELECT count(*) FROM kernel WHERE name LIKE 'kt_gdn_decode%' AND status = 'ok'").fetchone()[0]
print("keep bv%d: %d gdn_decode kernels left" % (bv, left))
sys.exit(0 if left else 1)
