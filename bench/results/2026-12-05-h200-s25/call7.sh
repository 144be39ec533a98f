#!/bin/sh
# Twenty-fifth session, device call 7: the session's last template (out/c31: _wy's running sum
# unrolled by 8 and its substitution by selects, for gfx942's SGPRs; the state pass's LDS struct
# aligned as its members, for gfx11) checked on the device: the prefill-then-decode chains, and
# one timing round of the 16K row. Carry out/lib out/c31. Results: $OUT/a7.tgz.
set -u
. tests/device/env.sh
R=$OUT/a7; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/c31/gdn_all.ktdb.xz > $W/c31.ktdb
timeout 60 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c31.ktdb > $R/check-c31.log 2>&1; echo "check c31 rc=$? $(el)"
grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-c31.log | head -6 | cut -c1-200
timeout 30 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c31.ktdb --profile --rounds 5 \
    --rows 1x16384/8 > $R/c31.log 2>&1; echo "bench c31 rc=$? $(el)"
grep -E "x1 |law" $R/c31.log | cut -c1-170
rm -rf $W
tar czf $OUT/a7.tgz -C $OUT a7 && rm -rf $R
echo "done $(el)"
