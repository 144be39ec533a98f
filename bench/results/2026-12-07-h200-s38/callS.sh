#!/bin/sh
# Thirty-eighth session, device call S: the tp 4 sweep of Qwen3-Next-80B-A3B over
# out/s38/all.ktdb.xz (built at this session's templates: `./tune --modelpath
# models/qwen3-next-80b-a3b --tp 4 --target sm_90a --no-device`, code of non-ok kernels dropped),
# only where the card is the bars' H200; on any other card it stops at once (the sweep's timings
# are the H200's to take). Carry out/bin out/lib out/device out/s38. $OUT/s1.tgz, the database beside.
set -u
. tests/device/env.sh
call_begin ${N:-s1}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $gpu"
case "$gpu" in
*H200*)
    db_unpack out/s38/all.ktdb.xz
    model_sweep sweep.log ${SWEEP_TIMEOUT:-440} --modelpath models/qwen3-next-80b-a3b --tp 4 --resume \
        --budget-min ${BUDGET:-7.0} ${ONLY:+--only $ONLY}
    grep -E "refused|wrong|failed" $R/sweep.log | head -8 | cut -c1-200
    db_return ;;
*) echo "not an H200: no sweep" ;;
esac
call_end ${N:-s1}
