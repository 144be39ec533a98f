#!/bin/sh
# Eighteenth session, device call 1 (bench/NOTES.md, "The reduce in one round trip"): ab_attn.py,
# the bf16 KD picks built with the seventeenth session's reduce (old) and with this one's (new),
# each launch's timeline (main kernel, the reduce's tail past it, the gap to the next launch) from
# one graph replay under the profiler; then the new reduce's check grids (decode, decode_ws and
# prefill kernels: segment counts up to the scratch's, sinks, fp16 / fp8 outputs, d 64-512) and
# split-KV prefill checks.
set -u
. tests/device/env.sh
R=$OUT/c1; mkdir -p $R
# carried: out/carry = libktrt.so, the A/B databases and the check database (xz: the carry's limit)
mkdir -p out/abr && cp out/carry/*.ktdb out/abr/ && xz -dc out/carry/chk.ktdb.xz > out/abr/chk.ktdb
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config old=$L:out/abr/old.ktdb --config new=$L:out/abr/new.ktdb --rounds 15 --dtype bf16 --timeline"
timeout 80 $AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 --no-peers > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 120 $AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 32768,131072 --no-peers > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 80 $AB --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|timeline|WRONG|refused|failure" $R/[abc].log
C="python3 tests/device/bench_attn.py --lib $L --db out/abr/chk.ktdb --check-only"
timeout 100 $C --tsv k1.tsv --dtype bf16,fp16,bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5 --ctx 100,1500 --window 0,64 --softcap 0,30 --sinks 0,1 > $R/k1.log 2>&1; echo "k1 rc=$? $(el)"
timeout 100 $C --tsv k2.tsv --dtype bf16,fp16_e4m3 --d 64,256,512 --g 8 --hkv 2 --q 1,4 --batch 3 --ctx 777,5000 > $R/k2.log 2>&1; echo "k2 rc=$? $(el)"
timeout 100 $C --tsv k3.tsv --bs 64 --dtype bf16,fp16_e4m3 --d 128,256 --g 8 --hkv 2 --q 1,8 --batch 4,9 --ctx 3000,40000 > $R/k3.log 2>&1; echo "k3 rc=$? $(el)"
timeout 100 $C --tsv k4.tsv --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24 --ctx 40000 --lens mixed --sinks 0,1 > $R/k4.log 2>&1; echo "k4 rc=$? $(el)"
tail -qn 1 $R/k*.log
grep -h "WRONG" $R/k*.log | head
P="python3 tests/device/bench_prefill.py --lib $L --db out/abr/chk.ktdb --check-only"
timeout 100 $P --tsv p1.tsv --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,300 --batch 1,2 --prefix 30000 > $R/p1.log 2>&1; echo "p1 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   (key|err|WRONG|refused)|failures" $R/p1.log | head -40
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el)"
