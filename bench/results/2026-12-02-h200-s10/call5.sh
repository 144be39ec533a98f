#!/bin/sh
# Tenth session, device call 5: A/B/C of prefill.hip as landed (A), the same without the idle row
# groups' guard (B), and the ninth session's template (C, no split-KV), the same variants forced
# onto the prefill bench's keys (d128 BM128 BN32 NW4 QL1, d256 BM128 BN32 NW8 QL0: the sixth /
# seventh sessions' picks) and, A against B, the rows form on speculative decode (q 4 / 8); two
# passes in rotated order, each row with flash (prefill) in the same run.
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
DB=out/device/ktune.ktdb
R=$OUT/res
mkdir -p $R
F=bench/results/2026-12-02-h200-s10/force.py
P="bs=16 win=0 cap=0 sink=0"
for v in "A kt_attn_prefill" "B kt_attn_prefill_ab" "C kt_attn_prefill_old"; do
  set -- $v
  python3 $F $DB /tmp/$1.tmp ${2}_bf16_d128_bm128_bn32_nw4_wd1_ql1_segmax128 "attn_prefill bf16 d=128 g=4 hkv=8 $P qlen<=4096 batch<=1 ctx<=4096" \
      "attn_prefill bf16 d=128 g=4 hkv=8 $P qlen<=8192 batch<=1 ctx<=32768" > /dev/null &&
  python3 $F /tmp/$1.tmp /tmp/$1.ktdb ${2}_bf16_d256_bm128_bn32_nw8_wd1_ql0_segmax128 "attn_prefill bf16 d=256 g=8 hkv=2 $P qlen<=4096 batch<=1 ctx<=4096" \
      "attn_prefill bf16 d=256 g=8 hkv=2 $P qlen<=8192 batch<=1 ctx<=32768" || echo "force $1 failed"
done
for v in "A kt_attn_prefill" "B kt_attn_prefill_ab"; do
  set -- $v
  python3 $F $DB /tmp/d$1.ktdb ${2}_bf16_d256_bm64_bn64_nw4_wd1_ql1_segmax128 "attn_decode bf16 d=256 g=8 hkv=2 $P q<=4 batch<=8 ctx<=32768" \
      "attn_decode bf16 d=256 g=8 hkv=2 $P q<=8 batch<=8 ctx<=32768" > /dev/null || echo "force d$1 failed"
done
for pass in 1 2; do
  for x in A B C; do
    OUT=$R timeout 60 python3 tests/device/bench_prefill.py --db /tmp/$x.ktdb --geom 32/8/128,16/2/256 --tokens 4096,32768 --rounds 5 \
      --tsv prefill-$x-$pass.tsv > $R/prefill-$x-$pass.log 2>&1; echo "prefill $x pass $pass rc=$? $(( $(date +%s) - t0 )) s"
  done
  for x in A B; do
    OUT=$R timeout 60 python3 tests/device/bench_attn.py --db /tmp/d$x.ktdb --lens equal --no-peers --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,4,8 \
      --batch 8 --ctx 32768 --tsv decode-$x-$pass.tsv > $R/decode-$x-$pass.log 2>&1; echo "decode $x pass $pass rc=$? $(( $(date +%s) - t0 )) s"
  done
done
grep -h "^bf16 " $R/prefill-*.log $R/decode-*.log | grep "|" | cut -c1-170
tar czf $OUT/results.tgz -C $OUT res && rm -rf $R
echo "done $(( $(date +%s) - t0 )) s"
