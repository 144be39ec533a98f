#!/bin/sh
# Thirty-ninth session, device call V (not run: for the next session, on an H200 only): the tp 4
# sweep resumed from call S's database (bench/results/2026-12-07-h200-s39/sweep1.ktdb.xz, in the
# working tree: GEMMs done, 55 of 288 attn_decode buckets), GDN first: ONLY=gdn_decode,gdn_prefill,
# then a second call with ONLY unset for the attention left. Each returns its database; the next
# call resumes from that one (DBX=its restored copy: tests/device/restore_code.sh NOCODE
# sweep1.ktdb.xz OUT). Carry out/bin out/lib out/device. $OUT/v1.tgz, the database beside.
DBX=${DBX:-bench/results/2026-12-07-h200-s39/sweep1.ktdb.xz} N=${N:-v1} exec sh bench/results/2026-12-07-h200-s37/callA.sh
