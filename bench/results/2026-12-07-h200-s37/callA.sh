#!/bin/sh
# Thirty-seventh session, device call A: s35's call F (the issue's tp 4 sweep of Qwen3-Next-80B-A3B
# over out/s37/all.ktdb.xz, rebuilt at 03331dc: the recipe's forms, the refitted law and the prefill's parts) only where
# the card is the bars' H200; on any other card it stops at once (the sweep's timings are the H200's
# to take). Carry out/bin out/lib out/device out/s37. $OUT/a1.tgz, the database beside.
set -u
. tests/device/env.sh
call_begin ${N:-a1}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
case "$gpu" in
*H200*)
    db_unpack ${DBX:-out/s37/all.ktdb.xz}
    model_sweep sweep.log ${SWEEP_TIMEOUT:-440} --modelpath models/qwen3-next-80b-a3b --tp 4 --resume \
        --budget-min ${BUDGET:-7.0} ${ONLY:+--only $ONLY}
    grep -E "refused|wrong|failed" $R/sweep.log | head -8 | cut -c1-200
    db_return ;;
*) echo "not an H200: no sweep" ;;
esac
call_end ${N:-a1}
