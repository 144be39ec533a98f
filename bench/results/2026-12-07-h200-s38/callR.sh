#!/bin/sh
# Thirty-eighth session, device call R (~2 minutes, any card): the state pass's exchange split over
# every warp (out/s38/x38f.ktdb.xz) against the same build without it (x38g), the law's form
# bt64 bv16 nw8 pf4 only, same rounds, each launch's device time. Carry out/lib out/device out/s38.
# $OUT/r1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-r1}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/s38/x38f.ktdb.xz > $W/f.ktdb
xz -dc out/s38/x38g.ktdb.xz > $W/g.ktdb
timeout 150 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/f.ktdb --ab $W/g.ktdb --profile \
    --rounds 7 --rows ${ROWS:-1x16384/8,1x65536/8,1x16384/16,1x4096/8} > $R/ab.log 2>&1
echo "ab rc=$? $(el)"; grep -E "^[0-9]+x|--ab|wrong|refused" $R/ab.log | cut -c1-120
grep -E "pf4 " $R/ab.log | sed 's/kt_gdn_prefill_[a-z0-9]*_vk[01]_dk[0-9]*_dv[0-9]*_//' | cut -c1-90
call_end ${N:-r1}
