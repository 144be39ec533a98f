#!/bin/sh
# Seventeenth session, device call 2 (bench/NOTES.md, "L2::256B on the cache's loads"): ab_attn.py,
# the same four decode kernels (bf16 KD d128 and d256 picks, fp8 d128 ring BN64 NW4 ST2, fp8 d256
# BN32 NW4) compiled as landed (base) and with L2::256B on the stream loads (l2); the rows at batch 8
# 32K: 32/8/128 and 16/2/256 bf16 and fp8, 6/1/256 bf16 and 128K at 32/8/128 bf16.
set -u
. tests/device/env.sh
R=$OUT/c2; mkdir -p $R
L=out/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/ab2/base.ktdb --config l2=$L:out/ab2/l2.ktdb --config base2=$L:out/ab2/base.ktdb --rounds 15"
timeout 120 $AB --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768,131072 > $R/ab128.log 2>&1; echo "ab128 rc=$? $(el)"
timeout 90 $AB --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ab256.log 2>&1; echo "ab256 rc=$? $(el)"
timeout 60 $AB --dtype bf16 --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768 > $R/ab61.log 2>&1; echo "ab61 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab2/l2.ktdb --check-only --tsv chk.tsv"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 128,256 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,200 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el)"
tail -qn 1 $R/check*.log
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $R
echo "done $(el)"
