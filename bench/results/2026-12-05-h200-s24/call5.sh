#!/bin/sh
# Twenty-fourth session, device call 5 (bench/NOTES.md, "16 warps a head"): the decode with NW 16
# offered (out/c24b: every bf16 sm_90a gdn_decode kernel of this session's recipe, NW 2 to 16):
# the chains, then the batch 1, 8, 32 and 128 rows with each kernel's device time.
# Carry out/lib out/c24b. Results: $OUT/d5.tgz.
set -u
. tests/device/env.sh
R=$OUT/d5; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
DB=$W/gdn_all.ktdb
xz -dc out/c24b/gdn_all.ktdb.xz > $DB
timeout 60 python3 tests/device/gdn_check.py --lib $L --db $DB > $R/check.log 2>&1; echo "decode check rc=$? $(el)"
grep -E "gdn_check:|WRONG|fail" $R/check.log | head -4 | cut -c1-200
grep -o "kt_gdn_decode_[a-z0-9_]*" $R/check.log | sort | uniq -c
OUT=$R timeout 120 python3 tests/device/bench_gdn.py --lib $L --db $DB --rounds 7 --profile --batch 1,8,32,128 \
    --regime hot > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
grep -v "Warn\|warn" $R/bench.log | cut -c1-170
rm -rf $W
tar czf $OUT/d5.tgz -C $OUT d5 && rm -rf $R
echo "done $(el)"
