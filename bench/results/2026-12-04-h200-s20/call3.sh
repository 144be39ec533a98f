#!/bin/sh
# Twentieth session, device call 3 (bench/NOTES.md, "fp8 against bf16 over the grid, paired"):
# ratio_attn.py, bf16 and fp8 rows of one shape replayed in each round (15 rounds), at every
# geometry of the issue x batch 8 and 32 x 32K and 128K, the law choosing among every sm_90a MT 1
# decode and decode_ws variant of d128 and d256 (all.ktdb).
set -u
. tests/device/env.sh
R=$OUT/c3; mkdir -p $R
A=out/c20
for f in $A/*.ktdb.xz; do xz -dc $f > ${f%.xz}; done
L=$A/lib/libktrt.so
for geom in 128,4,8 256,6,1 256,2,4 256,8,2; do for b in 8 32; do for c in 32768 131072; do
timeout 60 python3 tests/device/ratio_attn.py --lib $L --db $A/all.ktdb --rounds 15 \
  --row bf16=bf16,$geom,1,$b,$c --row fp8=bf16_e4m3,$geom,1,$b,$c --ratio bf16/fp8 > $R/f-$geom-$b-$c.log 2>&1
echo "$geom b$b c$c rc=$? $(el) $(grep -h '^   bf16 .*/ fp8' $R/f-$geom-$b-$c.log)"
done; done; done
grep -h "err" $R/f-*.log | cut -c1-170
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el)"
