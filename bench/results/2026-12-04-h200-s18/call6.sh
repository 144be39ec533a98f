#!/bin/sh
# Eighteenth session, device call 6 (bench/NOTES.md, "Where a tile more in flight pays"):
# ab_attn.py, the bf16 KD picks without (base) and with PF (pf.patch, -DKT_PF=1), batch 1, 2 and 4
# at 4K, 32K and 128K over four geometries: where the grid leaves an SM's block slots empty.
set -u
. tests/device/env.sh
R=$OUT/c6; mkdir -p $R
L=out/carry/lib/libktrt.so
cfg() { for n in "$@"; do printf -- "--config %s=%s:out/carry/%s.ktdb " $n $L $n; done; }
AB="python3 tests/device/ab_attn.py $(cfg base pf) --rounds 11 --dtype bf16 --no-peers --batch 1,2,4 --ctx 4096,32768,131072"
timeout 120 $AB --d 256 --g 8 --hkv 2 > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 120 $AB --d 256 --g 6 --hkv 1 > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 120 $AB --d 128 --g 4 --hkv 8 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
timeout 120 $AB --d 256 --g 2 --hkv 4 > $R/d.log 2>&1; echo "8/4 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/[abcd].log
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
echo "done $(el)"
