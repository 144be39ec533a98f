#!/bin/sh
# Thirty-third session, device call G2 (call G cut to the device time left, ~5 minutes: batch 32 only, the held-out prefill at tp 2 only): the MT 8 OB 2 forms without spills (the decay
# scale's fold at the token's start; out/s33 = the Qwen3-Next tp 4 build, every kernel its problems
# can use): gdn_check's chains on the law's picks, the issue's decode rows against out/d8 (s31's
# forms) in the same rounds, hot and cold; then the tp 4 sweep of the GEMMs and GDN problems
# (attention follows in the next calls, resumed on the database this call returns); on an H100 the
# prefill law's held-out sweeps (tp 2, tp 1) instead. Carry out/bin
# out/lib out/device out/d8 out/s33 out/s33h. $OUT/g1.tgz, the database beside. out/s33h: the same
# template with the state's loads and stores streaming (__ldcs / __stcs; a scratch copy, 4 forms),
# timed against s33 at batch 32 / 128, one token, cold.
set -u
. tests/device/env.sh
call_begin g2
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
unpack d8
db_unpack out/s33/all.ktdb.xz
cp "$DB" "$W/s33.ktdb"
decode_check s33
OUT=$R timeout 90 python3 tests/device/bench_gdn.py --lib $L --db $W/s33.ktdb --ab $W/d8.ktdb --rounds 7 \
    --hv 8,32 --batch 32 --tokens 1,4 --regime hot,cold > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench.log | cut -c1-150
unpack s33h
OUT=$R timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/s33h.ktdb --ab $W/s33.ktdb --rounds 7 \
    --hv 8,32 --batch 32,128 --tokens 1 --regime cold > $R/bench-stream.log 2>&1
echo "bench-stream rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench-stream.log | cut -c1-150
rm -f "$W/s33.ktdb" "$W/d8.ktdb" "$W/s33h.ktdb"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    model_sweep sweep-g2-tp4.log ${SWEEP_TIMEOUT:-250} --modelpath models/qwen3-next-80b-a3b --tp 4 \
        --only gemm,gdn_decode,gdn_prefill
else   # not the card: the prefill law held out instead (its sweep is the law's measure)
    for tp in 2; do
        model_sweep sweep-g2-prefill-tp$tp.log 100 --modelpath models/qwen3-next-80b-a3b --tp $tp \
            --only gdn_prefill --budget-min 1.3
    done
fi
db_return
call_end g2
