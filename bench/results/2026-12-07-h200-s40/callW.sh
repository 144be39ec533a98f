#!/bin/sh
# Fortieth session, device calls W (H200 only: the sweep's timings are the H200's to take; on any
# other card it stops at once): the tp 4 sweep resumed from s39's call S (out/s40/sweep.ktdb.xz,
# built here by callV.sh's steps at the commit out/lib is built at, so that the sweep measures the
# code that ships: GEMMs done, 55 of 288 attn_decode). The database lives at
# out/live/q.ktdb on the device machine, which keeps it between calls while it stays warm, so that
# the next call resumes without a round trip; each call also returns it (db_return), so a machine
# lost between calls loses nothing (restore_code.sh, then carry it as out/s40/sweep.ktdb.xz).
# ONLY=gdn_decode,gdn_prefill first, then ONLY unset. Carry out/bin out/lib out/device out/s40.
# $OUT/w1.tgz (N), the database beside.
set -u
. tests/device/env.sh
call_begin ${N:-w1}
mkdir -p out/live
[ -s out/live/q.ktdb ] && echo "resuming the machine's own out/live/q.ktdb" || xz -dc ${DBX:-out/s40/sweep.ktdb.xz} > out/live/q.ktdb
DB=out/live/q.ktdb
qwen3_tp4_sweep
call_end ${N:-w1}
