#!/bin/sh
# Thirty-fifth session, device call F (the issue's tp 4 sweep; as s32's callC.sh, over this
# session's build): ./tune on Qwen3-Next-80B-A3B at --tp 4 over out/s37/all.ktdb.xz (the kernels
# `./tune --modelpath ... --tp 4 --target sm_90a --no-device` built here at 24343a7, its gdn_decode
# forms rebuilt at 7077c96 (the K-last rows in pieces), for the model's
# problems, GDN in vLLM's K-last layout, the ok kernels only), every candidate verified against the
# float64 reference, then timed; stops starting problems at its budget (what it measured is kept),
# `kt dump`, the database back. RESUME: out/s37/resume.ktdb.xz (the database a call returned) is
# swept on with --resume. ONLY=gdn_decode,gdn_prefill narrows it. Carry out/bin out/lib out/device
# out/s37. $OUT/f1.tgz (CALL=f2 ...), the database beside.
set -u
. tests/device/env.sh
N=${CALL:-f1}
call_begin $N
nvidia-smi --query-gpu=name --format=csv,noheader
if [ -f out/s37/resume.ktdb.xz ]; then db_unpack out/s37/resume.ktdb.xz; else db_unpack out/s37/all.ktdb.xz; fi
model_sweep sweep.log ${SWEEP_TIMEOUT:-440} --modelpath models/qwen3-next-80b-a3b --tp 4 --resume \
    --budget-min ${BUDGET:-7.5} ${ONLY:+--only $ONLY}
grep -E "refused|wrong|failed" $R/sweep.log | head -8 | cut -c1-200
db_return
call_end $N
