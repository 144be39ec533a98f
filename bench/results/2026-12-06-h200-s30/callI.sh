#!/bin/sh
# Thirtieth session, device call I (~2 minutes): the session's last build (out/d4: every sm_90a
# decode form as committed, prefill's BT 64 forms) checked (decode and prefill chains) and timed
# against out/d3 (call H's) in the same rounds. Carry out/lib out/d3 out/d4. $OUT/i1.tgz.
set -u
. tests/device/env.sh
call_begin i1
unpack d3; unpack d4
timeout 60 python3 tests/device/gdn_check.py --lib $L --db $W/d4.ktdb > $R/check-d4.log 2>&1; echo "check d4 rc=$? $(el)"
grep -E "gdn_check:|WRONG|FAIL|fail" $R/check-d4.log | head -4 | cut -c1-200
prefill_check d4
OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $W/d4.ktdb --ab $W/d3.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench.log | cut -c1-120
call_end i1
