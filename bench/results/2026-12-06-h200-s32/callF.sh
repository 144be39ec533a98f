#!/bin/sh
# Prepared for the next session (not run): the GDN prefill law held out, then the tp 4 sweep
# resumed where calls C / D stopped. Build here first (the model's filter keeps what its problems
# can use; about 12 minutes on 2 cores):
#   ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --db /tmp/s33.ktdb --no-device
#   sqlite3 /tmp/s33.ktdb "update kernel set code=NULL where status!='ok'; vacuum"
#   mkdir -p out/s33 && xz -T2 -c /tmp/s33.ktdb > out/s33/all.ktdb.xz
# and refresh out/device (KT_PACK_DB=0 KT_EXPORT_DB=/nonexistent sh tests/device/pack.sh).
# The tp 4 step starts over (GEMMs first); to resume calls C-E instead, carry e1-nocode.ktdb.xz (this
# folder) with its code restored (tests/device/restore_code.sh) from a build of the same kernels:
# s32's hand-narrowed recipes (bench/NOTES.md, "The Qwen3-Next tp 4 sweep"), not the filter's.
# Prediction (bench/NOTES.md, thirty-second session): the prefill law's regret at tp 2 (hv 16) and
# tp 1 (hv 32), mean <= +5%, worst <= +15%. Carry out/bin out/lib out/device out/s33. $OUT/f1.tgz,
# the database beside (restore its code with tests/device/restore_code.sh against /tmp/s33.ktdb).
set -u
. tests/device/env.sh
call_begin f1
db_unpack out/s33/all.ktdb.xz
for tp in 2 1; do
    model_sweep sweep-prefill-tp$tp.log ${PREFILL_TIMEOUT:-120} --modelpath models/qwen3-next-80b-a3b --tp $tp \
        --only gdn_prefill --budget-min ${PREFILL_BUDGET:-1.5}
done
model_sweep sweep-tp4.log ${SWEEP_TIMEOUT:-240} --modelpath models/qwen3-next-80b-a3b --tp 4 --budget-min ${BUDGET:-3.5}
db_return
call_end f1
