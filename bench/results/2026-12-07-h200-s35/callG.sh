#!/bin/sh
# Thirty-fifth session, device call G (~7.5 minutes): the GDN decode forms in vLLM's K-last layout,
# measured by the sweep (call E1 found the law's K-last picks far behind: batch 128 x hv 32 at 58%
# of copy against [.., K, V]'s 84%, and NW 16 1.28-1.30x ahead of them at batch 8). ./tune over
# out/s38/dec.ktdb.xz (both layouts, NW 16, PF; the K-last rows in pieces of 4, coalesced) on Qwen3-Next's gdn_decode problems at tp 4
# (hv 8) then tp 1 (hv 32), K-last (KT_GDN_STATE's default), every candidate verified then timed;
# `kt dump` and the database back: the timings a K-last law is fitted on (tp 4) and held out on
# (tp 1). First, s38's K-last picks against s36's (batch 32 / 128 x hv 32).
# Carry out/bin out/lib out/device out/s36 out/s38. $OUT/g1.tgz, the database beside.
set -u
. tests/device/env.sh
call_begin ${N:-g1}
nvidia-smi --query-gpu=name --format=csv,noheader
# the K-last state's loads and stores coalesced (s38) against s36 in the same rounds, the law's picks
# (PART=ab: this alone; PART=sweep: the sweeps alone)
if [ "${PART:-all}" != sweep ]; then
xz -dc out/s36/dec.ktdb.xz > "$W/s36.ktdb"
xz -dc out/s38/dec.ktdb.xz > "$W/s38.ktdb"
decode_check s38
OUT=$R timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/s38.ktdb --ab $W/s36.ktdb --vk 1 --rounds 5 \
    --hv 32 --batch 32,128 --tokens 1,4 --regime cold,hot > $R/bench-coalesced.log 2>&1
echo "bench coalesced rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-coalesced.log | cut -c1-150
fi
if [ "${PART:-all}" != ab ]; then
db_unpack out/s38/dec.ktdb.xz
model_sweep sweep-tp4.log ${T4:-180} --modelpath models/qwen3-next-80b-a3b --tp 4 --only gdn_decode --budget-min 2.8
[ "${T1:-170}" -gt 0 ] && model_sweep sweep-tp1.log ${T1:-170} --modelpath models/qwen3-next-80b-a3b --tp 1 --only gdn_decode --budget-min 2.7
db_return
fi
call_end ${N:-g1}
