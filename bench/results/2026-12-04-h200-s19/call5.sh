#!/bin/sh
# Nineteenth session, device call 5 (bench/NOTES.md, "The first tiles prefetched"): ab_attn.py, the
# bf16 KD picks (base, PF 0), their PF 1 twins (pf: tile j + 2 prefetched into L2 every tile) and the
# PF 1 twins built with -DKT_PF_START (sp: tiles 1 and 2 prefetched at the start only), batch 1 to 8.
set -u
. tests/device/env.sh
R=$OUT/c5; mkdir -p $R
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config pf=$L:out/carry/pf.ktdb --config sp=$L:out/carry/sp.ktdb --rounds 11 --dtype bf16 --no-peers"
timeout 100 $AB --d 256 --g 8 --hkv 2 --batch 1,8 --ctx 32768 > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 120 $AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 32768,131072 > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 100 $AB --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
timeout 100 $AB --d 256 --g 2 --hkv 4 --batch 8 --ctx 32768 > $R/d.log 2>&1; echo "8/4 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|refused|WRONG" $R/[abcd].log
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $R
echo "done $(el)"
