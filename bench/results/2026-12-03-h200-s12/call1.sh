#!/bin/sh
# Twelfth session, device call 1 (bench/NOTES.md, "twelfth session"):
#  1. stride_read.py: what vLLM's NHD layout costs a per-kv-head read (one head's d x 2 bytes a key
#     at a stride of the slot) against reading the slots whole, Triton, 1 GiB, interleaved;
#  2. ab_attn.py, one process a row group, the same buffers: the landed state (w1) against the
#     segment law giving 1/2, 2 and 4 waves of blocks (w05, w2, w4: libktrt builds of
#     KT_ATTN_LAW_WAVES) and against the reduce's one-pass statistics (red: the same kernels, new
#     code), cuDNN beside them; 12 rounds rotated, cache flushed, lens equal (and one mixed group);
#  3. the new reduce's correctness through libktrt: windows, soft-cap, sinks, q 1-8, bs 64, the
#     scratch's segment ceiling, graphs replayed with new lengths, chunked prefill (split);
#  4. ncu: per-opcode instruction counts of d256 prefill (ours, flash, cuDNN) and of the q 8 kernel.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
S=bench/results/2026-12-03-h200-s12
R=$OUT/c1; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in old new; do [ -f out/ab/$x.ktdb ] || gunzip -k out/ab/$x.ktdb.gz; done
timeout 150 python3 $S/stride_read.py > $R/stride.log 2>&1; echo "stride rc=$? $(el) s"; cat $R/stride.log
L=out/lib/libktrt.so
CF="--config w1=$L:out/ab/old.ktdb --config w05=out/ab/w05/libktrt.so:out/ab/old.ktdb --config w2=out/ab/w2/libktrt.so:out/ab/old.ktdb --config w4=out/ab/w4/libktrt.so:out/ab/old.ktdb --config red=$L:out/ab/new.ktdb"
AB="timeout 150 python3 tests/device/ab_attn.py $CF --rounds 12"
$AB --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 32768 > $R/ab-6-1-256.log 2>&1; echo "ab 6/1/256 rc=$? $(el) s"
$AB --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --d 256 --g 2 --hkv 4 --batch 8 --ctx 32768 > $R/ab-8-4-256.log 2>&1; echo "ab 8/4/256 rc=$? $(el) s"
$AB --d 256 --g 8 --hkv 2 --batch 8,32 --ctx 32768 --lens mixed --no-peers > $R/ab-mixed.log 2>&1; echo "ab mixed rc=$? $(el) s"
$AB --d 256 --g 6 --hkv 1 --batch 1 --ctx 4096,131072 --no-peers > $R/ab-b1.log 2>&1; echo "ab b1 rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/new.ktdb --check-only"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 50 python3 tests/device/bench_prefill.py --lib $L --db out/ab/new.ktdb --check-only --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200 --prefix 32752 > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
tail -n 2 $R/check*.log
grep -h "WRONG" $R/check*.log | head
# 4. ncu, while the call has time (the device's 600 s)
if [ $(el) -lt 420 ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  NC="ncu --kernel-name regex:kt_attn|flash|cudnn|fmha --section InstructionStats --metrics smsp__inst_executed.sum,sass__inst_executed_per_opcode --print-metric-instances details --print-details all"
  timeout 100 $NC --launch-count 3 python3 tests/device/bench_prefill.py --db out/ab/old.ktdb --rounds 1 --launches 1 --geom 16/2/256 --tokens 4096 > $R/ncu-prefill-op.txt 2>&1; echo "ncu prefill rc=$? $(el) s"
  timeout 80 $NC --launch-count 2 python3 tests/device/bench_attn.py --db out/ab/old.ktdb --lens equal --rounds 1 --launches 1 --max-launches 1 --no-peers --q 8 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ncu-q8-op.txt 2>&1; echo "ncu q8 rc=$? $(el) s"
  grep -E "kt_attn|flash_fwd|cudnn|inst_executed.sum|Executed Instructions " $R/ncu-*-op.txt | cut -c1-140 | head -20
fi
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el) s"
