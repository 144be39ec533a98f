#!/bin/sh
# Thirty-third session, calls G5 and G6 as run (inline commands on the warm H100 after G4, the
# session's last device seconds; kept here as the record). G5: the streaming-hint forms (out/s33h)
# against s33 at batch 128 x hv 32, one token, cold. G6: the GDN prefill law held out, Qwen3-Next
# at tp 2 (hv 16), 95 s of sweep. Carry out/bin out/lib out/device out/s33 out/s33h.
set -u
. tests/device/env.sh
call_begin g5
unpack s33h
db_unpack out/s33/all.ktdb.xz
OUT=$R timeout 70 python3 tests/device/bench_gdn.py --lib $L --db $W/s33h.ktdb --ab $DB --rounds 5 --hv 32 --batch 128 \
    --tokens 1 --regime cold > $R/bench-stream.log 2>&1
echo "rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-stream.log | cut -c1-150
call_end g5
call_begin g6
db_unpack out/s33/all.ktdb.xz
model_sweep sweep-g6-prefill-tp2.log 95 --modelpath models/qwen3-next-80b-a3b --tp 2 --only gdn_prefill --budget-min 1.2
call_end g6
