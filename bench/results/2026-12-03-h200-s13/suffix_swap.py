"""suffix_swap.py OLD NEW SUFFIX OUT: OUT = OLD (a device database: selections and code) with every
selection of an attention kernel (decode.hip, decode_ws.hip, prefill.hip) moved to the same kernel
with SUFFIX ("_pd0", "_pd1") appended, its code and resources taken from NEW (built from the ab
recipes, which compile the old selections' kernels with the new axis at 0 and 1), and the code of
kernels no selection names dropped: an A/B of a template change at fixed picks. A selection whose
renamed kernel NEW lacks (outside the ab recipes' dtypes and head sizes) is left as it was.
Call 1's databases are SUFFIX "_mg0" / "_mg1" (only decode kernels were built with that axis)."""
import shutil
import sqlite3
import sys

old, new, suffix, out = sys.argv[1:5]
shutil.copyfile(old, out)
c = sqlite3.connect(out)
c.execute("ATTACH ? AS n", (new,))
sel = c.execute("""SELECT DISTINCT kernel, target FROM selection WHERE kernel LIKE 'kt_attn_%'""").fetchall()
moved = 0
kept = []
for name, target in sel:
    nn = name + suffix
    row = c.execute("SELECT code_hash FROM n.kernel WHERE name = ? AND target = ? AND status = 'ok' AND code IS NOT NULL",
                    (nn, target)).fetchone()
    if not row:
        kept.append(name)   # built outside the ab recipes' dtypes and head sizes: left as it was
        continue
    c.execute("DELETE FROM kernel WHERE name = ? AND target = ?", (nn, target))
    cols = [r[1] for r in c.execute("PRAGMA n.table_info(kernel)") if r[1] != "id"]
    c.execute("INSERT INTO kernel (%s) SELECT %s FROM n.kernel WHERE name = ? AND target = ?" % (",".join(cols), ",".join(cols)),
              (nn, target))
    c.execute("UPDATE selection SET kernel = ?, code_hash = ? WHERE kernel = ? AND target = ?", (nn, row[0], name, target))
    moved += 1
c.execute("""UPDATE kernel SET code = NULL WHERE code IS NOT NULL AND NOT EXISTS
             (SELECT 1 FROM selection s WHERE s.kernel = kernel.name AND s.target = kernel.target)""")
c.commit()
c.execute("DETACH n")
c.execute("VACUUM")
c.close()
print("suffix_swap: %s: %d selected kernels moved to their %s build, %d left as they were" % (out, moved, suffix, len(kept)))
