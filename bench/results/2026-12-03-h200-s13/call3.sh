#!/bin/sh
# Thirteenth session, device call 3: where decode.hip lets the early reduce launch (PD 1: at the
# block's start, as call 2; PD 2: after its KV loop, before the partials; PD 3: never, the implicit
# trigger at the block's exit) against stream order (PD 0), decode.hip's picks only (others run as
# landed: no PD), ab_attn.py as call 2; 30 rounds at batch 1.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c3; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in pd0 tpd1 tpd2 tpd3; do gunzip -kf out/ab/$x-t.ktdb.gz; done
L=out/lib/libktrt.so
AB="timeout 200 python3 tests/device/ab_attn.py --config pd0=$L:out/ab/pd0-t.ktdb --config pd1=$L:out/ab/tpd1-t.ktdb --config pd2=$L:out/ab/tpd2-t.ktdb --config pd3=$L:out/ab/tpd3-t.ktdb"
$AB --rounds 30 --d 256 --g 6 --hkv 1 --batch 1 --ctx 4096,16384,32768,131072 > $R/ab-b1.log 2>&1; echo "ab b1 rc=$? $(el) s"
$AB --rounds 12 --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --rounds 12 --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768 > $R/ab-6-1-256.log 2>&1; echo "ab 6/1/256 rc=$? $(el) s"
$AB --rounds 12 --d 256 --g 8 --hkv 2 --batch 8 --ctx 4096,131072 --window 4096 --no-peers > $R/ab-window.log 2>&1; echo "ab window rc=$? $(el) s"
$AB --rounds 12 --d 256 --g 8 --hkv 2 --batch 1,8 --ctx 32768 --lens mixed --no-peers > $R/ab-mixed.log 2>&1; echo "ab mixed rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --check-only"
for x in tpd2 tpd3; do
timeout 60 $C --db out/ab/$x-t.ktdb --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check-$x.log 2>&1; echo "check $x rc=$? $(el) s"
done
tail -qn 1 $R/check*.log
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el) s"
