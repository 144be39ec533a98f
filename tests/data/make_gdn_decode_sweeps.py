#!/usr/bin/env python3
"""make_gdn_decode_sweeps.py: the measured GDN decode timings test_op_gdn replays through the law.

    python3 tests/data/make_gdn_decode_sweeps.py OUT.tsv DUMP.txt.gz:DB.ktdb [DUMP:DB ...]

Each DUMP is `kt dump`'s text of a sweep (gzipped), DB the database it came from (the kernels'
registers and warps a unit). The committed file (gdn_decode_sweeps.tsv) holds
  - bench/results/2026-12-06-h200-s32/e1-nocode.ktdb.xz: the H100's [.., K, V] sweeps of
    Qwen3-Next at tp 4, 2 and 1 (hv 8, 16, 32; thirty-second session);
  - bench/results/2026-12-07-h200-s36/g1.tgz (the dump) and g1-nocode.ktdb.xz: the H100's K-last sweeps at tp 4
    (hv 8, every problem) and tp 1 (hv 32, the 19 problems its budget reached; thirty-sixth session).
Lines: `F index suffix regs warps` a kernel (name kt_gdn_decode_bf16_<suffix>, its registers a
thread and warps resident a unit), `P hv norm vk q batch index:us ...` a problem's coarse timings
(median us, cold) of every kernel timed on it. Comments start with #."""
import gzip, re, sqlite3, sys

def main():
    out, srcs = sys.argv[1], sys.argv[2:]
    forms, probs = {}, []
    for src in srcs:
        dump, db = src.split(':')
        con = sqlite3.connect(db)
        info = {n: (r, w) for n, r, w in con.execute(
            "select name, vgpr, waves_per_simd from kernel where name like 'kt_gdn_decode%' and status='ok'")}
        cur = None
        timed = {}
        for line in gzip.open(dump, 'rt'):
            if line.startswith('pass '):
                key = re.search(r'problem="([^"]+)"', line).group(1)
                cur = key if key.startswith('gdn_decode') else None
                if cur: timed.setdefault(cur, {})
            elif line.startswith('  time ') and cur:
                name = re.search(r'kernel=(\S+)', line).group(1)
                us = re.search(r'median_us=([0-9.]+)', line)
                if us and 'status=ok' in line and name in info:
                    timed[cur][name] = float(us.group(1))   # a later pass (refine) overrides
        for key, t in timed.items():
            m = re.search(r'hv=(\d+) kw=\d+ norm=(\d) vk=(\d) q<=(\d+) batch<=(\d+)', key)
            row = []
            for name, us in sorted(t.items()):
                if name not in forms: forms[name] = (len(forms),) + info[name]
                row.append('%d:%.3f' % (forms[name][0], us))
            probs.append('P %s %s %s %s %s ' % m.groups() + ' '.join(row))
    with open(out, 'w') as f:
        f.write('# the H100 (132 units) sweeps of the GDN decode forms: tests/data/make_gdn_decode_sweeps.py\n')
        for name, (i, regs, warps) in sorted(forms.items(), key=lambda x: x[1][0]):
            f.write('F %d %s %d %d\n' % (i, name.replace('kt_gdn_decode_bf16_', ''), regs, warps))
        for p in probs: f.write(p + '\n')

if __name__ == '__main__':
    main()
