"""make_ab.py SWEPT BUILT OUTDIR: the fourteenth session's A/B databases at fixed picks. SWEPT is the
thirteenth session's swept database (its selections; code not needed), BUILT a kt gen database of
the ab recipes (every selected kernel with the OB axis, and the fp8 register form at 64 keys (d256)
/ 128 keys (d128)). Each output holds only the kernels its configuration runs, so that the law, for
a key no selection serves, chooses among them alone:
  base  every selection at OB 0 (the code HEAD builds);
  ob    a selection whose OB build holds more warps an SM than its OB 0 build (no spill) at that OB;
  fp8w  base, with fp8's register form at BN 32 (d256) / 64 (d128) moved to BN 64 / 128."""
import os
import re
import shutil
import sqlite3
import sys

swept, built, outdir = sys.argv[1:4]
b = sqlite3.connect(built)
kern = {r[0]: r[1:] for r in b.execute("SELECT name, status, waves_per_simd, spills FROM kernel")}


def ok(n):
    return n in kern and kern[n][0] == "ok" and not kern[n][2]


def widen(n):
    m = re.match(r"(kt_attn_decode_bf16_e4m3_d(\d+)_mt1_bn)(\d+)(_nw4_.*_re1_kd0_st1_pd1)$", n)
    if m and (m.group(2), m.group(3)) in (("256", "32"), ("128", "64")):
        return m.group(1) + str(2 * int(m.group(3))) + m.group(4)
    return n


def is_new(n):
    return re.match(r"kt_attn_decode_bf16_e4m3_d(256_mt1_bn64|128_mt1_bn128)_nw\d_.*_re1_kd0_st1_pd1$", n) is not None


def more_warps(n):
    best = n + "_ob0"
    for ob in (2, 3, 4):
        x = "%s_ob%d" % (n, ob)
        if ok(x) and kern[x][1] > kern[best][1]:
            best = x
    return best


configs = {"base": lambda n: n + "_ob0", "ob": more_warps, "fp8w": lambda n: widen(n) + "_ob0"}
for cfg, pick in configs.items():
    out = os.path.join(outdir, cfg + ".ktdb")
    shutil.copyfile(swept, out)
    c = sqlite3.connect(out)
    c.execute("ATTACH ? AS n", (built,))
    c.execute("DELETE FROM measurement")
    c.execute("DELETE FROM pass")
    sel = [r[0] for r in c.execute("SELECT DISTINCT kernel FROM selection")]
    want = {n: pick(n) for n in sel}
    # the kernels the law chooses among: this configuration's forms of every built kernel
    keep = set(want.values())
    for n in kern:
        base = re.sub(r"_ob\d$", "", n)
        if n.endswith("_ob0") and widen(base) == base and not is_new(base) and ok(n):
            keep.add(pick(base) if cfg != "fp8w" else n)
    if cfg == "fp8w":
        keep |= {widen(re.sub(r"_ob\d$", "", n)) + "_ob0" for n in kern if n.endswith("_ob0")}
    keep = {k for k in keep if ok(k)}
    c.execute("DELETE FROM kernel")
    cols = [r[1] for r in c.execute("PRAGMA n.table_info(kernel)") if r[1] != "id"]
    for k in sorted(keep):
        c.execute("INSERT INTO kernel (%s) SELECT %s FROM n.kernel WHERE name = ?" % (",".join(cols), ",".join(cols)), (k,))
    moved = 0
    for n, nn in want.items():
        if nn not in keep:
            sys.exit("make_ab: %s: %s not built" % (cfg, nn))
        h = c.execute("SELECT code_hash FROM kernel WHERE name = ?", (nn,)).fetchone()[0]
        c.execute("UPDATE selection SET kernel = ?, code_hash = ? WHERE kernel = ?", (nn, h, n))
        moved += nn != n + "_ob0"
    c.execute("UPDATE kernel SET isa = NULL")
    c.commit()
    c.execute("DETACH n")
    c.execute("VACUUM")
    c.close()
    print("make_ab: %s: %d kernels, %d of %d selected kernels changed form" % (out, len(keep), moved, len(want)))
