"""swap_in.py BASE NEW SUFFIX OUT: OUT = BASE (a device database with code) with every selected kernel
that NEW holds as name + SUFFIX moved to that build (its code, resources and name; the selection
follows): an A/B of a template change at fixed picks, BASE's kernels named before an axis was
added (SUFFIX "_f80": the F8 axis at 0)."""
import shutil
import sqlite3
import sys

base, new, suffix, out = sys.argv[1:5]
shutil.copyfile(base, out)
c = sqlite3.connect(out)
c.execute("ATTACH ? AS n", (new,))
cols = [r[1] for r in c.execute("PRAGMA n.table_info(kernel)") if r[1] != "id"]
moved = 0
for (name, target) in c.execute("SELECT DISTINCT kernel, target FROM selection").fetchall():
    row = c.execute("SELECT code_hash FROM n.kernel WHERE name = ? AND target = ? AND status = 'ok'", (name + suffix, target)).fetchone()
    if not row:
        continue
    c.execute("DELETE FROM kernel WHERE name IN (?, ?) AND target = ?", (name, name + suffix, target))
    c.execute("INSERT INTO kernel (%s) SELECT %s FROM n.kernel WHERE name = ? AND target = ?" % (",".join(cols), ",".join(cols)), (name + suffix, target))
    c.execute("UPDATE selection SET kernel = ?, code_hash = ? WHERE kernel = ? AND target = ?", (name + suffix, row[0], name, target))
    moved += 1
c.commit()
c.execute("DETACH n")
c.execute("VACUUM")
print("swap_in: %s: %d selected kernels moved to their %s build" % (out, moved, suffix))
