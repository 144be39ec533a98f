#!/usr/bin/env python3
"""make_gdn_sweeps.py: the measured GDN timings test_op_gdn and test_op_gdn_prefill replay through
their laws.

    python3 tests/data/make_gdn_sweeps.py OP OUT.tsv DUMP.txt.gz:DB.ktdb [DUMP:DB ...]

OP is gdn_decode or gdn_prefill. Each DUMP is `kt dump`'s text of a sweep (gzipped), DB the
database it came from (the kernels' registers and warps a unit). gdn_decode_sweeps.tsv holds
  - bench/results/2026-12-06-h200-s32/e1-nocode.ktdb.xz: the H100's [.., K, V] sweeps of
    Qwen3-Next at tp 4, 2 and 1 (hv 8, 16, 32; thirty-second session);
  - bench/results/2026-12-07-h200-s36/g1.tgz (the dump) and g1-nocode.ktdb.xz: the H100's K-last sweeps at tp 4
    (hv 8, every problem) and tp 1 (hv 32, the 19 problems its budget reached; thirty-sixth session).
Lines: `F index suffix regs warps` a kernel (name kt_gdn_decode_bf16_<suffix>, its registers a
thread and warps resident a unit), `P hv norm vk q batch index:us ...` a problem's coarse timings
(median us, cold) of every kernel timed on it. Comments start with #."""
import gzip, re, sqlite3, sys

def main():
    op, out, srcs = sys.argv[1], sys.argv[2], sys.argv[3:]
    forms, probs = {}, []
    for src in srcs:
        dump, db = src.rsplit(':', 1)
        con = sqlite3.connect(db)
        info = {n: (r, w) for n, r, w in con.execute(
            "select name, vgpr, waves_per_simd from kernel where name like 'kt_%s%%' and status='ok'" % op)}
        cur = None
        timed = {}
        for line in gzip.open(dump, 'rt'):
            if line.startswith('pass '):
                # the coarse pass alone: every form timed in the same rounds (the finer passes
                # retime a few leaders under other rounds)
                key = re.search(r'problem="([^"]+)"', line).group(1)
                cur = key if key.startswith(op + ' ') and 'kind=coarse' in line else None
                if cur: timed.setdefault(cur, {})
            elif line.startswith('  time ') and cur:
                name = re.search(r'kernel=(\S+)', line).group(1)
                us = re.search(r'median_us=([0-9.]+)', line)
                if us and 'status=ok' in line and name in info:
                    timed[cur][name] = float(us.group(1))
        for key, t in timed.items():
            # the replay assumes bf16, dk = dv = 128, key heads hv / 2 and a conv of 4: refuse others
            m = re.search(r'^%s bf16 dk=128 dv=128 hk=(\d+) hv=(\d+) kw=4 norm=(\d) vk=(\d) (?:q|tokens)<=(\d+) '
                          r'(?:batch|seqs)<=(\d+)$' % op, key)
            if not m or 2 * int(m.group(1)) != int(m.group(2)):
                sys.exit('make_gdn_sweeps: %s: a problem the replay cannot rebuild' % key)
            row = []
            for name, us in sorted(t.items()):
                if name not in forms: forms[name] = (len(forms),) + info[name]
                row.append('%d:%.3f' % (forms[name][0], us))
            probs.append('P %s %s %s %s %s ' % m.groups()[1:] + ' '.join(row))
    with open(out, 'w') as f:
        f.write('# the H100 (132 units) sweeps of the %s forms: tests/data/make_gdn_sweeps.py\n' % op)
        for name, (i, regs, warps) in sorted(forms.items(), key=lambda x: x[1][0]):
            f.write('F %d %s %d %d\n' % (i, name.replace('kt_%s_bf16_' % op, ''), regs, warps))
        for p in probs: f.write(p + '\n')

if __name__ == '__main__':
    main()
