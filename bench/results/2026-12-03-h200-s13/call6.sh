#!/bin/sh
# Thirteenth session, device call 6: call 5's database (its tuned q 1 picks, code restored) through
# the libktrt whose nearest-bucket step keeps the query rows: q 4 / q 8 now on the law's picks, not
# q 1's tuned kernel; batch 1 6/1/256 32K again; prefill (the law's picks: no prefill selections in
# this database) on the landed code, flash and cuDNN in each run.
set -u
t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
export PYTHONUNBUFFERED=1
DB=out/ab/c5.ktdb
[ -f $DB ] || xz -dk $DB.xz
R=$OUT/c6; mkdir -p $R
L=out/lib/libktrt.so
B="timeout 150 python3 tests/device/bench_attn.py --lib $L --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el)"
OUT=$R $B --tsv g-b1.tsv --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1 --ctx 32768 > $R/g-b1.log 2>&1; echo "b1 rc=$? $(el)"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-170
grep -h "law\|bucket\|exact" $R/g-16-2-256.log | grep -v '^bf16' | cut -c1-200 | head -12
P="timeout 200 python3 tests/device/bench_prefill.py --lib $L --db $DB --rounds 5"
OUT=$R $P --tsv pf4k.tsv --geom 32/8/128,6/1/256,8/4/256,16/2/256 --tokens 4096 > $R/pf4k.log 2>&1; echo "prefill 4K rc=$? $(el)"
OUT=$R $P --tsv pf32k.tsv --geom 32/8/128,16/2/256 --tokens 32768 > $R/pf32k.log 2>&1; echo "prefill 32K rc=$? $(el)"
grep -h "^bf16 " $R/pf*.log | cut -c1-150
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
echo "done $(el)"
