#!/bin/sh
# Thirty-ninth session, device call V (not run: for the next session, on an H200 only): the tp 4
# sweep resumed from call S's measurements (bench/results/2026-12-07-h200-s39/sweep1-nocode.ktdb.xz:
# GEMMs done, 55 of 288 attn_decode buckets; no kernel code, to stay small). Here first, its code
# built at the day's templates (measurements kept; seen to work at 4ff3e1f):
#   xz -dc bench/results/2026-12-07-h200-s39/sweep1-nocode.ktdb.xz > X
#   ./tune --modelpath models/qwen3-next-80b-a3b --tp 4 --target sm_90a --db X --no-device -j 2
#   sqlite3 X "update kernel set code=NULL where status!='ok'; vacuum"; xz -9 X -> out/s40/sweep.ktdb.xz
# Then GDN first: ONLY=gdn_decode,gdn_prefill; a second call with ONLY unset for the attention left,
# resuming from the first's returned database (tests/device/restore_code.sh NOCODE X OUT).
# Carry out/bin out/lib out/device out/s40. $OUT/v1.tgz, the database beside.
DBX=${DBX:-out/s40/sweep.ktdb.xz} N=${N:-v1} exec sh bench/results/2026-12-07-h200-s37/callA.sh
