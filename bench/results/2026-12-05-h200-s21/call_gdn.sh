#!/bin/sh
# Twenty-first session, prepared for the first device call of issue 13 (bench/NOTES.md, "the GDN
# decode step"): the chains through libktrt against the float64 per-token truth, then the issue's
# timing grid, both on the law's pick over every sm_90a gdn_decode kernel (no sweep yet).
# Carry out/c21 (lib/libktrt.so, gdn.ktdb: `kt gen --recipe templates/gdn/decode.lua --target
# sm_90a --db out/c21/gdn.ktdb`, about 3.5 MB).
set -u
. tests/device/env.sh
R=$OUT/g1; mkdir -p $R
A=out/c21
L=$A/lib/libktrt.so
timeout 200 python3 tests/device/gdn_check.py --lib $L --db $A/gdn.ktdb > $R/check.log 2>&1; echo "check rc=$? $(el)"
tail -n 20 $R/check.log
OUT=$R timeout 300 python3 tests/device/bench_gdn.py --lib $L --db $A/gdn.ktdb --rounds 15 > $R/bench.log 2>&1; echo "bench rc=$? $(el)"
cat $R/bench.log | cut -c1-160
tar czf $OUT/g1.tgz -C $OUT g1 && rm -rf $R
echo "done $(el)"
