#!/bin/sh
# Thirty-fifth session, device call G (~6.5 minutes): the GDN decode forms in vLLM's K-last layout,
# measured by the sweep (call E1 found the law's K-last picks far behind: batch 128 x hv 32 at 58%
# of copy against [.., K, V]'s 84%, and NW 16 1.28-1.30x ahead of them at batch 8). ./tune over
# out/s36/dec.ktdb.xz (both layouts, NW 16, PF) on Qwen3-Next's gdn_decode problems at tp 4
# (hv 8) then tp 1 (hv 32), K-last (KT_GDN_STATE's default), every candidate verified then timed;
# `kt dump` and the database back: the timings a K-last law is fitted on (tp 4) and held out on
# (tp 1). Carry out/bin out/lib out/device out/s36. $OUT/g1.tgz, the database beside.
set -u
. tests/device/env.sh
call_begin g1
nvidia-smi --query-gpu=name --format=csv,noheader
db_unpack out/s36/dec.ktdb.xz
model_sweep sweep-tp4.log ${T4:-200} --modelpath models/qwen3-next-80b-a3b --tp 4 --only gdn_decode --budget-min 3.2
model_sweep sweep-tp1.log ${T1:-170} --modelpath models/qwen3-next-80b-a3b --tp 1 --only gdn_decode --budget-min 2.7
db_return
call_end g1
