#!/bin/sh
# The thirty-fourth session's first call: the thirty-third session's callG.sh (prepared there, not run),
# its H100 branch cut to tp 1 (tp 2 ran as call G6).
# Device call G (~9 minutes): the decode rows of issue 13 on out/s33 (the Qwen3-Next tp 4 build,
# the MT 8 OB 2 forms without spills among them) against out/d8 in the same rounds, hot and cold,
# at batch 1 / 32 / 128 and hv 8 / 32; gdn_check's chains (the vk 0 ones: the model's build has
# no vk 1 form, so the vk 1 chains refuse); then on an H200 the tp 4 sweep of the GEMMs and GDN
# problems, on an H100 the prefill law held out at tp 2 / tp 1. Rebuild out/s33 first if the
# templates changed (bench/NOTES.md, thirty-second session's recipe). Carry out/bin out/lib
# out/device out/d8 out/s33. $OUT/g1.tgz, the database beside.
set -u
. tests/device/env.sh
call_begin a1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
unpack d8
db_unpack out/s33/all.ktdb.xz
cp "$DB" "$W/s33.ktdb"
decode_check s33
OUT=$R timeout 130 python3 tests/device/bench_gdn.py --lib $L --db $W/s33.ktdb --ab $W/d8.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot,cold > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench.log | cut -c1-150
rm -f "$W/s33.ktdb" "$W/d8.ktdb"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    model_sweep sweep-a1-tp4.log ${SWEEP_TIMEOUT:-300} --modelpath models/qwen3-next-80b-a3b --tp 4 \
        --only gemm,gdn_decode,gdn_prefill
else   # not the card: the prefill law held out instead (its sweep is the law's measure)
    for tp in 1; do
        model_sweep sweep-a1-prefill-tp$tp.log 100 --modelpath models/qwen3-next-80b-a3b --tp $tp \
            --only gdn_prefill --budget-min 1.3
    done
fi
db_return
call_end a1
