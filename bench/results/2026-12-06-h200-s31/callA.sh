#!/bin/sh
# Thirty-first session, device call A (~2 minutes): the multi-token forms' lazy decay and the
# in-wave gated norm (out/d8: every bf16 sm_90a decode form) checked by gdn_check's 20 chains,
# and the decode rows timed against out/d7 (the thirtieth session's last forms) in the
# same rounds. Carry out/lib out/d7 out/d8. $OUT/a1.tgz.
set -u
. tests/device/env.sh
call_begin a1
unpack d7; unpack d8
decode_check d8
OUT=$R timeout 90 python3 tests/device/bench_gdn.py --lib $L --db $W/d8.ktdb --ab $W/d7.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench.log | cut -c1-120
call_end a1
