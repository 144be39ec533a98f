#!/bin/sh
# Eighteenth session, device call 10 (bench/NOTES.md, "PF where the segments stream"): ab_attn.py,
# the final law (PF where the grid is half empty and the segments stream) against the session's
# start, batch 1 at 4K-128K on the geometries it was fitted on and on held-out ones (4/1/256:
# Qwen3-Next at tensor parallel 4; 4/1/128: an 8-kv-head d128 model at 8), and mixed lengths.
set -u
. tests/device/env.sh
R=$OUT/c10; mkdir -p $R
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config pf=$L:out/carry/pf2.ktdb --rounds 11 --dtype bf16 --no-peers --batch 1 --ctx 4096,16384,32768,65536,131072"
timeout 100 $AB --d 256 --g 6 --hkv 1 > $R/a.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 100 $AB --d 256 --g 4 --hkv 1 > $R/b.log 2>&1; echo "4/1 rc=$? $(el)"
timeout 100 $AB --d 128 --g 4 --hkv 1 > $R/c.log 2>&1; echo "4/1/128 rc=$? $(el)"
timeout 100 $AB --d 256 --g 8 --hkv 2 > $R/d.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 100 python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config pf=$L:out/carry/pf2.ktdb --rounds 11 --dtype bf16 --no-peers --lens mixed --batch 2,3 --ctx 65536,131072 --d 256 --g 8 --hkv 1 > $R/e.log 2>&1; echo "mixed rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure|_pf1" $R/[abcde].log
tar czf $OUT/c10.tgz -C $OUT c10 && rm -rf $R
echo "done $(el)"
