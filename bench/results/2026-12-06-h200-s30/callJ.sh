#!/bin/sh
# Thirtieth session, device call J (~2 minutes): the replayed tokens' k inputs ahead (out/d5: every sm_90a
# decode form) checked (decode chains) and timed
# against out/d4 (call I's) in the same rounds. Carry out/lib out/d4 out/d5. $OUT/j1.tgz.
set -u
. tests/device/env.sh
call_begin j1
unpack d4; unpack d5
timeout 60 python3 tests/device/gdn_check.py --lib $L --db $W/d5.ktdb > $R/check-d5.log 2>&1; echo "check d5 rc=$? $(el)"
grep -E "gdn_check:|WRONG|FAIL|fail" $R/check-d5.log | head -4 | cut -c1-200
OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $W/d5.ktdb --ab $W/d4.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench.log | cut -c1-120
call_end j1
