"""swap_code.py OLD NEW OUT: OUT = OLD (a device database: selections, measurements, code) with every
kernel's code, code hash and resources taken from NEW (the same kernel names built from changed
sources), and the selections that named the old code hash moved to the new one, so that libktrt
picks the same kernels with the new code (an A/B of a template change at fixed picks). Kernels of
OLD that NEW does not hold keep their old code; the count is printed."""
import shutil
import sqlite3
import sys

old, new, out = sys.argv[1:4]
shutil.copyfile(old, out)
c = sqlite3.connect(out)
c.execute("ATTACH ? AS n", (new,))
rows = c.execute("""SELECT k.name, k.target, k.code_hash, n.code_hash FROM kernel k JOIN n.kernel n
                    ON n.name = k.name AND n.target = k.target
                    WHERE k.code IS NOT NULL AND n.status = 'ok' AND n.code IS NOT NULL""").fetchall()
for name, target, oh, nh in rows:
    c.execute("""UPDATE kernel SET (code, code_hash, threads, vgpr, sgpr, agpr, regs, lds_bytes, scratch_bytes, spills,
                 waves_per_simd, occupancy_limit, isa) = (SELECT code, code_hash, threads, vgpr, sgpr, agpr, regs,
                 lds_bytes, scratch_bytes, spills, waves_per_simd, occupancy_limit, isa FROM n.kernel
                 WHERE name = ? AND target = ?) WHERE name = ? AND target = ?""", (name, target, name, target))
    c.execute("UPDATE selection SET code_hash = ? WHERE kernel = ? AND target = ? AND code_hash = ?",
              (nh, name, target, oh))
kept = c.execute("SELECT count(*) FROM kernel WHERE code IS NOT NULL").fetchone()[0] - len(rows)
changed = sum(1 for r in rows if r[2] != r[3])
c.commit()
c.execute("DETACH n")
c.execute("VACUUM")
c.close()
print("swap_code: %s: %d kernels from %s (%d with new code), %d kept their old code" % (out, len(rows), new, changed, kept))
