#!/bin/sh
# Seventeenth session, device call 6 (bench/NOTES.md, "d256 prefill forms at g 6 and at q 8"):
# bench_prefill.py on the law's d256 pick (base: BM128 BN64 NW8 QL1) with six other d256 forms
# (p1-p6) timed beside it, 6/1/256 and 16/2/256 at 32K and 4K tokens; then ab_attn.py q 1 and q 8
# at 16/2/256 batch 8 32K over the same databases (each also holds the decode KD pick).
set -u
. tests/device/env.sh
R=$OUT/c6; mkdir -p $R
L=out/lib/libktrt.so
A=out/ab5
P="python3 tests/device/bench_prefill.py --lib $L --rounds 7 --db $A/base.ktdb"
for n in p1 p2 p3 p4 p5 p6; do P="$P --ab $n=$A/$n.ktdb"; done
OUT=$R timeout 300 $P --tsv pf.tsv --geom 6/1/256,16/2/256 --tokens 32768,4096 > $R/pf.log 2>&1; echo "prefill rc=$? $(el)"
grep -hE "^bf16|^   [a-z0-9 ]+ +[0-9.]+ us" $R/pf.log
cfg() { for n in "$@"; do printf -- "--config %s=%s:%s/%s.ktdb " $n $L $A $n; done; }
timeout 120 python3 tests/device/ab_attn.py $(cfg base p1 p2 p3 p4 p5 p6) --rounds 11 --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,8 --batch 8 --ctx 32768 --no-peers > $R/q8.log 2>&1; echo "q8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/q8.log
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
echo "done $(el)"
